"""Recycling in the PMBM filter (two whole Williams runs, with and without it): each kept track
has a Bernoulli at least as likely as the threshold, fewer tracks are kept, the mass moves to the PPP."""

from __future__ import annotations

import numpy as np

from nllbench.filters import PMBMSettings
from nllbench.simulation.scenarios import get_scenario, simulate


def test_recycling_moves_unlikely_tracks_into_the_ppp():
    sc = get_scenario("williams15", steps=15)
    sim = simulate(sc, np.random.default_rng(2))
    from nllbench.filters.pmbm import run_pmbm

    plain = run_pmbm(sim.measurements, sc.model, "pmbm", PMBMSettings()).states
    rec = run_pmbm(sim.measurements, sc.model, "pmbm", PMBMSettings(recycle=0.1)).states
    for state in rec:
        for t in range(state.track_labels.shape[0]):
            s = state.assoc[:, t][state.assoc[:, t] >= 0]
            assert np.any(state.r[s] >= 0.1)
    assert sum(s.track_labels.size for s in rec) < sum(s.track_labels.size for s in plain)
    # recycled mass is kept, in the PPP
    assert rec[-1].ppp.mixture.weights.sum() > plain[-1].ppp.mixture.weights.sum()
