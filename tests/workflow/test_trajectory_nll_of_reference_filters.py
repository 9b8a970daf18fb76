"""The trajectory NLL of the reference filters' posteriors: metrics files, tables, report and figure."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from support import trajectory_bruteforce as bf

import nllbench as nb
from nllbench.cli import main
from nllbench.engine.densities import PMBM, PPP, MultiBernoulli
from nllbench.engine.gaussian_mixture import GaussianMixture
from nllbench.engine.trajectory import TRAJECTORY_TERMS
from nllbench.engine.transforms import temper_existence
from nllbench.measures.evaluate import EvaluationSettings
from nllbench.measures.likelihood.filter_trajectory_nll import (
    NOT_LABELLED,
    not_applicable_reason,
    posterior_trajectory_runs,
)
from nllbench.store import read_metrics, read_posterior, read_scenario

LOW, HIGH = np.array([-2.0, -2.0]), np.array([6.0, 6.0])
BOX = (tuple(LOW), tuple(HIGH))


def _mb(r, xy, var, labels):
    """A 4-d multi-Bernoulli (position xy, velocity 0) with position covariances ``var`` (k, 2, 2)."""
    k = len(r)
    means = np.zeros((k, 4))
    means[:, :2] = xy
    covs = np.tile(np.eye(4), (k, 1, 1))
    covs[:, :2, :2] = var
    return MultiBernoulli.gaussian(np.asarray(r, dtype=float), means, covs, np.asarray(labels))


def _ppp(weights, labels):
    k = len(weights)
    means = np.tile([2.0, 2.0, 0.0, 0.0], (k, 1))
    covs = np.tile(np.eye(4) * 4.0, (k, 1, 1))
    return PPP.from_mixture(GaussianMixture(np.asarray(weights, float), means, covs, np.asarray(labels)))


def _posteriors(with_ppp: bool = True):
    """Three steps, labels 1, 2, 3; step 1 has two global hypotheses that share label 1's Bernoulli."""
    a = np.array([[0.5, 0.1], [0.1, 0.4]])
    b = np.array([[0.8, -0.2], [-0.2, 0.6]])
    step0 = _mb([0.7], [[0.0, 0.0]], [a], [1])
    h1 = _mb([0.9, 0.6], [[0.2, 0.1], [3.0, 3.1]], [a, b], [1, 2])
    h2 = _mb([0.9, 0.3], [[0.2, 0.1], [2.5, 3.5]], [a, a], [1, 3])
    step2 = _mb([0.95, 0.8, 0.2], [[0.5, 0.3], [3.2, 3.0], [1.0, 4.0]], [a, b, b], [1, 2, 3])
    ppps = [_ppp([0.3, 0.2], [10, 11]), _ppp([0.25, 0.1], [10, 12]), _ppp([0.2], [12])]
    if not with_ppp:
        ppps = [None] * 3
    return [
        PMBM(ppps[0], (step0,), np.ones(1)),
        PMBM(ppps[1], (h1, h2), np.array([0.3, 0.7])),
        PMBM(ppps[2], (step2,), np.ones(1)),
    ]


TRUTH = [
    np.array([[0.1, 0.0, 0.0, 0.0]]),
    np.array([[0.3, 0.2, 0.0, 0.0], [2.9, 3.2, 0.0, 0.0]]),
    np.array([[0.6, 0.2, 0.0, 0.0], [3.1, 3.1, 0.0, 0.0], [5.0, -1.0, 0.0, 0.0]]),
]
IDS = [np.array([7]), np.array([7, 8]), np.array([7, 8, 9])]


def _table(posteriors, cov_scale=1.0):
    """The posteriors as the tidy table the trajectory NLL reads (position marginal)."""
    rows = []
    for k, d in enumerate(posteriors):
        for h, (mb, w) in enumerate(zip(d.hypotheses, d.weights, strict=True)):
            for i in range(len(mb)):
                P = cov_scale * mb.densities.covs[i]
                rows.append(
                    {
                        "frame": k,
                        "hypothesis": h,
                        "weight": float(w),
                        "id": int(mb.labels[i]),
                        "r": float(mb.r[i]),
                        "x": mb.means[i, 0],
                        "y": mb.means[i, 1],
                        "var_x": P[0, 0],
                        "var_y": P[1, 1],
                        "cov_x_y": P[0, 1],
                    }
                )
    return pd.DataFrame(rows)


