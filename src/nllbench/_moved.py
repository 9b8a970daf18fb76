"""Old module paths that keep working after a module moved or was renamed.

A package lists its moves as data, ``MOVED = {old name: new path}`` in its ``__init__.py``
(relative to the package: ``"trajectory": "trajectory_nll"``, ``"metrics":
"point.metrics"``; or absolute, for a module that left the package: ``"nrl":
"nllbench.example_trackers.nrl"``). :class:`MovedModules`, installed once by ``nllbench/__init__.py`` (which
runs before any submodule is imported), finds ``<package>.<old name>`` as the moved module
itself: the same object under both paths, so its names, its classes and a monkeypatch through
either path are the very same. Nothing but the listed names is found; the finder imports
nothing, and reads the table of a package only once that package is imported.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys


def moved_path(fullname: str) -> str | None:
    """The path a module moved to (``nllbench.engine.trajectory`` -> ``nllbench.engine.trajectory_nll``).

    None when ``fullname`` is not listed in the ``MOVED`` of its (imported) package.
    """
    parent, _, old = fullname.rpartition(".")
    if not (parent == "nllbench" or parent.startswith("nllbench.")) or parent not in sys.modules:
        return None
    moved = getattr(sys.modules[parent], "MOVED", None)
    if not isinstance(moved, dict) or old not in moved:
        return None
    new = moved[old]
    return new if new.startswith("nllbench.") else f"{parent}.{new}"


class MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds an old path (a package's ``MOVED``) as the moved module; nothing else."""

    def find_spec(self, fullname, path=None, target=None):
        if moved_path(fullname) is None:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec):
        return importlib.import_module(moved_path(spec.name))

    def exec_module(self, module) -> None:
        """Nothing to run: the moved module has run on its own import."""


def install() -> None:
    """Put :class:`MovedModules` on ``sys.meta_path``, once."""
    if not any(isinstance(finder, MovedModules) for finder in sys.meta_path):
        sys.meta_path.append(MovedModules())
