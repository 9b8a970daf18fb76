"""Scenario presets and simulation."""

from __future__ import annotations

import numpy as np
import pytest

from nllbench.simulation.scenarios import get_scenario, simulate


@pytest.mark.parametrize("name", ["williams15", "chalmers"])
def test_same_seed_same_output(name):
    sc = get_scenario(name)
    a = simulate(sc, np.random.default_rng(7))
    b = simulate(sc, np.random.default_rng(7))
    for x, y in zip(a.truth + a.measurements, b.truth + b.measurements, strict=True):
        np.testing.assert_array_equal(x, y)
    c = simulate(sc, np.random.default_rng(8))
    assert any(
        x.shape != y.shape or not np.array_equal(x, y)
        for x, y in zip(a.measurements, c.measurements, strict=True)
    )


def test_williams15_matches_the_reference_description():
    sc = get_scenario("williams15")
    m = sc.model
    assert sc.steps == 81 and m.p_detection == 0.9 and m.clutter_rate == 10 and m.p_survival == 0.99
    assert m.fov_volume == 300 * 300
    sim = simulate(sc, np.random.default_rng(0))
    counts = [len(x) for x in sim.truth]
    assert counts[:40] == [4] * 40 and counts[40:] == [3] * 41  # object 1 lives at steps 1-40
    mid = sim.truth[39][:, :2]
    assert np.all(np.linalg.norm(mid - [150, 150], axis=1) < 5)  # they coalesce at the midpoint
    # the truth is fixed across Monte Carlo runs; only the measurements change
    other = simulate(sc, np.random.default_rng(99))
    np.testing.assert_array_equal(np.concatenate(sim.truth), np.concatenate(other.truth))


def test_chalmers_has_twelve_objects_from_four_births():
    sc = get_scenario("chalmers")
    sim = simulate(sc, np.random.default_rng(0))
    assert sc.steps == 100 and len(sc.model.birth) == 4
    assert len(np.unique(np.concatenate(sim.truth_ids))) == 12
    pos = np.concatenate(sim.truth)[:, :2]
    assert np.all(np.abs(pos) <= 1000)


def test_overrides_and_clutter():
    sc = get_scenario("williams15", clutter_rate=40, p_detection=0.5, steps=20, measurement_noise=2.0)
    assert sc.steps == 20 and sc.model.clutter_rate == 40 and sc.model.p_detection == 0.5
    np.testing.assert_allclose(sc.model.R, 4 * np.eye(2))
    sim = simulate(sc, np.random.default_rng(1))
    clutter = [int(np.sum(o == -1)) for o in sim.origins]
    assert 30 < np.mean(clutter) < 50
    for Z, o, _X, ids in zip(sim.measurements, sim.origins, sim.truth, sim.truth_ids, strict=True):
        assert Z.shape[0] == o.shape[0] and set(o[o >= 0]) <= set(ids)


def test_bad_scenario_arguments():
    with pytest.raises(ValueError, match="scenario: expected one of"):
        get_scenario("vo-ma")
    with pytest.raises(ValueError, match="pd: not an overridable"):
        get_scenario("williams15", pd=0.5)
    with pytest.raises(ValueError, match="p_detection: expected a probability"):
        get_scenario("williams15", p_detection=1.5)
    with pytest.raises(ValueError, match=r"steps: expected an integer in \[1, 100000\], got 0"):
        get_scenario("williams15", steps=0)
    with pytest.raises(ValueError, match=r"steps: expected an integer in \[1, 100000\], got 100000000000"):
        get_scenario("williams15", steps=10**11)  # bounded before any memory is taken
    with pytest.raises(TypeError, match="rng: expected a numpy.random.Generator"):
        simulate(get_scenario("williams15"), 3)
