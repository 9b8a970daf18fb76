"""The proper scores: energy score, intensity score and cardinality RPS.

* Correctness by independent routes: the energy estimator against a
  brute-force evaluation of its formula (plain loops over the kernel
  definition with the un-whitened R), its expectation against quadrature;
  the intensity score against Gauss-Legendre quadrature and against Monte
  Carlo of the same expression; the RPS against E|N - n| - E|N - N'| / 2
  from the pmf by enumeration.
* Propriety by Monte Carlo: for a true density P and alternatives Q, with
  Y_t ~ P (t = 1..T, seeded) and paired differences
  Delta_t = S(Q, Y_t) - S(P, Y_t), the mean of Delta is positive with
  z = mean / (sd / sqrt(T)) > 3 (one-sided p < 0.0014 for each alternative).
* Edge cases: empty truth, empty samples, r = 0 and 1, N = 1 refused, the
  MBM01 example where the NLL is infinite and the scores are finite.
"""

from __future__ import annotations

import doctest
import itertools
import math

import numpy as np
import pytest
from scipy import integrate, stats
from support.proper_cases import (
    ALTERNATIVES,
    Z_MIN,
    _exact_single_gaussian_es,
    _paired_z,
    _true_pmb,
    gl_nodes,
)

import nllbench as nb
from nllbench.measures import proper
from nllbench.measures.proper import cardinality_cdf_sf


def test_doctests():
    assert doctest.testmod(proper).failed == 0


# ---------------------------------------------------------------------------
# energy score: the estimator
# ---------------------------------------------------------------------------


def _k(x, y, R_inv):
    diff = np.asarray(x) - np.asarray(y)
    return math.exp(-0.5 * diff @ R_inv @ diff)


def _embedding_distance(X, Y, R_inv):
    """||Phi(X) - Phi(Y)|| from the kernel definition, by plain loops."""
    xx = sum(_k(a, b, R_inv) for a in X for b in X)
    yy = sum(_k(a, b, R_inv) for a in Y for b in Y)
    xy = sum(_k(a, b, R_inv) for a in X for b in Y)
    return math.sqrt(max(xx + yy - 2 * xy, 0.0))


def _energy_brute_force(sets, Y, R):
    R_inv = np.linalg.inv(R)
    N = len(sets)
    first = sum(_embedding_distance(X, Y, R_inv) for X in sets) / N
    pairs = sum(_embedding_distance(sets[i], sets[j], R_inv) for i in range(N) for j in range(N) if i != j)
    return first - pairs / (2 * N * (N - 1))


def _sets(rng, N, d, spread, max_k=4):
    return [rng.normal(0.0, spread, (int(rng.integers(0, max_k + 1)), d)) for _ in range(N)]


@pytest.mark.parametrize("spread", [0.5, 30.0])
def test_energy_estimator_matches_brute_force(spread):
    # spread 30: most pairs beyond the cut-off, the cell grid prunes; 0.5: one cell
    rng = np.random.default_rng(1)
    R = np.array([[2.0, 0.7, 0.0], [0.7, 1.0, 0.2], [0.0, 0.2, 0.5]])
    sets = _sets(rng, 12, 3, spread)
    Y = rng.normal(0.0, spread, (3, 3))
    ref = _energy_brute_force(sets, Y, R)
    exact = nb.energy_score(sets, Y, R, kernel_tol=0.0)
    assert exact.value == pytest.approx(ref, abs=1e-12) and exact.truncation_bound == 0.0
    default = nb.energy_score(sets, Y, R)
    assert abs(default.value - ref) <= default.truncation_bound + 1e-12
    assert default.truncation_bound < 1e-12
    assert exact.value == pytest.approx(exact.to_truth - exact.spread / 2, abs=1e-14)


