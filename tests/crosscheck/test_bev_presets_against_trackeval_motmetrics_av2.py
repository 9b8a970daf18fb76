"""3-D and bird's-eye presets against the peers: TrackEval's CLEAR, py-motmetrics fed the devkits'
distances, the av2 package's own evaluation (each skipped without it)."""

from __future__ import annotations

import contextlib
import io
import math
import warnings

import numpy as np
import pytest
from support.bev_cases import ONE, XYZ, random_frames, scored, spd, tables

from nllbench.measures._sequences import distances
from nllbench.measures.metrics import clear_mot, identity_scores
from nllbench.measures.presets import chi_square_gate


def trackeval_clear(T, TI, E, EI, zero_distance, monkeypatch):
    """TrackEval's CLEAR (threshold 0.5) on S = max(0, 1 - d / zero_distance), ids mapped to 0..n-1."""
    for alias, typ in (("float", float), ("int", int), ("bool", bool)):
        monkeypatch.setattr(np, alias, typ, raising=False)  # numpy-2 shims, for this test only
    metrics = pytest.importorskip("trackeval.metrics")
    gt_all = np.unique(np.concatenate([np.asarray(i, dtype=int) for i in TI] + [np.empty(0, dtype=int)]))
    tr_all = np.unique(np.concatenate([np.asarray(i, dtype=int) for i in EI] + [np.empty(0, dtype=int)]))
    sims = [np.maximum(0.0, 1.0 - distances(Y, X) / zero_distance) for Y, X in zip(T, E, strict=True)]
    data = {
        "num_timesteps": len(T),
        "num_gt_dets": sum(len(y) for y in T),
        "num_tracker_dets": sum(len(x) for x in E),
        "num_gt_ids": gt_all.size,
        "num_tracker_ids": tr_all.size,
        "gt_ids": [np.searchsorted(gt_all, np.asarray(i, dtype=int)) for i in TI],
        "tracker_ids": [np.searchsorted(tr_all, np.asarray(i, dtype=int)) for i in EI],
        "similarity_scores": sims,
    }
    return metrics.CLEAR({"THRESHOLD": 0.5, "PRINT_CONFIG": False}).eval_sequence(data)


@pytest.mark.parametrize("seed", range(30))
def test_trackeval_rule_agrees_with_trackeval_clear(seed, monkeypatch):
    rng = np.random.default_rng(seed)
    T, TI, E, EI = random_frames(rng, int(rng.integers(1, 12)))
    t = float(rng.choice([0.5, 1.0, 1.5]))
    ref = trackeval_clear(T, TI, E, EI, 2 * t, monkeypatch)
    ours = clear_mot(T, TI, E, EI, t, rule="trackeval")
    assert ours.matches + ours.switches == ref["CLR_TP"]
    assert (ours.misses, ours.false_positives, ours.switches) == (ref["CLR_FN"], ref["CLR_FP"], ref["IDSW"])
    if ref["CLR_TP"] + ref["CLR_FN"]:
        assert ours.mota == pytest.approx(ref["MOTA"], abs=1e-12)
    if ref["CLR_TP"]:
        assert 1.0 - ours.motp / (2 * t) == pytest.approx(ref["MOTP"], abs=1e-12)


def nuscenes_frames(rng, K):
    """Truths on a 1/64 grid; tracks exactly 2 m off in x or y (the gate's edge), or off by Gaussian noise."""
    T, TI, E, EI = [], [], [], []
    for _ in range(K):
        n = int(rng.integers(0, 5))
        Y = rng.integers(0, 320, (n, 3)) / 64.0
        ids = rng.choice(6, n, replace=False)
        keep = rng.random(n) < 0.8
        X = Y[keep] + rng.normal(0, 1.0, (int(keep.sum()), 3))
        edge = rng.random(len(X)) < 0.3
        X[edge] = Y[keep][edge] + np.array([2.0, 0.0, 0.7]) * rng.choice([-1, 1], (int(edge.sum()), 1))
        hid = rng.permutation(7)[: len(X)] + 20
        fp = int(rng.integers(0, 2))
        T.append(Y)
        TI.append(ids)
        E.append(np.concatenate([X, rng.uniform(0, 5, (fp, 3))]))
        EI.append(np.concatenate([hid, 40 + rng.choice(5, fp, replace=False)]))
    return T, TI, E, EI


