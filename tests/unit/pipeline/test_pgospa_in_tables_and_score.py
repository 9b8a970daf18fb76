"""P-GOSPA and PT-GOSPA in ``evaluate``, the metrics file, the tables and ``score`` (docs/pgospa.md)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import xarray as xr

import nllbench as nb
from nllbench.engine.transforms import marginal, scale_covariances
from nllbench.measures import declarations as d
from nllbench.measures.run.evaluate import EvaluationSettings, evaluate_runs
from nllbench.pipeline import collect
from nllbench.store import read_metrics, write_metrics
from nllbench.trackers.scoring import FillIns, score

ATTRS = {"seed": 0, "scenario": "s", "filter": "f"}


def _run(rng, steps=4):
    """A 4-D PMBM per step (2 or 3 hypotheses, labelled Bernoullis, a PPP) and a truth of 2 objects."""
    posts, truth, ids = [], [], []
    for k in range(steps):
        X = np.array([[1.0 + k, 2.0, 0.5, 0.0], [6.0, 1.0 + 0.5 * k, 0.0, 0.5]])
        if k == 2:
            X = X[:1]
        hyps = []
        for _ in range(2 + k % 2):
            m = int(rng.integers(1, 4))
            means = X[rng.integers(0, X.shape[0], m)] + rng.normal(0, 0.6, (m, 4))
            A = rng.normal(size=(m, 4, 4))
            covs = A @ A.transpose(0, 2, 1) * 0.2 + 0.1 * np.eye(4)
            labels = rng.choice([3, 7, 11, 20], m, replace=False)
            hyps.append(nb.MultiBernoulli.gaussian(rng.uniform(0.05, 1.0, m), means, covs, labels))
        w = rng.dirichlet(np.ones(len(hyps)))
        ppp = nb.PPP.gaussian([0.3], [[0.0, 0.0, 0.0, 0.0]], [np.eye(4)])
        posts.append(nb.PMBM(ppp, hyps, w))
        truth.append(X)
        ids.append(np.array([0, 1])[: X.shape[0]])
    return posts, truth, ids


def _direct(posts, truth, ids, s: float, settings: EvaluationSettings):
    """P-GOSPA per step and PT-GOSPA, computed directly with nb.pgospa / nb.ptgospa."""
    per_step, means, exist, covs, labels = [], [], [], [], []
    for dens, X in zip(posts, truth, strict=True):
        dm = scale_covariances(marginal(dens, (0, 1)), s)
        per_step.append(nb.pgospa(X[:, :2], dm, c=settings.cutoff, p=settings.p))
        best = dm.hypothesis(int(np.argmax(dm.weights)))
        means.append(best.means)
        exist.append(best.r)
        covs.append(best.densities.covs)
        labels.append(best.labels)
    pt = nb.ptgospa(
        [X[:, :2] for X in truth],
        ids,
        means,
        labels,
        c=settings.cutoff,
        p=settings.p,
        gamma=settings.tgospa_gamma,
        estimate_existence=exist,
        estimate_covariances=covs,
    )
    return per_step, pt


@pytest.mark.parametrize("p", [1.0, 2.0])
def test_metrics_file_values_equal_pgospa_and_ptgospa_of_the_same_densities(tmp_path, p):
    posts, truth, ids = _run(np.random.default_rng(int(p)))
    base = EvaluationSettings(qs=(1,), p=p, cutoff=3.0, proper_scores=False, tgospa_gamma=2.5)
    settings = [base, EvaluationSettings(qs=(1,), p=p, cutoff=3.0, proper_scores=False, tgospa_gamma=2.5,
                                         cov_scale=0.5)]  # fmt: skip
    runs = evaluate_runs(posts, truth, ids, [-10.0, -10.0], [10.0, 10.0], settings)
    for s, run in zip((1.0, 0.5), runs, strict=True):
        path = tmp_path / f"seed{s}.nc"
        write_metrics(run, path, ATTRS)
        ds = read_metrics(path)
        per_step, pt = _direct(posts, truth, ids, s, base)
        want = {
            "pgospa": [r.value for r in per_step],
            "pgospa_localization": [r.localization for r in per_step],
            "pgospa_existence_mismatch": [r.existence_mismatch for r in per_step],
            "pgospa_missed": [r.missed for r in per_step],
            "pgospa_false": [r.false for r in per_step],
            "ptgospa_localization": pt.frame_localization,
            "ptgospa_existence_mismatch": pt.frame_existence_mismatch,
            "ptgospa_missed": pt.frame_missed,
            "ptgospa_false": pt.frame_false,
            "ptgospa_switches": pt.frame_switches,
        }
        for name, values in want.items():
            np.testing.assert_allclose(ds[name].values, values, rtol=1e-13, atol=1e-13, err_msg=name)
        assert float(ds["pgospa_mean"]) == pytest.approx(np.mean(want["pgospa"]), rel=1e-13)
        assert float(ds["ptgospa"]) == pytest.approx(pt.value, rel=1e-13)
        assert int(ds["ptgospa_n_switches"]) == pt.n_switches
        assert int(ds["ptgospa_n_half_switches"]) == pt.n_half_switches
        # the terms sum as documented: per step to the weighted mean of value^p, over steps to ptgospa^p
        terms = sum(
            ds[f"pgospa_{t}"].values for t in ("localization", "existence_mismatch", "missed", "false")
        )
        np.testing.assert_allclose(terms, [r.power for r in per_step], rtol=1e-12)
        rows = {r["measure"]: r["value"] for r in collect.run_rows(ds, collect.run_labels(ds, path))}
        assert rows["pgospa_mean"] == float(ds["pgospa_mean"]) and rows["ptgospa"] == pt.value
        parts = sum(rows[f"ptgospa_{t}"] for t in ("localization", "existence_mismatch", "missed", "false",
                                                   "switches"))  # fmt: skip
        assert parts == pytest.approx(pt.value**p, rel=1e-12)
        summary = run.summary()
        assert summary["pgospa"] == float(ds["pgospa_mean"]) and summary["ptgospa"] == pt.value
    assert not np.allclose(runs[0].pgospa.value, runs[1].pgospa.value)  # the probe moves P-GOSPA


def test_a_phd_run_has_neither_and_older_files_still_read(tmp_path):
    truth = [np.array([[1.0, 2.0, 0.0, 0.0]]), np.array([[1.5, 2.5, 0.0, 0.0]])]
    phd = [nb.PPP.gaussian([0.9], x + 0.1, [np.eye(4)]) for x in truth]
    ids = [np.array([0]), np.array([0])]
    run = evaluate_runs(phd, truth, ids, [0.0, 0.0], [10.0, 10.0], [EvaluationSettings(qs=(1,))])[0]
    assert run.pgospa is None and run.ptgospa is None
    write_metrics(run, tmp_path / "phd.nc", ATTRS)
    ds = read_metrics(tmp_path / "phd.nc")
    new = set(d.PGOSPA.names()) | set(d.PTGOSPA.names())
    assert not new & set(ds.variables)  # absent, never NaN
    assert "pgospa" not in run.summary() and "ptgospa" not in run.summary()
    # a file of a multi-Bernoulli run written before P-GOSPA existed reads and tabulates
    mb = [nb.MultiBernoulli.gaussian([0.9], x + 0.1, np.eye(4)[None]) for x in truth]
    run = evaluate_runs(mb, truth, ids, [0.0, 0.0], [10.0, 10.0], [EvaluationSettings(qs=(1,))])[0]
    full, old = tmp_path / "seed0.nc", tmp_path / "seed1.nc"
    write_metrics(run, full, ATTRS)
    with xr.open_dataset(full, decode_cf=False) as raw:
        raw.load().drop_vars(sorted(new)).to_netcdf(old, engine="scipy", format="NETCDF3_64BIT")
    ds = read_metrics(old)
    base = collect.run_labels(ds, old)
    assert not {r["measure"] for r in collect.run_rows(ds, base)} & new
    assert {r[1] for r in collect.step_records(ds, base)} & new == set()
    assert {"pgospa_mean", "ptgospa"} <= {r["measure"] for r in collect.run_rows(read_metrics(full), base)}


def _tables(with_ids: bool):
    tracks = pd.DataFrame(
        {
            "frame": [0, 0, 1, 1, 2],
            "id": [1, 2, 1, 2, 1],
            "r": [0.9, 0.3, 0.8, 0.6, 0.7],
            "x": [1.2, 8.0, 2.1, 7.5, 3.3],
            "y": [1.0, 8.0, 1.1, 8.2, 0.8],
            "var_x": [0.5, 1.0, 0.4, 0.9, 0.6],
            "var_y": [0.5, 1.0, 0.4, 0.9, 0.6],
        }
    )
    truth = pd.DataFrame({"frame": [0, 1, 2], "id": [5, 5, 5], "x": [1.0, 2.0, 3.0], "y": [1.0, 1.0, 1.0]})
    return (tracks if with_ids else tracks.drop(columns="id")), truth


def test_score_reports_pgospa_per_frame_and_ptgospa_over_the_run():
    tracks, truth = _tables(True)
    settings = EvaluationSettings(qs=(1,), proper_scores=False)
    res = score(tracks, truth, fill=FillIns(0.1, (0.0, 0.0), (10.0, 10.0)), settings=settings)
    rows = [tracks[tracks.frame == f] for f in range(3)]
    covs = [np.array([np.diag(v) for v in t[["var_x", "var_y"]].to_numpy()]) for t in rows]
    want = [
        nb.pgospa(
            truth[truth.frame == f][["x", "y"]].to_numpy(),
            nb.MultiBernoulli.gaussian(t.r, t[["x", "y"]].to_numpy(), covs[f]),
        ).value
        for f, t in enumerate(rows)
    ]
    np.testing.assert_allclose(res.metrics.pgospa.value, want, rtol=1e-13)
    pt = nb.ptgospa(
        [truth[truth.frame == f][["x", "y"]].to_numpy() for f in range(3)],
        [truth[truth.frame == f]["id"].to_numpy() for f in range(3)],
        [t[["x", "y"]].to_numpy() for t in rows],
        [t["id"].to_numpy() for t in rows],
        c=2.0,
        estimate_existence=[t.r.to_numpy() for t in rows],
        estimate_covariances=covs,
    )
    summary = res.summary()
    assert summary["pgospa"] == pytest.approx(np.mean(want), rel=1e-13)
    assert summary["ptgospa"] == pytest.approx(pt.value, rel=1e-13)
    np.testing.assert_allclose(res.per_frame()["pgospa"], want, rtol=1e-13)
    # without track ids PT-GOSPA is an identity measure: n/a, like T-GOSPA; P-GOSPA is not
    tracks, truth = _tables(False)
    with pytest.warns(UserWarning, match="no column 'id'"):
        res = score(tracks, truth, fill=FillIns(0.1, (0.0, 0.0), (10.0, 10.0)), settings=settings)
    summary = res.summary()
    assert summary["ptgospa"] == "n/a" and summary["tgospa"] == "n/a"
    assert summary["pgospa"] == pytest.approx(np.mean(want), rel=1e-13)


def test_declared_lower_is_better_ranked_in_the_leaderboard_and_optional():
    from nllbench.pipeline import report, statistics
    from nllbench.pipeline.plots import style
    from nllbench.trackers import checks

    for m in (d.PGOSPA, d.PTGOSPA):
        assert not m.required and m.posteriors == {"pmbm"}
    assert statistics.BETTER_LOW["pgospa_mean"] and statistics.BETTER_LOW["ptgospa"]
    assert report.LABEL["pgospa_mean"] == "P-GOSPA" and "pgospa_mean" in statistics.RANKED
    assert style.MEASURE_LABEL["ptgospa"] == "PT-GOSPA"
    assert {"ptgospa", "ptgospa_switches"} <= set(checks.IDENTITY_MEASURES)
    assert "pgospa_mean" not in checks.IDENTITY_MEASURES


def test_rank_agreement_compares_each_pair_on_the_filters_both_have():
    """P-GOSPA has no PHD row: the other measures' agreement must not be lost with it."""
    from nllbench.pipeline.statistics import rank_agreement

    rows = []
    for f, (nll, gospa, pg) in {
        "phd": (3.0, 1.0, None),
        "pmb": (2.0, 3.0, 1.0),
        "pmbm": (1.0, 2.0, 2.0),
    }.items():
        for m, v in (("nll", nll), ("gospa_mean", gospa), ("pgospa_mean", pg)):
            if v is not None:
                rows.append({"scenario": "s", "clutter": 5.0, "pd": 0.9, "cov_scale": 1.0, "temper": 1.0,
                             "marginal": "position", "filter": f, "measure": m, "q": 1 if m == "nll" else 0,
                             "mean": v, "finite_mean": v, "n_infinite": 0})  # fmt: skip
    measures, mat = rank_agreement(pd.DataFrame(rows), 1, ["nll", "gospa_mean", "pgospa_mean"])
    assert measures == ["nll", "gospa_mean", "pgospa_mean"]
    assert mat[0, 1] == pytest.approx(-1 / 3) and mat[0, 0] == 1.0
    assert np.isnan(mat[2]).all() and np.isnan(mat[:, 2]).all()  # two filters only: no tau


