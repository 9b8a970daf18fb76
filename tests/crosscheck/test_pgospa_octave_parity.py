"""nb.pgospa against the authors' MATLAB ``PGOSPA.m`` under GNU Octave (skipped without them).

Set ``NLLBENCH_PGOSPA_MATLAB`` to a folder holding the authors' ``PGOSPA.m``
and ``assign2D.m`` (a checkout of github.com/yuhsuansia/Probabilistic-GOSPA,
not part of nllbench) and install Octave (``apt-get install octave``); the
test runs ``scripts/pgospa_octave_parity.py`` on 150 random cases and 20
mixtures and expects it to pass (``docs/pgospa.md``, "Parity").
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.paths import ROOT

SCRIPT = ROOT / "scripts" / "pgospa_octave_parity.py"
MATLAB = os.environ.get("NLLBENCH_PGOSPA_MATLAB", "")


@pytest.mark.skipif(shutil.which("octave-cli") is None, reason="octave-cli not installed")
@pytest.mark.skipif(
    not (MATLAB and (Path(MATLAB) / "PGOSPA.m").is_file()),
    reason="NLLBENCH_PGOSPA_MATLAB does not name a folder with the authors' PGOSPA.m",
)
def test_pgospa_matches_the_authors_matlab_under_octave():
    out = subprocess.run(
        [sys.executable, str(SCRIPT), MATLAB, "--cases", "150", "--mixtures", "20", "--seed", "3"],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.rstrip().endswith("PASS")
