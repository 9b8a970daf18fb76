"""``nllbench score`` on Stone Soup's own YAML files, written by real Stone Soup in the test.

Each command's numbers are compared bit for bit with the Python API on the
in-memory Stone Soup objects (``tracks_from_stonesoup`` / ``truth_from_stonesoup``
then ``nb.score``). Skipped without Stone Soup (the ``crosscheck`` extra).
"""

from __future__ import annotations

import datetime
import sys

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import nllbench as nb
from nllbench.cli import main
from nllbench.measures.evaluate import EvaluationSettings

pytest.importorskip("stonesoup")

from stonesoup.serialise import YAML  # noqa: E402

from nllbench.store import read_scenario  # noqa: E402
from nllbench.trackers.adapters import tracks_from_stonesoup, truth_from_stonesoup  # noqa: E402
from nllbench.trackers.fitting import fit_score_calibration  # noqa: E402
from nllbench.trackers.stonesoup_tracker import START, run_association, truth_paths  # noqa: E402

QS = ("--q", "1", "10")
T0 = datetime.datetime(2021, 1, 1)


def _dump(obj, path, *, all_documents=False):
    with open(path, "w") as fh:
        (YAML().dump_all if all_documents else YAML().dump)(obj, fh)
    return path


def _metrics(path):
    with xr.open_dataset(path) as ds:
        return ds.load()


def _same(out, res):
    """The command's metrics file and summary equal the API's result, bit for bit."""
    with xr.open_dataset(out) as ds:
        np.testing.assert_array_equal(ds["nll_value"].values, res.metrics.nll["value"])
        np.testing.assert_array_equal(ds["gospa"].values, res.metrics.gospa)
    row = pd.read_csv(out.with_suffix(".summary.csv")).iloc[0]
    for key in ("mota", "idf1", "hota"):
        assert float(row[key]) == float(res.summary()[key]), key


@pytest.fixture(scope="module")
def jpda(tmp_path_factory):
    """A real Stone Soup JPDA run on 30 steps of williams15, its tracks and truth paths dumped to YAML."""
    root = tmp_path_factory.mktemp("ss")
    sc = root / "sc.nc"
    assert main(["simulate", "--scenario", "williams15", "--seed", "1", "--steps", "30", "-o", str(sc)]) == 0
    data = read_scenario(sc)
    tracks, timestamps = run_association(data, associator="jpda")
    paths = truth_paths(data)
    return {
        "sc": sc,
        "tracks": tracks,
        "timestamps": timestamps,
        "paths": paths,
        "tracks_yaml": _dump(set(tracks), root / "tracks.yaml"),
        "truth_yaml": _dump(paths, root / "truth.yaml"),
    }