def test_cell_grid_visits_every_pair_within_the_cut_off():
    # points on a wide lattice and in clumps: the grid's sums equal the dense ones (every pair visited)
    from nllbench.measures._set_kernel import block_gram

    rng = np.random.default_rng(4)
    clumps = rng.uniform(-40, 40, (30, 4))
    u = clumps[rng.integers(0, 30, 1500)] + rng.normal(0, 3.0, (1500, 4))
    offsets = np.concatenate([[0], np.sort(rng.choice(np.arange(1, 1500), 49, replace=False)), [1500]])
    for cut2 in (73.7, 1492.0):
        grid = block_gram(u, offsets, cut2)
        dense = block_gram(u, offsets, cut2, grid=False)
        np.testing.assert_allclose(grid, dense, rtol=1e-13, atol=1e-12)
    d2 = sum((u[:, None, t] - u[None, :, t]) ** 2 for t in range(4))
    K = np.where(d2 <= 73.7, np.exp(-0.5 * d2), 0.0)
    ref = np.add.reduceat(np.add.reduceat(K, offsets[:-1], axis=0), offsets[:-1], axis=1)
    np.testing.assert_allclose(block_gram(u, offsets, 73.7), ref, rtol=1e-12, atol=1e-12)


def test_energy_score_of_a_density_is_that_of_its_samples():
    mb = nb.MultiBernoulli.gaussian([0.8, 0.3], [[0.0, 0.0], [3.0, 0.0]], np.tile(np.eye(2), (2, 1, 1)))
    s = nb.sample(mb, 60, seed=5)
    a = nb.energy_score(mb, [[0.0, 0.1]], 2.0, n_samples=60, seed=5)
    b = nb.energy_score(s.as_list(), [[0.0, 0.1]], 2.0 * np.eye(2))
    c = nb.energy_score(s, [[0.0, 0.1]], 2.0)
    assert a == b == c


@pytest.mark.slow
def test_energy_value_agrees_with_quadrature_within_its_standard_error():
    mb = nb.MultiBernoulli.gaussian([1.0], [[0.3]], [[[2.0]]])
    exact = _exact_single_gaussian_es(0.3, math.sqrt(2.0), -1.0, 0.7)
    r = nb.energy_score(mb, [[-1.0]], 0.49, n_samples=4000, seed=1)
    assert abs(r.value - exact) < 4 * r.standard_error


def test_energy_edge_cases_empty_truth_and_empty_samples():
    R = np.eye(2)
    # every sample empty: Phi(X) = 0, the score is ||Phi(Y)|| and its SE 0
    y = np.array([[0.0, 0.0], [100.0, 0.0]])
    empty = nb.MultiBernoulli.gaussian([0.0], [[0.0, 0.0]], [np.eye(2)])
    r = nb.energy_score(empty, y, R, n_samples=10)
    assert r.value == pytest.approx(math.sqrt(2.0), abs=1e-15) and r.standard_error == 0.0
    assert nb.energy_score(empty, np.empty((0, 2)), R, n_samples=10).value == 0.0
    assert nb.energy_score([[], []], [], R).value == 0.0
    # empty truth: the score is E||Phi(X)|| - E||Phi(X) - Phi(X')|| / 2, finite and positive here
    sure = nb.MultiBernoulli.gaussian([1.0], [[0.0, 0.0]], [np.eye(2)])
    r = nb.energy_score(sure, [], R, n_samples=50)
    assert r.to_truth == pytest.approx(1.0) and math.isfinite(r.value) and r.value > 0
    # r = 1 with a degenerate spread: all samples agree, the pair term is 0
    point = nb.energy_score([[[1.0, 1.0]]] * 5, [[1.0, 1.0]], R)
    assert point.value == 0.0 and point.spread == 0.0


@pytest.mark.parametrize(
    "density",
    [
        nb.PPP.uniform(2.0, [0.0, 0.0], [5.0, 5.0]) + nb.PPP.gaussian([1.0], [[1.0, 1.0]], [np.eye(2)]),
        nb.IIDCluster([0.2, 0.5, 0.3], [0.5, 0.5], [[0.0, 0.0], [3.0, 3.0]], np.tile(np.eye(2), (2, 1, 1))),
        nb.MultiBernoulli.laplace([0.7, 1.0], [[0.0, 0.0], [2.0, 0.0]], 0.8),
        nb.MBM(
            [
                nb.MultiBernoulli.gaussian([0.5], [[0.0, 0.0]], [np.eye(2)]),
                nb.MultiBernoulli.gaussian(
                    [1.0, 0.3], [[0.0, 0.0], [4.0, 4.0]], np.tile(np.eye(2), (2, 1, 1))
                ),
            ],
            [0.4, 0.6],
        ),
    ],
    ids=["PPP with a box", "IIDCluster", "Laplace MB", "MBM"],
)
def test_energy_score_of_every_family_is_finite_with_a_finite_error(density):
    r = nb.energy_score(density, [[0.5, 0.5], [3.0, 3.0]], 1.0, n_samples=100)
    assert math.isfinite(r.value) and 0 < r.standard_error < math.inf and r.n_samples == 100


