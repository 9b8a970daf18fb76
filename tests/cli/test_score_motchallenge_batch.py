"""``nllbench score --tracks-dir --scenario-dir --output-dir`` on MOTChallenge sequences.

Each sequence's metrics file equals the one-run command on the same pair,
bit for bit, and the one-run command equals the Python API
(``tests/cli/test_score_motchallenge_files.py``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from support.mot_files import write_mot

import nllbench as nb
from nllbench.cli import main
from nllbench.cli.score import batch_items
from nllbench.measures.evaluate import EvaluationSettings
from nllbench.trackers.adapters import read_motchallenge
from nllbench.trackers.motchallenge import read_mot_pair

# frame, id, left, top, width, height, conf
GT_A = [(1, 1, 0, 0, 2, 2, 1), (1, 2, 10, 0, 2, 2, 1), (2, 1, 1, 0, 2, 2, 1), (2, 2, 11, 0, 2, 2, 0)]
TR_A = [(1, 7, 0.5, 0.2, 2, 2, 0.9), (1, 8, 11.5, 0.0, 2, 2, 0.6), (2, 7, 1.3, 0.1, 2, 2, 0.8)]
GT_B = [(1, 1, 5, 5, 4, 4, 1), (2, 1, 6, 5, 4, 4, 1), (3, 1, 7, 5, 4, 4, 1)]
TR_B = [(1, 3, 5.2, 5.1, 4, 4, 0.7), (3, 3, 7.5, 4.8, 4, 4, 0.4), (3, 4, 40, 40, 4, 4, 0.1)]
OPTIONS = ["--mot-conf", "r", "--mot-box-std-fraction", "0.5", "--undetected-rate", "0.1"]
OPTIONS += ["--fov", "0", "0", "50", "50", "--frames", "union", "--q", "1", "10"]


@pytest.fixture
def dirs(tmp_path):
    """Results <SEQ>.txt; ground truth flat (A.txt) and in MOTChallenge's layout (B/gt/gt.txt)."""
    res, gt = tmp_path / "res", tmp_path / "gt"
    write_mot(res / "SEQ-A.txt", TR_A)
    write_mot(res / "SEQ-B.txt", TR_B)
    write_mot(gt / "SEQ-A.txt", GT_A)
    write_mot(gt / "SEQ-B" / "gt" / "gt.txt", GT_B)
    return res, gt


def test_mot_batch_scores_each_sequence_as_its_one_run_command(dirs, tmp_path):
    res, gt = dirs
    out = tmp_path / "m"
    assert (
        main(
            ["score", "--tracks-dir", str(res), "--scenario-dir", str(gt), "--output-dir", str(out), *OPTIONS]
        )
        == 0
    )
    summary = pd.read_csv(out / "summary.csv")
    assert summary.sequence.tolist() == ["SEQ-A", "SEQ-B", "COMBINED"]
    for seq, truth in (("SEQ-A", gt / "SEQ-A.txt"), ("SEQ-B", gt / "SEQ-B" / "gt" / "gt.txt")):
        one = tmp_path / f"{seq}.nc"
        assert main(["score", str(res / f"{seq}.txt"), str(truth), "-o", str(one), *OPTIONS]) == 0
        with xr.open_dataset(out / f"{seq}.nc") as b, xr.open_dataset(one) as s:
            np.testing.assert_array_equal(b["nll_value"].values, s["nll_value"].values)
            np.testing.assert_array_equal(b["gospa"].values, s["gospa"].values)
            assert b.attrs["tracks_file"] == f"{seq}.txt" and b.attrs["truth_file"] == truth.name
        # and the API on the files read by read_motchallenge
        api = nb.score(
            read_motchallenge(res / f"{seq}.txt", conf="r", box_std_fraction=0.5),
            read_motchallenge(truth, kind="truth"),
            fill=nb.FillIns(0.1, (0, 0), (50, 50)),
            frames="union",
            settings=EvaluationSettings(qs=(1, 10)),
        )
        row = summary[summary.sequence == seq].iloc[0]
        # MOTA on the boxes' IoU (as TrackEval), the NLL on their Gaussians
        assert float(row["mota"]) == read_mot_pair(res / f"{seq}.txt", truth).measures().fields["MOTA"]
        assert float(row["nll_q10"]) == float(api.summary()["nll_q10"])


