"""Random batches and trajectory cases for the nllbench.torch tests."""

from __future__ import annotations

import numpy as np

BOX = ([-1.0, -1.0], [5.0, 5.0])


def random_batch(rng, B=5, N=4, d=2, sizes=(0, 1, 3, 5, 2), H=None, cholesky=False):
    """Random outputs (some logits large, so that r rounds to 1) and truth as a list of (M_b, d) tensors."""
    lead = (B, N) if H is None else (B, H, N)
    logits = rng.normal(0.0, 2.0, lead)
    logits[..., 0] = np.where(rng.random(lead[:-1]) < 0.3, 12.0, logits[..., 0])
    means = rng.uniform(0.0, 4.0, (*lead, d))
    if cholesky:
        A = rng.normal(0.0, 0.5, (*lead, d, d))
        cov = A @ np.swapaxes(A, -1, -2) + 0.3 * np.eye(d)
        cov_param = np.linalg.cholesky(cov)
    else:
        cov_param = rng.uniform(0.3, 2.0, (*lead, d))
        cov = cov_param[..., None, :] * np.eye(d)
    truth = [rng.uniform(0.0, 4.0, (m, d)) for m in sizes[:B]]
    return logits, means, cov_param, cov, truth


def trajectory_case(rng, B=4, N=3, M=3, K=4, d=2):
    logits = rng.normal(0.0, 1.5, (B, N, K))
    means = rng.uniform(0.0, 4.0, (B, N, K, d))
    var = rng.uniform(0.4, 2.0, (B, N, K, d))
    present = rng.random((B, M, K)) < 0.7
    present[:, -1] = False  # a padded truth in every sample
    present[0] = False  # sample 0: no truth at all
    truth = np.where(present[..., None], rng.uniform(0.0, 4.0, (B, M, K, d)), np.nan)
    return logits, means, var, truth, present
