"""Runs given as files, scored in the library as ``nllbench score`` scores them
(:mod:`nllbench.trackers.score_runs`): the command is its options mapped onto one call, so the
library's files are the command's, byte for byte, and its decisions (the NLL left out, what it
needs) are the command's."""

from __future__ import annotations

import pandas as pd
import pytest
from support.mot_files import write_mot

from nllbench.cli import main
from nllbench.measures.evaluate import EvaluationSettings
from nllbench.trackers.fillins import FillIns
from nllbench.trackers.formats import ReadOptions
from nllbench.trackers.formats.batch import batch_runs
from nllbench.trackers.motchallenge import box_summary, pair_measures, read_mot_pair
from nllbench.trackers.score_runs import (
    COMBINED,
    aligned_rows,
    nll_left_out,
    nll_needs,
    score_batch,
    score_pair,
    score_pair_without_nll,
)

# frame, id, left, top, width, height, conf
GT_A = [(1, 1, 0, 0, 2, 2, 1), (1, 2, 10, 0, 2, 2, 1), (2, 1, 1, 0, 2, 2, 1), (2, 2, 11, 0, 2, 2, 0)]
TR_A = [(1, 7, 0.5, 0.2, 2, 2, 0.9), (1, 8, 11.5, 0.0, 2, 2, 0.6), (2, 7, 1.3, 0.1, 2, 2, 0.8)]
GT_B = [(1, 1, 5, 5, 4, 4, 1), (2, 1, 6, 5, 4, 4, 1), (3, 1, 7, 5, 4, 4, 1)]
TR_B = [(1, 3, 5.2, 5.1, 4, 4, 0.7), (3, 3, 7.5, 4.8, 4, 4, 0.4), (3, 4, 40, 40, 4, 4, 0.1)]


@pytest.fixture
def dirs(tmp_path):
    res, gt = tmp_path / "res", tmp_path / "gt"
    for name, tracks, truth in (("SEQ-A", TR_A, GT_A), ("SEQ-B", TR_B, GT_B)):
        write_mot(res / f"{name}.txt", tracks)
        write_mot(gt / f"{name}.txt", truth)
    return res, gt


def test_the_nll_is_left_out_only_when_measures_omit_it():
    assert nll_left_out(None) is None
    assert nll_left_out("gospa, nll") is None
    assert (
        nll_left_out("hota,clear_mot,identity") == "nll in --measures (TrackEval's measures only were asked)"
    )


def test_what_the_nll_needs_is_said_per_missing_column():
    scores = pd.DataFrame(columns=["frame", "id", "x", "y", "score"])
    needs = nll_needs(scores, FillIns())
    assert needs.startswith("existence probabilities: the confidence column is a score")
    assert needs.endswith("covariances: --mot-box-std-fraction F or --default-std S")
    assert (
        nll_needs(pd.DataFrame(columns=["frame", "id", "x", "y", "r", "var_x", "var_y"]), FillIns()) is None
    )
    assert (
        nll_needs(pd.DataFrame(columns=["frame", "x", "y"]), FillIns(existence_one=True, default_std=1.0))
        is None
    )


def test_aligned_rows_fill_missing_cells_in_order_of_first_appearance():
    assert aligned_rows([{"a": 1}, {"b": 2, "a": 3}]) == [{"a": 1, "b": ""}, {"a": 3, "b": 2}]


def test_a_mot_pair_without_its_fill_ins_gives_trackeval_measures_only(dirs, tmp_path):
    res, gt = dirs
    read = ReadOptions()
    pair = read_mot_pair(res / "SEQ-A.txt", gt / "SEQ-A.txt")
    row, measures = score_pair_without_nll(pair, None, "mine")
    assert row == {"filter": "mine", "steps": 2, **box_summary(pair_measures(pair)), "not_applicable": "nll"}
    assert measures.seconds >= 0
    with pytest.raises(ValueError, match="--per-frame and the trajectory NLL need the NLL, which needs "):
        score_pair(
            res / "SEQ-A.txt", gt / "SEQ-A.txt", tmp_path / "a.nc", fill=FillIns(), read=read, per_frame="x"
        )
    assert not (tmp_path / "a.nc").exists()
    row, result, needs = score_pair(
        res / "SEQ-A.txt", gt / "SEQ-A.txt", tmp_path / "a.nc", fill=FillIns(), read=read, tracker="mine"
    )
    assert result is None and needs.startswith("existence probabilities") and row["not_applicable"] == "nll"
    assert (tmp_path / "a.nc").is_file()


def test_the_batch_call_writes_the_commands_summary_byte_for_byte(dirs, tmp_path):
    res, gt = dirs
    assert (
        main(
            [
                "score",
                "--tracks-dir",
                str(res),
                "--scenario-dir",
                str(gt),
                "--output-dir",
                str(tmp_path / "c"),
            ]
        )
        == 0
    )
    (tmp_path / "l").mkdir()
    items, mot = batch_runs(res, gt, "auto")
    rows, timing, result, needs = score_batch(
        items, tmp_path / "l", mot=mot, fill=FillIns(), read=ReadOptions(), settings=EvaluationSettings()
    )
    assert result is None and needs.startswith("existence probabilities")
    assert [r["sequence"] for r in rows] == ["SEQ-A", "SEQ-B", COMBINED]
    assert [t["item"] for t in timing] == ["SEQ-A", "SEQ-B"]
    for name in ("summary.csv", "motchallenge.nc"):
        assert (tmp_path / "l" / name).read_bytes() == (tmp_path / "c" / name).read_bytes(), name
