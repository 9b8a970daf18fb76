"""``nllbench identity-run`` writes each trajectory filter's final posterior and the run it scored, and its
trajectory rows are what ``nllbench evaluate-trajectory`` reads from those files (to the last bit)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import nllbench.pipeline.identity_study as study
from nllbench.cli import main
from nllbench.store import read_scenario, scenario_identity
from nllbench.store.trajectory_posterior import read_trajectory_posterior

SECTION = {
    "seeds": 1,
    "steps": 4,
    "q": 5,
    "filters": [
        {"filter": "pmb", "max_hypotheses": 20},
        {"filter": "tpmbm", "name": "tpmbm-20", "max_hypotheses": 20},
        "tpmb",
    ],
}
CONFIG = json.dumps(SECTION)
TRAJECTORY = ("tpmbm-20", "tpmb")


def _run(tmp_path, *extra: str) -> int:
    argv = ["identity-run", "--config-json", CONFIG, "--seed", "1", "--rows", str(tmp_path / "rows.csv")]
    return main([*argv, "--quiet", *extra])


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("identity")
    dirs = ["--posterior-dir", str(tmp / "posteriors"), "--scenario-dir", str(tmp / "scenarios")]
    assert _run(tmp, *dirs) == 0
    return tmp


def test_each_trajectory_filter_and_condition_has_a_posterior_and_each_condition_its_run(written):
    posteriors = sorted(p.name for p in (written / "posteriors").glob("*.nc"))
    expected = sorted(study.posterior_file(c, n) for c in study.CONDITIONS for n in TRAJECTORY)
    assert posteriors == expected  # none for the per-frame pmb
    assert sorted(p.name for p in (written / "scenarios").glob("*.nc")) == ["coalescence.nc", "separated.nc"]
    for condition in study.CONDITIONS:
        data = read_scenario(written / "scenarios" / study.scenario_file(condition))
        assert data.steps == 4 and int(data.attrs["seed"]) == 1
        for name, registered in zip(TRAJECTORY, ("tpmbm", "tpmb"), strict=True):
            density, attrs = read_trajectory_posterior(written / "posteriors" / f"{condition}_{name}.nc")
            assert density.time == 3 and attrs["filter"] == registered
            assert json.loads(attrs["identity_study"]) == {
                "condition": condition,
                "name": name,
                "q": 5,
                "seed": 1,
            }
            assert attrs["scenario_file"] == f"{condition}.nc"
            assert attrs["truth_sha256"] == scenario_identity(data)["truth_sha256"]


@pytest.mark.parametrize(("condition", "name"), [("coalescence", "tpmb"), ("separated", "tpmbm-20")])
def test_evaluate_trajectory_on_a_written_posterior_gives_the_rows_value(written, condition, name, tmp_path):
    rows = pd.read_csv(written / "rows.csv")
    row = rows[(rows["condition"] == condition) & (rows["filter"] == name)].set_index("measure")["value"]
    record = tmp_path / "r.json"
    post = written / "posteriors" / study.posterior_file(condition, name)
    scenario = written / "scenarios" / study.scenario_file(condition)
    assert main(["evaluate-trajectory", str(post), str(scenario), "--q", "5", "-o", str(record)]) == 0
    rec = json.loads(record.read_text())
    assert np.isfinite(rec["value"])
    assert rec["value"] == row[study.NLL_MEASURES["trajectory"]]  # bit for bit: rows keep every digit
    assert rec["tgospa"] == row["T-GOSPA"] and rec["idf1"] == row["IDF1"]


def test_the_rows_are_the_same_with_and_without_the_files(written, tmp_path):
    assert _run(tmp_path) == 0
    assert not (tmp_path / "posteriors").exists()
    plain, from_files = (pd.read_csv(p / "rows.csv").drop(columns="seconds") for p in (tmp_path, written))
    assert plain.equals(from_files)


def test_the_directories_come_together_and_a_foreign_directory_is_never_replaced(tmp_path, capsys):
    assert _run(tmp_path, "--posterior-dir", str(tmp_path / "p")) != 0
    assert "expected --posterior-dir and --scenario-dir together" in capsys.readouterr().err
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine")
    assert _run(tmp_path, "--posterior-dir", str(mine), "--scenario-dir", str(tmp_path / "s")) != 0
    assert "--posterior-dir" in capsys.readouterr().err
    assert [p.name for p in mine.iterdir()] == ["notes.txt"] and (mine / "notes.txt").read_text() == "mine"
    assert not (tmp_path / "rows.csv").exists() and not (tmp_path / "s").exists()


def test_a_trajectory_filters_name_must_name_a_file():
    bad = {**SECTION, "filters": [{"filter": "tpmbm", "name": "a/b"}]}
    with pytest.raises(ValueError, match=r"identity.filters\[0\].name: a trajectory filter's name names"):
        study.plan_from_config(bad)
    assert study.plan_from_config({**SECTION, "filters": [{"filter": "pmb", "name": "a/b"}]})
