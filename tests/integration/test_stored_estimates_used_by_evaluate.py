"""Estimates stored in a posterior file round-trip and are the ones evaluate uses (a whole
simulate, filter and evaluate run on files); without them, the evaluation's rule applies."""

from __future__ import annotations

import json

import numpy as np
import pytest

from nllbench.filters import run_filter_full
from nllbench.filters.estimates import estimate
from nllbench.measures.evaluate import EvaluationSettings
from nllbench.pipeline.runs import evaluate_file, filter_file, simulate_file
from nllbench.store import read_posterior, read_scenario


def test_stored_estimates_round_trip_and_are_used_by_evaluate(tmp_path):
    scen = tmp_path / "s.nc"
    simulate_file("williams15", 1, scen, {"steps": 10})
    post = tmp_path / "p.nc"
    from nllbench.filters import PHDSettings

    phd = PHDSettings(merge=0.1, cap=29)
    filter_file(scen, "phd", post, phd=phd, estimate_at="update", estimator="greedy")
    p = read_posterior(post)
    assert p.attrs["estimator"] == "greedy" and p.attrs["estimate_at"] == "update"
    data = read_scenario(scen)
    run = run_filter_full(
        "phd", data.measurements, data.model, phd_settings=phd, estimate_at="update", estimator="greedy"
    )
    for (x, lab), e in zip(p.estimates, run.estimates, strict=True):
        np.testing.assert_array_equal(x, e.states)
        np.testing.assert_array_equal(lab, e.labels)
    s = EvaluationSettings(qs=(1,), cutoff=10.0, p=2.0)
    row, _, _ = evaluate_file(post, scen, tmp_path / "m.nc", s)
    from nllbench.store import read_metrics

    ds = read_metrics(tmp_path / "m.nc")
    settings = json.loads(ds.attrs["evaluation_settings"])
    assert settings["estimator"] == "greedy" and settings["estimate_at"] == "update"
    np.testing.assert_array_equal(ds["n_estimates"].values, [e.states.shape[0] for e in run.estimates])
    with pytest.raises(ValueError, match="extracted its estimates with 'greedy'"):
        evaluate_file(post, scen, tmp_path / "m2.nc", EvaluationSettings(qs=(1,), estimator="round"))
    # a posterior without stored estimates: the evaluation's rule applies
    plain = tmp_path / "q.nc"
    filter_file(scen, "phd", plain, phd=phd)
    assert read_posterior(plain).estimates is None
    evaluate_file(plain, scen, tmp_path / "m3.nc", EvaluationSettings(qs=(1,), estimator="greedy"))
    n = read_metrics(tmp_path / "m3.nc")["n_estimates"].values
    expected = [estimate(d, rule="greedy").states.shape[0] for d in read_posterior(plain)]
    np.testing.assert_array_equal(n, expected)