def test_energy_score_with_huge_magnitudes_is_exact_or_refused():
    # points 1e200 apart: every cross kernel term is 0, each set's own term is its count
    sets = [np.array([[1e200, 0.0]]), np.array([[-1e200, 0.0]]), np.array([[0.0, 1e200]])]
    r = nb.energy_score(sets, [[0.0, 0.0]], 1.0)
    assert r.to_truth == pytest.approx(math.sqrt(2.0)) and r.spread == pytest.approx(math.sqrt(2.0))
    with pytest.raises(ValueError, match="kernel_cov: the points in units of the kernel"):
        nb.energy_score(sets, [[0.0, 0.0]], 1e-300)
    with pytest.raises(ValueError, match="kernel_cov: the points in units of the kernel"):
        nb.intensity_score(nb.PPP.empty(2), [[1e200, 0.0]], 1e-300)


def test_compiled_exp_is_within_an_ulp_of_libm():
    from nllbench.measures._set_kernel import _kernel_values

    s = np.concatenate([np.linspace(0.0, 1492.0, 200001), [1e-300, 1e-12, 1.0 - 1e-16, 73.68, 1491.99]])
    ut = np.sqrt(s)[None, :]  # distances from the point 0
    w = np.concatenate([[[0.0]], ut], axis=1)
    kbuf, ebuf = np.empty(s.size), np.empty(2 * s.size, dtype=np.int64)
    _kernel_values(w, 0, ut, 0, s.size, 1492.0, kbuf, ebuf)
    ref = np.exp(-0.5 * ut[0] ** 2)
    normal = ref >= np.finfo(float).tiny
    rel = np.abs(kbuf[normal] - ref[normal]) / ref[normal]
    assert rel.max() <= 2.5 * np.finfo(float).eps  # within about one ulp either side
    assert np.max(np.abs(kbuf[~normal] - ref[~normal])) <= 2 * np.finfo(float).smallest_subnormal
    _kernel_values(w, 0, ut, 0, s.size, 73.7, kbuf, ebuf)
    assert np.all(kbuf[ut[0] ** 2 > 73.7] == 0.0) and np.all(kbuf[ut[0] ** 2 <= 73.7] > 0.0)


def test_energy_needs_two_samples():
    mb = nb.MultiBernoulli.gaussian([1.0], [[0.0]], [[[1.0]]])
    with pytest.raises(ValueError, match="two independent draws"):
        nb.energy_score([[[0.0]]], [[0.0]], 1.0)
    with pytest.raises(ValueError, match=r"n_samples: expected an integer in \[2, 10000\]"):
        nb.energy_score(mb, [[0.0]], 1.0, n_samples=1)
    two = nb.energy_score(mb, [[0.0]], 1.0, n_samples=2)
    assert math.isfinite(two.value) and two.standard_error == math.inf  # no jackknife with N = 2


def test_energy_and_kernel_errors_name_the_argument():
    mb = nb.MultiBernoulli.gaussian([1.0], [[0.0, 0.0]], [np.eye(2)])
    with pytest.raises(ValueError, match="kernel_cov: expected a positive finite number"):
        nb.energy_score(mb, [[0.0, 0.0]], -1.0)
    with pytest.raises(ValueError, match=r"kernel_cov: expected a positive number or a \(2, 2\) matrix"):
        nb.energy_score(mb, [[0.0, 0.0]], np.eye(3))
    with pytest.raises(ValueError, match="kernel_cov: expected positive-definite"):
        nb.energy_score(mb, [[0.0, 0.0]], np.array([[1.0, 2.0], [2.0, 1.0]]))
    with pytest.raises(ValueError, match="kernel_cov: expected symmetric"):
        nb.energy_score(mb, [[0.0, 0.0]], np.array([[1.0, 0.5], [0.0, 1.0]]))
    with pytest.raises(ValueError, match="truth: expected dimension 2"):
        nb.energy_score(mb, [[0.0]], 1.0)
    with pytest.raises(ValueError, match=r"density_or_samples\[1\]: expected shape \(k, 2\)"):
        nb.energy_score([np.zeros((1, 2)), np.zeros((1, 3))], [[0.0, 0.0]], 1.0)
    with pytest.raises(ValueError, match="n_samples: only for a density"):
        nb.energy_score([np.zeros((1, 2))] * 3, [[0.0, 0.0]], 1.0, n_samples=3)
    with pytest.raises(ValueError, match="kernel_tol: expected a number in"):
        nb.energy_score(mb, [[0.0, 0.0]], 1.0, kernel_tol=1.0)
    with pytest.raises(ValueError, match="state dimension is unknown"):
        nb.energy_score([[], []], [], 1.0)
    with pytest.raises(TypeError, match="density_or_samples: expected a density or a sequence"):
        nb.energy_score(3.0, [[0.0]], 1.0)


