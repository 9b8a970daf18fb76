"""The ``.test`` configuration with a ``trackers:`` section (``.test/config/trackers.yaml``) end to end.

A stand-in external tracker (``.test/scripts/oracle_tracker.py``: every true object reported
with r = 0.9, no optional dependency) is run by its ``command``, its undetected-object rate
fitted on a calibration seed, and scored next to nllbench's PMBM; the tables, the fill-ins
table and the leaderboard carry it. The run stops at the leaderboard: the figures, the same
code as the ``.test`` run's, would triple its cost.
"""

from __future__ import annotations

import json
import shutil
import subprocess

import numpy as np
import pandas as pd
import pytest
from support.paths import ROOT

CONFIG = ".test/config/trackers.yaml"


@pytest.fixture(scope="module")
def trackers_run(tmp_path_factory):
    if shutil.which("snakemake") is None:
        pytest.skip("snakemake not installed")
    results = tmp_path_factory.mktemp("wf_trackers") / "results"
    # up to the leaderboard (every table, the fill-ins page): the figures are the .test run's
    target = str(results / "report" / "leaderboard.html")
    proc = subprocess.run(
        ["snakemake", target, "--cores", "2", "--configfile", CONFIG, "--config", f"results={results}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-5000:]
    return results


def test_the_tracker_is_scored_next_to_the_filter(trackers_run):
    from nllbench.store import read_metrics

    summary = pd.read_csv(trackers_run / "tables" / "summary.csv")
    nll = summary[(summary["measure"] == "nll") & (summary["cov_scale"] == 1)].set_index("filter")
    assert set(nll.index) == {"pmbm", "oracle"} and (nll["n"] == 2).all()
    assert np.isfinite(nll["mean"]).all()
    metrics = trackers_run / "metrics/williams15/clutter5_pd0.9/tracker-oracle/q1_cov1/batch0"
    for seed in (0, 1):
        ds = read_metrics(metrics / f"seed{seed}.nc")
        assert ds.attrs["filter"] == "oracle" and int(ds.attrs["seed"]) == seed
        assert json.loads(ds.attrs["config"])["entry"]["fit_undetected_on"] == 100
        assert np.isfinite(ds["nll_value"].values).all()


def test_the_fill_ins_are_fitted_on_the_calibration_seed_and_reported(trackers_run):
    fill = pd.read_csv(trackers_run / "tables" / "fill_ins.csv", dtype={"seeds": str})
    assert set(fill["filter"]) == {"oracle"} and (fill["seeds"] == "0 1").all()
    record = json.loads(fill[fill["cov_scale"] == 1]["fill_ins"].iloc[0])
    assert "calibration100" in record["undetected"]["fitted"]["tracks"]
    page = (trackers_run / "report" / "leaderboard.html").read_text()
    assert "External trackers' fill-ins" in page and "oracle" in page
    for rule in ("track", "score"):
        assert any((trackers_run / "logs" / rule).rglob("*.log"))