def _truth_table():
    return pd.DataFrame(
        [
            {"frame": k, "id": int(i), "x": x[0], "y": x[1]}
            for k, (X, ids) in enumerate(zip(TRUTH, IDS, strict=True))
            for x, i in zip(X, ids, strict=True)
        ]
    )


def _expected_R(posteriors):
    """The PPP's mass over the (label, step) pairs without a Bernoulli, by hand."""
    mass = sum(float(d.ppp.weights.sum()) for d in posteriors)
    labels = {int(lab) for d in posteriors for mb in d.hypotheses for lab in mb.labels}
    unlisted = sum(
        1 for d in posteriors for lab in labels if not any(lab in mb.labels for mb in d.hypotheses)
    )
    return mass / unlisted


@pytest.mark.parametrize("cov_scale", [1.0, 2.0])
def test_reference_filter_value_equals_the_engine_and_brute_force(cov_scale):
    posts = _posteriors()
    R = _expected_R(posts)
    settings = [EvaluationSettings(qs=(1, 100), exact=True, cov_scale=cov_scale)]
    (run,) = posterior_trajectory_runs(posts, TRUTH, IDS, LOW, HIGH, settings)
    table, truth = _table(posts, cov_scale), _truth_table()
    want = nb.trajectory_nll(
        table, truth, q=100, exact=True, fov=BOX, unlisted_presence=R, mixture="marginal"
    )
    assert run.value == pytest.approx(want.value, rel=1e-12)
    assert run.exact == pytest.approx(want.exact, rel=1e-12)
    for t, v in want.terms.items():
        assert run.terms[t] == pytest.approx(v, rel=1e-12, abs=1e-12)
    brute = bf.trajectory_nll(table, truth, [0, 1, 2], box=BOX, R=R)
    assert run.exact == pytest.approx(brute, rel=1e-10)
    assert run.fill_ins["unlisted_presence"]["R"] == pytest.approx(R, rel=1e-15)
    assert run.fill_ins["undetected_trajectories"]["kind"] == "none (zero rate)"
    assert run.q == 100 and math.isfinite(run.value)


def test_expected_R_counts_the_unlisted_label_steps():
    # labels 1 (every step), 2 (steps 1, 2), 3 (steps 1, 2): two (label 2, 3 at step 0) unlisted pairs
    # and none later; with label 3 only in hypothesis 2 at step 1 it still has a row there
    posts = _posteriors()
    mass = 0.5 + 0.35 + 0.2
    assert _expected_R(posts) == pytest.approx(mass / 2)


def test_probes_and_q_of_each_settings():
    posts = _posteriors()
    R = _expected_R(posts)
    settings = [
        EvaluationSettings(qs=(1,)),
        EvaluationSettings(qs=(3,)),
        EvaluationSettings(qs=(1,), cov_scale=0.5),
        EvaluationSettings(qs=(2,), temper=2.0),
    ]
    runs = posterior_trajectory_runs(posts, TRUTH, IDS, LOW, HIGH, settings[:3])
    truth = _truth_table()
    for run, s in zip(runs, settings[:3], strict=True):
        want = nb.trajectory_nll(
            _table(posts, s.cov_scale), truth, q=s.qs[0], fov=BOX, unlisted_presence=R, mixture="marginal"
        )
        assert run.value == pytest.approx(want.value, rel=1e-12) and run.q == s.qs[0]
        assert run.exact is None
    (tempered,) = posterior_trajectory_runs(posts, TRUTH, IDS, LOW, HIGH, settings[3:])
    hot = [temper_existence(d, 2.0, 0.4) for d in posts]
    want = nb.trajectory_nll(_table(hot), truth, q=2, fov=BOX, unlisted_presence=R, mixture="marginal")
    assert tempered.value == pytest.approx(want.value, rel=1e-12)


def test_without_a_ppp_r_is_zero_and_a_late_label_cannot_explain_early_frames():
    posts = _posteriors(with_ppp=False)
    (run,) = posterior_trajectory_runs(posts, TRUTH, IDS, LOW, HIGH, [EvaluationSettings(qs=(10,))])
    assert run.fill_ins["unlisted_presence"]["R"] == 0.0
    assert "no Poisson part" in run.fill_ins["unlisted_presence"]["why"]
    want = nb.trajectory_nll(_table(posts), _truth_table(), q=10, fov=BOX, mixture="marginal")
    assert run.value == pytest.approx(want.value, rel=1e-12)
    # truth 9 appears at step 2 only and label 3 can take it; truth 8 (steps 1, 2) has labels 2 and 3
    assert math.isfinite(run.value)


