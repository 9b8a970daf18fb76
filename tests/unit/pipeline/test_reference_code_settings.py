"""The reference code's settings: MBM birth, williams15_mb, truth from CSV, stored estimates, configs."""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml
from support.paths import ROOT

from nllbench.filters import PMBMSettings
from nllbench.filters.pmbm import initial_state, predict, update
from nllbench.pipeline.runs import simulate_file
from nllbench.pipeline.workflow import estimator_for, evaluate_settings, filter_settings, simulate_flags
from nllbench.simulation.scenarios import get_scenario, read_truth_csv, simulate
from nllbench.store import read_scenario, write_truth_csv

SHIPPED = ["config/config.yaml", "config/quick.yaml", "config/sweep.yaml", ".test/config/config.yaml"]


# --- MBM birth and williams15_mb -------------------------------------------


def test_williams15_mb_preset_matches_the_reference_mbm_scenario():
    sc = get_scenario("williams15_mb")
    m = sc.model
    assert sc.process_noise == 0.01 and m.Q[0, 0] == pytest.approx(0.01 / 3)
    np.testing.assert_array_equal(m.birth_r, [0.005] * 4)
    # reference state order (x, vx, y, vy) -> nllbench's (x, y, vx, vy)
    np.testing.assert_array_equal(m.birth.means[:, :2], [[120, 170], [140, 140], [170, 150], [135, 160]])
    np.testing.assert_array_equal(m.birth.covs[0], np.diag([100.0, 100.0, 1.0, 1.0]))
    np.testing.assert_array_equal(m.initial_r, m.birth_r)
    assert get_scenario("williams15").model.initial_r is None


def test_mbm_starts_from_the_birth_bernoullis_and_adds_them_each_step():
    m = get_scenario("williams15_mb").model
    s = initial_state(m, "mbm")
    assert s.ppp.mixture.weights.size == 0 and s.assoc.shape == (1, 4)
    np.testing.assert_array_equal(s.r, [0.005] * 4)
    # a scan with no measurement: each Bernoulli is missed, r (1 - P_D) / (1 - r P_D)
    s = update(s, np.empty((0, 2)), m, PMBMSettings(), "mbm")
    r_miss = 0.005 * 0.1 / (1 - 0.005 * 0.9)
    np.testing.assert_allclose(np.sort(s.r), [r_miss] * 4, rtol=1e-14)
    p = predict(s, m, "mbm")
    assert p.assoc.shape == (1, 8)
    np.testing.assert_allclose(np.sort(p.r), [0.99 * r_miss] * 4 + [0.005] * 4, rtol=1e-14)
    # the PMBM on the same model still starts from its Poisson prior
    assert initial_state(m, "pmbm").ppp.mixture.weights.sum() == pytest.approx(0.02)


def test_mb_birth_override_and_its_errors():
    birth = [
        {"r": 0.1, "mean": [1, 2, 0, 0], "std": [3, 3, 1, 1]},
        {"r": 0.2, "mean": [0] * 4, "cov": np.eye(4).tolist()},
    ]
    sc = get_scenario("williams15", mb_birth=birth, mb_start=True)
    np.testing.assert_array_equal(sc.model.birth_r, [0.1, 0.2])
    np.testing.assert_array_equal(sc.model.birth.covs[0], np.diag([9.0, 9.0, 1.0, 1.0]))
    np.testing.assert_array_equal(sc.model.initial_r, [0.1, 0.2])
    assert get_scenario("williams15_mb", mb_start=False).model.initial_r is None
    with pytest.raises(ValueError, match=r"mb_birth\[0\]: expected keys r, mean and one of cov, std"):
        get_scenario("williams15", mb_birth=[{"r": 0.1, "mean": [0] * 4}])
    with pytest.raises(ValueError, match=r"mb_birth\[0\]: expected a mean of 4"):
        get_scenario("williams15", mb_birth=[{"r": 0.1, "mean": [0] * 2, "std": [1] * 4}])
    with pytest.raises(ValueError, match="birth_r: expected values in"):
        get_scenario("williams15", mb_birth=[{"r": 1.5, "mean": [0] * 4, "std": [1] * 4}])
    with pytest.raises(TypeError, match="mb_start: expected a bool"):
        get_scenario("williams15", mb_start="yes")


