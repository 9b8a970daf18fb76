"""The trajectory PMB filter for the set of all trajectories (nllbench.filters.tpmb).

* One global hypothesis (one object, certain detection, no clutter): the
  projection has nothing to merge and the filter is the trajectory PMBM.
* The projection keeps, for every track and end time, the probability of
  existing with that end and the first two moments of the stacked states of
  the mixture it replaces (a Kullback-Leibler projection per end time), with
  moments computed by stacking the chains' joint Gaussians (not the kernels).
* Its per-frame marginal is the per-frame PMB filter's posterior where the two
  filters' approximations coincide (one undetected component gated at a time,
  no existence pruning): same hypotheses, same projection of the alive part.
* The exact NLL of its posterior equals the brute force of
  tests/test_trajectory_density_nll.py (whose end-time recursion starts from
  the projected Bernoullis' ended prefixes).
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy.special import logsumexp
from support.trajectory_density_bruteforce import brute_force, end_distribution, prefix_law
from support.trajectory_filter_cases import make_model, scene, simulate_one, smoother_joint

import nllbench as nb
from nllbench.engine.trajectory_density import (
    TrueTrajectory,
    bernoulli_log_end,
    estimate_trajectories,
    trajectory_density_nll,
    truth_trajectories,
)
from nllbench.filters import PMBMSettings, run_trajectory_final
from nllbench.filters.pmbm import run_pmbm
from nllbench.filters.tpmb import project, run_tpmb
from nllbench.filters.tpmbm import correct, predict, run_tpmbm


@pytest.mark.parametrize("K", [1, 2, 7])
@pytest.mark.parametrize("p_s", [1.0, 0.9])
def test_one_hypothesis_tpmb_is_tpmbm(K, p_s):
    rng = np.random.default_rng(10 + K)
    model = make_model(p_s=p_s)
    X, Z = simulate_one(model, K, rng)
    a = run_tpmb(Z, model).states[-1].to_density(model)
    b = run_tpmbm(Z, model).states[-1].to_density(model)
    assert a.assoc.shape[0] == b.assoc.shape[0] == 1
    Y = X + rng.normal(0, 0.7, X.shape)
    for states in (X, Y, X[: max(K - 2, 1)]):
        va = trajectory_density_nll(a, [TrueTrajectory(0, states)], q=3, exact=True)
        vb = trajectory_density_nll(b, [TrueTrajectory(0, states)], q=3, exact=True)
        assert va.exact == pytest.approx(vb.exact, abs=1e-9, rel=0)
        assert va.value == pytest.approx(vb.value, abs=1e-9, rel=0)
    if p_s == 1.0:
        mean, cov = smoother_joint(model, Z)
        want = -float(nb_logpdf(X.ravel(), mean, cov))
        assert trajectory_density_nll(a, [TrueTrajectory(0, X)]).value == pytest.approx(want, abs=1e-9)
    ea, eb = estimate_trajectories(a), estimate_trajectories(b)
    for x, y in zip(ea[0], eb[0], strict=True):
        assert x == pytest.approx(y, abs=1e-9)


def nb_logpdf(x, mean, cov):
    from scipy.stats import multivariate_normal

    return multivariate_normal(mean, cov).logpdf(x)


def _stacked_moments(density, last, L):
    """Mean (L d,) and covariance of the chain ending at node ``last`` cut after its first L states (the
    density of a trajectory that ended then), by stacking the filtered nodes' joint Gaussian backwards
    from the node at the end (no kernel factorisation)."""
    nodes = []
    while last >= 0:
        nodes.append(last)
        last = int(density.node_parent[last])
    nodes = nodes[::-1][:L]
    n = len(nodes)
    m, C = [None] * n, [[None] * n for _ in range(n)]
    m[-1], C[-1][-1] = density.node_mean[nodes[-1]], density.node_cov[nodes[-1]]
    F, Q = density.F, density.Q
    for s in range(n - 2, -1, -1):
        P, ms = density.node_cov[nodes[s]], density.node_mean[nodes[s]]
        G = P @ F.T @ np.linalg.inv(F @ P @ F.T + Q)
        m[s] = G @ m[s + 1] + ms - G @ F @ ms
        for t in range(s + 1, n):
            C[s][t] = G @ C[s + 1][t]
            C[t][s] = C[s][t].T
        C[s][s] = G @ C[s + 1][s + 1] @ G.T + (P - G @ F @ P)
    return np.concatenate(m), np.block(C)


def _mass(density, s, e):
    """P(Bernoulli s exists and ends at e)."""
    log_r, log_D = density.bernoulli_terms()
    lu = float(bernoulli_log_end(density, s, e)[0])
    return math.exp(math.log(density.r_last[s]) + lu - log_D[s]) if lu > -math.inf else 0.0


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_projection_keeps_each_end_times_mass_and_moments(seed):
    rng = np.random.default_rng(seed)
    model = make_model(p_s=0.9, p_d=0.8, clutter=1.0, birth_w=[0.05], initial_w=0.5, q=0.1)
    Z, _ = scene(model, 6, rng, n_objects=3, clutter=1.5)
    state = run_tpmb(Z[:-1], model).states[-1]
    corrected = correct(predict(state, model), Z[-1], model, PMBMSettings())
    mix = corrected.to_density(model)
    w = np.exp(mix.log_weights)
    proj = project(corrected, model).to_density(model)
    k = proj.time
    merged = 0
    for t, label in enumerate(proj.track_labels.tolist()):
        (tm,) = np.flatnonzero(mix.track_labels == label)
        col = mix.assoc[:, tm]
        (sp,) = np.flatnonzero(proj.assoc[0] == t)
        sp = int(proj.assoc[0, sp])
        merged += np.unique(col[col >= 0]).size > 1
        b = int(proj.start[sp])
        total = 0.0
        for e in range(b, k + 1):
            parts = [(w[h], int(col[h]), _mass(mix, int(col[h]), e)) for h in range(w.size) if col[h] >= 0]
            want = sum(wh * m for wh, _, m in parts)
            got = _mass(proj, sp, e)
            total += got
            assert got == pytest.approx(want, rel=1e-9, abs=1e-14), (t, e)
            if want <= 0:
                continue
            L = e - b + 1
            mom = [(wh * m, *_stacked_moments(mix, int(mix.node[s]), L)) for wh, s, m in parts if m > 0]
            c = np.array([x[0] for x in mom])
            c = c / c.sum()
            mean = sum(ci * x[1] for ci, x in zip(c, mom, strict=True))
            cov = sum(ci * (x[2] + np.outer(x[1] - mean, x[1] - mean)) for ci, x in zip(c, mom, strict=True))
            pm, pc = _stacked_moments(proj, int(proj.node[sp]), L)
            assert pm == pytest.approx(mean, abs=1e-8)
            assert pc == pytest.approx(cov, abs=1e-8)
        assert total == pytest.approx(math.exp(proj.bernoulli_terms()[0][sp]), rel=1e-9)
    assert merged > 0  # the case is not trivial: some track had several local hypotheses


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("before", [False, True])
def test_alive_marginal_equals_the_pmb_filter(seed, before):
    """Same conditions as the trajectory PMBM's comparison with the PMBM filter: then the hypotheses of
    each update are the same, and the trajectory PMB's projection of the alive part (existence
    sum_c W_c r_c P_c(alive), moment-matched last state) is the PMB filter's (Williams 2015)."""
    rng = np.random.default_rng(seed)
    model = make_model(p_s=0.95, p_d=0.8, clutter=1.0, birth_w=[0.02], initial_w=0.02, q=0.1)
    settings = PMBMSettings(ppp_floor=0.005, existence_floor=0.0, project_before_cap=before)
    Z, truth = scene(model, 8, rng)
    t_states = run_tpmb(Z, model, settings).states
    p_states = run_pmbm(Z, model, "pmb", settings).states
    for k, (ts, ps) in enumerate(zip(t_states, p_states, strict=True)):
        a = ts.alive_marginal(model)
        b = ps.to_density(with_ppp=True)
        assert len(a.weights) == len(b.weights) == 1
        assert a.ppp.total_rate == pytest.approx(b.ppp.total_rate, rel=1e-12)
        for y in (truth[k], truth[k][:1], np.empty((0, 4))):
            na, nb_ = nb.nll(a, y, q=50).value, nb.nll(b, y, q=50).value
            assert na == pytest.approx(nb_, abs=1e-8), (k, len(y))


