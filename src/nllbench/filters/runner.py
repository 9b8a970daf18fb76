"""Running a reference filter by name: :func:`run_filter`, :func:`run_filter_full` and
:func:`run_trajectory_final`.

The package :mod:`nllbench.filters` exports these names (imported on first
use, so that reading :mod:`nllbench.filters.estimates` alone does not load
every filter).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from nllbench.filters.estimates import (
    DEFAULT_EXISTENCE_THRESHOLD,
    DEFAULT_RULES,
    INTENSITY_RULES,
    MIXTURE_RULES,
    Estimates,
    estimate,
)
from nllbench.filters.phd import PHDSettings, run_cphd, run_phd
from nllbench.filters.pmbm import PMBMSettings, estimate_state, run_pmbm
from nllbench.filters.tpmb import run_tpmb_final
from nllbench.filters.tpmbm import TRAJECTORY_VARIANTS, TPMBMState, run_tpmbm_final
from nllbench.simulation.models import Model

FILTERS = ("phd", "cphd", "pmbm", "pmb", "mbm", "mbm01")

#: Filters whose posterior is a density over sets of trajectories (nllbench.filters.tpmbm):
#: one trajectory posterior per run, scored by the exact trajectory NLL.
TRAJECTORY_FILTERS = TRAJECTORY_VARIANTS

#: The existence threshold of each trajectory filter's point estimate (the published code's
#: ``existence_estimation_threshold1``: 0.4 in TPMBM_all_filter.m, 0.5 in TPMB_all_filter.m).
TRAJECTORY_ESTIMATE_THRESHOLD = {"tpmbm": 0.4, "tpmb": 0.5}


def run_trajectory_final(
    name: str,
    measurements: Sequence[np.ndarray],
    model: Model,
    settings: PMBMSettings = PMBMSettings(),
    progress: Callable[[int], None] | None = None,
) -> TPMBMState:
    """The last state of trajectory filter ``name`` (one of :data:`TRAJECTORY_FILTERS`) on ``measurements``.

    ``state.to_density(model)`` is the posterior over the set of all trajectories of the run.
    """
    runners = {"tpmbm": run_tpmbm_final, "tpmb": run_tpmb_final}
    if name not in TRAJECTORY_FILTERS:
        raise ValueError(f"filter: expected one of {TRAJECTORY_FILTERS}, got {name!r}")
    return runners[name](measurements, model, settings, progress)


#: When point estimates are extracted: from the stored posterior (at evaluation)
#: or at update time, after the correction and before pruning and merging.
ESTIMATE_AT = ("posterior", "update")


@dataclass(frozen=True)
class FilterRun:
    """A filter run: posteriors (one density per step) and, if extracted at update time, estimates.

    estimates : list of :class:`nllbench.filters.estimates.Estimates` (one per step) or None.
    estimator : the rule that produced them ('' when there are none).
    """

    posteriors: list
    estimates: list[Estimates] | None = None
    estimator: str = ""


def run_filter(name: str, measurements: Sequence[np.ndarray], model: Model, **options) -> list:
    """Run filter ``name`` and return one posterior density per step.

    ``options`` are :func:`run_filter_full`'s keyword arguments
    (``max_cardinality``, ``phd_settings``, ``pmbm_settings``, ``progress``, ...).
    """
    return run_filter_full(name, measurements, model, **options).posteriors


def run_filter_full(
    name: str,
    measurements: Sequence[np.ndarray],
    model: Model,
    *,
    max_cardinality: int | None = None,
    phd_settings: PHDSettings = PHDSettings(),
    pmbm_settings: PMBMSettings = PMBMSettings(),
    progress: Callable[[int], None] | None = None,
    estimate_at: str = "posterior",
    estimator: str | None = None,
    existence_threshold: float = DEFAULT_EXISTENCE_THRESHOLD,
) -> FilterRun:
    """Run filter ``name``; with ``estimate_at="update"`` also extract estimates by ``estimator``.

    ``estimator`` None means the filter's default rule (:data:`DEFAULT_RULES`);
    ``existence_threshold`` is the ``best_hypothesis`` rule's threshold.
    """
    if name not in FILTERS:
        raise ValueError(f"filter: expected one of {FILTERS}, got {name!r}")
    if estimate_at not in ESTIMATE_AT:
        raise ValueError(f"estimate_at: expected one of {ESTIMATE_AT}, got {estimate_at!r}")
    rule = DEFAULT_RULES[name] if estimator is None else estimator
    at_update = estimate_at == "update"
    if estimator is not None and not at_update:
        raise ValueError("estimator: only used with estimate_at='update' (else the evaluation chooses it)")
    allowed = INTENSITY_RULES if name in ("phd", "cphd") else MIXTURE_RULES
    if rule not in allowed:  # checked before a long run, not after it
        raise ValueError(f"estimator: expected one of {allowed} for the {name} filter, got {rule!r}")
    if name == "phd":
        extract = (lambda s: estimate(s.to_ppp(), existence_threshold, rule)) if at_update else None
        steps = run_phd(measurements, model, phd_settings, progress, extract)
        posts = [s.to_ppp() for s in steps.states]
    elif name == "cphd":
        if max_cardinality is None:
            raise ValueError("max_cardinality: the CPHD filter needs a cardinality bound")
        extract = (lambda s: estimate(s.to_iid_cluster(), existence_threshold, rule)) if at_update else None
        steps = run_cphd(measurements, model, max_cardinality, phd_settings, progress, extract)
        posts = [s.to_iid_cluster() for s in steps.states]
    else:
        extract = (lambda s: estimate_state(s, rule, existence_threshold)) if at_update else None
        steps = run_pmbm(measurements, model, name, pmbm_settings, progress, extract)
        posts = [s.to_density(with_ppp=name in ("pmbm", "pmb")) for s in steps.states]
    return FilterRun(posts, steps.estimates, rule if at_update else "")
