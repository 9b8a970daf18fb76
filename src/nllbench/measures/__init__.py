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
(:class:`_MovedModules`), so its names, and a monkeypatch through it, are the very same.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys

#: Each module's path before the layout by family (under ``nllbench.measures``) -> its path now.
MOVED = {
    "metrics": "point.metrics",
    "tgospa": "tracks.tgospa",
    "hota": "tracks.hota",
    "theorem1": "likelihood.theorem1",
    "trajectory": "likelihood.trajectory",
    "trajectory_posterior": "likelihood.trajectory_posterior",
    "proper": "scores.proper",
    "proper_run": "scores.proper_run",
    "_set_kernel": "scores._set_kernel",
    "_mean_embedding": "scores._mean_embedding",
    "evaluate": "run.evaluate",
    "presets": "run.presets",
    "run_sequence": "run.run_sequence",
}


class _MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``nllbench.measures.<old>`` (:data:`MOVED`) as the moved module; nothing else."""

    def find_spec(self, fullname, path=None, target=None):
        parent, _, old = fullname.rpartition(".")
        if parent != __name__ or old not in MOVED:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec):
        return importlib.import_module(f"{__name__}.{MOVED[spec.name.rpartition('.')[2]]}")

    def exec_module(self, module) -> None:
        """Nothing to run: the moved module has run on its own import."""


if not any(isinstance(finder, _MovedModules) for finder in sys.meta_path):
    sys.meta_path.append(_MovedModules())
