"""The proper scores beside the NLL in evaluate, score, the metrics file and the aggregate tables."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import numpy as np
import pytest

import nllbench as nb
from nllbench.engine.transforms import POSITION, marginal, scale_covariances, temper_existence
from nllbench.filters import run_filter
from nllbench.measures.evaluate import (
    EvaluationSettings,
    evaluate_run,
    evaluate_runs,
    evaluation_grid,
    grid_settings,
)
from nllbench.measures.names import METRICS_VARIABLES, PROPER_RUN, PROPER_SCORES, PROPER_STEP
from nllbench.pipeline.aggregate import collect_all
from nllbench.pipeline.statistics import BETTER_LOW, paired, ranking, summarise
from nllbench.simulation.scenarios import get_scenario, simulate
from nllbench.store import read_metrics, write_metrics


@pytest.fixture(scope="module")
def runs():
    """A short Williams run and the posteriors of three families: PPP (PHD), IIDCluster (CPHD), PMBM."""
    sc = get_scenario("williams15", steps=8, clutter_rate=10)
    sim = simulate(sc, np.random.default_rng(3))
    posts = {
        f: run_filter(f, sim.measurements, sc.model, max_cardinality=30) for f in ("phd", "cphd", "pmbm")
    }
    return sc, sim, posts


def _direct(posts, truth, settings: EvaluationSettings, seed: int):
    """The three scores of each step by direct calls on the density the NLL sees (same seed per step)."""
    out = {name: [] for name in ("energy", "energy_se", "intensity", "rps")}
    for k, (density, X) in enumerate(zip(posts, truth, strict=True)):
        X = np.asarray(X, dtype=float).reshape(-1, density.dim)
        if settings.temper != 1.0:
            density = temper_existence(density, settings.temper, settings.existence_threshold)
        if settings.marginal == "position":
            density, X = marginal(density, POSITION), X[:, list(POSITION)]
        if settings.cov_scale != 1.0:
            density = scale_covariances(density, settings.cov_scale)
        s = settings.kernel_variance
        es = nb.energy_score(
            density, X, s, n_samples=settings.energy_samples, seed=np.random.default_rng([seed, k])
        )
        out["energy"].append(es.value)
        out["energy_se"].append(es.standard_error)
        out["intensity"].append(nb.intensity_score(density, X, s).value)
        out["rps"].append(nb.cardinality_rps(density, X.shape[0]))
    return {k: np.array(v) for k, v in out.items()}


@pytest.mark.parametrize("family", ["phd", "cphd", "pmbm"])
@pytest.mark.parametrize(
    "kw",
    [
        {},
        {"cov_scale": 2.0, "temper": 0.5, "energy_samples": 50},
        {"marginal": "full", "kernel_cov": 4.0, "energy_samples": 30},
    ],
)
def test_evaluate_gives_the_direct_calls_values_bit_for_bit(runs, family, kw):
    sc, sim, posts = runs
    settings = EvaluationSettings(qs=(1,), **kw)
    m = evaluate_run(
        posts[family], sim.truth, sim.truth_ids, sc.model.fov_low, sc.model.fov_high, settings, seed=11
    )
    want = _direct(posts[family], sim.truth, settings, 11)
    p = m.proper
    np.testing.assert_array_equal(p.energy, want["energy"])
    np.testing.assert_array_equal(p.energy_se, want["energy_se"])
    np.testing.assert_array_equal(p.intensity, want["intensity"])
    np.testing.assert_array_equal(p.rps, want["rps"])
    assert (
        p.kernel_cov == settings.kernel_variance and p.n_samples == settings.energy_samples and p.seed == 11
    )
    row = m.summary()
    assert row["energy_score_mean"] == pytest.approx(want["energy"].mean())
    assert row["energy_score_mean_se"] == pytest.approx(math.sqrt(np.sum(want["energy_se"] ** 2)) / 8)
    assert row["intensity_score_mean"] == pytest.approx(want["intensity"].mean())
    assert row["cardinality_rps_mean"] == pytest.approx(want["rps"].mean())


def test_default_kernel_is_half_the_gospa_cutoff_and_bad_settings_are_refused():
    assert EvaluationSettings().kernel_variance == 1.0  # c = 2: kernel std 1
    assert EvaluationSettings(cutoff=10.0).kernel_variance == 25.0
    assert EvaluationSettings(cutoff=10.0, kernel_cov=2.0).kernel_variance == 2.0
    for bad in (0.0, -1.0, math.inf, math.nan, True, "1"):
        with pytest.raises(ValueError, match="kernel_cov"):
            EvaluationSettings(kernel_cov=bad)
    for bad in (1, 10_001, 2.5, True):
        with pytest.raises(ValueError, match="energy_samples"):
            EvaluationSettings(energy_samples=bad)


def test_seed_reproduces_and_changes_the_samples_only(runs):
    sc, sim, posts = runs
    args = (posts["pmbm"], sim.truth, sim.truth_ids, sc.model.fov_low, sc.model.fov_high)
    a = evaluate_run(*args, seed=4).proper
    b = evaluate_run(*args, seed=4).proper
    c = evaluate_run(*args, seed=5).proper
    np.testing.assert_array_equal(a.energy, b.energy)
    assert not np.array_equal(a.energy, c.energy)
    np.testing.assert_array_equal(a.intensity, c.intensity)
    np.testing.assert_array_equal(a.rps, c.rps)
    for bad in (-1, 1.5, None):
        with pytest.raises(ValueError, match="seed"):
            evaluate_run(*args, seed=bad)
    off = evaluate_run(*args, EvaluationSettings(proper_scores=False))
    assert off.proper is None and "energy_score_mean" not in off.summary()


def test_the_grid_computes_them_once_in_the_first_cell_at_scale_one_as_alone(runs):
    sc, sim, posts = runs
    args = (posts["pmbm"], sim.truth, sim.truth_ids, sc.model.fov_low, sc.model.fov_high)
    grid = grid_settings(EvaluationSettings(), evaluation_grid((1, 3), (0.5, 1.0), 3))
    assert [(s.qs[0], s.cov_scale, s.proper_scores) for s in grid] == [
        (1, 1.0, True),
        (3, 0.5, False),
        (3, 1.0, False),
    ]
    together = evaluate_runs(*args, grid, None, 2)
    assert [m.proper is not None for m in together] == [True, False, False]
    alone = evaluate_run(*args, grid[0], seed=2).proper
    for name in ("energy", "energy_se", "intensity", "rps"):
        np.testing.assert_array_equal(getattr(together[0].proper, name), getattr(alone, name))
    # asked at a probe scale too: computed there, on the scaled covariances
    probe = [replace(s, proper_scores=True) for s in grid]
    scaled = evaluate_runs(*args, probe, None, 2)
    assert not np.array_equal(scaled[1].proper.intensity, scaled[2].proper.intensity)
    np.testing.assert_array_equal(scaled[1].proper.rps, scaled[2].proper.rps)  # cardinality unchanged


# ---------------------------------------------------------------------------
# MBM01: the NLL is infinite, the scores are finite, in the file and the tables
# ---------------------------------------------------------------------------


def _mbm01_run():
    """Three steps of an MBM01 (r in {0, 1}); at step 1 the truth has an object no hypothesis holds."""
    g = np.tile(np.diag([1.0, 1.0, 0.1, 0.1]), (2, 1, 1))
    means = [[0.0, 0.0, 1.0, 0.0], [10.0, 0.0, 0.0, 1.0]]
    mbm = nb.MBM(
        [nb.MultiBernoulli.gaussian([1.0, 0.0], means, g), nb.MultiBernoulli.gaussian([1.0, 1.0], means, g)],
        [0.4, 0.6],
    )
    assert mbm.family == "MBM01"
    truth = [
        np.array([[0.1, 0.0, 1.0, 0.0], [10.0, 0.2, 0.0, 1.0]]),
        np.array([[0.1, 0.0, 1.0, 0.0], [10.0, 0.2, 0.0, 1.0], [30.0, 30.0, 0.0, 0.0]]),
        np.array([[0.0, 0.3, 1.0, 0.0]]),
    ]
    ids = [np.arange(2), np.arange(3), np.arange(1)]
    return [mbm] * 3, truth, ids


def _write(metrics, path, filter_name="mbm01", seed=0):
    attrs = dict(scenario="hand", seed=seed, filter=filter_name, clutter_rate=0.0, p_detection=1.0)
    write_metrics(metrics, path, attrs)


def test_an_mbm01_with_infinite_nll_gets_finite_scores_in_the_file_and_the_summary(tmp_path):
    posts, truth, ids = _mbm01_run()
    m = evaluate_run(posts, truth, ids, [-50, -50], [50, 50], EvaluationSettings(qs=(1, 5)), seed=0)
    row = m.summary()
    assert row["nll_q5"] == math.inf and row["nll_infinite_steps_q5"] == 1
    for name in ("energy_score_mean", "energy_score_mean_se", "intensity_score_mean", "cardinality_rps_mean"):
        assert math.isfinite(row[name]) and row[name] > 0, name
    # the step the MBM01 cannot explain scores worst by the energy score, beyond its Monte Carlo error
    es, se = m.proper.energy, m.proper.energy_se
    assert es[1] - max(es[0], es[2]) > 5 * math.hypot(se[1], max(se[0], se[2]))
    d = tmp_path / "mbm01"
    d.mkdir()
    _write(m, d / "seed0.nc")
    ds = read_metrics(d / "seed0.nc")
    assert np.isinf(ds["nll_value"].values[1]).all()
    for name in PROPER_STEP:
        assert ds[name].dims == ("step",) and np.isfinite(ds[name].values).all(), name
        assert ds[name].attrs["long_name"] == METRICS_VARIABLES[name].long_name
    np.testing.assert_array_equal(ds["energy_score"].values, m.proper.energy)
    for name in PROPER_RUN:
        assert float(ds[name].values) == row[name], name
    recorded = json.loads(ds.attrs["proper_scores"])
    assert recorded["kernel_cov"] == 1.0 and recorded["energy_samples"] == 100 and recorded["seed"] == 0
    assert recorded["intensity_unavailable"] == ""
    # the aggregate: the NLL infinite in the run, the scores finite
    collected = collect_all([d])
    summary = summarise(collected.runs)
    nll = summary[(summary["measure"] == "nll") & (summary["q"] == 5)].iloc[0]
    assert nll["n_infinite"] == 1 and nll["mean"] == math.inf
    for name in PROPER_SCORES:
        s = summary[summary["measure"] == name].iloc[0]
        assert s["n_infinite"] == 0 and math.isfinite(s["mean"]) and s["mean"] == row[name], name
    cube = collected.steps
    assert cube["energy_score"].attrs["ancillary_variables"] == "proper_present"
    assert cube["intensity_score"].attrs["ancillary_variables"] == "intensity_present"
    assert "q" not in cube["energy_score"].dims
    np.testing.assert_array_equal(cube["energy_score"].values.ravel(), m.proper.energy)


def test_paired_and_ranked_lower_is_better_and_a_run_without_them_is_no_error(tmp_path):
    posts, truth, ids = _mbm01_run()
    lo, hi = [-50, -50], [50, 50]
    good = [
        nb.MultiBernoulli.gaussian(np.ones(len(X)), X, np.tile(np.diag([1.0, 1.0, 0.1, 0.1]), (len(X), 1, 1)))
        for X in truth
    ]
    for seed in range(4):
        for name, dens in (("mbm01", posts), ("truthful", good)):
            d = tmp_path / name
            d.mkdir(exist_ok=True)
            m = evaluate_run(dens, truth, ids, lo, hi, EvaluationSettings(qs=(1,)), seed=seed)
            _write(m, d / f"seed{seed}.nc", name, seed)
    d = tmp_path / "without"  # a filter evaluated without the proper scores: no rows, no cube cells
    d.mkdir()
    m = evaluate_run(good, truth, ids, lo, hi, EvaluationSettings(qs=(1,), proper_scores=False), seed=0)
    _write(m, d / "seed0.nc", "without", 0)
    collected = collect_all([tmp_path / "mbm01", tmp_path / "truthful", d])
    runs = collected.runs
    assert set(runs[runs["filter"] == "without"]["measure"]).isdisjoint(PROPER_RUN)
    assert not bool(collected.steps["proper_present"].sel(filter="without").any())
    pairs = paired(runs)
    ranks = ranking(pairs)
    for name in PROPER_SCORES:
        assert BETTER_LOW[name] is True
        p = pairs[(pairs["measure"] == name)].iloc[0]
        assert (p["filter_a"], p["filter_b"]) == ("mbm01", "truthful") and p["n_compared"] == 4
        r = ranks[ranks["measure"] == name].set_index("filter")["rank"]
        assert r["truthful"] <= r["mbm01"], name
    es = pairs[pairs["measure"] == "energy_score_mean"].iloc[0]
    assert es["ci95_low"] > 0  # the truthful tracker is better on every seed
    assert ranks[ranks["measure"] == "energy_score_mean"].set_index("filter")["rank"]["truthful"] == 1


def test_intensity_score_without_a_closed_form_is_left_out_with_the_reason(tmp_path):
    # the full 3-D state: a uniform box next to a correlated track (a closed form only up to 2-D)
    box = nb.PPP.uniform(0.5, [0.0, 0.0, 0.0], [20.0, 20.0, 20.0])
    cov = np.array([[1.0, 0.5, 0.0], [0.5, 1.0, 0.0], [0.0, 0.0, 1.0]])
    corr = nb.MultiBernoulli.gaussian([0.8], [[5.0, 5.0, 1.0]], [cov])
    posts = [nb.PMB(box, corr)] * 2
    truth = [np.array([[5.0, 5.2, 1.0]]), np.array([[5.0, 5.2, 1.0], [15.0, 1.0, 2.0]])]
    settings = EvaluationSettings(marginal="full")
    m = evaluate_run(posts, truth, [np.arange(1), np.arange(2)], [0, 0], [20, 20], settings, seed=1)
    assert m.proper.intensity is None and "step 0" in m.proper.intensity_unavailable
    assert "3-D needs diagonal" in m.proper.intensity_unavailable
    # on the 2-D position marginal the same posterior has it (bivariate normal rectangles)
    assert (
        evaluate_run(posts, truth, [np.arange(1), np.arange(2)], [0, 0], [20, 20]).proper.intensity
        is not None
    )
    row = m.summary()
    assert "intensity_score_mean" not in row and math.isfinite(row["energy_score_mean"])
    d = tmp_path / "t"
    d.mkdir()
    _write(m, d / "seed1.nc", "boxed", 1)
    ds = read_metrics(d / "seed1.nc")
    assert "intensity_score" not in ds.variables and "intensity_score_mean" not in ds.variables
    assert "energy_score" in ds.variables and "cardinality_rps" in ds.variables
    assert "3-D needs diagonal" in json.loads(ds.attrs["proper_scores"])["intensity_unavailable"]
    cube = collect_all([d]).steps
    assert "intensity_score" not in cube and bool(cube["proper_present"].all())


# ---------------------------------------------------------------------------
# the command line: evaluate and score
# ---------------------------------------------------------------------------


def test_hypotheses_of_different_families_keep_the_energy_score_and_rps():
    """An MBM whose hypotheses hold Gaussian and Laplace Bernoullis: no shared pool, so no closed-form
    intensity score (a ValueError naming why, left out of the step), the energy score and RPS kept."""
    from nllbench.measures.proper_run import step_proper_scores

    g = nb.MultiBernoulli.gaussian([0.9], [[0.0, 0.0]], [np.eye(2)])
    lap = nb.MultiBernoulli.laplace([0.8], [[1.0, 1.0]], 1.0)
    mixed = nb.MBM([g, lap], [0.5, 0.5])
    with pytest.raises(ValueError, match="different single-object families"):
        nb.intensity_score(mixed, np.zeros((1, 2)), 1.0)
    step = step_proper_scores(mixed, np.zeros((1, 2)), 1.0, 20, 0, 0, None)
    assert step.intensity is None and "different single-object families" in step.intensity_error
    assert np.isfinite(step.energy.value) and np.isfinite(step.rps)