def test_scenario_file_keeps_the_bernoulli_start(tmp_path):
    simulate_file("williams15_mb", 3, tmp_path / "s.nc", {"steps": 5})
    model = read_scenario(tmp_path / "s.nc").model
    np.testing.assert_array_equal(model.initial_r, [0.005] * 4)
    simulate_file("williams15", 3, tmp_path / "w.nc", {"steps": 5})
    assert read_scenario(tmp_path / "w.nc").model.initial_r is None


# --- truth from a file -----------------------------------------------------


def test_truth_csv_round_trip(tmp_path):
    sc = get_scenario("williams15", steps=12)
    sim = simulate(sc, np.random.default_rng(0))
    path = tmp_path / "truth.csv"
    write_truth_csv(path, sim.truth, sim.truth_ids)
    truth, ids = read_truth_csv(path)
    assert len(truth) == 12
    for a, b, ia, ib in zip(truth, sim.truth, ids, sim.truth_ids, strict=True):
        order = np.argsort(ib, kind="stable")
        np.testing.assert_array_equal(a, b[order])  # exact: full precision in the file
        np.testing.assert_array_equal(ia, ib[order])
    # simulate around it: the scenario file holds exactly that truth and records its source
    out = tmp_path / "s.nc"
    simulate_file("williams15", 4, out, truth_file=str(path))
    data = read_scenario(out)
    assert data.steps == 12 and data.attrs["truth_source"].startswith("truth.csv sha256:")
    for a, b in zip(data.truth, truth, strict=True):
        np.testing.assert_array_equal(a, b)
    origins = np.concatenate(data.origins)
    assert set(origins[origins >= 0]) <= set(np.concatenate(ids))


def test_truth_csv_columns_in_any_order_and_longer_runs(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("vy,id,step,x,y,vx\n0,7,2,1.5,2.5,0\n0.5,3,2,4,5,6\n\n")
    truth, ids = read_truth_csv(path, steps=4)
    assert [len(t) for t in truth] == [0, 2, 0, 0]
    np.testing.assert_array_equal(ids[1], [3, 7])
    np.testing.assert_array_equal(truth[1], [[4, 5, 6, 0.5], [1.5, 2.5, 0, 0]])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "the file is empty"),
        ("step,id,x,y,vx\n1,0,1,2,3\n", "line 1: column 'vy' is missing"),
        ("step,id,x,y,vx,vy,z\n", "line 1, column 7: unknown column 'z'"),
        ("step,id,x,y,vx,vy,x\n", "column 'x' appears twice"),
        ("step,id,x,y,vx,vy\n1,0,1,2,abc,4\n", "line 2, column 'vx': expected a finite number, got 'abc'"),
        ("step,id,x,y,vx,vy\n1,0,1,2,nan,4\n", "line 2, column 'vx': expected a finite number"),
        ("step,id,x,y,vx,vy\n0,0,1,2,3,4\n", "line 2, column 'step': expected an integer >= 1, got '0'"),
        ("step,id,x,y,vx,vy\n1.5,0,1,2,3,4\n", "column 'step': expected an integer >= 1"),
        ("step,id,x,y,vx,vy\n1,-1,1,2,3,4\n", "line 2, column 'id': expected an integer >= 0"),
        ("step,id,x,y,vx,vy\n1,0,1,2,3\n", "line 2: expected 6 fields like the header, got 5"),
        ("step,id,x,y,vx,vy\n1,0,1,2,3,4\n1,0,5,6,7,8\n", "line 3: step 1, id 0 already given on line 2"),
        ("step,id,x,y,vx,vy\n", "no truth rows"),
    ],
)
def test_truth_csv_errors_name_file_line_and_column(tmp_path, text, message):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(ValueError, match="bad.csv") as err:
        read_truth_csv(path)
    assert message in str(err.value)


# --- estimates stored in the posterior file ---------------------------------


# --- configuration -----------------------------------------------------------


def test_every_shipped_config_names_the_new_keys():
    for name in [*SHIPPED, "config/reference.yaml"]:
        cfg = yaml.safe_load((ROOT / name).read_text())
        assert {"mb_birth", "mb_start"} <= set(cfg["sweep"]), name
        assert {"project_before_cap", "estimate_at"} <= set(cfg["filter"]), name
        assert set(cfg["evaluation"]["estimators"]) == {"phd", "cphd", "pmbm", "pmb", "mbm", "mbm01"}, name


