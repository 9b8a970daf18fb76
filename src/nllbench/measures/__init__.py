"""Measures on a run, one subpackage per family, each measure declared once.

* :mod:`~nllbench.measures.declarations` (every measure's declaration) and
  :mod:`~nllbench.measures.names` (the names derived from them);
* :mod:`~nllbench.measures.point`: GOSPA, OSPA, CLEAR MOT, IDF1 of the point estimates;
* :mod:`~nllbench.measures.tracks`: trajectory GOSPA and HOTA of labelled estimates;
* :mod:`~nllbench.measures.likelihood`: the Theorem 1 check and the trajectory NLL;
* :mod:`~nllbench.measures.scores`: the proper scores beyond the NLL;
* :mod:`~nllbench.measures.calibration`: calibration of existence, covariances and cardinality;
* :mod:`~nllbench.measures.run`: all of them on a run at once (evaluate) and the presets.

The modules' paths before this layout (``nllbench.measures.metrics``, ``.evaluate``,
``.tgospa``, ...; :data:`MOVED`) keep working: importing one gives the moved module itself
(:mod:`nllbench._moved`), so its names, and a monkeypatch through it, are the very same.
"""

from __future__ import annotations

#: Each module's path before the layout by family (under ``nllbench.measures``) -> its path now
#: (found by :mod:`nllbench._moved`).
MOVED = {
    "metrics": "point.metrics",
    "tgospa": "tracks.tgospa",
    "hota": "tracks.hota",
    "theorem1": "likelihood.theorem1",
    "trajectory": "likelihood.trajectory_windows",
    "trajectory_posterior": "likelihood.filter_trajectory_nll",
    "proper": "scores.proper",
    "proper_run": "scores.proper_run",
    "_set_kernel": "scores._set_kernel",
    "_mean_embedding": "scores._mean_embedding",
    "evaluate": "run.evaluate",
    "presets": "run.presets",
    "run_sequence": "run.run_sequence",
}
