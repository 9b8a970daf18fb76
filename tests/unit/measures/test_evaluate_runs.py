"""Evaluation of runs: paper values, probes, Theorem 1 on every run, infinities; the command in tests/cli."""

from __future__ import annotations

import math

import numpy as np
import pytest

import nllbench as nb
from nllbench.engine.transforms import marginal, scale_covariances, temper_existence
from nllbench.examples import example1, example2
from nllbench.filters import run_filter
from nllbench.measures.evaluate import EvaluationSettings, evaluate_run
from nllbench.measures.metrics import clear_mot, ospa
from nllbench.simulation.scenarios import get_scenario, simulate


def test_paper_examples_through_the_run_evaluation():
    for ex, mota, motp, g in (
        (example1(), 1.0, (1 + math.sqrt(2)) / 2, 1 + math.sqrt(2)),
        (example2(), 0.5, 1.0, 2.0),
    ):
        for density in ex.trackers.values():
            m = evaluate_run([density], [ex.truth], [np.arange(2)], [0, 0], [10, 10])
            assert m.clear.mota == pytest.approx(mota)
            assert m.clear.motp == pytest.approx(motp)
            assert m.gospa[0] == pytest.approx(g)
    m = evaluate_run([example2().trackers["M2"]], [example2().truth], [np.arange(2)], [0, 0], [10, 10])
    assert m.nll["value"][0, 0] == math.inf and m.nll["missed"][0, 0] == math.inf
    assert m.summary()["nll_q1"] == math.inf and m.summary()["nll_infinite_steps_q1"] == 1


def test_ospa_definition_values():
    assert ospa([[0, 0]], [[0, 1]], c=2, p=1).value == pytest.approx(1.0)
    assert ospa([[0, 0]], [], c=2, p=2).value == pytest.approx(2.0)
    # p = 2: distances are raised to p before assigning
    r = ospa([[0, 0], [3, 0]], [[1, 0], [4, 0]], c=10, p=2)
    assert r.value == pytest.approx(1.0)


def test_multi_frame_clear_mot_switch_and_gap_rules():
    truth = [np.array([[0.0, 0.0]]), np.empty((0, 2)), np.array([[0.0, 0.0]])]
    tid = [np.array([7]), np.array([], dtype=int), np.array([7])]
    est = [np.array([[0.5, 0.0]]), np.array([[9.0, 9.0]]), np.array([[0.2, 0.0]])]
    eid = [np.array([1]), np.array([1]), np.array([2])]
    r = clear_mot(truth, tid, est, eid, threshold=2)
    assert r.switches == 1 and r.false_positives == 1 and r.misses == 0
    assert r.mota == pytest.approx(1 - 2 / 2) and r.motp == pytest.approx(0.35)


def scene(name="williams15", steps=25, seed=0):
    sc = get_scenario(name, steps=steps)
    sim = simulate(sc, np.random.default_rng(seed))
    return sc, sim


@pytest.fixture(scope="module")
def pmbm_run():
    sc, sim = scene()
    return sc, sim, run_filter("pmbm", sim.measurements, sc.model)


def test_calibration_probes_move_nll_only(pmbm_run):
    sc, sim, posts = pmbm_run
    lo, hi = sc.model.fov_low, sc.model.fov_high
    base = evaluate_run(posts, sim.truth, sim.truth_ids, lo, hi, EvaluationSettings(qs=(10,)))
    for kw in ({"cov_scale": 4.0}, {"cov_scale": 0.05}, {"temper": 3.0}, {"temper": 0.3}):
        probed = evaluate_run(posts, sim.truth, sim.truth_ids, lo, hi, EvaluationSettings(qs=(10,), **kw))
        np.testing.assert_array_equal(probed.gospa, base.gospa)
        np.testing.assert_array_equal(probed.ospa, base.ospa)
        assert probed.clear.mota == base.clear.mota and probed.clear.motp == base.clear.motp
        assert probed.identity.idf1 == base.identity.idf1
        assert abs(probed.summary()["nll_q10"] - base.summary()["nll_q10"]) > 0.1, kw
    # over-confident and under-confident covariances are both worse than a calibrated scale
    curve = [
        evaluate_run(
            posts, sim.truth, sim.truth_ids, lo, hi, EvaluationSettings(qs=(1,), cov_scale=s)
        ).summary()["nll_q1"]
        for s in (0.01, 1.0, 100.0)
    ]
    assert curve[1] < curve[0] and curve[1] < curve[2]


def test_theorem1_holds_on_every_run():
    for name in ("phd", "cphd", "pmb", "pmbm", "mbm", "mbm01"):
        sc, sim = scene(steps=12, seed=3)
        posts = run_filter(name, sim.measurements, sc.model, max_cardinality=12)
        m = evaluate_run(
            posts, sim.truth, sim.truth_ids, sc.model.fov_low, sc.model.fov_high, EvaluationSettings(qs=(1,))
        )
        assert np.max(np.abs(m.theorem1_difference)) < 1e-9, name
        assert np.all(np.isfinite(m.theorem1_lhs))


