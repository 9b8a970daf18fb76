"""Smaller frictions of ``nllbench score`` met by a new user (issue 33, item 5), each with its fix.

* ``--fit-trajectory-on`` reads its pair as ``score`` reads its inputs, and names itself in errors;
* a fitted undetected-trajectory rate of 0 is warned (the trajectory NLL is then infinite where a
  truth has no track);
* a batch's warnings name their sequence;
* the help names its guides as files of nllbench's source, not as if installed.
"""

from __future__ import annotations

import re

import pytest

from nllbench.cli import main

# frame, id, left, top, width, height, conf (r): two objects, each always tracked
GT = [(f, i, 10 * i + f, 5, 4, 8, 1, 1, 1) for f in range(1, 9) for i in (1, 2)]
TRACKS = [(f, i + 6, 10 * i + f + 0.3, 5.2, 4, 8, 0.9, -1, -1, -1) for f in range(1, 9) for i in (1, 2)]
FILL = ["--mot-conf", "r", "--mot-box-std-fraction", "0.2", "--fov", "0", "0", "60", "60"]


def _write(path, rows):
    path.write_text("".join(",".join(f"{v:g}" for v in r) + "\n" for r in rows))
    return path


@pytest.fixture
def pair(tmp_path):
    return _write(tmp_path / "tr.txt", TRACKS), _write(tmp_path / "gt.txt", GT)


def test_fit_trajectory_on_reads_mot_files_and_warns_a_zero_rate(pair, tmp_path, capsys):
    """MOTChallenge files as the calibration pair (formerly 'tracks: expected a .csv or .parquet file');
    every calibration truth tracked: the fitted rate is 0 and the command says what that implies."""
    tracks, gt = pair
    out = tmp_path / "m.nc"
    args = ["score", str(tracks), str(gt), "-o", str(out), *FILL, "--q", "1", "--no-proper-scores"]
    args += ["--trajectory", "--fit-trajectory-on", str(tracks), str(gt), "--fit-window", "4"]
    args += ["--threshold", "5", "--cutoff", "5"]
    assert main(args) == 0
    captured = capsys.readouterr()
    assert "fitted undetected trajectories: rate 0" in captured.out
    assert "the fitted undetected-trajectory rate is 0" in captured.err


def test_fit_trajectory_on_errors_name_the_option(pair, tmp_path, capsys):
    tracks, gt = pair
    bad = tmp_path / "cal.json"
    bad.write_text("{}")
    args = ["score", str(tracks), str(gt), "-o", str(tmp_path / "m.nc"), *FILL, "--q", "1"]
    args += ["--trajectory", "--fit-trajectory-on", str(bad), str(gt)]
    assert main(args) != 0
    assert (
        f"--fit-trajectory-on {bad} {gt}: tracks: expected a .csv or .parquet file" in capsys.readouterr().err
    )


def test_batch_warnings_name_their_sequence(pair, tmp_path, capsys):
    """A constant conf column (no score) in one sequence: the warning says which sequence."""
    tracks, gt = pair
    res, truth = tmp_path / "res", tmp_path / "truth"
    res.mkdir()
    truth.mkdir()
    _write(res / "SEQ-07.txt", [(*r[:6], -1, -1, -1, -1) for r in TRACKS])
    (truth / "SEQ-07.txt").write_text(gt.read_text())
    args = [
        "score",
        "--tracks-dir",
        str(res),
        "--scenario-dir",
        str(truth),
        "--output-dir",
        str(tmp_path / "o"),
    ]
    assert main(args) == 0
    err = capsys.readouterr().err
    assert re.search(r"warning: SEQ-07: .*SEQ-07\.txt: column 'conf' is -1 on every line", err)


def test_help_names_its_guides_as_files_of_the_source(capsys):
    with pytest.raises(SystemExit):
        main(["score", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    cited = re.findall(r"docs/\w+\.md(?: in nllbench's source)?", text)
    assert cited and all(c.endswith("in nllbench's source") for c in cited), cited


def test_a_first_run_says_the_kernels_compile(tmp_path):
    """With an empty numba cache (a fresh install) the command says why its first run is slow."""
    import os
    import subprocess
    import sys

    code = "from nllbench.engine.assignment import kernels_cached; print(kernels_cached())"
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    fresh = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert fresh.stdout.strip() == "False"
    code = "from nllbench.cli.common import say_first_compilation; say_first_compilation('score')"
    said = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert "compiling nllbench's numerical kernels on this first use" in said.stderr
