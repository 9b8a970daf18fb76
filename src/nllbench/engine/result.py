"""NLLResult: the record every NLL route returns (value, bounds, eq. (11) decomposition).

:func:`nllbench.engine.nll.nll` fills it from a closed form (PPP, i.i.d. cluster),
the Murty pass (:mod:`nllbench.engine.batched`) or the exact subset sum
(:mod:`nllbench.engine.exact`); Pinto et al., IEEE SPL 2021.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

#: The NLL decomposition (:meth:`NLLResult.terms`): the terms sum to the value (Pinto et al.,
#: IEEE SPL 2021, eq. (10) and the discussion after it). Declared here, at the bottom of the
#: layers, and re-exported by :mod:`nllbench.measures.names` with the other measure names.
NLL_TERMS = ("localization", "false", "missed", "cardinality", "mixture", "association")


@dataclass(frozen=True)
class NLLResult:
    """The NLL of a density at a truth set, with bounds and decomposition.

    Attributes
    ----------
    value : float
        The NLL (approximate for ``method="murty"`` unless ``exact``);
        ``+inf`` exactly when the likelihood is 0.
    lower, upper : float
        Bounds on the exact NLL: ``lower <= exact NLL <= upper``; equal to
        ``value`` when ``exact``. For Murty, ``upper == value`` (dropping
        associations only lowers the likelihood).
    exact : bool
        True when every association with non-zero likelihood was summed.
    localization, false, missed : float
        The paper's eq. (11) terms for the single best (hypothesis,
        association) pair: ``-sum log(r_i p_i(y_j))`` over matched pairs,
        ``-sum log(1 - r_i)`` over unmatched Bernoullis, and
        ``Lambda - sum log lambda(y_j)`` over objects left to the PPP.
    cardinality : float
        i.i.d. cluster only: ``-log(n! p(n))``; the spatial part is in
        ``localization``. 0 for other families.
    mixture : float
        ``-log w_h`` of the best hypothesis (0 for a single hypothesis).
    association : float
        ``value`` minus all other terms: ``-log`` of (summed likelihood /
        best term), so <= 0; it measures association uncertainty.

        The terms always sum to ``value``. For an impossible truth
        (``value = +inf``) the term that makes it impossible is ``+inf``
        (``missed`` when some object cannot be explained, ``false`` when an
        r = 1 Bernoulli cannot be matched, ``cardinality`` for a CPHD) and
        the others are 0.
    n_terms : int
        Number of (hypothesis, association) terms summed (Murty), or the
        number of associations of non-zero likelihood for closed forms and
        the exact method where known (-1 if not counted).
    method : str
    q : int
    """

    value: float
    lower: float
    upper: float
    exact: bool
    localization: float = 0.0
    false: float = 0.0
    missed: float = 0.0
    cardinality: float = 0.0
    mixture: float = 0.0
    association: float = 0.0
    n_terms: int = -1
    method: str = "murty"
    q: int = 1
    best_hypothesis: int = field(default=-1, repr=False)
    best_assignment: np.ndarray | None = field(default=None, repr=False, compare=False)

    def terms(self) -> dict[str, float]:
        """The decomposition as a dict; its values sum to ``value``."""
        return {name: getattr(self, name) for name in NLL_TERMS}


def association_remainder(value: float, named: float) -> float:
    """The association term ``value - named`` (the other terms' sum).

    When the likelihood is 0 (``value = +inf``), the infinite named term
    already accounts for it and the remainder is 0, never ``inf - inf``.
    """
    if value == math.inf:
        return 0.0
    return value - named