@pytest.mark.parametrize("seed", range(6))
def test_exact_nll_equals_brute_force(seed):
    rng = np.random.default_rng(100 + seed)
    model = make_model(p_s=0.85, p_d=0.75, clutter=1.0, birth_w=[0.05], initial_w=0.5, q=0.1)
    Z, truth = scene(model, 5, rng, n_objects=2, clutter=1.0)
    density = run_tpmb(Z, model).states[-1].to_density(model)
    assert density.assoc.shape[0] == 1
    truths = truth_trajectories(truth, [np.arange(len(x)) for x in truth])
    # a truth that ended early, and one shifted by a few standard deviations
    truths = truths + [TrueTrajectory(0, truths[0].states[:2] + 0.5)]
    want = brute_force(density, truths)
    res = trajectory_density_nll(density, truths, q=1, exact=True)
    big = trajectory_density_nll(density, truths, q=200)
    assert math.isfinite(want)
    assert res.exact == pytest.approx(want, abs=1e-9)
    assert big.value == pytest.approx(want, abs=1e-9)
    assert res.lower <= want + 1e-9 <= res.value + 2e-9
    # every Bernoulli's whole end-time law against the brute force's recursion from its prefix
    for sb in range(density.start.shape[0]):
        g = int(density.prefix[sb])
        r, probs = end_distribution(
            float(density.r_last[sb]), int(density.t_last[sb]), int(density.cut[sb]), density.time,
            density.updated, density.p_survival, density.p_detection,
            None if g < 0 else (float(density.seg_ended[g]), prefix_law(density, g)),
        )  # fmt: skip
        for e in range(int(density.start[sb]), density.time + 1):
            assert _mass(density, sb, e) == pytest.approx(r * probs.get(e, 0.0), rel=1e-9, abs=1e-15)


