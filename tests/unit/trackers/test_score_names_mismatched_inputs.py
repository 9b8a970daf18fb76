"""Mismatched inputs to ``nb.score``: coordinates beyond the float range, q out of range, frames in one
table only, measures that do not apply, default distances far from the data's units; each named, never
scored silently."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import nllbench as nb
from nllbench.measures.evaluate import EvaluationSettings
from nllbench.trackers.cells import MAX_STATE
from nllbench.trackers.tracks import validate_tracks, validate_truth

HEADER = "frame,id,r,x,y,var_x,var_y\n"


# ---------------------------------------------------------------------------
# errors that name what is wrong (issue 20, section 5)


def test_coordinates_beyond_the_float_range_of_distances_are_refused(tmp_path):
    (tmp_path / "t.csv").write_text(HEADER + "0,1,0.9,1e200,2.0,0.5,0.5\n")
    with pytest.raises(ValueError, match=r"\(line 2\), column 'x': expected a magnitude at most 1e\+150"):
        validate_tracks(tmp_path / "t.csv")
    with pytest.raises(ValueError, match="column 'y': expected a magnitude at most 1e\\+150.*got -1e\\+200"):
        validate_truth(pd.DataFrame({"frame": [0], "id": [1], "x": [0.0], "y": [-1e200]}))


def test_coordinates_at_the_bound_score_without_numpy_warnings():
    tracks = pd.DataFrame(
        {"frame": [0, 1], "id": [1, 1], "r": 0.9, "x": [MAX_STATE, 1.0], "y": 1.0, "var_x": [1e200, 1.0]}
    ).assign(var_y=[1.0, 1e-200])
    truth = pd.DataFrame(
        {"frame": [0, 1], "id": [1, 1], "x": [-MAX_STATE, MAX_STATE], "y": [1.0, -MAX_STATE]}
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's RuntimeWarning included
        res = nb.score(tracks, truth, settings=EvaluationSettings(cutoff=3.0, threshold=3.0))
    # frame 0: the Mahalanobis distance (2e150)^2 / 1e200 = 4e100 is finite and exact
    assert res.metrics.nll["localization"][0, 0] == pytest.approx(2e100, rel=1e-12)
    assert np.isinf(res.metrics.nll["value"][1]).all()  # exp(-5e299) is 0 in double precision


def _one_bernoulli():
    mb = nb.MultiBernoulli.gaussian([0.5], [[1, 1]], [np.eye(2)])
    return nb.PMB(nb.PPP.uniform(1.0, [0, 0], [9, 9]), mb)


@pytest.mark.parametrize("q", [2**63, 2**100, 0, -1, 2.0, True, "3"])
def test_q_out_of_range_names_the_parameter_and_the_range(q):
    d, y = _one_bernoulli(), np.array([[1.0, 1.0]])
    allowed = r"\(allowed: 1 to 2\*\*63 - 1\)"
    with pytest.raises(ValueError, match=r"^q: expected a positive integer, got .*" + allowed):
        nb.nll(d, y, q=q)
    with pytest.raises(ValueError, match=r"^qs\[1\]: expected a positive integer.*" + allowed):
        nb.nll_many(d, y, [1, q])
    with pytest.raises(ValueError, match=r"^qs\[0\]: expected a positive integer.*" + allowed):
        EvaluationSettings(qs=(q,))
    tracks = pd.DataFrame({"frame": [0], "id": [1], "r": [0.5], "x": [1.0], "y": [1.0]})
    truth = pd.DataFrame({"frame": [0], "id": [1], "x": [1.0], "y": [1.0]})
    with pytest.raises(ValueError, match=r"^q: expected a positive integer.*" + allowed):
        nb.trajectory_nll(tracks, truth, q=q, fill=nb.FillIns(default_std=1.0))


def test_the_largest_q_is_accepted_and_equals_every_association():
    d, y = _one_bernoulli(), np.array([[1.0, 1.0]])
    assert nb.nll(d, y, q=2**63 - 1).value == nb.nll(d, y, q=2).value
    assert nb.nll(d, y, q=np.int64(2**63 - 1)).value == nb.nll(d, y, q=2).value
    with pytest.raises(ValueError, match=r"^qs: expected a sequence of distinct positive integers, got 5"):
        EvaluationSettings(qs=5)


# ---------------------------------------------------------------------------
# frames present in only one table (issue 20, section 4)


def _moving(frames, ids=(1, 2), shift=0.0):
    """A truth table of objects moving along x, one row per (frame, id)."""
    rows = [{"frame": f, "id": i, "x": 10.0 * i + f + shift, "y": 5.0 * i} for f in frames for i in ids]
    return pd.DataFrame(rows)


def _tracks_of(truth, r=0.9):
    return truth.assign(r=r, x=truth.x + 0.1, var_x=0.5, var_y=0.5)


def test_off_by_one_frames_are_refused_with_counts_and_ranges():
    truth = _moving(range(1, 61))
    tracks = _tracks_of(_moving(range(0, 60), shift=1.0))  # the same positions, numbered from 0
    msg = (
        r"cover different frames: 1 frame has tracks but no truth \(0\); 1 frame has truth but no tracks "
        r"\(60\)\. An off-by-one frame numbering would be scored silently.*frames='union' or a list "
        r"\(--frames\), e\.g\. all of them: 0\.\.60"
    )
    fill = nb.FillIns(default_std=1.0)
    with pytest.raises(ValueError, match=msg):
        nb.score(tracks, truth, fill=fill)
    with pytest.raises(ValueError, match=msg):
        nb.trajectory_nll(tracks, truth)
    with pytest.raises(ValueError, match=msg):
        nb.trajectory_nll(tracks, truth, q=1)
    from nllbench.trackers.scoring import fit_score_calibration, fit_undetected_rate

    with pytest.raises(ValueError, match=msg):
        fit_score_calibration(tracks.drop(columns="r").assign(score=1.0), truth)
    with pytest.raises(ValueError, match=msg):
        fit_undetected_rate(tracks, truth, fill=nb.FillIns(0.0, (0, 0), (100, 100)))
    # renumbered, the tables agree and score at once
    res = nb.score(tracks.assign(frame=tracks.frame + 1), truth, settings=EvaluationSettings(qs=(1,)))
    assert res.frames.tolist() == list(range(1, 61)) and np.isfinite(res.summary()["nll_q1"])


def test_frames_said_explicitly_score_a_tracker_silent_at_first():
    truth = _moving(range(10))
    tracks = _tracks_of(truth[truth.frame >= 3])
    fill = nb.FillIns(2.0, (0, 0), (100, 100))
    settings = EvaluationSettings(qs=(1,))
    with pytest.raises(ValueError, match=r"3 frames have truth but no tracks \(0\.\.2\)"):
        nb.score(tracks, truth, fill=fill, settings=settings)
    a = nb.score(tracks, truth, frames="union", fill=fill, settings=settings)
    b = nb.score(tracks, truth, frames=range(10), fill=fill, settings=settings)
    assert a.frames.tolist() == b.frames.tolist() == list(range(10))
    assert np.array_equal(a.metrics.nll["value"], b.metrics.nll["value"])
    t = nb.trajectory_nll(tracks, truth, frames="union", undetected=(1.0, 0.5), fov=((0, 0), (100, 100)))
    assert t.frames.tolist() == list(range(10)) and np.isfinite(t.value)
    with pytest.raises(ValueError, match="frames: expected a list of integers, 'union' or None, got 'all'"):
        nb.score(tracks, truth, frames="all", fill=fill)


def test_frame_runs_name_long_gaps_briefly():
    from nllbench.trackers.tracks import frame_runs

    assert frame_runs([5, 0, 1, 2, 3, 9]) == "0..3, 5, 9"
    assert frame_runs([]) == "none"
    assert frame_runs(range(0, 20, 2), limit=3) == "0, 2, 4, ... (7 more runs)"


# ---------------------------------------------------------------------------
# measures that do not apply: identity measures without ids, MOTP without a match


IDENTITY = (
    "mota",
    "switches",
    "idf1",
    "tgospa",
    "tgospa_switches",
    "hota",
    "assa",
    "ptgospa",
    "ptgospa_switches",
)


def _crossing(with_ids: bool):
    """Two objects crossing; tracks near them (ids kept per object when ``with_ids``)."""
    truth = _moving(range(6))
    tracks = _tracks_of(truth)
    return (tracks if with_ids else tracks.drop(columns="id")), truth


def test_a_table_without_ids_reports_identity_measures_as_not_applicable_with_one_warning(tmp_path):
    from nllbench.store import read_metrics, write_summary_csv
    from nllbench.trackers.checks import NA
    from nllbench.trackers.scoring import score_file

    tracks, truth = _crossing(with_ids=False)
    settings = EvaluationSettings(qs=(1,))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = nb.score(tracks, truth, settings=settings)
    messages = [str(w.message) for w in caught]
    assert len(messages) == 1 and "tracks: no column 'id': the identity measures" in messages[0]
    row = res.summary()
    assert res.not_applicable == IDENTITY and row["not_applicable"] == " ".join(IDENTITY)
    for key in IDENTITY:
        assert row[key] is NA and f"{row[key]:.4f}" == "n/a" and not isinstance(row[key], float)
        with pytest.raises(TypeError):
            row[key] + 1.0  # never a number
    for key in ("gospa", "ospa", "motp", "deta", "loca", "nll_q1", "pgospa"):
        assert isinstance(row[key], float) and np.isfinite(row[key])
    import pickle

    assert pickle.loads(pickle.dumps(row))["mota"] == "n/a"  # a summary travels between processes
    assert "clear_switches" not in res.per_frame().columns
    assert "clear_matches" in res.per_frame().columns
    # with ids the same tables have every measure
    labelled = nb.score(*_crossing(with_ids=True), settings=settings)
    assert labelled.not_applicable == () and labelled.summary()["not_applicable"] == ""
    assert labelled.summary()["mota"] == 1.0 and labelled.summary()["switches"] == 0
    assert labelled.summary()["gospa"] == row["gospa"]  # the identity-free measures are unchanged
    # the summary CSV says n/a (pandas reads it as missing) and the metrics file lists them
    tracks.to_csv(tmp_path / "t.csv", index=False)
    truth.to_csv(tmp_path / "y.csv", index=False)
    with pytest.warns(UserWarning, match="no column 'id'"):
        row, _ = score_file(tmp_path / "t.csv", tmp_path / "y.csv", tmp_path / "m.nc", settings=settings)
    write_summary_csv(row, tmp_path / "s.csv")
    text = (tmp_path / "s.csv").read_text().splitlines()
    cells = dict(zip(text[0].split(","), text[1].split(","), strict=True))
    assert all(cells[k] == "n/a" for k in IDENTITY) and cells["deta"] != "n/a"
    assert pd.read_csv(tmp_path / "s.csv")[list(IDENTITY)].isna().all(axis=None)
    import json

    assert json.loads(read_metrics(tmp_path / "m.nc").attrs["not_applicable"]) == list(IDENTITY)


def test_motp_without_any_match_is_not_applicable_not_inf():
    truth = _moving(range(3))
    tracks = _tracks_of(truth).assign(x=lambda d: d.x + 50.0)  # every track 50 away: no match
    res = nb.score(tracks, truth, settings=EvaluationSettings(qs=(1,), cutoff=3.0, threshold=3.0))
    assert res.metrics.clear.matches == 0 and res.metrics.clear.motp == np.inf  # what the measure computes
    assert res.not_applicable == ("motp",) and res.summary()["motp"] == "n/a"
    assert res.summary()["mota"] == -1.0  # defined: every object missed, every track false


# ---------------------------------------------------------------------------
# truth outside the box of the undetected-object fill-in


def test_truth_outside_the_fov_of_the_undetected_fill_in_is_counted():
    from nllbench.trackers.scoring import score_attrs

    truth = _moving(range(4), ids=(1, 2, 3))  # id 3 at x = 31, 32, 33 in frames 1..3
    tracks = _tracks_of(truth)
    fill = nb.FillIns(0.5, (0, 0), (30.5, 50))
    with pytest.warns(
        UserWarning, match=r"truth: 3 truth objects in 3 frames lie outside the fov box"
    ) as rec:
        res = nb.score(tracks, truth, fill=fill, settings=EvaluationSettings(qs=(1,)))
    assert len([w for w in rec if "fov box" in str(w.message)]) == 1
    assert res.outside_fov == {"truth_outside": 3, "frames": 3}
    assert score_attrs(res)["truth_outside_fov"] == 3
    inside = nb.score(
        tracks, truth, fill=nb.FillIns(0.5, (0, 0), (40, 50)), settings=EvaluationSettings(qs=(1,))
    )
    assert inside.outside_fov == {"truth_outside": 0, "frames": 0}
    assert nb.score(tracks, truth).outside_fov is None  # no fill-in, no box


# ---------------------------------------------------------------------------
# unit-dependent settings: recorded, and a default far from the data's scale warned of


def _pixels(error=6.0):
    """Pedestrian-like boxes in pixels: objects 150 px apart, tracks ``error`` px off."""
    rng = np.random.default_rng(4)
    rows = [
        {"frame": f, "id": i, "x": 100.0 + 150 * i + 3 * f, "y": 400.0 + 20 * i}
        for f in range(20)
        for i in range(5)
    ]
    truth = pd.DataFrame(rows)
    angle = rng.uniform(0, 2 * np.pi, len(truth))
    tracks = truth.assign(
        x=truth.x + error * np.cos(angle), y=truth.y + error * np.sin(angle), r=0.9, var_x=36.0, var_y=36.0
    )
    return tracks, truth


def test_default_distances_on_pixel_data_are_warned_of_and_recorded():
    tracks, truth = _pixels()
    with pytest.warns(
        UserWarning,
        match=r"settings left at their default 2 .*cutoff=2, threshold=2, "
        r"hota_threshold=2, tgospa_gamma=2; but three quarters of the truth objects have "
        r"no track within 2 \(the lower quartile of truth-to-nearest-track distances is 6\)",
    ):
        res = nb.score(tracks, truth, settings=EvaluationSettings(qs=(1,)))
    row = res.summary()
    assert (row["cutoff"], row["threshold"], row["hota_threshold"], row["tgospa_gamma"]) == (
        2.0,
        2.0,
        2.0,
        2.0,
    )
    assert res.units["defaults"] == ["cutoff", "threshold", "hota_threshold", "tgospa_gamma"]
    assert row["mota"] == -1.0  # at 2 px nothing matches: what the warning is about
    # in the data's units: no warning, every object matched, the values used recorded
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        px = nb.score(tracks, truth, settings=EvaluationSettings(qs=(1,), cutoff=30.0, threshold=20.0))
    row = px.summary()
    assert row["mota"] == 1.0 and row["idf1"] == 1.0
    assert (row["cutoff"], row["threshold"], row["hota_threshold"], row["tgospa_gamma"]) == (
        30.0,
        20.0,
        20.0,
        30.0,
    )
    assert px.units["defaults"] == [] and px.units["warned"] is None
    assert px.units["track_distance_q25"] == pytest.approx(6.0)


def test_a_default_kept_for_some_settings_still_warns_for_them():
    tracks, truth = _pixels()
    with pytest.warns(UserWarning, match=r"default 2 .*: threshold=2, hota_threshold=2; but three quarters"):
        res = nb.score(tracks, truth, settings=EvaluationSettings(qs=(1,), cutoff=30.0))
    assert res.units["defaults"] == ["threshold", "hota_threshold"]


def test_default_distances_on_data_in_much_larger_units_are_warned_of():
    tracks, truth = _pixels(error=0.0)
    km = lambda d: d.assign(x=d.x / 1e4, y=d.y / 1e4)  # noqa: E731
    with pytest.warns(
        UserWarning, match=r"the truth positions spread over a standard deviation of 0\.0\d+ only"
    ):
        nb.score(km(tracks).assign(var_x=1e-6, var_y=1e-6), km(truth), settings=EvaluationSettings(qs=(1,)))


def test_reference_scale_data_scores_without_a_unit_warning(tmp_path):
    from nllbench.cli import main
    from nllbench.trackers.inputs import truth_from_scenario

    sc = tmp_path / "sc.nc"
    assert main(["simulate", "--scenario", "williams15", "--seed", "2", "--steps", "12", "-o", str(sc)]) == 0
    truth, steps = truth_from_scenario(sc, ("x", "y"))
    tracks = _tracks_of(truth)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = nb.score(tracks, sc, settings=EvaluationSettings(qs=(1,)))
    assert res.units["warned"] is None and res.units["track_distance_q25"] < 0.2
    assert res.frames.tolist() == list(range(steps))


def test_the_calibration_fits_check_their_distances_and_box_too():
    from nllbench.trackers.scoring import fit_score_calibration, fit_undetected_rate

    tracks, truth = _pixels()
    rng = np.random.default_rng(1)
    false = pd.DataFrame({"frame": range(20), "id": 99, "x": rng.uniform(0, 900, 20), "y": 50.0})
    scored = pd.concat([tracks, false.assign(r=0.9, var_x=36.0, var_y=36.0)], ignore_index=True)
    scored = scored.drop(columns="r").assign(score=rng.normal(size=len(scored)))
    with pytest.warns(
        UserWarning, match=r"default 2 .*: threshold=2; but three quarters.*give threshold= in"
    ):
        with pytest.raises(ValueError, match="calibration needs matched and unmatched rows; got 0 matched"):
            fit_score_calibration(scored, truth)
    cal = fit_score_calibration(scored, truth, threshold=20.0)
    assert cal.provenance()["threshold"] == 20.0 and cal.n_detections == len(tracks)
    with pytest.warns(UserWarning, match=r"truth: 19 truth objects in 19 frames lie outside the fov box"):
        fit_undetected_rate(tracks, truth, fill=nb.FillIns(0.0, (0, 0), (700, 900)))


# ---------------------------------------------------------------------------
# the Stone Soup adapter numbers frames from the scans, never from the tracks' first state


def _stonesoup_run():
    """Two ground truth paths over scans 0..5 and a tracker whose tracks start at scan 2."""
    import datetime

    from stonesoup.types.groundtruth import GroundTruthPath, GroundTruthState
    from stonesoup.types.state import GaussianState
    from stonesoup.types.track import Track

    t0 = datetime.datetime(2024, 5, 1, 12, 0, 0)
    scans = [t0 + datetime.timedelta(seconds=k) for k in range(6)]
    paths, tracks = set(), set()
    for start in (0.0, 20.0):
        truth_states = [
            GroundTruthState([[start + k], [1.0], [5.0], [0.0]], timestamp=t) for k, t in enumerate(scans)
        ]
        paths.add(GroundTruthPath(truth_states))
        track_states = [
            GaussianState(
                [[start + k + 0.2], [1.0], [5.1], [0.0]], np.diag([0.5, 0.1, 0.5, 0.1]), timestamp=t
            )
            for k, t in enumerate(scans)
            if k >= 2
        ]
        tracks.add(Track(track_states))
    return paths, tracks, scans


def test_stonesoup_tracks_take_their_frames_from_the_truth_or_the_scans():
    pytest.importorskip("stonesoup")
    from nllbench.trackers.adapters import tracks_from_stonesoup, truth_from_stonesoup

    paths, tracks, scans = _stonesoup_run()
    with pytest.raises(ValueError, match=r"^timestamps: expected the frame times .*would shift a tracker"):
        tracks_from_stonesoup(tracks)
    with pytest.raises(ValueError, match="timestamps, truth: expected one of them"):
        tracks_from_stonesoup(tracks, scans, truth=paths)
    truth = truth_from_stonesoup(paths)
    by_truth = tracks_from_stonesoup(tracks, truth=paths)
    by_scans = tracks_from_stonesoup(tracks, scans)
    pd.testing.assert_frame_equal(by_truth, by_scans)
    assert sorted(set(by_truth.frame)) == [2, 3, 4, 5]  # the tracks' first state is scan 2, not frame 0
    assert truth.frame.tolist() == [k for k in range(6) for _ in range(2)]
    assert truth_from_stonesoup(paths, scans).equals(truth)
    # scored on the right frames every track is 0.2 from its object (a shift would make it 1.2)
    fill = nb.FillIns(0.5, (-10, -10), (40, 20))
    res = nb.score(by_truth.assign(r=0.9), truth, frames="union", fill=fill)
    assert res.metrics.clear.motp == pytest.approx(np.hypot(0.2, 0.1))
    # a track state at a time without truth (here the last scan) is named, with the way out
    msg = r"12:00:05 is not a frame \(not among the ground truth's timestamps\); give timestamps="
    with pytest.raises(ValueError, match=msg):
        tracks_from_stonesoup(tracks, truth=_paths_until(paths, scans[4]))


def _paths_until(paths, last):
    from stonesoup.types.groundtruth import GroundTruthPath

    return [GroundTruthPath([s for s in p.states if s.timestamp <= last]) for p in paths]


# ---------------------------------------------------------------------------
# a constant MOTChallenge conf column is no score


def test_a_constant_motchallenge_conf_is_no_score(tmp_path):
    from nllbench.trackers.adapters import read_motchallenge
    from nllbench.trackers.scoring import fit_score_calibration

    lines = [
        f"{f},{i},{100 + 150 * i + 3 * f},{400 + 20 * i},40,80,-1,-1,-1,-1" for f in (1, 2, 3) for i in (1, 2)
    ]
    (tmp_path / "res.txt").write_text("\n".join(lines) + "\n")
    with pytest.warns(
        UserWarning, match=r"res.txt: column 'conf' is -1 on every line: a constant is no score"
    ):
        df = read_motchallenge(tmp_path / "res.txt")
    assert "score" not in df.columns and df.attrs["constant_conf"] == -1.0 and df.attrs["ignored_rows"] == 0
    # read_motchallenge(conf="r") keeps it (then refused as a probability); "ignore" drops it silently
    assert read_motchallenge(tmp_path / "res.txt", conf="r")["r"].tolist() == [-1.0] * 6
    assert "score" not in read_motchallenge(tmp_path / "res.txt", conf="ignore").columns
    # a constant score handed to the calibration is named as such, not as "perfect separation"
    truth = df.drop(columns=["var_x", "var_y"], errors="ignore").assign(x=lambda d: d.x + 0.5)
    tracks = pd.concat([df.assign(score=-1.0), df.assign(id=df.id + 10, x=df.x + 300, score=-1.0)])
    with pytest.raises(
        ValueError, match=r"column 'score' is constant \(-1\.0 on every row\): it carries no information"
    ):
        fit_score_calibration(tracks, truth, threshold=20.0)
    varied = tracks.assign(score=np.r_[np.linspace(0.5, 1.0, 6), np.linspace(0.0, 0.8, 6)])
    assert fit_score_calibration(varied, truth, threshold=20.0).n_detections == 6


def test_theorem1_with_an_estimate_beyond_the_float_range_of_distances_is_exact_and_quiet():
    from nllbench.measures.theorem1 import theorem1

    far = np.array([[1e200, 0.0], [0.2, 0.6]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = theorem1(far, np.array([[0.5, 0.5]]), np.zeros(2), np.ones(2), 0.9, 1.0)
    near = theorem1(far[1:], np.array([[0.5, 0.5]]), np.zeros(2), np.ones(2), 0.9, 1.0)
    # the far estimate is unassigned: it adds c / 2 to the bound, whatever its distance
    assert res.rhs == pytest.approx(near.rhs + res.c / 2, rel=1e-12)
