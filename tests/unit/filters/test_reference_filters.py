"""Reference filters: Kalman limits, cardinality theory, exact posterior, and the literature's trend."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.stats import multivariate_normal

import nllbench as nb
from nllbench.engine.gaussian_mixture import GaussianMixture
from nllbench.filters import PHDSettings, PMBMSettings, run_filter
from nllbench.filters.gaussian import LabelledIntensity
from nllbench.filters.phd import CPHDState, cphd_update, phd_update
from nllbench.filters.pmbm import PMBMState, update
from nllbench.simulation.models import POSITION_H, Model, cv_matrices
from nllbench.simulation.scenarios import get_scenario, simulate

FAMILY = ["pmbm", "pmb", "mbm", "mbm01"]


def single_target_model(p_d=1.0, clutter=0.0, p_s=1.0):
    F, Q = cv_matrices(1.0, 0.5)
    return Model(
        F=F,
        Q=Q,
        H=POSITION_H,
        R=2.0 * np.eye(2),
        p_survival=p_s,
        p_detection=p_d,
        clutter_rate=clutter,
        fov_low=[-100.0, -100.0],
        fov_high=[100.0, 100.0],
        birth=GaussianMixture([0.0], [[0.0, 0.0, 0.0, 0.0]], [np.eye(4)]),
        birth_r=[0.0],
        initial=GaussianMixture([1.0], [[0.0, 0.0, 1.0, 0.5]], [np.diag([25.0, 25.0, 4.0, 4.0])]),
    )


def kalman(model, Z):
    m, P = model.initial.means[0], model.initial.covs[0]
    out = []
    for k, z in enumerate(Z):
        if k:
            m, P = model.F @ m, model.F @ P @ model.F.T + model.Q
        S = model.H @ P @ model.H.T + model.R
        K = P @ model.H.T @ np.linalg.inv(S)
        m = m + K @ (z[0] - model.H @ m)
        P = (np.eye(4) - K @ model.H) @ P
        out.append((m, P))
    return out


def one_target_scan(rng, steps=8):
    x = np.array([0.0, 0.0, 1.0, 0.5])
    Z = []
    for _ in range(steps):
        Z.append((x[:2] + rng.normal(0, 1.4, 2))[None])
        x = x + np.array([x[2], x[3], 0, 0])
    return Z


@pytest.mark.parametrize("name", FAMILY + ["phd"])
def test_one_target_no_clutter_is_the_kalman_filter(name):
    model = single_target_model()
    Z = one_target_scan(np.random.default_rng(1))
    posts = run_filter(name, Z, model, pmbm_settings=PMBMSettings(), phd_settings=PHDSettings(merge=0.0))
    for (m, P), post in zip(kalman(model, Z), posts, strict=True):
        if name == "phd":
            assert post.weights.sum() == pytest.approx(1.0)
            means, covs = post.gaussians.means, post.gaussians.covs
        else:
            assert len(post.hypotheses) == 1
            mb = post.hypotheses[0]
            assert mb.r.tolist() == [1.0]
            means, covs = mb.densities.means, mb.densities.covs
        np.testing.assert_allclose(means[0], m, atol=1e-9)
        np.testing.assert_allclose(covs[0], P, atol=1e-9)


def test_phd_mass_with_no_measurement():
    model = single_target_model(p_d=0.7)
    state = LabelledIntensity.start(
        GaussianMixture([0.6, 1.4], [[0, 0, 0, 0], [50, 50, 0, 0]], [np.eye(4)] * 2)
    )
    out = phd_update(state, np.empty((0, 2)), model, PHDSettings(merge=0.0))
    assert out.mixture.weights.sum() == pytest.approx(0.3 * 2.0)


def test_phd_mass_one_isolated_measurement_no_clutter():
    """With no clutter, each measurement adds exactly one to the expected cardinality."""
    model = single_target_model(p_d=0.9)
    state = LabelledIntensity.start(GaussianMixture([2.0], [[0, 0, 0, 0]], [np.eye(4) * 10]))
    out = phd_update(state, np.array([[1.0, 1.0]]), model, PHDSettings(merge=0.0))
    assert out.mixture.weights.sum() == pytest.approx(0.1 * 2.0 + 1.0)


def test_cphd_no_measurement_thins_the_cardinality():
    model = single_target_model(p_d=0.6)
    N = 10
    p = np.full(N + 1, 1.0 / (N + 1))
    state = CPHDState(p, LabelledIntensity.start(GaussianMixture([5.0], [[0, 0, 0, 0]], [np.eye(4)])))
    out = cphd_update(state, np.empty((0, 2)), model)
    want = p * 0.4 ** np.arange(N + 1)
    np.testing.assert_allclose(out.cardinality, want / want.sum(), rtol=1e-12)


def test_cphd_pmfs_sum_to_one_and_track_the_truth():
    sc = get_scenario("williams15", steps=30)
    sim = simulate(sc, np.random.default_rng(3))
    posts = run_filter("cphd", sim.measurements, sc.model, max_cardinality=15)
    for post, _X in zip(posts, sim.truth, strict=True):
        assert post.cardinality.sum() == pytest.approx(1.0, abs=1e-12)
        assert post.cardinality.shape == (16,)
    assert int(np.argmax(posts[-1].cardinality)) == len(sim.truth[-1])


def meas_log_likelihood(model, Z, X):
    """log l(Z | X) of the standard point-target model, by enumerating associations."""
    kappa = model.clutter_intensity
    total = []
    n, m = len(X), len(Z)
    for k in range(min(n, m) + 1):
        for xs in itertools.combinations(range(n), k):
            for zs in itertools.permutations(range(m), k):
                ll = -model.clutter_rate + (m - k) * math.log(kappa)
                ll += (n - k) * math.log(1 - model.p_detection)
                for i, j in zip(xs, zs, strict=True):
                    ll += math.log(model.p_detection) + multivariate_normal(model.H @ X[i], model.R).logpdf(
                        Z[j]
                    )
                total.append(ll)
    top = max(total)
    return top + math.log(sum(math.exp(t - top) for t in total))


def test_pmbm_update_is_the_exact_bayes_posterior():
    """Posterior density ratios equal prior x likelihood ratios (no pruning, no gating)."""
    model = single_target_model(p_d=0.8, clutter=2.0)
    prior_mb = nb.MultiBernoulli.gaussian([0.7], [[0.0, 0.0, 1.0, 0.0]], [np.diag([4.0, 4.0, 1.0, 1.0])])
    ppp = LabelledIntensity.start(
        GaussianMixture([0.5], [[5.0, 5.0, 0.0, 0.0]], [np.diag([16.0, 16.0, 1.0, 1.0])])
    )
    state = PMBMState(
        ppp,
        prior_mb.r,
        prior_mb.densities.means,
        prior_mb.densities.covs,
        np.zeros(1, dtype=np.int64),
        np.zeros(1, dtype=np.int64),
        np.zeros((1, 1), dtype=np.int64),
        np.zeros(1),
        1,
    )
    prior = nb.PMB(ppp.to_ppp(), prior_mb)
    Z = np.array([[0.5, -0.3], [4.0, 6.0]])
    exact = PMBMSettings(
        gate=math.inf, max_hypotheses=10**6, hypothesis_floor=0.0, existence_floor=0.0, ppp_floor=0.0
    )
    post = update(state, Z, model, exact, "pmbm").to_density(with_ppp=True)
    rng = np.random.default_rng(0)
    sets = [np.empty((0, 4)), rng.normal(0, 2, (1, 4)), rng.normal(2, 2, (2, 4)), rng.normal(1, 2, (3, 4))]
    ref = None
    for X in sets:
        got = -nb.nll(post, X, method="exact").value
        want = -nb.nll(prior, X, method="exact").value + meas_log_likelihood(model, Z, X)
        if ref is None:
            ref = got - want
        assert got - want == pytest.approx(ref, abs=1e-8)


def test_pmb_equals_pmbm_with_one_hypothesis():
    model = single_target_model()
    Z = one_target_scan(np.random.default_rng(4))
    a = run_filter("pmbm", Z, model)
    b = run_filter("pmb", Z, model)
    for x, y in zip(a, b, strict=True):
        assert len(x.hypotheses) == 1
        np.testing.assert_allclose(x.hypotheses[0].r, y.hypotheses[0].r)
        np.testing.assert_allclose(x.hypotheses[0].means, y.hypotheses[0].means)
        np.testing.assert_allclose(x.hypotheses[0].densities.covs, y.hypotheses[0].densities.covs)
        np.testing.assert_allclose(x.ppp.weights, y.ppp.weights)


def test_filters_keep_stable_track_labels():
    model = single_target_model()
    Z = one_target_scan(np.random.default_rng(5))
    labels = {tuple(p.hypotheses[0].labels) for p in run_filter("pmbm", Z, model)}
    assert len(labels) == 1


def test_predict_keeps_probabilities():
    sc = get_scenario("chalmers", steps=5)
    sim = simulate(sc, np.random.default_rng(0))
    for name in FAMILY:
        for post in run_filter(name, sim.measurements, sc.model):
            assert abs(post.weights.sum() - 1) < 1e-9
            for mb in post.hypotheses:
                assert np.all((mb.r >= 0) & (mb.r <= 1))
