"""The reference filters run on a whole scenario: the literature's trend (PMBM beats PHD on GOSPA)."""

from __future__ import annotations

import numpy as np

import nllbench as nb
from nllbench.filters import run_filter
from nllbench.filters.estimates import estimate
from nllbench.simulation.scenarios import get_scenario, simulate


def mean_gospa(name, seeds, steps=81):
    sc = get_scenario("williams15", steps=steps)
    total = []
    for seed in seeds:
        sim = simulate(sc, np.random.default_rng(seed))
        posts = run_filter(name, sim.measurements, sc.model, max_cardinality=15)
        for post, X in zip(posts, sim.truth, strict=True):
            est = estimate(post).states
            total.append(nb.gospa(est[:, :2], X[:, :2], c=10.0, p=2).value)
    return float(np.mean(total))


def test_pmbm_beats_phd_on_gospa_williams():
    seeds = [11, 12, 13]
    pmbm, phd = mean_gospa("pmbm", seeds, 50), mean_gospa("phd", seeds, 50)
    assert pmbm < phd, (pmbm, phd)