def test_jpda_yaml_dump_calibrated_on_a_scenario_and_scored_by_one_command_equals_the_api(jpda, tmp_path):
    """JPDA's missed-detection score, calibrated on a scenario file, frames on the grid START + k seconds."""
    out = tmp_path / "m.nc"
    y_tracks, y_truth, sc = str(jpda["tracks_yaml"]), str(jpda["truth_yaml"]), str(jpda["sc"])
    common = ["--stonesoup-mapping", "0", "1", "--stonesoup-existence", "missed_detection"]
    common += ["--stonesoup-window", "2", "--stonesoup-frame-times", START.isoformat(), "1"]
    args = ["score", y_tracks, y_truth, "-o", str(out), *common, "--fit-score-on", y_tracks, sc]
    assert (
        main([*args, "--frames", "union", "--undetected-rate", "0.3", "--fov", "0", "0", "300", "300", *QS])
        == 0
    )
    # the API on the in-memory objects (never serialised)
    opts = dict(mapping=(0, 1), existence="missed_detection", window=2)
    tracks = tracks_from_stonesoup(jpda["tracks"], jpda["timestamps"], **opts)
    truth = truth_from_stonesoup(jpda["paths"], jpda["timestamps"], mapping=(0, 1))
    assert "score" in tracks.columns
    cal = fit_score_calibration(tracks, sc)
    fill = nb.FillIns(0.3, (0, 0), (300, 300), calibration=cal)
    res = nb.score(tracks, truth, fill=fill, frames="union", settings=EvaluationSettings(qs=(1, 10)))
    _same(out, res)
    assert np.isfinite(res.metrics.nll["value"]).all()
    with xr.open_dataset(out) as ds:
        assert ds.attrs["tracks_file"] == "tracks.yaml" and ds.attrs["truth_file"] == "truth.yaml"
    # calibrated on the YAML pair itself, frames = the truth paths' timestamps: --frames union holds for
    # the calibration pair too
    out2 = tmp_path / "p.nc"
    args = ["score", y_tracks, y_truth, "-o", str(out2), *common[:7], "--fit-score-on", y_tracks, y_truth]
    assert (
        main([*args, "--frames", "union", "--undetected-rate", "0.3", "--fov", "0", "0", "300", "300", *QS])
        == 0
    )
    tracks = tracks_from_stonesoup(jpda["tracks"], truth=jpda["paths"], **opts)
    cal = fit_score_calibration(tracks, truth, frames="union")
    fill = nb.FillIns(0.3, (0, 0), (300, 300), calibration=cal)
    _same(out2, nb.score(tracks, truth, fill=fill, frames="union", settings=EvaluationSettings(qs=(1, 10))))


def test_stonesoup_tracks_against_a_scenario_file_on_a_frame_grid(jpda, tmp_path):
    """A tracks dump with a scenario file as truth: frame k at START + k seconds (--stonesoup-frame-times)."""
    out = tmp_path / "g.nc"
    grid = ["--stonesoup-frame-times", START.isoformat(), "1"]
    args = ["score", str(jpda["tracks_yaml"]), str(jpda["sc"]), "-o", str(out), *grid]
    args += ["--stonesoup-mapping", "0", "1", "--stonesoup-existence", "none", "--existence-one"]
    assert main([*args, *QS]) == 0
    tracks = tracks_from_stonesoup(jpda["tracks"], jpda["timestamps"], mapping=(0, 1), existence="none")
    with pytest.warns(UserWarning, match="r = 1"):
        res = nb.score(
            tracks, jpda["sc"], fill=nb.FillIns(existence_one=True), settings=EvaluationSettings(qs=(1, 10))
        )
    _same(out, res)
    # a grid the tracks are not on (half a second off) is refused, naming a track and its time
    off = (START + datetime.timedelta(seconds=0.5)).isoformat()
    bad = ["score", str(jpda["tracks_yaml"]), str(jpda["sc"]), "-o", str(tmp_path / "x.nc")]
    bad += ["--stonesoup-frame-times", off, "1", "--stonesoup-mapping", "0", "1", "--existence-one"]
    with pytest.raises(
        ValueError, match=r"tracks.yaml: track .*: timestamp 2021-01-01 00:00:\d\d is not a frame"
    ):
        _pair(bad)


def _pair(argv):
    """The command's Stone Soup tables, or its error raised (as the command reports it)."""
    from nllbench.cli.score import score_inputs

    args = _parse(argv)
    return score_inputs(args, args.tracks, args.truth)


def _parse(argv):
    import argparse

    from nllbench.cli.score import add_parsers

    p = argparse.ArgumentParser()
    add_parsers(p.add_subparsers())
    return p.parse_args(argv)


