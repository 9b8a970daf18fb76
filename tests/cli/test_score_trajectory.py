"""``nllbench score --trajectory``: the values are ``nb.trajectory_nll``'s on the same tables."""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest
from support.trajectory_cases import BOX, random_case, switch_tables

import nllbench as nb
from nllbench.cli import main
from nllbench.engine.trajectory import TRAJECTORY_TERMS
from nllbench.measures.names import TRAJECTORY_RUN
from nllbench.measures.names import TRAJECTORY_TERMS as NAMED_TERMS
from nllbench.store import read_metrics
from nllbench.trackers.trajectory_fit import fit_undetected_trajectories, trajectory_nll_windows
from nllbench.trackers.trajectory_run import TrajectoryOptions

FOV = ["--fov", "-1", "-1", "5", "5"]


def _tables(tmp_path, seed=3, m=3, n=3, K=6):
    rng = np.random.default_rng(seed)
    tracks, truth = random_case(rng, m, n, K, special=False, row_prob=0.9)
    # every frame in both tables (score refuses tables covering different frames)
    truth = pd.concat([truth, pd.DataFrame({"frame": range(K), "id": 999, "x": 2.0, "y": 2.0})])
    tracks.to_csv(tmp_path / "tracks.csv", index=False)
    truth.to_csv(tmp_path / "truth.csv", index=False)
    return tracks, truth


def _score(tmp_path, *extra, name="out"):
    args = [
        "score",
        str(tmp_path / "tracks.csv"),
        str(tmp_path / "truth.csv"),
        "-o",
        str(tmp_path / f"{name}.nc"),
    ]
    return main([*args, "--q", "3", "50", *extra])


def test_names_are_the_engines():
    assert NAMED_TERMS == TRAJECTORY_TERMS
    assert TRAJECTORY_RUN[3:] == tuple(f"trajectory_nll_{t}" for t in TRAJECTORY_TERMS)


def test_trajectory_values_equal_the_python_function(tmp_path, capsys):
    tracks, truth = _tables(tmp_path)
    extra = ["--trajectory", "--undetected-trajectories", "0.5", "0.4", "--unlisted-presence", "0.1", *FOV]
    assert _score(tmp_path, *extra, "--exact") == 0
    out = capsys.readouterr().out
    want = nb.trajectory_nll(
        tracks, truth, q=50, exact=True, undetected=(0.5, 0.4), fov=BOX, unlisted_presence=0.1
    )
    assert "trajectory NLL (Q=50)" in out
    row = pd.read_csv(tmp_path / "out.summary.csv").iloc[0]
    ds = read_metrics(tmp_path / "out.nc")
    for got in (row, {k: float(ds[k].values) for k in [*TRAJECTORY_RUN, "trajectory_nll_exact"]}):
        assert got["trajectory_nll"] == pytest.approx(want.value, rel=1e-12)
        assert got["trajectory_nll_lower"] == pytest.approx(want.lower, rel=1e-12)
        assert got["trajectory_nll_upper"] == pytest.approx(want.upper, rel=1e-12)
        assert got["trajectory_nll_exact"] == pytest.approx(want.exact, rel=1e-12)
        for t in TRAJECTORY_TERMS:
            assert got[f"trajectory_nll_{t}"] == pytest.approx(want.terms[t], rel=1e-12, abs=1e-12)
    assert int(ds["trajectory_nll_q"].values) == 50
    assert ds["trajectory_window_nll"].values.tolist() == pytest.approx([want.value], rel=1e-12)
    assert '"R": 0.1' in ds.attrs["trajectory_fill_ins"] and '"rate": 0.5' in ds.attrs["fill_ins"]
    # the per-frame NLL beside it is the one score computes without --trajectory
    assert _score(tmp_path, *FOV, name="plain") == 0
    plain = pd.read_csv(tmp_path / "plain.summary.csv").iloc[0]
    assert plain["nll_q50"] == row["nll_q50"] and "trajectory_nll" not in plain


