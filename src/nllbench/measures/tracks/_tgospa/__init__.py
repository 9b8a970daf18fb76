"""The exact trajectory-GOSPA minimum (:func:`nllbench.measures.tracks.tgospa.tgospa`, ``method="exact"``).

Private to :mod:`nllbench.measures.tracks.tgospa`. Its modules, from the ground up, each importing only
the ones above it:

* :mod:`~nllbench.measures.tracks._tgospa.close`: the close (frame, truth, estimate) entries (step 1);
* :mod:`~nllbench.measures.tracks._tgospa.joint`: the joint Viterbi over a group's kept member states;
* :mod:`~nllbench.measures.tracks._tgospa.group`: one group of colliding truths solved jointly (step 4);
* :mod:`~nllbench.measures.tracks._tgospa.solver`: each truth on its own, then the groups (steps 2 and 3),
  and the mixed-integer programme (HiGHS) both it and the LP metric use.
"""

from nllbench.measures.tracks._tgospa.close import Close, close_entries
from nllbench.measures.tracks._tgospa.solver import SolveStats, exact_assignment, highs

__all__ = ["Close", "SolveStats", "close_entries", "exact_assignment", "highs"]
