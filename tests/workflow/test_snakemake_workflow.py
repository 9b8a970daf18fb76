"""The Snakemake workflow: lint, dry runs of every shipped config, the .test config end to end,
incremental re-runs, schema errors before any job, and byte-identical tables."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import xarray as xr
import yaml
from support.paths import ROOT

from nllbench.cli import main
from nllbench.cli.report import FIGURES
from nllbench.measures.names import METRIC_STEP_VARIABLES, OPTIONAL_VARIABLES, PROPER_STEP
from nllbench.pipeline.aggregate import write_tables
from nllbench.pipeline.config import validated_config
from nllbench.pipeline.cube import long_table, read_long_table, read_step_cube
from nllbench.pipeline.workflow import (
    Sweep,
    evaluate_settings,
    filter_settings,
)

CONFIGS = [
    "config/config.yaml",
    "config/quick.yaml",
    "config/sweep.yaml",
    "config/reference.yaml",
    "config/trackers.yaml",
    ".test/config/config.yaml",
    ".test/config/trackers.yaml",
]
TABLES = (
    "runs.csv",
    "summary.csv",
    "paired.csv",
    "ranking.csv",
    "calibration.csv",
    "reliability.csv",
)
#: The figures of the command line (``plot``) whose bytes do not depend on the cores (timing is measured;
#: example is drawn once per example).
FIGURES_SAME_BYTES = tuple(f for f in FIGURES if f not in ("example", "timing"))
pytestmark = pytest.mark.skipif(shutil.which("snakemake") is None, reason="snakemake not installed")


def snakemake(*args, timeout=900):
    return subprocess.run(["snakemake", *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def job_counts(dry_run_output: str) -> dict[str, int]:
    """The 'job stats' table of a dry run: rule -> number of jobs."""
    counts = {}
    for line in dry_run_output.splitlines():
        m = re.match(r"^(\w+)\s+(\d+)$", line.strip())
        if m and m.group(1) != "total":
            counts[m.group(1)] = int(m.group(2))
    return counts


def test_lint():
    proc = snakemake("--lint")
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("config", CONFIGS)
def test_dry_run_of_every_shipped_config(config, tmp_path):
    proc = snakemake(
        "-n", "--cores", "2", "--configfile", config, "--config", f"results={tmp_path}", timeout=600
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    counts = job_counts(proc.stdout + proc.stderr)
    # 12 figures of the study and proper_scores (on by default: evaluation.proper_scores)
    assert counts.get("aggregate") == 1 and counts.get("plot") == 13
    # the propriety audit only where the config has an audit section
    has_audit = yaml.safe_load((ROOT / config).read_text()).get("audit") is not None
    assert counts.get("audit", 0) == int(has_audit)
    # the identity study only where the config has an identity section: one job per seed, then its tables
    identity = yaml.safe_load((ROOT / config).read_text()).get("identity")
    assert counts.get("identity", 0) == int(identity is not None)
    assert counts.get("identity_run", 0) == (identity or {}).get("seeds", 10 if identity else 0)


def test_end_to_end_outputs(test_run):
    r = test_run
    text = (r / "paper/example1/example.txt").read_text()
    assert "4.6" in text and "16.3" in text
    assert "inf" in (r / "paper/example2/example.txt").read_text()
    # every figure the command line draws (plot example once per example)
    for fig in ("example1", "example2", *(f for f in FIGURES if f != "example")):
        assert (r / f"figures/{fig}.png").stat().st_size > 1000
        assert (r / f"figures/{fig}.pdf").stat().st_size > 1000
        if not fig.startswith("example"):  # the caption written from the run's numbers, beside the figure
            assert "In this run: " in (r / f"figures/{fig}.caption.txt").read_text()
    assert not (r / "tables/steps.csv").exists()  # the long CSV only on demand
    steps = read_long_table(r / "tables")
    assert set(steps.columns) == {
        "scenario",
        "seed",
        "filter",
        "clutter",
        "pd",
        "cov_scale",
        "temper",
        "marginal",
        "q",
        "step",
        "measure",
        "value",
    }
    assert not steps["value"].isna().any()
    assert sorted(steps["filter"].unique()) == ["phd", "pmb", "pmbm"]
    diff = steps[steps["measure"] == "theorem1_difference"]["value"].abs()
    assert len(diff) and diff.max() < 1e-9
    summary = pd.read_csv(r / "tables/summary.csv")
    assert {"mean", "ci95_low", "ci95_high", "n", "n_infinite"} <= set(summary.columns)
    runs = xr.open_dataset(r / "tables/runs.nc")
    assert runs.sizes["row"] == len(pd.read_csv(r / "tables/runs.csv"))


def test_every_file_records_provenance(test_run):
    r = test_run
    one = sorted((r / "metrics").rglob("seed0.nc"))[0]
    ds = xr.open_dataset(one)
    assert "numpy" in ds.attrs["software_versions"] and ds.attrs["seed"] == 0
    # the recorded provenance is the job's settings object (its config slice), with the file's cell
    config = validated_config(yaml.safe_load((ROOT / ".test/config/config.yaml").read_text()), SCHEMA)
    recorded = json.loads(ds.attrs["config"])
    cell = recorded.pop("cell")
    assert recorded == json.loads(evaluate_settings(config, ds.attrs["filter"], 0))
    assert one.parent.parent.name == f"q{cell['q']}_cov{cell['cov_scale']:g}"
    post = xr.open_dataset(sorted((r / "posteriors").rglob("seed0.nc"))[0])
    assert json.loads(post.attrs["config"]) == json.loads(
        filter_settings(config, post.attrs["filter"], [0, 1])
    )
    scen = xr.open_dataset(sorted((r / "scenarios").rglob("seed1.nc"))[0])
    assert '"clutter"' in scen.attrs["config"] and scen.attrs["seed"] == 1
    assert "software_versions" in (r / "tables/provenance.json").read_text()


def test_report(test_run, tmp_path):
    report = tmp_path / "report.html"
    proc = snakemake(
        "--configfile", ".test/config/config.yaml", "--config", f"results={test_run}", "--report", str(report)
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    html = report.read_text(errors="replace")
    assert report.stat().st_size > 10000 and "Theorem 1" in html


def test_adding_a_clutter_rate_recomputes_only_what_depends_on_it(test_run, tmp_path):
    cfg = yaml.safe_load((ROOT / ".test/config/config.yaml").read_text())
    cfg["results"] = str(test_run)
    cfg["sweep"]["clutter_rates"] = cfg["sweep"]["clutter_rates"] + [20]
    path = tmp_path / "more.yaml"
    path.write_text(yaml.safe_dump(cfg))
    proc = snakemake("-n", "--cores", "2", "--configfile", str(path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    counts = job_counts(proc.stdout + proc.stderr)
    n_filters = len(cfg["sweep"]["filters"])
    assert counts["simulate"] == 1 and counts["filter"] == n_filters
    # one evaluate job per (setting, filter, batch) writes every (Q, scale) directory
    assert counts["evaluate"] == n_filters
    assert "paper_example" not in counts and "theorem1_check" not in counts


def test_schema_violation_stops_before_any_job(tmp_path):
    cfg = yaml.safe_load((ROOT / ".test/config/config.yaml").read_text())
    cfg["results"] = str(tmp_path / "r")
    cfg["sweep"]["filters"] = ["pmbm", "glmb"]
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(cfg))
    proc = snakemake("--cores", "1", "--configfile", str(path))
    assert proc.returncode != 0
    assert "filters" in proc.stdout + proc.stderr and "glmb" in proc.stdout + proc.stderr
    assert not (tmp_path / "r").exists()


SCHEMA = ROOT / "workflow/schemas/config.schema.yaml"


def test_every_shipped_config_loads_through_the_schema():
    shipped = sorted({*CONFIGS, *(str(p.relative_to(ROOT)) for p in (ROOT / "config").glob("*.yaml"))})
    for name in shipped:
        config = validated_config(yaml.safe_load((ROOT / name).read_text()), SCHEMA)
        sweep = Sweep.from_config(config)
        assert sweep.filters and sweep.evaluations(), name
        assert json.loads(filter_settings(config, sweep.filters[0], [0]))["gate"] == config["filter"]["gate"]
        assert (
            json.loads(evaluate_settings(config, sweep.filters[0], 0))["cutoff"]
            == config["evaluation"]["cutoff"]
        )


def test_schema_defaults_fill_only_optional_keys():
    config = yaml.safe_load((ROOT / ".test/config/config.yaml").read_text())
    del config["sweep"]["steps"], config["filter"]["cphd_max_card"]
    out = validated_config(config, SCHEMA)
    assert out["sweep"]["steps"] is None and out["filter"]["cphd_max_card"] is None
    assert "steps" not in config["sweep"]  # the input is not modified


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_non_finite_numbers_are_refused_with_the_key_named(bad):
    config = yaml.safe_load((ROOT / ".test/config/config.yaml").read_text())
    config["sweep"]["clutter_rates"] = [5, bad]
    with pytest.raises(ValueError, match=r"sweep\.clutter_rates\[1\]: expected a finite number"):
        validated_config(config, SCHEMA)
    config["sweep"]["clutter_rates"] = [5]
    config["evaluation"]["cutoff"] = bad
    with pytest.raises(ValueError, match=r"evaluation\.cutoff: expected a finite number"):
        validated_config(config, SCHEMA)


def test_missing_keys_are_named():
    config = yaml.safe_load((ROOT / ".test/config/config.yaml").read_text())
    del config["evaluation"], config["sweep"]["filters"]
    with pytest.raises(ValueError, match="missing key evaluation") as info:
        validated_config(config, SCHEMA)
    assert "missing key sweep.filters" in str(info.value)


def test_an_incomplete_configfile_is_refused_not_completed_from_the_default(tmp_path):
    cfg = yaml.safe_load((ROOT / ".test/config/config.yaml").read_text())
    cfg["results"] = str(tmp_path / "r")
    del cfg["evaluation"], cfg["sweep"]["filters"]
    path = tmp_path / "incomplete.yaml"
    path.write_text(yaml.safe_dump(cfg))
    proc = snakemake("-n", "--cores", "1", "--configfile", str(path))
    assert proc.returncode != 0
    out = proc.stdout + proc.stderr
    assert "missing key evaluation" in out and "missing key sweep.filters" in out
    cfg["sweep"]["clutter_rates"] = [float("nan")]
    path.write_text(yaml.safe_dump(cfg))
    proc = snakemake("-n", "--cores", "1", "--configfile", str(path))
    assert (
        proc.returncode != 0
        and "sweep.clutter_rates[0]: expected a finite number" in proc.stdout + proc.stderr
    )
    assert not (tmp_path / "r").exists()


def test_without_configfile_the_default_config_runs(tmp_path):
    proc = snakemake("-n", "--cores", "2", "--config", f"results={tmp_path}", timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    default = Sweep.from_config(yaml.safe_load((ROOT / "config/config.yaml").read_text()))
    counts = job_counts(proc.stdout + proc.stderr)
    assert counts["filter"] == len(default.settings()) * len(default.filters) * len(default.batches)


def test_tables_do_not_depend_on_job_order(test_run, tmp_path):
    dirs = sorted(str(p) for p in (test_run / "metrics").glob("*/*/*/*/batch*"))
    write_tables(dirs, tmp_path / "a")
    write_tables(list(reversed(dirs)), tmp_path / "b")
    for name in TABLES:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
        assert (tmp_path / "a" / name).read_bytes() == (test_run / "tables" / name).read_bytes()
    cubes = [read_step_cube(p / "steps.nc") for p in (tmp_path / "a", tmp_path / "b", test_run / "tables")]
    assert cubes[0].identical(cubes[1]) and cubes[0].identical(cubes[2])


def _long_from_metrics(dirs):
    """The long per-step table read row by row from the metrics files (independent of the cube)."""
    from nllbench.store import read_metrics

    rows = []
    for f in sorted(f for p in dirs for f in Path(p).glob("seed*.nc")):
        ds = read_metrics(f)
        settings = json.loads(ds.attrs["evaluation_settings"])
        base = dict(
            scenario=str(ds.attrs["scenario"]),
            seed=int(ds.attrs["seed"]),
            filter=str(ds.attrs["filter"]),
            clutter=float(ds.attrs["clutter_rate"]),
            pd=float(ds.attrs["p_detection"]),
            cov_scale=float(settings["cov_scale"]),
            temper=float(settings["temper"]),
            marginal=str(settings["marginal"]),
        )
        series = []
        for j, q in enumerate(ds["q"].values.tolist()):
            for v in ds.data_vars:
                if v.startswith("nll_") and ds[v].dims == ("step", "q") and not v.startswith("nll_exact"):
                    name = "nll" if v == "nll_value" else v
                    series.append((q, name, ds[v].values[:, j]))
        if "nll_exact_value" in ds.variables and bool(ds["nll_exact_available"].values.all()):
            series.append((0, "nll_exact", ds["nll_exact_value"].values))
        series += [  # a measure of multi-Bernoulli posteriors only (P-GOSPA) is absent from a PHD's file
            (0, v, ds[v].values)
            for v in METRIC_STEP_VARIABLES
            if v != "theorem1_excluded" and (v in ds.variables or v not in OPTIONAL_VARIABLES)
        ]
        series += [(0, v, ds[v].values) for v in PROPER_STEP if v in ds.variables]  # where computed
        for q, name, vals in series:
            rows += [
                {**base, "q": q, "step": int(k), "measure": name, "value": float(x)}
                for k, x in zip(ds["step"].values, vals, strict=True)
            ]
    cols = ["scenario", "seed", "filter", "clutter", "pd", "cov_scale", "temper", "marginal", "q", "step"]
    df = pd.DataFrame(rows).drop_duplicates(subset=[*cols, "measure"])
    return df.sort_values([*cols, "measure"]).reset_index(drop=True)


def test_step_cube_holds_every_number_of_the_metrics_files(test_run, tmp_path):
    dirs = sorted(str(p) for p in (test_run / "metrics").glob("*/*/*/*/batch*"))
    expected = _long_from_metrics(dirs)
    got = read_long_table(test_run / "tables")
    assert len(got) == len(expected)
    for c in got.columns:
        if c == "value":
            np.testing.assert_array_equal(got[c].to_numpy(), expected[c].to_numpy())
        else:
            assert got[c].astype(str).tolist() == expected[c].astype(str).tolist(), c
    # the long CSV on request, and from the command line, are that table
    write_tables(dirs, tmp_path / "t", long_csv=True)
    from_cli = tmp_path / "long.csv"
    assert main(["tables", "long", "--tables", str(test_run / "tables"), "-o", str(from_cli)]) == 0
    assert (tmp_path / "t/steps.csv").read_bytes() == from_cli.read_bytes()
    pd.testing.assert_frame_equal(long_table(read_step_cube(tmp_path / "t/steps.nc")), got)


@pytest.mark.slow
def test_same_bytes_whatever_the_number_of_cores(test_run, tmp_path):
    other = tmp_path / "results"
    proc = snakemake(
        "--cores", "1", "--configfile", ".test/config/config.yaml", "--config", f"results={other}"
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    for name in TABLES:
        assert (other / "tables" / name).read_bytes() == (test_run / "tables" / name).read_bytes()
    assert read_step_cube(other / "tables/steps.nc").identical(read_step_cube(test_run / "tables/steps.nc"))
    for fig in FIGURES_SAME_BYTES:  # not timing: measured
        assert (other / f"figures/{fig}.png").read_bytes() == (
            test_run / f"figures/{fig}.png"
        ).read_bytes(), fig
    for f in sorted((test_run / "metrics").rglob("*.nc")):
        g = other / f.relative_to(test_run)
        a, b = xr.open_dataset(f), xr.open_dataset(g)
        for v in a.data_vars:
            np.testing.assert_array_equal(a[v].values, b[v].values)


@pytest.mark.skipif(
    shutil.which("chromium") is None, reason="chromium not installed (Debian package 'chromium')"
)
def test_report_shows_every_item_in_chromium(test_run, tmp_path):
    """The report opens in a real browser and every figure and page in it displays."""
    report = tmp_path / "report.html"
    proc = snakemake(
        "--configfile", ".test/config/config.yaml", "--config", f"results={test_run}", "--report", str(report)
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    check = subprocess.run(
        [
            "python",
            str(ROOT / "scripts/check_report.py"),
            str(report),
            str(tmp_path / "shots"),
            "--no-screenshots",
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert check.returncode == 0, check.stdout + check.stderr
    shown = [line for line in check.stdout.splitlines() if line.startswith("ok")]
    for item in (
        "headline and leaderboard",
        "example 1 figure",
        "clutter",
        "decomposition",
        "covariance-scale",
    ):
        assert any(item in line for line in shown), check.stdout
    assert any("5 Timing" in line for line in shown) and any("4 Theory" in line for line in shown)


def test_leaderboard_page_sorts_in_chromium(test_run, tmp_path):
    """The leaderboard is one self-contained page: every filter x setting row, sortable by a click."""
    if shutil.which("chromium") is None:
        pytest.skip("chromium not installed (Debian package 'chromium')")
    page = (test_run / "report/leaderboard.html").read_text()
    assert "http://" not in page and "https://" not in page  # no CDN: it opens offline
    # click the "NLL median" header twice (descending), then read the rendered table
    click = "<script>const th=document.querySelectorAll('#leaderboard th')[2];th.click();th.click();</script>"
    sorted_page = tmp_path / "sorted.html"
    sorted_page.write_text(page.replace("</body>", click + "</body>"))
    dom = subprocess.run(
        ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", sorted_page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    table = dom[dom.index('id="leaderboard"') :]
    table = table[: table.index("</table>")]
    # per row, the first cell with an interval (NLL median) sorts (the PHD's trajectory NLL is n/a)
    cell = r'<td data-sort="([-0-9.e+]+)">[^<]*<br><span class="ci">'  # the value, its interval below
    keys = [float(re.findall(cell, row)[0]) for row in table.split("<tr")[2:]]
    summary = pd.read_csv(test_run / "tables/summary.csv")
    cfg = yaml.safe_load((ROOT / ".test/config/config.yaml").read_text())
    assert len(keys) == len(cfg["sweep"]["filters"]) * len(cfg["sweep"]["clutter_rates"])
    assert keys == sorted(keys, reverse=True) and len(set(summary["filter"])) == 3


def test_outputs_of_the_study_tables(test_run):
    paired = pd.read_csv(test_run / "tables/paired.csv")
    assert {
        "filter_a",
        "filter_b",
        "mean_difference",
        "ci95_low",
        "ci95_high",
        "wilcoxon_p",
        "n_seeds",
    } <= set(paired.columns)
    assert (paired["filter_a"] < paired["filter_b"]).all()
    ranking = pd.read_csv(test_run / "tables/ranking.csv")
    assert (ranking["rank"] >= 1).all()
    summary = pd.read_csv(test_run / "tables/summary.csv")
    nonneg = summary[summary["measure"].isin(["gospa_mean", "ospa_mean", "motp"])]
    assert (nonneg["ci95_low"] >= 0).all()  # no interval of a non-negative quantity below zero


def test_pooled_calibration_tables_are_the_sums_of_the_runs_counts(test_run):
    """tables/reliability.csv and calibration.csv against the metrics files' own counts, added by hand."""
    from scipy.stats import chi2

    from nllbench.store import read_calibration_counts, read_metrics

    rel = pd.read_csv(test_run / "tables/reliability.csv")
    cal = pd.read_csv(test_run / "tables/calibration.csv")
    runs = pd.read_csv(test_run / "tables/runs.csv")
    assert not rel.isna().any().any() and not cal["value"].isna().any()
    per_setting: dict[tuple, dict[int, object]] = {}
    for f in sorted((test_run / "metrics").rglob("seed*.nc")):
        ds = read_metrics(f)
        cov = float(f.parent.parent.name.split("_cov")[1])
        key = (str(ds.attrs["filter"]), float(ds.attrs["clutter_rate"]), cov)
        per_setting.setdefault(key, {})[int(ds.attrs["seed"])] = read_calibration_counts(ds)
    assert per_setting
    for (filt, clutter, cov), seeds in per_setting.items():
        sel = (rel["filter"] == filt) & (rel["clutter"] == clutter) & (rel["cov_scale"] == cov)
        count = sum(c.bin_count for c in seeds.values())
        explained = sum(c.bin_explained for c in seeds.values())
        assert rel[sel]["count"].tolist() == count[count > 0].tolist()
        assert rel[sel]["explained"].tolist() == explained[count > 0].tolist()
        c = cal[(cal["filter"] == filt) & (cal["clutter"] == clutter) & (cal["cov_scale"] == cov)]
        values = c.set_index("measure")["value"]
        n = sum(s.nees_pairs for s in seeds.values())
        if filt == "phd":  # no Bernoullis: undefined scores are absent rows, not NaN
            assert n == 0 and "anees" not in values and "brier" not in values and not sel.any()
            continue
        dof = sum(s.nees_dof for s in seeds.values())
        assert values["anees"] == pytest.approx(sum(s.nees_sum for s in seeds.values()) / n, rel=1e-12)
        assert values["anees_ci95_low"] == pytest.approx(chi2.ppf(0.025, dof) / n, rel=1e-9)
        assert values["anees_ci95_high"] == pytest.approx(chi2.ppf(0.975, dof) / n, rel=1e-9)
    for measure in ("tgospa", "hota", "deta", "assa", "loca", "tgospa_localization"):
        assert set(runs[runs["measure"] == measure]["filter"]) == {"phd", "pmb", "pmbm"}, measure
    for measure in ("brier", "ece", "anees", "nees_inside95_share"):  # undefined for the PHD
        assert set(runs[runs["measure"] == measure]["filter"]) == {"pmb", "pmbm"}, measure
    # the T-GOSPA terms, summed over steps, add up to tgospa ** p (p = 1 in the .test config)
    keys = ["filter", "clutter", "cov_scale", "seed"]
    wide = runs[runs["q"] == 0].pivot_table(index=keys, columns="measure", values="value")
    terms = wide[["tgospa_localization", "tgospa_missed", "tgospa_false", "tgospa_switches"]].sum(axis=1)
    np.testing.assert_allclose(terms, wide["tgospa"], rtol=1e-9)
    # P-GOSPA and PT-GOSPA: multi-Bernoulli filters only (docs/pgospa.md); the PT-GOSPA terms add up too
    for measure in ("pgospa_mean", "ptgospa", "ptgospa_switches"):
        assert set(runs[runs["measure"] == measure]["filter"]) == {"pmb", "pmbm"}, measure
    mb = wide.loc[wide.index.get_level_values("filter") != "phd"]
    parts = ("localization", "existence_mismatch", "missed", "false", "switches")
    np.testing.assert_allclose(mb[[f"ptgospa_{t}" for t in parts]].sum(axis=1), mb["ptgospa"], rtol=1e-9)


