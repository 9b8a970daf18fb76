"""Reference multi-object filters, each exporting its full posterior at every step.

``run_filter(name, measurements, model, **options)`` runs one of
``phd``, ``cphd``, ``pmbm``, ``pmb``, ``mbm``, ``mbm01`` and returns the
list of posterior densities (``nb.PPP``, ``nb.IIDCluster`` or ``nb.PMBM``).
``run_filter_full`` also returns the point estimates when they are extracted
at update time (before pruning and merging, as in the reference MATLAB code).

The names below are imported from their modules on first use (a
module-level ``__getattr__``, PEP 562, as :mod:`nllbench` does): importing
:mod:`nllbench.filters.estimates`, which the evaluation needs, loads no filter.
"""

from __future__ import annotations

from importlib import import_module as _import_module

#: The module (under nllbench.filters) of each exported name.
_SOURCES = {
    "estimates": (
        "DEFAULT_EXISTENCE_THRESHOLD",
        "DEFAULT_RULES",
        "INTENSITY_RULES",
        "MIXTURE_RULES",
        "Estimates",
        "estimate",
    ),
    "phd": ("PHDSettings", "run_cphd", "run_phd"),
    "pmbm": ("PMBMSettings", "estimate_state", "run_pmbm"),
    "runner": (
        "ESTIMATE_AT",
        "FILTERS",
        "TRAJECTORY_ESTIMATE_THRESHOLD",
        "TRAJECTORY_FILTERS",
        "FilterRun",
        "run_filter",
        "run_filter_full",
        "run_trajectory_final",
    ),
    "tpmb": ("run_tpmb", "run_tpmb_final"),
    "tpmbm": ("TRAJECTORY_VARIANTS", "TPMBMState", "run_tpmbm", "run_tpmbm_final"),
}
_MODULE_OF = {name: module for module, names in _SOURCES.items() for name in names}
_SUBMODULES = ("estimates", "gaussian", "loop", "phd", "pmbm", "runner", "tpmb", "tpmbm")


def __getattr__(name: str):
    """An exported name or a submodule, imported on first use and kept (PEP 562)."""
    if name in _SUBMODULES:
        return _import_module(f"{__name__}.{name}")  # the import sets the attribute
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(_import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # later reads skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_MODULE_OF) | set(_SUBMODULES))


__all__ = [
    "ESTIMATE_AT",
    "FILTERS",
    "FilterRun",
    "PHDSettings",
    "PMBMSettings",
    "TRAJECTORY_ESTIMATE_THRESHOLD",
    "TRAJECTORY_FILTERS",
    "run_filter",
    "run_filter_full",
    "run_tpmb",
    "run_tpmb_final",
    "run_tpmbm",
    "run_tpmbm_final",
    "run_trajectory_final",
]
