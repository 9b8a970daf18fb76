"""Trajectory GOSPA against exhaustive enumeration of assignment sequences."""

from __future__ import annotations

import numpy as np
import pytest
from support.tgospa_bruteforce import brute_force, random_case

from nllbench.measures.metrics import tgospa


@pytest.mark.parametrize("seed", range(12))
def test_exact_equals_enumeration(seed):
    rng = np.random.default_rng(seed)
    K = int(rng.integers(1, 5))
    n, m = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    T, TI, E, EI = random_case(rng, K, n, m)
    c = float(rng.choice([1.0, 2.0]))
    p = float(rng.choice([1.0, 2.0]))
    gamma = float(rng.choice([0.3, 1.0, 2.0]))
    r = tgospa(T, TI, E, EI, c=c, p=p, gamma=gamma)
    assert r.value == pytest.approx(brute_force(T, TI, E, EI, c, p, gamma), rel=1e-9, abs=1e-12)
    parts = r.localization + r.missed + r.false + r.switches
    assert parts == pytest.approx(r.value**p, rel=1e-12, abs=1e-12)
    lp = tgospa(T, TI, E, EI, c=c, p=p, gamma=gamma, method="lp")
    assert lp.value <= r.value + 1e-9


def test_plain_product_enumeration_agrees():
    rng = np.random.default_rng(99)
    for _ in range(4):
        T, TI, E, EI = random_case(rng, 3, 2, 2)
        r = tgospa(T, TI, E, EI, c=2.0, p=1, gamma=1.0)
        assert r.value == pytest.approx(brute_force(T, TI, E, EI, 2.0, 1, 1.0, product=True), abs=1e-9)


def test_empty_frames_and_empty_sides():
    empty = np.empty((0, 2))
    none = np.empty(0, dtype=int)
    T = [empty, [[0.0, 0.0]], empty]
    TI = [none, [1], none]
    r = tgospa(T, TI, [empty] * 3, [none] * 3, c=2.0)
    assert (r.value, r.missed, r.false, r.switches) == (1.0, 1.0, 0.0, 0.0)
    r = tgospa([empty] * 3, [none] * 3, T, TI, c=2.0)
    assert (r.value, r.missed, r.false) == (1.0, 0.0, 1.0)
    r = tgospa([empty] * 2, [none] * 2, [empty] * 2, [none] * 2, c=2.0)
    assert r.value == 0.0 and r.assignment.shape == (2, 0)
    assert tgospa([], [], [], [], c=1.0).value == 0.0


def test_identical_trajectories_give_zero_and_value_is_symmetric():
    rng = np.random.default_rng(5)
    T, TI, E, EI = random_case(rng, 6, 4, 3)
    assert tgospa(T, TI, T, TI, c=2.0, gamma=1.0).value == 0.0
    a = tgospa(T, TI, E, EI, c=2.0, p=2, gamma=1.5)
    b = tgospa(E, EI, T, TI, c=2.0, p=2, gamma=1.5)
    assert a.value == pytest.approx(b.value, rel=1e-12)
    assert (a.missed, a.false) == pytest.approx((b.false, b.missed))


def test_switch_counted_by_the_definition():
    # one true trajectory followed by estimate 7 then estimate 8: one full switch
    T = [[[0.0, 0.0]]] * 4
    TI = [[1]] * 4
    E = [[[0.1, 0.0]], [[0.1, 0.0]], [[0.2, 0.0]], [[0.2, 0.0]]]
    EI = [[7], [7], [8], [8]]
    r = tgospa(T, TI, E, EI, c=2.0, p=1, gamma=0.5)
    assert (r.n_switches, r.n_half_switches, r.switches) == (1, 0, 0.5)
    assert r.frame_switches.tolist() == [0.0, 0.0, 0.5, 0.0]
    assert r.localization == pytest.approx(0.6)
    # a switch dearer than a miss plus a false point per frame: stay on 7 (missed/false in frames 2, 3)
    r = tgospa(T, TI, E, EI, c=0.25, p=1, gamma=10.0)
    assert r.switches == 0.0 and r.missed == pytest.approx(0.25)


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="c: expected"):
        tgospa([], [], [], [], c=0.0)
    with pytest.raises(ValueError, match="gamma"):
        tgospa([], [], [], [], c=1.0, gamma=-1.0)
    with pytest.raises(ValueError, match="p: expected"):
        tgospa([], [], [], [], c=1.0, p=0.5)
    with pytest.raises(ValueError, match="estimates: expected 1 frames"):
        tgospa([[[0.0, 0.0]]], [[1]], [], [], c=1.0)
    with pytest.raises(ValueError, match=r"truth_ids\[0\]: expected distinct"):
        tgospa([[[0.0, 0.0], [1.0, 1.0]]], [[1, 1]], [np.empty((0, 2))], [[]], c=1.0)
    with pytest.raises(ValueError, match="method"):
        tgospa([], [], [], [], c=1.0, method="dp")


@pytest.mark.parametrize("seed", range(6))
def test_reduced_programme_equals_the_full_one(seed, monkeypatch):
    """The exact solve (per-pair spans plus holds) against the MILP over every frame, on scenes too
    large to enumerate, including many one-frame estimated trajectories (as a PHD without labels)."""
    from nllbench.measures import tgospa as module

    rng = np.random.default_rng(seed)
    T, TI, E, EI = random_case(rng, 25, 5, 5, box=4.0)
    if seed % 2:  # fresh identity at every frame
        EI = [1000 + 10 * k + np.arange(len(e)) for k, e in enumerate(E)]
    r = tgospa(T, TI, E, EI, c=2.0, p=1, gamma=float(rng.choice([0.5, 2.0, 5.0])))
    full_solve = module.lp_weights
    calls = {}

    def full(gain, ti, ej, n, m, switch, integer):
        calls["n"] = 1
        return full_solve(gain, ti, ej, n, m, switch, integer=True)

    monkeypatch.setattr(module, "lp_weights", full)  # the "lp" route, made integer: the full MILP
    ref = tgospa(T, TI, E, EI, c=2.0, p=1, gamma=r.gamma, method="lp")
    assert calls and ref.value == pytest.approx(r.value, rel=1e-12)


def test_per_frame_terms_are_floats_when_nothing_is_close():
    """No pair within the cut-off: every per-frame term is still a float array (a metrics file needs it)."""
    far = tgospa([[[0.0, 0.0]], [[0.0, 0.0]]], [[1], [1]], [[[50.0, 0.0]], [[50.0, 0.0]]], [[7], [7]], c=1.0)
    for arr in (far.frame_localization, far.frame_missed, far.frame_false, far.frame_switches):
        assert arr.dtype == np.float64 and arr.shape == (2,)
    assert (far.value, far.localization, far.switches) == (2.0, 0.0, 0.0)
