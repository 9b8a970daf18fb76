"""``nllbench score`` refuses bad numbers and mismatched files by name and leaves no output behind (one
run, a batch, all three outputs together).

The readers' own checks: ``tests/unit/trackers/test_table_readers_name_bad_cells.py``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from nllbench.cli import main

HEADER = "frame,id,r,x,y,var_x,var_y\n"
ROW = "0,1,0.9,1.0,2.0,0.5,0.5\n"


@pytest.fixture
def tables(tmp_path):
    (tmp_path / "tracks.csv").write_text(HEADER + ROW + "1,1,0.9,1.2,2.1,0.5,0.5\n")
    (tmp_path / "truth.csv").write_text("frame,id,x,y\n0,1,1.1,2.0\n1,1,1.3,2.0\n")
    return [str(tmp_path / "tracks.csv"), str(tmp_path / "truth.csv")]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (
            ["--undetected-rate", "nan", "--fov", "0", "0", "9", "9"],
            "argument --undetected-rate: expected a finite",
        ),
        (
            ["--undetected-rate", "-1", "--fov", "0", "0", "9", "9"],
            "argument --undetected-rate: expected a finite",
        ),
        (
            ["--undetected-rate", "1", "--fov", "0", "0", "inf", "9"],
            "argument --fov: expected a finite number",
        ),
        (["--p", "0.5"], "argument --p: expected a finite number in [1, inf)"),
        (["--q", "0"], "argument --q: expected an integer in [1, 1000000]"),
        (["--theorem-rho", "1"], "argument --theorem-rho: expected a finite number in (0, 1)"),
        (["--cutoff", "0"], "argument --cutoff: expected a finite number in (0, inf)"),
        (["--default-std", "-1"], "argument --default-std"),
        (["--frames", "0.5"], "argument --frames: expected an integer"),
        (["--existence-threshold", "1"], "argument --existence-threshold"),
        (["--temper", "nan"], "argument --temper"),
        (["--cov-scale", "inf"], "argument --cov-scale"),
        (["--seed", "-2"], "argument --seed"),
    ],
)
def test_cli_bad_numbers_are_named(tables, tmp_path, capsys, extra, message):
    with pytest.raises(SystemExit) as exc:
        main(["score", *tables, "-o", str(tmp_path / "o" / "m.nc"), *extra])
    assert exc.value.code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--per-frame", "{tracks}/pf.csv"], "--per-frame '{tracks}/pf.csv': cannot write there"),
        (["--per-frame", "{dir}"], "--per-frame '{dir}': expected a file path"),
        (["--summary", "{out}"], "--summary '{out}': the same path as -o"),
        # outputs are checked before the (costly) calibration is fitted, and a failure after
        # scoring started leaves neither the metrics file nor the summary nor the per-frame table
        (["--per-frame", "{pf}", "--state", "x", "z"], "column 'z' is missing"),
        (
            [
                "--per-frame",
                "{pf}",
                "--fov",
                "0",
                "0",
                "9",
                "9",
                "--fit-undetected-on",
                "{dir}/none.csv",
                "{truth}",
            ],
            "cannot read it as a table",
        ),
        (
            ["--per-frame", "{pf}", "--undetected-rate", "1", "--fov", "9", "9", "0", "0"],
            "fov: expected finite bounds with every upper above",
        ),
    ],
)
def test_cli_failures_leave_no_output(tables, tmp_path, capsys, extra, message):
    (tmp_path / "adir").mkdir()
    out = tmp_path / "o" / "m.nc"
    names = dict(
        tracks=tables[0], truth=tables[1], dir=tmp_path / "adir", out=out, pf=tmp_path / "o" / "pf.csv"
    )
    args = [a.format(**names) for a in extra]
    assert main(["score", *tables, "-o", str(out), *args]) == 2
    assert message.format(**names) in capsys.readouterr().err
    assert not (tmp_path / "o").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["adir", "tracks.csv", "truth.csv"]


def test_cli_writes_all_three_outputs_together(tables, tmp_path, capsys):
    out = tmp_path / "o" / "m.nc"
    assert main(["score", *tables, "-o", str(out), "--per-frame", str(tmp_path / "o" / "pf.csv")]) == 0
    assert sorted(p.name for p in (tmp_path / "o").iterdir()) == ["m.nc", "m.summary.csv", "pf.csv"]
    pf = pd.read_csv(tmp_path / "o" / "pf.csv")
    assert pf.frame.tolist() == [0, 1] and np.isfinite(pf.nll).all()


def test_cli_batch_failure_leaves_no_directory(tables, tmp_path, capsys):
    tracks_dir = tmp_path / "tr"
    tracks_dir.mkdir()
    (tracks_dir / "seed0.csv").write_text(HEADER + ROW)
    args = ["--scenario-dir", str(tmp_path / "none"), "--existence-one"]
    out = ["--output-dir", str(tmp_path / "m"), "--timing", str(tmp_path / "t" / "timing.csv")]
    assert main(["score", "--tracks-dir", str(tracks_dir), *args, *out]) == 2
    assert "seed0.nc" in capsys.readouterr().err
    assert not (tmp_path / "m").exists() and not (tmp_path / "t").exists()


def test_scenario_file_must_match_a_scenario_truth(tmp_path, capsys):
    for seed in (1, 2):
        sim = ["simulate", "--scenario", "williams15", "--seed", str(seed), "--steps", "3"]
        assert main([*sim, "-o", str(tmp_path / f"seed{seed}.nc")]) == 0
    (tmp_path / "t.csv").write_text(HEADER + ROW)
    run = ["score", str(tmp_path / "t.csv"), str(tmp_path / "seed1.nc"), "--q", "1"]
    out = tmp_path / "o" / "m.nc"
    assert main([*run, "-o", str(out), "--scenario-file", str(tmp_path / "seed2.nc")]) == 2
    err = capsys.readouterr().err
    assert "seed2.nc': expected the scenario of the truth" in err and "seed" in err
    assert not (tmp_path / "o").exists()
    assert main([*run, "-o", str(out), "--scenario-file", str(tmp_path / "seed1.nc")]) == 0
