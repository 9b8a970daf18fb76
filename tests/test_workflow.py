"""The workflow runs end to end on the .test config, and bad configs stop before any job."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(shutil.which("snakemake") is None, reason="snakemake not installed")


def run(*args, cwd=ROOT):
    return subprocess.run(["snakemake", *args], cwd=cwd, capture_output=True, text=True, timeout=300)


def test_test_config_end_to_end(tmp_path):
    out = tmp_path / "results"
    proc = run("--cores", "2", "--configfile", ".test/config/config.yaml", "--config", f"results={out}", "-q")
    assert proc.returncode == 0, proc.stderr
    ex1 = (out / "paper" / "example1.txt").read_text()
    assert "4.6" in ex1 and "16.3" in ex1
    assert "inf" in (out / "paper" / "example2.txt").read_text()
    assert "max |difference|" in (out / "paper" / "theorem1.txt").read_text()


def test_default_config_dry_run():
    proc = run("-n", "--cores", "1")
    assert proc.returncode == 0, proc.stderr


def test_schema_violation_names_the_key(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "results: x\npaper:\n  examples: [3]\n  theorem1: {trials: 1, seed: 0, rho: 0.5, "
        "scale: 1, dim: 2, size: 1}\n"
    )
    proc = run("-n", "--cores", "1", "--configfile", str(bad))
    assert proc.returncode != 0
    assert "examples" in proc.stdout + proc.stderr
