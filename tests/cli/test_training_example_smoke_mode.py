"""The PyTorch training example (examples/) runs in smoke mode as a user starts it."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from support.paths import ROOT

if os.environ.get("CI") or os.environ.get("NLLBENCH_REQUIRE_TORCH"):  # .ci/run installs the extra: never skip
    importlib.import_module("torch")
else:  # a checkout without the extra skips it
    pytest.importorskip("torch")

SRC = ROOT / "src"


def test_the_training_example_runs_in_smoke_mode(tmp_path):
    out = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "train_set_nll.py"), "--smoke", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(SRC)},
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    table = pd.read_csv(tmp_path / "scores.csv")
    assert set(table["loss"]) == {"hungarian", "set_nll"}
    assert np.isfinite(table[["nll", "energy", "gospa", "ece"]].to_numpy()).all()  # NEES: NaN if no r > 0.5
    assert (tmp_path / "differences.csv").is_file()
