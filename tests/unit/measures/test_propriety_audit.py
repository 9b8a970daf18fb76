"""The propriety audit (docs/audit.md): its probes, paired statistics and verdicts (command: tests/cli)."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
import yaml
from support.audit_study import TINY
from support.paths import ROOT

import nllbench as nb
from nllbench.engine.transforms import add_bernoulli, drop_bernoulli, shift_means
from nllbench.measures.run.audit import (
    AuditRow,
    FamilyVerdict,
    Perturbation,
    family_verdict,
    overall,
    overall_verdict,
    perturb,
    perturbations,
    verdicts,
)
from nllbench.measures.run.audit_scores import (
    AuditSettings,
    TrajectoryTruth,
    floored,
    jackknife_draws,
    sample_trajectories,
    synthetic_trajectory_density,
    trajectory_scores,
)
from nllbench.pipeline.audit import plan_from_config

# ---------------------------------------------------------------------------
# probes
# ---------------------------------------------------------------------------


def _pmbm():
    a = nb.MultiBernoulli.gaussian([0.9, 0.3], [[0.0, 0.0], [4.0, 0.0]], [np.eye(2), 2 * np.eye(2)], [1, 2])
    b = nb.MultiBernoulli.gaussian([0.8], [[1.0, 1.0]], [np.eye(2)], [1])
    return nb.PMBM(nb.PPP.gaussian([0.2], [[0.0, 3.0]], [np.eye(2)]), (a, b), np.array([0.6, 0.4]))


def test_shift_add_drop_change_what_they_say():
    d = _pmbm()
    moved = shift_means(d, [1.0, -2.0])
    np.testing.assert_array_equal(moved.hypothesis(0).densities.means, [[1.0, -2.0], [5.0, -2.0]])
    np.testing.assert_array_equal(moved.hypothesis(0).densities.covs, d.hypothesis(0).densities.covs)
    np.testing.assert_array_equal(moved.ppp.gaussians.means, [[1.0, 1.0]])
    # the likelihood moves with the density: NLL(shifted, truth + delta) == NLL(density, truth)
    y = np.array([[0.2, 0.1], [4.0, 0.5]])
    assert nb.nll(moved, y + [1.0, -2.0], q=100).value == pytest.approx(nb.nll(d, y, q=100).value, abs=1e-12)
    added = add_bernoulli(d, 0.5, [9.0, 9.0], np.eye(2))
    assert [len(added.hypothesis(h)) for h in range(2)] == [3, 2]
    assert added.hypothesis(0).labels.tolist() == [1, 2, 3] and added.hypothesis(1).labels.tolist() == [1, 3]
    dropped = drop_bernoulli(d)
    assert dropped.hypothesis(0).r.tolist() == [0.9] and len(dropped.hypothesis(1)) == 0
    np.testing.assert_array_equal(dropped.weights, d.weights)
    # an r = 0 placeholder is passed over
    mb = nb.MultiBernoulli.gaussian([0.0, 0.5, 1.0], [[0.0], [1.0], [2.0]], [[[1.0]]] * 3)
    assert drop_bernoulli(mb).r.tolist() == [0.0, 1.0]
    with pytest.raises(ValueError, match="delta: expected 2 finite numbers"):
        shift_means(d, [1.0])
    with pytest.raises(ValueError, match="r: expected an existence probability"):
        add_bernoulli(d, 0.0, [0.0, 0.0], np.eye(2))


def test_perturbations_sides_and_the_tempering_directions():
    s = AuditSettings(n_draws=8, blocks=2)
    perts = perturbations(s)
    honest = [p for p in perts if p.side == "honest"]
    assert [p.family for p in honest] == ["covariance", "existence", "shift", "cardinality"]
    mb = nb.MultiBernoulli.gaussian([0.9, 0.2], [[0.0], [3.0]], [[[1.0]], [[1.0]]])
    sharp = perturb(mb, Perturbation("existence", 4.0, "over"), s).r
    flat = perturb(mb, Perturbation("existence", 0.25, "under"), s).r
    assert sharp[0] > 0.9 and sharp[1] < 0.2  # towards 0/1
    assert 0.5 < flat[0] < 0.9 and 0.2 < flat[1] < 0.5  # towards 1/2


def test_floored_drops_rare_parts_and_renormalises():
    d = _pmbm()
    f = floored(d, 0.5, 0.5)
    assert f.n_hypotheses == 1 and f.weights.tolist() == [1.0]
    assert f.hypothesis(0).r.tolist() == [0.9]


# ---------------------------------------------------------------------------
# paired statistics and the NLL's propriety
# ---------------------------------------------------------------------------


def test_jackknife_of_a_mean_is_the_mean_with_the_block_means_standard_error():
    x = np.random.default_rng(3).normal(size=40)
    m = jackknife_draws(lambda idx: float(x[idx].mean()), 40, 8)
    assert m.estimate == pytest.approx(x.mean())
    np.testing.assert_allclose(m.pseudo, x.reshape(8, 5).mean(axis=1), atol=1e-12)


def test_trajectory_draws_follow_the_labels_and_their_existence():
    seq = synthetic_trajectory_density(3)
    draws = sample_trajectories(seq, 2000, 1)
    present = np.mean([[1 in ids for ids in d.ids] for d in draws])
    assert present == pytest.approx(0.9, abs=0.03)
    assert all(set(np.concatenate(d.ids).tolist()) <= {1, 2, 3} for d in draws)


# ---------------------------------------------------------------------------
# verdicts
# ---------------------------------------------------------------------------


def _rows(deltas, ses, values=(0.5, 1.0, 2.0), sides=("over", "honest", "under"), family="covariance"):
    return [
        AuditRow("frame", "D", "m", family, v, side, 1.0 + d, 0.1, d, se)
        for v, side, d, se in zip(values, sides, deltas, ses, strict=True)
    ]


@pytest.mark.parametrize(
    ("deltas", "ses", "verdict"),
    [
        ((1.0, 0.0, 1.0), (0.1, 0.0, 0.1), "strictly proper"),
        ((0.1, 0.0, 1.0), (0.1, 0.0, 0.1), "proper"),
        ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0), "insensitive"),
        ((-1.0, 0.0, 1.0), (0.1, 0.0, 0.1), "improper (rewards over-confidence)"),
        ((1.0, 0.0, -1.0), (0.1, 0.0, 0.1), "improper (rewards under-confidence)"),
        ((-1.0, 0.0, -1.0), (0.1, 0.0, 0.1), "improper (rewards over- and under-confidence)"),
        ((math.inf, 0.0, 1.0), (math.nan, 0.0, 0.1), "strictly proper"),
        ((-math.inf, 0.0, 1.0), (math.nan, 0.0, 0.1), "improper (rewards over-confidence)"),
        ((-1e-9, 0.0, 1.0), (0.0, 0.0, 0.1), "improper (rewards over-confidence)"),
    ],
)
def test_family_verdict(deltas, ses, verdict):
    assert family_verdict(_rows(deltas, ses), 2.0).verdict == verdict


def test_family_verdict_names_where_the_minimum_lies_and_a_wrong_density():
    v = family_verdict(_rows((-1.0, 0.0, -0.5), (0.1, 0.0, 0.1)), 2.0)
    assert v.argmin == 0.5 and v.better == (0.5, 2.0)
    w = family_verdict(
        _rows((0.0, -1.0), (0.0, 0.1), values=(0.0, 1.0), sides=("honest", "other"), family="shift"), 2.0
    )
    assert w.verdict == "improper (rewards a wrong density)" and w.argmin == 1.0


def test_a_probe_every_measure_ignores_is_a_no_op_and_left_out_of_the_overall_verdict():
    flat = [replace(r, measure=m) for m in ("nll", "gospa") for r in _rows((0.0, 0.0, 0.0), (0.0, 0.0, 0.0))]
    strict = [
        replace(r, measure="nll", family="shift")
        for r in _rows((0.0, 1.0), (0.0, 0.1), values=(0.0, 1.0), sides=("honest", "other"))
    ]
    vs = verdicts(flat + strict, 2.0)
    assert {v.verdict for v in vs if v.family == "covariance"} == {"no-op"}
    assert overall(vs)["nll"] == "strictly proper"


def test_overall_verdict():
    def fv(verdict, family="covariance"):
        return FamilyVerdict("frame", "D", "m", family, verdict, 1.0)

    assert overall_verdict([fv("strictly proper"), fv("strictly proper", "shift")]) == "strictly proper"
    assert (
        overall_verdict([fv("strictly proper"), fv("insensitive", "shift")])
        == "proper (insensitive to shift)"
    )
    assert (
        overall_verdict([fv("improper (rewards over-confidence)"), fv("proper")])
        == "improper (rewards over-confidence)"
    )


# ---------------------------------------------------------------------------
# configuration and command
# ---------------------------------------------------------------------------


def test_the_shipped_config_loads():
    root = ROOT
    plan = plan_from_config(yaml.safe_load((root / "config/audit/audit.yaml").read_text()))
    assert plan.settings.n_draws >= 100 and {d.level for d in plan.densities} == {"frame", "trajectory"}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"settings": {"n_draw": 10}}, "settings: unknown key 'n_draw'"),
        ({"settings": {"cov_scales": [0.5, 2]}}, "cov_scales: expected distinct values including 1.0"),
        ({"densities": [{"name": "A", "kind": "synthetic"}]}, r"densities\[0\]: missing key 'density'"),
        ({"densities": [{"name": "A", "kind": "magic"}]}, r"densities\[0\].kind: expected one of"),
        ({"extra": 1}, "config: unknown key 'extra'"),
        (
            {"filters": [{"name": "F", "filter": "phd", "scenario": "s", "steps": 9, "seed": 0}]},
            "expected pmbm",
        ),
    ],
)
def test_config_errors_name_the_key(change, message):
    with pytest.raises(ValueError, match=message):
        plan_from_config({**TINY, **change})


def test_trajectory_nll_of_a_draw_with_an_empty_frame_is_its_closed_form():
    # one label, two frames: present at frame 0 (r = 0.8, N(0, I)), absent at frame 1 (r = 0.3)
    seq = (
        nb.MultiBernoulli.gaussian([0.8], [[0.0, 0.0]], [np.eye(2)], labels=[5]),
        nb.MultiBernoulli.gaussian([0.3], [[1.0, 0.0]], [np.eye(2)], labels=[5]),
    )
    y = np.array([[0.5, -0.5]])
    draw = TrajectoryTruth((y, np.empty((0, 2))), (np.array([5]), np.empty(0, dtype=np.int64)))
    s = AuditSettings(n_draws=8, blocks=2)
    got = trajectory_scores(seq, [draw], s)["trajectory_nll"].estimate
    log_pdf = -math.log(2 * math.pi) - 0.5 * float(y[0] @ y[0])
    assert got == pytest.approx(-(math.log(0.8) + log_pdf + math.log(0.7)), abs=1e-12)