def test_unlabelled_posteriors_are_not_applicable():
    phd = [PPP.gaussian([1.0], [[0, 0, 0, 0]], [np.eye(4)])] * 3
    assert posterior_trajectory_runs(phd, TRUTH, IDS, LOW, HIGH, [EvaluationSettings()]) == NOT_LABELLED
    unlabelled = [PMBM.pmb(None, MultiBernoulli.gaussian([0.5], [[0, 0, 0, 0]], [np.eye(4)]))] * 3
    assert "without track labels" in not_applicable_reason(unlabelled)
    twice = _mb([0.5, 0.5], [[0, 0], [1, 1]], [np.eye(2), np.eye(2)], [4, 4])
    with pytest.raises(ValueError, match="a label appears on two Bernoullis"):
        posterior_trajectory_runs([PMBM.pmb(None, twice)] * 3, TRUTH, IDS, LOW, HIGH, [EvaluationSettings()])


def test_full_state_has_no_box_and_no_unlisted_presence():
    posts = _posteriors()
    s = [EvaluationSettings(qs=(10,), marginal="full")]
    (run,) = posterior_trajectory_runs(posts, TRUTH, IDS, LOW, HIGH, s)
    assert run.fill_ins["unlisted_presence"]["R"] == 0.0 and run.fill_ins["marginal"] == "full"


# ---------------------------------------------------------------------------
# end to end: filter, evaluate, aggregate, leaderboard, figure
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("traj_study")
    for clutter in ("5", "10"):
        scen = tmp / f"sc{clutter}"
        rc = main(
            ["simulate", "--scenario", "williams15", "--seeds", "0", "1", "2", "--steps", "6"]
            + ["--clutter-rate", clutter, "--output-dir", str(scen)]
        )
        assert rc == 0
        for f in ("pmb", "pmbm", "phd"):
            post = tmp / f"post_{f}{clutter}"
            assert main(["filter", "--filter", f, "--input-dir", str(scen), "--output-dir", str(post)]) == 0
            out = tmp / "metrics" / f"{f}{clutter}"
            args = ["evaluate", "--posterior-dir", str(post), "--scenario-dir", str(scen)]
            assert main([*args, "--output-dir", str(out), "--q", "1", "10", "--exact"]) == 0
    assert (
        main(["aggregate", *map(str, sorted((tmp / "metrics").iterdir())), "--out-dir", str(tmp / "tables")])
        == 0
    )
    return tmp


@pytest.mark.slow  # the study fixture simulates, filters, evaluates and aggregates (~20 s)
def test_evaluate_stores_the_trajectory_nll_of_labelled_filters_only(study):
    scen = study / "sc5"
    ds = read_metrics(study / "metrics" / "pmb5" / "seed1.nc")
    post = read_posterior(study / "post_pmb5" / "seed1.nc")
    data = read_scenario(scen / "seed1.nc")
    s = EvaluationSettings(qs=(1, 10), exact=True)
    (run,) = posterior_trajectory_runs(
        post, data.truth, data.truth_ids, data.attrs["fov_low"], data.attrs["fov_high"], [s]
    )
    assert float(ds["trajectory_nll"].values) == run.value and int(ds["trajectory_nll_q"].values) == 10
    assert float(ds["trajectory_nll_exact"].values) == run.exact
    assert json.loads(ds.attrs["trajectory_fill_ins"])["unlisted_presence"]["R"] > 0
    summary = pd.read_csv(study / "metrics" / "pmb5" / "summary.csv")
    assert summary["trajectory_nll"].tolist()[1] == run.value
    phd = read_metrics(study / "metrics" / "phd5" / "seed1.nc")
    assert "trajectory_nll" not in phd.variables and phd.attrs["trajectory_nll"] == NOT_LABELLED
    phd_summary = pd.read_csv(study / "metrics" / "phd5" / "summary.csv", keep_default_na=False)
    assert set(phd_summary["trajectory_nll"]) == {"n/a"}