def test_nuscenes_preset_agrees_with_motmetrics_fed_the_devkits_distances():
    """nuScenes' accumulate step: x, y centre distances, those >= 2 m set to NaN, py-motmetrics' MOTA/IDF1."""
    mm = pytest.importorskip("motmetrics")
    rng = np.random.default_rng(5)
    edges = 0
    for _ in range(15):
        K = int(rng.integers(2, 8))
        T, TI, E, EI = nuscenes_frames(rng, K)
        acc = mm.MOTAccumulator(auto_id=True)
        for Y, oid, X, hid in zip(T, TI, E, EI, strict=True):
            d = distances(Y[:, :2], X[:, :2])
            edges += int(np.sum(d == 2.0))
            d[d >= 2.0] = np.nan
            acc.update(oid, hid, d)
        names = ["mota", "motp", "num_switches", "num_misses", "num_false_positives", "idf1", "num_objects"]
        ref = mm.metrics.create().compute(acc, metrics=names, name="run").iloc[0]
        truth_rows = [(k, i, *x) for k in range(K) for i, x in zip(TI[k], T[k], strict=True)]
        track_rows = [(k, i, *x) for k in range(K) for i, x in zip(EI[k], E[k], strict=True)]
        Tt, Et = tables(truth_rows, track_rows)
        ours = scored(Et, Tt, range(K), settings=ONE, preset="nuscenes")
        assert (ours.clear.switches, ours.clear.misses) == (ref.num_switches, ref.num_misses)
        assert ours.clear.false_positives == ref.num_false_positives
        if ref.num_objects:
            assert ours.clear.mota == pytest.approx(ref.mota, abs=1e-12)
            assert ours.identity.idf1 == pytest.approx(ref.idf1, abs=1e-12)
        if ours.clear.matches + ours.clear.switches:
            assert ours.clear.motp == pytest.approx(ref.motp, abs=1e-12)
    assert edges > 5  # pairs exactly at the gate were exercised


def test_mahalanobis_clear_mot_agrees_with_motmetrics_fed_the_explicit_distances():
    """Per-track covariances: py-motmetrics on (x - m)^T P^-1 (x - m) computed with an explicit inverse."""
    mm = pytest.importorskip("motmetrics")
    rng = np.random.default_rng(11)
    gate = chi_square_gate(0.99, 2)
    for _ in range(25):
        T, TI, E, EI = random_frames(rng, int(rng.integers(1, 8)), box=3.0)
        covs = [spd(rng, len(x), 2, 0.3) for x in E]
        acc = mm.MOTAccumulator(auto_id=True)
        for Y, oid, X, hid, P in zip(T, TI, E, EI, covs, strict=True):
            d = np.empty((len(Y), len(X)))
            for i in range(len(Y)):
                for j in range(len(X)):
                    e = Y[i] - X[j]
                    d[i, j] = math.sqrt(e @ np.linalg.inv(P[j]) @ e)
            acc.update(oid, hid, np.where(d <= gate, d, np.nan))
        names = ["mota", "motp", "num_switches", "num_misses", "num_false_positives", "idf1", "num_objects"]
        ref = mm.metrics.create().compute(acc, metrics=names, name="run").iloc[0]
        ours = clear_mot(T, TI, E, EI, gate, estimate_covs=covs)
        ids = identity_scores(T, TI, E, EI, gate, estimate_covs=covs)
        assert (ours.switches, ours.misses, ours.false_positives) == (
            ref.num_switches,
            ref.num_misses,
            ref.num_false_positives,
        )
        if ref.num_objects:
            assert ours.mota == pytest.approx(ref.mota, abs=1e-12)
            assert ids.idf1 == pytest.approx(ref.idf1, abs=1e-12)
        if ours.matches + ours.switches:
            assert ours.motp == pytest.approx(ref.motp, abs=1e-12)