def test_leaderboard_has_a_pgospa_column_and_rank_aligned_with_its_headings(tmp_path):
    import json
    import re

    from nllbench.pipeline.report import write_leaderboard
    from nllbench.pipeline.statistics import paired, ranking, summarise

    rng = np.random.default_rng(0)
    rows = []
    base = {
        "scenario": "s",
        "clutter": 10.0,
        "pd": 0.9,
        "temper": 1.0,
        "marginal": "position",
        "cov_scale": 1.0,
    }
    for f, seed in ((f, seed) for f in ("phd", "pmb", "pmbm") for seed in range(4)):
        row = {**base, "filter": f, "seed": seed}
        rows += [
            {**row, "q": 1, "measure": "nll", "value": 5.0 + rng.normal()},
            {**row, "q": 0, "measure": "gospa_mean", "value": 2.0 + rng.normal()},
            {**row, "q": 0, "measure": "mota", "value": 0.5},
        ]
        if f != "phd":  # P-GOSPA: multi-Bernoulli filters only
            rows.append(
                {**row, "q": 0, "measure": "pgospa_mean", "value": 3.0 + (f == "pmb") + rng.normal(0, 0.1)}
            )
    r = pd.DataFrame(rows)
    summary, pairs = summarise(r), paired(r)
    summary.to_csv(tmp_path / "summary.csv", index=False)
    pairs.to_csv(tmp_path / "paired.csv", index=False)
    ranking(pairs).to_csv(tmp_path / "ranking.csv", index=False)
    (tmp_path / "provenance.json").write_text(json.dumps({"config": {"sweep": {"seeds": 4}}}))
    page = write_leaderboard(tmp_path, [], tmp_path / "page.html").read_text()
    table = page[page.index("id=leaderboard") :]
    table = table[: table.index("</table>")]
    head = re.findall(r"<th[^>]*>(.*?)</th>", table[: table.index("</thead>")])
    assert "P-GOSPA mean<br>[95 % CI]" in head and head[-1] == "rank<br>P-GOSPA"
    body = table[table.index("<tbody>") :].split("<tr>")[1:]
    assert len(body) == 3 and all(len(re.findall(r"<td", b)) == len(head) for b in body)
    cells = {
        f: re.findall(r"<td[^>]*>(.*?)</td>", b) for f, b in zip(("phd", "pmb", "pmbm"), body, strict=True)
    }
    col = head.index("P-GOSPA mean<br>[95 % CI]")
    assert cells["phd"][col] == "n/a" and "<span class=ci>" in cells["pmbm"][col]
    assert cells["pmbm"][-1] == "1" and cells["pmb"][-1] == "2" and cells["phd"][-1] == "–"
