"""The maximum-likelihood fill-ins of the trajectory NLL: the closed form without labels, refusals, gradients
(their recovery of simulated parameters: tests/integration)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import brentq
from support.trajectory_fit_cases import FOV, simulate

from nllbench.trackers.trajectory_fit import fit_undetected_trajectories


def test_fit_without_labels_is_the_closed_form():
    """No label: every truth is undetected, Lambda = N / W and rho solves the truncated-binomial score."""
    rng = np.random.default_rng(11)
    W, K = 60, 4
    tracks, truth = simulate(rng, W, K, 2.0, 0.35, 0.0, labels=0)
    fit = fit_undetected_trajectories(tracks, truth, fov=FOV, window=K, frames=list(range(W * K)))
    s = truth.groupby("id").size().to_numpy()
    N = s.size

    def score(rho):
        return np.sum(s / rho - (K - s) / (1 - rho)) - N * K * (1 - rho) ** (K - 1) / (1 - (1 - rho) ** K)

    rho = brentq(score, 1e-6, 1 - 1e-9)
    assert fit["rate"] == pytest.approx(N / W, rel=1e-6)
    assert fit["presence"] == pytest.approx(rho, rel=1e-6)
    assert fit["windows"] == W and fit["truths"] == N and fit["fitted"] == ["rate", "presence"]


def test_fit_refuses_without_a_box():
    rng = np.random.default_rng(13)
    tracks, truth = simulate(rng, 2, 3, 1.0, 0.5, 0.0)
    with pytest.raises(ValueError, match="fov"):
        fit_undetected_trajectories(tracks, truth, fov=None, window=3, frames="union")


def test_fit_gradient_matches_finite_differences():
    from nllbench.trackers import trajectory_fit as tf
    from nllbench.trackers import trajectory_tables as tj

    rng = np.random.default_rng(5)
    tracks, truth = simulate(rng, 30, 4, 1.5, 0.4, 0.3)
    inp = tj.trajectory_input(tracks, truth, fov=FOV, frames=list(range(120)))
    windows = [tj.window_statistics(inp, k0, k1)[0] for k0, k1 in tf._window_bounds(120, 4)]
    f = tf._objective(windows, 50, True, 0.0)
    x = np.array([0.3, -0.2, -0.5])
    _, g = f(x)
    for i in range(3):
        e = np.zeros(3)
        e[i] = 1e-6
        assert g[i] == pytest.approx((f(x + e)[0] - f(x - e)[0]) / 2e-6, rel=1e-5, abs=1e-6)
