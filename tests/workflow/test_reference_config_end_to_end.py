"""The reference code's configuration runs through the workflow end to end."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import yaml
from support.paths import ROOT


@pytest.mark.slow
def test_reference_config_runs_end_to_end(tmp_path):
    """config/reference.yaml with 2 seeds of 10 steps: every filter on both scenarios, and the GOSPA table."""
    cfg = yaml.safe_load((ROOT / "config/reference.yaml").read_text())
    cfg["sweep"].update(seeds=2, seeds_per_job=2, steps=10)
    cfg["results"] = str(tmp_path / "results")
    path = tmp_path / "reference.yaml"
    path.write_text(yaml.safe_dump(cfg))
    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", "--cores", "2", "--configfile", str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    import pandas as pd

    table = pd.read_csv(tmp_path / "results/tables/gospa.csv")
    assert len(table) == 12 and set(table["filter"]) == {"phd", "cphd", "pmb", "pmbm", "mbm", "mbm01"}
    assert (table["runs"] == 2).all() and (table["steps"] == 20).all()
    assert np.isfinite(table["rms_gospa"]).all() and (table["rms_gospa"] >= table["mean_gospa"]).all()
