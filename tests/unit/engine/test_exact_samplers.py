"""The exact samplers (nb.sample) against the densities' known moments.

Every check is a fixed-seed Monte Carlo test: the statistic is compared with
its exact value at a stated significance (|z| < 4, or a chi-square p-value
above 1e-4), so a wrong sampler fails while a correct one passes at every
seed with probability above 0.999.
"""

from __future__ import annotations

import doctest
import itertools
import math

import numpy as np
import pytest
from scipy import stats

import nllbench as nb
from nllbench.engine import sampling
from nllbench.engine.sampling import SetSamples


def _z(sample_mean, exact_mean, exact_var, n):
    return (sample_mean - exact_mean) / math.sqrt(exact_var / n)


def _chi2_p(counts, probs):
    """Chi-square p-value of observed ``counts`` against ``probs`` (cells of tiny mass pooled)."""
    probs = np.asarray(probs, dtype=float)
    n = counts.sum()
    keep = probs * n >= 5
    obs = np.append(counts[keep], counts[~keep].sum())
    exp = np.append(probs[keep], probs[~keep].sum()) * n
    if exp[-1] == 0:
        obs, exp = obs[:-1], exp[:-1]
    return stats.chisquare(obs, exp).pvalue


def test_doctests():
    assert doctest.testmod(sampling).failed == 0


def test_ppp_cardinality_is_poisson_and_points_follow_the_intensity_1d():
    # lambda(x) = 2 N(x; -3, 0.5^2) + 1.5 N(x; 2, 1) + 1.0 / 4 on [0, 4]
    ppp = nb.PPP.gaussian([2.0, 1.5], [[-3.0], [2.0]], [[[0.25]], [[1.0]]]) + nb.PPP.uniform(1.0, 0.0, 4.0)
    n = 20000
    s = nb.sample(ppp, n, seed=7)
    counts = s.counts
    assert abs(_z(counts.mean(), 4.5, 4.5, n)) < 4
    assert _chi2_p(np.bincount(counts, minlength=40)[:40], stats.poisson.pmf(np.arange(40), 4.5)) > 1e-4
    # expected number of points per bin = integral of lambda over the bin
    edges = np.linspace(-6.0, 6.0, 25)
    hist = np.histogram(s.points[:, 0], bins=edges)[0]
    cdf = lambda x: (  # noqa: E731
        2.0 * stats.norm.cdf(x, -3.0, 0.5) + 1.5 * stats.norm.cdf(x, 2.0, 1.0) + 0.25 * np.clip(x, 0.0, 4.0)
    )
    expected = np.diff(cdf(edges)) * n
    z = (hist - expected) / np.sqrt(expected)  # Poisson counts per bin
    assert np.max(np.abs(z)) < 4.5  # 24 bins: the max of 24 |N(0,1)| exceeds 4.5 with prob 1.6e-4


def test_ppp_points_in_a_box_are_uniform_and_inside():
    ppp = nb.PPP.uniform(3.0, [0.0, -1.0], [2.0, 5.0])
    s = nb.sample(ppp, 5000, seed=3)
    p = s.points
    assert np.all((p >= [0.0, -1.0]) & (p <= [2.0, 5.0]))
    for t, (lo, hi) in enumerate([(0.0, 2.0), (-1.0, 5.0)]):
        assert abs(_z(p[:, t].mean(), (lo + hi) / 2, (hi - lo) ** 2 / 12, p.shape[0])) < 4


def test_ppp_box_as_wide_as_the_float_range_gives_finite_points():
    huge = np.finfo(float).max
    s = nb.sample(nb.PPP.uniform(2.0, [-huge], [huge]), 100, seed=0)
    assert np.all(np.isfinite(s.points)) and s.points.shape[0] > 0


def test_ppp_gaussian_points_have_the_mixture_mean_and_covariance_2d():
    P = np.array([[2.0, 0.6], [0.6, 1.0]])
    ppp = nb.PPP.gaussian([3.0], [[1.0, -2.0]], [P])
    p = nb.sample(ppp, 4000, seed=11).points
    T = p.shape[0]
    mean, cov = p.mean(axis=0), np.cov(p.T)
    for t in range(2):
        assert abs(_z(mean[t], [1.0, -2.0][t], P[t, t], T)) < 4
    # sample variances: var of s^2 is 2 sigma^4 / T for a Gaussian
    for t in range(2):
        assert abs((cov[t, t] - P[t, t]) / math.sqrt(2 * P[t, t] ** 2 / T)) < 4
    rho = cov[0, 1] / math.sqrt(cov[0, 0] * cov[1, 1])
    assert abs(rho - 0.6 / math.sqrt(2.0)) < 4 * (1 - 0.3**2) / math.sqrt(T)


