"""The array route of Theorem 1's PMB (``laplace_pmb_best_value``) gives ``nll_best_value`` bit for bit.

``laplace_pmb_best_value(ppp, rho, centers, scale, y)`` must be the value of
the same PMB built as density objects (one existence probability, one scale)
and of ``nb.nll(pmb, y, q=1)``: on random sets of up to 40 Bernoullis (the
vectorised log of the normaliser over many equal scales against the one-entry
log), random scales, and on the edges: no Bernoulli, no truth, both empty,
ties, objects far beyond every centre, rho = 1, truth outside the PPP's box,
a PPP of zero rate and one whose rate overflows.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import nllbench as nb
from nllbench.engine.best_association import laplace_pmb_best_value, nll_best_value
from nllbench.engine.densities import PPP, laplace_pmb_unchecked


def _check(ppp, rho, centers, scale, y) -> float:
    d = ppp.dim
    centers = np.asarray(centers, dtype=float).reshape(-1, d)
    y = np.asarray(y, dtype=float).reshape(-1, d)
    m = centers.shape[0]
    got = laplace_pmb_best_value(ppp, rho, centers, scale, y)
    pmb = laplace_pmb_unchecked(ppp, np.full(m, rho), centers, np.full(m, float(scale)))
    want = nll_best_value(pmb, y)
    assert np.float64(got).tobytes() == np.float64(want).tobytes(), (got, want)
    full = nb.nll(nb.PMB(ppp, nb.MultiBernoulli.laplace(np.full(m, rho), centers, scale)), y, q=1).value
    assert np.float64(got).tobytes() == np.float64(full).tobytes(), (got, full)
    return got


@pytest.mark.parametrize("d", [1, 2, 3])
def test_random_sets_and_scales_give_the_object_routes_bits(d):
    rng = np.random.default_rng(41 + d)
    ppp = PPP.uniform(rng.uniform(0.5, 4.0), np.full(d, -10.0), np.full(d, 10.0))
    for t in range(30):
        m, n = int(rng.integers(0, 41)), int(rng.integers(0, 9))
        scale = float(np.exp(rng.uniform(-8.0, 8.0))) if t % 2 else float(rng.uniform(0.2, 5.0))
        rho = float(rng.uniform(0.05, 0.99))
        _check(ppp, rho, rng.uniform(-9.0, 9.0, (m, d)), scale, rng.uniform(-9.0, 9.0, (n, d)))


def test_empty_sets_ties_and_far_objects():
    ppp = PPP.uniform(1.5, [0, 0], [4, 4])
    some = [[1.0, 1.0], [3.0, 2.0]]
    assert _check(ppp, 0.7, np.empty((0, 2)), 1.0, np.empty((0, 2))) == 1.5
    _check(ppp, 0.7, np.empty((0, 2)), 1.0, [[1.0, 1.0], [2.0, 3.0]])  # no Bernoulli
    _check(ppp, 0.7, some, 1.0, np.empty((0, 2)))  # no truth
    _check(ppp, 0.5, [[2.0, 2.0], [2.0, 2.0]], 1.0, [[3.0, 2.0], [1.0, 2.0]])  # every association ties
    _check(ppp, 0.5, [[1, 1], [1, 3], [3, 1], [3, 3]], 0.7, [[2.0, 2.0], [2.0, 2.0], [0.0, 2.0]])
    wide = PPP.uniform(2.0, [-1e301, -1e301], [1e301, 1e301])
    assert math.isfinite(_check(wide, 0.9, [[0.0, 0.0], [3.0, 0.0]], 1.0, [[1e300, 0.0], [-1e290, 1.0]]))
    _check(wide, 1.0, some, 1.0, [[1.0, 1.2]])  # rho = 1: every Bernoulli must take an object
    assert _check(wide, 1.0, some, 1.0, np.empty((0, 2))) == math.inf


def test_truth_outside_the_box_and_extreme_ppp_rates():
    small = PPP.uniform(2.0, [-1, -1], [1, 1])
    _check(small, 0.6, [[3.0, 0.0]], 1.0, [[3.0, 0.1], [0.5, 0.5]])  # one object outside the PPP's box
    assert _check(small, 0.6, [[3.0, 0.0]], 1.0, [[7.0, 7.0], [8.0, 8.0]]) == math.inf  # two, one Bernoulli
    _check(PPP.uniform(0.0, [-1, -1], [1, 1]), 0.6, [[0.0, 0.0]], 1.0, [[0.2, 0.1]])  # zero rate
    huge = PPP.uniform(1e308, [0, 0], [1, 1])
    _check(huge, 0.5, [[0.5, 0.5]], 1.0, [[0.5, 0.5]])
    inf_rate = PPP.gaussian([1e308, 1e308], np.zeros((2, 1)), np.ones((2, 1, 1)))  # Lambda overflows
    assert laplace_pmb_best_value(inf_rate, 0.5, np.zeros((1, 1)), 1.0, np.zeros((1, 1))) == math.inf


@pytest.mark.parametrize("k", [3, 7])
def test_blocks_of_tied_associations_give_the_plain_routes_bits(k):
    # k identical Bernoullis and k identical objects: k! associations of equal cost (7! = 5040 passes
    # the ranking's tie limit of 4096), and a near-tie: one object moved by an ulp
    ppp = PPP.uniform(1.0, [-4, -4], [4, 4])
    centres = np.zeros((k, 2))
    same = np.tile([[0.5, 0.25]], (k, 1))
    _check(ppp, 0.5, centres, 1.0, same)
    near = same.copy()
    near[0, 0] = np.nextafter(0.5, 1.0)
    _check(ppp, 0.5, centres, 1.0, near)
