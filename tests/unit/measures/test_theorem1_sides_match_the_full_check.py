"""``theorem1_sides`` (the per-step check) gives :func:`theorem1`'s lhs and rhs bit for bit.

Its left-hand side comes through the engine's Q = 1 value route, the full
check's through ``nb.nll``; both must be the same bits on random sets and on
the edges: no estimates, no truth, ties, pairs beyond the cut-off, far-apart
points whose Laplace cost passes the engine's finite limit, and a box whose
volume overflows.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from nllbench.measures.likelihood.theorem1 import scale_for_k_equal_rho, theorem1, theorem1_sides


def _same(X, Y, lo, hi, rho, scale):
    full = theorem1(X, Y, lo, hi, rho, scale)
    lhs, rhs = theorem1_sides(X, Y, lo, hi, rho, scale)
    assert np.float64(lhs).tobytes() == np.float64(full.lhs).tobytes(), (lhs, full.lhs)
    assert np.float64(rhs).tobytes() == np.float64(full.rhs).tobytes(), (rhs, full.rhs)
    return lhs, rhs


@pytest.mark.parametrize("d", [1, 2, 3])
def test_random_sets_give_the_full_check_bits(d):
    rng = np.random.default_rng(300 + d)
    lo, hi = np.zeros(d), np.full(d, 10.0)
    for t in range(40):
        rho = [0.3, 0.8, 0.95][t % 3]
        scale = [1.0, rng.uniform(0.3, 3.0), scale_for_k_equal_rho(rho, d)][t % 3]
        X = rng.uniform(lo, hi, (int(rng.integers(0, 8)), d))
        Y = rng.uniform(lo, hi, (int(rng.integers(0, 8)), d))
        lhs, rhs = _same(X, Y, lo, hi, rho, scale)
        assert abs(lhs - rhs) < 1e-9


def test_edges_give_the_full_check_bits():
    lo, hi = np.zeros(2), np.full(2, 10.0)
    some = np.array([[1.0, 1.0], [5.0, 5.0]])
    empty = np.empty((0, 2))
    for X, Y in ((empty, empty), (empty, some), (some, empty), ([], []), (some, some)):
        _same(X, Y, lo, hi, 0.9, 1.0)
    # ties: two estimates equidistant from two objects, and a repeated estimate
    _same([[4.0, 5.0], [6.0, 5.0]], [[5.0, 4.0], [5.0, 6.0]], lo, hi, 0.7, 1.0)
    _same([[5.0, 5.0], [5.0, 5.0]], [[5.0, 4.0], [5.0, 6.0], [9.0, 9.0]], lo, hi, 0.7, 1.0)
    # pairs beyond the cut-off: c = -2 log(1 - rho) is small next to their distances
    _same([[0.0, 0.0], [10.0, 10.0]], [[10.0, 0.0], [0.0, 10.0]], lo, hi, 0.5, 0.1)
    # far apart on a huge field: the Laplace cost passes the engine's finite limit (a forbidden cell)
    lhs, rhs = _same([[-1e300]], [[1e300], [0.0], [-1e300]], [-1e300], [1e300], 0.9, 1.0)
    assert np.isfinite(lhs) and np.isfinite(rhs)
    # a box whose volume overflows while V (1 - rho) does not
    _same([[0.0]], [[1.0]], [-1.7e308], [1.7e308], 1 - 1e-15, 2.0)


def test_arguments_are_checked_as_the_full_check_does():
    with pytest.raises(ValueError, match="truth: expected every object inside the field of view"):
        theorem1_sides([[1.0, 1.0]], [[11.0, 1.0]], [0, 0], [10, 10], 0.9, 1.0)
    with pytest.raises(ValueError, match="rho"):
        theorem1_sides([[1.0, 1.0]], [[1.0, 1.0]], [0, 0], [10, 10], 1.0, 1.0)
    with pytest.raises(ValueError, match="estimates"):
        theorem1_sides([[1.0, np.nan]], [[1.0, 1.0]], [0, 0], [10, 10], 0.9, 1.0)


def test_the_cached_scale_is_the_formula():
    for rho, d in ((0.5, 1), (0.9, 2), (0.99, 3), (0.9, 2)):
        scale = scale_for_k_equal_rho(rho, d)
        k = scale**d * math.gamma(d) * 2 * math.pi ** (d / 2) / math.gamma(d / 2)
        assert k == pytest.approx(rho, rel=1e-13)
    with pytest.raises(ValueError, match="rho"):
        scale_for_k_equal_rho(0.0, 2)
