"""``nllbench score`` prints its progress on stderr and writes the same files."""

from __future__ import annotations

import pandas as pd
from support.paths import ROOT

from nllbench.cli import main

EXAMPLES = ROOT / "docs/examples"


def test_score_prints_progress_on_stderr_and_the_same_files(tmp_path, capsys):
    args = [
        "score",
        str(EXAMPLES / "tracks.csv"),
        str(EXAMPLES / "truth.csv"),
        "--undetected-rate",
        "0.5",
        "--fov",
        "0",
        "0",
        "100",
        "100",
        "--frames",
        "union",
    ]
    assert main([*args, "-o", str(tmp_path / "a.nc"), "--per-frame", str(tmp_path / "a.csv")]) == 0
    quiet = capsys.readouterr()
    assert "frames (" not in quiet.err
    out = [*args, "-o", str(tmp_path / "b.nc"), "--per-frame", str(tmp_path / "b.csv")]
    assert main([*out, "--progress", "1e-9"]) == 0
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("score: ")]
    frames = len(pd.read_csv(tmp_path / "a.csv"))
    assert [line.split(" frames")[0] for line in err] == [
        f"score: {k}/{frames}" for k in range(1, frames + 1)
    ]
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()
