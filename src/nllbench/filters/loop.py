"""The run loop shared by every filter: predict (except at step 0), update, keep the posterior."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np


def run_steps(
    state,
    predict: Callable,
    update: Callable,
    measurements: Sequence[np.ndarray],
    progress: Callable[[int], None] | None = None,
) -> list:
    """Posterior after each update; step 0 updates the prior ``state`` directly.

    ``predict(state) -> state`` and ``update(state, Z) -> state`` are the
    filter's pure steps with their model and settings bound.
    """
    out = []
    for k, Z in enumerate(measurements):
        if k:
            state = predict(state)
        state = update(state, Z)
        out.append(state)
        if progress:
            progress(k)
    return out
