"""The expected PGOSPA of a Bernoulli against its closed form, by Monte Carlo over 3,000 sampled
truths; the closed form's minimum is never at the honest estimate."""

from __future__ import annotations

import math

import numpy as np

import nllbench as nb
from nllbench.measures.run.audit import (
    expected_pgospa_bernoulli,
)


def test_expected_pgospa_of_a_bernoulli_matches_its_closed_form():
    r, sigma2, c, n = 0.6, 0.5, 2.0, 3000
    mb = nb.MultiBernoulli.gaussian([r], [[0.0, 0.0]], [sigma2 * np.eye(2)])
    truths = nb.sample(mb, n, seed=7).as_list()
    for r_est, scale in ((0.6, 1.0), (0.95, 1.0), (0.6, 0.125), (0.3, 4.0)):
        est = nb.MultiBernoulli.gaussian([r_est], [[0.0, 0.0]], [scale * sigma2 * np.eye(2)])
        vals = np.array([nb.pgospa(y, est, c=c, p=2.0).power for y in truths])
        exact = expected_pgospa_bernoulli(r, r_est, scale, sigma2, c)
        assert abs(vals.mean() - exact) < 4 * vals.std(ddof=1) / math.sqrt(n), (r_est, scale)
    # linear in r_est, increasing in s: the minimum is at an end, never at the honest (r, 1)
    ends = [expected_pgospa_bernoulli(r, q, 1.0, sigma2, c) for q in (0.0, 1.0)]
    assert min(ends) < expected_pgospa_bernoulli(r, r, 1.0, sigma2, c)
    assert expected_pgospa_bernoulli(r, r, 0.125, sigma2, c) < expected_pgospa_bernoulli(r, r, 1.0, sigma2, c)