def _gnn_tracker(steps=6):
    """A real GNN tracker whose detections carry an existence in their metadata (Stone Soup copies it
    into the track's metadata); (tracker, scan times, truth paths, truth table)."""
    from stonesoup.dataassociator.neighbour import GNNWith2DAssignment
    from stonesoup.deleter.time import UpdateTimeStepsDeleter
    from stonesoup.hypothesiser.distance import DistanceHypothesiser
    from stonesoup.initiator.simple import SimpleMeasurementInitiator
    from stonesoup.measures import Mahalanobis
    from stonesoup.models.measurement.linear import LinearGaussian
    from stonesoup.models.transition.linear import CombinedLinearGaussianTransitionModel, ConstantVelocity
    from stonesoup.predictor.kalman import KalmanPredictor
    from stonesoup.tracker.simple import MultiTargetTracker
    from stonesoup.types.detection import Detection
    from stonesoup.types.groundtruth import GroundTruthPath, GroundTruthState
    from stonesoup.types.state import GaussianState
    from stonesoup.updater.kalman import KalmanUpdater

    transition = CombinedLinearGaussianTransitionModel([ConstantVelocity(0.05), ConstantVelocity(0.05)])
    measurement = LinearGaussian(ndim_state=4, mapping=(0, 2), noise_covar=np.eye(2))
    predictor, updater = KalmanPredictor(transition), KalmanUpdater(measurement)
    scans, rows = [], []
    paths = [GroundTruthPath(id=f"object{j}") for j in range(2)]
    for k in range(steps):
        t = T0 + datetime.timedelta(seconds=k)
        dets = set()
        for j, (x, y) in enumerate([(10.0 + k, 10.0), (40.0, 30.0 - k)]):
            rows.append({"frame": k, "id": j, "x": x + 0.3, "y": y - 0.2})
            paths[j].append(GroundTruthState([[x + 0.3], [1.0], [y - 0.2], [0.0]], timestamp=t))
            if (k, j) != (3, 0):  # object 0 missed at step 3: its track keeps the metadata of step 2
                meta = {"existence_probability": round(0.5 + 0.08 * k + 0.01 * j, 6)}
                dets.add(Detection([[x], [y]], timestamp=t, measurement_model=measurement, metadata=meta))
        scans.append((t, dets))
    tracker = MultiTargetTracker(
        initiator=SimpleMeasurementInitiator(
            GaussianState([[0], [0], [0], [0]], np.diag([4, 1, 4, 1])), measurement
        ),
        deleter=UpdateTimeStepsDeleter(3),
        detector=scans,
        data_associator=GNNWith2DAssignment(DistanceHypothesiser(predictor, updater, Mahalanobis(), 10)),
        updater=updater,
    )
    return tracker, [t for t, _ in scans], paths, pd.DataFrame(rows)


FOV = ["--undetected-rate", "0.01", "--fov", "0", "0", "60", "60"]
FILL = nb.FillIns(0.01, (0, 0), (60, 60))


def _metadata_r(tracks, times):
    """(frame, id, r) of each state: the existence its detection carried, read from Track.metadatas."""
    ordered = sorted(tracks, key=lambda t: str(t.id))
    return sorted(
        (times.index(s.timestamp), i, md["existence_probability"])
        for i, t in enumerate(ordered)
        for s, md in zip(t.states, t.metadatas, strict=True)
    )


def test_gnn_tracks_and_truth_paths_dumped_and_scored_by_one_command_equal_the_api(tmp_path):
    """The frames are the truth paths' timestamps; r is the metadata of the tracks' detections."""
    tracker, times, paths, _ = _gnn_tracker()
    tracks = set()
    for _, current in tracker:
        tracks |= current
    _dump(tracks, tmp_path / "tracks.yaml")
    _dump(paths, tmp_path / "truth.yaml")
    out = tmp_path / "d.nc"
    assert (
        main(
            ["score", str(tmp_path / "tracks.yaml"), str(tmp_path / "truth.yaml"), "-o", str(out), *FOV, *QS]
        )
        == 0
    )
    table = tracks_from_stonesoup(tracks, truth=paths)
    assert list(zip(table.frame, table.id, table.r, strict=True)) == _metadata_r(tracks, times)
    res = nb.score(table, truth_from_stonesoup(paths), fill=FILL, settings=EvaluationSettings(qs=(1, 10)))
    _same(out, res)
    assert np.isfinite(res.metrics.nll["value"]).all()
    # --stonesoup-no-metadata: no r; then r = 1 is filled in and the NLL differs
    out2 = tmp_path / "n.nc"
    args = ["score", str(tmp_path / "tracks.yaml"), str(tmp_path / "truth.yaml"), "-o", str(out2)]
    assert main([*args, "--stonesoup-no-metadata", "--existence-one", *FOV, *QS]) == 0
    with xr.open_dataset(out2) as ds:
        assert "r = 1" in ds.attrs["fill_ins"]
        assert not np.array_equal(ds["nll_value"].values, res.metrics.nll["value"])