@pytest.mark.slow  # the study fixture simulates, filters, evaluates and aggregates (~20 s)
def test_tables_carry_the_trajectory_nll(study):
    tables = study / "tables"
    runs = pd.read_csv(tables / "runs.csv")
    traj = runs[runs["measure"] == "trajectory_nll"]
    assert set(traj["filter"]) == {"pmb", "pmbm"} and set(traj["q"]) == {10} and len(traj) == 12
    assert set(runs[runs["measure"] == "trajectory_nll_exact"]["q"]) == {0}
    assert {f"trajectory_nll_{t}" for t in TRAJECTORY_TERMS} <= set(runs["measure"])
    summary = pd.read_csv(tables / "summary.csv")
    pick = (
        (summary["measure"] == "trajectory_nll") & (summary["clutter"] == 5.0) & (summary["filter"] == "pmb")
    )
    row = summary[pick].iloc[0]
    values = traj[(traj["clutter"] == 5.0) & (traj["filter"] == "pmb")]["value"].to_numpy()
    assert row["n"] == 3 and row["mean"] == pytest.approx(values.mean(), rel=1e-12)
    ranking = pd.read_csv(tables / "ranking.csv")
    assert set(ranking[ranking["measure"] == "trajectory_nll"]["filter"]) == {"pmb", "pmbm"}
    paired = pd.read_csv(tables / "paired.csv")
    pairs = paired[paired["measure"] == "trajectory_nll"]
    assert set(zip(pairs["filter_a"], pairs["filter_b"], strict=True)) == {("pmb", "pmbm")}


@pytest.mark.slow  # the study fixture simulates, filters, evaluates and aggregates (~20 s)
def test_leaderboard_shows_n_a_for_phd(study):
    out = study / "board.html"
    assert main(["leaderboard", "--tables", str(study / "tables"), "-o", str(out)]) == 0
    page = out.read_text()
    assert "trajectory NLL mean<br>[95 % CI]" in page and "rank<br>traj. NLL" in page
    table = page[page.index("id=leaderboard") : page.index("</table>", page.index("id=leaderboard"))]
    rows = table.split("<tr>")[2:]
    phd = [r for r in rows if 'data-sort="phd"' in r]
    pmb = [r for r in rows if 'data-sort="pmb"' in r or 'data-sort="pmbm"' in r]
    assert len(phd) == 2 and all(r.count(">n/a</td>") == 2 for r in phd)
    assert len(pmb) == 4 and all(">n/a</td>" not in r for r in pmb)
    assert "<td class=l>trajectory NLL</td>" in page  # the paired comparisons


@pytest.mark.slow  # the study fixture simulates, filters, evaluates and aggregates (~20 s)
def test_trajectory_figure_is_drawn(study):
    out = study / "figures" / "trajectory.png"
    assert main(["plot", "trajectory", "--tables", str(study / "tables"), "-o", str(out)]) == 0
    assert out.exists() and out.with_suffix(".pdf").exists()
    from nllbench.pipeline.plots import fig_trajectory

    summary = pd.read_csv(study / "tables" / "summary.csv")
    fig = fig_trajectory(summary, 10)
    assert any("n/a (no track labels): phd" in ax.get_title() for ax in fig.axes)
    with pytest.raises(ValueError, match="trajectory_nll"):
        fig_trajectory(summary[summary["measure"] != "trajectory_nll"], 10)


def test_score_flags_and_checks_of_the_trajectory_keys():
    from nllbench.pipeline.config import check_trackers
    from nllbench.pipeline.workflow import score_flags

    config = {
        "sweep": {"seeds": 2},
        "trackers": {
            "t": {
                "command": "true",
                "state": ["x", "y"],
                "fov": [0, 0, 1, 1],
                "undetected_trajectories": [0.5, 0.3],
                "unlisted_presence": 0.1,
                "trajectory_mixture": "marginal",
            }
        },
    }
    flags = score_flags(config, "t")
    assert "--trajectory --undetected-trajectories 0.5 0.3 --unlisted-presence 0.1" in flags
    assert "--trajectory-mixture marginal" in flags
    fit = replace_entry(config, undetected_trajectories=None, fit_trajectory_on=5)
    flags = score_flags(fit, "t", {5: ("c/t.csv", "c/s.nc")})
    assert "--fit-trajectory-on c/t.csv c/s.nc" in flags
    assert "--trajectory" not in score_flags(replace_entry(config, trajectory=False, **NONE), "t")
    check_trackers(fit)
    with pytest.raises(ValueError, match="fit_trajectory_on: expected a calibration seed outside"):
        check_trackers(replace_entry(config, undetected_trajectories=None, fit_trajectory_on=1))
    with pytest.raises(ValueError, match="trajectory is false"):
        check_trackers(replace_entry(config, trajectory=False))
    with pytest.raises(ValueError, match="uniform on a box"):
        check_trackers(replace_entry(config, fov=None))
    with pytest.raises(ValueError, match="presence in \\(0, 1\\]"):
        check_trackers(replace_entry(config, undetected_trajectories=[1.0, 0.0]))


