"""The maximum-likelihood fill-ins of the trajectory NLL recover the parameters of simulated data."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import brentq

from nllbench.trackers.trajectory_fit import fit_undetected_trajectories

LOW, HIGH = np.array([0.0, 0.0]), np.array([100.0, 100.0])
FOV = (tuple(LOW), tuple(HIGH))


def simulate(rng, windows, K, rate, rho, R, labels=3, delay=2):
    """Tracks and truth drawn from the declared density, window by window.

    Each label has rows from frame ``delay`` of its window on (a confirmation delay): there
    it is present with its row's r, its state Gaussian; before, present with probability R,
    uniform on the box. Undetected trajectories: Poisson(rate) of them, present at each frame
    with probability rho given at least one frame, uniform on the box.
    """
    tracks, truth = [], []
    next_id = 0
    for w in range(windows):
        frames = w * K + np.arange(K)
        for lab in range(labels):
            ident = 1000 * w + lab
            centre = rng.uniform(10, 90, 2)
            states = {}
            for k, f in enumerate(frames):
                if k >= delay:
                    r = rng.uniform(0.6, 0.95)
                    mean = centre + rng.normal(0, 1.0, 2)
                    tracks.append({"frame": f, "id": ident, "r": r, "x": mean[0], "y": mean[1]})
                    if rng.random() < r:
                        states[f] = rng.multivariate_normal(mean, 0.5 * np.eye(2))
                elif rng.random() < R:
                    states[f] = rng.uniform(LOW, HIGH)
            if states:
                truth += [{"frame": f, "id": next_id, "x": s[0], "y": s[1]} for f, s in states.items()]
                next_id += 1
        for _ in range(rng.poisson(rate)):
            present = np.zeros(K, dtype=bool)
            while not present.any():
                present = rng.random(K) < rho
            for f in frames[present]:
                s = rng.uniform(LOW, HIGH)
                truth.append({"frame": f, "id": next_id, "x": s[0], "y": s[1]})
            next_id += 1
    tr = pd.DataFrame(tracks, columns=["frame", "id", "r", "x", "y"]).assign(var_x=0.5, var_y=0.5)
    return tr, pd.DataFrame(truth, columns=["frame", "id", "x", "y"])


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


def test_fit_refuses_without_a_box():
    rng = np.random.default_rng(13)
    tracks, truth = simulate(rng, 2, 3, 1.0, 0.5, 0.0)
    with pytest.raises(ValueError, match="fov"):
        fit_undetected_trajectories(tracks, truth, fov=None, window=3, frames="union")


def test_fit_gradient_matches_finite_differences():
    from nllbench.trackers import trajectory as tj
    from nllbench.trackers import trajectory_fit as tf

    rng = np.random.default_rng(5)
    tracks, truth = simulate(rng, 30, 4, 1.5, 0.4, 0.3)
    inp = tj.prepare(tracks, truth, fov=FOV, frames=list(range(120)))
    windows = [tj.window_statistics(inp, k0, k1)[0] for k0, k1 in tf._window_bounds(120, 4)]
    f = tf._objective(windows, 50, True, 0.0)
    x = np.array([0.3, -0.2, -0.5])
    _, g = f(x)
    for i in range(3):
        e = np.zeros(3)
        e[i] = 1e-6
        assert g[i] == pytest.approx((f(x + e)[0] - f(x - e)[0]) / 2e-6, rel=1e-5, abs=1e-6)
