"""The trajectory PMBM filter for the set of all trajectories (nllbench.filters.tpmbm).

Closed forms: one object, no clutter, certain detection and survival: the
filter's trajectory density is the Kalman smoother's joint density (a batch
Gaussian conditioning here) and its NLL the Gaussian log density of the truth.
Where the filters' approximations coincide, its per-frame marginal is the PMBM
filter's posterior.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import multivariate_normal

import nllbench as nb
from nllbench.engine.gaussian_mixture import GaussianMixture
from nllbench.engine.trajectory_density import TrueTrajectory, trajectory_density_nll
from nllbench.filters.pmbm import PMBMSettings, run_pmbm
from nllbench.filters.tpmbm import run_tpmbm
from nllbench.simulation.models import POSITION_H, Model, cv_matrices


def _model(p_s=1.0, p_d=1.0, clutter=0.0, birth_w=(), initial_w=1.0, q=0.3):
    F, Q = cv_matrices(1.0, q)
    P0 = np.diag([4.0, 4.0, 1.0, 1.0])
    B = len(birth_w)
    birth = GaussianMixture(
        np.asarray(birth_w, dtype=float), np.tile([5.0, 5.0, 0.0, 0.0], (B, 1)).reshape(B, 4),
        np.tile(P0, (B, 1, 1)).reshape(B, 4, 4),
    )  # fmt: skip
    return Model(
        F=F, Q=Q, H=POSITION_H, R=0.5 * np.eye(2), p_survival=p_s, p_detection=p_d, clutter_rate=clutter,
        fov_low=[-50.0, -50.0], fov_high=[50.0, 50.0], birth=birth, birth_r=np.full(B, 0.01),
        initial=GaussianMixture([initial_w], [[0.0, 0.0, 1.0, 0.5]], [P0]),
    )  # fmt: skip


def _simulate_one(model, K, rng):
    x = rng.multivariate_normal(model.initial.means[0], model.initial.covs[0])
    X, Z = [], []
    for k in range(K):
        if k:
            x = model.F @ x + rng.multivariate_normal(np.zeros(4), model.Q)
        X.append(x)
        Z.append((model.H @ x + rng.multivariate_normal(np.zeros(2), model.R))[None, :])
    return np.array(X), Z


def _smoother_joint(model, Z):
    """The joint Gaussian of x_0..x_{K-1} given the measurements, by batch conditioning (no recursion)."""
    K, d = len(Z), 4
    A = np.zeros((K * d, K * d))  # X = A (x_0, w_1, ..., w_{K-1})
    for k in range(K):
        for s in range(k + 1):
            A[k * d : (k + 1) * d, s * d : (s + 1) * d] = np.linalg.matrix_power(model.F, k - s)
    noise = np.zeros((K * d, K * d))
    noise[:d, :d] = model.initial.covs[0]
    for k in range(1, K):
        noise[k * d : (k + 1) * d, k * d : (k + 1) * d] = model.Q
    mu = A @ np.concatenate([model.initial.means[0], np.zeros((K - 1) * d)])
    Sigma = A @ noise @ A.T
    Hb = np.kron(np.eye(K), model.H)
    Rb = np.kron(np.eye(K), model.R)
    S = Hb @ Sigma @ Hb.T + Rb
    G = Sigma @ Hb.T @ np.linalg.inv(S)
    z = np.concatenate([zk[0] for zk in Z])
    return mu + G @ (z - Hb @ mu), Sigma - G @ S @ G.T


@pytest.mark.parametrize("K", [1, 2, 7])
def test_single_object_density_is_the_smoother(K):
    rng = np.random.default_rng(K)
    model = _model()
    X, Z = _simulate_one(model, K, rng)
    state = run_tpmbm(Z, model).states[-1]
    density = state.to_density(model)
    mean, cov = _smoother_joint(model, Z)
    want = multivariate_normal(mean, cov).logpdf(X.ravel())
    res = trajectory_density_nll(density, [TrueTrajectory(0, X)], q=3, exact=True)
    assert density.total_undetected() == 0.0
    assert res.value == pytest.approx(-want, abs=1e-9, rel=0)
    assert res.exact == pytest.approx(-want, abs=1e-9, rel=0)
    assert res.lower == res.value
    assert sum(res.terms.values()) == pytest.approx(res.value, abs=1e-9)
    # any other state sequence: the same Gaussian (the density itself, not one point)
    Y = X + rng.normal(0, 0.7, X.shape)
    other = trajectory_density_nll(density, [TrueTrajectory(0, Y)], q=3)
    assert other.value == pytest.approx(-multivariate_normal(mean, cov).logpdf(Y.ravel()), abs=1e-9, rel=0)
    # a wrong start or end time has density 0
    assert trajectory_density_nll(density, [TrueTrajectory(1, X[1:])]).value == math.inf
    if K > 1:
        assert trajectory_density_nll(density, [TrueTrajectory(0, X[:-1])]).value == math.inf


def _scene(model, K, rng, n_objects=2, clutter=1.0):
    """Measurements of a few straight-moving objects plus uniform clutter; truths per step."""
    x = np.array([[-10.0, 0.0, 1.0, 0.2], [10.0, 0.0, -1.0, 0.1], [0.0, 10.0, 0.3, -1.0]])[:n_objects]
    Z, truth = [], []
    for k in range(K):
        if k:
            x = x @ model.F.T
        det = rng.uniform(size=len(x)) < model.p_detection
        z = x[det] @ model.H.T + rng.normal(0, math.sqrt(model.R[0, 0]), (int(det.sum()), 2))
        c = rng.uniform(-50, 50, (rng.poisson(clutter), 2))
        Z.append(np.concatenate([z, c]))
        truth.append(x.copy())
    return Z, truth


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_alive_marginal_equals_the_pmbm_filter(seed):
    """With one undetected component gated at a time (births pruned after one miss) and no existence
    pruning, the absorption of the trajectory filter and the PMBM's moment matching coincide, and so do
    the hypotheses: the per-frame marginal of the trajectory posterior is the PMBM filter's posterior."""
    rng = np.random.default_rng(seed)
    model = _model(p_s=0.95, p_d=0.8, clutter=1.0, birth_w=[0.02], initial_w=0.02, q=0.1)
    settings = PMBMSettings(ppp_floor=0.005, existence_floor=0.0)
    Z, truth = _scene(model, 8, rng)
    t_states = run_tpmbm(Z, model, settings).states
    p_states = run_pmbm(Z, model, "pmbm", settings).states
    for k, (ts, ps) in enumerate(zip(t_states, p_states, strict=True)):
        a = ts.alive_marginal(model)
        b = ps.to_density(with_ppp=True)
        assert np.sort(a.weights) == pytest.approx(np.sort(b.weights), rel=1e-9, abs=1e-12)
        assert a.ppp.total_rate == pytest.approx(b.ppp.total_rate, rel=1e-12)
        for y in (truth[k], truth[k][:1], np.empty((0, 4))):
            na, nb_ = nb.nll(a, y, q=50).value, nb.nll(b, y, q=50).value
            assert na == pytest.approx(nb_, abs=1e-8), (k, len(y))


