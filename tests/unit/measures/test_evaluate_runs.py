"""Evaluation of runs: paper values, probes, Theorem 1 on every run, infinities; the command in tests/cli."""

from __future__ import annotations

import math

import numpy as np
import pytest
from support.filter_runs import pmbm_filter_run

import nllbench as nb
from nllbench.engine.transforms import marginal, scale_covariances, temper_existence
from nllbench.examples import example1, example2
from nllbench.measures.evaluate import EvaluationSettings, evaluate_run
from nllbench.measures.metrics import clear_mot, ospa


@pytest.fixture(scope="module")
def pmbm_run():
    return pmbm_filter_run()


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
