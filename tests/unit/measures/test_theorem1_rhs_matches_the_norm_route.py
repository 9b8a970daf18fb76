"""Theorem 1's right-hand side is that of the plain route (``np.linalg.norm`` distances) bit for bit.

The check takes its distances from cdist in one or two dimensions; the
reference here recomputes the side from the theorem's formula with the norm
of the differences, on random sets (1 to 4 dimensions) and on the edges: no
estimates, no truth, ties, pairs beyond the cut-off and distances that
overflow to +inf.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment

from nllbench.measures.likelihood.theorem1 import scale_for_k_equal_rho, theorem1, theorem1_sides


def _plain_rhs(X, Y, res) -> float:
    X, Y = np.asarray(X, dtype=float), np.asarray(Y, dtype=float)
    total = res.c / 2.0 * abs(X.shape[0] - Y.shape[0])
    if X.shape[0] and Y.shape[0]:
        with np.errstate(over="ignore"):
            D = np.linalg.norm(X[:, None, :] - Y[None, :, :], axis=2) / res.scale
        cost = np.minimum(D + res.log_k - math.log(res.rho), res.c)
        rows, cols = linear_sum_assignment(cost)
        total += float(cost[rows, cols].sum())
    return res.offset + total


def _same(X, Y, lo, hi, rho, scale):
    res = theorem1(X, Y, lo, hi, rho, scale)
    want = _plain_rhs(X, Y, res)
    _, rhs = theorem1_sides(X, Y, lo, hi, rho, scale)
    assert np.float64(res.rhs).tobytes() == np.float64(want).tobytes(), (res.rhs, want)
    assert np.float64(rhs).tobytes() == np.float64(want).tobytes(), (rhs, want)
    return rhs


@pytest.mark.parametrize("d", [1, 2, 3, 4])
def test_random_sets_give_the_norm_routes_bits(d):
    rng = np.random.default_rng(90 + d)
    lo, hi = np.full(d, -200.0), np.full(d, 2200.0)
    for t in range(30):
        rho = [0.3, 0.8, 0.95][t % 3]
        scale = [1.0, float(rng.uniform(0.3, 30.0)), scale_for_k_equal_rho(rho, d)][t % 3]
        X = rng.uniform(lo, hi, (int(rng.integers(0, 35)), d))
        Y = rng.uniform(lo, hi, (int(rng.integers(0, 35)), d))
        _same(X, Y, lo, hi, rho, scale)


def test_edges():
    lo, hi = [0.0, 0.0], [10.0, 10.0]
    assert _same(np.empty((0, 2)), np.empty((0, 2)), lo, hi, 0.9, 1.0) == pytest.approx(100 * 0.1)
    _same(np.empty((0, 2)), [[1.0, 1.0]], lo, hi, 0.9, 1.0)  # no estimates
    _same([[1.0, 1.0], [2.0, 2.0]], np.empty((0, 2)), lo, hi, 0.9, 1.0)  # no truth
    _same([[5.0, 5.0], [5.0, 5.0]], [[4.0, 5.0], [6.0, 5.0], [5.0, 4.0]], lo, hi, 0.6, 1.0)  # ties
    _same([[0.0, 0.0]], [[10.0, 10.0], [0.1, 0.0]], lo, hi, 0.6, 0.01)  # one pair beyond the cut-off
    # distances past the float range (+inf, a cost of c) in a box whose V (1 - rho) is finite
    _same([[-1.6e308], [0.0]], [[1.6e308], [1e300]], [-1.7e308], [1.7e308], 0.9, 1.0)
