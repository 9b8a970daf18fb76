"""The proper scores checked by Monte Carlo (seconds): the intensity score proper with its expected
gap the embedding distance, the energy score telling apart densities of one intensity, the energy
standard error calibrated, and the intensity score's closed forms in 2-D against sampled integrals.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import integrate, stats
from support.proper_cases import ALTERNATIVES, Z_MIN, _paired_z, _true_pmb, gl_nodes

import nllbench as nb
from nllbench.measures import proper


def _poisson_twin(P):
    """The PPP with the same intensity as the PMB ``P`` (its Bernoullis made Poisson components)."""
    mb = P.hypotheses[0]
    return nb.PPP.gaussian(mb.r, mb.densities.means, mb.densities.covs) + P.ppp


def test_energy_score_tells_apart_densities_with_the_same_intensity():
    # P: two sure objects (and a faint PPP); Q: the PPP with P's intensity. The intensity
    # score cannot tell them apart (proper, not strictly); the energy score can.
    P = _true_pmb(r=(1.0, 1.0), ppp_weight=0.1)
    Q = _poisson_twin(P)
    y0 = [[0.0, 0.0]]
    assert nb.intensity_score(P, y0, 1.0).value == pytest.approx(
        nb.intensity_score(Q, y0, 1.0).value, rel=1e-14
    )
    truths = nb.sample(P, 200, seed=103).as_list()
    rng = np.random.default_rng(9)
    kw = {"kernel_cov": 1.0, "n_samples": 60}
    diffs = [
        nb.energy_score(Q, y, seed=rng, **kw).value - nb.energy_score(P, y, seed=rng, **kw).value
        for y in truths
    ]
    assert _paired_z(diffs) > Z_MIN


def test_intensity_score_is_proper_and_its_expected_gap_is_the_embedding_distance():
    # E[IS(Q, Y) - IS(P, Y)] = ||m_Q - m_P||^2 exactly; Monte Carlo must agree and be > 0
    P = _true_pmb()
    truths = nb.sample(P, 400, seed=101).as_list()
    own = np.array([nb.intensity_score(P, y, 1.0).value for y in truths])
    mP = nb.intensity_score(P, np.empty((0, 2)), 1.0).intensity_norm2
    for name, Q in ALTERNATIVES.items():
        if name == "wrong cardinality":
            continue  # its intensity differs too; covered below by one with the same intensity
        alt = np.array([nb.intensity_score(Q, y, 1.0).value for y in truths])
        diffs = alt - own
        assert _paired_z(diffs) > Z_MIN, name
        gap = _embedding_gap(P, Q)
        assert gap > 0 and mP > 0
        assert abs(diffs.mean() - gap) < 4 * diffs.std(ddof=1) / math.sqrt(diffs.size), name


def _embedding_gap(P, Q):
    """||m_Q - m_P||^2 from the closed form, through the PMBM with both intensities (weights -1 for P)."""
    q = nb.intensity_score(Q, np.empty((0, 2)), 1.0).intensity_norm2
    p = nb.intensity_score(P, np.empty((0, 2)), 1.0).intensity_norm2
    # <m_P, m_Q> from the mixture of both: ||m_P + m_Q||^2 = p + q + 2 <m_P, m_Q>
    both = _merged_pmb(P, Q)
    pq = (nb.intensity_score(both, np.empty((0, 2)), 1.0).intensity_norm2 - p - q) / 2
    return p + q - 2 * pq


def _merged_pmb(P, Q):
    """A PPP whose intensity is the sum of the intensities of the PMBs P and Q (Gaussian parts only)."""
    parts = []
    for dens in (P, Q):
        mb = dens.hypotheses[0]
        parts.append(nb.PPP.gaussian(mb.r, mb.densities.means, mb.densities.covs))
        parts.append(dens.ppp)
    out = parts[0]
    for p in parts[1:]:
        out = out + p
    return out


def test_energy_standard_error_is_calibrated():
    # The jackknife SE against the spread of independent estimates: 300
    # replications of N = 40 from a PMB; the ratio's own sampling error is ~5%.
    pmb = nb.PMB(
        nb.PPP.gaussian([0.5], [[2.0, 0.0]], [4.0 * np.eye(2)]),
        nb.MultiBernoulli.gaussian([0.9, 0.5], [[0.0, 0.0], [1.5, 1.0]], np.tile(np.eye(2), (2, 1, 1))),
    )
    rng = np.random.default_rng(3)
    res = [nb.energy_score(pmb, [[0.2, 0.0], [1.0, 1.0]], 1.0, n_samples=40, seed=rng) for _ in range(300)]
    vals = np.array([r.value for r in res])
    se = np.array([r.standard_error for r in res])
    ratio = math.sqrt(np.mean(se**2)) / vals.std(ddof=1)
    assert 0.85 < ratio < 1.25, ratio


def _check_norm_by_monte_carlo(density, R, closed, n=6000):
    """||m_P||^2 = E sum_{x in X, x' in X'} k(x, x') for independent X, X' ~ PPP(intensity); |z| < 4."""
    a, b = nb.sample(density, n, seed=31), nb.sample(density, n, seed=32)
    u, w = proper.whiten(a.points, R), proper.whiten(b.points, R)
    from nllbench.measures._set_kernel import cross_sums

    owner_b = np.repeat(np.arange(n), b.counts)
    vals = np.zeros(n)
    for i in range(n):
        wi = w[owner_b == i]
        if wi.shape[0] and a.counts[i]:
            vals[i] = cross_sums(u[a.offsets[i] : a.offsets[i + 1]], np.array([0, a.counts[i]]), wi)[0]
    z = (vals.mean() - closed) / (vals.std(ddof=1) / math.sqrt(n))
    assert abs(z) < 4, z


def test_intensity_score_matches_monte_carlo_in_2d_with_a_correlated_kernel():
    R = np.array([[1.5, 0.4], [0.4, 0.8]])
    P = _true_pmb()
    y = np.array([[0.0, 0.5], [2.0, 2.0]])
    r = nb.intensity_score(P, y, R)
    s = nb.sample(P, 20000, seed=41)
    from nllbench.measures._set_kernel import cross_sums

    per_set = cross_sums(proper.whiten(s.points, R), s.offsets, proper.whiten(y, R))
    z = (per_set.mean() - r.cross) / (per_set.std(ddof=1) / math.sqrt(per_set.size))
    assert abs(z) < 4, z
    _check_norm_by_monte_carlo(P, R, r.intensity_norm2)


def test_intensity_score_of_a_box_next_to_a_correlated_gaussian_in_2d():
    # the box and Gaussian terms against 2-D quadrature of c_R / V * P(N(mu, P + R) in box)
    from nllbench.measures import _mean_embedding as me

    lows, highs, rates = np.array([[0.0, -1.0], [3.0, 3.0]]), np.array([[2.0, 0.5], [5.0, 4.0]]), [1.5, 0.4]
    means = np.array([[1.0, 1.0], [4.0, 2.0]])
    covs = np.array([[[0.6, 0.4], [0.4, 0.7]], [[2.0, -1.2], [-1.2, 1.0]]])
    w, s = np.array([0.8, 0.3]), np.array([np.sqrt(0.5), np.sqrt(2.0)])
    want = 0.0
    for b, i in itertools.product(range(2), range(2)):
        pdf = stats.multivariate_normal(means[i], covs[i] + np.diag(s**2)).pdf
        mass = integrate.dblquad(
            lambda y, x, pdf=pdf: pdf([x, y]), lows[b, 0], highs[b, 0], lows[b, 1], highs[b, 1], epsabs=1e-14
        )[0]
        want += rates[b] * w[i] * 2 * math.pi * s[0] * s[1] / np.prod(highs[b] - lows[b]) * mass
    got = me.box_gaussian_2d(np.array(rates), lows, highs, s, w, means, covs)
    assert got == pytest.approx(want, rel=1e-9)
    # uncorrelated: the product of one-dimensional integrals, to rounding
    diag = np.array([np.diag(np.diag(c)) for c in covs])
    var = np.diagonal(diag, axis1=1, axis2=2)
    assert me.box_gaussian_2d(np.array(rates), lows, highs, s, w, means, diag) == pytest.approx(
        me.box_gaussian(np.array(rates), lows, highs, s, w, means, var), rel=1e-13
    )
    # the whole score: a tracker's fill-in box next to a correlated track, by Monte Carlo
    box = nb.PPP.uniform(1.5, [0.0, -1.0], [2.0, 0.5])
    track = nb.MultiBernoulli.gaussian([0.8], [[1.0, 1.0]], [covs[0]])
    pmb = nb.PMB(box, track)
    R = np.diag(s**2)
    r = nb.intensity_score(pmb, [[1.0, 0.0]], R)
    assert math.isfinite(r.value)
    _check_norm_by_monte_carlo(pmb, R, r.intensity_norm2)


def test_intensity_score_of_boxes_in_2d_is_the_product_of_1d_integrals():
    # a diagonal kernel: the 2-D box terms against 2-D Gauss-Legendre quadrature
    ppp = nb.PPP.uniform(1.5, [0.0, -1.0], [2.0, 0.5]) + nb.PPP.gaussian(
        [0.8], [[1.0, 1.0]], [np.diag([0.3, 0.7])]
    )
    R = np.diag([0.5, 2.0])
    y = np.array([[0.5, 0.0]])
    xs, ws = gl_nodes([-6.0, 0.0, 2.0, 8.0], piece=0.5, order=12)
    ys, wys = gl_nodes([-8.0, -1.0, 0.5, 10.0], piece=0.5, order=12)
    X, Yg = np.meshgrid(xs, ys, indexing="ij")
    W = np.outer(ws, wys)
    pts = np.column_stack([X.ravel(), Yg.ravel()])
    lam = np.exp(ppp.log_intensity(pts)) * W.ravel()
    cross = lam @ np.exp(-0.5 * (((pts - y[0]) ** 2) / np.diag(R)).sum(axis=1))
    r = nb.intensity_score(ppp, y, R)
    assert r.cross == pytest.approx(cross, rel=1e-7)
    # the norm by Monte Carlo of the same expression (the 4-D quadrature is too big)
    _check_norm_by_monte_carlo(ppp, R, r.intensity_norm2)