def test_zero_intensity_ppp_gives_empty_sets():
    s = nb.sample(nb.PPP.empty(3), 5, seed=0)
    assert len(s) == 5 and s.points.shape == (0, 3) and np.all(s.counts == 0)


def test_iid_cluster_cardinality_follows_its_pmf_and_points_its_spatial_density():
    card = [0.1, 0.0, 0.5, 0.4]
    c = nb.IIDCluster(card, [0.25, 0.75], [[0.0], [10.0]], [[[1.0]], [[4.0]]])
    n = 10000
    s = nb.sample(c, n, seed=5)
    assert _chi2_p(np.bincount(s.counts, minlength=4), card) > 1e-4
    assert np.all(s.counts != 1)  # probability 0
    far = s.points[:, 0] > 5.0  # component 2 (component 1 crosses 5 with probability 3e-7)
    T = s.points.shape[0]
    assert abs(_z(far.mean(), 0.75, 0.75 * 0.25, T)) < 4
    assert abs(_z(s.points[far, 0].mean(), 10.0, 4.0, int(far.sum()))) < 4.2  # truncation at 5 ~ 2.5 sd


def _poisson_binomial_by_enumeration(r):
    out = np.zeros(len(r) + 1)
    for e in itertools.product([0, 1], repeat=len(r)):
        out[sum(e)] += math.prod(ri if ei else 1 - ri for ri, ei in zip(r, e, strict=True))
    return out


def test_mb_existence_is_independent_bernoulli_with_exact_corners():
    r = [1.0, 0.0, 0.3, 0.8]
    means = [[0.0], [100.0], [200.0], [300.0]]  # far apart: each point names its Bernoulli
    mb = nb.MultiBernoulli.gaussian(r, means, [[[1.0]]] * 4)
    n = 20000
    s = nb.sample(mb, n, seed=2)
    assert _chi2_p(np.bincount(s.counts, minlength=5), _poisson_binomial_by_enumeration(r)) > 1e-4
    which = np.rint(s.points[:, 0] / 100.0).astype(int)
    present = np.zeros((n, 4), dtype=bool)
    owner = np.repeat(np.arange(n), s.counts)
    present[owner, which] = True
    assert present[:, 0].all() and not present[:, 1].any()  # r = 1 always, r = 0 never
    for k in (2, 3):
        assert abs(_z(present[:, k].mean(), r[k], r[k] * (1 - r[k]), n)) < 4
    # independence of Bernoullis 2 and 3
    both = (present[:, 2] & present[:, 3]).mean()
    assert abs(_z(both, 0.24, 0.24 * 0.76, n)) < 4


@pytest.mark.parametrize("d", [1, 2, 3])
def test_laplace_bernoulli_radius_is_gamma_and_direction_isotropic(d):
    center, scale = np.arange(d, dtype=float), 1.5
    mb = nb.MultiBernoulli.laplace([1.0], [center], scale)
    p = nb.sample(mb, 20000, seed=d).points
    rho = np.linalg.norm(p - center, axis=1)
    # radial density proportional to rho^(d-1) exp(-rho / scale): Gamma(d, scale)
    assert stats.kstest(rho, stats.gamma(d, scale=scale).cdf).pvalue > 1e-4
    for t in range(d):  # the mean is the centre; each coordinate has variance E[rho^2] / d
        var = (d + 1) * scale**2  # E[rho^2] = d (d + 1) scale^2
        assert abs(_z(p[:, t].mean(), center[t], var, p.shape[0])) < 4


