"""External trackers in the workflow (config section ``trackers``): the config checks, the rule
helpers of nllbench.pipeline.workflow, the fill-ins table and page, a dry run and a reduced run of
config/trackers.yaml end to end."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from support.paths import ROOT

from nllbench.pipeline.config import check_trackers, validated_config
from nllbench.pipeline.workflow import (
    Sweep,
    calibration_dirs,
    gather_tracks,
    metric_dirs,
    name_constraint,
    part_seeds,
    score_flags,
    score_settings,
    tracker_calibration_files,
    tracker_command,
    tracker_tables,
    trackers_of_kind,
)

SCHEMA = ROOT / "workflow" / "schemas" / "config.schema.yaml"
SETTING = {"scenario": "williams15", "clutter": "10", "pd": "0.9"}
needs_snakemake = pytest.mark.skipif(shutil.which("snakemake") is None, reason="snakemake not installed")


def config_with(trackers, **sweep):
    config = yaml.safe_load((ROOT / "config" / "quick.yaml").read_text())
    config["sweep"].update(sweep)
    config["trackers"] = trackers
    return validated_config(config, SCHEMA)


GM = {"command": "run {scenario_dir} {tracks_dir}", "fit_score_on": 100, "fit_undetected_on": 100}


def test_trackers_default_to_none_and_entries_get_the_schema_defaults():
    plain = yaml.safe_load((ROOT / "config" / "quick.yaml").read_text())
    assert validated_config(plain, SCHEMA)["trackers"] == {}
    spec = config_with({"gm": {**GM, "fov": [0, 0, 300, 300]}})["trackers"]["gm"]
    assert spec["state"] == ["x", "y"] and spec["format"] == "csv" and spec["existence_one"] is False


@pytest.mark.parametrize(
    "entry, message",
    [
        ({"command": "a", "tracks": "b"}, "trackers.gm"),
        ({}, "trackers.gm"),
        ({"command": "a", "bogus": 1}, "bogus"),
        (
            {"command": "a", "undetected_rate": 1.0, "fit_undetected_on": 9, "fov": [0, 0, 1, 1]},
            "trackers.gm",
        ),
        (
            {"command": "a", "fit_score_on": 1},
            "trackers.gm.fit_score_on: expected a calibration seed outside",
        ),
        ({"command": "a", "undetected_rate": 0.5}, "trackers.gm.fov: the undetected-object intensity"),
        (
            {"command": "a", "default_std": 1.0, "fov": [0, 0, 1, 1, 2, 2]},
            "trackers.gm.fov: expected 4 numbers",
        ),
        ({"command": "a", "undetected_rate": float("nan"), "fov": [0, 0, 1, 1]}, "finite number"),
    ],
)
def test_bad_tracker_entries_are_refused_with_the_key_named(entry, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        config_with({"gm": entry}, seeds=2)


def test_a_tracker_may_not_take_a_filter_name_or_an_odd_one():
    with pytest.raises(ValueError, match="not a built-in filter's, got 'pmbm'"):
        config_with({"pmbm": {"command": "a"}})
    with pytest.raises(ValueError, match="does not match"):
        config_with({"g-m": {"command": "a"}})


def test_calibration_seed_equal_to_the_number_of_seeds_is_outside_the_test_set():
    check_trackers(
        {"sweep": {"seeds": 4}, "trackers": {"gm": {"command": "a", "fit_score_on": 4, "state": ["x", "y"]}}}
    )
    with pytest.raises(ValueError, match="got 3"):
        check_trackers(
            {
                "sweep": {"seeds": 4},
                "trackers": {"gm": {"command": "a", "fit_score_on": 3, "state": ["x", "y"]}},
            }
        )


def test_metric_dirs_hold_every_tracker_next_to_every_filter():
    config = config_with(
        {
            "gm": {**GM, "fov": [0, 0, 300, 300]},
            "other": {"tracks": "t/c{clutter}_seed{seed}.csv", "existence_one": True, "default_std": 1.0},
        }
    )
    sweep = Sweep.from_config(config)
    assert sweep.trackers == ("gm", "other")
    dirs = metric_dirs("R", sweep)
    per_name = len(sweep.settings()) * len(sweep.evaluations()) * len(sweep.batches)
    assert len(dirs) == (len(sweep.filters) + 2) * per_name
    assert "R/metrics/williams15/clutter5_pd0.9/tracker-gm/q1_cov1/batch0" in dirs
    assert "R/metrics/williams15/clutter20_pd0.9/tracker-other/q10_cov1/batch0" in dirs
    # the evaluate rule's filter wildcard ([a-z0-9]+) cannot take a tracker's directory
    assert not any(re.fullmatch(r"[a-z0-9]+", d.split("/")[4]) for d in dirs if "tracker-" in d)
    assert trackers_of_kind(config, "command") == ["gm"] and trackers_of_kind(config, "tracks") == ["other"]


def test_name_constraint_matches_exactly_the_names():
    rx = name_constraint(["gm", "a_b"])
    assert re.fullmatch(rx, "gm") and re.fullmatch(rx, "a_b") and not re.fullmatch(rx, "gmx")
    empty = name_constraint([])
    assert not any(re.fullmatch(empty, s) for s in ("", "gm", "tracker"))


def test_part_seeds():
    sweep = Sweep.from_config(config_with({}, seeds=5, seeds_per_job=2))
    assert part_seeds(sweep, "batch0") == [0, 1] and part_seeds(sweep, "batch2") == [4]
    assert part_seeds(sweep, "calibration100") == [100]
    for bad in ("batch3", "batchx", "calib1", "seed1"):
        with pytest.raises(ValueError):
            part_seeds(sweep, bad)


def test_tracker_command_fills_and_quotes_its_fields():
    config = config_with(
        {"gm": {"command": "run {scenario_dir} {tracks_dir} --c {clutter} --b {batch} {scenario}"}}
    )
    cmd = tracker_command(config, "gm", "R/sc dir/batch0", "R/tracks/batch0", SETTING, "batch0")
    assert cmd == "run 'R/sc dir/batch0' R/tracks/batch0 --c 10 --b batch0 williams15"
    config["trackers"]["gm"]["command"] = "run {seed}"
    with pytest.raises(ValueError, match=r"trackers.gm.command: expected fields among"):
        tracker_command(config, "gm", "a", "b", SETTING, "batch0")


def test_tracker_tables_and_gather_tracks(tmp_path):
    config = config_with(
        {
            "f": {
                "tracks": str(tmp_path / "in/{scenario}_c{clutter}_pd{pd}/run{seed}.csv"),
                "existence_one": True,
            }
        }
    )
    tables = tracker_tables(config, "f", SETTING, [0, 1])
    assert tables == [str(tmp_path / f"in/williams15_c10_pd0.9/run{s}.csv") for s in (0, 1)]
    Path(tables[0]).parent.mkdir(parents=True)
    for s, t in enumerate(tables):
        Path(t).write_text(f"frame,x,y\n{s},1,2\n")
    out = gather_tracks(tables, [0, 1], tmp_path / "out")
    assert sorted(p.name for p in out.iterdir()) == [".nllbench-output", "seed0.csv", "seed1.csv"]
    assert (out / "seed1.csv").read_text() == Path(tables[1]).read_text()
    with pytest.raises(ValueError, match="run5.csv: tracks table not found"):
        gather_tracks([tables[0], tables[0].replace("run0", "run5")], [0, 5], tmp_path / "out2")
    assert not (tmp_path / "out2").exists()  # nothing partial
    with pytest.raises(ValueError, match="expected a .csv or .parquet"):
        gather_tracks([tmp_path / "x.txt"], [0], tmp_path / "out3")
    with pytest.raises(ValueError, match="one table per seed"):
        gather_tracks(tables, [0], tmp_path / "out4")
    config["trackers"]["f"]["tracks"] = "t/{frame}.csv"
    with pytest.raises(ValueError, match="trackers.f.tracks: expected fields among"):
        tracker_tables(config, "f", SETTING, [0])


def test_score_flags_state_every_fill_in_of_the_entry():
    config = config_with({"gm": {**GM, "fov": [0, 0, 300, 300], "state": ["px", "py"]}})
    cal = tracker_calibration_files("R", config, "gm", SETTING)
    assert cal == {
        100: (
            "R/tracks/williams15/clutter10_pd0.9/tracker-gm/calibration100/seed100.csv",
            "R/scenarios/williams15/clutter10_pd0.9/calibration100/seed100.nc",
        )
    }
    assert calibration_dirs("R", config, "gm", SETTING) == [
        "R/scenarios/williams15/clutter10_pd0.9/calibration100",
        "R/tracks/williams15/clutter10_pd0.9/tracker-gm/calibration100",
    ]
    flags = score_flags(config, "gm", cal)
    tracks, truth = cal[100]
    assert f"--fit-score-on {tracks} {truth}" in flags and f"--fit-undetected-on {tracks} {truth}" in flags
    assert "--fov 0 0 300 300" in flags and "--state px py" in flags and "--tracker gm" in flags
    assert "--estimator" not in flags and "--existence-one" not in flags
    settings = json.loads(score_settings(config, "gm", "10", "0.5", 1))
    assert settings["q"] == [10] and settings["cov_scale"] == 0.5 and settings["cutoff"] == 2.0
    assert settings["tracker"] == "gm" and settings["entry"] == config["trackers"]["gm"]
    assert "estimator" not in settings and not settings["exact"]
    with pytest.raises(ValueError, match="no calibration files for seed 100"):
        score_flags(config, "gm", {})
    fixed = config_with(
        {
            "f": {
                "tracks": "t{clutter}_{seed}.csv",
                "undetected_rate": 0.5,
                "fov": [0, 0, 1, 1],
                "default_std": 2.0,
                "existence_one": True,
            }
        }
    )
    flags = score_flags(fixed, "f")
    assert "--undetected-rate 0.5" in flags and "--default-std 2.0" in flags and "--existence-one" in flags
    assert "--fit-" not in flags


def _perfect_tracks(scenario_dir: Path, out_dir: Path) -> None:
    """A tracker that reports every truth with r = 0.9 (tidy tables, one per seed)."""
    from nllbench.store import read_scenario

    out_dir.mkdir(parents=True, exist_ok=True)
    for f in sorted(scenario_dir.glob("seed*.nc")):
        data = read_scenario(f)
        rows = [
            {"frame": k, "id": int(i), "r": 0.9, "x": float(x[0]), "y": float(x[1])}
            for k, (ids, states) in enumerate(zip(data.truth_ids, data.truth, strict=True))
            for i, x in zip(ids, states, strict=True)
        ]
        pd.DataFrame(rows, columns=["frame", "id", "r", "x", "y"]).to_csv(
            out_dir / f"{f.stem}.csv", index=False
        )


def test_fill_ins_page_section():
    from nllbench.pipeline.plots import filter_styles
    from nllbench.pipeline.report import fill_ins_html

    record = {
        "existence": "score calibration",
        "undetected": {"rate": 0.123456789, "kind": "uniform Poisson"},
    }
    df = pd.DataFrame(
        [
            ["williams15", "gm", 10.0, 0.9, 1.0, 10, "0 1", json.dumps(record)],
            ["williams15", "gm", 10.0, 0.9, 0.5, 1, "0 1", json.dumps({"existence": "probe"})],
        ],
        columns=["scenario", "filter", "clutter", "pd", "cov_scale", "q", "seeds", "fill_ins"],
    )
    page = fill_ins_html(df, filter_styles(["gm", "pmbm"]), 10)
    assert "undetected.rate</dt><dd>0.1235" in page and "score calibration" in page and ">gm<" in page
    assert "probe" not in page  # the probe job's record is in the CSV, not on the page
    assert "No external tracker" in fill_ins_html(df.iloc[:0], {}, 10)
    assert "No external tracker" in fill_ins_html(None, {}, 10)


def snakemake(*args, timeout=900):
    return subprocess.run(["snakemake", *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout)


@needs_snakemake
def test_dry_run_of_the_trackers_config(tmp_path):
    proc = snakemake(
        "-n", "--cores", "2", "--configfile", "config/trackers.yaml", "--config", f"results={tmp_path}"
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    counts = {}
    for line in (proc.stdout + proc.stderr).splitlines():
        m = re.match(r"^(\w+)\s+(\d+)$", line.strip())
        if m:
            counts[m.group(1)] = int(m.group(2))
    # per tracker (Stone Soup's GM-PHD, nrl-tracker's MHT) 2 test batches + 1 calibration run and
    # 4 (Q, scale) pairs x 2 batches scored; the calibration seed simulated once for both;
    # the PMBM: one evaluate job per batch, each writing its 4 (Q, scale) directories
    assert counts["simulate_calibration"] == 1 and counts["track"] == 6
    assert counts["score_tracker"] == 16 and counts["evaluate"] == 2
    assert "gather_tracks" not in counts


@pytest.mark.slow
@needs_snakemake
def test_trackers_config_end_to_end_reduced(tmp_path):
    """config/trackers.yaml with 10 steps, 2 seeds and one Q, plus a tracks-pattern tracker."""

    from nllbench.store import read_metrics

    pre = tmp_path / "pre"
    subprocess.run(
        [
            "nllbench",
            "simulate",
            "--scenario",
            "williams15",
            "--clutter-rate",
            "10",
            "--pd",
            "0.9",
            "--steps",
            "10",
            "--seeds",
            "0",
            "1",
            "--output-dir",
            str(pre / "sc"),
        ],
        check=True,
        capture_output=True,
    )
    _perfect_tracks(pre / "sc", pre / "tables")
    config = yaml.safe_load((ROOT / "config" / "trackers.yaml").read_text())
    config["results"] = str(tmp_path / "results")
    config["paper"]["examples"] = [1]
    config["sweep"].update(seeds=2, seeds_per_job=2, steps=10)
    config["evaluation"].update(q=[2], cov_scales=[1, 2], probe_q=2)  # the calibration figure needs a probe
    config["trackers"]["oracle"] = {
        "tracks": str(pre / "tables" / "seed{seed}.csv"),
        "undetected_rate": 0.1,
        "fov": [0, 0, 300, 300],
        "default_std": 1.0,
    }
    cfg = tmp_path / "config.yaml"
    cfg.write_text(yaml.safe_dump(config))
    proc = snakemake("--cores", "2", "--configfile", str(cfg))
    assert proc.returncode == 0, proc.stderr[-5000:]
    res = tmp_path / "results"
    summary = pd.read_csv(res / "tables" / "summary.csv")
    nll = summary[(summary["measure"] == "nll") & (summary["q"] == 2) & (summary["cov_scale"] == 1)]
    nll = nll.set_index("filter")
    assert set(nll.index) == {"pmbm", "stonesoup_gmphd", "nrl_mht", "oracle"} and (nll["n"] == 2).all()
    # the oracle reports the truth itself: better than both filters, finite
    assert nll.loc["oracle", "mean"] < min(nll.loc["pmbm", "mean"], nll.loc["stonesoup_gmphd", "mean"])
    pairs = pd.read_csv(res / "tables" / "paired.csv")
    assert {"oracle", "stonesoup_gmphd"} <= set(pairs["filter_a"]) | set(pairs["filter_b"])
    # P-GOSPA for every tracker (a PMBM per frame) and the PMBM filter; PT-GOSPA too (docs/pgospa.md)
    pg = summary[(summary["measure"] == "pgospa_mean") & (summary["cov_scale"] == 1)]
    assert set(pg["filter"]) == set(nll.index) and (pg["n"] == 2).all()
    assert {"pmbm", "oracle"} <= set(summary[summary["measure"] == "ptgospa"]["filter"])
    fill = pd.read_csv(res / "tables" / "fill_ins.csv", dtype={"seeds": str})
    assert len(fill) == 6 and (fill["seeds"] == "0 1").all()  # 3 trackers x 2 covariance scales
    fill = fill[fill["cov_scale"] == 1].set_index("filter")
    assert set(fill.index) == {"oracle", "stonesoup_gmphd", "nrl_mht"}
    mht = json.loads(fill.loc["nrl_mht", "fill_ins"])
    assert mht["existence"] == "score calibration" and mht["undetected"]["rate"] == 0.3
    gm = json.loads(fill.loc["stonesoup_gmphd", "fill_ins"])
    assert gm["existence"] == "score calibration" and "calibration100" in gm["undetected"]["fitted"]["tracks"]
    assert json.loads(fill.loc["oracle", "fill_ins"])["undetected"]["rate"] == 0.1
    metrics = res / "metrics/williams15/clutter10_pd0.9/tracker-stonesoup_gmphd/q2_cov1/batch0"
    ds = read_metrics(metrics / "seed1.nc")
    assert ds.attrs["filter"] == "stonesoup_gmphd" and int(ds.attrs["seed"]) == 1
    recorded = json.loads(ds.attrs["config"])  # the job's settings: the tracker's name and config entry
    assert recorded["tracker"] == "stonesoup_gmphd" and recorded["entry"]["fit_score_on"] == 100
    assert np.isfinite(ds["nll_value"].values).all()
    page = (res / "report" / "leaderboard.html").read_text()
    assert "External trackers' fill-ins" in page and page.count("stonesoup_gmphd") >= 3 and "oracle" in page
    for rule in ("track", "score", "simulate"):
        assert any((res / "logs" / rule).rglob("*.log")) and any((res / "benchmarks" / rule).rglob("*.tsv"))


def test_fill_ins_table_groups_equal_records_and_skips_files_without_one(tmp_path):
    from nllbench.pipeline.pooling import fill_ins_table
    from nllbench.trackers.scoring import FillIns, score_file

    tracks, truth = ROOT / "docs/examples/tracks.csv", ROOT / "docs/examples/truth.csv"
    a, b = tmp_path / "a", tmp_path / "b"
    frames = [0, 1, 2, 3]  # the tracker is silent in frame 2
    for seed in (0, 1):
        score_file(tracks, truth, a / f"seed{seed}.nc", seed=seed, tracker="t1", frames=frames)
    fill = FillIns(0.5, (0, 0), (100, 100))
    score_file(tracks, truth, b / "seed0.nc", seed=0, tracker="t2", fill=fill, frames=frames)
    table = fill_ins_table([a, b])
    assert list(table["filter"]) == ["t1", "t2"] and list(table["seeds"]) == ["0 1", "0"]
    # the aggregation's one pass over the files gives the same table
    from nllbench.pipeline.aggregate import collect_all

    assert collect_all([a, b]).fill_ins.equals(table)
    assert json.loads(table["fill_ins"].iloc[1])["undetected"]["rate"] == 0.5
    assert "rate" not in json.loads(table["fill_ins"].iloc[0])["undetected"]  # none asked for
    # a metrics file without the attribute (a reference filter's) gives no row
    import xarray as xr

    with xr.open_dataset(b / "seed0.nc") as ds:
        ds.load()
    del ds.attrs["fill_ins"]
    (tmp_path / "c").mkdir()
    ds.to_netcdf(tmp_path / "c" / "seed0.nc")
    assert len(fill_ins_table([tmp_path / "c"])) == 0


@pytest.mark.parametrize(
    ("tracks", "missing"),
    [
        ("in/run.csv", "seed"),
        ("in/{scenario}_run{seed}.csv", "clutter"),
        ("in/c{clutter}_pd{pd}_run{seed}.csv", "scenario"),
    ],
)
def test_a_tracks_pattern_must_tell_every_run_apart(tracks, missing):
    entry = {"f": {"tracks": tracks, "existence_one": True}}
    with pytest.raises(ValueError, match=rf"trackers\.f\.tracks: the sweep has \d+ values of {missing}"):
        config_with(entry, scenarios=["williams15", "chalmers"], clutter_rates=[10, 20])
    # one value of a field needs no placeholder for it
    config_with({"f": {"tracks": "in/run{seed}.csv", "existence_one": True}}, clutter_rates=[10])


def test_a_tracker_box_whose_low_exceeds_its_high_is_refused_before_any_job():
    entry = {"f": {"command": "run {tracks_dir}", "undetected_rate": 1.0, "fov": [0, 300, 300, 0]}}
    with pytest.raises(ValueError, match=r"trackers\.f\.fov: expected each low below its high.*column y"):
        config_with(entry)


def test_config_mistakes_that_only_a_job_would_meet_are_caught_at_validation():
    config = yaml.safe_load((ROOT / "config" / "quick.yaml").read_text())
    with pytest.raises(ValueError, match=r"config key results: expected a directory, got ''"):
        validated_config({**config, "results": ""}, SCHEMA)
    with pytest.raises(ValueError, match=r"config key results: expected a directory, got '  '"):
        validated_config({**config, "results": "  "}, SCHEMA)
    bad_cov = [[1, 0, 0, 0], [0, -1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]
    sweep = {**config["sweep"], "mb_birth": [{"r": 0.1, "mean": [0, 0, 0, 0], "cov": bad_cov}]}
    with pytest.raises(ValueError, match=r"config key sweep\.mb_birth.*positive"):
        validated_config({**config, "sweep": sweep}, SCHEMA)
