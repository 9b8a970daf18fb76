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

import math

import numpy as np
import pytest
from support.trajectory_density_bruteforce import brute_force

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
    want = brute_force(density, truths)
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
    assert value == pytest.approx(brute_force(density, [y]), abs=1e-9)