def test_posteriors_are_removed_once_evaluated_unless_kept(tmp_path):
    """keep_posteriors: false (the default config's) makes the filters' outputs temp(): the
    evaluation still gets them, and they are gone once it is done."""
    results = tmp_path / "r"
    target = f"{results}/metrics/williams15/clutter5_pd0.9/phd/q1_cov1/batch0"
    proc = snakemake(
        "--cores",
        "2",
        "--configfile",
        ".test/config/config.yaml",
        "--config",
        f"results={results}",
        "keep_posteriors=False",  # snakemake reads --config values as Python literals
        "--",
        target,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert sorted(p.name for p in Path(target).glob("seed*.nc")) == ["seed0.nc", "seed1.nc"]
    assert not (results / "posteriors" / "williams15" / "clutter5_pd0.9" / "phd" / "batch0").exists()
    assert (results / "scenarios" / "williams15" / "clutter5_pd0.9" / "batch0").exists()


def test_the_reference_study_from_a_truth_file(tmp_path):
    """sweep.truth: every simulation job reads the given truth (a rule input) and only simulates
    the measurements; a missing or broken file is refused at validation, naming the key."""
    import numpy as np

    from nllbench.pipeline.config import validated_config
    from nllbench.store.scenario import write_truth_csv

    truth = tmp_path / "truth.csv"
    states = [np.array([[10.0 * k, 5.0, 1.0, 0.0]]) for k in range(8)]
    write_truth_csv(truth, states, [np.array([7])] * 8)
    cfg = yaml.safe_load((ROOT / ".test/config/config.yaml").read_text())
    cfg["results"] = str(tmp_path / "r")
    cfg["sweep"]["truth"] = str(truth)
    path = tmp_path / "truth.yaml"
    path.write_text(yaml.safe_dump(cfg))
    proc = snakemake("-n", "-p", "--cores", "2", "--configfile", str(path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = (proc.stdout + proc.stderr).splitlines()
    commands = [line for line in out if "nllbench simulate --" in line]
    assert commands and all(f"--truth {truth}" in c for c in commands)
    with pytest.raises(ValueError, match=r"config key sweep\.truth: expected a truth CSV file, got .*nope"):
        validated_config({**cfg, "sweep": {**cfg["sweep"], "truth": str(tmp_path / "nope.csv")}}, SCHEMA)
    short = {**cfg, "sweep": {**cfg["sweep"], "steps": 4}}
    with pytest.raises(ValueError, match=r"config key sweep\.truth: .*truth\.csv"):
        validated_config(short, SCHEMA)