def test_marginal_and_probe_transforms():
    mb = nb.MultiBernoulli.gaussian(
        [0.2, 0.45, 1.0], np.arange(12.0).reshape(3, 4), np.stack([np.diag([1.0, 2, 3, 4])] * 3)
    )
    f = nb.PMB(nb.PPP.uniform(2.0, [0, 0, -1, -1], [10, 10, 1, 1]), mb)
    pos = marginal(f, (0, 1))
    assert pos.dim == 2 and pos.ppp.total_rate == 2.0
    np.testing.assert_array_equal(pos.hypotheses[0].densities.covs[0], np.diag([1.0, 2.0]))
    t = temper_existence(mb, 5.0, about=0.4)
    assert t.r[2] == 1.0 and t.r[0] < 0.2 and 0.45 < t.r[1] < 1
    assert np.array_equal(t.r > 0.4, mb.r > 0.4)
    s = scale_covariances(f, 3.0)
    np.testing.assert_array_equal(s.hypotheses[0].densities.covs, 3.0 * mb.densities.covs)
    with pytest.raises(ValueError, match="s: expected a positive covariance scale"):
        scale_covariances(f, 0.0)
    with pytest.raises(ValueError, match="dims: expected indices in 0..3"):
        marginal(f, (0, 7))


def test_full_state_nll_differs_from_position(pmbm_run):
    sc, sim, posts = pmbm_run
    a = evaluate_run(
        posts[:5],
        sim.truth[:5],
        sim.truth_ids[:5],
        sc.model.fov_low,
        sc.model.fov_high,
        EvaluationSettings(qs=(1,)),
    )
    b = evaluate_run(
        posts[:5],
        sim.truth[:5],
        sim.truth_ids[:5],
        sc.model.fov_low,
        sc.model.fov_high,
        EvaluationSettings(qs=(1,), marginal="full"),
    )
    assert not np.allclose(a.nll["value"], b.nll["value"])


def test_exact_nll_in_the_evaluation_lies_within_the_bounds(pmbm_run):
    sc, sim, posts = pmbm_run
    m = evaluate_run(
        posts[:8],
        sim.truth[:8],
        sim.truth_ids[:8],
        sc.model.fov_low,
        sc.model.fov_high,
        EvaluationSettings(qs=(1, 3), exact=True),
    )
    assert m.nll_exact_available.all()
    for j in range(2):
        assert np.all(m.nll["lower"][:, j] <= m.nll_exact_value + 1e-9)
        assert np.all(m.nll_exact_value <= m.nll["upper"][:, j] + 1e-9)
    assert "nll_exact" in m.summary()


def _same(a, b, where="") -> None:
    """a and b equal value for value (arrays bit for bit, NaN equal to NaN), recursively."""
    import dataclasses

    if dataclasses.is_dataclass(a) and not isinstance(a, type):
        assert type(a) is type(b), where
        for f in dataclasses.fields(a):
            if f.name not in ("seconds", "nll_seconds"):
                _same(getattr(a, f.name), getattr(b, f.name), f"{where}.{f.name}")
    elif isinstance(a, dict):
        assert a.keys() == b.keys(), where
        for k in a:
            _same(a[k], b[k], f"{where}[{k!r}]")
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _same(x, y, f"{where}[{i}]")
    elif isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        assert np.array_equal(a, b, equal_nan=True), where
    elif isinstance(a, float) and math.isnan(a):
        assert isinstance(b, float) and math.isnan(b), where
    else:
        assert a == b, where


def test_shared_evaluation_of_a_grid_equals_separate_evaluations(pmbm_run):
    """evaluate_runs (one ranking per scale, shared estimates) gives each separate evaluate_run's values."""
    from nllbench.measures.evaluate import evaluate_runs, evaluation_grid, grid_settings

    sc, sim, posts = pmbm_run
    lo, hi = sc.model.fov_low, sc.model.fov_high
    grid = evaluation_grid((1, 3, 10), (0.5, 1, 2), probe_q=3)
    assert grid == [(1, 1.0), (3, 0.5), (3, 1.0), (3, 2.0), (10, 1.0)]
    settings = grid_settings(EvaluationSettings(qs=(1, 3, 10), exact=True), grid)
    assert [s.exact for s in settings] == [True, False, False, False, False]
    together = evaluate_runs(posts, sim.truth, sim.truth_ids, lo, hi, settings)
    for s, run in zip(settings, together, strict=True):
        alone = evaluate_run(posts, sim.truth, sim.truth_ids, lo, hi, s)
        _same(run, alone, f"q{s.qs} cov{s.cov_scale}")
    # several Q in one settings at two scales, next to a single-Q one
    mixed = [EvaluationSettings(qs=(1, 10)), EvaluationSettings(qs=(3,), cov_scale=2.0)]
    for s, run in zip(mixed, evaluate_runs(posts, sim.truth, sim.truth_ids, lo, hi, mixed), strict=True):
        _same(run, evaluate_run(posts, sim.truth, sim.truth_ids, lo, hi, s))


def test_shared_evaluation_refuses_settings_that_differ_beyond_q_scale_and_exact(pmbm_run):
    from nllbench.measures.evaluate import evaluate_runs

    sc, sim, posts = pmbm_run
    lo, hi = sc.model.fov_low, sc.model.fov_high
    with pytest.raises(ValueError, match=r"settings\[1\]\.cutoff: expected 2\.0"):
        evaluate_runs(
            posts, sim.truth, sim.truth_ids, lo, hi, [EvaluationSettings(), EvaluationSettings(cutoff=3.0)]
        )
    with pytest.raises(ValueError, match="at least one"):
        evaluate_runs(posts, sim.truth, sim.truth_ids, lo, hi, [])
