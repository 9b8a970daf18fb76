"""A small scene and a PMBM run on it, for the evaluation tests."""

from __future__ import annotations

import numpy as np

from nllbench.filters import run_filter
from nllbench.simulation.scenarios import get_scenario, simulate


def scene(name="williams15", steps=25, seed=0):
    sc = get_scenario(name, steps=steps)
    sim = simulate(sc, np.random.default_rng(seed))
    return sc, sim


def pmbm_filter_run():
    """The scene of :func:`scene` and the PMBM filter's posteriors on it.

    Returns (scenario, simulation, posteriors).
    """
    sc, sim = scene()
    return sc, sim, run_filter("pmbm", sim.measurements, sc.model)