def test_posterior_file_round_trip(tmp_path):
    """Written and read back, the density gives the same NLL to the last bit, with only reachable nodes."""
    from nllbench.engine.trajectory_density import truth_trajectories
    from nllbench.store.trajectory_posterior import (
        reachable_nodes,
        read_trajectory_posterior,
        write_trajectory_posterior,
    )

    rng = np.random.default_rng(4)
    model = _model(p_s=0.95, p_d=0.8, clutter=1.0, birth_w=[0.02], initial_w=0.5, q=0.1)
    Z, truth = _scene(model, 10, rng)
    density = run_tpmbm(Z, model).states[-1].to_density(model)
    path = tmp_path / "t.nc"
    write_trajectory_posterior(density, path, {"filter": "tpmbm"})
    back, attrs = read_trajectory_posterior(path)
    assert attrs["filter"] == "tpmbm"
    kept = reachable_nodes(density.node_parent, np.concatenate([density.node, density.ppp_node]))
    assert back.node_time.shape[0] == kept.size <= density.node_time.shape[0]
    truths = truth_trajectories(truth, [np.arange(len(x)) for x in truth])
    a = trajectory_density_nll(density, truths, q=20)
    b = trajectory_density_nll(back, truths, q=20)
    assert a.value == b.value and a.lower == b.lower and a.terms == b.terms
    assert back.total_undetected() == density.total_undetected()