# ---------------------------------------------------------------------------
# MBM01: the NLL is infinite, the scores are finite and comparable
# ---------------------------------------------------------------------------


def _mbm01():
    g = np.tile(np.eye(2), (2, 1, 1))
    hyp0 = nb.MultiBernoulli.gaussian([1.0, 0.0], [[0.0, 0.0], [10.0, 0.0]], g)
    hyp1 = nb.MultiBernoulli.gaussian([1.0, 1.0], [[0.0, 0.0], [10.0, 0.0]], g)
    return nb.MBM([hyp0, hyp1], [0.4, 0.6])


def test_mbm01_scores_are_finite_where_the_nll_is_infinite():
    mbm = _mbm01()
    assert mbm.family == "MBM01"
    missed = np.array([[0.0, 0.0], [10.0, 0.0], [20.0, 0.0]])  # three objects, at most two tracks
    assert nb.nll(mbm, missed, method="exact").value == math.inf
    close = np.array([[0.0, 0.0], [10.0, 0.0]])
    es_missed = nb.energy_score(mbm, missed, 1.0, n_samples=200)
    es_close = nb.energy_score(mbm, close, 1.0, n_samples=200)
    assert math.isfinite(es_missed.value) and math.isfinite(es_missed.standard_error)
    # comparable: the truth it misses scores worse than the one it covers, by many SEs
    gap = es_missed.value - es_close.value
    assert gap > 5 * math.hypot(es_missed.standard_error, es_close.standard_error)
    assert math.isfinite(nb.intensity_score(mbm, missed, 1.0).value)
    assert nb.cardinality_rps(mbm, 3) == pytest.approx(1.0 + 0.4**2)  # F(1) = 0.4, F(2) = 1


# ---------------------------------------------------------------------------
# propriety by Monte Carlo (paired differences, z > 3)
# ---------------------------------------------------------------------------


def test_intensity_score_cannot_tell_densities_with_the_same_intensity():
    # Proper but not strictly: a Bernoulli r N(m, P) and a PPP r N(m, P) score identically
    mb = nb.MultiBernoulli.gaussian([0.7], [[1.0, 2.0]], [np.eye(2)])
    ppp = nb.PPP.gaussian([0.7], [[1.0, 2.0]], [np.eye(2)])
    for y in ([], [[1.0, 2.0]], [[0.0, 0.0], [1.0, 1.0]]):
        assert nb.intensity_score(mb, y, 0.5).value == pytest.approx(
            nb.intensity_score(ppp, y, 0.5).value, abs=1e-13
        )
    # ... while the energy score and the RPS see the cardinality
    assert nb.cardinality_rps(mb, 2) != nb.cardinality_rps(ppp, 2)


def test_cardinality_rps_is_proper_exactly_and_by_monte_carlo():
    P = _true_pmb()
    cdf_p, _ = cardinality_cdf_sf(P, 60)
    pmf_p = np.diff(np.concatenate([[0.0], cdf_p]))
    expected_own = sum(pmf_p[n] * nb.cardinality_rps(P, n) for n in range(61))
    counts = nb.sample(P, 3000, seed=102).counts
    own = np.array([nb.cardinality_rps(P, n) for n in range(counts.max() + 1)])[counts]
    for name in ("wrong existence", "wrong cardinality"):
        Q = ALTERNATIVES[name]
        expected_alt = sum(pmf_p[n] * nb.cardinality_rps(Q, n) for n in range(61))
        # E_P[RPS(Q, N)] - E_P[RPS(P, N)] = sum_k (F_Q(k) - F_P(k))^2 > 0
        cdf_q, _ = cardinality_cdf_sf(Q, 60)
        assert expected_alt - expected_own == pytest.approx(np.sum((cdf_q[:61] - cdf_p[:61]) ** 2), abs=1e-12)
        assert expected_alt > expected_own
        alt = np.array([nb.cardinality_rps(Q, n) for n in range(counts.max() + 1)])[counts]
        assert _paired_z(alt - own) > Z_MIN, name


