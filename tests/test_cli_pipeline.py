"""nllbench simulate + nllbench filter from the command line, for every filter."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest

import nllbench as nb
from nllbench.cli import main
from nllbench.io import read_posterior, read_scenario


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
