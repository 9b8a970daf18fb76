"""nllbench's ``tpmbm`` and ``tpmb`` against the published MATLAB trajectory filters under GNU Octave.

Skipped without Octave or the authors' code: set ``NLLBENCH_MTT_MATLAB`` to a
checkout of github.com/Agarciafernandez/MTT (or its "TPMBM filter" folder; not
part of nllbench). A small version of ``scripts/tpmbm_octave_parity.py``
(``docs/trajectory_filters.md``, "Parity with the MATLAB filters"): 3 runs of
12 steps, 10 hypotheses, and the MATLAB L-scan window as long as the run, so
that both sides update the whole trajectory and must give the same estimates
in every run (with the published window of 5 the trajectory estimates differ
by the window's approximation).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "tpmbm_octave_parity.py"
MATLAB = os.environ.get("NLLBENCH_MTT_MATLAB", "")
HAS_MATLAB = bool(MATLAB) and any(
    (folder / "TPMBM_all_update.m").is_file() for folder in (Path(MATLAB), Path(MATLAB) / "TPMBM filter")
)


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("octave-cli") is None, reason="octave-cli not installed")
@pytest.mark.skipif(not HAS_MATLAB, reason="NLLBENCH_MTT_MATLAB does not name the authors' TPMBM code")
@pytest.mark.parametrize("name", ["tpmbm", "tpmb"])
def test_trajectory_filter_matches_the_published_matlab_filter_under_octave(name):
    out = subprocess.run(
        [sys.executable, str(SCRIPT), MATLAB, "--filter", name, "--runs", "3", "--steps", "12",
         "--max-hypotheses", "10", "--lscan", "12", "--seed", "5"],
        capture_output=True,
        text=True,
        check=False,
        timeout=900,
    )  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.rstrip().endswith("PASS")
    summary = [line for line in out.stdout.splitlines() if "runs differ" in line]
    assert len(summary) == 3
    # tpmbm: the same estimates in every run; tpmb: equal to rounding (the projection sums in another order)
    assert all("(same to rounding; " in line for line in summary), summary
    if name == "tpmbm":
        assert all("; 0 of 3 runs differ, largest " in line for line in summary), summary