def test_windows_and_per_window_table(tmp_path):
    tracks, truth = _tables(tmp_path, seed=5, K=7)
    extra = ["--trajectory", "--undetected-trajectories", "0.5", "0.5", *FOV, "--window", "3"]
    assert _score(tmp_path, *extra, "--per-window", str(tmp_path / "pw.csv")) == 0
    want = trajectory_nll_windows(tracks, truth, 3, q=50, undetected=(0.5, 0.5), fov=BOX)
    pw = pd.read_csv(tmp_path / "pw.csv")
    assert pw["first_frame"].tolist() == [0, 3, 6] and pw["frames"].tolist() == [3, 3, 1]
    np.testing.assert_allclose(pw["trajectory_nll"], [w.value for w in want], rtol=1e-12)
    row = pd.read_csv(tmp_path / "out.summary.csv").iloc[0]
    assert row["trajectory_nll"] == pytest.approx(sum(w.value for w in want), rel=1e-12)
    assert row["trajectory_nll_windows"] == 3
    ds = read_metrics(tmp_path / "out.nc")
    assert ds["trajectory_window_first_frame"].values.tolist() == [0, 3, 6]
    np.testing.assert_allclose(ds["trajectory_window_nll"].values, pw["trajectory_nll"], rtol=1e-15)


def test_per_trajectory_table(tmp_path):
    tracks, truth = _tables(tmp_path, seed=8)
    extra = ["--trajectory", "--undetected-trajectories", "1.0", "0.5", *FOV]
    assert _score(tmp_path, *extra, "--per-trajectory", str(tmp_path / "pt.csv")) == 0
    want = nb.trajectory_nll(tracks, truth, q=50, undetected=(1.0, 0.5), fov=BOX).per_trajectory()
    got = pd.read_csv(tmp_path / "pt.csv", dtype={"best_label": "Int64"})
    assert got["window"].tolist() == [0] * len(want)
    assert want["best_label"].isna().any()  # an undetected truth is <NA>, read back as <NA>
    pd.testing.assert_frame_equal(got.drop(columns="window"), want, check_dtype=False, rtol=1e-12)


def test_switch_probe_through_the_command(tmp_path):
    fov = ["--fov", "-5", "-5", "25", "10"]
    rows = {}
    for swap in (False, True):
        tracks, truth = switch_tables(swap)
        tracks.to_csv(tmp_path / "tracks.csv", index=False)
        truth.to_csv(tmp_path / "truth.csv", index=False)
        extra = ["--trajectory", "--undetected-trajectories", "0.5", "0.5", "--undetected-rate", "0.5", *fov]
        assert _score(tmp_path, *extra, name=f"s{swap}") == 0
        rows[swap] = pd.read_csv(tmp_path / f"s{swap}.summary.csv").iloc[0]
    assert rows[True]["nll_q50"] == rows[False]["nll_q50"]
    assert rows[True]["trajectory_nll"] > rows[False]["trajectory_nll"] + 50


def test_mixture_refused_unless_marginal(tmp_path, capsys):
    rows = []
    for h, w in ((0, 0.3), (1, 0.7)):
        rows.append({"frame": 0, "hypothesis": h, "weight": w, "id": 1, "r": 0.8, "x": h * 1.0, "y": 0.0})
    rows.append({"frame": 1, "hypothesis": 0, "weight": 1.0, "id": 1, "r": 0.9, "x": 0.5, "y": 0.0})
    tracks = pd.DataFrame(rows).assign(var_x=1.0, var_y=0.5)
    truth = pd.DataFrame({"frame": [0, 1], "id": [3, 3], "x": [0.4, 0.6], "y": [0.0, 0.1]})
    tracks.to_csv(tmp_path / "tracks.csv", index=False)
    truth.to_csv(tmp_path / "truth.csv", index=False)
    assert _score(tmp_path, "--trajectory") == 2
    err = capsys.readouterr().err
    assert "global hypotheses" in err and "--trajectory-mixture marginal" in err
    assert not (tmp_path / "out.nc").exists()  # nothing written
    assert _score(tmp_path, "--trajectory", "--trajectory-mixture", "marginal") == 0
    want = nb.trajectory_nll(tracks, truth, q=50, mixture="marginal")
    row = pd.read_csv(tmp_path / "out.summary.csv").iloc[0]
    assert row["trajectory_nll"] == pytest.approx(want.value, rel=1e-12)


