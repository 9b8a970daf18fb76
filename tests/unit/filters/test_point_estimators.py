"""Point-estimation rules: hand-built mixtures, brute force over hypotheses, and the reported reproducer."""

from __future__ import annotations

import argparse
import itertools
import math

import numpy as np
import pytest

import nllbench as nb
from nllbench.cli import build_parser
from nllbench.engine.densities import PMBM
from nllbench.filters import PHDSettings, PMBMSettings, run_filter_full
from nllbench.filters.estimates import (
    RULES,
    estimate,
    expected_cardinality,
    intensity_indices,
    map_cardinality_choice,
)
from nllbench.filters.pmbm import correct, estimate_state, initial_state, predict
from nllbench.measures.evaluate import EvaluationSettings, evaluate_run
from nllbench.simulation.scenarios import get_scenario, simulate


def ppp(weights, means=None):
    w = np.asarray(weights, dtype=float)
    J = w.size
    m = np.arange(2 * J, dtype=float).reshape(J, 2) if means is None else np.asarray(means, dtype=float)
    return nb.PPP.gaussian(w, m, np.tile(np.eye(2), (J, 1, 1)))


def test_cli_offers_every_rule():
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    for command in ("filter", "evaluate"):
        (action,) = [a for a in sub.choices[command]._actions if a.dest == "estimator"]
        assert tuple(action.choices) == RULES, command


def test_greedy_reports_a_heavy_component_twice():
    # N = round(1.6 + 0.5 + 0.2) = 2; 1.6 -> 0.6 is still the heaviest
    assert intensity_indices(np.array([1.6, 0.5, 0.2]), "greedy").tolist() == [0, 0]
    # per-component rounding: round(1.6) = 2 copies, round(0.5) = 1 (half up)
    assert intensity_indices(np.array([1.6, 0.5, 0.2]), "round").tolist() == [0, 0, 1]
    # MAP: N heaviest, each once
    assert intensity_indices(np.array([1.6, 0.5, 0.2]), "map", 2).tolist() == [0, 1]
    est = estimate(ppp([0.2, 1.6, 0.5]), rule="greedy")
    np.testing.assert_array_equal(est.states, [[2.0, 3.0], [2.0, 3.0]])


def test_greedy_matches_a_literal_loop_on_random_mixtures():
    rng = np.random.default_rng(0)
    for _ in range(200):
        w = rng.uniform(0, 2.0, int(rng.integers(0, 8)))
        left, out = list(w), []
        for _ in range(int(math.floor(sum(w) + 0.5))):
            j = max(range(len(left)), key=lambda i: (left[i], -i))
            out.append(j)
            left[j] -= 1
        assert intensity_indices(w, "greedy").tolist() == out


def test_split_mass_reproducer_is_never_silent():
    """Mass 3.85 split over 11 components below 0.5: the round rule reports 0, and says so."""
    w = np.full(11, 0.35)
    density = ppp(w, np.tile([10.0, 10.0], (11, 1)))
    assert expected_cardinality(density) == pytest.approx(3.85)
    assert estimate(density, rule="round").states.shape == (0, 2)
    assert estimate(density, rule="greedy").states.shape[0] == 4
    assert estimate(density, rule="map").states.shape[0] == 3  # floor(3.85), the Poisson mode
    truth = [np.full((4, 2), 10.0)]
    ids = [np.arange(4)]
    s = EvaluationSettings(qs=(1,), cutoff=10.0, p=2.0, estimator="round")
    m = evaluate_run([density], truth, ids, [0, 0], [100, 100], s)
    assert m.estimator_empty_steps == 1 and m.summary()["estimator_empty_steps"] == 1
    g = evaluate_run(
        [density], truth, ids, [0, 0], [100, 100], EvaluationSettings(qs=(1,), estimator="greedy")
    )
    assert g.estimator_empty_steps == 0 and g.n_estimates[0] == 4