def test_trajectory_estimate_is_the_smoother_mean():
    """One object, certain detection and survival: the estimate is the smoothed mean sequence."""
    from nllbench.engine.trajectory_density import estimate_trajectories

    rng = np.random.default_rng(3)
    model = _model()
    X, Z = _simulate_one(model, 6, rng)
    density = run_tpmbm(Z, model).states[-1].to_density(model)
    states, labels = estimate_trajectories(density)
    mean, _ = _smoother_joint(model, Z)
    assert np.concatenate(states) == pytest.approx(mean.reshape(6, 4), abs=1e-9)
    assert all(len(x) == 1 for x in labels) and len({int(x[0]) for x in labels}) == 1


def test_identity_study_rows():
    """The study's rows: every filter and measure on both conditions; the offsets move positions only."""
    import pandas as pd

    from nllbench.pipeline.identity_study import SEPARATING_OFFSETS, identity_rows, separated

    x = [np.arange(8.0).reshape(2, 4)]
    moved = separated(x, [np.array([0, 5])])[0]
    assert moved[:, :2] == pytest.approx(x[0][:, :2] + SEPARATING_OFFSETS[[0, 1]])
    assert moved[:, 2:] == pytest.approx(x[0][:, 2:])
    table = pd.DataFrame(identity_rows([0], steps=6))
    assert set(table["condition"]) == {"coalescence", "separated"}
    assert set(table["filter"]) == {"pmbm", "pmb", "tpmbm"}
    assert len(table) == 2 * (2 * 4 + 3)
    assert np.all(np.isfinite(table["value"]))


def test_hostile_trajectory_posterior_files_are_refused(tmp_path):
    """A variable of the wrong kind, a dangling index, another content: SchemaError naming the file."""
    import xarray as xr

    from nllbench.store import SchemaError
    from nllbench.store.trajectory_posterior import read_trajectory_posterior, write_trajectory_posterior

    model = _model()
    X, Z = _simulate_one(model, 3, np.random.default_rng(0))
    path = tmp_path / "t.nc"
    write_trajectory_posterior(run_tpmbm(Z, model).states[-1].to_density(model), path)
    ds = xr.open_dataset(path, decode_cf=False).load()
    for name, change, match in (
        ("bern_node", lambda a: a.astype(float), "'bern_node': expected integer values"),
        ("bern_node", lambda a: a + 1000, "node, ppp_node: expected node indices"),
        ("bern_r_last", lambda a: a * 0, "r_last: expected existence probabilities"),
    ):
        bad = ds.copy()
        bad[name] = (ds[name].dims, change(ds[name].values))
        out = tmp_path / f"{name}.nc"
        bad.to_netcdf(out)
        with pytest.raises(SchemaError, match=match):
            read_trajectory_posterior(out)
    other = ds.copy()
    other.attrs["content"] = "posterior"
    other.to_netcdf(tmp_path / "other.nc")
    with pytest.raises(SchemaError, match="expected a trajectory_posterior file"):
        read_trajectory_posterior(tmp_path / "other.nc")


def test_setting_aside_ended_bernoullis_changes_nothing(monkeypatch):
    """Ended Bernoullis held by every hypothesis leave the bookkeeping: the density (its NLL) is the same."""
    import nllbench.filters.tpmbm as tp
    from nllbench.engine.trajectory_density import estimate_trajectories, truth_trajectories

    rng = np.random.default_rng(5)
    model = _model(p_s=0.8, p_d=0.7, clutter=2.0, birth_w=[0.05], initial_w=0.5, q=0.1)
    settings = PMBMSettings(existence_floor=0.05)
    Z, truth = _scene(model, 14, rng, n_objects=3)
    with_aside = run_tpmbm(Z, model, settings).states[-1]
    assert len(with_aside.ended) > 0
    monkeypatch.setattr(tp, "_set_aside_ended", lambda state: state)
    without = run_tpmbm(Z, model, settings).states[-1]
    assert len(without.ended) == 0
    # truths the posterior can explain: its own trajectory estimate, moved a little
    density = without.to_density(model)
    truths = truth_trajectories(*estimate_trajectories(density))
    truths = [TrueTrajectory(y.start, y.states + rng.normal(0, 0.3, y.states.shape)) for y in truths]
    values = []
    for ys in (truths, truths[:-1]):
        a = trajectory_density_nll(with_aside.to_density(model), ys, q=30).value
        b = trajectory_density_nll(density, ys, q=30).value
        assert a == pytest.approx(b, rel=1e-12, abs=1e-9)
        values.append(a)
    assert np.isfinite(values[0])