NONE = dict(undetected_trajectories=None, unlisted_presence=None, trajectory_mixture="refuse")


def replace_entry(config, **kw):
    entry = {**config["trackers"]["t"], **kw}
    entry = {k: v for k, v in entry.items() if v is not None}
    return {**config, "trackers": {"t": entry}}


def test_run_record_is_a_frozen_sum_of_windows():
    posts = _posteriors()
    (run,) = posterior_trajectory_runs(posts, TRUTH, IDS, LOW, HIGH, [EvaluationSettings(qs=(5,))])
    double = replace(run, windows=run.windows * 2)
    assert double.value == 2 * run.value and double.terms["localization"] == 2 * run.terms["localization"]
    assert len(double.per_trajectory()) == 2 * len(run.per_trajectory())
    assert double.summary()["trajectory_nll_windows"] == 2


def _runs_table():
    """A per-run table of three filters (the PHD without a trajectory NLL), two clutter rates, 3 seeds."""
    rng = np.random.default_rng(2)
    rows = []
    for f in ("phd", "pmb", "pmbm"):
        for clutter in (5.0, 10.0):
            for seed in range(3):
                base = dict(scenario="williams15", filter=f, clutter=clutter, pd=0.9, cov_scale=1.0)
                base.update(temper=1.0, marginal="position", seed=seed)
                values = {
                    ("nll", 10): rng.normal(12, 1),
                    ("idf1", 0): rng.uniform(),
                    ("hota", 0): rng.uniform(),
                }
                if f != "phd":
                    inf = f == "pmbm" and clutter == 10.0 and seed > 0  # median +inf: drawn at the edge
                    values[("trajectory_nll", 10)] = math.inf if inf else rng.normal(110, 5)
                rows += [{**base, "q": q, "measure": m, "value": v} for (m, q), v in values.items()]
    return pd.DataFrame(rows)


def test_trajectory_figure_marks_n_a_and_infinite_medians(tmp_path):
    from support.figures import assert_legends_clear_of_panels

    from nllbench.pipeline.plots import fig_trajectory, save
    from nllbench.pipeline.statistics import summarise

    summary = summarise(_runs_table())
    fig = fig_trajectory(summary, 10)
    assert len(fig.axes) == 4
    panel = fig.axes[0]
    assert "inf" in [t.get_text() for t in panel.texts]
    assert panel.get_title().endswith("\nn/a (no track labels): phd")  # above the frame, on no point
    assert all(ax.get_legend() is None for ax in fig.axes)
    (legend,) = fig.legends  # one, below the panels; it names what is infinite and where
    assert [t.get_text() for t in legend.get_texts()] == [
        "phd",
        "pmb",
        "pmbm (trajectory NLL inf in 2/3 seeds at clutter 10)",
    ]
    assert_legends_clear_of_panels(fig)
    assert save(fig, tmp_path / "trajectory.png")[0].stat().st_size > 1000


def test_trajectory_figure_legend_joins_both_nll_panels_notes_per_row():
    from support.figures import assert_legends_clear_of_panels

    from nllbench.pipeline.plots import fig_trajectory
    from nllbench.pipeline.statistics import summarise

    runs = _runs_table()
    runs.loc[(runs["filter"] == "pmb") & (runs["measure"] == "nll"), "value"] = math.inf  # every run
    fig = fig_trajectory(summarise(runs), 10)
    texts = [t.get_text() for t in fig.legends[0].get_texts()]
    assert texts == [
        "phd",
        "pmb (NLL inf in 3/3 seeds at every clutter rate)",
        "pmbm (trajectory NLL inf in 2/3 seeds at clutter 10)",
    ]
    other = runs.assign(pd=0.7)  # a second row: each note names its row
    other = other[~((other["filter"] == "pmbm") & (other["clutter"] == 10.0))]
    fig = fig_trajectory(summarise(pd.concat([runs, other], ignore_index=True)), 10)
    assert len(fig.axes) == 8 and len(fig.legends) == 1
    texts = [t.get_text() for t in fig.legends[0].get_texts()]
    assert texts == [
        "phd",
        "pmb (williams15, P_D 0.7: NLL inf in 3/3 seeds at every clutter rate;"
        " williams15, P_D 0.9: NLL inf in 3/3 seeds at every clutter rate)",
        "pmbm (williams15, P_D 0.9: trajectory NLL inf in 2/3 seeds at clutter 10)",
    ]
    assert_legends_clear_of_panels(fig)