def test_prefixes_occur_in_the_brute_force_cases():
    """The brute-force cases above hold projected Bernoullis with an ended prefix (not only the PMBM's)."""
    n = 0
    for seed in range(6):
        rng = np.random.default_rng(100 + seed)
        model = make_model(p_s=0.85, p_d=0.75, clutter=1.0, birth_w=[0.05], initial_w=0.5, q=0.1)
        Z, _ = scene(model, 5, rng, n_objects=2, clutter=1.0)
        d = run_tpmb(Z, model).states[-1].to_density(model)
        n += int(np.sum(d.prefix >= 0))
        assert d.seg_t0.size == 0 or logsumexp(np.log(d.seg_ended)) > -math.inf
    assert n >= 3


def test_posterior_file_round_trip(tmp_path):
    from nllbench.store.trajectory_posterior import read_trajectory_posterior, write_trajectory_posterior

    rng = np.random.default_rng(4)
    model = make_model(p_s=0.9, p_d=0.8, clutter=1.0, birth_w=[0.02], initial_w=0.5, q=0.1)
    Z, truth = scene(model, 10, rng)
    density = run_trajectory_final("tpmb", Z, model).to_density(model)
    assert np.any(density.prefix >= 0)
    path = tmp_path / "t.nc"
    write_trajectory_posterior(density, path, {"filter": "tpmb"})
    back, attrs = read_trajectory_posterior(path)
    assert attrs["filter"] == "tpmb"
    assert back.seg_t0.size <= density.seg_t0.size
    truths = truth_trajectories(truth, [np.arange(len(x)) for x in truth])
    a = trajectory_density_nll(density, truths, q=20)
    b = trajectory_density_nll(back, truths, q=20)
    assert a.value == b.value and a.lower == b.lower and a.terms == b.terms
    # a file without the segments (the PMBM's) has none; a segment file missing one variable is refused
    import xarray as xr

    from nllbench.store._netcdf import SchemaError

    ds = xr.open_dataset(path).load()
    ds.drop_vars("seg_beta").to_netcdf(tmp_path / "bad.nc")
    with pytest.raises(SchemaError, match="bad.nc.*seg_beta"):
        read_trajectory_posterior(tmp_path / "bad.nc")
    for name, value, message in (
        ("seg_ended", 1.0, "seg_ended: expected probabilities in"),
        ("seg_parent", 10**6, "seg_parent: expected an earlier segment"),
        ("seg_t1", -1, "prefix: expected each Bernoulli's segment to end at its t_last"),
    ):
        bad = ds.copy(deep=True)
        bad[name].values[...] = value
        bad.to_netcdf(tmp_path / "bad2.nc")
        with pytest.raises(SchemaError, match=f"bad2.nc: trajectory posterior: {message}"):
            read_trajectory_posterior(tmp_path / "bad2.nc")


def test_cli_filter_tpmb_and_evaluate(tmp_path, capsys):
    from nllbench.cli import main

    scenario, post, record = tmp_path / "s.nc", tmp_path / "t.nc", tmp_path / "r.json"
    argv = ["simulate", "--scenario", "williams15", "--seed", "1", "--steps", "10", "--clutter-rate", "2"]
    assert main([*argv, "-o", str(scenario)]) == 0
    assert main(["filter", "-q", "--filter", "tpmb", str(scenario), "-o", str(post)]) == 0
    assert "tpmb, a trajectory posterior of 10 steps" in capsys.readouterr().out
    assert main(["evaluate-trajectory", str(post), str(scenario), "--q", "5", "-o", str(record)]) == 0
    rec = json.loads(record.read_text())
    assert rec["filter"] == "tpmb" and rec["lower"] <= rec["value"] == rec["upper"] < math.inf
    assert rec["tgospa"] >= 0 and 0 <= rec["idf1"] <= 1
