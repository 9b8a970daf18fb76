"""``nllbench score`` from the command line: the metrics file aggregate reads, Stone Soup output,
batches beside a reference filter."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import nllbench as nb
from nllbench.cli import main
from nllbench.measures.evaluate import EvaluationSettings
from nllbench.store import read_metrics
from nllbench.trackers.scoring import (
    FillIns,
    ScoreCalibration,
    score,
)


def test_cli_writes_evaluate_metrics_format_and_aggregate_reads_it(tmp_path, capsys):
    sc = tmp_path / "sc.nc"
    assert main(["simulate", "--scenario", "williams15", "--seed", "3", "--steps", "6", "-o", str(sc)]) == 0
    from nllbench.store import read_scenario

    data = read_scenario(sc)
    truth = pd.DataFrame(
        [
            {"frame": k, "id": int(i), "x": x[0], "y": x[1]}
            for k, (X, ids) in enumerate(zip(data.truth, data.truth_ids, strict=True))
            for x, i in zip(X, ids, strict=True)
        ]
    )
    tracks = truth.assign(r=0.8, x=truth.x + 0.3, var_x=1.0, var_y=1.0).drop(columns="id")
    truth.to_csv(tmp_path / "truth.csv", index=False)
    tracks.to_parquet(tmp_path / "tracks.parquet", index=False)
    out = tmp_path / "ext" / "seed3.nc"
    out.parent.mkdir()
    rc = main(
        [
            "score",
            str(tmp_path / "tracks.parquet"),
            str(tmp_path / "truth.csv"),
            "-o",
            str(out),
            "--per-frame",
            str(tmp_path / "pf.csv"),
            "--undetected-rate",
            "0.1",
            "--fov",
            "0",
            "0",
            "300",
            "300",
            "--tracker",
            "mine",
            "--scenario-file",
            str(sc),
            "--q",
            "1",
            "10",
        ]
    )
    assert rc == 0
    assert "fill-in undetected" in capsys.readouterr().out
    ds = read_metrics(out)
    assert ds.attrs["filter"] == "mine" and int(ds.attrs["seed"]) == 3
    pf = pd.read_csv(tmp_path / "pf.csv")
    assert {"frame", "nll", "nll_lower", "gospa", "ospa"} <= set(pf.columns)
    np.testing.assert_allclose(pf["nll"], ds["nll_value"].values[:, -1])
    assert main(["aggregate", str(out.parent), "--out-dir", str(tmp_path / "tables")]) == 0
    runs = pd.read_csv(tmp_path / "tables" / "runs.csv")
    assert set(runs["filter"]) == {"mine"} and "nll" in set(runs["measure"])
    rc = main(
        [
            "score",
            str(tmp_path / "tracks.parquet"),
            str(tmp_path / "truth.csv"),
            "-o",
            str(out),
            "--undetected-rate",
            "0.1",
        ]
    )
    assert rc == 2 and "--fov" in capsys.readouterr().err


def test_stonesoup_tracker_output(tmp_path):
    pytest.importorskip("stonesoup")
    from nllbench.store import read_scenario
    from nllbench.trackers.adapters import tracks_from_stonesoup
    from nllbench.trackers.stonesoup_tracker import run_gmphd, truth_table

    sc = tmp_path / "sc.nc"
    assert main(["simulate", "--scenario", "williams15", "--seed", "1", "--steps", "12", "-o", str(sc)]) == 0
    data = read_scenario(sc)
    tracks, stamps = run_gmphd(data)
    assert tracks, "the GM-PHD tracker should hold tracks on this scene"
    df = tracks_from_stonesoup(tracks, stamps, mapping=(0, 1))
    assert len(df) == sum(len(t.states) for t in tracks)
    first = sorted(tracks, key=lambda t: str(t.id))[0].states[0]
    row = df[(df.id == 0) & (df.frame == stamps.index(first.timestamp))].iloc[0]
    assert row.x == pytest.approx(float(first.state_vector[0])) and row.score == pytest.approx(
        float(first.weight)
    )
    assert row.cov_x_y == pytest.approx(float(first.covar[0, 1]))
    truth = truth_table(data)
    cal = ScoreCalibration(-2.0, 6.0)
    res = score(
        df,
        truth,
        frames=list(range(data.steps)),
        fill=FillIns(0.3, (0, 0), (300, 300), calibration=cal),
        settings=EvaluationSettings(qs=(5,)),
    )
    k = int(df.frame.iloc[0])
    t = df[df.frame == k]
    covs = np.stack([[[a, c], [c, b]] for a, b, c in zip(t.var_x, t.var_y, t.cov_x_y, strict=True)])
    mb = nb.MultiBernoulli.gaussian(cal(t.score.to_numpy()), t[["x", "y"]], covs)
    expected = nb.nll(
        nb.PMBM(nb.PPP.uniform(0.3, (0, 0), (300, 300)), (mb,), [1.0]), data.truth[k][:, :2], q=5
    )
    assert res.metrics.nll["value"][k, 0] == pytest.approx(expected.value, rel=1e-12)


def test_batch_scores_scenario_truth_next_to_a_reference_filter(tmp_path, capsys):
    scen = tmp_path / "scenarios"
    assert (
        main(
            [
                "simulate",
                "--scenario",
                "williams15",
                "--seeds",
                "1",
                "2",
                "--steps",
                "8",
                "--output-dir",
                str(scen),
            ]
        )
        == 0
    )
    assert (
        main(["filter", "--filter", "pmb", "--input-dir", str(scen), "--output-dir", str(tmp_path / "post")])
        == 0
    )
    assert (
        main(
            [
                "evaluate",
                "--posterior-dir",
                str(tmp_path / "post"),
                "--scenario-dir",
                str(scen),
                "--output-dir",
                str(tmp_path / "m_pmb"),
                "--q",
                "1",
                "10",
            ]
        )
        == 0
    )
    from nllbench.store import read_scenario
    from nllbench.trackers.scoring import truth_from_scenario

    tracks_dir = tmp_path / "tracks"
    tracks_dir.mkdir()
    for seed in (1, 2):
        truth, steps = truth_from_scenario(scen / f"seed{seed}.nc")
        assert steps == 8 and len(truth) == sum(len(x) for x in read_scenario(scen / f"seed{seed}.nc").truth)
        truth = truth[truth.frame != 3]  # frame 3 has no track: it must still be scored (an empty set)
        truth.drop(columns="id").assign(r=0.9, var_x=1.0, var_y=1.0).to_csv(
            tracks_dir / f"seed{seed}.csv", index=False
        )
    rc = main(
        [
            "score",
            "--tracks-dir",
            str(tracks_dir),
            "--scenario-dir",
            str(scen),
            "--output-dir",
            str(tmp_path / "m_ext"),
            "--fit-undetected-on",
            str(tracks_dir / "seed1.csv"),
            str(scen / "seed1.nc"),
            "--fov",
            "0",
            "0",
            "300",
            "300",
            "--tracker",
            "mytracker",
            "--q",
            "1",
            "10",
            "--timing",
            str(tmp_path / "timing.csv"),
        ]
    )
    assert rc == 0
    timing = pd.read_csv(tmp_path / "timing.csv")
    assert timing["item"].tolist() == ["seed1", "seed2"] and (timing["seconds"] > 0).all()
    ext = read_metrics(tmp_path / "m_ext" / "seed2.nc")
    ref = read_metrics(tmp_path / "m_pmb" / "seed2.nc")
    assert ext.sizes["step"] == ref.sizes["step"] == 8
    assert ext["n_truth"].values.tolist() == ref["n_truth"].values.tolist()
    assert ext["n_estimates"].values[3] == 0
    fitted = json.loads(ext.attrs["fill_ins"])["undetected"]["fitted"]
    assert fitted["tracks"] == str(tracks_dir / "seed1.csv")  # the calibration files, by path
    assert fitted["truth"] == str(scen / "seed1.nc")
    assert (
        main(
            ["aggregate", str(tmp_path / "m_pmb"), str(tmp_path / "m_ext"), "--out-dir", str(tmp_path / "t")]
        )
        == 0
    )
    summary = pd.read_csv(tmp_path / "t" / "summary.csv")
    assert set(summary["filter"]) == {"pmb", "mytracker"}
    assert set(summary[summary["filter"] == "mytracker"]["scenario"]) == {"williams15"}
    both = summary[summary.measure == "nll"].groupby("q")["filter"].nunique()
    assert both.tolist() == [2, 2]
    with pytest.warns(UserWarning, match="no column 'id'"):
        res = score(
            tracks_dir / "seed2.csv", scen / "seed2.nc", fill=FillIns(), settings=EvaluationSettings(qs=(1,))
        )
    assert res.fill_ins["theorem1_fov"] == {"low": [0.0, 0.0], "high": [300.0, 300.0]}  # the scenario's
    assert res.frames.tolist() == list(range(8))
    rc = main(["score", "--tracks-dir", str(tracks_dir), "-o", str(tmp_path / "x.nc")])
    assert rc == 2 and "not both" in capsys.readouterr().err


def test_frames_union_with_a_scenario_truth_keeps_every_step(tmp_path):
    """--frames union against a scenario file: every step is a frame (step k stays frame k), also a step
    with neither truth nor tracks; before, such a step was dropped and the later frames moved up."""
    scen = tmp_path / "scenarios"
    args = ["simulate", "--scenario", "williams15", "--seeds", "1", "--steps", "6", "--output-dir", str(scen)]
    assert main(args) == 0
    import xarray as xr

    from nllbench.trackers.scoring import score_file, truth_from_scenario

    # step 3 without any true object (its truth rows removed): no row of either table names frame 3
    ds = xr.load_dataset(scen / "seed1.nc")
    counts = ds["truth_count"].values
    start, n = int(counts[:3].sum()), int(counts[3])
    keep = np.r_[0:start, start + n : int(counts.sum())]
    gap = ds.isel(truth=keep).assign(truth_count=("step", np.r_[counts[:3], 0, counts[4:]]))
    gap.to_netcdf(tmp_path / "gap.nc")
    truth, steps = truth_from_scenario(tmp_path / "gap.nc")
    assert 3 not in set(truth.frame) and steps == 6
    tracks = truth[truth.frame.isin([0, 1, 2])].assign(r=0.9, var_x=1.0, var_y=1.0)
    fill = nb.FillIns(0.0, (0.0, 0.0), (300.0, 300.0))
    _, union = score_file(tracks, tmp_path / "gap.nc", tmp_path / "u.nc", frames="union", fill=fill)
    _, default = score_file(tracks, tmp_path / "gap.nc", tmp_path / "d.nc", fill=fill)
    assert union.frames.tolist() == default.frames.tolist() == list(range(steps))
    assert np.array_equal(union.metrics.nll["value"], default.metrics.nll["value"])