def test_fit_on_a_calibration_set(tmp_path, capsys):
    rng = np.random.default_rng(11)
    cal_t, cal_y = random_case(rng, 3, 4, 8, special=False, row_prob=0.7)
    cal_y = pd.concat([cal_y, pd.DataFrame({"frame": range(8), "id": 999, "x": 2.0, "y": 2.0})])
    cal_t.to_csv(tmp_path / "cal_tracks.csv", index=False)
    cal_y.to_csv(tmp_path / "cal_truth.csv", index=False)
    tracks, truth = _tables(tmp_path, seed=12)
    cal = [str(tmp_path / "cal_tracks.csv"), str(tmp_path / "cal_truth.csv")]
    extra = ["--trajectory", "--fit-trajectory-on", *cal, "--fit-window", "4", *FOV]
    assert _score(tmp_path, *extra) == 0
    assert "fitted undetected trajectories" in capsys.readouterr().out
    fit = fit_undetected_trajectories(*cal, fov=BOX, window=4, q=50, fit_unlisted_presence=True)
    want = nb.trajectory_nll(
        tracks,
        truth,
        q=50,
        undetected=(fit["rate"], fit["presence"]),
        fov=BOX,
        unlisted_presence=fit["unlisted_presence"],
    )
    row = pd.read_csv(tmp_path / "out.summary.csv").iloc[0]
    assert row["trajectory_nll"] == pytest.approx(want.value, rel=1e-12)
    ds = read_metrics(tmp_path / "out.nc")
    assert '"fitted"' in ds.attrs["trajectory_fill_ins"] and '"calibration_nll"' in ds.attrs["fill_ins"]
    # R given: only the undetected trajectories are fitted
    assert _score(tmp_path, *extra, "--unlisted-presence", "0.2", name="fixed") == 0
    fixed = fit_undetected_trajectories(*cal, fov=BOX, window=4, q=50, unlisted_presence=0.2)
    ds = read_metrics(tmp_path / "fixed.nc")
    assert f'"R": {fixed["unlisted_presence"]}' in ds.attrs["trajectory_fill_ins"]
    assert fixed["unlisted_presence"] == 0.2


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--window", "3"], "--window need --trajectory"),
        (["--trajectory-mixture", "marginal"], "--trajectory-mixture need --trajectory"),
        (["--trajectory", "--unlisted-presence", "0.1"], "give --fov"),
        (["--trajectory", "--undetected-trajectories", "1", "0"], "PRESENCE in \\(0, 1\\]"),
        (
            ["--trajectory", "--undetected-trajectories", "1", "0.5", "--fit-trajectory-on", "a", "b", *FOV],
            "not both",
        ),
        (["--trajectory", "--fit-window", "3"], "--fit-window is for --fit-trajectory-on"),
    ],
)
def test_misused_options_are_refused(tmp_path, capsys, extra, message):
    _tables(tmp_path)
    assert _score(tmp_path, *extra) == 2
    assert re.search(message, capsys.readouterr().err)


def test_batch_refuses_the_one_run_tables(tmp_path, capsys):
    rc = main(
        [
            "score",
            "--tracks-dir",
            str(tmp_path),
            "--scenario-dir",
            str(tmp_path),
            "--output-dir",
            str(tmp_path / "o"),
        ]
        + ["--trajectory", "--per-window", str(tmp_path / "pw.csv")]
    )
    assert rc == 2 and "are for one run" in capsys.readouterr().err


