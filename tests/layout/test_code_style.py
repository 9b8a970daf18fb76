"""The code style is checked by the suite: ``ruff check``, ``ruff format --check`` and ``snakefmt --check``.

Both read their settings from ``pyproject.toml`` ([tool.ruff]); the tests are
skipped where ruff is not installed (it is part of the ``test`` extra).
"""

from __future__ import annotations

import shutil
import subprocess

import pytest
from support.paths import ROOT

#: The Python trees ruff checks (the workflow's .smk files are snakefmt's).
PATHS = ("src", "tests", "benchmarks")

RUFF = shutil.which("ruff")
needs_ruff = pytest.mark.skipif(RUFF is None, reason="ruff is not installed")


def _ruff(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [RUFF, *args, *PATHS], cwd=ROOT, capture_output=True, text=True, timeout=120, check=False
    )


@needs_ruff
def test_ruff_check_passes():
    done = _ruff("check", "--no-cache")
    assert done.returncode == 0, f"ruff check found problems:\n{done.stdout}{done.stderr}"


@needs_ruff
def test_ruff_format_check_passes():
    done = _ruff("format", "--check", "--no-cache")
    assert done.returncode == 0, f"ruff format --check would reformat:\n{done.stdout}{done.stderr}"


SNAKEFMT = shutil.which("snakefmt")


@pytest.mark.skipif(SNAKEFMT is None, reason="snakefmt is not installed")
def test_snakefmt_check_passes():
    done = subprocess.run(
        [SNAKEFMT, "--check", "Snakefile", "workflow/rules"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, f"snakefmt --check would reformat:\n{done.stdout}{done.stderr}"
