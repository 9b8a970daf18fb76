"""A one-box PPP's log-intensity (the uniform PPP of every tracker's undetected objects and of Theorem 1)
equals the general stacking route's bits: log(rate / V) inside the box (inclusive), -inf outside."""

from __future__ import annotations

import numpy as np
import pytest
from support.pooled import bits_equal

from nllbench.engine.densities import PPP, log_box_volume


def _general(ppp: PPP, y: np.ndarray) -> np.ndarray:
    """The stacking route of ``PPP.log_intensity`` for boxes only, as it was written for one box."""
    inside = np.all(
        (y[None, :, :] >= ppp.lows[:, None, :]) & (y[None, :, :] <= ppp.highs[:, None, :]), axis=2
    )
    with np.errstate(divide="ignore"):
        logr = np.log(ppp.rates) - log_box_volume(ppp.lows, ppp.highs)
    stacked = np.concatenate([np.where(inside, logr[:, None], -np.inf)], axis=0)
    if y.shape[0] == 0:
        return np.full(0, -np.inf)
    return stacked[0] + 0.0


@pytest.mark.parametrize("d", [1, 2, 3])
def test_random_boxes_and_points_give_the_general_bits(d):
    rng = np.random.default_rng(60 + d)
    for _ in range(60):
        lo = rng.uniform(-50.0, 50.0, d)
        hi = lo + rng.uniform(1e-3, 100.0, d)
        ppp = PPP.uniform(float(rng.choice([0.0, 1e-300, 0.7, 3.0, 1e300])), lo, hi)
        y = rng.uniform(lo - 10.0, hi + 10.0, (int(rng.integers(0, 9)), d))
        if y.shape[0]:
            y[0] = lo  # on the boundary: inside
        for _ in range(2):  # the second call reads the kept log(rate / V)
            got = ppp.log_intensity(y)
            assert bits_equal(got, _general(ppp, y))


def test_edges():
    huge = PPP.uniform(2.0, [-1.7e308, -1.0], [1.7e308, 1.0])  # a side overflows: V in log space
    y = np.array([[0.0, 0.0], [1e308, 1.0], [0.0, 1.5]])
    assert bits_equal(huge.log_intensity(y), _general(huge, y))
    assert np.isfinite(huge.log_intensity(y)[:2]).all() and huge.log_intensity(y)[2] == -np.inf
    empty = PPP.uniform(2.0, [0.0, 0.0], [1.0, 1.0]).log_intensity(np.empty((0, 2)))
    assert empty.shape == (0,) and empty.dtype == np.float64
    zero = PPP.uniform(0.0, [0.0, 0.0], [1.0, 1.0]).log_intensity(np.array([[0.5, 0.5]]))
    assert zero.tolist() == [-np.inf]
    # rate = V: log(rate / V) is 0.0 exactly
    unit = PPP.uniform(1.0, [0.0, 0.0], [1.0, 1.0]).log_intensity(np.array([[0.5, 0.5]]))
    assert bits_equal(unit, np.array([0.0]))
