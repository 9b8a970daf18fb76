"""``nllbench score`` on MOTChallenge text files, the evaluation options, --preset and the constant r."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from support.mot_files import write_mot

import nllbench as nb
from nllbench.cli import main
from nllbench.measures.evaluate import EvaluationSettings
from nllbench.trackers.adapters import read_motchallenge
from nllbench.trackers.fillins import ConstantExistence, FillIns
from nllbench.trackers.fitting import fit_constant_existence

# frame, id, left, top, width, height, conf: boxes 2 x 2 (centre = left + 1, top + 1)
GT = [(1, 1, 0, 0, 2, 2, 1), (1, 2, 10, 0, 2, 2, 1), (2, 1, 1, 0, 2, 2, 1), (2, 2, 11, 0, 2, 2, 1)]
TRACKS = [
    (1, 7, 0.5, 0.2, 2, 2, 0.9),
    (1, 8, 11.5, 0.0, 2, 2, 0.6),
    (1, 9, 30.0, 30.0, 2, 2, 0.2),
    (2, 7, 1.3, 0.1, 2, 2, 0.8),
    (2, 8, 11.2, 0.4, 2, 2, 0.7),
]


@pytest.fixture
def files(tmp_path):
    return write_mot(tmp_path / "tracks.txt", TRACKS), write_mot(tmp_path / "gt.txt", GT)


def _run(tmp_path, *args, name="m"):
    out = tmp_path / f"{name}.nc"
    assert main(["score", *map(str, args), "-o", str(out), "--q", "1", "10"]) == 0
    with xr.open_dataset(out) as ds:
        return ds.load()


def _api(tracks, truth, fill, **kw):
    return nb.score(tracks, truth, fill=fill, settings=EvaluationSettings(qs=(1, 10), **kw))


def test_mot_files_scored_by_one_command_equal_the_api(tmp_path, files):
    tracks, gt = files
    ds = _run(tmp_path, tracks, gt, "--mot-conf", "r", "--mot-box-std-fraction", "0.5")
    ref = _api(read_motchallenge(tracks, conf="r", box_std_fraction=0.5), read_motchallenge(gt, kind="truth"),
               FillIns())  # fmt: skip
    np.testing.assert_allclose(ds["nll_value"].values, ref.metrics.nll["value"], rtol=1e-12)
    np.testing.assert_allclose(ds["gospa"].values, ref.metrics.gospa, rtol=1e-12)
    assert ds.attrs["tracks_file"] == "tracks.txt" and ds.attrs["truth_file"] == "gt.txt"


def test_mot_conf_score_needs_a_calibration_and_ignore_needs_existence(tmp_path, files, capsys):
    tracks, gt = files
    # the classic measures need no calibration: given, and the NLL's need said
    assert main(["score", str(tracks), str(gt), "-o", str(tmp_path / "a.nc"), "--default-std", "1"]) == 0
    out = capsys.readouterr().out
    assert "NLL not computed: it needs existence probabilities" in out and "--fit-score-on" in out
    with xr.open_dataset(tmp_path / "a.nc") as ds:
        assert ds.attrs["content"] == "motchallenge" and float(ds["MOTA"][0]) == 0.25
    ds = _run(tmp_path, tracks, gt, "--mot-conf", "ignore", "--existence-one", "--default-std", "1")
    with pytest.warns(UserWarning, match="r = 1"):
        ref = _api(read_motchallenge(tracks, conf="ignore"), read_motchallenge(gt, kind="truth"),
                   FillIns(default_std=1.0, existence_one=True))  # fmt: skip
    np.testing.assert_allclose(ds["nll_value"].values, ref.metrics.nll["value"])
    assert np.isinf(ds["nll_value"].values[0]).all()  # r = 1 and a false track at frame 1


def test_a_constant_conf_column_is_absent(tmp_path, files):
    tracks, gt = files
    write_mot(tracks, [(*r[:6], -1) for r in TRACKS])
    with pytest.warns(UserWarning, match="constant"):
        table = read_motchallenge(tracks)
    assert "score" not in table.columns
    # scored with r = 1: the constant column is no score (else a calibration would be asked for)
    ds = _run(tmp_path, tracks, gt, "--existence-one", "--default-std", "1")
    assert "r = 1" in ds.attrs["fill_ins"]


def _table(rows):
    return pd.DataFrame(rows, columns=["frame", "id", "x", "y"])


def test_fit_constant_existence_recovers_the_matched_share():
    truth = _table([(0, 0, 0.0, 0.0), (0, 1, 10.0, 0.0), (1, 0, 0.0, 0.0)])
    # 5 rows: 3 within 2 of a distinct truth; one too far; one second track on a truth already matched
    tracks = _table([(0, 0, 0.5, 0.0), (0, 1, 10.0, 1.9), (0, 2, 0.0, 0.3), (1, 0, 3.0, 0.0), (1, 1, 0.1, 0)])
    fit = fit_constant_existence(tracks, truth, threshold=2.0)
    assert (fit.r, fit.n_rows, fit.n_matched) == (3 / 5, 5, 3)
    assert fit_constant_existence(tracks, truth, threshold=0.4).r == 2 / 5  # 0.3 and 0.1 only
    with pytest.raises(ValueError, match="both"):
        FillIns(existence_one=True, constant_existence=ConstantExistence(0.5))
    with pytest.raises(ValueError, match="probability"):
        ConstantExistence(1.5)


def test_cli_constant_existence_fit_is_used_and_recorded(tmp_path, files, capsys):
    tracks, gt = files
    # MOTChallenge files are matched as they are scored: IoU >= 0.5 (3 of 5 rows; track 8 at frame 1
    # has IoU 1/7 with its truth although its centre is within --threshold 2 of it)
    ds = _run(tmp_path, tracks, gt, "--mot-conf", "ignore", "--default-std", "1",
              "--fit-constant-existence-on", tracks, gt)  # fmt: skip
    assert "r = 0.6 (3 of 5 rows matched)" in capsys.readouterr().out
    fill = json.loads(ds.attrs["fill_ins"])["constant_existence"]
    assert (fill["r"], fill["n_matched"], fill["matching"], fill["threshold"]) == (0.6, 3, "iou", 0.5)
    tp, fp = int(ds["clear_total_matches"]), int(ds["clear_total_false_positives"])
    assert fill["r"] == tp / (tp + fp)  # the scoring's own CLEAR matching (on IoU)
    ref = _api(read_motchallenge(tracks, conf="ignore"), read_motchallenge(gt, kind="truth"),
               FillIns(default_std=1.0, constant_existence=ConstantExistence(0.6)))  # fmt: skip
    np.testing.assert_allclose(ds["nll_value"].values, ref.metrics.nll["value"], rtol=1e-12)
    assert np.isfinite(ds["nll_value"].values).all()
    # --mot-matching centre: centre distances within --threshold, as the scoring then matches (4 of 5)
    ds = _run(tmp_path, tracks, gt, "--mot-conf", "ignore", "--default-std", "1", "--mot-matching",
              "centre", "--fit-constant-existence-on", tracks, gt, name="centre")  # fmt: skip
    assert "r = 0.8 (4 of 5 rows matched)" in capsys.readouterr().out
    assert "matching" not in json.loads(ds.attrs["fill_ins"])["constant_existence"]
    rc = main(["score", str(tracks), str(gt), "-o", str(tmp_path / "b.nc"), "--mot-conf", "ignore",
               "--existence-one", "--fit-constant-existence-on", str(tracks), str(gt)])  # fmt: skip
    assert rc != 0 and "not both" in capsys.readouterr().err


def test_preset_av2_changes_the_matching_and_equals_the_api(tmp_path, files):
    tracks, gt = files
    base = ("--mot-conf", "r", "--default-std", "1", "--mot-matching", "centre")
    plain = _run(tmp_path, tracks, gt, *base, name="plain")
    av2 = _run(tmp_path, tracks, gt, *base, "--preset", "av2", name="av2")
    pair = read_motchallenge(tracks, conf="r"), read_motchallenge(gt, kind="truth")
    settings = EvaluationSettings(qs=(1, 10))
    ref = nb.score(*pair, fill=FillIns(default_std=1.0), settings=settings, preset="av2")
    # the 1.5-pixel offset at frame 1 is a match at 2 (the default) and a miss at av2's 1 m gate
    assert float(plain["mota"]) != float(av2["mota"])
    assert float(av2["mota"]) == pytest.approx(ref.metrics.clear.mota)
    assert float(av2["hota"]) == pytest.approx(ref.metrics.hota.hota)


def test_hota_threshold_and_settings_options(tmp_path, files):
    tracks, gt = files
    base = ("--mot-conf", "r", "--default-std", "1", "--mot-matching", "centre")
    a = _run(tmp_path, tracks, gt, *base, "--hota-threshold", "1", name="a")
    b = _run(tmp_path, tracks, gt, *base, "--hota-threshold", "5", name="b")
    ref = _api(read_motchallenge(tracks, conf="r"), read_motchallenge(gt, kind="truth"),
               FillIns(default_std=1.0), hota_threshold=1.0)  # fmt: skip
    assert float(a["hota"]) == pytest.approx(ref.metrics.hota.hota)
    assert float(a["hota"]) < float(b["hota"])
    c = _run(tmp_path, tracks, gt, *base, "--clear-rule", "trackeval", "--strict-threshold",
             "--distance-dims", "2", "--tgospa-gamma", "1", "--theorem-scale", "3", name="c")  # fmt: skip
    pair = read_motchallenge(tracks, conf="r"), read_motchallenge(gt, kind="truth")
    kw = dict(clear_rule="trackeval", strict_threshold=True, tgospa_gamma=1.0, theorem_scale=3.0)
    ref = _api(*pair, FillIns(default_std=1.0), **kw)
    assert float(c["mota"]) == pytest.approx(ref.metrics.clear.mota)


def test_evaluate_has_the_settings_options(capsys):
    with pytest.raises(SystemExit):
        main(["evaluate", "--help"])
    text = capsys.readouterr().out
    for flag in ("--hota-threshold", "--distance ", "--distance-dims", "--clear-rule", "--strict-threshold"):
        assert flag in text


def test_score_frames_union_and_refusal_from_the_command_line(tmp_path, capsys):
    """A frame in one table only is refused, naming it; ``--frames union`` scores every frame."""
    from nllbench.cli import main

    tracks = tmp_path / "tracks.csv"
    truth = tmp_path / "truth.csv"
    tracks.write_text("frame,id,x,y,r\n0,1,1.0,1.0,0.9\n1,1,2.0,2.0,0.9\n")
    truth.write_text("frame,id,x,y\n0,7,1.0,1.0\n1,7,2.0,2.0\n2,7,3.0,3.0\n")
    out = tmp_path / "m.nc"
    common = [
        "score",
        str(tracks),
        str(truth),
        "-o",
        str(out),
        "--default-std",
        "1",
        "--undetected-rate",
        "0.5",
        "--fov",
        "0",
        "0",
        "5",
        "5",
    ]
    assert main(common) == 2
    err = capsys.readouterr().err
    assert "1 frame has truth but no tracks (2)" in err and not out.exists()
    code = main([*common, "--frames", "union"])
    assert code == 0, capsys.readouterr().err
    assert "(3 frames)" in capsys.readouterr().out
    assert main([*common, "--frames", "union", "2"]) == 2
    assert "--frames: expected 'union' alone or integers" in capsys.readouterr().err
