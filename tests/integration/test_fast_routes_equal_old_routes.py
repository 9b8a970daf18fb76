"""The faster routes of ``score``'s per-step parts give the old routes' values bit for bit.

Each test keeps a frozen copy of the route as it was (NumPy recursions, scipy's
logsumexp, the per-object loops) and compares on random and edge inputs.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy
from scipy.optimize import linear_sum_assignment
from scipy.special import gammaln, logsumexp

import nllbench as nb
from nllbench.engine.densities import PMBM, PPP, MultiBernoulli, laplace_log_normaliser, log_box_volume
from nllbench.engine.nll import nll
from nllbench.measures import calibration as cal
from nllbench.measures._sequences import distances
from nllbench.measures.metrics import clear_mot, gated_matching, identity_scores
from nllbench.measures.theorem1 import _fov, _offset, theorem1, theorem1_pmb

#: The scipy whose logsumexp ``_logsumexp_rows`` repeats operation for operation (1.17); where the
#: old route called scipy, the comparisons below are bit for bit only with it.
SCIPY_SAME_ALGORITHM = tuple(int(x) for x in scipy.__version__.split(".")[:2]) >= (1, 17)


def same_bits(a, b) -> bool:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return a.shape == b.shape and a.tobytes() == b.tobytes()


# --- cardinality score -------------------------------------------------------------------------


def old_poisson_binomial(r: np.ndarray) -> np.ndarray:
    H, M = r.shape
    with np.errstate(divide="ignore"):
        log_r, log_1mr = np.log(r), np.log(1.0 - r)
    out = np.full((H, M + 1), -np.inf)
    out[:, 0] = 0.0
    for k in range(M):
        shifted = np.concatenate([np.full((H, 1), -np.inf), out[:, :-1]], axis=1)
        out = np.logaddexp(out + log_1mr[:, k : k + 1], shifted + log_r[:, k : k + 1])
    return out


def old_log_cardinality(density, n: int):
    """The cardinality pmf as computed before (NumPy recursion, scipy's logsumexp)."""
    if isinstance(density, MultiBernoulli):
        density = PMBM(None, (density,), np.ones(1))
    if isinstance(density, PPP):
        ppp, rs, log_w = density, [], np.zeros(1)
    else:
        with np.errstate(divide="ignore"):
            ppp, log_w = density.ppp, np.log(density.weights)
        rs = [density.existence(h) for h in range(density.n_hypotheses)]
    lam = 0.0 if ppp is None else ppp.total_rate
    M = max((rh.size for rh in rs), default=0)
    r = np.zeros((max(len(rs), 1), M))
    for h, rh in enumerate(rs):
        r[h, : rh.size] = rh
    mean = lam + float(np.exp(log_w) @ r.sum(axis=1))
    K = max(n, M + int(lam + 12 * math.sqrt(lam) + 40))
    log_pb = old_poisson_binomial(r)
    j = np.arange(K + 1)
    with np.errstate(divide="ignore"):
        log_pois = j * math.log(lam) - lam - gammaln(j + 1) if lam > 0 else np.log((j == 0).astype(float))
    diff = j[None, :] - np.arange(M + 1)[:, None]
    pois = np.where(diff >= 0, log_pois[np.clip(diff, 0, K)], -np.inf)
    keep = log_w > -np.inf
    log_pb_mix = logsumexp(log_pb[keep] + log_w[keep, None], axis=0)
    return logsumexp(log_pb_mix[:, None] + pois, axis=0), mean


def random_existence(rng, H, M, t):
    r = rng.uniform(0, 1, (H, M)) ** rng.uniform(0.05, 20)
    if M > 2 and t % 3 == 0:
        r[0, 0], r[-1, 1] = 0.0, 1.0
    if M > 3 and t % 5 == 0:
        r[:, 2] = 1e-300
    if M > 4 and t % 7 == 0:
        r[:, 3] = 1.0 - 1e-16
    return r


def test_poisson_binomial_recursion_is_the_numpy_one_bit_for_bit():
    rng = np.random.default_rng(0)
    for t in range(1500):
        r = random_existence(rng, int(rng.integers(1, 6)), int(rng.integers(0, 70)), t)
        assert same_bits(cal._log_poisson_binomial(r), old_poisson_binomial(r)), t


def test_logsumexp_rows_is_scipys_bit_for_bit():
    rng = np.random.default_rng(1)
    for t in range(3000):
        a = rng.normal(0, 10 ** rng.uniform(-1, 3), (int(rng.integers(0, 50)), int(rng.integers(1, 90))))
        a[rng.uniform(size=a.shape) < 0.3] = -np.inf
        if t % 7 == 0:
            a[rng.uniform(size=a.shape) < 0.05] = np.inf
        if t % 11 == 0 and a.shape[0]:
            a[:, 0] = a[0, 0]  # ties at the maximum
        if t % 13 == 0:
            a[rng.uniform(size=a.shape) < 0.05] = np.nan
        if t % 17 == 0:
            a = np.round(a)
        if t % 19 == 0:
            a[:, -1] = -np.inf
        if t % 23 == 0:
            with np.errstate(over="ignore"):
                a = a * 1e306  # some overflow to +-inf
        if t % 29 == 0 and a.size:
            a[0, 0] = -0.0
        with np.errstate(all="ignore"):
            expected = logsumexp(a, axis=0)
        got = cal._logsumexp_rows(a)
        if SCIPY_SAME_ALGORITHM:
            assert same_bits(got, expected), t
        else:  # an older scipy sums differently: the same values to rounding
            np.testing.assert_allclose(got, expected, rtol=1e-13, atol=0)


def random_density(rng, t):
    H, M = int(rng.integers(1, 4)), int(rng.integers(0, 40))
    dim = 2
    mbs = []
    for h in range(H):
        m = int(rng.integers(0, M + 1))
        r = random_existence(rng, 1, m, t + h)[0]
        mbs.append(MultiBernoulli.gaussian(r, rng.normal(size=(m, dim)), np.tile(np.eye(dim), (m, 1, 1))))
    weights = rng.dirichlet(np.ones(H))
    if H > 1 and t % 4 == 0:
        weights[0] = 0.0
        weights /= weights.sum()
    rate = [0.0, 1e-3, 0.7, 5.0, 60.0][t % 5]
    ppp = PPP.uniform(rate, [0.0, 0.0], [10.0, 10.0]) if rate > 0 else None
    if t % 9 == 0:
        return ppp if ppp is not None else mbs[0]
    if t % 10 == 0:
        return mbs[0]
    return PMBM(ppp, mbs, weights)


def test_cardinality_score_is_the_old_one_bit_for_bit():
    rng = np.random.default_rng(2)
    for t in range(400):
        density = random_density(rng, t)
        n = int(rng.integers(0, 60))
        log_pmf, mean = cal._log_cardinality_pmbm(density, n)
        old_pmf, old_mean = old_log_cardinality(density, n)
        assert mean == old_mean
        if not SCIPY_SAME_ALGORITHM:
            np.testing.assert_allclose(log_pmf, old_pmf, rtol=1e-13, atol=1e-300)
            continue
        assert same_bits(log_pmf, old_pmf), t
        got = cal.cardinality_score(density, n)
        cdf = np.cumsum(np.exp(old_pmf))
        lo = int(np.searchsorted(cdf, 0.05 - 1e-12))
        hi = int(np.searchsorted(cdf, 0.95 - 1e-12))
        log_p = float(old_pmf[n]) if n < old_pmf.size else -math.inf
        assert (got.low, got.high, got.covered) == (lo, hi, lo <= n <= hi)
        assert same_bits(got.log_score, -log_p + 0.0)


def test_one_box_intensity_is_scipys_logsumexp_of_the_row():
    rng = np.random.default_rng(3)
    for rate in (0.0, 1e-300, 0.5, 1e300):
        ppp = PPP.uniform(rate, [0.0, -1.0], [2.0, 3.0])
        y = np.concatenate([rng.uniform(-1, 4, (30, 2)), [[0.0, -1.0], [2.0, 3.0], [2.0, 3.0000001]]])
        inside = np.all((y >= ppp.lows[0]) & (y <= ppp.highs[0]), axis=1)
        with np.errstate(divide="ignore"):
            log_rate = np.log(ppp.rates[0]) - log_box_volume(ppp.lows, ppp.highs)[0]
        row = np.where(inside, log_rate, -np.inf)
        with np.errstate(divide="ignore"):
            expected = logsumexp(row[None, :], axis=0)
        assert same_bits(ppp.log_intensity(y), expected)


# --- Theorem 1 ---------------------------------------------------------------------------------


def old_theorem1(estimates, truth, low, high, rho, scale):
    """(lhs, rhs, volume, c, log_k, offset, gospa) by the route before the constants were kept."""
    pmb = theorem1_pmb(estimates, low, high, rho, scale)
    lo, hi = _fov(low, high)
    X = pmb.hypotheses[0].means
    Y = np.asarray(truth, dtype=float).reshape(-1, lo.size)
    volume = float(np.exp(float(log_box_volume(lo[None], hi[None])[0])))
    c = -2.0 * math.log1p(-rho)
    log_k = float(laplace_log_normaliser(scale, lo.size))
    offset = _offset(lo, hi, rho)
    nx, ny = X.shape[0], Y.shape[0]
    total = c / 2.0 * abs(nx - ny)
    if nx and ny:
        D = np.linalg.norm(X[:, None, :] - Y[None, :, :], axis=2) / scale
        cost = np.minimum(D + log_k - math.log(rho), c)
        rows, cols = linear_sum_assignment(cost)
        total += float(cost[rows, cols].sum())
    g = nb.gospa(X / scale, Y / scale, c=c, p=1)
    return nll(pmb, Y, q=1).value, offset + total, volume, c, log_k, offset, g.value


@pytest.mark.parametrize("d", [1, 2, 3])
def test_theorem1_is_the_old_route_bit_for_bit_across_settings(d):
    rng = np.random.default_rng(10 + d)
    for t in range(60):
        lo = rng.uniform(-5, 0, d)
        hi = lo + rng.uniform(1, 50, d)
        rho = [0.3, 0.9, 0.9, 0.99][t % 4]  # the same setting again reuses its constants
        scale = [1.0, 0.7, nb.measures.theorem1.scale_for_k_equal_rho(rho, d)][t % 3]
        X = rng.uniform(lo, hi, (int(rng.integers(0, 12)), d))
        Y = rng.uniform(lo, hi, (int(rng.integers(0, 12)), d))
        r = theorem1(X, Y, lo, hi, rho, scale)
        lhs, rhs, volume, c, log_k, offset, g = old_theorem1(X, Y, lo, hi, rho, scale)
        assert same_bits(
            [r.lhs, r.rhs, r.difference, r.volume, r.c, r.log_k, r.offset, r.gospa.value, r.rho, r.scale],
            [lhs, rhs, lhs - rhs, volume, c, log_k, offset, g, rho, scale],
        ), t


def test_theorem1_kept_constants_are_read_only_and_arguments_still_checked():
    theorem1([[1.0, 1.0]], [[1.5, 1.0]], [0, 0], [4, 4], 0.9, 1.0)
    setting = nb.measures.theorem1._setting((0.0, 0.0), (4.0, 4.0), 0.9, 1.0)
    assert not setting.ppp.rates.flags.writeable  # shared by the calls: not changeable in place
    with pytest.raises(ValueError, match="rho"):
        theorem1([[1.0, 1.0]], [[1.5, 1.0]], [0, 0], [4, 4], 1.0, 1.0)
    with pytest.raises(ValueError, match="scale"):
        theorem1([[1.0, 1.0]], [[1.5, 1.0]], [0, 0], [4, 4], 0.9, -1.0)
    with pytest.raises(ValueError, match="high"):
        theorem1([[1.0, 1.0]], [[1.5, 1.0]], [0, 0], [0, 4], 0.9, 1.0)
    with pytest.raises(ValueError, match="truth"):
        theorem1([[1.0, 1.0]], [[5.0, 1.0]], [0, 0], [4, 4], 0.9, 1.0)


# --- CLEAR MOT and IDF1 ------------------------------------------------------------------------


def old_clear_counts(truth, truth_ids, estimates, estimate_ids, threshold):
    """Per-frame (matches, switches, distance sum) by the per-object NumPy loops of before (motmetrics)."""
    last: dict = {}
    out = []
    for Y, oid, X, hid in zip(truth, truth_ids, estimates, estimate_ids, strict=True):
        oid, hid = np.asarray(oid, dtype=np.int64), np.asarray(hid, dtype=np.int64)
        dist = distances(Y, X) if len(Y) and len(X) else np.empty((len(Y), len(X)))
        o_used, h_used, pairs = np.zeros(len(Y), bool), np.zeros(len(X), bool), []
        for i, o in enumerate(oid):
            if o in last:
                js = np.flatnonzero(~h_used & (hid == last[o]))
                if js.size and dist[i, js[0]] <= threshold:
                    o_used[i] = h_used[js[0]] = True
                    pairs.append((i, int(js[0])))
        ri, ci = np.flatnonzero(~o_used), np.flatnonzero(~h_used)
        rows, cols = gated_matching(dist[np.ix_(ri, ci)], threshold)
        pairs += [(int(a), int(b)) for a, b in zip(ri[rows], ci[cols], strict=True)]
        fd, sw, m = np.zeros(1), 0, 0
        for i, j in pairs:
            switch = oid[i] in last and last[oid[i]] != hid[j]
            last[oid[i]] = hid[j]
            fd[0] += dist[i, j]
            sw += switch
            m += not switch
        out.append((m, sw, fd[0]))
    return out


def random_sequence(rng, K=40):
    truth, tids, est, eids = [], [], [], []
    for _ in range(K):
        n, m = int(rng.integers(0, 8)), int(rng.integers(0, 8))
        truth.append(rng.uniform(0, 6, (n, 2)))
        tids.append(rng.permutation(10)[:n])
        est.append(rng.uniform(0, 6, (m, 2)))
        eids.append(rng.permutation(12)[:m] - 3)  # negative identities too
    return truth, tids, est, eids


def test_clear_mot_and_idf1_loops_give_the_old_counts():
    rng = np.random.default_rng(4)
    for _ in range(30):
        truth, tids, est, eids = random_sequence(rng)
        res = clear_mot(truth, tids, est, eids, 2.0)
        old = old_clear_counts(truth, tids, est, eids, 2.0)
        assert res.frame_matches.tolist() == [m for m, _, _ in old]
        assert res.frame_switches.tolist() == [s for _, s, _ in old]
        assert same_bits(res.frame_distance_sum, [d for _, _, d in old])
        # IDF1: the pair counts by the old per-pair lookups
        counts: dict = {}
        for Y, oid, X, hid in zip(truth, tids, est, eids, strict=True):
            if len(Y) and len(X):
                d = distances(Y, X)
                for i, j in zip(*np.nonzero(d <= 2.0), strict=True):
                    key = (int(oid[i]), int(hid[j]))
                    counts[key] = counts.get(key, 0) + 1
        idtp = 0
        if counts:
            os_, hs = sorted({o for o, _ in counts}), sorted({h for _, h in counts})
            gain = np.zeros((len(os_), len(hs)))
            for (o, h), c in counts.items():
                gain[os_.index(o), hs.index(h)] = c
            rows, cols = linear_sum_assignment(-gain)
            idtp = int(gain[rows, cols].sum())
        assert identity_scores(truth, tids, est, eids, 2.0).idtp == idtp