def test_reference_merge_settings_on_williams():
    """PHD with merge 0.1 and cap 29: greedy always reports round(mass); round often reports nothing."""
    sc = get_scenario("williams15", steps=40)
    sim = simulate(sc, np.random.default_rng(1))
    run = run_filter_full("phd", sim.measurements, sc.model, phd_settings=PHDSettings(merge=0.1, cap=29))
    silent = 0
    for post in run.posteriors:
        mass = expected_cardinality(post)
        assert estimate(post, rule="greedy").states.shape[0] == math.floor(mass + 0.5)
        silent += estimate(post, rule="round").states.shape[0] == 0 and mass >= 0.5
    assert silent > 0  # the defect the greedy rule exists for


def test_intensity_rules_on_an_iid_cluster():
    card = np.array([0.1, 0.2, 0.6, 0.1])  # MAP 2, mean 1.7
    cl = nb.IIDCluster(
        card, np.array([0.5, 0.3, 0.2]), np.arange(6.0).reshape(3, 2), np.tile(np.eye(2), (3, 1, 1))
    )
    assert estimate(cl).states.tolist() == [[0.0, 1.0], [2.0, 3.0]]  # map: the 2 heaviest
    # round on E[N] w = (0.85, 0.51, 0.34): components 0 and 1
    assert estimate(cl, rule="round").states.tolist() == [[0.0, 1.0], [2.0, 3.0]]
    # greedy: N = round(1.7) = 2; 0.85 -> -0.15, then 0.51
    assert estimate(cl, rule="greedy").states.tolist() == [[0.0, 1.0], [2.0, 3.0]]
    with pytest.raises(ValueError, match="estimator: expected one of"):
        estimate(cl, rule="best_hypothesis")


def brute_force_map(weights, rs):
    """n* and the best (h, S) with |S| = n*, by enumerating every subset of every hypothesis."""
    n_max = max(len(r) for r in rs)
    card = np.zeros(n_max + 1)
    cands = []
    for h, (w, r) in enumerate(zip(weights, rs, strict=True)):
        for mask in itertools.product([0, 1], repeat=len(r)):
            m = np.array(mask, dtype=bool)
            p = w * np.prod(np.where(m, r, 1 - r))
            card[m.sum()] += p
            cands.append((p, h, tuple(np.flatnonzero(m))))
    n = int(np.argmax(card))
    p, h, s = max((c for c in cands if len(c[2]) == n), key=lambda c: c[0])
    return n, h, s, p


def test_map_cardinality_agrees_with_brute_force():
    rng = np.random.default_rng(3)
    for _ in range(300):
        H = int(rng.integers(1, 5))
        rs = [rng.uniform(0, 1, int(rng.integers(0, 6))) for _ in range(H)]
        if rng.random() < 0.3:  # exact corner values
            for r in rs:
                r[rng.random(r.size) < 0.3] = rng.choice([0.0, 1.0])
        w = rng.dirichlet(np.ones(H))
        n, h, s, p = brute_force_map(w, rs)
        with np.errstate(divide="ignore"):
            hh, idx = map_cardinality_choice(np.log(w), rs)
        assert len(idx) == n
        # the chosen subset is as probable as the brute-force optimum (ties may pick another)
        chosen = w[hh] * np.prod(np.where(np.isin(np.arange(rs[hh].size), idx), rs[hh], 1 - rs[hh]))
        assert chosen == pytest.approx(p, rel=1e-9, abs=1e-300)
        if p > 0:  # and the same Bernoullis unless another subset is exactly as probable
            others = [c for c in all_subsets(w, rs, n) if not np.isclose(c, p, rtol=1e-9)]
            if len(others) == len(all_subsets(w, rs, n)) - 1:
                assert (hh, tuple(idx)) == (h, s)


def all_subsets(w, rs, n):
    out = []
    for h, r in enumerate(rs):
        for S in itertools.combinations(range(r.size), n):
            m = np.isin(np.arange(r.size), S)
            out.append(w[h] * np.prod(np.where(m, r, 1 - r)))
    return out


