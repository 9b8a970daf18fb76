"""GOSPA and single-frame CLEAR MOT, with the paper's values and hand-computed cases."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import nllbench as nb
from nllbench.measures.metrics import clear_mot_frame


def gospa_brute(X, Y, c, p):
    """min over all partial assignments, straight from the definition."""
    X, Y = np.asarray(X, float).reshape(-1, 2), np.asarray(Y, float).reshape(-1, 2)
    best = math.inf
    nx, ny = len(X), len(Y)
    for k in range(min(nx, ny) + 1):
        for xs in itertools.combinations(range(nx), k):
            for ys in itertools.permutations(range(ny), k):
                loc = sum(np.linalg.norm(X[i] - Y[j]) ** p for i, j in zip(xs, ys, strict=True))
                best = min(best, loc + c**p / 2 * (nx + ny - 2 * k))
    return best ** (1 / p)


def test_paper_values():
    r = nb.gospa([[3, 5], [7, 4]], [[2, 5], [6, 3]], c=2, p=1)
    assert r.value == pytest.approx(1 + math.sqrt(2))
    r = nb.gospa([[2, 6]], [[2, 5], [7, 6]], c=2, p=1)
    assert r.value == pytest.approx(2) and r.localization == pytest.approx(1)
    assert r.missed == pytest.approx(1) and r.false == 0


def test_clear_gate_and_gospa_disagree_case():
    """Two crossed pairs at distance sqrt(1.43091**2 + 1.25**2) = 1.9 <= 2.

    CLEAR MOT (inclusive gate 2) matches both crossed pairs, MOTP 1.9; GOSPA
    (c = 2, p = 1) prefers the exact match plus one miss and one false (2 < 3.8).
    """
    est = [[0, 0], [1.43091, -1.25]]
    tru = [[0, 0], [1.43091, 1.25]]
    g = nb.gospa(est, tru, c=2, p=1)
    assert g.value == pytest.approx(2) and g.localization == 0
    assert g.n_missed == 1 and g.n_false == 1
    m = clear_mot_frame(est, tru, threshold=2)
    assert m.mota == 1 and m.motp == pytest.approx(1.9, abs=1e-5)


@pytest.mark.parametrize("p", [1, 2, 3.5])
def test_gospa_against_definition(p):
    rng = np.random.default_rng(int(p * 10))
    for _ in range(60):
        X = rng.uniform(0, 5, (rng.integers(0, 5), 2))
        Y = rng.uniform(0, 5, (rng.integers(0, 5), 2))
        c = rng.uniform(0.5, 4)
        r = nb.gospa(X, Y, c=c, p=p)
        assert r.value == pytest.approx(gospa_brute(X, Y, c, p), abs=1e-9)
        assert (r.localization + r.missed + r.false) ** (1 / p) == pytest.approx(r.value)
        assert r.n_assigned + r.n_missed == len(Y) and r.n_assigned + r.n_false == len(X)


def test_gospa_empty_sets_and_errors():
    assert nb.gospa([], [], c=2).value == 0
    assert nb.gospa([], [[1, 1]], c=2, p=2).value == pytest.approx(math.sqrt(2))
    with pytest.raises(ValueError, match="alpha: expected 2"):
        nb.gospa([[0, 0]], [[0, 0]], alpha=1)
    with pytest.raises(ValueError, match="c: expected a positive"):
        nb.gospa([[0, 0]], [[0, 0]], c=0)
    with pytest.raises(ValueError, match="p: expected a number >= 1"):
        nb.gospa([[0, 0]], [[0, 0]], p=0.5)


def test_clear_gate_is_inclusive_and_inside_the_assignment():
    m = clear_mot_frame([[0, 0]], [[2, 0]], threshold=2)
    assert m.matches == 1 and m.motp == 2
    m = clear_mot_frame([[0, 0]], [[2.0001, 0]], threshold=2)
    assert m.matches == 0 and m.mota == -1 and m.motp == math.inf
    assert clear_mot_frame([], [], 2).mota == 1


@pytest.mark.parametrize("p", [1.0, 2.0, 2.5])
def test_gospa_and_ospa_equal_the_dense_cdist_route_bit_for_bit(p):
    """The compiled cost matrix is cdist's, so the whole result is the straightforward one, bit for bit."""
    from scipy.optimize import linear_sum_assignment
    from scipy.spatial.distance import cdist

    from nllbench.measures.metrics import ospa

    rng = np.random.default_rng(int(10 * p))
    for nx, ny, d in [(300, 280, 2), (50, 70, 3), (1, 40, 1), (200, 200, 4)]:
        X = rng.uniform(0, 40, (nx, d))
        Y = rng.uniform(0, 40, (ny, d))
        c = 3.0
        dist = cdist(X, Y)
        cost = np.minimum(dist, c) ** p
        rows, cols = linear_sum_assignment(cost)
        real = dist[rows, cols] < c
        loc = float(np.sum(dist[rows[real], cols[real]] ** p))
        k = int(real.sum())
        half = c**p / 2
        want = (loc + half * (nx - k) + half * (ny - k)) ** (1 / p)
        got = nb.gospa(X, Y, c=c, p=p)
        assert got.value == want and got.localization == loc and got.n_assigned == k
        o_loc = float(cost[rows, cols].sum())
        assert ospa(X, Y, c=c, p=p).value == ((o_loc + c**p * abs(nx - ny)) / max(nx, ny)) ** (1 / p)
