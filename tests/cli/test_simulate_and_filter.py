"""nllbench simulate + nllbench filter from the command line, for every filter."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import nllbench as nb
from nllbench.cli import main
from nllbench.store import read_metrics, read_posterior, read_scenario


@pytest.fixture(scope="module")
def scenario_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("cli") / "scenario.nc"
    assert (
        main(
            [
                "simulate",
                "--scenario",
                "williams15",
                "--seed",
                "1",
                "--steps",
                "12",
                "--clutter-rate",
                "5",
                "--pd",
                "0.95",
                "-o",
                str(path),
            ]
        )
        == 0
    )
    return path


@pytest.mark.parametrize("name", ["phd", "cphd", "pmb", "pmbm", "mbm", "mbm01"])
def test_filter_output_scores_at_every_step(scenario_file, tmp_path, name, capsys):
    out = tmp_path / f"{name}.nc"
    assert main(["filter", "--filter", name, str(scenario_file), "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert f"[{name}] step 12/12" in err  # progress
    post = read_posterior(out)
    data = read_scenario(scenario_file)
    assert len(post) == data.steps == 12
    assert post.attrs["filter"] == name and post.attrs["scenario"] == "williams15" and post.attrs["seed"] == 1
    for density, X in zip(post, data.truth, strict=True):
        res = nb.nll(density, X, q=5)
        assert not math.isnan(res.value)
        assert res.lower <= res.value <= res.upper


def test_simulate_records_overrides(scenario_file):
    data = read_scenario(scenario_file)
    assert data.attrs["clutter_rate"] == 5 and data.attrs["p_detection"] == 0.95 and data.attrs["steps"] == 12
    assert data.model.p_detection == 0.95


def test_cphd_bound_below_the_truth_warns(scenario_file, tmp_path, capsys):
    out = tmp_path / "c.nc"
    assert (
        main(["filter", "-q", "--filter", "cphd", "--cphd-max-card", "2", str(scenario_file), "-o", str(out)])
        == 0
    )
    assert "below the 4 objects" in capsys.readouterr().err
    post = read_posterior(out)
    assert nb.nll(post[0], read_scenario(scenario_file).truth[0]).value == math.inf


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "nllbench.cli", *args], capture_output=True, text=True)


def test_errors_are_one_line(tmp_path):
    proc = run_cli("filter", "--filter", "pmbm", str(tmp_path / "none.nc"), "-o", str(tmp_path / "o.nc"))
    assert proc.returncode == 2 and "no such file" in proc.stderr and "Traceback" not in proc.stderr
    bad = tmp_path / "bad.nc"
    bad.write_text("x")
    proc = run_cli("filter", "--filter", "pmbm", str(bad), "-o", str(tmp_path / "o.nc"))
    assert proc.returncode == 2 and "not a readable NetCDF file" in proc.stderr
    assert not (tmp_path / "o.nc").exists()
    proc = run_cli("simulate", "--scenario", "williams15", "--pd", "2", "-o", str(tmp_path / "s.nc"))
    assert proc.returncode == 2 and "argument --pd: expected a finite number in (0, 1]" in proc.stderr
    assert not (tmp_path / "s.nc").exists()


def test_same_seed_same_file_content(tmp_path):
    for name in ("a", "b"):
        assert (
            main(
                [
                    "simulate",
                    "--scenario",
                    "chalmers",
                    "--seed",
                    "3",
                    "--steps",
                    "5",
                    "-o",
                    str(tmp_path / f"{name}.nc"),
                ]
            )
            == 0
        )
    a, b = read_scenario(tmp_path / "a.nc"), read_scenario(tmp_path / "b.nc")
    for x, y in zip(a.measurements, b.measurements, strict=True):
        np.testing.assert_array_equal(x, y)


def test_failed_batch_leaves_no_output_directory(tmp_path):
    sim = tmp_path / "sim"
    assert (
        main(
            [
                "simulate",
                "--scenario",
                "williams15",
                "--seeds",
                "0",
                "1",
                "--steps",
                "4",
                "--output-dir",
                str(sim),
            ]
        )
        == 0
    )
    post = tmp_path / "post"
    assert main(["filter", "-q", "--filter", "phd", "--input-dir", str(sim), "--output-dir", str(post)]) == 0
    (post / "seed1.nc").write_text("corrupted")  # the second file of the batch is unreadable
    out = tmp_path / "metrics"
    assert (
        main(["evaluate", "--posterior-dir", str(post), "--scenario-dir", str(sim), "--output-dir", str(out)])
        == 2
    )
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temporary left behind


def test_batch_equals_single_runs(tmp_path):
    sim = tmp_path / "sim"
    assert (
        main(
            [
                "simulate",
                "--scenario",
                "chalmers",
                "--seeds",
                "3",
                "4",
                "--steps",
                "5",
                "--output-dir",
                str(sim),
            ]
        )
        == 0
    )
    assert (
        main(
            [
                "simulate",
                "--scenario",
                "chalmers",
                "--seed",
                "4",
                "--steps",
                "5",
                "-o",
                str(tmp_path / "one.nc"),
            ]
        )
        == 0
    )
    a, b = read_scenario(sim / "seed4.nc"), read_scenario(tmp_path / "one.nc")
    for x, y in zip(a.measurements, b.measurements, strict=True):
        np.testing.assert_array_equal(x, y)


def sim(path, seed=1, scenario="williams15"):
    args = ["simulate", "--scenario", scenario, "--seed", str(seed), "--steps", "4", "-o", str(path)]
    assert main(args) == 0


@pytest.fixture(scope="module")
def scored_pair(tmp_path_factory):
    """A williams15 seed-1 scenario and its PMB posterior."""
    d = tmp_path_factory.mktemp("pair")
    sim(d / "s1.nc")
    assert main(["filter", "-q", "--filter", "pmb", str(d / "s1.nc"), "-o", str(d / "p1.nc")]) == 0
    return d


@pytest.mark.parametrize(
    "other, differs, same_truth",
    [
        # williams15 draws its truth from truth_seed: another seed has the same truth
        (dict(seed=99), "seed: posterior 1, scenario 99", True),
        (dict(scenario="chalmers"), "scenario: posterior 'williams15', scenario 'chalmers'", False),
    ],
)
def test_evaluate_refuses_a_posterior_of_another_scenario(
    scored_pair, tmp_path, capsys, other, differs, same_truth
):
    sim(tmp_path / "other.nc", **other)
    post, out = scored_pair / "p1.nc", tmp_path / "m.nc"
    assert main(["evaluate", str(post), str(tmp_path / "other.nc"), "-o", str(out), "--q", "1"]) == 2
    err = capsys.readouterr().err
    assert "expected a posterior of the scenario in" in err and differs in err
    assert ("truth_sha256" in err) != same_truth
    assert not out.exists() and not (tmp_path / "m.summary.csv").exists()
    args = ["evaluate", str(post), str(tmp_path / "other.nc"), "-o", str(out), "--q", "1", "--allow-mismatch"]
    assert main(args) == 0
    assert "mismatch allowed" in capsys.readouterr().err
    check = read_metrics(out).attrs["scenario_check"]
    assert check.startswith("mismatch allowed (--allow-mismatch)") and differs in check


def test_evaluate_checks_the_truth_itself(scored_pair, tmp_path, capsys):
    import xarray as xr

    with xr.open_dataset(scored_pair / "s1.nc", decode_cf=False) as ds:
        edited = ds.load()
    edited["truth_state"].values[0, 0] += 1.0  # same attributes, another truth
    edited.to_netcdf(tmp_path / "edited.nc")
    out = tmp_path / "m.nc"
    assert main(["evaluate", str(scored_pair / "p1.nc"), str(tmp_path / "edited.nc"), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "truth_sha256: posterior" in err and "seed" not in err.split("differ in")[1]
    assert main(["evaluate", str(scored_pair / "p1.nc"), str(scored_pair / "s1.nc"), "-o", str(out)]) == 0
    assert read_metrics(out).attrs["scenario_check"].startswith("matched: scenario, seed, truth_seed")


def test_a_posterior_without_scenario_record_is_scored_with_a_note(scored_pair, tmp_path, capsys):
    from nllbench.store import write_posterior

    write_posterior(list(read_posterior(scored_pair / "p1.nc")), tmp_path / "mine.nc", {"filter": "mine"})
    out = tmp_path / "m.nc"
    assert main(["evaluate", str(tmp_path / "mine.nc"), str(scored_pair / "s1.nc"), "-o", str(out)]) == 0
    assert "not recorded in the posterior" in capsys.readouterr().err
    assert read_metrics(out).attrs["scenario_check"] == "not recorded in the posterior"


def test_a_failed_evaluate_leaves_no_output(scored_pair, tmp_path, capsys):
    (tmp_path / "file").write_text("x")
    out = tmp_path / "out.nc"
    for summary in (tmp_path / "file" / "x.csv", "/proc/x.csv"):
        args = ["evaluate", str(scored_pair / "p1.nc"), str(scored_pair / "s1.nc"), "-o", str(out)]
        assert main([*args, "--summary", str(summary), "--timing", str(tmp_path / "t.csv")]) == 2
        assert f"--summary {str(summary)!r}" in capsys.readouterr().err
        assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]


@pytest.mark.parametrize(
    "command",
    [
        ["simulate", "--scenario", "williams15", "--steps", "2", "-o", "{out}"],
        ["simulate", "--scenario", "williams15", "--steps", "2", "--seeds", "0", "--output-dir", "{out}"],
        ["filter", "-q", "--filter", "phd", "{scenario}", "-o", "{out}"],
        ["evaluate", "{posterior}", "{scenario}", "-o", "{out}"],
        ["timing", "{timing}", "-o", "{out}"],
        ["example", "1", "--out-dir", "{out}"],
        ["aggregate", "{metrics}", "--out-dir", "{out}"],
        ["plot", "theorem1", "--tables", "{metrics}", "-o", "{out}"],
    ],
)
def test_every_subcommand_names_the_users_output_path(scored_pair, tmp_path, capsys, command):
    (tmp_path / "sc12.nc").write_text("a file")
    (tmp_path / "t.csv").write_text("item,seconds\nseed0,1.0\n")
    (tmp_path / "metrics").mkdir()
    out = tmp_path / "sc12.nc" / "out.nc"
    names = dict(
        out=out,
        scenario=scored_pair / "s1.nc",
        posterior=scored_pair / "p1.nc",
        timing=tmp_path / "t.csv",
        metrics=tmp_path / "metrics",
    )
    assert main([a.format(**names) for a in command]) == 2
    err = capsys.readouterr().err
    option = command[command.index("{out}") - 1]
    cause = f"cannot write there: {str(tmp_path / 'sc12.nc')!r} is a file, not a directory"
    assert f"{option} {str(out)!r}: {cause}" in err
    assert "Errno" not in err and ".tmp" not in err


def test_sigkill_of_a_batch_then_a_rerun_leaves_only_the_output(tmp_path):
    import signal
    import time

    out = tmp_path / "sim"
    seeds = [str(s) for s in range(2000)]
    args = ["simulate", "--scenario", "chalmers", "--steps", "3", "--seeds", *seeds, "--output-dir", str(out)]
    proc = subprocess.Popen([sys.executable, "-m", "nllbench.cli", *args], stderr=subprocess.PIPE)
    partial = tmp_path / f".sim.nllbench-partial.{proc.pid}"  # and a random part

    def written():
        return [p for p in tmp_path.glob(partial.name + "-*") if p.is_dir() and any(p.glob("seed*.nc"))]

    deadline = time.monotonic() + 60
    while not written() and time.monotonic() < deadline:
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL, "the batch finished before it could be killed"
    left = sorted(p.name for p in tmp_path.iterdir())
    assert left == [".sim.nllbench-lock", written()[0].name]
    rerun = run_cli(*args[: args.index("--seeds") + 1], "0", "1", "--output-dir", str(out))
    assert rerun.returncode == 0, rerun.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["sim"]
    assert sorted(p.name for p in out.iterdir()) == [".nllbench-output", "seed0.nc", "seed1.nc"]


def test_mbm_step1_nll_is_what_its_posterior_says(tmp_path):
    """After the first update the MBM has no PPP: an object missed at step 1 must be explained by a
    Bernoulli started at a distant measurement, so its NLL is in the thousands (docs/evaluation.md)."""
    from support.bruteforce import pmbm_log_likelihood

    from nllbench.engine.transforms import marginal

    s, p, m = tmp_path / "s.nc", tmp_path / "mbm.nc", tmp_path / "m.nc"
    assert main(["simulate", "--scenario", "williams15", "--seed", "1", "--steps", "3", "-o", str(s)]) == 0
    assert main(["filter", "-q", "--filter", "mbm", str(s), "-o", str(p)]) == 0
    assert main(["evaluate", str(p), str(s), "-o", str(m), "--q", "1", "--exact"]) == 0
    data, f = read_scenario(s), marginal(read_posterior(p)[0])
    X = data.truth[0][:, :2]
    missed = set(data.truth_ids[0].tolist()) - set(data.origins[0].tolist())
    assert len(missed) == 2 and f.ppp is None
    # fewer Bernoullis near the four objects (all start together) than objects
    near = [
        np.min(np.linalg.norm(h.densities.means[:, None] - X[None], axis=-1), axis=1) < 5
        for h in f.hypotheses
    ]
    assert max(int(n.sum()) for n in near) < len(X)
    brute = -pmbm_log_likelihood(f, X)[0]
    stored = float(read_metrics(m)["nll_exact_value"].values[0])
    assert brute > 1000 and stored == pytest.approx(brute, rel=1e-9)
    assert nb.nll(f, X, method="exact").value == pytest.approx(brute, rel=1e-9)
    # the PMBM keeps the missed objects in its PPP: a small NLL at the same step
    assert main(["filter", "-q", "--filter", "pmbm", str(s), "-o", str(tmp_path / "pmbm.nc")]) == 0
    assert nb.nll(marginal(read_posterior(tmp_path / "pmbm.nc")[0]), X, method="exact").value < 50


def test_settings_object_gives_the_options_and_is_the_provenance(tmp_path):
    """filter/evaluate --settings: the config slice sets the options (flags still win) and is recorded."""
    import json

    import xarray as xr

    sim, post = tmp_path / "sim", tmp_path / "post"
    args = ["simulate", "--scenario", "williams15", "--steps", "4", "--seeds", "0", "1", "--output-dir"]
    assert main([*args, str(sim)]) == 0
    slice_ = {"filter": "pmbm", "gate": 15.0, "max_hypotheses": 20, "seeds": [0, 1]}
    assert (
        main(
            [
                "filter",
                "-q",
                "--input-dir",
                str(sim),
                "--output-dir",
                str(post),
                "--settings",
                json.dumps(slice_),
            ]
        )
        == 0
    )
    with xr.open_dataset(post / "seed0.nc") as ds:
        assert json.loads(ds.attrs["config"]) == slice_
        parameters = json.loads(ds.attrs["filter_parameters"])
    assert parameters["gate"] == 15.0 and parameters["max_hypotheses"] == 20
    # one grid job against one job per (Q, scale): the same values in every metrics file
    grid = {"q": [1, 3], "cov_scales": [0.5, 1], "probe_q": 3, "exact": True, "filter": "pmbm", "batch": 0}
    pattern = str(tmp_path / "m" / "q{q}_cov{cov}")
    base = ["evaluate", "--posterior-dir", str(post), "--scenario-dir", str(sim)]
    timing = tmp_path / "timing.csv"
    assert (
        main([*base, "--output-dir", pattern, "--settings", json.dumps(grid), "--timing", str(timing)]) == 0
    )
    # one timing row per (seed, scale): the largest Q ranked at that scale; seconds cover the NLL time
    t = pd.read_csv(timing)
    assert sorted(zip(t["item"], t["cov_scale"], t["q"], strict=True)) == [
        ("seed0", 0.5, 3),
        ("seed0", 1.0, 3),
        ("seed1", 0.5, 3),
        ("seed1", 1.0, 3),
    ]
    assert (t["seconds"] >= t["nll_seconds"]).all() and (t["nll_seconds"] > 0).all()
    # the exact NLL and the proper scores: once per run, in the first cell at scale 1
    no_proper = ["--no-proper-scores"]
    for q, cov, exact in ((1, "1", ["--exact"]), (3, "0.5", no_proper), (3, "1", no_proper)):
        alone = tmp_path / f"alone_q{q}_cov{cov}"
        assert main([*base, "--output-dir", str(alone), "--q", str(q), "--cov-scale", cov, *exact]) == 0
        for seed in (0, 1):
            with (
                xr.open_dataset(alone / f"seed{seed}.nc") as a,
                xr.open_dataset(tmp_path / "m" / f"q{q}_cov{cov}" / f"seed{seed}.nc") as b,
            ):
                xr.testing.assert_identical(a.drop_attrs(), b.drop_attrs())
                assert json.loads(b.attrs["config"]) == {**grid, "cell": {"q": q, "cov_scale": float(cov)}}
                assert a.attrs["evaluation_settings"] == b.attrs["evaluation_settings"]


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ('{"gate": -1}', "--settings key gate: expected a finite number"),
        ('{"max_hypotheses": 2.5}', "--settings key max_hypotheses: expected an integer"),
        ('{"gates": 1}', "--settings key gates: expected one of"),
        ('{"project_before_cap": 1}', "--settings key project_before_cap: expected true or false"),
        ("[1]", "--settings: expected a JSON object"),
    ],
)
def test_settings_errors_name_the_key(tmp_path, capsys, settings, message):
    code = main(
        [
            "filter",
            "--filter",
            "pmbm",
            "--input-dir",
            str(tmp_path),
            "--output-dir",
            str(tmp_path / "o"),
            "--settings",
            settings,
        ]
    )
    assert code == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1, err


def test_cli_filter_and_evaluate_trajectory(tmp_path, capsys):
    import json

    from nllbench.cli import main

    scenario, post, record = tmp_path / "s.nc", tmp_path / "t.nc", tmp_path / "r.json"
    argv = ["simulate", "--scenario", "williams15", "--seed", "1", "--steps", "10", "--clutter-rate", "2"]
    assert main([*argv, "-o", str(scenario)]) == 0
    assert main(["filter", "-q", "--filter", "tpmbm", str(scenario), "-o", str(post)]) == 0
    assert "a trajectory posterior of 10 steps" in capsys.readouterr().out
    refused = ["filter", "-q", "--filter", "tpmbm", "--estimate-at", "update", str(scenario), "-o", str(post)]
    assert main(refused) != 0
    assert "writes no per-step estimates" in capsys.readouterr().err
    assert main(["evaluate-trajectory", str(post), str(scenario), "--q", "5", "-o", str(record)]) == 0
    rec = json.loads(record.read_text())
    assert rec["filter"] == "tpmbm" and rec["lower"] <= rec["value"] == rec["upper"]
    terms = ("localization", "presence", "false", "undetected", "mixture", "association")
    assert sum(rec[t] for t in terms) == pytest.approx(rec["value"], abs=1e-6)
    assert rec["tgospa"] >= 0 and 0 <= rec["idf1"] <= 1