def test_map_cardinality_differs_from_best_hypothesis():
    # hypothesis 0 is the likeliest but says 0 objects; the mixture's MAP cardinality is 1
    mb0 = nb.MultiBernoulli.gaussian([0.1], [[0.0, 0.0]], [np.eye(2)])
    mb1 = nb.MultiBernoulli.gaussian([0.9], [[5.0, 5.0]], [np.eye(2)])
    mb2 = nb.MultiBernoulli.gaussian([0.95], [[9.0, 9.0]], [np.eye(2)])
    d = PMBM(None, (mb0, mb1, mb2), np.array([0.4, 0.35, 0.25]))
    assert estimate(d).states.shape == (0, 2)
    # P(n=1) = 0.04 + 0.315 + 0.2375 > P(n=0); best for n=1: 0.35 * 0.9 = 0.315 (hypothesis 1)
    assert estimate(d, rule="map_cardinality").states.tolist() == [[5.0, 5.0]]


def test_estimates_from_filter_state_equal_those_of_its_density():
    sc = get_scenario("williams15_mb", steps=6)
    sim = simulate(sc, np.random.default_rng(5))
    s = initial_state(sc.model, "mbm")
    for k, Z in enumerate(sim.measurements):
        if k:
            s = predict(s, sc.model, "mbm")
        s = correct(s, Z, sc.model, PMBMSettings(), "mbm")
        dens = s.to_density(with_ppp=False)
        for rule in ("best_hypothesis", "map_cardinality"):
            a, b = estimate_state(s, rule, 0.4), estimate(dens, 0.4, rule)
            np.testing.assert_array_equal(a.states, b.states)
            np.testing.assert_array_equal(a.labels, b.labels)
        from nllbench.filters.pmbm import reduce

        s = reduce(s, PMBMSettings(), "mbm")


def test_filter_estimates_at_update_time_come_before_the_merge():
    sc = get_scenario("williams15", steps=12)
    sim = simulate(sc, np.random.default_rng(2))
    settings = PHDSettings(merge=0.1, cap=29)
    run = run_filter_full(
        "phd", sim.measurements, sc.model, phd_settings=settings, estimate_at="update", estimator="greedy"
    )
    assert run.estimator == "greedy" and len(run.estimates) == sc.steps
    for est in run.estimates:
        assert est.states.shape[1] == 4 and est.labels.shape == (est.states.shape[0],)
    # the default run extracts nothing and gives the same posteriors
    plain = run_filter_full("phd", sim.measurements, sc.model, phd_settings=settings)
    assert plain.estimates is None
    for a, b in zip(plain.posteriors, run.posteriors, strict=True):
        np.testing.assert_array_equal(a.weights, b.weights)
    with pytest.raises(ValueError, match="estimator: expected one of"):
        run_filter_full("pmbm", sim.measurements, sc.model, estimate_at="update", estimator="greedy")
    with pytest.raises(ValueError, match="estimate_at"):
        run_filter_full("phd", sim.measurements, sc.model, estimate_at="never")
    with pytest.raises(ValueError, match="only used with estimate_at='update'"):
        run_filter_full("phd", sim.measurements, sc.model, estimator="greedy")


def test_pmb_projection_before_the_cap_keeps_every_hypothesis_mass():
    from nllbench.filters.pmbm import _project_to_pmb

    sc = get_scenario("williams15", steps=5)
    sim = simulate(sc, np.random.default_rng(4))
    loose = PMBMSettings(max_hypotheses=3)
    s = initial_state(sc.model, "pmb")
    for k, Z in enumerate(sim.measurements):
        if k:
            s = predict(s, sc.model, "pmb")
        raw = correct(s, Z, sc.model, loose, "pmb")
        early = correct(s, Z, sc.model, PMBMSettings(max_hypotheses=3, project_before_cap=True), "pmb")
        manual = _project_to_pmb(raw, loose)
        assert early.assoc.shape[0] == 1
        np.testing.assert_allclose(early.r, manual.r, rtol=1e-12)
        np.testing.assert_allclose(early.means, manual.means, rtol=1e-12)
        from nllbench.filters.pmbm import reduce

        s = reduce(early, PMBMSettings(max_hypotheses=3, project_before_cap=True), "pmb")
        assert s.assoc.shape[0] == 1
