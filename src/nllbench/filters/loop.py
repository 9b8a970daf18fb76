"""The run loop shared by every filter: predict (except at step 0), correct, estimate, reduce."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class FilterSteps:
    """What a filter run produced: one posterior state per step and, if asked, estimates.

    states : list of filter states (after reduction), one per step.
    estimates : list of :class:`nllbench.filters.estimates.Estimates` extracted at
        update time (after the correction, before pruning and merging), one
        per step, or None when the run was not asked to extract them.
    """

    states: list
    estimates: list | None = None


def run_steps(
    state,
    predict: Callable,
    correct: Callable,
    reduce: Callable,
    measurements: Sequence[np.ndarray],
    progress: Callable[[int], None] | None = None,
    extract: Callable | None = None,
) -> FilterSteps:
    """Posterior after each update; step 0 corrects the prior ``state`` directly.

    ``predict(state) -> state``, ``correct(state, Z) -> state`` and
    ``reduce(state) -> state`` are the filter's pure steps with their model
    and settings bound; the posterior of a step is ``reduce(correct(...))``.
    ``extract(corrected state) -> Estimates``, if given, runs between the two,
    which is where the reference MATLAB code extracts its estimates.
    """
    out, estimates = [], [] if extract is not None else None
    for k, Z in enumerate(measurements):
        if k:
            state = predict(state)
        state = correct(state, Z)
        if extract is not None:
            estimates.append(extract(state))
        state = reduce(state)
        out.append(state)
        if progress:
            progress(k)
    return FilterSteps(out, estimates)