@pytest.mark.slow
def test_energy_score_is_proper_for_small_departures():
    # harder alternatives, more truths and samples
    P = _true_pmb()
    truths = nb.sample(P, 600, seed=200).as_list()
    rng = np.random.default_rng(8)
    kw = {"kernel_cov": 1.0, "n_samples": 200}
    own = np.array([nb.energy_score(P, y, seed=rng, **kw).value for y in truths])
    for Q in (
        _true_pmb(shift=0.4),
        _true_pmb(cov_scale=2.0),
        _true_pmb(r=(0.7, 0.4)),
        _true_pmb(ppp_weight=1.0),
    ):
        alt = np.array([nb.energy_score(Q, y, seed=rng, **kw).value for y in truths])
        assert _paired_z(alt - own) > Z_MIN


# ---------------------------------------------------------------------------
# intensity score: closed form against quadrature and Monte Carlo
# ---------------------------------------------------------------------------


def test_intensity_score_matches_quadrature_1d_with_boxes():
    # lambda = 1.2 N(-1, 0.5) + 0.4 N(2.5, 2) + 2.0 on [0, 3] / 3 + 0.5 on [-4, -2] / 2, s^2 = 0.6
    ppp = (
        nb.PPP.gaussian([1.2, 0.4], [[-1.0], [2.5]], [[[0.5]], [[2.0]]])
        + nb.PPP.uniform(2.0, 0.0, 3.0)
        + nb.PPP.uniform(0.5, -4.0, -2.0)
    )
    s2 = 0.6
    y = np.array([[-1.2], [0.4], [2.9]])

    def lam(x):
        g = 1.2 * stats.norm.pdf(x, -1.0, math.sqrt(0.5)) + 0.4 * stats.norm.pdf(x, 2.5, math.sqrt(2.0))
        return g + 2.0 / 3.0 * ((x >= 0) & (x <= 3)) + 0.25 * ((x >= -4) & (x <= -2))

    x, w = gl_nodes([-14.0, -4.0, -2.0, 0.0, 3.0, 14.0])
    k = np.exp(-((x[:, None] - x[None, :]) ** 2) / (2 * s2))
    lw = lam(x) * w
    norm2 = lw @ k @ lw
    cross = sum(lw @ np.exp(-((x - yl) ** 2) / (2 * s2)) for yl in y[:, 0])
    r = nb.intensity_score(ppp, y, s2)
    assert r.intensity_norm2 == pytest.approx(norm2, rel=1e-10)
    assert r.cross == pytest.approx(cross, rel=1e-10)
    yy = sum(math.exp(-((a - b) ** 2) / (2 * s2)) for a in y[:, 0] for b in y[:, 0])
    assert r.truth_norm2 == pytest.approx(yy, rel=1e-14)
    assert r.value == pytest.approx(norm2 - 2 * cross + yy, rel=1e-9)


