"""The NLL against brute-force enumeration, closed forms and exact corner cases."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import gammaln
from scipy.stats import multivariate_normal
from support.bruteforce import pmbm_log_likelihood
from support.densities import random_covs, random_pmbm

import nllbench as nb

FAMILIES = ["PMBM", "PMB", "MBM", "MBM01", "MB"]


def truth(rng, n, d):
    return rng.normal(0.0, 2.0, (n, d))


@pytest.mark.parametrize("family", FAMILIES)
def test_all_methods_agree_with_brute_force(family):
    rng = np.random.default_rng(1000 + FAMILIES.index(family))  # stable across PYTHONHASHSEED
    for _ in range(60):
        d = int(rng.integers(1, 4))
        f = random_pmbm(rng, d, family)
        y = truth(rng, int(rng.integers(0, 4)), d)
        ref, _ = pmbm_log_likelihood(f, y)
        exact = nb.nll(f, y, method="exact")
        full = nb.nll(f, y, q=500)
        if ref == -math.inf:
            assert exact.value == math.inf and full.value == math.inf
            assert exact.exact and full.exact
            continue
        assert exact.value == pytest.approx(-ref, abs=1e-9)
        assert full.value == pytest.approx(-ref, abs=1e-9)
        assert full.exact and full.lower == full.upper == full.value


@pytest.mark.parametrize("family", FAMILIES)
def test_murty_is_the_sum_of_the_q_best_terms(family):
    rng = np.random.default_rng(99 + len(family))
    for _ in range(40):
        f = random_pmbm(rng, 2, family)
        y = truth(rng, int(rng.integers(1, 4)), 2)
        ref, _ = pmbm_log_likelihood(f, y)
        if ref == -math.inf:
            continue
        for q in (1, 2, 3, 5):
            res = nb.nll(f, y, q=q)
            # paper eq. (9): per hypothesis, the q largest association terms
            want = []
            for w, mb in zip(f.weights, f.hypotheses, strict=True):
                if w == 0:
                    continue
                single = nb.PMBM(f.ppp, (mb,), np.ones(1))
                _, terms = pmbm_log_likelihood(single, y)
                want += [math.log(w) + t for t in terms[:q]]
            top = max(want)
            expect = -(top + math.log(sum(math.exp(t - top) for t in want)))
            assert res.value == pytest.approx(expect, abs=1e-9)
            assert res.lower - 1e-9 <= -ref <= res.upper + 1e-9
            assert sum(res.terms().values()) == pytest.approx(res.value, abs=1e-9)
            assert res.association <= 1e-9


def test_global_budget_keeps_the_q_best_pairs():
    rng = np.random.default_rng(5)
    for _ in range(60):
        f = random_pmbm(rng, 2, "PMBM")
        y = truth(rng, int(rng.integers(1, 4)), 2)
        ref, terms = pmbm_log_likelihood(f, y)
        if ref == -math.inf:
            continue
        for q in (1, 2, 4):
            res = nb.nll(f, y, q=q, budget="global")
            top = terms[:q]
            expect = -(top[0] + math.log(sum(math.exp(t - top[0]) for t in top)))
            assert res.value == pytest.approx(expect, abs=1e-9)
            assert res.lower - 1e-9 <= -ref <= res.upper + 1e-9
            assert res.n_terms == min(q, len(terms))


def test_q_reaching_the_count_is_exact():
    rng = np.random.default_rng(11)
    mb = nb.MultiBernoulli.gaussian([0.5, 0.6, 0.7], rng.normal(size=(3, 2)), random_covs(rng, 3, 2))
    f = nb.PMB(nb.PPP.gaussian([1.0], [[0, 0]], [np.eye(2) * 4]), mb)
    y = truth(rng, 2, 2)
    count = 1 + 2 * 3 + 3 * 2  # sum_i C(2, i) P(3, i)
    assert not nb.nll(f, y, q=count - 1).exact
    res = nb.nll(f, y, q=count)
    assert res.exact and res.lower == res.value == res.upper
    assert res.value == pytest.approx(nb.nll(f, y, method="exact").value, abs=1e-12)


def test_single_bernoulli_closed_form():
    mean, cov, r = np.array([1.0, -2.0]), np.array([[2.0, 0.3], [0.3, 1.0]]), 0.7
    mb = nb.MultiBernoulli.gaussian([r], [mean], [cov])
    y = np.array([[0.5, -1.0]])
    expect = -math.log(r) - multivariate_normal(mean, cov).logpdf(y[0])
    for method in ("murty", "exact"):
        res = nb.nll(mb, y, method=method)
        assert res.value == pytest.approx(expect, rel=1e-12)
        assert res.localization == pytest.approx(expect, rel=1e-12) and res.exact
    empty = nb.nll(mb, np.empty((0, 2)))
    assert empty.value == pytest.approx(-math.log(1 - r)) and empty.false == empty.value
    assert nb.nll(mb, np.ones((2, 2))).value == math.inf


def test_ppp_closed_form_and_as_pmbm():
    rng = np.random.default_rng(2)
    w = np.array([0.5, 1.5])
    means = rng.normal(size=(2, 3))
    covs = random_covs(rng, 2, 3)
    ppp = nb.PPP.gaussian(w, means, covs)
    y = rng.normal(size=(4, 3))
    lam = sum(w[j] * multivariate_normal(means[j], covs[j]).pdf(y) for j in range(2))
    expect = w.sum() - np.log(lam).sum()
    assert nb.nll(ppp, y).value == pytest.approx(expect, rel=1e-12)
    as_pmbm = nb.PMB(ppp, nb.MultiBernoulli.empty(3))
    assert nb.nll(as_pmbm, y).value == pytest.approx(expect, rel=1e-12)
    assert nb.nll(as_pmbm, y).exact
    assert nb.nll(ppp, np.empty((0, 3))).value == pytest.approx(2.0)


def test_uniform_ppp():
    ppp = nb.PPP.uniform(3.0, [0, 0], [2, 5])
    y = np.array([[1.0, 1.0], [0.0, 5.0]])  # the boundary is inside
    assert nb.nll(ppp, y).value == pytest.approx(3.0 - 2 * math.log(3.0 / 10.0))
    assert nb.nll(ppp, np.array([[2.5, 1.0]])).value == math.inf


def test_iid_cluster_closed_form():
    card = np.array([0.1, 0.2, 0.3, 0.4])
    w = np.array([0.25, 0.75])
    means = np.array([[0.0, 0.0], [3.0, 1.0]])
    covs = np.stack([np.eye(2), 2 * np.eye(2)])
    c = nb.IIDCluster(card, w, means, covs)
    y = np.array([[0.5, 0.1], [2.0, 2.0]])
    s = sum(w[j] * multivariate_normal(means[j], covs[j]).pdf(y) for j in range(2))
    expect = -gammaln(3) - math.log(0.3) - np.log(s).sum()
    res = nb.nll(c, y)
    assert res.value == pytest.approx(expect, rel=1e-12)
    assert res.cardinality + res.localization == pytest.approx(res.value)
    assert nb.nll(c, np.empty((0, 2))).value == pytest.approx(-math.log(0.1))
    beyond = nb.nll(c, np.zeros((4, 2)))
    assert beyond.value == math.inf and beyond.cardinality == math.inf


def test_poisson_cardinality_cphd_equals_phd():
    """An i.i.d. cluster with Poisson cardinality is the PPP with the same intensity."""
    rate = 2.5
    N = 60
    card = np.exp(np.arange(N + 1) * math.log(rate) - rate - gammaln(np.arange(N + 1) + 1))
    card /= card.sum()
    means, covs = np.array([[0.0, 1.0]]), np.eye(2)[None]
    y = np.array([[0.1, 0.2], [1.0, 1.0], [-1.0, 0.0]])
    iid = nb.nll(nb.IIDCluster(card, [1.0], means, covs), y).value
    ppp = nb.nll(nb.PPP.gaussian([rate], means, covs), y).value
    assert iid == pytest.approx(ppp, abs=1e-9)


def test_sure_bernoulli_must_be_assigned():
    mb = nb.MultiBernoulli.gaussian([1.0, 0.5], [[0, 0], [10, 10]], [np.eye(2), np.eye(2)])
    ppp = nb.PPP.gaussian([1.0], [[10, 10]], [np.eye(2)])
    f = nb.PMB(ppp, mb)
    # one object near the r = 1 Bernoulli: it must take it, although the PPP is far
    y = np.array([[10.0, 10.0]])
    res = nb.nll(f, y, q=10)
    ref, _ = pmbm_log_likelihood(f, y)
    assert res.value == pytest.approx(-ref) and res.exact
    # no object at all: the r = 1 Bernoulli is unexplained -> impossible
    empty = nb.nll(f, np.empty((0, 2)))
    assert empty.value == math.inf and empty.false == math.inf
    assert nb.nll(f, np.empty((0, 2)), method="exact").value == math.inf


def test_never_existing_bernoulli_is_never_assigned():
    mb = nb.MultiBernoulli.gaussian([0.0], [[0, 0]], [np.eye(2)])
    res = nb.nll(mb, np.array([[0.0, 0.0]]))
    assert res.value == math.inf and res.missed == math.inf
    assert nb.nll(mb, np.empty((0, 2))).value == 0.0


def test_zero_intensity_ppp_explains_nothing():
    f = nb.PMB(nb.PPP.empty(2), nb.MultiBernoulli.gaussian([0.5], [[0, 0]], [np.eye(2)]))
    assert nb.nll(f, np.zeros((2, 2))).value == math.inf
    zero_rate = nb.PPP.gaussian([0.0], [[0, 0]], [np.eye(2)])
    assert nb.nll(zero_rate, np.zeros((1, 2))).value == math.inf
    assert nb.nll(zero_rate, np.empty((0, 2))).value == 0.0


def test_example2_mb_cannot_explain_two_objects():
    mb = nb.MultiBernoulli.gaussian([0.9], [[2, 4]], [0.5 * np.eye(2)])
    for method in ("murty", "exact"):
        res = nb.nll(mb, [[2, 5], [7, 6]], method=method)
        assert res.value == math.inf and res.missed == math.inf and not math.isnan(res.association)


def test_mbm01_hypotheses():
    hyps = [
        nb.MultiBernoulli.gaussian([1.0, 0.0], [[0, 0], [5, 5]], [np.eye(2)] * 2),
        nb.MultiBernoulli.gaussian([1.0, 1.0], [[0, 0], [5, 5]], [np.eye(2)] * 2),
    ]
    f = nb.MBM(hyps, [0.3, 0.7])
    assert f.family == "MBM01"
    y = np.array([[0.0, 0.0]])
    res = nb.nll(f, y)
    expect = -math.log(0.3) - multivariate_normal([0, 0], np.eye(2)).logpdf([0, 0])
    assert res.value == pytest.approx(expect) and res.exact
    assert res.mixture == pytest.approx(-math.log(0.3))


@pytest.mark.parametrize("d", [1, 2, 3, 4, 5, 6])
def test_dimensions(d):
    rng = np.random.default_rng(d)
    for _ in range(10):
        f = random_pmbm(rng, d, "PMBM", max_m=3)
        y = truth(rng, int(rng.integers(0, 3)), d)
        ref, _ = pmbm_log_likelihood(f, y)
        got = nb.nll(f, y, q=100).value
        assert got == (math.inf if ref == -math.inf else pytest.approx(-ref, abs=1e-9))


def test_ties_between_identical_bernoullis():
    """Identical Bernoullis give identical association costs; each is counted once."""
    m, n = 4, 3
    mb = nb.MultiBernoulli.gaussian(np.full(m, 0.6), np.zeros((m, 2)), np.stack([np.eye(2)] * m))
    y = np.zeros((n, 2))
    ref, terms = pmbm_log_likelihood(nb.PMBM(None, (mb,), [1.0]), y)
    res = nb.nll(mb, y, q=len(terms))
    assert res.exact and res.value == pytest.approx(-ref)
    assert res.n_terms == len(terms) == 4 * 3 * 2


def test_hundreds_of_objects_stay_finite():
    rng = np.random.default_rng(0)
    n = 300
    pos = rng.uniform(0, 1000, (n, 2))
    mb = nb.MultiBernoulli.gaussian(
        np.full(n, 0.99), pos + rng.normal(0, 1, (n, 2)), np.stack([np.eye(2)] * n)
    )
    f = nb.PMB(nb.PPP.uniform(5.0, [0, 0], [1000, 1000]), mb)
    res = nb.nll(f, pos, q=3)
    assert np.isfinite(res.value) and res.value > 0
    # an independent route: the optimal association is the identity here
    lp = np.array([multivariate_normal(mb.means[i], np.eye(2)).logpdf(pos[i]) for i in range(n)])
    best = 5.0 - n * math.log(0.99) - lp.sum()
    assert res.localization + res.missed + res.false == pytest.approx(best, rel=1e-12)
    tiny = nb.MultiBernoulli.gaussian(np.full(n, 0.5), pos, np.stack([1e-6 * np.eye(2)] * n))
    assert np.isfinite(nb.nll(tiny, pos).value)  # likelihood ~ 1e+1500: no overflow


def test_decomposition_of_a_pmb():
    mb = nb.MultiBernoulli.gaussian([0.9, 0.4], [[0, 0], [10, 0]], [np.eye(2)] * 2)
    ppp = nb.PPP.uniform(2.0, [-20, -20], [20, 20])
    y = np.array([[0.0, 0.5], [-15.0, 15.0]])
    res = nb.nll(nb.PMB(ppp, mb), y)
    n0 = multivariate_normal([0, 0], np.eye(2)).logpdf([0, 0.5])
    assert res.localization == pytest.approx(-(math.log(0.9) + n0))
    assert res.false == pytest.approx(-math.log(0.6))
    assert res.missed == pytest.approx(2.0 - math.log(2.0 / 1600))


def test_weights_with_zero_hypothesis_are_skipped():
    a = nb.MultiBernoulli.gaussian([0.5], [[0, 0]], [np.eye(2)])
    b = nb.MultiBernoulli.gaussian([1.0, 1.0], [[0, 0], [1, 1]], [np.eye(2)] * 2)
    f = nb.MBM([a, b], [1.0, 0.0])
    assert nb.nll(f, [[0.0, 0.0]]).value == pytest.approx(nb.nll(a, [[0.0, 0.0]]).value)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from(FAMILIES), st.integers(1, 6))
def test_property_bounds_and_terms(seed, family, q):
    rng = np.random.default_rng(seed)
    f = random_pmbm(rng, 2, family)
    y = truth(rng, int(rng.integers(0, 4)), 2)
    res = nb.nll(f, y, q=q)
    ex = nb.nll(f, y, method="exact")
    assert not math.isnan(res.value) and not any(math.isnan(t) for t in res.terms().values())
    if ex.value == math.inf:
        assert res.value == math.inf
    else:
        assert res.lower - 1e-9 <= ex.value <= res.upper + 1e-9
        assert sum(res.terms().values()) == pytest.approx(res.value, abs=1e-9)
    # the NLL does not depend on the order of the truth
    perm = rng.permutation(len(y))
    assert nb.nll(f, y[perm], q=q).value == pytest.approx(res.value, abs=1e-9) or res.value == math.inf


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_property_more_associations_never_increase_nll(seed):
    rng = np.random.default_rng(seed)
    f = random_pmbm(rng, 2, "PMBM")
    y = truth(rng, 3, 2)
    values = [nb.nll(f, y, q=q).value for q in (1, 2, 4, 8, 16)]
    assert all(a >= b - 1e-12 for a, b in zip(values, values[1:], strict=False))


def test_uniform_cube_from_scalars():
    ppp = nb.PPP.uniform(2.0, 0.0, 10.0, dim=3)
    assert ppp.dim == 3
    assert nb.nll(ppp, [[1, 2, 3]]).value == pytest.approx(2.0 - math.log(2.0 / 1000))
    assert nb.PPP.uniform(2.0, 0.0, 10.0).dim == 1


@pytest.mark.slow
def test_murty_matches_exact_dp_on_larger_scenes():
    """Q large enough reproduces the exact DP with r = 1 and r = 0 Bernoullis (n up to 7)."""
    rng = np.random.default_rng(2024)
    for _ in range(40):
        n = int(rng.integers(3, 8))
        m = int(rng.integers(2, 9))
        r = rng.choice([0.0, 1.0, 0.2, 0.6, 0.95], size=m)
        means = rng.normal(0, 1.0, (m, 2))
        mb = nb.MultiBernoulli.gaussian(r, means, random_covs(rng, m, 2))
        ppp = nb.PPP.gaussian([1.0], [[0, 0]], [4 * np.eye(2)])
        f = nb.PMB(ppp, mb)
        y = rng.normal(0, 1.0, (n, 2))
        ex = nb.nll(f, y, method="exact")
        mu = nb.nll(f, y, q=200000)
        assert mu.exact
        assert mu.value == (math.inf if ex.value == math.inf else pytest.approx(ex.value, abs=1e-9))


def test_nll_many_equals_separate_calls():
    rng = np.random.default_rng(17)
    for _ in range(30):
        f = random_pmbm(rng, 2, "PMBM", max_m=4)
        y = truth(rng, int(rng.integers(0, 4)), 2)
        qs = [1, 2, 5, 50]
        for budget in ("hypothesis", "global"):
            many = nb.nll_many(f, y, qs, budget=budget)
            for q, res in zip(qs, many, strict=True):
                one = nb.nll(f, y, q=q, budget=budget)
                assert res.value == one.value or (math.isinf(res.value) and math.isinf(one.value))
                # the shared ranking may know more (e.g. that the list is complete)
                assert res.exact or not one.exact
                assert one.lower - 1e-9 <= res.lower <= res.value + 1e-12 or res.value == math.inf
    ppp = nb.PPP.gaussian([1.0], [[0.0, 0.0]], [np.eye(2)])
    assert [r.value for r in nb.nll_many(ppp, [[0.0, 0.0]], [1, 3])] == [nb.nll(ppp, [[0.0, 0.0]]).value] * 2
