"""nrl-tracker (``pytcl``) trackers run for real, converted by :mod:`nllbench.trackers.nrl` and scored.

Skipped without nrl-tracker (the ``crosscheck`` extra).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit
from support.paths import ROOT

import nllbench as nb
from nllbench.measures.evaluate import EvaluationSettings
from nllbench.simulation.scenarios import get_scenario, simulate, simulate_measurements
from nllbench.store.scenario import ScenarioData
from nllbench.trackers.nrl import (
    mht_frame,
    mht_model,
    run_mht,
    tracks_from_bernoulli,
    tracks_from_gnn,
    tracks_from_mht,
)
from nllbench.trackers.scoring import FillIns, score
from nllbench.trackers.stonesoup_tracker import truth_table
from nllbench.trackers.tracks import validate_tracks

pytcl = pytest.importorskip("pytcl")
trackers = pytest.importorskip("pytcl.trackers")

FOV = ((0.0, 0.0), (300.0, 300.0))


def williams(steps: int, seed: int = 1) -> ScenarioData:
    sc = get_scenario("williams15", steps=steps)
    sim = simulate(sc, np.random.default_rng(seed), seed=seed)
    return ScenarioData(sim.truth, sim.truth_ids, sim.measurements, sim.origins, sc.model)


@pytest.fixture(scope="module")
def mht_run():
    """8 steps of williams15 through a real MHTTracker; per step its scan and a copy of its tree."""
    data = williams(8)
    model = mht_model(data)
    config = trackers.MHTConfig(
        max_hypotheses=20,
        detection_prob=model["detection_prob"],
        clutter_density=model["clutter_density"],
        new_track_weight=model["new_track_weight"],
    )
    tracker = trackers.MHTTracker(
        4, 2, model["F"], model["H"], model["Q"], model["R"], config, model["init_covariance"]
    )
    scans, trees, best = [], [], []
    for Z in data.measurements:
        tracker.process(list(Z), dt=1.0)
        scans.append(mht_frame(tracker))
        trees.append((list(tracker.hypothesis_tree.hypotheses), dict(tracker.hypothesis_tree.tracks)))
        best.append(tracker.tracks)
    return data, scans, trees, best


def test_mht_table_carries_the_trackers_hypotheses_weights_and_scores(mht_run):
    data, scans, trees, best = mht_run
    df = tracks_from_mht(scans, mapping=(0, 1))
    t = validate_tracks(df)  # weights one per hypothesis and summing to 1, ids unique per hypothesis
    assert t.score is not None and t.r is None and t.hypothesis is not None
    assert sorted(set(df.frame)) == list(range(data.steps))
    assert np.isfinite(df[["score", "x", "y", "var_x", "var_y", "cov_x_y"]].to_numpy()).all()
    for k, (hyps, _) in enumerate(trees):
        f = df[df.frame == k]
        w = f.groupby("hypothesis")["weight"].first()
        # the tracker's own probabilities, heaviest first, summing to 1
        assert list(w) == sorted((h.probability for h in hyps), reverse=True)
        assert w.sum() == pytest.approx(1.0, abs=1e-12)
        assert len(f) == sum(max(len(h.track_ids), 1) for h in hyps)
        # hypothesis 0 is the tracker's best: its branches' means and scores exactly
        mine = sorted(map(tuple, f[f.hypothesis == 0][["x", "y", "score"]].to_numpy()))
        theirs = sorted((float(b.state[0]), float(b.state[1]), float(b.score)) for b in best[k])
        assert mine == theirs


def test_mht_ids_are_track_families_born_from_a_measurement_of_their_frame(mht_run):
    data, scans, trees, _ = mht_run
    df = tracks_from_mht(scans, mapping=(0, 1))
    first = df.groupby("id")["frame"].min()
    for fam, k0 in first.items():
        frames = sorted(set(df.frame[df.id == fam]))
        assert frames == list(range(k0, frames[-1] + 1))  # an id never comes back once gone
        born = df[(df.id == fam) & (df.frame == k0)][["x", "y"]].to_numpy()
        # frame alignment: a track is born at the scan of its measurement, frame k0 = step k0
        gap = np.abs(born[:, None, :] - data.measurements[k0][None, :, :]).max(axis=2).min(axis=1)
        assert gap.max() < 1e-9
    # every branch of id f in frame k has one association (hit or miss) per scan since its birth
    for k, scan in enumerate(scans):
        _, branches = trees[k]
        for fam, b in zip(scan.family, scan.branch, strict=True):
            assert len(branches[int(b)].history) == k - first[fam] + 1


def test_mht_scored_equals_the_nll_of_the_trackers_own_mixture(mht_run):
    data, scans, trees, _ = mht_run
    df = tracks_from_mht(scans, mapping=(0, 1), existence="log_odds")
    assert df.r.between(0, 1).all()
    res = score(
        df,
        truth_table(data),
        frames=list(range(data.steps)),
        fill=FillIns(0.3, *FOV),
        settings=EvaluationSettings(qs=(3,)),
    )
    values = res.metrics.nll["value"][:, 0]
    assert np.isfinite(values).all()
    ppp = nb.PPP.uniform(0.3, *FOV)
    for k, (hyps, branches) in enumerate(trees):
        mbs = []
        for h in hyps:
            b = [branches[i] for i in h.track_ids]
            mbs.append(
                nb.MultiBernoulli.gaussian(
                    expit([x.score for x in b]),
                    np.array([x.state[:2] for x in b]).reshape(-1, 2),
                    np.array([x.covariance[:2, :2] for x in b]).reshape(-1, 2, 2),
                )
            )
        expected = nb.nll(
            nb.PMBM(ppp, tuple(mbs), np.array([h.probability for h in hyps])), data.truth[k][:, :2], q=3
        )
        assert values[k] == pytest.approx(expected.value, rel=1e-9)


def test_mht_best_and_confirmed_views(mht_run):
    data, scans, _, best = mht_run
    top = tracks_from_mht(scans, mapping=(0, 1), hypotheses="best", tracks="confirmed")
    assert "hypothesis" not in top.columns and "weight" not in top.columns
    for k in range(data.steps):
        confirmed = [b for b in best[k] if b.status == trackers.MHTTrackStatus.CONFIRMED]
        assert sorted(top[top.frame == k].x) == sorted(float(b.state[0]) for b in confirmed)
    assert len(top) < len(tracks_from_mht(scans, mapping=(0, 1), hypotheses="best"))
    # every hypothesis kept; one without a confirmed branch is a placeholder row of its weight
    conf = tracks_from_mht(scans, mapping=(0, 1), tracks="confirmed")
    t = validate_tracks(conf)
    first = conf[conf.frame == 0]
    assert (
        len(first) == 1 and first.weight.iloc[0] == 1.0 and first[["id", "x", "score"]].isna().all(axis=None)
    )
    per_frame = conf.groupby("frame")["hypothesis"].nunique()
    assert list(per_frame) == [s.weights.size for s in scans] and t.placeholder.sum() >= 1
    shifted = tracks_from_mht(scans, list(range(10, 10 + data.steps)), mapping=(0, 1))
    assert sorted(set(shifted.frame)) == list(range(10, 10 + data.steps))
    with pytest.raises(ValueError, match="frames: expected 8 integers"):
        tracks_from_mht(scans, [0, 1])
    with pytest.raises(ValueError, match="existence: expected one of"):
        tracks_from_mht(scans, existence="probability")
    with pytest.raises(ValueError, match="hypotheses: expected 'all' or 'best'"):
        tracks_from_mht(scans, hypotheses="map")


def test_run_mht_on_a_scenario_gives_the_tables_of_the_tracker():
    data = williams(4, seed=3)
    scans = run_mht(data, max_hypotheses=10)
    assert len(scans) == 4 and all(s.weights.size <= 10 for s in scans)
    assert all(abs(s.weights.sum() - 1) < 1e-12 for s in scans)
    assert np.all(np.diff(scans[-1].weights) <= 0)  # heaviest first
    # a new track starts at its measurement, with R on the position and the birth's velocity spread
    first = scans[0]
    np.testing.assert_allclose(first.covs[0], np.diag([1.0, 1.0, 1.0, 1.0]), atol=1e-12)
    assert first.family.size == len(data.measurements[0]) and (first.scores == first.scores[0]).all()


def one_object_scene(steps=24, born=3, died=16, seed=2):
    """A single constant-velocity object present at steps born..died-1, with clutter 2 per scan."""
    sc = get_scenario("williams15", clutter_rate=2.0, steps=steps)
    m = sc.model
    x = np.array([120.0, 150.0, 1.0, 0.5])
    truth, ids = [], []
    for k in range(steps):
        present = born <= k < died
        truth.append(x.reshape(1, 4).copy() if present else np.empty((0, 4)))
        ids.append(np.zeros(int(present), dtype=np.int64))
        if present:
            x = m.F @ x
    meas, origins = simulate_measurements(m, truth, ids, np.random.default_rng(seed))
    return ScenarioData(truth, ids, meas, origins, m)


def run_bernoulli(data):
    m = data.model
    cfg = trackers.BernoulliConfig(
        birth_prob=0.05,
        survival_prob=m.p_survival,
        detection_prob=m.p_detection,
        clutter_intensity=m.clutter_rate / 300.0**2,
    )
    s = trackers.BernoulliState(r=0.0, x=m.birth.means[0], P=m.birth.covs[0])
    out = []
    for Z in data.measurements:
        s = trackers.bernoulli_predict(s, m.F, m.Q, m.birth.means[0], m.birth.covs[0], cfg)
        s = trackers.bernoulli_update(s, list(Z), m.H, m.R, cfg)
        out.append(s)
    return out


def test_bernoulli_filter_table_keeps_its_existence_and_scores_in_closed_form():
    data = one_object_scene()
    states = run_bernoulli(data)
    df = tracks_from_bernoulli(states, mapping=(0, 1))
    assert list(df.frame) == list(range(data.steps)) and (df.id == 0).all()
    assert list(df.r) == [s.r for s in states]  # the filter's own existence probabilities, exactly
    assert df.r.iloc[2] < 0.5 < 0.9 < df.r.iloc[3:16].max() and df.r.iloc[-1] < 0.5  # finds it, loses it
    np.testing.assert_array_equal(df[["x", "y"]].to_numpy(), [s.x[:2] for s in states])
    np.testing.assert_array_equal(df.cov_x_y.to_numpy(), [s.P[0, 1] for s in states])
    # the object is present at frames 3..15 only: every frame of the run counts (an empty truth elsewhere)
    res = score(df, truth_table(data), settings=EvaluationSettings(qs=(1,)), frames="union")
    values = res.metrics.nll["value"][:, 0]
    assert np.isfinite(values).all()
    for k, s in enumerate(states):
        if data.truth[k].shape[0] == 0:  # no object: only the missed Bernoulli
            expected = -np.log1p(-s.r)
        else:  # one object, no undetected-object intensity: r N(x; m, P) on the position
            d = data.truth[k][0, :2] - s.x[:2]
            P = s.P[:2, :2]
            expected = -np.log(s.r) + 0.5 * (d @ np.linalg.solve(P, d) + np.log(np.linalg.det(2 * np.pi * P)))
        assert values[k] == pytest.approx(expected, rel=1e-9)


def test_gnn_tracker_table_has_tracks_only_and_infinite_nll_exactly_where_r_one_cannot_hold():
    data = williams(6, seed=2)
    model = mht_model(data)
    tracker = trackers.MultiTargetTracker(
        4, 2, model["F"], model["H"], model["Q"], model["R"], init_covariance=model["init_covariance"]
    )
    scans = [tracker.process(list(Z), dt=1.0) for Z in data.measurements]
    df = tracks_from_gnn(scans, mapping=(0, 1))
    assert "r" not in df.columns and "score" not in df.columns
    assert [sorted(df[df.frame == k].id) for k in range(6)] == [sorted(t.id for t in s) for s in scans]
    with pytest.warns(UserWarning, match="r = 1"):
        res = score(
            df,
            truth_table(data),
            fill=FillIns(0.3, *FOV, existence_one=True),
            settings=EvaluationSettings(qs=(2,)),
        )
    values = res.metrics.nll["value"][:, 0]
    rows = df.groupby("frame").size().reindex(range(6), fill_value=0).to_numpy()
    objects = np.array([t.shape[0] for t in data.truth])
    # every row is an object for sure: more rows than objects is impossible, otherwise finite
    np.testing.assert_array_equal(np.isinf(values), rows > objects)
    assert len(tracks_from_gnn(scans, mapping=(0, 1), confirmed_only=True)) < len(df)


def test_bad_input_is_refused_by_name():
    with pytest.raises(ValueError, match="state: expected 2 names"):
        tracks_from_bernoulli([], mapping=(0, 1), state=("x",))
    bad = trackers.BernoulliState(r=0.5, x=np.zeros(2), P=np.eye(2))
    with pytest.raises(ValueError, match=r"states: frame 0: expected a mean \(n,\) and covariance"):
        tracks_from_bernoulli([bad], mapping=(0, 2))
    with pytest.raises(ValueError, match="frames: expected distinct"):
        tracks_from_bernoulli([bad, bad], [1, 1], mapping=(0, 1))


@pytest.mark.slow  # two interpreters importing nllbench and nrl-tracker
def test_example_script_writes_one_table_per_seed(tmp_path):
    import subprocess
    import sys

    from nllbench.cli import main

    root = ROOT
    sc = tmp_path / "sc"
    args = [
        "simulate",
        "--scenario",
        "williams15",
        "--steps",
        "3",
        "--seeds",
        "0",
        "1",
        "--output-dir",
        str(sc),
    ]
    assert main(args) == 0
    script = [sys.executable, str(root / "examples" / "nrl_tracker.py")]
    done = subprocess.run(
        [*script, "--input-dir", str(sc), "--output-dir", str(tmp_path / "tr"), "--max-hypotheses", "5"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in (tmp_path / "tr").glob("seed*.csv")) == ["seed0.csv", "seed1.csv"]
    for seed in (0, 1):
        t = validate_tracks(tmp_path / "tr" / f"seed{seed}.csv")
        assert t.score is not None and set(t.frame.tolist()) == {0, 1, 2}
        assert t.hypothesis is not None and t.hypothesis.max() < 5
    done = subprocess.run([*script, "--input-dir", str(sc)], capture_output=True, text=True, check=False)
    assert (
        done.returncode == 2 and "give either SCENARIO -o OUTPUT or --input-dir --output-dir" in done.stderr
    )
