"""Theorem 1: the NLL of the theorem's PMB equals GOSPA up to known offsets."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import nllbench as nb
from nllbench.engine.densities import laplace_log_normaliser
from nllbench.measures.theorem1 import scale_for_k_equal_rho, theorem1_pmb


@pytest.mark.parametrize("d", [1, 2, 3])
@pytest.mark.parametrize("rho", [0.3, 0.8, 0.95])
def test_both_sides_agree_on_random_sets(d, rho):
    rng = np.random.default_rng(int(rho * 100) + d)
    lo, hi = np.zeros(d), np.full(d, 10.0)
    for _ in range(25):
        X = rng.uniform(lo, hi, (rng.integers(0, 7), d))
        Y = rng.uniform(lo, hi, (rng.integers(0, 7), d))
        scale = rng.uniform(0.3, 3.0)
        r = nb.theorem1(X, Y, lo, hi, rho, scale)
        assert abs(r.difference) < 1e-9
        assert r.c == pytest.approx(-2 * math.log(1 - rho))


@pytest.mark.parametrize("d", [1, 2, 3])
def test_k_equal_rho_gives_gospa_exactly(d):
    rng = np.random.default_rng(40 + d)
    lo, hi = np.zeros(d), np.full(d, 8.0)
    for rho in (0.5, 0.9):
        scale = scale_for_k_equal_rho(rho, d)
        assert float(laplace_log_normaliser(scale, d)) == pytest.approx(math.log(rho))
        for _ in range(20):
            X = rng.uniform(lo, hi, (rng.integers(0, 6), d))
            Y = rng.uniform(lo, hi, (rng.integers(0, 6), d))
            r = nb.theorem1(X, Y, lo, hi, rho, scale)
            assert r.lhs - r.volume * (1 - rho) == pytest.approx(r.gospa.value, abs=1e-9)
            # an independent GOSPA of the scaled sets, same cut-off
            g = nb.gospa(X / scale, Y / scale, c=r.c, p=1)
            assert r.lhs - r.offset == pytest.approx(g.value, abs=1e-9)


def test_pmb_satisfies_the_conditions():
    X = np.array([[1.0, 1.0], [4.0, 2.0]])
    rho = 0.7
    f = theorem1_pmb(X, [0, 0], [5, 4], rho, 1.5)
    mb = f.hypotheses[0]
    assert np.all(mb.r == rho)  # (ii)
    lam = f.ppp.log_intensity(np.array([[2.0, 2.0]]))[0]
    assert lam == pytest.approx(math.log(1 - rho))  # (i) and (iv): lambda_bar / V = 1 - rho
    assert f.ppp.total_rate == pytest.approx(20 * (1 - rho))
    # (iii): Laplace density integrates to 1 (numerically, in 2-D)
    g = np.linspace(-30, 30, 1201)
    xx, yy = np.meshgrid(g, g)
    pts = np.stack([xx.ravel(), yy.ravel()], axis=1)
    dens = np.exp(mb.densities.logpdf(pts)[0])
    assert dens.sum() * (g[1] - g[0]) ** 2 == pytest.approx(1.0, rel=1e-3)


def test_truth_outside_the_field_of_view_is_rejected():
    with pytest.raises(ValueError, match="truth: expected every object inside the field of view"):
        nb.theorem1([[1, 1]], [[11, 1]], [0, 0], [10, 10], 0.5, 1.0)
    with pytest.raises(ValueError, match="rho: expected a number strictly between 0 and 1"):
        nb.theorem1([[1, 1]], [[1, 1]], [0, 0], [10, 10], 1.0, 1.0)


@settings(max_examples=40, deadline=None)
@given(
    st.integers(0, 2**32 - 1),
    st.floats(0.05, 0.98),
    st.floats(0.2, 5.0),
)
def test_property_theorem1(seed, rho, scale):
    rng = np.random.default_rng(seed)
    X = rng.uniform(0, 6, (rng.integers(0, 6), 2))
    Y = rng.uniform(0, 6, (rng.integers(0, 6), 2))
    r = nb.theorem1(X, Y, [0, 0], [6, 6], rho, scale)
    assert abs(r.difference) < 1e-9


@pytest.mark.parametrize(
    ("low", "high", "rho", "log_volume"),
    [
        # one side of 3.4e308: high - low itself overflows
        ([-1.7e308], [1.7e308], 0.9, math.log(1.7e308) + math.log(2.0)),
        # sides of 1e160 in 2-D: V = 1e320 overflows, V (1 - rho) ~ 1e305 does not
        ([0.0, 0.0], [1e160, 1e160], 1 - 1e-15, 2 * math.log(1e160)),
    ],
)
def test_huge_box_offset_is_exact_in_log_space(low, high, rho, log_volume):
    r = nb.theorem1(np.zeros((1, len(low))), np.ones((1, len(low))), low, high, rho, 2.0)
    expected = math.exp(log_volume + math.log1p(-rho))
    assert math.isfinite(r.offset)
    assert r.offset == pytest.approx(expected, rel=1e-12)
    assert r.volume == math.inf  # V itself is past the float range, honestly
    # the PMB's PPP has that rate, and both sides of the theorem stay finite and agree
    f = theorem1_pmb(np.zeros((1, len(low))), low, high, rho, 2.0)
    assert f.ppp.total_rate == pytest.approx(expected, rel=1e-12)
    assert math.isfinite(r.lhs) and r.lhs == pytest.approx(r.rhs, rel=1e-12)


def test_stonesoup_clutter_density_survives_an_overflowing_volume():
    from nllbench.trackers.stonesoup_tracker import clutter_density

    assert clutter_density(10.0, [0, 0], [300, 300]) == 10.0 / 90000.0  # the plain ratio, bit for bit
    # V = 1e310 overflows; rate / V = 1e-300 does not
    assert clutter_density(1e10, [0, 0], [1e160, 1e150]) == pytest.approx(1e-300, rel=1e-12)
    assert clutter_density(0.0, [0, 0], [1e160, 1e160]) == 0.0
