"""``nllbench score --timing``: the CPU seconds of each measure, empty where a measure is not computed,
adding up with the reading, the densities, the estimates and the rest to the item's CPU seconds."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from support.mot_files import write_mot

from nllbench.cli import main
from nllbench.measures.selection import MEASURE_NAMES

# frame, id, left, top, width, height, conf: two small MOTChallenge sequences (as the batch tests)
GT_A = [(1, 1, 0, 0, 2, 2, 1), (1, 2, 10, 0, 2, 2, 1), (2, 1, 1, 0, 2, 2, 1), (2, 2, 11, 0, 2, 2, 1)]
TR_A = [(1, 7, 0.5, 0.2, 2, 2, 0.9), (1, 8, 11.5, 0.0, 2, 2, 0.6), (2, 7, 1.3, 0.1, 2, 2, 0.8)]
GT_B = [(1, 1, 5, 5, 4, 4, 1), (2, 1, 6, 5, 4, 4, 1), (3, 1, 7, 5, 4, 4, 1)]
TR_B = [(1, 3, 5.2, 5.1, 4, 4, 0.7), (3, 3, 7.5, 4.8, 4, 4, 0.4), (3, 4, 40, 40, 4, 4, 0.1)]
OPTIONS = ["--mot-conf", "r", "--mot-box-std-fraction", "0.5", "--undetected-rate", "0.1"]
OPTIONS += ["--fov", "0", "0", "50", "50", "--frames", "union", "--q", "1", "10", "--progress", "0"]

#: The columns the timing file had before the per-measure ones (kept, in this order, for their readers).
EARLIER = ["item", "filter", "q", "cov_scale", "seconds", "nll_seconds", "cpu_seconds", "read_cpu_seconds"]
EARLIER += ["box_cpu_seconds", "proper_seconds"]
MEASURE_COLUMNS = [f"cpu_seconds_{n}" for n in MEASURE_NAMES]
PARTS = ["read_cpu_seconds", "density_cpu_seconds", "estimate_cpu_seconds", *MEASURE_COLUMNS]
PARTS += ["rest_cpu_seconds"]


@pytest.fixture
def dirs(tmp_path):
    res, gt = tmp_path / "res", tmp_path / "gt"
    for name, tracks, truth in (("SEQ-A", TR_A, GT_A), ("SEQ-B", TR_B, GT_B)):
        write_mot(res / f"{name}.txt", tracks)
        write_mot(gt / f"{name}.txt", truth)
    return res, gt


def _timing(tmp_path, dirs, name, *extra):
    res, gt = dirs
    out, timing = tmp_path / f"m_{name}", tmp_path / f"{name}.csv"
    args = ["score", "--tracks-dir", str(res), "--scenario-dir", str(gt), "--output-dir", str(out)]
    assert main([*args, *OPTIONS, "--timing", str(timing), *extra]) == 0
    text = timing.read_text()
    return pd.read_csv(timing), text


def _filled(table: pd.DataFrame) -> set[str]:
    """The per-measure columns with a number in every row (the others must be empty in every row)."""
    filled = {c for c in MEASURE_COLUMNS if table[c].notna().all()}
    assert all(table[c].isna().all() for c in set(MEASURE_COLUMNS) - filled)
    return {c.removeprefix("cpu_seconds_") for c in filled}


def _adds_up(table: pd.DataFrame) -> None:
    for _, row in table.iterrows():
        parts = {c: row[c] for c in PARTS if not math.isnan(row[c])}
        assert all(v >= 0 for c, v in parts.items() if c != "rest_cpu_seconds"), row.to_dict()
        assert parts["rest_cpu_seconds"] >= -1e-9  # the laps lie inside the item's time: never more
        assert sum(parts.values()) == pytest.approx(row["cpu_seconds"], rel=1e-12, abs=1e-12)


def test_the_timing_file_gives_each_measures_cpu_seconds_adding_up_to_the_item(tmp_path, dirs):
    table, text = _timing(tmp_path, dirs, "all")
    assert list(table.columns) == [*EARLIER, *PARTS[1:]]
    assert table["item"].tolist() == ["SEQ-A", "SEQ-B"]
    # every measure of the default set on MOTChallenge files (the box ones on IoU); no trajectory NLL
    assert _filled(table) == set(MEASURE_NAMES) - {"trajectory_nll"}
    assert ",," in text.splitlines()[1]  # a measure not computed is an empty cell, not 0
    assert table["density_cpu_seconds"].notna().all() and table["estimate_cpu_seconds"].notna().all()
    _adds_up(table)
    boxes = table[["cpu_seconds_hota", "cpu_seconds_clear_mot", "cpu_seconds_identity"]].sum(axis=1)
    assert (boxes <= table["box_cpu_seconds"] + 1e-12).all()  # the box measures' part of their seconds


def test_measures_left_out_are_empty_and_the_rest_still_adds_up(tmp_path, dirs):
    skipped = {"energy_score", "intensity_score", "pgospa", "ptgospa"}
    names = ",".join(n for n in MEASURE_NAMES if n not in skipped | {"trajectory_nll"})
    table, _ = _timing(tmp_path, dirs, "some", "--measures", names)
    assert _filled(table) == set(MEASURE_NAMES) - skipped - {"trajectory_nll"}
    _adds_up(table)
    # TrackEval's measures alone: no NLL's run, so no densities or estimates either
    table, _ = _timing(tmp_path, dirs, "boxes", "--measures", "hota,clear_mot,identity")
    assert _filled(table) == {"hota", "clear_mot", "identity"}
    assert table["density_cpu_seconds"].isna().all() and table["estimate_cpu_seconds"].isna().all()
    _adds_up(table)


def test_the_trajectory_nll_asked_has_its_seconds_too(tmp_path, dirs):
    extra = ["--trajectory", "--undetected-trajectories", "0.5", "0.4"]
    table, _ = _timing(tmp_path, dirs, "trajectory", *extra)
    assert _filled(table) == set(MEASURE_NAMES)
    _adds_up(table)


def test_a_bad_timing_path_is_refused_by_name_before_any_work(tmp_path, dirs, capsys):
    res, gt = dirs
    (tmp_path / "a_file").write_text("mine\n")
    args = ["score", "--tracks-dir", str(res), "--scenario-dir", str(gt), "--output-dir", str(tmp_path / "m")]
    for bad in (tmp_path, tmp_path / "a_file" / "t.csv"):  # a directory; below a file
        assert main([*args, *OPTIONS, "--timing", str(bad)]) == 2
        err = capsys.readouterr().err
        assert "--timing" in err and "Traceback" not in err
        assert not (tmp_path / "m").exists()
    assert (tmp_path / "a_file").read_text() == "mine\n"