def test_yamlwriter_file_scored_with_a_truth_table_on_its_scan_times(tmp_path):
    """Stone Soup's YAMLWriter: one document per scan; frame k is the k-th scan (a truth CSV's frame k)."""
    from stonesoup.reader.yaml import YAMLTrackReader
    from stonesoup.types.track import Track
    from stonesoup.writer.yaml import YAMLWriter

    tracker, times, _, truth = _gnn_tracker()
    run = tmp_path / "run.yaml"
    with YAMLWriter(run, tracks_source=tracker) as writer:
        writer.write()
    truth.to_csv(tmp_path / "truth.csv", index=False)
    out = tmp_path / "w.nc"
    assert main(["score", str(run), str(tmp_path / "truth.csv"), "-o", str(out), *FOV, *QS]) == 0
    # Stone Soup's own reader of the file: a track's last document holds its states
    tracks = {}
    for _, current in YAMLTrackReader(run):
        tracks.update({t.id: t for t in current})
    # the reader replaces a track's states in place, leaving its metadatas those of its first document;
    # a Track built from the states has them all
    tracks = {i: Track(t.states, id=t.id) for i, t in tracks.items()}
    assert len(tracks) == 2
    table = tracks_from_stonesoup(tracks.values(), times)
    assert list(zip(table.frame, table.id, table.r, strict=True)) == _metadata_r(tracks.values(), times)
    res = nb.score(table, truth, fill=FILL, settings=EvaluationSettings(qs=(1, 10)))
    _same(out, res)


def test_yaml_files_that_hold_the_wrong_objects_or_times_are_refused(jpda, tmp_path):
    y_tracks, y_truth = str(jpda["tracks_yaml"]), str(jpda["truth_yaml"])
    with pytest.raises(
        ValueError, match=r"truth.yaml: expected Stone Soup tracks \(Track objects\), got none"
    ):
        _pair(["score", y_truth, y_truth, "-o", "x.nc"])
    with pytest.raises(ValueError, match=r"tracks.yaml: expected Stone Soup ground truth paths .*got none"):
        _pair(["score", y_tracks, y_tracks, "-o", "x.nc"])
    # a truth that lacks the tracks' last scans: the track's time is named, not shifted
    from stonesoup.types.groundtruth import GroundTruthPath

    end = START + datetime.timedelta(seconds=9)
    short = [GroundTruthPath([s for s in p.states if s.timestamp < end], id=p.id) for p in jpda["paths"]]
    _dump(short, tmp_path / "short.yaml")
    with pytest.raises(ValueError, match=r"timestamp 2021-01-01 00:00:\d\d is not a frame"):
        _pair(
            ["score", y_tracks, str(tmp_path / "short.yaml"), "-o", "x.nc", "--stonesoup-mapping", "0", "1"]
        )
    # YAMLWriter documents of tracks and of truth whose scan times differ
    scans = [{"time": t, "tracks": set()} for t in jpda["timestamps"]]
    scans[-1]["tracks"] = set(jpda["tracks"])
    _dump(scans, tmp_path / "w_tracks.yaml", all_documents=True)
    late = [
        {"time": t + datetime.timedelta(seconds=1), "groundtruth_paths": set()} for t in jpda["timestamps"]
    ]
    late[-1]["groundtruth_paths"] = set(jpda["paths"])
    _dump(late, tmp_path / "w_truth.yaml", all_documents=True)
    with pytest.raises(
        ValueError, match=r"scan times do not line up: 2021-01-01 00:00:00 is a scan of .*w_tracks"
    ):
        _pair(["score", str(tmp_path / "w_tracks.yaml"), str(tmp_path / "w_truth.yaml"), "-o", "x.nc"])
    # a dump of tracks with a CSV truth: the frames' times are unknown, never guessed
    pd.DataFrame({"frame": [0], "id": [0], "x": [1.0], "y": [1.0]}).to_csv(tmp_path / "t.csv", index=False)
    with pytest.raises(ValueError, match="the frames' times are unknown: give --stonesoup-frame-times"):
        _pair(["score", y_tracks, str(tmp_path / "t.csv"), "-o", "x.nc"])
    # not a Stone Soup YAML
    (tmp_path / "bad.yaml").write_text("tracks: [1, 2]\n")
    with pytest.raises(ValueError, match=r"document 1, 'tracks': expected Track objects, got a builtins.int"):
        _pair(["score", str(tmp_path / "bad.yaml"), y_truth, "-o", "x.nc"])
    (tmp_path / "empty.yaml").write_text("")
    with pytest.raises(ValueError, match="got an empty file"):
        _pair(["score", str(tmp_path / "empty.yaml"), y_truth, "-o", "x.nc"])


