"""HOTA closed forms (Luiten et al. 2021); the agreement with TrackEval is in test_crosscheck_measures.py."""

from __future__ import annotations

import numpy as np
import pytest

from nllbench.measures.metrics import ALPHAS, hota


def test_alpha_grid():
    assert ALPHAS.size == 19
    np.testing.assert_allclose(ALPHAS, np.arange(1, 20) * 0.05, atol=1e-15)


def test_one_switch_halves_association():
    # one object followed exactly by estimate 7 for two frames, then by estimate 8 for two:
    # every TP has |TPA| = 2, |FNA| = 2, |FPA| = 0, so AssA = 1/2, DetA = 1, HOTA = sqrt(1/2)
    T = [[[1.0, 2.0]]] * 4
    E = [[[1.0, 2.0]]] * 4
    r = hota(T, [[3]] * 4, E, [[7], [7], [8], [8]], threshold=2.0)
    assert (r.deta, r.assa, r.loca) == (1.0, 0.5, 1.0)
    assert r.hota == pytest.approx(np.sqrt(0.5), abs=1e-15)


def test_localisation_error_moves_loca_and_alpha_cut():
    # distance 0.5 with threshold 2: similarity 0.75; it counts for alpha <= 0.75 only
    T = [[[0.0, 0.0]]] * 3
    E = [[[0.5, 0.0]]] * 3
    r = hota(T, [[1]] * 3, E, [[1]] * 3, threshold=2.0)
    counted = ALPHAS <= 0.75 + 1e-12
    np.testing.assert_array_equal(r.tp, np.where(counted, 3, 0))
    np.testing.assert_allclose(r.loca_alpha, np.where(counted, 0.75, 1.0))
    np.testing.assert_allclose(r.hota_alpha, np.where(counted, 1.0, 0.0))
    assert r.hota == pytest.approx(counted.mean())


def test_empty_sequences():
    empty, none = np.empty((0, 2)), np.empty(0, dtype=int)
    r = hota([empty], [none], [empty], [none])
    assert (r.hota, r.deta, r.assa, r.loca) == (0.0, 0.0, 0.0, 1.0)
    r = hota([[[0.0, 0.0]]], [[1]], [empty], [none])
    assert r.hota == 0.0 and r.fn.tolist() == [1] * 19
    r = hota([], [], [], [])
    assert r.hota == 0.0


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="threshold"):
        hota([], [], [], [], threshold=0)
    with pytest.raises(ValueError, match="estimate_ids"):
        hota([[[0.0, 0.0]]], [[1]], [[[0.0, 0.0]]], [[1, 2]])
    with pytest.raises(TypeError, match="truth_ids"):
        hota([[[0.0, 0.0]]], [[1.5]], [[[0.0, 0.0]]], [[1]])