def test_bivariate_normal_cdf_and_rectangles_match_scipy_and_their_limits():
    from nllbench.measures._mean_embedding import _rectangle_2d, bivariate_normal_cdf

    rng = np.random.default_rng(5)
    points = [(0.0, 0.0), (0.0, 1.3), (-0.7, 0.0), (0.0, -2.0), (2.0, 0.0), *rng.normal(0, 2, (60, 2))]
    worst = 0.0
    for (h, k), rho in itertools.product(points, (-0.999, -0.6, -0.1, 0.0, 0.3, 0.8, 0.999)):
        got = float(bivariate_normal_cdf(h, k, rho, math.sqrt(1 - rho * rho)))
        cov = [[1.0, rho], [rho, 1.0]]
        want = stats.multivariate_normal.cdf([h, k], [0.0, 0.0], cov, abseps=1e-13, releps=1e-13)
        worst = max(worst, abs(got - want))
    assert worst < 1e-14
    c = math.sqrt(1 - 0.3**2)
    assert bivariate_normal_cdf(0.0, 0.0, 0.3, c) == pytest.approx(
        0.25 + math.asin(0.3) / (2 * math.pi), 1e-15
    )
    assert bivariate_normal_cdf(np.inf, 0.5, 0.3, c) == stats.norm.cdf(0.5)
    assert bivariate_normal_cdf(-0.4, np.inf, 0.3, c) == stats.norm.cdf(-0.4)
    assert bivariate_normal_cdf(-np.inf, 0.5, 0.3, c) == 0.0 == bivariate_normal_cdf(1.0, -np.inf, 0.3, c)
    # rectangles, also far in a tail (absolute accuracy), against 2-D quadrature
    for lo, hi, rho in (
        ([-0.5, -1.0], [1.0, 2.0], 0.7),
        ([8.0, 9.0], [9.0, 10.0], 0.5),
        ([-3, 1], [-1, 4], -0.9),
    ):
        pdf = stats.multivariate_normal([0.0, 0.0], [[1.0, rho], [rho, 1.0]]).pdf
        want = integrate.dblquad(lambda y, x, pdf=pdf: pdf([x, y]), lo[0], hi[0], lo[1], hi[1], epsabs=1e-30)[
            0
        ]
        got = float(_rectangle_2d(np.array(lo, float), np.array(hi, float), rho, math.sqrt(1 - rho * rho)))
        assert abs(got - want) < 1e-15 and got == pytest.approx(want, rel=1e-7)


def test_intensity_of_every_family_is_the_same_gaussian_mixture():
    g = np.tile(np.eye(2), (2, 1, 1))
    means = np.array([[0.0, 0.0], [2.0, 1.0]])
    y = [[0.5, 0.5]]
    ppp = nb.PPP.gaussian([0.6, 0.9], means, g)
    mb = nb.MultiBernoulli.gaussian([0.6, 0.9], means, g)
    iid = nb.IIDCluster([0.0, 0.5, 0.5], [0.4, 0.6], means, g)  # E[n] = 1.5: weights 0.6, 0.9
    ref = nb.intensity_score(ppp, y, 0.7).value
    for dens in (mb, iid, nb.MBM([mb, mb], [0.5, 0.5]), nb.PMB(nb.PPP.empty(2), mb)):
        assert nb.intensity_score(dens, y, 0.7).value == pytest.approx(ref, rel=1e-13)
    # a PMBM: PPP + sum_h w_h MB_h, with hypotheses that share components (merged) and r = 0 ones
    h0 = nb.MultiBernoulli.gaussian([1.0, 0.0], means, g)
    h1 = nb.MultiBernoulli.gaussian([1.0, 1.0], means, g)
    pmbm = nb.PMBM(nb.PPP.gaussian([0.3], [[5.0, 5.0]], [np.eye(2)]), (h0, h1), [0.25, 0.75])
    flat = nb.PPP.gaussian([1.0, 0.75, 0.3], np.vstack([means, [[5.0, 5.0]]]), np.tile(np.eye(2), (3, 1, 1)))
    assert nb.intensity_score(pmbm, y, 0.7).value == pytest.approx(nb.intensity_score(flat, y, 0.7).value)


def test_intensity_score_edge_cases_and_refusals():
    empty = nb.PPP.empty(2)
    r = nb.intensity_score(empty, [[0.0, 0.0], [0.0, 0.0]], 1.0)
    assert r.value == 4.0 and r.intensity_norm2 == 0.0  # ||Phi(Y)||^2 = 4 for a doubled point
    assert nb.intensity_score(empty, [], 1.0).value == 0.0
    huge = np.finfo(float).max
    wide = nb.intensity_score(nb.PPP.uniform(3.0, [-huge, -huge], [huge, huge]), [[0.0, 0.0]], 1.0)
    assert math.isfinite(wide.value) and wide.value == pytest.approx(1.0)
    lap = nb.MultiBernoulli.laplace([0.5], [[0.0, 0.0]], 1.0)
    with pytest.raises(ValueError, match="closed form for Gaussian densities only"):
        nb.intensity_score(lap, [], 1.0)
    boxed = nb.PPP.uniform(1.0, [0.0, 0.0], [1.0, 1.0])
    with pytest.raises(ValueError, match="kernel_cov: the intensity score of a PPP with uniform boxes"):
        nb.intensity_score(boxed, [], np.array([[1.0, 0.2], [0.2, 1.0]]))
    corr3 = np.array([[1.0, 0.5, 0.0], [0.5, 1.0, 0.0], [0.0, 0.0, 1.0]])
    mixed3 = nb.PPP.uniform(1.0, [0.0] * 3, [1.0] * 3) + nb.PPP.gaussian([1.0], [[0.0] * 3], [corr3])
    with pytest.raises(
        ValueError, match="in 3-D needs diagonal.*component 0 of the intensity is not diagonal"
    ):
        nb.intensity_score(mixed3, [], 1.0)
    with pytest.raises(TypeError, match="density: expected PPP"):
        nb.intensity_score([[0.0]], [], 1.0)


