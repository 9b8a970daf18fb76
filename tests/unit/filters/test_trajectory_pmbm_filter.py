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
from support.trajectory_filter_cases import make_model, scene, simulate_one, smoother_joint

import nllbench as nb
from nllbench.engine.trajectory_density import TrueTrajectory, trajectory_density_nll
from nllbench.filters.pmbm import PMBMSettings, run_pmbm
from nllbench.filters.tpmbm import run_tpmbm


@pytest.mark.parametrize("K", [1, 2, 7])
def test_single_object_density_is_the_smoother(K):
    rng = np.random.default_rng(K)
    model = make_model()
    X, Z = simulate_one(model, K, rng)
    state = run_tpmbm(Z, model).states[-1]
    density = state.to_density(model)
    mean, cov = smoother_joint(model, Z)
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


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_alive_marginal_equals_the_pmbm_filter(seed):
    """With one undetected component gated at a time (births pruned after one miss) and no existence
    pruning, the absorption of the trajectory filter and the PMBM's moment matching coincide, and so do
    the hypotheses: the per-frame marginal of the trajectory posterior is the PMBM filter's posterior."""
    rng = np.random.default_rng(seed)
    model = make_model(p_s=0.95, p_d=0.8, clutter=1.0, birth_w=[0.02], initial_w=0.02, q=0.1)
    settings = PMBMSettings(ppp_floor=0.005, existence_floor=0.0)
    Z, truth = scene(model, 8, rng)
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
    model = make_model(p_s=0.95, p_d=0.8, clutter=1.0, birth_w=[0.02], initial_w=0.5, q=0.1)
    Z, truth = scene(model, 10, rng)
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
    model = make_model()
    X, Z = simulate_one(model, 6, rng)
    density = run_tpmbm(Z, model).states[-1].to_density(model)
    states, labels = estimate_trajectories(density)
    mean, _ = smoother_joint(model, Z)
    assert np.concatenate(states) == pytest.approx(mean.reshape(6, 4), abs=1e-9)
    assert all(len(x) == 1 for x in labels) and len({int(x[0]) for x in labels}) == 1


def test_hostile_trajectory_posterior_files_are_refused(tmp_path):
    """A variable of the wrong kind, a dangling index, another content: SchemaError naming the file."""
    import xarray as xr

    from nllbench.store import SchemaError
    from nllbench.store.trajectory_posterior import read_trajectory_posterior, write_trajectory_posterior

    model = make_model()
    X, Z = simulate_one(model, 3, np.random.default_rng(0))
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
    model = make_model(p_s=0.8, p_d=0.7, clutter=2.0, birth_w=[0.05], initial_w=0.5, q=0.1)
    settings = PMBMSettings(existence_floor=0.05)
    Z, truth = scene(model, 14, rng, n_objects=3)
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