def av2_scene(seed, K=15, n=5):
    """Objects moving in 3-D; tracks with x, y noise 0.7 m, z noise 3 m, swaps, misses and false tracks."""
    rng = np.random.default_rng(seed)
    truth, tracks = [], []
    pos, vel = rng.uniform(0, 12, (n, 3)), rng.normal(0, 0.6, (n, 3))
    labels = np.arange(n) + 100
    for k in range(K):
        pos = pos + vel
        on = np.flatnonzero(rng.random(n) < 0.85)
        truth += [(k, i, *pos[i]) for i in on]
        if rng.random() < 0.2:
            labels = rng.permutation(labels)
        for i in on[rng.random(on.size) < 0.85]:
            tracks.append((k, labels[i], *(pos[i] + np.r_[rng.normal(0, 0.7, 2), rng.normal(0, 3.0)])))
        for j in range(rng.poisson(0.5)):
            tracks.append((k, 500 + 10 * k + j, *rng.uniform(0, 12, 3)))
    T, E = tables(truth, tracks)
    return T, E, K


def av2_frames(df, K, score):
    """The av2 tracking evaluation's frame dictionaries (one sequence, one class, unit boxes)."""
    out = []
    for k in range(K):
        d = df[df.frame == k]
        n = len(d)
        f = {
            "seq_id": "log",
            "timestamp_ns": 10**8 * (k + 1),
            "track_id": d["id"].to_numpy(int),
            "translation_m": d[list(XYZ)].to_numpy(float).reshape(n, 3),
            "size": np.ones((n, 3)),
            "yaw": np.zeros(n),
            "velocity_m_per_s": np.zeros((n, 3)),
            "label": np.zeros(n, dtype=int),
            "name": np.array(["REGULAR_VEHICLE"] * n),
        }
        if score:
            f["score"] = np.full(n, 0.9)
        out.append(f)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(5))
def test_av2_preset_agrees_with_the_av2_packages_own_evaluation(seed, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # av2 restores removed numpy aliases with FutureWarnings
        av2_eval = pytest.importorskip("av2.evaluation.tracking.eval")
    T, E, K = av2_scene(seed)
    with contextlib.redirect_stdout(io.StringIO()):
        res = av2_eval.evaluate_tracking(
            {"log": av2_frames(T, K, False)},
            {"log": av2_frames(E, K, True)},
            ["REGULAR_VEHICLE"],
            "tracker",
            str(tmp_path),
        )
    ref = res["TrackEvalDataset"]["tracker"]["COMBINED_SEQ"]["REGULAR_VEHICLE"]
    ours = scored(E, T, range(K), settings=ONE, preset="av2")
    for mine, theirs in (
        ("hota_alpha", "HOTA"),
        ("deta_alpha", "DetA"),
        ("assa_alpha", "AssA"),
        ("loca_alpha", "LocA"),
    ):
        np.testing.assert_allclose(getattr(ours.hota, mine), ref["HOTA"][theirs], rtol=0, atol=1e-12)
    clear = ref["CLEAR"]
    assert ours.clear.matches + ours.clear.switches == clear["CLR_TP"]
    assert (ours.clear.misses, ours.clear.false_positives, ours.clear.switches) == (
        clear["CLR_FN"],
        clear["CLR_FP"],
        clear["IDSW"],
    )
    assert ours.clear.mota == pytest.approx(clear["MOTA"], abs=1e-12)
    assert 1.0 - ours.clear.motp / 2.0 == pytest.approx(clear["MOTP"], abs=1e-12)