def test_command_line_errors_are_one_line(jpda, tmp_path, capsys):
    y_tracks, y_truth = str(jpda["tracks_yaml"]), str(jpda["truth_yaml"])
    assert main(["score", y_tracks, y_truth, "-o", str(tmp_path / "a.nc"), "--stonesoup-mapping", "0"]) == 2
    assert "--stonesoup-mapping: expected one state-vector index per --state column (x y), got 1" in (
        capsys.readouterr().err
    )
    truth = tmp_path / "t.csv"
    pd.DataFrame({"frame": [0], "id": [0], "x": [1.0], "y": [1.0]}).to_csv(truth, index=False)
    assert (
        main(["score", str(truth), str(truth), "-o", str(tmp_path / "b.nc"), "--stonesoup-window", "2"]) == 2
    )
    assert "--stonesoup-window: is for Stone Soup YAML inputs" in capsys.readouterr().err
    grid = ["--stonesoup-frame-times", "2021-01-01", "0"]
    assert main(["score", y_tracks, y_truth, "-o", str(tmp_path / "c.nc"), *grid]) == 2
    assert "expected PERIOD_SECONDS > 0, got '0'" in capsys.readouterr().err


def test_without_stonesoup_the_yaml_input_says_how_to_install_it(jpda, tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "stonesoup.serialise", None)  # import fails as if not installed
    args = ["score", str(jpda["tracks_yaml"]), str(jpda["truth_yaml"]), "-o", str(tmp_path / "a.nc")]
    assert main(args) == 2
    assert (
        "needs Stone Soup (pip install stonesoup, or nllbench's crosscheck extra" in capsys.readouterr().err
    )
    assert not (tmp_path / "a.nc").exists()


