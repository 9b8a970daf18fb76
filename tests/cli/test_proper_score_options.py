"""The proper scores' options of ``nllbench evaluate`` and ``nllbench score`` reach the metrics file."""

from __future__ import annotations

import json

import numpy as np
import pytest

import nllbench as nb
from nllbench.cli import main
from nllbench.measures.evaluate import (
    EvaluationSettings,
)
from nllbench.store import read_metrics


def test_evaluate_options_reach_the_metrics_file(tmp_path, capsys):
    scen = tmp_path / "scen.nc"
    post = tmp_path / "post.nc"
    assert main(["simulate", "--scenario", "williams15", "--steps", "4", "--seed", "9", "-o", str(scen)]) == 0
    assert main(["filter", "--filter", "pmb", "-q", "-o", str(post), str(scen)]) == 0
    out = tmp_path / "m.nc"
    args = ["evaluate", str(post), str(scen), "-o", str(out), "--q", "1"]
    assert main([*args, "--kernel-cov", "4", "--energy-samples", "40"]) == 0
    printed = capsys.readouterr().out
    assert "energy score" in printed and "cardinality RPS" in printed
    ds = read_metrics(out)
    recorded = json.loads(ds.attrs["proper_scores"])
    assert (recorded["kernel_cov"], recorded["energy_samples"], recorded["seed"]) == (4.0, 40, 9)
    settings = json.loads(ds.attrs["evaluation_settings"])
    assert settings["kernel_cov"] == 4.0 and settings["proper_scores"] is True
    off = tmp_path / "off.nc"
    assert main(["evaluate", str(post), str(scen), "-o", str(off), "--q", "1", "--no-proper-scores"]) == 0
    assert "energy_score" not in read_metrics(off).variables
    for bad in (["--energy-samples", "1"], ["--kernel-cov", "0"], ["--kernel-cov", "nan"]):
        with pytest.raises(SystemExit):
            main([*args, *bad])
        assert bad[0] in capsys.readouterr().err


def test_score_computes_them_for_an_external_tracker_with_its_seed(tmp_path, capsys):
    import pandas as pd

    tracks = pd.DataFrame(
        {
            "frame": [0, 0, 1],
            "id": [1, 2, 1],
            "x": [0.0, 10.0, 0.2],
            "y": [0.0, 0.0, 0.1],
            "r": [0.9, 0.6, 0.95],
        }
        | {"var_x": [1.0, 1.0, 1.0], "var_y": [1.0, 1.0, 1.0]}
    )
    truth = pd.DataFrame({"frame": [0, 0, 1], "id": [1, 2, 1], "x": [0.1, 10.2, 0.3], "y": [0.0, 0.1, 0.0]})
    tp, yp = tmp_path / "tracks.csv", tmp_path / "truth.csv"
    tracks.to_csv(tp, index=False)
    truth.to_csv(yp, index=False)
    out, per_frame = tmp_path / "m.nc", tmp_path / "frames.csv"
    cmd = ["score", str(tp), str(yp), "-o", str(out), "--per-frame", str(per_frame), "--seed", "6"]
    assert main([*cmd, "--energy-samples", "60", "--kernel-cov", "0.5"]) == 0
    assert "energy score" in capsys.readouterr().out
    ds = read_metrics(out)
    recorded = json.loads(ds.attrs["proper_scores"])
    assert (recorded["seed"], recorded["energy_samples"], recorded["kernel_cov"]) == (6, 60, 0.5)
    frames = pd.read_csv(per_frame)
    np.testing.assert_array_equal(frames["energy_score"].to_numpy(), ds["energy_score"].values)
    assert {"energy_score_se", "intensity_score", "cardinality_rps"} <= set(frames.columns)
    # the same numbers as nb.score in memory with that seed
    res = nb.score(tp, yp, settings=EvaluationSettings(energy_samples=60, kernel_cov=0.5), seed=6)
    np.testing.assert_array_equal(res.metrics.proper.energy, ds["energy_score"].values)
    np.testing.assert_array_equal(res.metrics.proper.rps, ds["cardinality_rps"].values)
    off = tmp_path / "off.nc"
    assert main(["score", str(tp), str(yp), "-o", str(off), "--no-proper-scores"]) == 0
    assert "energy_score" not in read_metrics(off).variables
