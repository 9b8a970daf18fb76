"""The faster routes of the intensity score, the cardinality RPS and the calibration counts give the old
routes' values bit for bit.

Each old route is kept here as it was (the NumPy Poisson-binomial recursion, the intensity's parts through
the pooled Bernoullis and ``np.unique``, the kernel constants and box-box term per call, the counts built by
replacement) and compared on random and edge densities: empty, r = 0, r = 1, mixtures of hypotheses sharing
tracks, pooled hypotheses, Gaussian-mixture Bernoullis, PPP only, i.i.d. clusters.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.special import chdtr, chdtri, gammaln, ndtr, pdtr, pdtrc

from nllbench.engine.densities import (
    PMBM,
    PPP,
    GaussianMixtures,
    Gaussians,
    IIDCluster,
    MultiBernoulli,
    as_pmbm,
)
from nllbench.engine.nll import nll
from nllbench.measures import calibration as cal
from nllbench.measures.scores import _intensity as parts
from nllbench.measures.scores import _mean_embedding as me
from nllbench.measures.scores import proper


def same_bits(a, b) -> bool:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return a.shape == b.shape and a.tobytes() == b.tobytes()


# --- old routes -------------------------------------------------------------------------------


def old_poisson_binomial(r: np.ndarray) -> np.ndarray:
    pmf = np.zeros((*r.shape[:-1], r.shape[-1] + 1))
    pmf[..., 0] = 1.0
    for k in range(r.shape[-1]):
        rk = r[..., k, None]
        pmf[..., 1 : k + 2] = pmf[..., 1 : k + 2] * (1.0 - rk) + pmf[..., : k + 1] * rk
        pmf[..., :1] *= 1.0 - rk
    return pmf


def old_cdf_sf(density, n: int):
    density = as_pmbm(density)
    if isinstance(density, IIDCluster):
        return proper.cardinality_cdf_sf(density, n)  # (this family's route did not change)
    if isinstance(density, PPP):
        q, rate = np.ones(1), density.total_rate
    else:
        rs = [density.existence(h) for h in range(density.n_hypotheses)]
        r = np.zeros((len(rs), max(x.shape[0] for x in rs)))
        for h, rh in enumerate(rs):
            r[h, : rh.shape[0]] = rh
        q = density.weights @ old_poisson_binomial(r)
        rate = 0.0 if density.ppp is None else density.ppp.total_rate
    K = max(q.shape[0] - 1 + proper._poisson_tail_index.__wrapped__(rate), n)
    k = np.arange(K + 1)
    cdf_p, sf_p = (pdtr(k, rate), pdtrc(k, rate)) if rate > 0 else (np.ones(K + 1), np.zeros(K + 1))
    cdf = np.convolve(q, cdf_p)[: K + 1]
    padded = np.concatenate([q, np.zeros(max(K + 1 - q.shape[0], 0))])
    tail = np.zeros_like(padded)
    tail[:-1] = np.cumsum(padded[::-1])[::-1][1:]
    sf = np.convolve(q, sf_p)[: K + 1] + tail[: K + 1]
    return np.minimum(cdf, 1.0), np.minimum(sf, 1.0)


def old_intensity_parts(density):
    d = density.dim
    ws, ms, cs = [], [], []
    rates, lows, highs = np.empty(0), np.empty((0, d)), np.empty((0, d))
    density = as_pmbm(density)
    if isinstance(density, PPP):
        ppp = density
    elif isinstance(density, IIDCluster):
        mean_n = float(np.arange(density.cardinality.shape[0]) @ density.cardinality)
        ws.append(mean_n * density.weights)
        ms.append(density.gaussians.means)
        cs.append(density.gaussians.covs)
        ppp = None
    else:
        ppp = density.ppp
        pool = density.pool
        members = density.members
        sizes = np.array([m.shape[0] for m in members], dtype=np.int64)
        held = np.concatenate(members).astype(np.int64, copy=False)
        total = np.bincount(held, weights=np.repeat(density.weights, sizes), minlength=len(pool))
        if isinstance(pool.densities, GaussianMixtures):
            gm = pool.densities
            ws.append((total * pool.r)[gm.owner] * gm.weights)
            ms.append(gm.components.means)
            cs.append(gm.components.covs)
        else:
            ws.append(total * pool.r)
            ms.append(pool.densities.means)
            cs.append(pool.densities.covs)
    if ppp is not None:
        ws.append(ppp.weights)
        ms.append(ppp.gaussians.means)
        cs.append(ppp.gaussians.covs)
        rates, lows, highs = ppp.rates, ppp.lows, ppp.highs
    w = np.concatenate(ws) if ws else np.empty(0)
    means = np.concatenate(ms) if ms else np.empty((0, d))
    covs = np.concatenate(cs) if cs else np.empty((0, d, d))
    keep = w > 0
    w, means, covs = w[keep], means[keep], covs[keep]
    if w.size > 1:
        rows = np.concatenate([means, covs.reshape(w.size, -1)], axis=1)
        uniq, first, inverse = np.unique(rows, axis=0, return_index=True, return_inverse=True)
        if uniq.shape[0] < w.size:
            w = np.bincount(inverse.ravel(), weights=w, minlength=uniq.shape[0])
            means, covs = means[first], covs[first]
    keep_b = rates > 0
    return w, means, covs, rates[keep_b], lows[keep_b], highs[keep_b]


def old_intensity_score(density, y, kernel_cov):
    R = proper.kernel_matrix(kernel_cov, density.dim)
    w, means, covs, rates, lows, highs = old_intensity_parts(density)
    s = np.sqrt(np.diag(R))
    gram = me.gaussian_gram(w, means, covs, R)
    cross = 0.0
    if w.size and y.shape[0]:
        summed = Gaussians._trusted(means, covs + R[None])
        logdet = 2.0 * summed._log_diag.sum(axis=1)
        cross = me.gaussian_cross(w, means, summed._chol, logdet, float(np.linalg.slogdet(R)[1]), y)
    if rates.size:
        var_diag = np.diagonal(covs, axis1=1, axis2=2)
        off = ~np.eye(covs.shape[1], dtype=bool)
        diag = ~np.any(covs[:, off] != 0, axis=1)
        gram += 2.0 * me.box_gaussian(rates, lows, highs, s, w[diag], means[diag], var_diag[diag])
        gram += 2.0 * me.box_gaussian_2d(rates, lows, highs, s, w[~diag], means[~diag], covs[~diag])
        gram += me.box_box(rates, lows, highs, s)
        cross += me.box_point(rates, lows, highs, s, y)
    yy = proper._self_sum(proper._whiten_checked(y, R))
    return gram - 2.0 * cross + yy, gram, cross, yy


# --- densities ---------------------------------------------------------------------------------


def covariances(rng, m, dim, correlated):
    A = rng.normal(size=(m, dim, dim)) * (0.5 if correlated else 0.0)
    return np.einsum("kij,klj->kil", A, A) + np.eye(dim) * rng.uniform(0.2, 3.0, (m, 1, 1))


def existence(rng, m, t):
    r = rng.uniform(size=m) ** rng.uniform(0.1, 5.0)
    if m and t % 3 == 0:
        r[0] = 0.0
    if m > 1 and t % 4 == 0:
        r[1] = 1.0
    return r


def random_density(rng, t):
    """A density of one of the families, with edge cases by turns (t)."""
    dim = 3 if t % 7 == 0 else 2
    correlated = t % 5 in (1, 2) and dim == 2
    m = int(rng.integers(0, 7))
    means, covs = rng.normal(size=(m, dim)), covariances(rng, m, dim, correlated)
    r = existence(rng, m, t)
    low, high = -rng.uniform(1, 4, dim), rng.uniform(1, 4, dim)
    ppp = [None, PPP.uniform(rng.uniform(0, 3), low, high), PPP.uniform(0.0, low, high)][t % 3]
    kind = t % 8
    if kind == 0:  # hypotheses as given sharing tracks (equal components), one of weight 0 by turns
        H = 3
        hyps = tuple(MultiBernoulli.gaussian(r[:k], means[:k], covs[:k]) for k in rng.integers(0, m + 1, H))
        w = rng.dirichlet(np.ones(H))
        if t % 16 == 0:
            w[0] = 0.0
            w /= w.sum()
        return PMBM(ppp, hyps, w)
    if kind == 1:  # pooled hypotheses
        members = [np.sort(rng.choice(m, int(rng.integers(0, m + 1)), replace=False)) for _ in range(3)]
        return PMBM.pooled(ppp, MultiBernoulli.gaussian(r, means, covs), members, rng.dirichlet(np.ones(3)))
    if kind == 2:  # Gaussian-mixture Bernoullis
        counts = rng.integers(1, 4, m)
        offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        C = int(offsets[-1])
        gw = np.concatenate([rng.dirichlet(np.ones(c)) for c in counts]) if m else np.empty(0)
        mb = MultiBernoulli.gaussian_mixture(
            r, gw, rng.normal(size=(C, dim)), covariances(rng, C, dim, False), offsets
        )
        return PMBM(ppp, (mb,), np.ones(1))
    if kind == 3:  # PPP only: boxes and Gaussians
        k = int(rng.integers(0, 3))
        gauss = PPP.gaussian(
            rng.uniform(0, 2, k), rng.normal(size=(k, dim)), covariances(rng, k, dim, correlated)
        )
        return gauss if ppp is None else PPP.from_mixture(gauss.mixture, ppp.rates, ppp.lows, ppp.highs)
    if kind == 4:
        pmf = rng.dirichlet(np.ones(int(rng.integers(1, 6))))
        k = int(rng.integers(1, 4))
        return IIDCluster(
            pmf, rng.dirichlet(np.ones(k)), rng.normal(size=(k, dim)), covariances(rng, k, dim, False)
        )
    if kind == 5:  # a bare MB (every r 1 by turns), or an empty one
        return MultiBernoulli.gaussian(np.ones(m) if t % 5 == 0 else r, means, covs)
    return PMBM(ppp, (MultiBernoulli.gaussian(r, means, covs),), np.ones(1))  # a PMB as from tracks


DENSITY_CASES = 320


# --- tests -------------------------------------------------------------------------------------


def test_poisson_binomial_is_the_numpy_recursion_bit_for_bit():
    rng = np.random.default_rng(0)
    for t in range(1500):
        shape = (int(rng.integers(0, 5)), int(rng.integers(0, 60))) if t % 2 else (int(rng.integers(0, 60)),)
        r = rng.uniform(0, 1, shape) ** rng.uniform(0.05, 20)
        r[rng.uniform(size=shape) < 0.1] = 0.0
        r[rng.uniform(size=shape) < 0.1] = 1.0
        if t % 5 == 0:
            r[rng.uniform(size=shape) < 0.1] = 1e-300
        assert same_bits(proper.poisson_binomial(r), old_poisson_binomial(r)), t


@pytest.mark.parametrize("r", [[], [0.0], [1.0], [0.0, 1.0, 0.3], [0.2, 0.5, 0.9, 1.0, 0.0, 0.7]])
def test_poisson_binomial_is_the_enumerated_pmf(r):
    r = np.array(r)
    expected = np.zeros(r.size + 1)
    for exists in itertools.product((0, 1), repeat=r.size):
        e = np.array(exists, dtype=bool)
        expected[e.sum()] += np.prod(np.where(e, r, 1.0 - r))
    got = proper.poisson_binomial(r)
    np.testing.assert_allclose(got, expected, rtol=1e-14, atol=1e-16)
    assert np.all(got[expected == 0] == 0)  # r = 0 or 1: impossible counts exactly 0


def test_intensity_parts_and_score_are_the_old_ones_bit_for_bit():
    rng = np.random.default_rng(1)
    refused = 0
    for t in range(DENSITY_CASES):
        density = random_density(rng, t)
        new, old = parts.intensity_parts(density), old_intensity_parts(density)
        assert all(same_bits(a, b) for a, b in zip(new, old, strict=True)), t
        y = rng.normal(size=(int(rng.integers(0, 5)), density.dim)) * 2.0
        kc = [0.5, 1.0, 3.0][t % 3]
        try:
            got = proper.intensity_score(density, y, kc)
        except ValueError:  # a correlated Gaussian beside boxes in 3-D: refused as before
            refused += 1
            continue
        expected = old_intensity_score(density, y, kc)
        assert same_bits([got.value, got.intensity_norm2, got.cross, got.truth_norm2], expected), t
    assert refused < DENSITY_CASES // 4


def test_equal_rows_are_found_as_numpy_unique_finds_them():
    rng = np.random.default_rng(2)
    for t in range(400):
        rows = rng.integers(-2, 3, size=(int(rng.integers(0, 8)), int(rng.integers(1, 4)))).astype(float)
        if rows.size and t % 3 == 0:
            rows[rows == 0] = -0.0 if t % 2 else 0.0  # -0.0 equals 0.0, as np.unique compares
            rows[0, 0] = -0.0
        expected = np.unique(rows, axis=0).shape[0] < rows.shape[0]
        assert parts._has_equal_rows(rows) == expected, t
    assert parts._has_equal_rows(np.array([[0.0, 1.0], [-0.0, 1.0]]))
    assert not parts._has_equal_rows(np.array([[0.0, 1.0], [1.0, 0.0], [0.0, 2.0]]))


def test_per_input_caches_give_each_input_its_own_value_read_only():
    boxes = [
        (np.array([2.0]), np.array([[-1.0, -1.0]]), np.array([[1.0, 2.0]])),
        (np.array([0.5, 1.5]), np.array([[-3.0, 0.0], [0.0, 0.0]]), np.array([[0.0, 1.0], [2.0, 5.0]])),
    ]
    for s in (np.array([1.0, 1.0]), np.array([0.5, 2.0])):
        for rates, lows, highs in boxes * 2:  # alternating: a hit must not return the other's value
            assert same_bits(parts.cached_box_box(rates, lows, highs, s), me.box_box(rates, lows, highs, s))
    R = np.diag([4.0, 9.0])
    s, logdet = parts.kernel_constants(R)
    assert same_bits(s, [2.0, 3.0]) and logdet == float(np.linalg.slogdet(R)[1])
    for table in (s, *proper._poisson_cdf_sf(2.0, 30), cal._shifted_log_poisson(2.0, 5, 30)):
        assert not table.flags.writeable
    cdf, sf = proper._poisson_cdf_sf(0.0, 4)
    assert same_bits(cdf, np.ones(5)) and same_bits(sf, np.zeros(5))


def test_cardinality_rps_is_the_old_route_bit_for_bit():
    rng = np.random.default_rng(3)
    for t in range(DENSITY_CASES):
        density = random_density(rng, t)
        n = int(rng.integers(0, 12))
        cdf, sf = proper.cardinality_cdf_sf(density, n)
        old_cdf, old_sf = old_cdf_sf(density, n)
        assert same_bits(cdf, old_cdf) and same_bits(sf, old_sf), t
        expected = float(np.sum(old_cdf[:n] ** 2) + np.sum(old_sf[n:] ** 2))
        assert same_bits(proper.cardinality_rps(density, n), expected), t
    for rate in (5e3, 2.5e4):  # Poisson tables too long to be kept
        density = PMBM(
            PPP.uniform(rate, [0.0, 0.0], [1.0, 1.0]), (random_density(rng, 6).hypothesis(0),), np.ones(1)
        )
        for n in (0, int(rate)):
            assert all(map(same_bits, proper.cardinality_cdf_sf(density, n), old_cdf_sf(density, n)))
    # PPP only, rate 0, and an empty MB: every count but 0 impossible
    for density in (PPP.uniform(0.0, [0.0, 0.0], [1.0, 1.0]), MultiBernoulli.empty(2)):
        assert proper.cardinality_rps(density, 0) == 0.0
        assert proper.cardinality_rps(density, 3) == 3.0


def test_cardinality_score_table_is_the_direct_one():
    cases = [(0.0, 0, 40), (0.0, 3, 45), (2.0, 4, 70), (1e-300, 2, 50), (37.5, 10, 160), (5e3, 20, 6000)]
    for lam, M, K in cases:  # (the last too large to be kept)
        j = np.arange(K + 1)
        with np.errstate(divide="ignore"):
            log_pois = j * math.log(lam) - lam - gammaln(j + 1) if lam > 0 else np.log((j == 0) * 1.0)
        diff = j[None, :] - np.arange(M + 1)[:, None]
        expected = np.where(diff >= 0, log_pois[np.clip(diff, 0, K)], -np.inf)
        for _ in range(2):  # computed, then kept (or computed again)
            got = cal._shifted_log_poisson(lam, M, K)
            assert same_bits(got, expected) and not got.flags.writeable


def old_step_counts(density, truth, result, card):
    counts = cal.CalibrationCounts.empty()
    base = {"card_steps": 1, "card_covered": int(card.covered), "card_log_score_sum": card.log_score}
    if isinstance(density, MultiBernoulli):
        density = PMBM(None, (density,), np.ones(1))
    if not isinstance(density, PMBM):
        return cal._replace(counts, **base)
    if result.best_assignment is None:
        return cal._replace(counts, unassociated=1, **base)
    mb = density.hypothesis(result.best_hypothesis)
    cols = np.asarray(result.best_assignment)
    matched = cols < len(mb)
    ks, ls = cols[matched], np.flatnonzero(matched)
    explained = np.zeros(len(mb), dtype=np.int64)
    explained[ks] = 1
    existence = cal._existence(mb.r, explained)
    dens = mb.densities.moment_matched() if isinstance(mb.densities, GaussianMixtures) else mb.densities
    nees = {}
    if isinstance(dens, Gaussians):
        e = cal.nees(dens.means[ks], dens.covs[ks], truth[ls])
        pit = chdtr(dens.dim, e)
        nees = {
            "nees_pairs": int(e.size),
            "nees_sum": float(e.sum()),
            "nees_dof": int(e.size * dens.dim),
            "nees_inside": int(np.sum(e <= chdtri(dens.dim, 1.0 - cal.NEES_LEVEL))),
            "pit_count": np.bincount(
                np.minimum((pit * cal.PIT_BINS).astype(np.int64), cal.PIT_BINS - 1), minlength=cal.PIT_BINS
            ),
        }
    return cal._replace(counts, **base, **existence, **nees)


def counts_fields(c):
    return [(type(v).__name__, np.asarray(v).dtype.str, np.asarray(v).tobytes()) for v in vars(c).values()]


def test_step_counts_are_the_old_ones_bit_for_bit():
    rng = np.random.default_rng(4)
    laplace = MultiBernoulli.laplace([0.9, 0.4], [[0.0, 0.0], [3.0, 3.0]], 1.0)
    certain = MultiBernoulli.gaussian([1.0, 1.0], [[0.0, 0.0], [5.0, 5.0]], np.tile(np.eye(2), (2, 1, 1)))
    cases = [(laplace, np.array([[0.1, 0.0]])), (certain, np.empty((0, 2)))]  # no NEES; impossible truth
    for t in range(120):
        density = random_density(
            rng, 8 * t + [0, 1, 2, 3, 5, 6][t % 6]
        )  # every family with Bernoullis, a PPP
        cases.append((density, rng.normal(size=(int(rng.integers(0, 4)), density.dim))))
    unassociated = 0
    for density, truth in cases:
        result = nll(density, truth)
        unassociated += result.best_assignment is None
        card = cal.cardinality_score(density, truth.shape[0])
        got = cal.step_counts(density, truth, result, card)
        assert counts_fields(got) == counts_fields(old_step_counts(density, truth, result, card))
        assert counts_fields(cal.step_counts(density, truth, result)) == counts_fields(got)
    assert unassociated >= 1


def test_normal_cdf_differences_take_the_old_tails_bit_for_bit():
    rng = np.random.default_rng(5)
    lo = rng.normal(0, 10, 4000)
    hi = lo + np.abs(rng.normal(0, 10, 4000))
    lo[:10], hi[:10] = -np.inf, np.inf
    lo[10:20], hi[10:20] = 0.0, [0.0, 1.0, np.inf, 40.0, 1e-300, 5.0, 38.5, 39.0, 8.0, 0.5]
    expected = np.where(lo > 0, ndtr(-lo) - ndtr(-hi), ndtr(hi) - ndtr(lo))  # the old route
    assert same_bits(me._cdf_diff(lo, hi), expected)
    assert np.any(lo > 0) and np.any(lo < 0)
