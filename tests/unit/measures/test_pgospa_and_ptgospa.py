"""P-GOSPA and PT-GOSPA against enumeration, closed forms, GOSPA / T-GOSPA limits and the metric axioms."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import nllbench as nb
from nllbench.measures._wasserstein import check_psd, psd_sqrt, w2


def w2_reference(m1, S1, m2, S2) -> float:
    """The textbook W2 of two Gaussians, independent of the module's route.

    tr (S2^(1/2) S1 S2^(1/2))^(1/2) as the nuclear norm of S1^(1/2) S2^(1/2)
    (eigendecomposition roots, SVD): the square roots of the inner matrix's
    eigenvalues would turn rounding of a zero eigenvalue (rank-one
    covariances) into errors of 1e-8.
    """

    def root(S):  # an eigenvalue within rounding of 0 as 0, the module's convention
        w, V = np.linalg.eigh(S)
        w = np.where(w > len(w) * np.finfo(float).eps * np.abs(w).max(), w, 0.0)
        return (V * np.sqrt(w)) @ V.T

    nuclear = np.linalg.svd(root(S1) @ root(S2), compute_uv=False).sum()
    total = np.sum((m1 - m2) ** 2) + np.trace(S1) + np.trace(S2) - 2.0 * nuclear
    return float(np.sqrt(max(total, 0.0)))


def spd(rng, n: int, d: int) -> np.ndarray:
    L = rng.normal(0.0, 0.7, (n, d, d))
    return L @ np.swapaxes(L, 1, 2) + 0.05 * np.eye(d)


def random_mb(rng, n: int, d: int, zeros: bool = True):
    """(r, means, covs) with some r exactly 1 (and 0 when ``zeros``)."""
    r = rng.uniform(0.0, 1.0, n)
    r[rng.random(n) < 0.2] = 1.0
    if zeros:
        r[rng.random(n) < 0.1] = 0.0
    return r, rng.normal(0.0, 1.5, (n, d)), spd(rng, n, d)


def brute_force(x, y, c, p, alpha):
    """min over every partial assignment of the definition; returns (power, terms of the minimiser).

    alpha = 2: the paper's Proposition 2 (unclipped W2, c^p / 2 per unit of
    unassigned existence); alpha < 2: the clipped W2 and c^p / alpha.
    """
    (rx, mx, Sx), (ry, my, Sy) = x, y
    unit = c**p / alpha
    W = np.array([[w2_reference(mx[i], Sx[i], my[j], Sy[j]) for j in range(ry.size)] for i in range(rx.size)])
    D = W if alpha == 2 else np.minimum(W, c)
    best, terms = np.inf, None
    for k in range(min(rx.size, ry.size) + 1):
        for rows in itertools.combinations(range(rx.size), k):
            for cols in itertools.permutations(range(ry.size), k):
                loc = sum(min(rx[i], ry[j]) * D[i, j] ** p for i, j in zip(rows, cols, strict=True))
                ex = sum(abs(rx[i] - ry[j]) * unit for i, j in zip(rows, cols, strict=True))
                missed = unit * sum(rx[i] for i in range(rx.size) if i not in rows)
                false = unit * sum(ry[j] for j in range(ry.size) if j not in cols)
                total = loc + ex + missed + false
                if total < best:
                    best, terms = total, np.array([loc, ex, missed, false])
    return best, terms


def mb(r, means, covs):
    return nb.MultiBernoulli.gaussian(r, means, covs)


@pytest.mark.parametrize("seed", range(4))
def test_pgospa_equals_enumeration(seed):
    rng = np.random.default_rng(seed)
    worst, worst_terms, count = 0.0, 0.0, 0
    for _ in range(80):
        d = int(rng.integers(1, 4))
        nx, ny = (int(k) for k in rng.integers(0, 5, 2))
        x, y = random_mb(rng, nx, d), random_mb(rng, ny, d)
        c, p = float(rng.choice([0.7, 2.0, 4.0])), float(rng.choice([1.0, 2.0, 2.5]))
        alpha = float(rng.choice([2.0, 2.0, 1.0, 0.3]))
        res = nb.pgospa(mb(*x), mb(*y), c=c, p=p, alpha=alpha)
        power, terms = brute_force(x, y, c, p, alpha)
        ours = np.array([res.localization, res.existence_mismatch, res.missed, res.false])
        assert np.isclose(ours.sum(), res.power, rtol=1e-14, atol=0)
        assert np.isclose(res.value**p, res.power, rtol=1e-12, atol=0)
        worst = max(worst, abs(res.power - power) / max(1.0, power))
        if alpha == 2 and not (
            np.any(x[0] == 0) or np.any(y[0] == 0)
        ):  # otherwise ties may split differently
            worst_terms = max(worst_terms, np.abs(ours - terms).max() / max(1.0, power))
            count += 1
    assert worst <= 1e-12
    assert worst_terms <= 1e-12 and count > 10


def test_points_give_gospa_and_a_point_against_a_gaussian_adds_its_trace():
    rng = np.random.default_rng(7)
    for _ in range(30):
        X, Y = (
            rng.uniform(0, 4, (int(rng.integers(0, 6)), 2)),
            rng.uniform(0, 4, (int(rng.integers(0, 6)), 2)),
        )
        for p in (1.0, 2.0, 3.0):
            a, b = nb.pgospa(X, Y, c=1.5, p=p), nb.gospa(Y, X, c=1.5, p=p)
            assert a.value == pytest.approx(b.value, rel=1e-13, abs=1e-15)
            assert (a.localization, a.missed, a.false) == pytest.approx((b.localization, b.missed, b.false))
            assert a.existence_mismatch == 0.0
    S = np.array([[[2.0, 0.5], [0.5, 1.0]]])
    res = nb.pgospa([[0.0, 0.0]], mb(np.ones(1), np.array([[3.0, 4.0]]), S), c=100.0, p=2)
    assert res.localization == pytest.approx(25.0 + 3.0, rel=1e-14)


def test_edge_cases_are_exact():
    g = mb(
        np.array([0.3, 1.0, 0.0]),
        np.array([[0.0, 0.0], [1.0, 1.0], [5.0, 5.0]]),
        spd(np.random.default_rng(1), 3, 2),
    )
    for x, y in ((np.empty((0, 2)), g), (g, np.empty((0, 2))), ([], []), (nb.MultiBernoulli.empty(2), [])):
        res = nb.pgospa(x, y, c=2.0, p=2.0)
        total_r = sum(float(np.sum(s.r)) for s in (x, y) if isinstance(s, nb.MultiBernoulli))
        assert res.power == pytest.approx(2.0 * total_r, rel=1e-15, abs=0)  # c^p / 2 = 2 per unit
        assert res.localization == res.existence_mismatch == 0.0 and np.isfinite(res.value)
    # an r = 0 Bernoulli changes nothing; an identical one adds nothing
    base = nb.pgospa([[0.0, 0.0]], g, c=2.0)
    more = nb.pgospa(
        [[0.0, 0.0]],
        mb(np.r_[g.r, 0.0], np.r_[g.densities.means, [[0.5, 0.5]]], np.r_[g.densities.covs, np.eye(2)[None]]),
        c=2.0,
    )
    assert more.value == base.value
    assert nb.pgospa(g, g, c=2.0, p=1.0).value == 0.0
    # degenerate (singular) covariances never give NaN: W2 of points along a line
    A = psd_sqrt(check_psd(np.array([[[1.0, 1.0], [1.0, 1.0]], [[0.0, 0.0], [0.0, 0.0]]]), "covs"))
    W = w2(np.zeros((2, 2)), A, np.zeros((2, 2)), A)
    assert np.all(np.isfinite(W)) and W[0, 0] == 0.0 and W[1, 1] == 0.0
    assert W[0, 1] == pytest.approx(np.sqrt(2.0), rel=1e-15)
    # a rank-one covariance of floats has an eigenvalue of rounding size: its root is still u u^T / |u|
    rng = np.random.default_rng(2)
    for d in (2, 3, 4):
        u = rng.normal(size=(20, d))
        S = u[:, :, None] * u[:, None, :]
        want = S / np.linalg.norm(u, axis=1)[:, None, None]
        np.testing.assert_allclose(
            psd_sqrt(check_psd(S, "covs")), want, rtol=0, atol=1e-14 * np.abs(want).max()
        )


def test_wasserstein_closed_forms_and_reference():
    rng = np.random.default_rng(3)
    # commuting (diagonal) covariances: ||m1 - m2||^2 + ||S1^(1/2) - S2^(1/2)||_F^2
    for d in (1, 2, 3, 5):
        a, b = rng.uniform(0.0, 3.0, (2, 4, d))
        Sa = np.einsum("ki,ij->kij", a, np.eye(d))
        Sb = np.einsum("ki,ij->kij", b, np.eye(d))
        ma, mbb = rng.normal(size=(2, 4, d))
        W = w2(ma, psd_sqrt(Sa), mbb, psd_sqrt(Sb))
        want = np.sum((ma[:, None] - mbb[None]) ** 2, -1) + np.sum(
            (np.sqrt(a)[:, None] - np.sqrt(b)[None]) ** 2, -1
        )
        np.testing.assert_allclose(W, np.sqrt(want), rtol=1e-13)
        S, S2 = spd(rng, 4, d), spd(rng, 3, d)
        m, m2 = rng.normal(size=(4, d)), rng.normal(size=(3, d))
        W = w2(m, psd_sqrt(S), m2, psd_sqrt(S2))
        R = [[w2_reference(m[i], S[i], m2[j], S2[j]) for j in range(3)] for i in range(4)]
        np.testing.assert_allclose(W, R, rtol=1e-11)
        # the textbook form leaves ~1e-8 at S1 = S2 (a root of rounding); ours is 0 exactly
        assert np.all(np.diag(w2(m, psd_sqrt(S), m, psd_sqrt(S))) == 0.0)  # exact at S1 = S2


def test_metric_axioms_on_random_triples():
    rng = np.random.default_rng(11)
    for _ in range(150):
        d = int(rng.integers(1, 4))
        c, p = float(rng.choice([1.0, 3.0])), float(rng.choice([1.0, 2.0, 3.0]))
        x, y, z = (mb(*random_mb(rng, int(rng.integers(0, 5)), d)) for _ in range(3))
        xy, yx = nb.pgospa(x, y, c=c, p=p), nb.pgospa(y, x, c=c, p=p)
        assert xy.value == pytest.approx(yx.value, rel=1e-13, abs=1e-14)
        assert (xy.missed, xy.false) == pytest.approx((yx.false, yx.missed), rel=1e-12, abs=1e-14)
        assert nb.pgospa(x, x, c=c, p=p).value == 0.0
        xz, yz = nb.pgospa(x, z, c=c, p=p).value, nb.pgospa(y, z, c=c, p=p).value
        assert xz <= xy.value + yz + 1e-12
        if len(x) != len(y) and (np.any(x.r > 0) or np.any(y.r > 0)):
            assert xy.value > 0.0


def test_mixtures_are_hypothesis_weighted_means_and_the_poisson_part_is_ignored():
    rng = np.random.default_rng(5)
    hyps = [mb(*random_mb(rng, k, 2)) for k in (0, 2, 3)]
    w = np.array([0.2, 0.5, 0.3])
    truth = rng.normal(0.0, 1.5, (3, 2))
    res = nb.pgospa(truth, nb.MBM(hyps, w), c=2.0, p=2.0)
    each = [nb.pgospa(truth, h, c=2.0, p=2.0) for h in hyps]
    assert res.value == pytest.approx(sum(wi * e.value for wi, e in zip(w, each, strict=True)), rel=1e-14)
    assert res.power == pytest.approx(sum(wi * e.value**2 for wi, e in zip(w, each, strict=True)), rel=1e-12)
    parts = (res.localization, res.existence_mismatch, res.missed, res.false)
    assert sum(parts) == pytest.approx(res.power, rel=1e-14)
    np.testing.assert_allclose(res.hypothesis_values[0], [e.value for e in each], rtol=1e-15)
    ppp = nb.PPP.gaussian([5.0], [[0.0, 0.0]], [np.eye(2)])
    with_ppp = nb.pgospa(truth, nb.PMBM(ppp, hyps, w), c=2.0, p=2.0)
    assert with_ppp.value == res.value
    pool = nb.PMBM(None, hyps, w).pool
    pooled = nb.PMBM.pooled(None, pool, [np.arange(0), np.arange(2), np.arange(2, 5)], w)
    assert nb.pgospa(truth, pooled, c=2.0, p=2.0).value == pytest.approx(res.value, rel=1e-15)
    # both sides mixtures: the mean over the product of the hypotheses' weights
    both = nb.pgospa(nb.MBM(hyps[1:], [0.4, 0.6]), nb.MBM(hyps, w), c=2.0, p=1.0)
    want = sum(
        a * b * nb.pgospa(h, g, c=2.0, p=1.0).value
        for a, h in zip([0.4, 0.6], hyps[1:], strict=True)
        for b, g in zip(w, hyps, strict=True)
    )
    assert both.value == pytest.approx(want, rel=1e-14) and both.hypothesis_values.shape == (2, 3)


def test_gaussian_mixture_and_laplace_bernoullis_by_their_moments():
    rng = np.random.default_rng(9)
    means = rng.normal(size=(3, 2))
    covs = spd(rng, 3, 2)
    gm = nb.MultiBernoulli.gaussian_mixture([0.7, 0.4], [0.3, 0.7, 1.0], means, covs, [0, 2, 3])
    matched = gm.densities.moment_matched()
    as_gauss = nb.MultiBernoulli.gaussian([0.7, 0.4], matched.means, matched.covs)
    truth = rng.normal(size=(2, 2))
    assert nb.pgospa(truth, gm, c=3.0).value == nb.pgospa(truth, as_gauss, c=3.0).value
    lap = nb.MultiBernoulli.laplace([0.9], [[1.0, 2.0]], 0.5)
    gauss = nb.MultiBernoulli.gaussian([0.9], [[1.0, 2.0]], [np.eye(2) * 3 * 0.25])
    assert nb.pgospa(truth, lap, c=3.0).value == pytest.approx(
        nb.pgospa(truth, gauss, c=3.0).value, rel=1e-14
    )


def test_bad_input_is_named():
    g = mb(np.ones(1), np.zeros((1, 2)), np.eye(2)[None])
    with pytest.raises(ValueError, match="alpha"):
        nb.pgospa(g, g, alpha=2.5)
    with pytest.raises(ValueError, match="p: expected"):
        nb.pgospa(g, g, p=0.5)
    with pytest.raises(ValueError, match="c: "):
        nb.pgospa(g, g, c=0.0)
    with pytest.raises(ValueError, match="y: expected state dimension 2"):
        nb.pgospa(g, [[1.0, 2.0, 3.0]])
    with pytest.raises(TypeError, match="x: expected a multi-Bernoulli"):
        nb.pgospa(nb.PPP.gaussian([1.0], [[0.0, 0.0]], [np.eye(2)]), g)
    with pytest.raises(ValueError, match="x: "):
        nb.pgospa([[np.nan, 0.0]], g)
    with pytest.raises(ValueError, match=r"estimate_covariances\[0\]: expected positive semi-definite"):
        nb.ptgospa(
            [[[0.0, 0.0]]], [[1]], [[[0.0, 0.0]]], [[1]], c=1.0, estimate_covariances=[-np.eye(2)[None]]
        )
    with pytest.raises(ValueError, match=r"truth_existence\[0\]"):
        nb.ptgospa([[[0.0, 0.0]]], [[1]], [[[0.0, 0.0]]], [[1]], c=1.0, truth_existence=[[1.5]])
    with pytest.raises(ValueError, match=r"estimate_covariances\[0\]: expected shape \(1, 2, 2\)"):
        nb.ptgospa([[[0.0, 0.0]]], [[1]], [[[0.0, 0.0]]], [[1]], c=1.0, estimate_covariances=[np.eye(2)])


# ---------------------------------------------------------------------------
# PT-GOSPA
# ---------------------------------------------------------------------------


def random_sequence(rng, K, ids, box=2.5, d=2, uncertain=True):
    """Per-frame points, ids, existences and PSD covariances (some zero, some singular)."""
    pts, lab, r, S = [], [], [], []
    for _ in range(K):
        n = int(rng.integers(0, len(ids) + 1))
        lab.append(rng.choice(ids, n, replace=False))
        pts.append(rng.uniform(0, box, (n, d)))
        rr = rng.uniform(0.0, 1.0, n) if uncertain else np.ones(n)
        if uncertain:
            rr[rng.random(n) < 0.2] = 1.0
            rr[rng.random(n) < 0.1] = 0.0
        r.append(rr)
        cov = spd(rng, n, d) * 0.3 if uncertain else np.zeros((n, d, d))
        if uncertain and n:
            cov[rng.random(n) < 0.2] = 0.0
            u = rng.integers(-3, 4, size=d).astype(float)
            cov[rng.random(n) < 0.2] = np.outer(u, u)  # rank one (exactly: integers)
        S.append(cov)
    return pts, lab, r, S


def ptgospa_brute_force(T, TI, rT, ST, E, EI, rE, SE, c, p, gamma) -> float:
    """Minimum over every sequence of partial injections (Viterbi over all of them), from the definition."""
    tids = sorted({int(i) for f in TI for i in f})
    eids = sorted({int(j) for f in EI for j in f})
    states = [
        pi
        for pi in itertools.product(range(-1, len(eids)), repeat=len(tids))
        if len([j for j in pi if j >= 0]) == len({j for j in pi if j >= 0})
    ]
    half = c**p / 2.0

    def frame_cost(pi, k):
        bt = {int(i): (r, m, S) for i, r, m, S in zip(TI[k], rT[k], T[k], ST[k], strict=True)}
        be = {int(j): (r, m, S) for j, r, m, S in zip(EI[k], rE[k], E[k], SE[k], strict=True)}
        cost = half * (sum(r for r, _, _ in bt.values()) + sum(r for r, _, _ in be.values()))
        for a, b in enumerate(pi):
            if b < 0 or tids[a] not in bt or eids[b] not in be:
                continue
            (ri, mi, Si), (rj, mj, Sj) = bt[tids[a]], be[eids[b]]
            d = min(w2_reference(mi, Si, mj, Sj), c)
            cost += min(ri, rj) * d**p + abs(ri - rj) * half - (ri + rj) * half
        return cost

    def switch(a, b):
        return gamma**p * sum(
            0.0 if x == y else (1.0 if x >= 0 and y >= 0 else 0.5) for x, y in zip(a, b, strict=True)
        )

    sw = np.array([[switch(a, b) for b in states] for a in states])
    value = np.array([frame_cost(s, 0) for s in states])
    for k in range(1, len(T)):
        value = np.min(value[:, None] + sw, axis=0) + np.array([frame_cost(s, k) for s in states])
    return float(value.min())


@pytest.mark.parametrize("seed", range(3))
def test_ptgospa_equals_enumeration(seed):
    rng = np.random.default_rng(100 + seed)
    for _ in range(12):
        K = int(rng.integers(1, 4))
        d = int(rng.choice([2, 2, 3]))
        T, TI, rT, ST = random_sequence(rng, K, [1, 2], d=d)
        E, EI, rE, SE = random_sequence(rng, K, [5, 6, 7] if rng.random() < 0.5 else [5, 6], d=d)
        c, p, gamma = (
            float(rng.choice([1.0, 2.0])),
            float(rng.choice([1.0, 2.0])),
            float(rng.choice([0.5, 1.5])),
        )
        res = nb.ptgospa(
            T,
            TI,
            E,
            EI,
            c=c,
            p=p,
            gamma=gamma,
            truth_existence=rT,
            truth_covariances=ST,
            estimate_existence=rE,
            estimate_covariances=SE,
        )
        want = ptgospa_brute_force(T, TI, rT, ST, E, EI, rE, SE, c, p, gamma)
        assert res.value**p == pytest.approx(want, rel=1e-12, abs=1e-12)
        parts = (res.localization, res.existence_mismatch, res.missed, res.false, res.switches)
        assert sum(parts) == pytest.approx(res.value**p, rel=1e-12, abs=1e-15)
        lp = nb.ptgospa(
            T,
            TI,
            E,
            EI,
            c=c,
            p=p,
            gamma=gamma,
            method="lp",
            truth_existence=rT,
            truth_covariances=ST,
            estimate_existence=rE,
            estimate_covariances=SE,
        )
        assert lp.value <= res.value + 1e-9 and not lp.exact


def test_ptgospa_is_tgospa_for_certain_points():
    rng = np.random.default_rng(21)
    for _ in range(40):
        K = int(rng.integers(1, 7))
        T, TI, _, _ = random_sequence(rng, K, [1, 2, 3], uncertain=False)
        E, EI, _, _ = random_sequence(rng, K, [4, 5, 6, 7], uncertain=False)
        for method in ("exact", "lp"):
            a = nb.tgospa(T, TI, E, EI, c=1.2, p=2.0, gamma=0.8, method=method)
            b = nb.ptgospa(
                T,
                TI,
                E,
                EI,
                c=1.2,
                p=2.0,
                gamma=0.8,
                method=method,
                truth_existence=[np.ones(len(i)) for i in TI],
                estimate_covariances=[np.zeros((len(j), 2, 2)) for j in EI],
            )
            for name in ("value", "localization", "missed", "false", "switches"):
                assert getattr(b, name) == pytest.approx(getattr(a, name), rel=1e-13, abs=1e-13), name
            assert b.existence_mismatch == 0.0
            np.testing.assert_array_equal(a.assignment, b.assignment)


def test_ptgospa_on_one_frame_is_pgospa():
    rng = np.random.default_rng(31)
    for _ in range(60):
        d = int(rng.integers(1, 4))  # the 3-D route computes the Bures part by SVD, frame by frame
        x, y = random_mb(rng, int(rng.integers(0, 5)), d), random_mb(rng, int(rng.integers(0, 5)), d)
        c, p = float(rng.choice([0.8, 2.0])), float(rng.choice([1.0, 2.0]))
        res = nb.ptgospa(
            [x[1]],
            [np.arange(x[0].size)],
            [y[1]],
            [np.arange(y[0].size)],
            c=c,
            p=p,
            truth_existence=[x[0]],
            truth_covariances=[x[2]],
            estimate_existence=[y[0]],
            estimate_covariances=[y[2]],
        )
        ref = nb.pgospa(mb(*x), mb(*y), c=c, p=p)
        assert res.value == pytest.approx(ref.value, rel=1e-13, abs=1e-14)
        assert res.missed + res.false == pytest.approx(ref.missed + ref.false, rel=1e-12, abs=1e-14)


def test_ptgospa_empty_and_zero_existence():
    res = nb.ptgospa([np.empty((0, 2))] * 3, [[]] * 3, [np.empty((0, 2))] * 3, [[]] * 3, c=1.0)
    assert res.value == 0.0 and res.frame_missed.shape == (3,)
    one = nb.ptgospa(
        [[[0.0, 0.0]]],
        [[1]],
        [[[5.0, 5.0]], [[5.0, 5.0]]][:1],
        [[9]],
        c=2.0,
        p=1.0,
        estimate_existence=[[0.0]],
        truth_existence=[[0.25]],
    )
    assert one.value == pytest.approx(0.25) and one.missed == pytest.approx(0.25) and one.false == 0.0
