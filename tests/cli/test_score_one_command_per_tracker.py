"""The trackers people run, each scored by one ``nllbench score`` command.

docs/score.md, "One command per tracker":

* an LMB-style track list with Gaussian-mixture densities (``docs/examples/tracks_gm.csv``):
  the command's per-frame NLL equals brute-force enumeration;
* an nrl-tracker MHT run (every global hypothesis with its weight, written by
  ``examples/nrl_tracker.py``): the command equals the Python API.

(MOTChallenge result files: ``tests/cli/test_score_motchallenge_files.py`` and
``tests/cli/test_score_motchallenge_batch.py``;
Stone Soup's YAML files: ``tests/crosscheck/test_score_stonesoup_files.py``.)
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from support.bruteforce import table_brute_force
from support.paths import ROOT

import nllbench as nb
from nllbench.cli import main
from nllbench.measures.evaluate import EvaluationSettings
from nllbench.trackers.fitting import fit_score_calibration

EXAMPLES = ROOT / "docs" / "examples"


def test_gaussian_mixture_track_list_scored_by_one_command_equals_brute_force(tmp_path):
    out, frames = tmp_path / "gm.nc", tmp_path / "gm.csv"
    tracks, truth = EXAMPLES / "tracks_gm.csv", EXAMPLES / "truth.csv"
    args = ["score", str(tracks), str(truth), "-o", str(out), "--per-frame", str(frames)]
    assert main([*args, "--undetected-rate", "0.5", "--fov", "0", "0", "100", "100"]) == 0
    expected = table_brute_force(pd.read_csv(tracks), pd.read_csv(truth), 0.5, (0, 0), (100, 100))
    np.testing.assert_allclose(pd.read_csv(frames)["nll"], expected, rtol=1e-10)
    api = nb.score(tracks, truth, fill=nb.FillIns(0.5, (0, 0), (100, 100)))
    with xr.open_dataset(out) as ds:
        np.testing.assert_array_equal(ds["nll_value"].values, api.metrics.nll["value"])


def test_nrl_mht_run_scored_by_one_command_equals_the_api(tmp_path):
    pytest.importorskip("pytcl")
    sc, tr = tmp_path / "sc", tmp_path / "tr"
    assert (
        main(
            [
                "simulate",
                "--scenario",
                "williams15",
                "--steps",
                "6",
                "--seeds",
                "0",
                "1",
                "--output-dir",
                str(sc),
            ]
        )
        == 0
    )
    script = [sys.executable, str(ROOT / "examples" / "nrl_tracker.py"), "--max-hypotheses", "5"]
    done = subprocess.run(
        [*script, "--input-dir", str(sc), "--output-dir", str(tr)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    cal = (tr / "seed0.csv", sc / "seed0.nc")
    out = tmp_path / "mht.nc"
    args = ["score", str(tr / "seed1.csv"), str(sc / "seed1.nc"), "-o", str(out), "--tracker", "nrl_mht"]
    args += ["--fit-score-on", *map(str, cal), "--undetected-rate", "0.3", "--fov", "0", "0", "300", "300"]
    assert main([*args, "--q", "1", "10"]) == 0
    table = pd.read_csv(tr / "seed1.csv")
    assert table.hypothesis.nunique() > 1 and "score" in table.columns  # every hypothesis, weighted
    fill = nb.FillIns(0.3, (0, 0), (300, 300), calibration=fit_score_calibration(*cal))
    api = nb.score(tr / "seed1.csv", sc / "seed1.nc", fill=fill, settings=EvaluationSettings(qs=(1, 10)))
    with xr.open_dataset(out) as ds:
        np.testing.assert_array_equal(ds["nll_value"].values, api.metrics.nll["value"])
        np.testing.assert_array_equal(ds["gospa"].values, api.metrics.gospa)
        assert ds.attrs["filter"] == "nrl_mht"
    assert np.isfinite(api.metrics.nll["value"]).all()
