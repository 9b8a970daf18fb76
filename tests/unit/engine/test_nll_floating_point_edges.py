"""The NLL engine at the edges of floating point: extreme magnitudes, overflow, ties, huge budgets,
ill-conditioned covariances. Each case is compared with an exact value (closed form,
brute force, or rational arithmetic)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.bruteforce import pmbm_log_likelihood
from support.densities import random_pmbm

import nllbench as nb
from nllbench.engine.assignment import count_assignments, count_assignments_log, ranked_in_search_order

I2 = np.eye(2)
LOG_2PI = math.log(2 * math.pi)
PPP1 = nb.PPP.gaussian([1.0], [[0, 0]], [I2])


def _pmb_value_without_far_bernoulli(r: float) -> float:
    """PPP weight 1 at the origin, truth at the origin, one Bernoulli that cannot explain it."""
    return 1.0 + LOG_2PI - math.log1p(-r)


# --- huge but finite costs are forbidden cells ------------------------------------------


@pytest.mark.parametrize(
    "mean, cov",
    [([1e130, 0.0], I2), ([1e-20, 0.0], 1e-300 * I2), ([1e200, 0.0], I2), ([-3e125, 2e125], 4 * I2)],
)
@pytest.mark.parametrize("method", ["murty", "exact"])
def test_bernoulli_at_an_astronomical_distance_only_contributes_its_absence(mean, cov, method):
    mb = nb.MultiBernoulli.gaussian([0.5], [mean], [cov])
    res = nb.nll(nb.PMB(PPP1, mb), [[0.0, 0.0]], method=method)
    assert res.value == pytest.approx(_pmb_value_without_far_bernoulli(0.5), rel=1e-15)
    assert res.exact and res.lower == res.value
    assert sum(res.terms().values()) == pytest.approx(res.value, rel=1e-15)


def test_truth_only_explainable_through_an_underflowing_factor_is_impossible():
    """exp(-1e259) is 0 in double precision: the likelihood is 0, the NLL +inf, no error."""
    mb = nb.MultiBernoulli.gaussian([0.5], [[1e130, 0.0]], [I2])
    for method in ("murty", "exact"):
        res = nb.nll(mb, [[0.0, 0.0]], method=method)
        assert res.value == math.inf and res.missed == math.inf and res.association == 0.0


# --- no NaN term when the total rate overflows ------------------------------------------


def test_overflowing_ppp_rate_gives_inf_with_finite_or_infinite_terms_never_nan():
    ppp = nb.PPP.gaussian([1e308, 1e308], [[0, 0], [1, 1]], [I2, I2])
    assert ppp.total_rate == math.inf
    mb = nb.MultiBernoulli.gaussian([0.5], [[0, 0]], [I2])
    for density in (ppp, nb.PMB(ppp, mb), nb.PMBM(ppp, [mb, mb], [0.5, 0.5])):
        for method in ("murty", "exact"):
            res = nb.nll(density, [[0.0, 0.0]], method=method)
            assert res.value == math.inf
            terms = res.terms()
            assert not any(math.isnan(t) for t in terms.values()), terms
            assert sum(terms.values()) == math.inf and res.missed == math.inf
        for res in nb.nll_many(density, [[0.0, 0.0]], [1, 5]):
            assert not any(math.isnan(t) for t in res.terms().values())


# --- the uniform PPP's volume in log space ----------------------------------------------


def test_uniform_volume_of_the_whole_float_range_is_computed_in_log_space():
    ppp = nb.PPP.uniform(1.0, [-1.7e308] * 2, [1.7e308] * 2)
    log_vol = 2 * (math.log(1.7e308) + math.log(2.0))
    res = nb.nll(ppp, [[0.0, 0.0]])
    assert res.value == pytest.approx(1.0 + log_vol, rel=1e-15)
    assert res.value == pytest.approx(1421.84, abs=0.01)
    # sides that do not overflow are as before, bit for bit
    small = nb.PPP.uniform(2.0, [0.1, -3.0], [7.3, 5.5])
    assert nb.nll(small, [[1.0, 1.0]]).value == 2.0 - (math.log(2.0) - np.log(np.array([7.2, 8.5])).sum())


# --- nll_many validates its budgets and agrees with nll bit for bit ------------------------


@pytest.mark.parametrize(
    "qs, match",
    [
        ([1.5], r"qs\[0\]: expected a positive integer, got 1.5"),
        ([True], r"qs\[0\]: expected a positive"),
        ([2, "x"], r"qs\[1\]: expected a positive integer, got 'x'"),
        ([0], r"qs\[0\]"),
        ([], "qs: expected at least"),
        (np.array([1.0]), r"qs\[0\]: expected a positive integer"),
    ],
)
def test_nll_many_validates_budgets_like_nll(qs, match):
    f = nb.PMB(PPP1, nb.MultiBernoulli.gaussian([0.5], [[0, 0]], [I2]))
    with pytest.raises(ValueError, match=match):
        nb.nll_many(f, [[0.0, 0.0]], qs)
    with pytest.raises(TypeError, match="qs: expected a sequence"):
        nb.nll_many(f, [[0.0, 0.0]], 3)


def _tied_pmbm(rng, H=3, m=6):
    """Identical Bernoullis and coarse values: many associations with equal cost up to rounding."""
    means = np.round(rng.normal(0, 1, (2, 2)), 1)
    hyps = []
    for _ in range(H):
        pick = rng.integers(0, 2, m)
        r = rng.choice([0.3, 0.6, 0.9], m)
        hyps.append(nb.MultiBernoulli.gaussian(r, means[pick], np.stack([I2 * 0.5] * m)))
    return nb.PMBM(PPP1, hyps, np.full(H, 1.0 / H))


def test_nll_many_equals_nll_to_the_last_bit_under_ties():
    rng = np.random.default_rng(404)
    qs = [1, 2, 3, 7, 20, 64]
    for _ in range(40):
        f = _tied_pmbm(rng)
        y = np.round(rng.normal(0, 1, (int(rng.integers(1, 5)), 2)), 1)
        many = nb.nll_many(f, y, qs)
        for q, res in zip(qs, many, strict=True):
            one = nb.nll(f, y, q=q)
            for name in ("value", "lower", "upper", "exact", "n_terms", *one.terms()):
                assert getattr(res, name) == getattr(one, name), (q, name)


def test_ranking_prefixes_do_not_depend_on_the_budget():
    rng = np.random.default_rng(7)
    for _ in range(300):
        n = int(rng.integers(1, 6))
        M = n + int(rng.integers(0, 6))
        C = rng.integers(0, 4, (n, M)) * 0.1
        C[rng.random((n, M)) < 0.2] = np.inf
        mand = np.zeros(M, dtype=bool)
        mand[: int(rng.integers(0, 2))] = True
        big_costs, big_cols, _ = ranked_in_search_order(C, mand, 60)
        for q in (1, 2, 5, 13):
            costs, cols, _ = ranked_in_search_order(C, mand, q)
            assert np.array_equal(costs, big_costs[: costs.size])
            assert np.array_equal(cols, big_cols[: costs.size])


# --- a huge budget is capped before anything is allocated ----------------------------------


def test_huge_budget_on_a_small_problem_is_capped_and_exact():
    rng = np.random.default_rng(5)
    n, m = 12, 2  # 12! / 0! = 4.8e8 injective maps of the padded matrix, but few associations
    mb = nb.MultiBernoulli.gaussian([0.4, 0.7], rng.normal(0, 1, (m, 2)), np.stack([I2] * m))
    f = nb.PMB(nb.PPP.gaussian([3.0], [[0, 0]], [4 * I2]), mb)
    y = rng.normal(0, 1, (n, 2))
    exact = nb.nll(f, y, method="exact")
    for budget in ("hypothesis", "global"):
        res = nb.nll(f, y, q=10**9, budget=budget)
        assert res.exact and res.value == pytest.approx(exact.value, rel=1e-13)
        assert res.n_terms == count_assignments(n, m) == round(math.exp(count_assignments_log(n, m)))
    assert nb.nll_many(f, y, [10**12])[0].n_terms == count_assignments(n, m)


def test_murty_caps_a_huge_budget_at_the_number_of_allowed_cells():
    C = np.full((14, 16), np.inf)
    C[:, :2] = 1.0
    C[np.arange(14), 2 + np.arange(14)] = 0.0  # two shared columns, one private column per row
    res = nb.murty(C, 10**9)
    assert res.complete and res.costs.size == count_assignments(14, 2)


# --- ill-conditioned covariances: triangular solves, checked with rational arithmetic ------


def _exact_logpdf(y, mean, cov) -> float:
    """log N(y; mean, cov) with the quadratic form and determinant in exact rationals."""
    d = len(mean)
    a = [[Fraction(float(cov[i][j])) for j in range(d)] for i in range(d)]
    b = [Fraction(float(y[i])) - Fraction(float(mean[i])) for i in range(d)]
    # Gaussian elimination on [a | b], exact
    det = Fraction(1)
    for c in range(d):
        piv = next(r for r in range(c, d) if a[r][c] != 0)
        if piv != c:
            a[c], a[piv], b[c], b[piv] = a[piv], a[c], b[piv], b[c]
            det = -det
        det *= a[c][c]
        for r in range(c + 1, d):
            f = a[r][c] / a[c][c]
            a[r] = [a[r][k] - f * a[c][k] for k in range(d)]
            b[r] -= f * b[c]
    x = [Fraction(0)] * d
    for c in range(d - 1, -1, -1):
        x[c] = (b[c] - sum(a[c][k] * x[k] for k in range(c + 1, d))) / a[c][c]
    diff = [Fraction(float(y[i])) - Fraction(float(mean[i])) for i in range(d)]
    quad = sum(diff[i] * x[i] for i in range(d))
    log_det = math.log(det.numerator) - math.log(det.denominator)
    return -0.5 * (d * LOG_2PI + log_det + float(quad))


def _ill_conditioned(rng, d, cond):
    q, _ = np.linalg.qr(rng.normal(size=(d, d)))
    eig = np.geomspace(1.0, 1.0 / cond, d) * rng.uniform(0.5, 2.0)
    cov = (q * eig) @ q.T
    return 0.5 * (cov + cov.T)


@pytest.mark.parametrize("d", [2, 3, 4])
def test_gaussian_logpdf_at_condition_1e11_matches_rational_arithmetic(d):
    rng = np.random.default_rng(11 + d)
    worst = 0.0
    for _ in range(30):
        cov = _ill_conditioned(rng, d, 1e11)
        mean = rng.normal(0, 1, d)
        y = mean + rng.normal(0, 1, (3, d)) * np.sqrt(np.diag(cov))
        got = nb.Gaussians(mean[None], cov[None]).logpdf(y)[0]
        for l in range(3):
            want = _exact_logpdf(y[l], mean, cov)
            worst = max(worst, abs(got[l] - want) / max(1.0, abs(want)))
    assert worst <= 1e-12  # float64 factorisation: ~1e-5


def test_nll_with_ill_conditioned_covariances_matches_rational_arithmetic():
    rng = np.random.default_rng(3)
    for _ in range(20):
        cov = _ill_conditioned(rng, 2, 1e11)
        mean = rng.normal(0, 1, 2)
        y = mean + rng.normal(0, 1, 2) * np.sqrt(np.diag(cov))
        res = nb.nll(nb.MultiBernoulli.gaussian([1.0], [mean], [cov]), [y])
        want = -_exact_logpdf(y, mean, cov)
        assert abs(res.value - want) <= 1e-12 * max(1.0, abs(want))


# --- fuzz over the classes above --------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    st.integers(0, 2**32 - 1),
    st.sampled_from([1e-300, 1e-150, 1.0, 1e150, 1e300]),
    st.sampled_from([0.0, 1e-20, 1e20, 1e130, 1e300]),
    st.sampled_from([1e-300, 1.0, 1e300, 1e308]),
    st.integers(1, 50),
)
def test_fuzz_extreme_magnitudes_give_no_nan_no_error_and_ordered_bounds(seed, cov_scale, offset, rate, q):
    rng = np.random.default_rng(seed)
    f = random_pmbm(rng, 2, "PMBM")
    hyps = [
        nb.MultiBernoulli(mb.r, nb.Gaussians(mb.means + offset, np.tile(I2 * cov_scale, (len(mb), 1, 1))))
        for mb in f.hypotheses
    ]
    ppp = nb.PPP.gaussian([rate, rate], [[0, 0], [offset, 0]], [I2, I2 * cov_scale])
    g = nb.PMBM(ppp, hyps, f.weights)
    y = rng.normal(0, 1, (int(rng.integers(0, 4)), 2)) + rng.choice([0.0, offset])
    for res in [nb.nll(g, y, q=q), *nb.nll_many(g, y, [1, q]), nb.nll(g, y, q=q, budget="global")]:
        terms = res.terms()
        assert not math.isnan(res.value) and not any(math.isnan(t) for t in terms.values())
        assert res.lower <= res.value == res.upper
        if math.isfinite(res.value):
            assert sum(terms.values()) == pytest.approx(res.value, rel=1e-9, abs=1e-9)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from([1e3, 1e8, 1e11]))
def test_fuzz_ill_conditioned_pmbm_agrees_with_brute_force(seed, cond):
    rng = np.random.default_rng(seed)
    f = random_pmbm(rng, 2, "PMBM")
    hyps = []
    for mb in f.hypotheses:
        covs = (
            np.stack([_ill_conditioned(rng, 2, cond) for _ in range(len(mb))])
            if len(mb)
            else np.empty((0, 2, 2))
        )
        hyps.append(nb.MultiBernoulli(mb.r, nb.Gaussians(mb.means, covs)))
    g = nb.PMBM(f.ppp, hyps, f.weights)
    y = rng.normal(0, 1, (int(rng.integers(0, 4)), 2))
    ref, _ = pmbm_log_likelihood(g, y)
    res = nb.nll(g, y, q=1000)
    if ref == -math.inf:
        assert res.value == math.inf
    else:
        assert res.value == pytest.approx(-ref, rel=1e-7, abs=1e-7)
