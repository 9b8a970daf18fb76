"""nllbench: the negative log-likelihood of multi-object tracking posteriors.

Implements Pinto, Xia, Svensson, Wymeersch, "An Uncertainty-Aware Performance
Measure for Multi-Object Tracking", IEEE Signal Processing Letters, 2021.

The public names below are imported on first use (a module-level
``__getattr__``, PEP 562): ``import nllbench`` alone loads no numerical
library, and a command such as ``nllbench evaluate`` loads only the modules
it runs (``docs/store.md``, "Memory of the commands").
"""

from __future__ import annotations

from importlib import import_module as _import_module
from importlib import metadata as _metadata

from nllbench import _moved

_moved.install()  # old module paths (each package's MOVED) import as the moved modules

__version__ = _metadata.version("nllbench")  # one source: pyproject.toml

#: The module of each public name (imported when the name is first read): the one list of
#: the public API. ``__all__`` is derived from it; ``__init__.pyi``, the same names as static
#: imports for type checkers and readers, is generated from it and checked against it by
#: ``tests/layout/test_public_api_stub.py`` (run that file as a script to write it again).
_SOURCES = {
    "nllbench.engine.assignment": ("RankedAssignments", "murty"),
    "nllbench.engine.densities": (
        "MBM",
        "PMB",
        "PMBM",
        "PPP",
        "GaussianMixtures",
        "Gaussians",
        "IIDCluster",
        "Laplaces",
        "MultiBernoulli",
    ),
    "nllbench.engine.nll": ("NLLResult", "nll", "nll_many"),
    "nllbench.engine.sampling": ("SetSamples", "sample"),
    "nllbench.measures.tracks.hota": ("HOTAResult", "hota"),
    "nllbench.measures.tracks.ptgospa": ("PTGOSPAResult", "ptgospa"),
    "nllbench.measures.point.metrics": ("GOSPAResult", "gospa"),
    "nllbench.measures.point.pgospa": ("PGOSPAResult", "pgospa"),
    "nllbench.measures.run.presets": ("preset_settings",),
    "nllbench.measures.scores.proper": (
        "EnergyScoreResult",
        "IntensityScoreResult",
        "cardinality_rps",
        "energy_score",
        "intensity_score",
    ),
    "nllbench.measures.tracks.tgospa": ("TGOSPAResult", "tgospa"),
    "nllbench.measures.likelihood.theorem1": ("Theorem1Result", "theorem1", "theorem1_pmb"),
    "nllbench.store": ("SchemaError", "read_metrics", "read_posterior", "read_scenario", "write_posterior"),
    "nllbench.trackers.api": ("FillIns", "ScoreResult", "score"),
    "nllbench.trackers.trajectory_tables": ("TrajectoryNLLResult", "trajectory_nll"),
}
_MODULE_OF = {name: module for module, names in _SOURCES.items() for name in names}


def __getattr__(name: str):
    """A public name, imported from its module on first use and kept (PEP 562)."""
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'nllbench' has no attribute {name!r}")
    value = getattr(_import_module(module), name)
    globals()[name] = value  # later reads skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_MODULE_OF))


__all__ = [*_MODULE_OF, "__version__"]
