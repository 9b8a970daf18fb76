"""Cross-checks of HOTA, trajectory GOSPA and NEES with independent routes and peers' packages.

TrackEval (PyPI ``trackeval``, optional extra ``crosscheck``) is skipped when missing.
"""

from __future__ import annotations

import numpy as np
import pytest

from nllbench.measures.metrics import hota, tgospa


def returning_frames(rng, K, n_ids=6, m_ids=7, box=4.0):
    """Random frames, some empty, with identities that disappear and come back."""
    T, TI, E, EI = [], [], [], []
    for _ in range(K):
        n = int(rng.integers(0, 5)) if rng.random() > 0.15 else 0
        m = int(rng.integers(0, 5)) if rng.random() > 0.15 else 0
        T.append(rng.uniform(0, box, (n, 2)))
        TI.append(rng.choice(n_ids, n, replace=False) * 3 + 1)  # sparse, non-contiguous ids
        E.append(rng.uniform(0, box, (m, 2)))
        EI.append(rng.choice(m_ids, m, replace=False) - 2)
    return T, TI, E, EI


def trackeval_hota(T, TI, E, EI, threshold, monkeypatch):
    """TrackEval's HOTA fed the same similarity scores (ids mapped to 0..n-1 as it requires)."""
    for alias, typ in (("float", float), ("int", int), ("bool", bool)):
        monkeypatch.setattr(np, alias, typ, raising=False)  # numpy-2 shims, for this test only
    metrics = pytest.importorskip("trackeval.metrics")
    gt_all = np.unique(np.concatenate([np.asarray(i, dtype=int) for i in TI] + [np.empty(0, dtype=int)]))
    tr_all = np.unique(np.concatenate([np.asarray(i, dtype=int) for i in EI] + [np.empty(0, dtype=int)]))
    sims = []
    for Y, X in zip(T, E, strict=True):
        d = (
            np.linalg.norm(Y[:, None, :] - X[None, :, :], axis=2)
            if len(Y) and len(X)
            else np.zeros((len(Y), len(X)))
        )
        sims.append(np.maximum(0.0, 1.0 - d / threshold))
    data = {
        "num_gt_dets": sum(len(y) for y in T),
        "num_tracker_dets": sum(len(x) for x in E),
        "num_gt_ids": gt_all.size,
        "num_tracker_ids": tr_all.size,
        "gt_ids": [np.searchsorted(gt_all, np.asarray(i, dtype=int)) for i in TI],
        "tracker_ids": [np.searchsorted(tr_all, np.asarray(i, dtype=int)) for i in EI],
        "similarity_scores": sims,
    }
    return metrics.HOTA().eval_sequence(data)


@pytest.mark.parametrize("seed", range(40))
def test_hota_agrees_with_trackeval(seed, monkeypatch):
    rng = np.random.default_rng(seed)
    T, TI, E, EI = returning_frames(rng, int(rng.integers(1, 15)))
    threshold = float(rng.choice([1.0, 2.0, 3.0]))
    ref = trackeval_hota(T, TI, E, EI, threshold, monkeypatch)
    ours = hota(T, TI, E, EI, threshold)
    for mine, theirs in (
        ("hota_alpha", "HOTA"),
        ("deta_alpha", "DetA"),
        ("assa_alpha", "AssA"),
        ("loca_alpha", "LocA"),
        ("det_re_alpha", "DetRe"),
        ("det_pr_alpha", "DetPr"),
        ("ass_re_alpha", "AssRe"),
        ("ass_pr_alpha", "AssPr"),
        ("tp", "HOTA_TP"),
        ("fn", "HOTA_FN"),
        ("fp", "HOTA_FP"),
    ):
        np.testing.assert_allclose(getattr(ours, mine), ref[theirs], rtol=0, atol=1e-9, err_msg=mine)
    assert ours.hota == pytest.approx(float(np.mean(ref["HOTA"])), abs=1e-9)
    assert ours.loca == pytest.approx(float(np.mean(ref["LocA"])), abs=1e-9)


