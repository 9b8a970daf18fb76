"""P-GOSPA of a PMB (one global hypothesis, not pooled) reads that hypothesis as it is: the same bits as
the pooled PMBM holding the same Bernoullis, against points and against mixtures, for every family."""

from __future__ import annotations

import numpy as np
import pytest
from support.pooled import bits_equal

import nllbench as nb
from nllbench.engine.densities import PMBM, PPP
from nllbench.measures.point.pgospa import pgospa


def _mb(rng, kind: str, m: int, d: int = 2):
    r = rng.uniform(0.05, 1.0, m)
    means = rng.normal(0.0, 3.0, (m, d))
    if kind == "laplace":
        return nb.MultiBernoulli.laplace(r, means, rng.uniform(0.3, 2.0, m))
    a = rng.normal(0.0, 0.6, (m, d, d))
    covs = a @ np.swapaxes(a, 1, 2) + 0.2 * np.eye(d)
    if kind == "gaussian":
        return nb.MultiBernoulli.gaussian(r, means, covs)
    # two components per Bernoulli
    offsets = np.arange(0, 2 * m + 1, 2)
    w = np.repeat(rng.uniform(0.2, 0.8, m), 2)
    w[1::2] = 1.0 - w[::2]
    return nb.MultiBernoulli.gaussian_mixture(
        r, w, np.repeat(means, 2, axis=0), np.repeat(covs, 2, axis=0), offsets
    )


def _pooled_twin(pmb):
    mb = pmb.hypotheses[0]
    return PMBM.pooled(pmb.ppp, mb, [np.arange(len(mb))], pmb.weights)


@pytest.mark.parametrize("kind", ["gaussian", "mixture", "laplace"])
def test_a_pmb_gives_the_pooled_bits(kind):
    rng = np.random.default_rng({"gaussian": 1, "mixture": 2, "laplace": 3}[kind])
    ppp = PPP.uniform(2.0, [-10, -10], [10, 10])
    for t in range(25):
        pmb = PMBM.pmb(ppp if t % 2 else None, _mb(rng, kind, int(rng.integers(0, 6))))
        assert not pmb.is_pooled and _pooled_twin(pmb).is_pooled
        truth = rng.normal(0.0, 3.0, (int(rng.integers(0, 6)), 2))
        for c, p in ((2.0, 1.0), (5.0, 2.0)):
            assert bits_equal(pgospa(truth, pmb, c=c, p=p), pgospa(truth, _pooled_twin(pmb), c=c, p=p))
            assert bits_equal(pgospa(pmb, truth, c=c, p=p), pgospa(_pooled_twin(pmb), truth, c=c, p=p))
        # against a mixture of two hypotheses on the other side (the weighted path)
        other = nb.MBM([_mb(rng, "gaussian", 2), _mb(rng, "gaussian", 3)], [0.4, 0.6])
        assert bits_equal(pgospa(pmb, other), pgospa(_pooled_twin(pmb), other))
        assert bits_equal(pgospa(other, pmb, alpha=1.5), pgospa(other, _pooled_twin(pmb), alpha=1.5))


def test_an_empty_pmb_gives_the_pooled_bits():
    empty = PMBM.pmb(PPP.uniform(1.0, [0, 0], [1, 1]), nb.MultiBernoulli.empty(2))
    for truth in (np.empty((0, 2)), [[0.5, 0.5], [0.2, 0.1]]):
        assert bits_equal(pgospa(truth, empty), pgospa(truth, _pooled_twin(empty)))
