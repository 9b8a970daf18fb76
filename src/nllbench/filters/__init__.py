"""Reference multi-object filters, each exporting its full posterior at every step.

``run_filter(name, measurements, model, **options)`` runs one of
``phd``, ``cphd``, ``pmbm``, ``pmb``, ``mbm``, ``mbm01`` and returns the
list of posterior densities (``nb.PPP``, ``nb.IIDCluster`` or ``nb.PMBM``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from nllbench.filters.phd import PHDSettings, run_cphd, run_phd
from nllbench.filters.pmbm import PMBMSettings, run_pmbm
from nllbench.models import Model

FILTERS = ("phd", "cphd", "pmbm", "pmb", "mbm", "mbm01")


def run_filter(
    name: str,
    measurements: Sequence[np.ndarray],
    model: Model,
    *,
    max_cardinality: int | None = None,
    phd_settings: PHDSettings = PHDSettings(),
    pmbm_settings: PMBMSettings = PMBMSettings(),
    progress: Callable[[int], None] | None = None,
) -> list:
    """Run filter ``name`` and return one posterior density per step."""
    if name == "phd":
        return [s.to_ppp() for s in run_phd(measurements, model, phd_settings, progress)]
    if name == "cphd":
        if max_cardinality is None:
            raise ValueError("max_cardinality: the CPHD filter needs a cardinality bound")
        states = run_cphd(measurements, model, max_cardinality, phd_settings, progress)
        return [s.to_iid_cluster() for s in states]
    if name in ("pmbm", "pmb", "mbm", "mbm01"):
        states = run_pmbm(measurements, model, name, pmbm_settings, progress)
        return [s.to_density(with_ppp=name in ("pmbm", "pmb")) for s in states]
    raise ValueError(f"filter: expected one of {FILTERS}, got {name!r}")


__all__ = ["FILTERS", "PHDSettings", "PMBMSettings", "run_filter"]