def test_batch_of_stonesoup_yaml_tracks_against_scenario_files(jpda, tmp_path):
    tracks_dir, scen = tmp_path / "tr", tmp_path / "sc"
    tracks_dir.mkdir()
    scen.mkdir()
    (scen / "seed1.nc").write_bytes(jpda["sc"].read_bytes())
    (tracks_dir / "seed1.yaml").write_bytes(jpda["tracks_yaml"].read_bytes())
    grid = ["--stonesoup-frame-times", START.isoformat(), "1", "--stonesoup-mapping", "0", "1"]
    args = ["score", "--tracks-dir", str(tracks_dir), "--scenario-dir", str(scen), *grid, "--existence-one"]
    assert main([*args, "--output-dir", str(tmp_path / "m"), *QS]) == 0
    one = ["score", str(tracks_dir / "seed1.yaml"), str(scen / "seed1.nc"), "-o", str(tmp_path / "one.nc")]
    assert main([*one, *grid, "--existence-one", *QS]) == 0
    batch, single = _metrics(tmp_path / "m" / "seed1.nc"), _metrics(tmp_path / "one.nc")
    np.testing.assert_array_equal(batch["nll_value"].values, single["nll_value"].values)
    assert pd.read_csv(tmp_path / "m" / "summary.csv").seed.tolist() == [1]


def test_loader_refuses_mixed_layouts_repeated_ids_and_times_and_zoned_grids(jpda, tmp_path):
    from nllbench.trackers.stonesoup_yaml import load_stonesoup_yaml, time_grid

    track = next(iter(jpda["tracks"]))
    t = jpda["timestamps"]
    _dump([{"time": t[0], "tracks": {track}}, [track]], tmp_path / "mixed.yaml", all_documents=True)
    with pytest.raises(ValueError, match="document 2: expected every document in one layout"):
        load_stonesoup_yaml(tmp_path / "mixed.yaml")
    _dump([[track], [track]], tmp_path / "twice.yaml", all_documents=True)
    with pytest.raises(ValueError, match=f"document 2: track id {track.id} appears twice in the file"):
        load_stonesoup_yaml(tmp_path / "twice.yaml")
    _dump(
        [{"time": t[0], "tracks": {track}}, {"time": t[0], "tracks": {track}}],
        tmp_path / "t2.yaml",
        all_documents=True,
    )
    with pytest.raises(ValueError, match="expected distinct scan times, got 2021-01-01 00:00:00 twice"):
        load_stonesoup_yaml(tmp_path / "t2.yaml")
    (tmp_path / "gz.yaml").write_bytes(b"\x1f\x8b\x08\x00" + bytes(20))
    with pytest.raises(ValueError, match="expected a Stone Soup YAML text file, got gzip"):
        load_stonesoup_yaml(tmp_path / "gz.yaml")
    # a writer file's tracks hold the states of their last document; its times are the frames
    _dump([{"time": s, "tracks": {track}} for s in t], tmp_path / "w.yaml", all_documents=True)
    loaded = load_stonesoup_yaml(tmp_path / "w.yaml")
    assert loaded.times == tuple(t) and len(loaded.tracks) == 1 and not loaded.paths
    zoned = t[0].replace(tzinfo=datetime.UTC)
    with pytest.raises(ValueError, match="expected a datetime comparable with the first frame time"):
        time_grid(zoned, datetime.timedelta(seconds=1), [loaded])
    assert time_grid(t[0], datetime.timedelta(seconds=1), [loaded]) == list(t)


def test_a_frame_period_beyond_timedeltas_range_is_refused_by_name():
    from nllbench.cli.score_stonesoup import frame_grid

    with pytest.raises(ValueError, match="--stonesoup-frame-times: expected PERIOD_SECONDS below"):
        frame_grid(["2024-01-01T00:00:00", "1e20"])


def test_tracks_without_existence_point_to_stonesoup_existence(jpda, tmp_path, capsys):
    """JPDA tracks keep no existence: the error says which option gives one (not only 'no column r')."""
    args = ["score", str(jpda["tracks_yaml"]), str(jpda["sc"]), "-o", str(tmp_path / "n.nc")]
    args += ["--stonesoup-frame-times", START.isoformat(), "1", "--stonesoup-mapping", "0", "1"]
    assert main([*args, "--stonesoup-existence", "none", "--default-std", "1"]) != 0
    err = capsys.readouterr().err
    assert "no column 'r' or 'score'" in err and "--stonesoup-existence missed_detection" in err
