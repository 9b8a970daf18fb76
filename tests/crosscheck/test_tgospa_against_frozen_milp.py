"""The exact T-GOSPA against the frozen MILP it replaced: same values to 1e-12.

The MILP is frozen in tests/support/_tgospa_reference.py.

Random scenes of every shape the solver distinguishes: labelled and
unlabelled (a fresh estimate identity every frame) estimates, sparse and
crowded boxes, cut-offs, orders and switch costs from far below to far above
c (a small gamma makes the truths' own optimal paths collide, so the joint
route runs), and empty sides.
"""

from __future__ import annotations

import numpy as np
import pytest
from support._tgospa_reference import tgospa as frozen
from support.tgospa_bruteforce import random_case

from nllbench.measures._sequences import labelled_sequence
from nllbench.measures.tgospa import tgospa
from nllbench.measures.tracks._tgospa import close as close_module
from nllbench.measures.tracks._tgospa import group, solver


def case(seed: int):
    """A random scene and settings (c, p, gamma) drawn from ``seed``."""
    rng = np.random.default_rng(seed)
    K = int(rng.integers(1, 40))
    n, m = int(rng.integers(0, 7)), int(rng.integers(0, 7))
    T, TI, E, EI = random_case(rng, K, n, m, box=float(rng.choice([2.0, 4.0, 8.0])))
    if seed % 3 == 1:  # unlabelled estimates
        EI = [1000 + 10 * k + np.arange(len(e)) for k, e in enumerate(E)]
    c = float(rng.choice([0.5, 1.0, 2.0]))
    p = float(rng.choice([1.0, 1.5, 2.0]))
    gamma = float(rng.choice([0.1, 0.3, 1.0, 2.0, 5.0]))
    return (T, TI, E, EI), c, p, gamma


def check(seed: int) -> None:
    scene, c, p, gamma = case(seed)
    want = frozen(*scene, c=c, p=p, gamma=gamma)
    got = tgospa(*scene, c=c, p=p, gamma=gamma)
    assert got.value == pytest.approx(want.value, rel=1e-12, abs=1e-300)
    assert got.localization + got.missed + got.false + got.switches == pytest.approx(got.value**p, rel=1e-12)
    assert got.exact and got.assignment.shape == want.assignment.shape


@pytest.mark.parametrize("seed", range(50))
def test_equals_the_frozen_milp(seed):
    check(seed)


@pytest.mark.slow
def test_equals_the_frozen_milp_on_500_cases():
    for seed in range(50, 550):
        check(seed)


def test_the_joint_route_runs_in_these_cases():
    """At least some of the 50 default cases need the joint solve (truths' own paths collide)."""
    joint = 0
    for seed in range(50):
        (T, TI, E, EI), c, p, gamma = case(seed)
        X = labelled_sequence(T, TI, "truth", "truth_ids")
        Y = labelled_sequence(E, EI, "estimates", "estimate_ids", frames=X.frames)
        _, stats = solver.exact_assignment(close_module.close_entries(X, Y, c, p), gamma**p)
        joint += bool(stats.groups)
    assert joint >= 5


@pytest.mark.parametrize("seed", range(0, 50, 2))
def test_every_group_by_the_mixed_integer_programme(seed, monkeypatch):
    """The fallback route alone (each colliding group straight to the MILP) gives the same values."""
    monkeypatch.setattr(solver, "solve_group", lambda close, members, switch: (None, 0))
    check(seed)


@pytest.mark.parametrize("seed", range(1, 50, 2))
def test_a_tight_joint_budget_forces_price_steps(seed, monkeypatch):
    """With at most two joint states per frame the prices must do the work (or the MILP takes over)."""
    monkeypatch.setattr(group, "MAX_JOINT_STATES", 2)
    monkeypatch.setattr(group, "FIRST_JOINT_WORK", 1)
    check(seed)


def test_unlabelled_estimates_take_memory_linear_in_frames():
    """A fresh estimate identity every frame: nothing of size frames x identities is built
    (the MILP this replaced took 0.6 GB at 100 frames and 7.2 GB at 400)."""
    import tracemalloc

    rng = np.random.default_rng(7)
    T, TI, E, _ = random_case(rng, 400, 6, 6, box=6.0)
    EI = [10 * k + np.arange(len(e)) for k, e in enumerate(E)]
    tracemalloc.start()
    r = tgospa(T, TI, E, EI, c=1.0, p=1, gamma=1.0)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert r.exact and peak < 20e6


def swapping_scene(rng, K: int, n: int, crowd: float):
    """n trajectories born and dying at random; estimates with noise, gaps, an identity swap every
    7 frames and one-frame false tracks; ``crowd`` < 1 packs them together (more contests)."""
    start = rng.integers(0, K // 2, n)
    stop = start + rng.integers(K // 3, K, n)
    pos = rng.uniform(0, 20, (n, 2))
    vel = rng.normal(0, 1, (n, 2))
    labels = np.arange(n) + 1000
    T, TI, E, EI = [], [], [], []
    for k in range(K):
        pos = pos + vel
        alive = np.flatnonzero((start <= k) & (k < stop))
        T.append(crowd * pos[alive])
        TI.append(alive)
        if k % 7 == 3:
            i, j = rng.choice(n, 2, replace=False)
            labels[[i, j]] = labels[[j, i]]
        seen = alive[rng.random(alive.size) < 0.85]
        false = rng.uniform(0, 20, (int(rng.poisson(1.0)), 2))
        E.append(crowd * np.concatenate([pos[seen] + rng.normal(0, 0.5, (seen.size, 2)), false]))
        EI.append(np.concatenate([labels[seen], 5000 + 10 * k + np.arange(false.shape[0])]))
    return T, TI, E, EI


@pytest.mark.parametrize("seed", range(8))
def test_swapped_identities_make_large_groups_and_values_stay(seed):
    """Identities passed between trajectories make post-holds meet later uses: groups of several truths
    solved by the joint Viterbi over stretches and components."""
    rng = np.random.default_rng(100 + seed)
    scene = swapping_scene(rng, 60, 8, crowd=float(rng.choice([0.1, 0.3, 1.0])))
    c, p, gamma = 2.0, float(rng.choice([1.0, 2.0])), float(rng.choice([0.5, 2.0, 4.0]))
    want = frozen(*scene, c=c, p=p, gamma=gamma).value
    assert tgospa(*scene, c=c, p=p, gamma=gamma).value == pytest.approx(want, rel=1e-12)
