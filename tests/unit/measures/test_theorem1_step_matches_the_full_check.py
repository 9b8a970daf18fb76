"""The per-step Theorem 1 check (``theorem1_step``) gives the full check's sides, bit for bit.

The step takes the position columns as a view and the truth inside the field
of view (all of it without a copy); the reference takes them by fancy
indexing and calls the full check. Checked on random steps (truth partly
outside the field of view) and on the edges: no estimates, no truth, every
true object outside, ties.
"""

from __future__ import annotations

import types

import numpy as np

from nllbench.engine.transforms import POSITION
from nllbench.measures.likelihood.theorem1 import scale_for_k_equal_rho, theorem1
from nllbench.measures.run.stepwise import theorem1_step


def _view(states, truth, rho=0.9, scale=None):
    settings = types.SimpleNamespace(theorem_rho=rho, theorem_scale=scale)
    lo, hi = np.array([-200.0, -200.0]), np.array([2200.0, 2200.0])
    return types.SimpleNamespace(
        settings=settings, fov_low=lo, fov_high=hi, states=np.asarray(states), truth=np.asarray(truth)
    )


def _same(view):
    got = theorem1_step(view)
    s, cols = view.settings, list(POSITION)
    scale = s.theorem_scale or scale_for_k_equal_rho(s.theorem_rho, 2)
    pos, truth = view.states[:, cols], view.truth[:, cols]
    inside = ((truth >= view.fov_low) & (truth <= view.fov_high)).all(axis=1)
    full = theorem1(pos, truth[inside], view.fov_low, view.fov_high, s.theorem_rho, scale)
    for key, want in (("theorem1_lhs", full.lhs), ("theorem1_rhs", full.rhs)):
        assert np.float64(got[key]).tobytes() == np.float64(want).tobytes(), (key, got[key], want)
    assert got["theorem1_difference"] == got["theorem1_lhs"] - got["theorem1_rhs"]
    assert got["theorem1_excluded"] == int((~inside).sum())
    assert type(got["theorem1_excluded"]) is int
    return got


def test_random_steps_give_the_full_checks_bits():
    rng = np.random.default_rng(5)
    for t in range(30):
        m, n = int(rng.integers(0, 35)), int(rng.integers(0, 35))
        states = rng.uniform(-100.0, 2100.0, (m, 4))
        truth = rng.uniform(-400.0, 2400.0 if t % 2 else 2100.0, (n, 4))  # some outside on odd steps
        _same(_view(states, truth, rho=[0.9, 0.6][t % 2], scale=[None, 7.0][t % 2]))


def test_edges():
    some = np.array([[10.0, 10.0, 1.0, 1.0], [50.0, 10.0, 0.0, 0.0]])
    outside = np.array([[-300.0, 10.0, 0.0, 0.0], [10.0, 2300.0, 0.0, 0.0]])
    assert _same(_view(np.empty((0, 4)), np.empty((0, 4))))["theorem1_excluded"] == 0
    _same(_view(np.empty((0, 4)), some))  # no estimates
    _same(_view(some, np.empty((0, 4))))  # no truth
    assert _same(_view(some, outside))["theorem1_excluded"] == 2  # every true object outside
    _same(_view(np.array([[5.0, 5.0, 0, 0], [5.0, 5.0, 0, 0]]), [[4.0, 5.0, 0, 0], [6.0, 5.0, 0, 0]]))  # ties