def test_mot_batch_refuses_a_missing_or_doubled_ground_truth_and_mixed_files(dirs, tmp_path):
    res, gt = dirs
    args = ["score", "--tracks-dir", str(res), "--scenario-dir", str(gt), "--output-dir", str(tmp_path / "m")]
    write_mot(gt / "SEQ-A" / "gt" / "gt.txt", GT_A)
    assert main([*args, *OPTIONS]) == 2
    assert not (tmp_path / "m").exists()
    with pytest.raises(ValueError, match=r"sequence SEQ-A: expected one ground truth, got both"):
        batch_items(_args(args))
    (gt / "SEQ-A.txt").unlink()
    (gt / "SEQ-A" / "gt" / "gt.txt").unlink()
    with pytest.raises(ValueError, match=r"sequence SEQ-A: no ground truth, looked for .*SEQ-A.txt and"):
        batch_items(_args(args))
    write_mot(gt / "SEQ-A.txt", GT_A)
    pd.DataFrame({"frame": [0], "x": [0.0], "y": [0.0]}).to_csv(res / "seed1.csv", index=False)
    with pytest.raises(
        ValueError, match="expected one kind of tracks file, got MOTChallenge .txt files and seed"
    ):
        batch_items(_args(args))
    items, mot = batch_items(_args([*args, "--format", "mot"]))
    assert mot and [name for name, _, _ in items] == ["SEQ-A", "SEQ-B"]
    items, mot = batch_items(_args([*args, "--format", "table"]))
    assert not mot and [name for name, _, _ in items] == ["seed1"]


def test_batch_takes_frames_union_only(dirs, tmp_path, capsys):
    res, gt = dirs
    args = ["score", "--tracks-dir", str(res), "--scenario-dir", str(gt), "--output-dir", str(tmp_path / "m")]
    assert main([*args, "--frames", "1", "2", "--existence-one"]) == 2
    assert "--frames (but --frames union)" in capsys.readouterr().err


def _args(argv):
    import argparse

    from nllbench.cli.score import add_parsers

    p = argparse.ArgumentParser()
    add_parsers(p.add_subparsers())
    return p.parse_args(argv)


def test_a_failing_sequence_of_a_batch_is_named(dirs, tmp_path, capsys):
    """SEQ-B's tracks and truth cover different frames (no --frames union): the error names SEQ-B's files."""
    res, gt = dirs
    out = tmp_path / "m"
    strict = [o for o in OPTIONS if o not in ("--frames", "union")]
    code = main(
        ["score", "--tracks-dir", str(res), "--scenario-dir", str(gt), "--output-dir", str(out), *strict]
    )
    err = capsys.readouterr().err
    assert code == 2 and "SEQ-B.txt (run SEQ-B, truth" in err and "gt.txt" in err
    assert not out.exists()


def test_frames_union_reaches_the_undetected_rate_fit(dirs, tmp_path):
    """--frames union holds for the --fit-undetected-on pair too (its tables cover different frames)."""
    res, gt = dirs
    opts = [o for o in OPTIONS if o not in ("--undetected-rate", "0.1")]
    cal = ["--fit-undetected-on", str(res / "SEQ-B.txt"), str(gt / "SEQ-B" / "gt" / "gt.txt")]
    out = tmp_path / "a.nc"
    assert main(["score", str(res / "SEQ-A.txt"), str(gt / "SEQ-A.txt"), "-o", str(out), *opts, *cal]) == 0
    assert out.exists()


def test_centre_matching_batch_keeps_the_former_convention(dirs, tmp_path):
    """--mot-matching centre: the former rows (distance matching, no preprocessing), no combined row."""
    res, gt = dirs
    out = tmp_path / "c"
    args = ["score", "--tracks-dir", str(res), "--scenario-dir", str(gt), "--output-dir", str(out), *OPTIONS]
    assert main([*args, "--mot-matching", "centre"]) == 0
    summary = pd.read_csv(out / "summary.csv")
    assert summary.sequence.tolist() == ["SEQ-A", "SEQ-B"] and not (out / "motchallenge.nc").exists()
    api = nb.score(
        read_motchallenge(res / "SEQ-A.txt", conf="r", box_std_fraction=0.5),
        read_motchallenge(gt / "SEQ-A.txt", kind="truth"),
        fill=nb.FillIns(0.1, (0, 0), (50, 50)),
        frames="union",
        settings=EvaluationSettings(qs=(1, 10)),
    )
    assert float(summary.iloc[0]["mota"]) == float(api.summary()["mota"])