def test_no_track_ids_is_not_applicable(tmp_path, capsys):
    tracks, truth = _tables(tmp_path)
    tracks.drop(columns="id").to_csv(tmp_path / "tracks.csv", index=False)
    assert _score(tmp_path, "--trajectory", *FOV, "--undetected-rate", "0.5") == 0
    assert "the trajectory NLL scores one trajectory per track id" in capsys.readouterr().err
    with pytest.warns(UserWarning) as caught:
        res = nb.score(tracks.drop(columns="id"), truth, trajectory=TrajectoryOptions())
    messages = " ".join(str(w.message) for w in caught)
    assert "trajectory NLL scores one trajectory per track id" in messages and "identity measures" in messages
    assert res.summary()["trajectory_nll"] == "n/a" and res.metrics.trajectory is None
    row = pd.read_csv(tmp_path / "out.summary.csv", keep_default_na=False).iloc[0]
    assert row["trajectory_nll"] == "n/a" and "trajectory_nll" in row["not_applicable"].split()
    ds = read_metrics(tmp_path / "out.nc")
    assert "trajectory_nll" not in ds.variables and "trajectory_nll" in ds.attrs["not_applicable"]


def test_intractable_exact_value_is_flagged_not_guessed(tmp_path, monkeypatch):
    import nllbench.engine.trajectory as engine

    tracks, truth = _tables(tmp_path)
    monkeypatch.setattr(engine, "EXACT_WORK_LIMIT", 1)
    extra = ["--trajectory", "--undetected-trajectories", "0.5", "0.4", *FOV, "--exact", "--q", "1"]
    assert _score(tmp_path, *extra) == 0  # Q = 1 lists one association: the exact value needs the DP
    row = pd.read_csv(tmp_path / "out.summary.csv", keep_default_na=False).iloc[0]
    assert row["trajectory_nll_exact"] == "n/a" and math.isfinite(float(row["trajectory_nll"]))
    ds = read_metrics(tmp_path / "out.nc")
    assert "trajectory_nll_exact" not in ds.variables and "trajectory_exact_note" in ds.attrs


def test_batch_form_scores_every_seed(tmp_path):
    from nllbench.trackers.scoring import truth_from_scenario

    scen = tmp_path / "scenarios"
    args = ["simulate", "--scenario", "williams15", "--seeds", "1", "2", "--steps", "5"]
    assert main([*args, "--output-dir", str(scen)]) == 0
    tracks_dir = tmp_path / "tracks"
    tracks_dir.mkdir()
    rng = np.random.default_rng(0)
    for seed in (1, 2):
        truth, _ = truth_from_scenario(scen / f"seed{seed}.nc")
        noisy = truth.assign(x=truth.x + rng.normal(0, 1, len(truth)), r=0.9, var_x=1.0, var_y=1.0)
        noisy.assign(id=noisy["id"] + 100).to_csv(tracks_dir / f"seed{seed}.csv", index=False)
    out = tmp_path / "m"
    rc = main(
        ["score", "--tracks-dir", str(tracks_dir), "--scenario-dir", str(scen), "--output-dir", str(out)]
        + ["--q", "10", "--trajectory", "--unlisted-presence", "0.01", "--fov", "0", "0", "300", "300"]
    )
    assert rc == 0
    summary = pd.read_csv(out / "summary.csv")
    for seed in (1, 2):
        want = nb.trajectory_nll(
            tracks_dir / f"seed{seed}.csv",
            scen / f"seed{seed}.nc",
            q=10,
            fov=((0, 0), (300, 300)),
            unlisted_presence=0.01,
            frames=list(range(5)),
        )
        got = float(read_metrics(out / f"seed{seed}.nc")["trajectory_nll"].values)
        assert got == pytest.approx(want.value, rel=1e-12) and math.isfinite(got)
        assert summary.loc[summary["seed"] == seed, "trajectory_nll"].item() == pytest.approx(got, rel=1e-12)