def test_pmbm_cardinality_is_the_hypothesis_mixture_of_poisson_plus_poisson_binomial():
    g = lambda m: np.tile(np.eye(2), (m, 1, 1))  # noqa: E731
    hyp0 = nb.MultiBernoulli.gaussian([0.9, 0.4], [[0.0, 0.0], [5.0, 5.0]], g(2))
    hyp1 = nb.MultiBernoulli.gaussian([1.0, 1.0, 0.5], [[0.0, 0.0], [5.0, 5.0], [9.0, 0.0]], g(3))
    ppp = nb.PPP.gaussian([0.7], [[-20.0, 0.0]], g(1))
    pmbm = nb.PMBM(ppp, (hyp0, hyp1), [0.3, 0.7])
    n = 20000
    s = nb.sample(pmbm, n, seed=9)
    K = 15
    pois = stats.poisson.pmf(np.arange(K), 0.7)
    exact = 0.3 * np.convolve(_poisson_binomial_by_enumeration([0.9, 0.4]), pois)[:K]
    exact += 0.7 * np.convolve(_poisson_binomial_by_enumeration([1.0, 1.0, 0.5]), pois)[:K]
    assert _chi2_p(np.bincount(s.counts, minlength=K)[:K], exact) > 1e-4
    # the PPP's points (near x = -20) are Poisson(0.7) per set, whatever the hypothesis
    owner = np.repeat(np.arange(n), s.counts)
    ppp_count = np.bincount(owner[s.points[:, 0] < -10.0], minlength=n)
    assert abs(_z(ppp_count.mean(), 0.7, 0.7, n)) < 4
    # the point near (9, 0) exists only in hypothesis 1, with probability 0.5: 0.35 overall
    far = np.bincount(owner[s.points[:, 0] > 7.0], minlength=n) > 0
    assert abs(_z(far.mean(), 0.35, 0.35 * 0.65, n)) < 4


def _two_hypotheses():
    g = lambda m: np.tile(np.eye(2), (m, 1, 1))  # noqa: E731
    hyp0 = nb.MultiBernoulli.gaussian([0.9, 0.4], [[0.0, 0.0], [5.0, 5.0]], g(2))
    hyp1 = nb.MultiBernoulli.gaussian([0.9, 1.0, 0.5], [[0.0, 0.0], [5.0, 5.0], [9.0, 0.0]], g(3))
    return hyp0, hyp1, nb.PPP.gaussian([0.7], [[-20.0, 0.0]], g(1))


def test_a_pooled_pmbm_gives_the_samples_of_its_unpooled_twin_bit_for_bit():
    hyp0, hyp1, ppp = _two_hypotheses()
    plain = nb.PMBM(ppp, (hyp0, hyp1), [0.3, 0.7])
    # the pool holds each distinct Bernoulli once: (0, 0) with r = 0.9 is shared by both hypotheses
    pool = nb.MultiBernoulli.gaussian(
        [0.9, 0.4, 1.0, 0.5], [[0.0, 0.0], [5.0, 5.0], [5.0, 5.0], [9.0, 0.0]], np.tile(np.eye(2), (4, 1, 1))
    )
    pooled = nb.PMBM.pooled(ppp, pool, [np.array([0, 1]), np.array([0, 2, 3])], [0.3, 0.7])
    assert pooled.is_pooled and not plain.is_pooled
    a, b = nb.sample(plain, 500, seed=3), nb.sample(pooled, 500, seed=3)
    assert np.array_equal(a.offsets, b.offsets) and np.array_equal(a.points, b.points)


def test_one_hypothesis_draws_the_multi_bernoulli_stream_number_for_number():
    hyp0, _, ppp = _two_hypotheses()
    got = nb.sample(nb.PMB(ppp, hyp0), 300, seed=8)
    rng = np.random.default_rng(8)
    mb = sampling._sample_mb(hyp0, 300, rng)
    want = sampling._unite(
        [(np.arange(300), mb), (np.arange(300), sampling._sample_ppp(ppp, 300, rng))], 300, 2
    )
    assert np.array_equal(got.offsets, want.offsets) and np.array_equal(got.points, want.points)


def test_one_hypothesis_pooled_or_not_draws_the_pooled_stream_number_for_number():
    # the pooled draw restated: one uniform per (set, member) in set order, then the Gaussians' normals
    _, hyp1, ppp = _two_hypotheses()
    pool = nb.MultiBernoulli.gaussian(
        [0.9, 0.4, 1.0, 0.5], [[0.0, 0.0], [5.0, 5.0], [5.0, 5.0], [9.0, 0.0]], np.tile(np.eye(2), (4, 1, 1))
    )
    members = np.array([2, 0, 3])
    n = 200
    rng = np.random.default_rng(8)
    member = np.tile(members, n)
    exists = rng.random(member.shape[0]) < pool.r[member]
    comp = member[exists]
    counts = np.bincount(np.repeat(np.arange(n), 3)[exists], minlength=n)
    z = rng.standard_normal((comp.shape[0], 2))
    g = pool.densities
    points = g.means[comp] + np.einsum("tij,tj->ti", g._chol[comp], z)
    mb = sampling.SetSamples(np.concatenate([[0], np.cumsum(counts)]), points)
    want = sampling._unite([(np.arange(n), mb), (np.arange(n), sampling._sample_ppp(ppp, n, rng))], n, 2)
    for density in (nb.PMBM.pooled(ppp, pool, [members], [1.0]), nb.PMB(ppp, pool.subset(members))):
        got = nb.sample(density, n, seed=8)
        assert np.array_equal(got.offsets, want.offsets) and np.array_equal(got.points, want.points)
    empty = nb.sample(nb.PMB(None, pool.subset(np.array([], dtype=int))), 5, seed=1)
    assert empty.points.shape == (0, 2) and np.array_equal(empty.offsets, np.zeros(6))


