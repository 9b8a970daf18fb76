"""Independent spot checks of score's measures: T-GOSPA by enumeration, HOTA by hand, NLL by set sums."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import multivariate_normal
from support.paths import ROOT

import nllbench as nb
from nllbench.measures.evaluate import EvaluationSettings
from nllbench.measures.hota import hota
from nllbench.measures.tgospa import tgospa
from nllbench.trackers.scoring import FillIns, score


def _maps(n: int, m: int):
    """Every injective partial map of n truths to m estimates (-1: none), as tuples."""
    out = []
    for pi in itertools.product(range(-1, m), repeat=n):
        used = [j for j in pi if j >= 0]
        if len(used) == len(set(used)):
            out.append(pi)
    return out


def _brute_tgospa(X, Y, c, p, gamma):
    """T-GOSPA (alpha = 2) by enumerating every assignment sequence; X, Y: (K, n|m, d), NaN = absent."""
    K, n, m = X.shape[0], X.shape[1], Y.shape[1]
    maps = _maps(n, m)

    def frame_cost(k, pi):
        cost, paired_x, paired_y = 0.0, set(), set()
        for i, j in enumerate(pi):
            if j >= 0 and not np.isnan(X[k, i, 0]) and not np.isnan(Y[k, j, 0]):
                cost += min(np.linalg.norm(X[k, i] - Y[k, j]), c) ** p
                paired_x.add(i)
                paired_y.add(j)
        lone = sum(1 for i in range(n) if not np.isnan(X[k, i, 0]) and i not in paired_x)
        lone += sum(1 for j in range(m) if not np.isnan(Y[k, j, 0]) and j not in paired_y)
        return cost + c**p / 2 * lone

    def switch(a, b):
        return sum(0 if u == v else (1.0 if u >= 0 and v >= 0 else 0.5) for u, v in zip(a, b, strict=True))

    # dynamic programme over frames (exact: the cost is a chain in pi^1..pi^K)
    best = {pi: frame_cost(0, pi) for pi in maps}
    for k in range(1, K):
        best = {pi: frame_cost(k, pi) + min(best[q] + gamma**p * switch(q, pi) for q in maps) for pi in maps}
    return min(best.values()) ** (1 / p)


def _as_sequences(Z):
    pts, ids = [], []
    for frame in Z:
        keep = ~np.isnan(frame[:, 0])
        pts.append(frame[keep])
        ids.append(np.flatnonzero(keep))
    return pts, ids


def _swapping_case(seed):
    """Tiny sequences where estimates swap the truths they follow mid-way, with gaps (NaN: absent)."""
    rng = np.random.default_rng(100 + seed)
    K, n, m = 4, 2 + seed % 2, 2 + (seed // 2) % 2
    X = rng.uniform(0, 3, (K, n, 2))
    Y = rng.uniform(0, 3, (K, m, 2))
    swap = int(rng.integers(1, K))
    follow = rng.permutation(n)
    for k in range(K):
        follow = rng.permutation(n) if k == swap else follow
        for j in range(min(n, m)):
            Y[k, j] = X[k, follow[j]] + rng.normal(0, 0.3, 2)
    X[rng.random((K, n)) < 0.2] = np.nan
    Y[rng.random((K, m)) < 0.2] = np.nan
    return X, Y


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_tgospa_equals_enumeration_p2_gamma_not_c(seed):
    X, Y = _swapping_case(seed)
    c = 1.5
    xs, xi = _as_sequences(X)
    ys, yi = _as_sequences(Y)
    values = []
    for gamma in (0.3, 0.9):
        r = tgospa(xs, xi, ys, yi, c=c, p=2, gamma=gamma)
        assert r.value == pytest.approx(_brute_tgospa(X, Y, c, 2, gamma), rel=1e-9, abs=1e-12)
        assert r.localization + r.missed + r.false + r.switches == pytest.approx(r.value**2, rel=1e-9)
        values.append(r.value)
    assert values[0] < values[1]  # the switch term is exercised: a dearer switch costs more


def test_hota_by_hand():
    # truth 1 at the origin in 3 frames; estimate A at distance 1 (S = 1/2), then A on it, then B on it
    truth = [[[0.0, 0.0]]] * 3
    est = [[[1.0, 0.0]], [[0.0, 0.0]], [[0.0, 0.0]]]
    r = hota(truth, [[1]] * 3, est, [[10], [10], [11]], threshold=2.0)
    # alpha <= 0.5 (10 thresholds): 3 TP; AssA = (2 * 2/3 + 1/3) / 3 = 5/9; LocA = (1/2 + 1 + 1) / 3
    # alpha >= 0.55 (9 thresholds): TP = 2, FN = FP = 1, DetA = 1/2; AssA = (1/4 + 1/3) / 2 = 7/24; LocA = 1
    low, high = slice(0, 10), slice(10, 19)
    assert r.tp[low].tolist() == [3] * 10 and r.tp[high].tolist() == [2] * 9
    np.testing.assert_allclose(r.deta_alpha[low], 1.0)
    np.testing.assert_allclose(r.deta_alpha[high], 0.5)
    np.testing.assert_allclose(r.assa_alpha[low], 5 / 9)
    np.testing.assert_allclose(r.assa_alpha[high], 7 / 24)
    assert r.hota == pytest.approx((10 * math.sqrt(5 / 9) + 9 * math.sqrt(7 / 48)) / 19)
    assert r.deta == pytest.approx(14.5 / 19)
    assert r.assa == pytest.approx((10 * 5 / 9 + 9 * 7 / 24) / 19)
    assert r.loca == pytest.approx((10 * 5 / 6 + 9) / 19)


def _set_density(Y, hypotheses, weights, rate, low, high):
    """f(Y) of a PMBM by the set-partition sum: sum_h w_h sum_{Y0 + Y1 + ... = Y} f_ppp(Y0) prod f_i(Y_i)."""
    vol = float(np.prod(np.subtract(high, low)))
    total = 0.0
    for (r, means, covs), w in zip(hypotheses, weights, strict=True):
        n = len(r)
        # each truth goes to the PPP (-1) or to one Bernoulli, each Bernoulli taking at most one
        for pi in itertools.product(range(-1, n), repeat=len(Y)):
            used = [i for i in pi if i >= 0]
            if len(used) != len(set(used)):
                continue
            term = math.exp(-rate)
            for y, i in zip(Y, pi, strict=True):
                inside = np.all((y >= low) & (y <= high))
                term *= (
                    (rate / vol if inside else 0.0)
                    if i < 0
                    else r[i] * multivariate_normal(means[i], covs[i]).pdf(y)
                )
            for i in range(n):
                if i not in used:
                    term *= 1 - r[i]
            total += w * term
    return total


def test_mixture_table_nll_equals_set_sum_and_nb_nll():
    # two frames, two global hypotheses each (one with no Bernoulli in frame 1), uniform undetected PPP
    rows = [
        # frame, hypothesis, weight, r, x, y, var_x, var_y, cov_x_y
        (0, 0, 0.7, 0.9, 1.0, 1.0, 0.5, 0.4, 0.1),
        (0, 0, 0.7, 0.6, 4.0, 3.0, 0.3, 0.3, 0.0),
        (0, 1, 0.3, 0.8, 1.5, 0.5, 0.6, 0.6, -0.2),
        (1, 0, 0.4, 0.7, 2.0, 2.0, 0.5, 0.5, 0.0),
        (1, 1, 0.6, None, None, None, None, None, None),
    ]
    tracks = pd.DataFrame(
        rows, columns=["frame", "hypothesis", "weight", "r", "x", "y", "var_x", "var_y", "cov_x_y"]
    )
    truth = pd.DataFrame({"frame": [0, 0, 1], "id": [1, 2, 1], "x": [1.2, 6.0, 2.3], "y": [0.9, 6.0, 1.8]})
    low, high, rate = (0.0, 0.0), (10.0, 8.0), 0.3
    with pytest.warns(UserWarning, match="no column 'id'"):
        res = score(tracks, truth, fill=FillIns(rate, low, high), settings=EvaluationSettings(qs=(1, 100)))
    hyps = {
        0: (
            [
                ([0.9, 0.6], [[1, 1], [4, 3]], [[[0.5, 0.1], [0.1, 0.4]], np.diag([0.3, 0.3])]),
                ([0.8], [[1.5, 0.5]], [[[0.6, -0.2], [-0.2, 0.6]]]),
            ],
            [0.7, 0.3],
        ),
        1: ([([0.7], [[2, 2]], [np.diag([0.5, 0.5])]), ([], [], [])], [0.4, 0.6]),
    }
    per_frame = res.per_frame()
    ppp = nb.PPP.uniform(rate, low, high)
    for k, (hs, ws) in hyps.items():
        Y = truth[truth.frame == k][["x", "y"]].to_numpy()
        expected = -math.log(_set_density(Y, hs, ws, rate, np.array(low), np.array(high)))
        assert per_frame.nll_q100[k] == pytest.approx(expected, rel=1e-10)
        mbs = tuple(
            nb.MultiBernoulli.gaussian(
                np.array(r, dtype=float),
                np.array(m, dtype=float).reshape(-1, 2),
                np.array(P, dtype=float).reshape(-1, 2, 2),
            )
            for r, m, P in hs
        )
        by_hand = nb.nll(nb.PMBM(ppp, mbs, np.array(ws)), Y, q=100)
        assert per_frame.nll_q100[k] == pytest.approx(by_hand.value, rel=1e-12)


@pytest.mark.parametrize(("cov_scale", "temper"), [(1.0, 1.0), (3.0, 1.0), (1.0, 2.5)])
def test_fitted_rate_is_the_ml_rate_of_the_scored_density(cov_scale, temper):
    # the fit's objective at its rate equals the total NLL that score() reports at that rate,
    # probes included, and a small step either way does not lower it
    rng = np.random.default_rng(11)
    frames = np.repeat(np.arange(5), 3)
    truth = pd.DataFrame({"frame": frames, "id": np.tile([1, 2, 3], 5)})
    truth["x"], truth["y"] = rng.uniform(0, 20, frames.size), rng.uniform(0, 20, frames.size)
    tracks = truth[truth.id != 3].drop(columns="id").copy()  # the third object is never tracked
    tracks["x"] += rng.normal(0, 0.5, len(tracks))
    tracks["r"], tracks["var_x"], tracks["var_y"] = 0.7, 0.5, 0.5
    settings = EvaluationSettings(qs=(50,), cov_scale=cov_scale, temper=temper)
    box = ((0.0, 0.0), (20.0, 20.0))
    from nllbench.trackers.scoring import fit_undetected_rate

    fit = fit_undetected_rate(tracks, truth, fill=FillIns(0.0, *box), settings=settings)
    assert 0 < fit["rate"] < 3.0

    def total(rate):
        with pytest.warns(UserWarning, match="no column 'id'"):
            res = score(tracks, truth, fill=FillIns(rate, *box), settings=settings)
        return float(res.per_frame().nll_q50.sum())

    assert fit["calibration_nll"] == pytest.approx(total(fit["rate"]), rel=1e-9)
    assert total(fit["rate"]) <= min(total(fit["rate"] * 0.98), total(fit["rate"] * 1.02))


def test_example_mixture_file_nll_equals_set_sum_every_frame():

    examples = ROOT / "docs" / "examples"
    low, high, rate = np.zeros(2), np.full(2, 100.0), 0.5
    res = score(
        examples / "tracks_mixture.csv",
        examples / "truth.csv",
        frames=[0, 1, 2, 3],
        fill=FillIns(rate, tuple(low), tuple(high)),
        settings=EvaluationSettings(qs=(50,)),
    )
    raw = pd.read_csv(
        examples / "tracks_mixture.csv"
    )  # read here with pandas alone, not nllbench.trackers.tracks
    truth = pd.read_csv(examples / "truth.csv")
    assert res.frames.tolist() == [0, 1, 2, 3]
    for k in range(4):
        hs, ws = [], []
        for _, g in raw[raw.frame == k].groupby("hypothesis"):
            g = g.dropna(subset=["x"])
            covs = [np.diag([a, b]) for a, b in zip(g.var_x, g.var_y, strict=True)]
            hs.append((g.r.tolist(), g[["x", "y"]].to_numpy(), covs))
        ws = raw[raw.frame == k].groupby("hypothesis").weight.first().tolist()
        if not hs:  # a frame with no row: one hypothesis without Bernoullis
            hs, ws = [([], [], [])], [1.0]
        Y = truth[truth.frame == k][["x", "y"]].to_numpy()
        expected = -math.log(_set_density(Y, hs, ws, rate, low, high))
        assert res.per_frame().nll[k] == pytest.approx(expected, rel=1e-10)