def test_every_new_key_has_one_default():
    """One default each: the schema's (mb_birth, mb_start, estimators) or a dataclass's (the rest)."""
    from nllbench.pipeline.config import validated_config
    from nllbench.settings import config_defaults

    schema_path = ROOT / "workflow/schemas/config.schema.yaml"
    props = yaml.safe_load(schema_path.read_text())["properties"]
    for section, key in [("sweep", "mb_birth"), ("sweep", "mb_start"), ("evaluation", "estimators")]:
        assert "default" in props[section]["properties"][key], (section, key)
    for key in ("project_before_cap", "estimate_at"):
        assert "default" not in props["filter"]["properties"][key], key
        assert key in config_defaults("filter")
    cfg = yaml.safe_load((ROOT / ".test/config/config.yaml").read_text())
    for key in ("project_before_cap", "estimate_at"):
        del cfg["filter"][key]
    out = validated_config(cfg, schema_path)
    assert out["filter"]["project_before_cap"] is PMBMSettings().project_before_cap
    assert out["filter"]["estimate_at"] == "posterior"


def test_reference_config_flags():
    cfg = yaml.safe_load((ROOT / "config/reference.yaml").read_text())
    assert cfg["evaluation"]["cutoff"] == 10 and cfg["evaluation"]["p"] == 2
    assert estimator_for(cfg, "phd") == "greedy" and estimator_for(cfg, "mbm") == "map_cardinality"
    phd = json.loads(filter_settings(cfg, "phd", [0]))
    assert phd["phd_merge"] == 0.1 and phd["phd_cap"] == 29
    assert phd["estimate_at"] == "update" and phd["estimator"] == "greedy"
    assert json.loads(filter_settings(cfg, "pmb", [0]))["project_before_cap"] is True
    assert json.loads(evaluate_settings(cfg, "mbm", 0))["estimator"] == "map_cardinality"
    assert simulate_flags(cfg) == ""
    cfg["sweep"]["mb_birth"] = [{"r": 0.1, "mean": [0, 0, 0, 0], "std": [1, 1, 1, 1]}]
    cfg["sweep"]["mb_start"] = False
    flags = simulate_flags(cfg)
    assert flags.startswith("--mb-birth '[{") and flags.endswith("--no-mb-start")
    # the flags parse back through the command line
    from nllbench.cli import build_parser

    args = build_parser().parse_args(["simulate", "--scenario", "williams15", *_split(flags)])
    assert json.loads(args.mb_birth) == cfg["sweep"]["mb_birth"] and args.mb_start is False


def _split(flags):
    import shlex

    return shlex.split(flags)


def test_gospa_table_mean_and_rms():
    import pandas as pd

    from nllbench.pipeline.reference import gospa_table

    rows = []
    for seed, values in [(0, [1.0, 3.0]), (1, [2.0, 4.0])]:
        for step, v in enumerate(values):
            for q in (0, 0):  # the same GOSPA row repeated (e.g. one per evaluation job)
                base = dict(scenario="williams15", filter="phd", clutter=10.0, pd=0.9, temper=1.0, q=q)
                rows.append(
                    {**base, "seed": seed, "cov_scale": 1.0, "step": step, "measure": "gospa", "value": v}
                )
                rows.append(
                    {**base, "seed": seed, "cov_scale": 0.5, "step": step, "measure": "gospa", "value": 99.0}
                )
                rows.append(
                    {**base, "seed": seed, "cov_scale": 1.0, "step": step, "measure": "ospa", "value": 99.0}
                )
    t = gospa_table(pd.DataFrame(rows))
    assert len(t) == 1 and t["runs"][0] == 2 and t["steps"][0] == 4
    assert t["mean_gospa"][0] == pytest.approx(2.5)
    assert t["rms_gospa"][0] == pytest.approx(np.sqrt((1 + 9 + 4 + 16) / 4))
    # standard errors over runs: run means 2 and 3, run means of d^2 5 and 10
    assert t["mean_gospa_se"][0] == pytest.approx(np.std([2.0, 3.0], ddof=1) / np.sqrt(2))
    se_square = np.std([5.0, 10.0], ddof=1) / np.sqrt(2)
    assert t["rms_gospa_se"][0] == pytest.approx(se_square / (2 * np.sqrt(7.5)))
    one_run = gospa_table(pd.DataFrame([r for r in rows if r["seed"] == 0]))
    assert np.isnan(one_run["mean_gospa_se"][0]) and np.isnan(one_run["rms_gospa_se"][0])
    with pytest.raises(ValueError, match="expected a column 'measure'"):
        gospa_table(pd.DataFrame(rows).drop(columns="measure"))
    with pytest.raises(ValueError, match="no GOSPA rows"):
        gospa_table(pd.DataFrame([r for r in rows if r["measure"] != "gospa"]))
