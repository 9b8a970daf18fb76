"""Evaluation of whole filter runs: a shared grid equals separate evaluations, calibration probes move
the NLL only, Theorem 1 holds on every run, the calibration panels move as expected."""

from __future__ import annotations

import math

import numpy as np
import pytest
from support.calibrated_runs import calibrated_run
from support.filter_runs import pmbm_filter_run, scene

from nllbench.filters import run_filter
from nllbench.measures.evaluate import EvaluationSettings, evaluate_run


@pytest.fixture(scope="module")
def pmbm_run():
    return pmbm_filter_run()


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


def _same(a, b, where="") -> None:
    """a and b equal value for value (arrays bit for bit, NaN equal to NaN), recursively."""
    import dataclasses

    if dataclasses.is_dataclass(a) and not isinstance(a, type):
        assert type(a) is type(b), where
        for f in dataclasses.fields(a):
            if f.compare and f.name not in ("seconds", "nll_seconds"):  # measured times differ
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


def test_probes_move_the_calibration_panels_in_the_expected_direction():
    from nllbench.measures.evaluate import EvaluationSettings, evaluate_run

    posts, truth, ids = calibrated_run()
    lo, hi = [-100.0, -100.0], [600.0, 100.0]

    def run(**kw):
        m = evaluate_run(posts, truth, ids, lo, hi, EvaluationSettings(qs=(1,), **kw))
        return m.calibration_total()

    base = run()
    # the calibrated posterior: average NEES inside its chi-square interval, ~95 % inside the ellipses
    low, high = base.anees_interval()
    assert low <= base.anees <= high
    assert abs(base.nees_inside_share - 0.95) < 0.03
    # covariances times s: NEES / s; over-confident (s < 1) leaves pairs outside their ellipses
    small, large = run(cov_scale=0.25), run(cov_scale=4.0)
    assert small.anees > high and large.anees < low
    assert small.anees == pytest.approx(4 * base.anees, rel=1e-9)
    assert small.nees_inside_share < base.nees_inside_share < large.nees_inside_share
    np.testing.assert_array_equal(small.bin_explained, base.bin_explained)  # existence untouched
    assert small.card_log_score_sum == base.card_log_score_sum
    # existence tempered either way: worse Brier, ECE and cardinality log score than the calibrated r
    sharp, flat = run(temper=3.0), run(temper=1 / 3)
    for probed in (sharp, flat):
        assert probed.brier > base.brier
        assert probed.ece > base.ece
        assert probed.cardinality_log_score > base.cardinality_log_score
    # sharpened r: narrower cardinality intervals cover less; over-confident high bins.
    # (Flattening pulls every r towards 0.4, which also shifts the mean count: no direction for coverage.)
    assert sharp.cardinality_coverage < base.cardinality_coverage
    mean_r, freq, _ = sharp.reliability()
    assert np.all(freq[mean_r > 0.8] < mean_r[mean_r > 0.8])
