"""The exact NLL of a true set of trajectories under a trajectory PMBM density
(nllbench.engine.trajectory_density), against brute force.

The brute force shares no code with the engine: each Bernoulli's end-time
distribution and existence come from stepping the filter's recursion (predict:
survive or end; update: missed detection), its state density from the full
stacked joint Gaussian of the node chain (not the factorised kernels), the
undetected intensity from the prior chain's stacked Gaussian, and the sum runs
over every assignment of every hypothesis.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.special import logsumexp
from scipy.stats import multivariate_normal

from nllbench.engine.trajectory_density import TrajectoryPMBM, TrueTrajectory, trajectory_density_nll
from nllbench.simulation.models import cv_matrices

D = 4


def _spd(rng, scale=1.0):
    A = rng.normal(size=(D, D))
    return scale * (A @ A.T / D + 0.5 * np.eye(D))


def _random_density(rng, time, updated, S=3, J=2, H=2):
    F, Q = cv_matrices(1.0, 0.5)
    p_s, p_d = float(rng.uniform(0.6, 0.97)), float(rng.uniform(0.3, 0.95))
    nt, npar, nm, nP = [], [], [], []

    def chain(b, last):
        parent = -1
        for t in range(b, last + 1):
            nt.append(t)
            npar.append(parent)
            nm.append(rng.normal(0, 2, D))
            nP.append(_spd(rng))
            parent = len(nt) - 1
        return parent

    start, r_last, t_last, cut, node = [], [], [], [], []
    for _ in range(S):
        b = int(rng.integers(0, time + 1))
        tl = int(rng.integers(b, time + 1))
        c = -1 if rng.uniform() < 0.6 else int(rng.integers(tl, time + 1))
        start.append(b)
        r_last.append(1.0 if rng.uniform() < 0.25 else float(rng.uniform(0.2, 0.99)))
        t_last.append(tl)
        cut.append(c)
        node.append(chain(b, time if c < 0 else c))
    track = np.arange(S)
    assoc = np.array([[s if rng.uniform() < 0.8 else -1 for s in range(S)] for _ in range(H)])
    lw = np.log(rng.dirichlet(np.ones(H)))
    ps_start, ps_w, ps_node, ps_cut = [], [], [], []
    for _ in range(J):
        b = int(rng.integers(0, time + 1))
        c = -1 if rng.uniform() < 0.5 else int(rng.integers(b, time + 1))
        ps_start.append(b)
        ps_w.append(float(rng.uniform(0.1, 1.0)))
        ps_cut.append(c)
        ps_node.append(chain(b, time if c < 0 else c))
    return TrajectoryPMBM(
        time, updated, F, Q, p_s, p_d, np.array(nt), np.array(npar), np.array(nm), np.array(nP),
        np.array(start), np.array(r_last), np.array(t_last), np.array(cut), np.array(node), track,
        np.arange(S) + 10, assoc, lw, np.array(ps_start), np.array(ps_w), np.array(ps_node), np.array(ps_cut),
    )  # fmt: skip


def _end_distribution(r, t_last, cut, time, updated, p_s, p_d):
    """(r now, {end: probability}) by stepping the recursion from the last detection."""
    ended, alive = {}, 1.0

    def miss(r, alive):
        tot = alive + sum(ended.values())
        a = alive / tot
        return r * (1 - p_d * a) / (1 - r * p_d * a), alive * (1 - p_d)

    for t in range(t_last, time + 1):
        if t > t_last:
            ended[t - 1] = alive * (1 - p_s)
            alive *= p_s
            if t < time or updated:
                r, alive = miss(r, alive)
        if t == cut:
            tot = alive + sum(ended.values())
            a = alive / tot
            r, alive = (r * (1 - a) / (1 - r * a) if r * a < 1 else 0.0), 0.0
            break
    tot = alive + sum(ended.values())
    probs = {e: v / tot for e, v in ended.items()} if tot > 0 else {}
    if tot > 0:
        probs[time] = alive / tot
    return (r if tot > 0 else 0.0), probs


def _stacked_logpdf(density, last, states):
    """The full stacked joint Gaussian of the chain ending at node ``last`` (first len(states) nodes)."""
    nodes = []
    while last >= 0:
        nodes.append(last)
        last = int(density.node_parent[last])
    nodes = nodes[::-1][: len(states)]
    L = len(nodes)
    m = [None] * L
    C = [[None] * L for _ in range(L)]
    m[-1], C[-1][-1] = density.node_mean[nodes[-1]], density.node_cov[nodes[-1]]
    F, Q = density.F, density.Q
    for s in range(L - 2, -1, -1):
        P = density.node_cov[nodes[s]]
        ms = density.node_mean[nodes[s]]
        G = P @ F.T @ np.linalg.inv(F @ P @ F.T + Q)
        m[s] = G @ m[s + 1] + ms - G @ F @ ms
        for t in range(s + 1, L):
            C[s][t] = G @ C[s + 1][t]
            C[t][s] = C[s][t].T
        C[s][s] = G @ C[s + 1][s + 1] @ G.T + (P - G @ F @ P)
    cov = np.block(C)
    return multivariate_normal(np.concatenate(m), 0.5 * (cov + cov.T)).logpdf(np.ravel(states))


def _prior_logpdf(density, root, states):
    F, Q = density.F, density.Q
    L = len(states)
    m = [density.node_mean[root]]
    C = [[density.node_cov[root]]]
    for t in range(1, L):
        m.append(F @ m[-1])
        row = [F @ C[t - 1][s] for s in range(t)]
        C.append(row + [F @ C[t - 1][t - 1] @ F.T + Q])
    full = [[C[max(a, b)][min(a, b)] if a >= b else C[b][a].T for b in range(L)] for a in range(L)]
    return multivariate_normal(np.concatenate(m), np.block(full)).logpdf(np.ravel(states))


def _brute_force(density, truths):
    k, p_s, p_d = density.time, density.p_survival, density.p_detection
    S = density.start.shape[0]
    log_r1, log_1mr, ends = np.zeros(S), np.zeros(S), []
    for s in range(S):
        r, probs = _end_distribution(
            float(density.r_last[s]),
            int(density.t_last[s]),
            int(density.cut[s]),
            k,
            density.updated,
            p_s,
            p_d,
        )
        log_r1[s] = math.log(r) if r > 0 else -math.inf
        log_1mr[s] = math.log1p(-r) if r < 1 else -math.inf
        ends.append(probs)

    def bern(s, y):
        p = ends[s].get(y.end, 0.0)
        if y.start != density.start[s] or p == 0 or log_r1[s] == -math.inf:
            return -math.inf
        return log_r1[s] + math.log(p) + _stacked_logpdf(density, int(density.node[s]), y.states)

    # undetected: each component's end masses by the same stepping, from its birth
    rate, lam = 0.0, np.full(len(truths), -math.inf)
    for c in range(density.ppp_start.shape[0]):
        b, cut = int(density.ppp_start[c]), int(density.ppp_cut[c])
        w, masses = float(density.ppp_weight[c]), {}
        for t in range(b, k + 1):
            if t > b:
                masses[t - 1] = w * (1 - p_s)
                w *= p_s
            if t < k or density.updated:
                w *= 1 - p_d
            if t == cut:
                w = 0.0
                break
        for e in [e for e in masses if cut >= 0 and e >= cut]:
            del masses[e]
        masses[k] = w
        rate += sum(masses.values())
        node = int(density.ppp_node[c])
        while density.node_parent[node] >= 0:
            node = int(density.node_parent[node])
        root = node
        for j, y in enumerate(truths):
            if y.start == b and masses.get(y.end, 0.0) > 0:
                lam[j] = np.logaddexp(
                    lam[j], math.log(masses[y.end]) + _prior_logpdf(density, root, y.states)
                )
    total = -math.inf
    n = len(truths)
    for h in range(density.assoc.shape[0]):
        members = density.assoc[h][density.assoc[h] >= 0].tolist()
        W = np.array([[bern(s, y) for y in truths] for s in members]).reshape(len(members), n)
        terms = []
        for choice in itertools.product(range(-1, len(members)), repeat=n):
            used = [c for c in choice if c >= 0]
            if len(used) != len(set(used)):
                continue
            v = sum(W[c, j] if c >= 0 else lam[j] for j, c in enumerate(choice))
            v += sum(log_1mr[members[i]] for i in range(len(members)) if i not in used)
            terms.append(v)
        total = np.logaddexp(total, density.log_weights[h] + logsumexp(terms))
    return rate - total


def _truths(rng, density, n):
    """Truths that a Bernoulli or undetected component can (mostly) explain: start, end in its support."""
    out = []
    S, J, k = density.start.shape[0], density.ppp_start.shape[0], density.time
    for _ in range(n):
        i = int(rng.integers(0, S + J))
        if i < S:
            b, lo, cut = int(density.start[i]), int(density.t_last[i]), int(density.cut[i])
        else:
            b, cut = int(density.ppp_start[i - S]), int(density.ppp_cut[i - S])
            lo = b
        ends = list(range(lo, cut if cut >= 0 else k)) + ([k] if cut < 0 else [])
        e = int(rng.choice(ends)) if ends and rng.uniform() < 0.9 else int(rng.integers(b, k + 1))
        out.append(TrueTrajectory(b, rng.normal(0, 2, (e - b + 1, D))))
    return out


@pytest.mark.parametrize("seed", range(40))
def test_exact_nll_equals_brute_force(seed):
    rng = np.random.default_rng(seed)
    time = int(rng.integers(0, 5))
    density = _random_density(rng, time, bool(rng.uniform() < 0.7))
    truths = _truths(rng, density, int(rng.integers(0, 5)))
    want = _brute_force(density, truths)
    res = trajectory_density_nll(density, truths, q=1, exact=True)
    big = trajectory_density_nll(density, truths, q=200)
    if want == math.inf:
        assert res.exact == math.inf and big.value == math.inf
        return
    assert res.exact == pytest.approx(want, abs=1e-9)
    assert big.value == pytest.approx(want, abs=1e-9)
    assert res.lower <= want + 1e-9 <= res.value + 2e-9
    assert sum(res.terms.values()) == pytest.approx(res.value, abs=1e-9)


def test_refusals_name_the_input():
    rng = np.random.default_rng(0)
    density = _random_density(rng, 2, True)
    with pytest.raises(ValueError, match="q: expected a positive integer"):
        trajectory_density_nll(density, [], q=0)
    from nllbench.engine.trajectory_density import truth_trajectories

    x = np.zeros((1, 4))
    with pytest.raises(ValueError, match="trajectory 7 has a gap"):
        truth_trajectories([x, np.zeros((0, 4)), x], [np.array([7]), np.array([], dtype=int), np.array([7])])
    fields = {k: getattr(density, k) for k in density.__dataclass_fields__}
    bad = dict(fields, node_parent=np.where(density.node_parent >= 0, 0, -1))
    if np.any(
        density.node_time[bad["node_parent"][bad["node_parent"] >= 0]]
        != density.node_time[bad["node_parent"] >= 0] - 1
    ):
        with pytest.raises(ValueError, match="node_parent: expected each parent one step before"):
            TrajectoryPMBM(**bad)
    with pytest.raises(ValueError, match="r_last: expected existence probabilities"):
        TrajectoryPMBM(**dict(fields, r_last=np.zeros_like(density.r_last)))
    with pytest.raises(ValueError, match="assoc: expected Bernoulli indices"):
        TrajectoryPMBM(**dict(fields, assoc=density.assoc + 10))


def test_a_truth_never_detected_is_explained_by_the_ended_undetected_part():
    """An undetected component that was cut keeps its ended trajectories: a truth that ended before the
    cut has finite likelihood through it alone."""
    rng = np.random.default_rng(1)
    for _ in range(20):
        density = _random_density(rng, 4, True, S=0, J=1, H=1)
        b, cut = int(density.ppp_start[0]), int(density.ppp_cut[0])
        if cut > b:
            break
    else:
        pytest.fail("no cut component with an ended part drawn")
    y = TrueTrajectory(b, rng.normal(0, 1, (cut - b, D)))  # ends at cut - 1
    value = trajectory_density_nll(density, [y], exact=True).exact
    assert np.isfinite(value)
    assert value == pytest.approx(_brute_force(density, [y]), abs=1e-9)