def test_hypotheses_of_different_single_object_families_are_sampled_one_by_one():
    gauss = nb.MultiBernoulli.gaussian([1.0], [[0.0, 0.0]], np.eye(2)[None])
    lap = nb.MultiBernoulli.laplace([1.0, 1.0], [[50.0, 0.0], [60.0, 0.0]], 1.0)
    s = nb.sample(nb.MBM([gauss, lap], [0.25, 0.75]), 8000, seed=2)
    assert set(np.unique(s.counts)) == {1, 2}
    assert abs(_z((s.counts == 2).mean(), 0.75, 0.75 * 0.25, 8000)) < 4
    assert np.all(np.abs(s.points[s.points[:, 0] < 25.0]) < 10.0)  # the Gaussian's, near the origin


def test_sampling_is_reproducible_from_the_seed_and_a_generator_is_advanced():
    mb = nb.MultiBernoulli.gaussian([0.5, 0.5], [[0.0], [1.0]], [[[1.0]], [[1.0]]])
    a, b = nb.sample(mb, 50, seed=4), nb.sample(mb, 50, seed=4)
    assert np.array_equal(a.offsets, b.offsets) and np.array_equal(a.points, b.points)
    gen = np.random.default_rng(4)
    c, d = nb.sample(mb, 50, seed=gen), nb.sample(mb, 50, seed=gen)
    assert np.array_equal(c.points, a.points) and not np.array_equal(d.points, c.points)


def test_mbm01_sets_are_the_hypotheses_exactly():
    hyp0 = nb.MultiBernoulli.gaussian([1.0, 0.0], [[0.0], [50.0]], [[[1.0]], [[1.0]]])
    hyp1 = nb.MultiBernoulli.gaussian([1.0, 1.0], [[0.0], [50.0]], [[[1.0]], [[1.0]]])
    s = nb.sample(nb.MBM([hyp0, hyp1], [0.25, 0.75]), 8000, seed=1)
    assert set(np.unique(s.counts)) == {1, 2}
    assert abs(_z((s.counts == 2).mean(), 0.75, 0.75 * 0.25, 8000)) < 4


def test_set_samples_from_sets_and_its_errors():
    s = SetSamples.from_sets([np.zeros((2, 3)), [], np.ones((1, 3)), np.empty((0, 3))])
    assert list(s.counts) == [2, 0, 1, 0] and s.dim == 3 and s[2].shape == (1, 3) and s[-1].shape == (0, 3)
    assert len(s.as_list()) == 4
    with pytest.raises(ValueError, match=r"samples\[1\]: expected shape \(k, 3\)"):
        SetSamples.from_sets([np.zeros((2, 3)), np.zeros((2, 2))])
    with pytest.raises(ValueError, match=r"samples\[0\]: expected finite values"):
        SetSamples.from_sets([[[np.nan, 0.0]]])
    with pytest.raises(ValueError, match="every set is empty"):
        SetSamples.from_sets([[], []])
    with pytest.raises(ValueError, match="offsets: expected non-decreasing"):
        SetSamples(np.array([0, 2, 1, 3]), np.zeros((3, 2)))
    with pytest.raises(IndexError):
        s[4]


def test_sample_rejects_bad_arguments():
    mb = nb.MultiBernoulli.gaussian([0.5], [[0.0]], [[[1.0]]])
    with pytest.raises(ValueError, match="n: expected a non-negative integer"):
        nb.sample(mb, -1)
    with pytest.raises(TypeError, match="seed: expected a numpy.random.Generator"):
        nb.sample(mb, 3, seed="x")
    with pytest.raises(TypeError, match="density: expected PPP"):
        nb.sample(np.zeros(3), 3)
    with pytest.raises(ValueError, match="points in expectation"):
        nb.sample(nb.PPP.uniform(1e9, 0.0, 1.0), 10)
    assert len(nb.sample(mb, 0)) == 0