def test_hota_agrees_with_trackeval_on_tracker_like_sequences(monkeypatch):
    """Estimates that follow the truth with noise, swaps and gaps (most pairs match)."""
    rng = np.random.default_rng(7)
    for _ in range(10):
        K, n = 20, 5
        pos = rng.uniform(0, 10, (n, 2))
        labels = np.arange(n)
        T, TI, E, EI = [], [], [], []
        for _k in range(K):
            pos = pos + rng.normal(0, 0.3, pos.shape)
            on = np.flatnonzero(rng.random(n) < 0.85)
            T.append(pos[on].copy())
            TI.append(on)
            if rng.random() < 0.2:
                labels = rng.permutation(labels)
            seen = on[rng.random(on.size) < 0.85]
            E.append(pos[seen] + rng.normal(0, 0.4, (seen.size, 2)))
            EI.append(labels[seen] + 50)
        ref = trackeval_hota(T, TI, E, EI, 2.0, monkeypatch)
        ours = hota(T, TI, E, EI, 2.0)
        np.testing.assert_allclose(ours.hota_alpha, ref["HOTA"], rtol=0, atol=1e-9)
        np.testing.assert_allclose(ours.assa_alpha, ref["AssA"], rtol=0, atol=1e-9)
        np.testing.assert_allclose(ours.loca_alpha, ref["LocA"], rtol=0, atol=1e-9)


def test_tgospa_without_switch_cost_is_the_sum_of_frame_gospa():
    """gamma -> 0: the per-frame GOSPA assignments are free to change, so d^p = sum_k GOSPA_k^p."""
    from nllbench.measures.metrics import gospa

    rng = np.random.default_rng(11)
    for _ in range(20):
        T, TI, E, EI = returning_frames(rng, int(rng.integers(1, 10)))
        gamma = 1e-7
        r = tgospa(T, TI, E, EI, c=2.0, p=1, gamma=gamma)
        frames = sum(gospa(X, Y, c=2.0, p=1).value for X, Y in zip(E, T, strict=True))
        n_truth = len({int(i) for f in TI for i in f})
        assert frames - 1e-12 <= r.value <= frames + gamma * n_truth * len(T) + 1e-12


def test_tgospa_below_frame_gospa_plus_its_switches():
    """The per-frame GOSPA assignment sequence is one candidate: T-GOSPA^p is at most its cost."""
    from nllbench.measures.metrics import gospa

    rng = np.random.default_rng(12)
    for _ in range(20):
        T, TI, E, EI = returning_frames(rng, int(rng.integers(2, 10)))
        gamma, total, before = 1.0, 0.0, {}
        for X, hid, Y, oid in zip(E, EI, T, TI, strict=True):
            g = gospa(X, Y, c=2.0, p=1)
            total += g.value
            now = {int(oid[t]): int(hid[e]) for e, t in g.assignment}
            for i in {int(i) for f in TI for i in f}:
                a, b = before.get(i), now.get(i)
                total += 0.0 if a == b else (gamma if a is not None and b is not None else gamma / 2)
            before = now
        assert tgospa(T, TI, E, EI, c=2.0, p=1, gamma=gamma).value <= total + 1e-9


def test_nees_panel_against_scipy_chi2():
    """Step counts against NEES, ellipse test and PIT computed directly with scipy.stats.chi2."""
    from scipy.stats import chi2

    import nllbench as nb
    from nllbench.measures.calibration import step_counts

    rng = np.random.default_rng(21)
    for d in (2, 3):
        M = 30
        means = np.zeros((M, d))
        means[:, 0] = 100.0 * np.arange(M)  # far apart: each truth is matched to its own Bernoulli
        A = rng.normal(size=(M, d, d))
        covs = A @ np.swapaxes(A, 1, 2) + 0.5 * np.eye(d)
        y = np.array([rng.multivariate_normal(means[k], 2.0 * covs[k]) for k in range(M)])
        mb = nb.MultiBernoulli.gaussian(np.full(M, 0.9), means, covs)
        c = step_counts(mb, y, nb.nll(mb, y))
        direct = np.array([(y[k] - means[k]) @ np.linalg.inv(covs[k]) @ (y[k] - means[k]) for k in range(M)])
        assert c.nees_pairs == M and c.nees_sum == pytest.approx(direct.sum(), rel=1e-10)
        assert c.nees_inside == int(np.sum(chi2.cdf(direct, d) <= 0.95))
        np.testing.assert_array_equal(
            c.pit_count, np.histogram(chi2.cdf(direct, d), bins=10, range=(0, 1))[0]
        )
        lo, hi = c.anees_interval()
        assert (lo * M, hi * M) == pytest.approx(chi2.interval(0.95, M * d), rel=1e-10)
