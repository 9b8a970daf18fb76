"""A calibrated filter run for the calibration-panel tests."""

from __future__ import annotations

import numpy as np

from nllbench.engine.densities import PMBM, MultiBernoulli


def calibrated_run(seed=0, K=60, M=10):
    """Posteriors that are calibrated by construction: each object exists with its Bernoulli's r and,
    when it does, sits at a draw from the Bernoulli's Gaussian (Bernoullis 50 apart, so the best
    association pairs each object with its own Bernoulli)."""
    rng = np.random.default_rng(seed)
    posteriors, truth, truth_ids = [], [], []
    for _ in range(K):
        r = rng.uniform(0.02, 0.98, M)
        means = np.zeros((M, 4))
        means[:, 0] = 50.0 * np.arange(M)
        A = rng.normal(0, 1, (M, 4, 4))
        covs = A @ np.swapaxes(A, 1, 2) + np.eye(4)
        alive = np.flatnonzero(rng.random(M) < r)
        x = np.array([rng.multivariate_normal(means[k], covs[k]) for k in alive]).reshape(-1, 4)
        posteriors.append(
            PMBM(None, (MultiBernoulli.gaussian(r, means, covs, labels=np.arange(M)),), np.ones(1))
        )
        truth.append(x)
        truth_ids.append(alive)
    return posteriors, truth, truth_ids
