"""The reference code's settings on the command line: MBM birth, truth from CSV, the estimator's update."""

from __future__ import annotations

import json

import numpy as np
import pytest

from nllbench.cli import main
from nllbench.pipeline.runs import simulate_file
from nllbench.simulation.scenarios import read_truth_csv
from nllbench.store import read_scenario


def test_cli_mb_birth(tmp_path, capsys):
    birth = json.dumps([{"r": 0.3, "mean": [150, 150, 0, 0], "std": [10, 10, 1, 1]}])
    out = tmp_path / "s.nc"
    assert (
        main(
            [
                "simulate",
                "--scenario",
                "williams15",
                "--steps",
                "3",
                "--mb-birth",
                birth,
                "--mb-start",
                "-o",
                str(out),
            ]
        )
        == 0
    )
    m = read_scenario(out).model
    np.testing.assert_array_equal(m.initial_r, [0.3])
    assert (
        main(["simulate", "--scenario", "williams15", "--mb-birth", "[{", "-o", str(tmp_path / "x.nc")]) == 2
    )
    assert "--mb-birth: expected JSON" in capsys.readouterr().err
    assert not (tmp_path / "x.nc").exists()


def test_truth_beyond_the_requested_steps_is_refused(tmp_path, capsys):
    path = tmp_path / "t.csv"
    path.write_text("step,id,x,y,vx,vy\n1,0,1,2,3,4\n9,0,1,2,3,4\n")
    with pytest.raises(ValueError, match="line 3, column 'step': expected a step in 1..5, got 9"):
        read_truth_csv(path, steps=5)
    code = main(
        [
            "simulate",
            "--scenario",
            "williams15",
            "--truth",
            str(path),
            "--steps",
            "5",
            "-o",
            str(tmp_path / "o.nc"),
        ]
    )
    assert code == 2 and "t.csv, line 3" in capsys.readouterr().err
    assert not (tmp_path / "o.nc").exists()
    code = main(
        [
            "simulate",
            "--scenario",
            "williams15",
            "--truth",
            str(path),
            "--truth-seed",
            "3",
            "-o",
            str(tmp_path / "o.nc"),
        ]
    )
    assert code == 2 and "--truth-seed" in capsys.readouterr().err


def test_cli_filter_estimator_needs_update(tmp_path, capsys):
    scen = tmp_path / "s.nc"
    simulate_file("williams15", 1, scen, {"steps": 3})
    code = main(
        ["filter", str(scen), "--filter", "phd", "--estimator", "greedy", "-o", str(tmp_path / "p.nc")]
    )
    assert code == 2 and "--estimate-at update" in capsys.readouterr().err
