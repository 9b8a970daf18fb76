"""The cardinality error |n_est - n_truth| of the point estimates, per step and its run mean."""

from __future__ import annotations

import numpy as np


def step(view) -> dict:
    """|number of point estimates - number of true objects| at the step."""
    return {"cardinality_error": abs(view.states.shape[0] - view.truth_points.shape[0])}


def run(arrays: dict, settings) -> dict:
    """The mean cardinality error over the run's steps (0 for a run of no steps)."""
    errors = arrays["cardinality_error"]
    return {"cardinality_error_mean": float(np.mean(errors)) if errors.size else 0.0}
