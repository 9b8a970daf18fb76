"""A PMBM filter run's posteriors are pooled and give the bits of their copied hypotheses (whole runs
of the Williams scenario, seconds)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import logsumexp
from support.pooled import bits_equal, same_hypotheses

import nllbench as nb
from nllbench.engine.transforms import marginal
from nllbench.filters.estimates import estimate


def _hypotheses_of(state, with_ppp: bool) -> nb.PMBM:
    """A PMBM filter state as copied hypotheses, one MultiBernoulli per row of ``assoc``."""
    hyps = []
    for row in state.assoc:
        s = row[row >= 0]
        g = nb.Gaussians(state.means[s], state.covs[s])
        hyps.append(nb.MultiBernoulli(state.r[s], g, state.track_labels[state.track[s]]))
    w = np.exp(state.log_weights - logsumexp(state.log_weights))  # as the filter normalises them
    return nb.PMBM(state.ppp.to_ppp() if with_ppp else None, hyps, w / w.sum())


@pytest.mark.parametrize("variant", ["pmbm", "mbm"])
def test_a_pmbm_filter_posterior_is_pooled_and_equals_its_copied_hypotheses(variant):
    from nllbench.filters.pmbm import run_pmbm
    from nllbench.simulation.scenarios import get_scenario, simulate

    sc = get_scenario("williams15", steps=12)
    sim = simulate(sc, np.random.default_rng(3))
    states = run_pmbm(sim.measurements, sc.model, variant).states
    assert max(s.assoc.shape[0] for s in states) > 1  # the run has several global hypotheses
    for s, X in zip(states, sim.truth, strict=True):
        f = s.to_density(with_ppp=variant == "pmbm")
        c = _hypotheses_of(s, with_ppp=variant == "pmbm")
        assert f.is_pooled and len(f.pool) == s.r.shape[0]
        same_hypotheses(f, c)
        assert f.family == c.family
        y = X[:, list((0, 1))]
        assert bits_equal(nb.nll_many(marginal(f), y, (1, 10)), nb.nll_many(marginal(c), y, (1, 10)))
        assert bits_equal(estimate(f), estimate(c))
