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
(:class:`MovedModules`, :func:`keep_old_paths`, also used by ``nllbench.trackers``), so its
names, and a monkeypatch through it, are the very same.
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


class MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``<package>.<old>`` of a package's moved modules as the moved module itself; nothing else.

    ``moved``: each old module name -> its path now, relative to ``package``
    (``"point.metrics"``) or absolute (``"nllbench.example_trackers.nrl"``).
    """

    def __init__(self, package: str, moved: dict[str, str]):
        self.package, self.moved = package, moved

    def find_spec(self, fullname, path=None, target=None):
        parent, _, old = fullname.rpartition(".")
        if parent != self.package or old not in self.moved:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec):
        new = self.moved[spec.name.rpartition(".")[2]]
        return importlib.import_module(new if new.startswith("nllbench.") else f"{self.package}.{new}")

    def exec_module(self, module) -> None:
        """Nothing to run: the moved module has run on its own import."""


def keep_old_paths(package: str, moved: dict[str, str]) -> None:
    """Let ``import <package>.<old>`` give the moved module (:class:`MovedModules`), once per package."""
    if not any(isinstance(f, MovedModules) and f.package == package for f in sys.meta_path):
        sys.meta_path.append(MovedModules(package, moved))


keep_old_paths(__name__, MOVED)
