"""The maximum-likelihood fill-ins of the trajectory NLL recover the parameters of simulated data."""

from __future__ import annotations

import math

import numpy as np
import pytest
from support.trajectory_fit_cases import FOV, simulate

from nllbench.trackers.trajectory_fit import fit_undetected_trajectories


def test_fit_recovers_rate_presence_and_unlisted_presence():
    rng = np.random.default_rng(12)
    W, K = 200, 4
    rate, rho, R = 1.5, 0.4, 0.3
    tracks, truth = simulate(rng, W, K, rate, rho, R)
    fit = fit_undetected_trajectories(
        tracks, truth, fov=FOV, window=K, q=20, fit_unlisted_presence=True, frames=list(range(W * K))
    )
    # standard errors about 0.09 (rate), 0.02 (presence) and 0.015 (R): within 4 of them
    assert fit["rate"] == pytest.approx(rate, abs=0.35)
    assert fit["presence"] == pytest.approx(rho, abs=0.08)
    assert fit["unlisted_presence"] == pytest.approx(R, abs=0.06)
    assert fit["converged"] and math.isfinite(fit["calibration_nll"])
