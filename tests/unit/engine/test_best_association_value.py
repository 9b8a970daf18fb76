"""The Q = 1 value route (``nll_best_value``) gives ``nb.nll(pmb, y, q=1).value`` bit for bit.

Checked on random PMBs and MBs (Gaussian and Laplace Bernoullis, pooled or
not) and on the edges: no Bernoulli, no truth, both empty, tied costs,
objects too far from every Bernoulli for a finite cost, r = 0 and r = 1,
truth outside the PPP's support, an infinite PPP rate and too many objects
for an MB; the value is also checked against a brute-force minimum over
every association.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import nllbench as nb
from nllbench.engine.best_association import nll_best_value
from nllbench.engine.densities import PMBM, PPP


def _bits(a: float, b: float) -> bool:
    return np.float64(a).tobytes() == np.float64(b).tobytes()


def _check(pmb, y) -> float:
    y = np.asarray(y, dtype=float).reshape(-1, pmb.dim)
    got = nll_best_value(pmb, y)
    want = nb.nll(pmb, y, q=1).value
    assert _bits(got, want), (got, want)
    return got


def _brute_force(r, log_p, log_lam, total_rate) -> float:
    """min over associations of the NLL of one term, by enumeration (n objects, m Bernoullis)."""
    m, n = log_p.shape
    best = math.inf
    with np.errstate(divide="ignore"):
        log_r, log_1mr = np.log(r), np.log1p(-r)
    for targets in itertools.product(range(-1, m), repeat=n):  # -1: the object goes to the PPP
        used = [t for t in targets if t >= 0]
        if len(set(used)) < len(used):
            continue
        cost = total_rate
        for k in range(m):
            cost -= log_r[k] + log_p[k, targets.index(k)] if k in used else log_1mr[k]
        cost -= sum(log_lam[l] for l, t in enumerate(targets) if t < 0)
        best = min(best, cost)
    return best


def _random_pmb(rng, d: int, laplace: bool, ppp: bool):
    m = int(rng.integers(0, 5))
    r = rng.uniform(0.05, 0.95, m)
    centres = rng.normal(0.0, 2.0, (m, d))
    if laplace:
        mb = nb.MultiBernoulli.laplace(r, centres, rng.uniform(0.3, 2.0, m))
    else:
        a = rng.normal(0.0, 0.5, (m, d, d))
        mb = nb.MultiBernoulli.gaussian(r, centres, a @ np.swapaxes(a, 1, 2) + 0.3 * np.eye(d))
    p = PPP.uniform(rng.uniform(0.1, 3.0), np.full(d, -6.0), np.full(d, 6.0)) if ppp else None
    return PMBM.pmb(p, mb)


@pytest.mark.parametrize("laplace", [False, True])
@pytest.mark.parametrize("ppp", [False, True])
def test_random_pmbs_give_the_nll_bits_and_the_brute_force_minimum(laplace, ppp):
    rng = np.random.default_rng(7 + 2 * laplace + ppp)
    for _ in range(40):
        pmb = _random_pmb(rng, 2, laplace, ppp)
        y = rng.uniform(-5.0, 5.0, (int(rng.integers(0, 5)), 2))
        got = _check(pmb, y)
        mb = pmb.hypotheses[0]
        log_p = mb.densities.logpdf(y) if len(mb) and len(y) else np.zeros((len(mb), len(y)))
        if pmb.ppp is None:
            log_lam, rate = np.full(len(y), -np.inf), 0.0
        else:
            log_lam, rate = pmb.ppp.log_intensity(y), pmb.ppp.total_rate
        assert got == pytest.approx(_brute_force(mb.r, log_p, log_lam, rate), rel=1e-12, abs=1e-12)


def test_a_pooled_one_hypothesis_pmbm_reads_its_members():
    pool = nb.MultiBernoulli.gaussian([0.3, 0.8, 0.6], [[0.0, 0.0], [2.0, 1.0], [5.0, 5.0]], [np.eye(2)] * 3)
    ppp = PPP.uniform(2.0, [-5, -5], [5, 5])
    f = PMBM.pooled(ppp, pool, [np.array([2, 0])], [1.0])
    for y in ([[0.1, 0.2]], [[0.1, 0.2], [4.5, 4.9], [2.0, 1.0]], np.empty((0, 2))):
        _check(f, y)


def test_empty_sets():
    ppp = PPP.uniform(1.5, [0, 0], [4, 4])
    some = nb.MultiBernoulli.laplace([0.4, 0.7], [[1.0, 1.0], [3.0, 2.0]], 1.0)
    assert _check(PMBM.pmb(ppp, nb.MultiBernoulli.empty(2)), np.empty((0, 2))) == 1.5
    _check(PMBM.pmb(ppp, nb.MultiBernoulli.empty(2)), [[1.0, 1.0], [2.0, 3.0]])  # no Bernoulli
    _check(PMBM.pmb(ppp, some), np.empty((0, 2)))  # no truth
    _check(PMBM.pmb(None, some), np.empty((0, 2)))
    assert _check(PMBM.pmb(None, nb.MultiBernoulli.empty(2)), np.empty((0, 2))) == 0.0


def test_tied_costs_give_the_same_bits():
    ppp = PPP.uniform(1.0, [-4, -4], [4, 4])
    # two identical Bernoullis and objects placed symmetrically: every association ties with another
    twin = nb.MultiBernoulli.laplace([0.5, 0.5], [[0.0, 0.0], [0.0, 0.0]], 1.0)
    _check(PMBM.pmb(ppp, twin), [[1.0, 0.0], [-1.0, 0.0]])
    _check(PMBM.pmb(ppp, twin), [[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])
    grid = nb.MultiBernoulli.laplace(np.full(4, 0.5), [[1, 1], [1, -1], [-1, 1], [-1, -1]], 1.0)
    _check(PMBM.pmb(ppp, grid), [[0.0, 0.0], [0.0, 0.0], [2.0, 0.0], [0.0, 2.0]])


def test_far_objects_and_certain_or_impossible_bernoullis():
    ppp = PPP.uniform(2.0, [-1e301, -1e301], [1e301, 1e301])
    far = nb.MultiBernoulli.gaussian([0.9, 0.5], [[0.0, 0.0], [3.0, 0.0]], [1e-4 * np.eye(2)] * 2)
    # objects far beyond every Bernoulli: their costs pass the finite limit (forbidden cells), the PPP
    # explains them; the Laplace cost grows with the distance itself
    assert math.isfinite(_check(PMBM.pmb(ppp, far), [[1e200, 1e200], [0.0, 0.01]]))
    laplace = nb.MultiBernoulli.laplace([0.9, 0.5], [[0.0, 0.0], [3.0, 0.0]], 1.0)
    assert math.isfinite(_check(PMBM.pmb(ppp, laplace), [[1e300, 0.0], [2.0, 0.01], [-1e290, 1.0]]))
    sure = nb.MultiBernoulli.gaussian([1.0, 0.0], [[0.0, 0.0], [1.0, 1.0]], [np.eye(2)] * 2)
    _check(PMBM.pmb(ppp, sure), [[0.2, 0.1]])
    assert _check(PMBM.pmb(ppp, sure), np.empty((0, 2))) == math.inf  # an r = 1 Bernoulli, nothing to explain
    assert _check(PMBM.pmb(None, far), [[1e200, 1e200]]) == math.inf  # no PPP, no finite cell
    assert _check(PMBM.pmb(None, far), [[0.0, 0.0], [3.0, 0.0], [1.0, 1.0]]) == math.inf  # too many
    small = PPP.uniform(2.0, [-1, -1], [1, 1])
    _check(PMBM.pmb(small, far), [[3.0, 0.0], [0.5, 0.5]])  # an object outside the PPP's support
    assert _check(PMBM.pmb(small, far), [[1e200, 7.0]]) == math.inf  # outside, and no finite cell


def test_an_infinite_ppp_rate_and_a_mixture_are_handled():
    huge = PPP.uniform(1e308, [0, 0], [1, 1])
    inf_rate = PPP.gaussian([1e308, 1e308], np.zeros((2, 1)), np.ones((2, 1, 1)))  # Lambda overflows
    mb = nb.MultiBernoulli.laplace([0.5], [[0.5, 0.5]], 1.0)
    _check(PMBM.pmb(huge, mb), [[0.5, 0.5]])
    assert nll_best_value(PMBM.pmb(inf_rate, nb.MultiBernoulli.empty(1)), np.zeros((1, 1))) == math.inf
    assert nb.nll(PMBM.pmb(inf_rate, nb.MultiBernoulli.empty(1)), np.zeros((1, 1))).value == math.inf
    mbm = nb.MBM([mb, mb], [0.5, 0.5])
    with pytest.raises(ValueError, match="pmbm: expected a PMBM with one global hypothesis, got 2"):
        nll_best_value(mbm, np.zeros((1, 2)))