# ---------------------------------------------------------------------------
# cardinality RPS
# ---------------------------------------------------------------------------


def _crps_from_pmf(pmf, n):
    k = np.arange(pmf.size)
    e1 = pmf @ np.abs(k - n)
    e2 = pmf @ np.abs(k[:, None] - k[None, :]) @ pmf
    return e1 - e2 / 2


def _pb_enum(r):
    out = np.zeros(len(r) + 1)
    for e in itertools.product([0, 1], repeat=len(r)):
        out[sum(e)] += math.prod(ri if ei else 1 - ri for ri, ei in zip(r, e, strict=True))
    return out


@pytest.mark.parametrize("n", [0, 1, 2, 5, 30])
def test_rps_equals_the_crps_of_the_pmf_for_every_family(n):
    r = [0.9, 0.2, 1.0, 0.55]
    mb = nb.MultiBernoulli.gaussian(r, np.zeros((4, 1)), np.ones((4, 1, 1)))
    assert nb.cardinality_rps(mb, n) == pytest.approx(_crps_from_pmf(_pb_enum(r), n), abs=1e-13)
    pois = stats.poisson.pmf(np.arange(200), 3.7)
    ppp = nb.PPP.uniform(3.7, 0.0, 1.0)
    assert nb.cardinality_rps(ppp, n) == pytest.approx(_crps_from_pmf(pois, n), abs=1e-12)
    card = [0.2, 0.0, 0.3, 0.5]
    iid = nb.IIDCluster(card, [1.0], [[0.0]], [[[1.0]]])
    assert nb.cardinality_rps(iid, n) == pytest.approx(_crps_from_pmf(np.array(card), n), abs=1e-14)
    h0 = nb.MultiBernoulli.gaussian([0.3, 0.8], np.zeros((2, 1)), np.ones((2, 1, 1)))
    h1 = nb.MultiBernoulli.gaussian([1.0, 0.6, 0.1], np.zeros((3, 1)), np.ones((3, 1, 1)))
    pmbm = nb.PMBM(nb.PPP.uniform(1.3, 0.0, 1.0), (h0, h1), [0.35, 0.65])
    pb = np.zeros(4)
    pb[:3] += 0.35 * _pb_enum([0.3, 0.8])
    pb += 0.65 * _pb_enum([1.0, 0.6, 0.1])
    mix = np.convolve(pb, stats.poisson.pmf(np.arange(200), 1.3))[:200]
    assert nb.cardinality_rps(pmbm, n) == pytest.approx(_crps_from_pmf(mix, n), abs=1e-12)


def test_rps_corner_cases():
    zero = nb.MultiBernoulli.gaussian([0.0, 0.0], np.zeros((2, 1)), np.ones((2, 1, 1)))
    sure = nb.MultiBernoulli.gaussian([1.0, 1.0, 1.0], np.zeros((3, 1)), np.ones((3, 1, 1)))
    for n in range(6):
        assert nb.cardinality_rps(zero, n) == n  # F = 1 everywhere
        assert nb.cardinality_rps(sure, n) == abs(3 - n)
        assert nb.cardinality_rps(nb.PPP.empty(2), n) == n
    # a huge rate: the Poisson tail left out is below 1e-16; the CRPS of a Poisson has E|N - n| there
    big = nb.PPP.uniform(1e5, 0.0, 1.0)
    value = nb.cardinality_rps(big, 100000)
    assert 0 < value < 200 and math.isfinite(value)
    with pytest.raises(ValueError, match="n: expected a non-negative integer"):
        nb.cardinality_rps(zero, -1)
    with pytest.raises(ValueError, match="n: expected a non-negative integer"):
        nb.cardinality_rps(zero, 1.5)
    with pytest.raises(TypeError, match="density: expected PPP"):
        nb.cardinality_rps("x", 1)
