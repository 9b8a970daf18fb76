"""Random posterior steps of every family (PPP, IIDCluster, PMBM, MBM) and their comparison after
a round trip through a posterior file (the store's tests)."""

from __future__ import annotations

import numpy as np

import nllbench as nb
from support.densities import random_covs


def random_ppp(rng, d, labels=True):
    J = int(rng.integers(0, 4))
    B = int(rng.integers(0, 2))
    lows = rng.normal(size=(B, d))
    return nb.PPP(
        rng.uniform(0, 2, J),
        nb.Gaussians(rng.normal(size=(J, d)), random_covs(rng, J, d)),
        rng.uniform(0, 3, B),
        lows,
        lows + rng.uniform(0.5, 2, (B, d)),
        labels=rng.integers(0, 50, J) if labels else None,
    )


def random_mb(rng, d, pool=None):
    m = int(rng.integers(0, 4))
    r = rng.choice([0.0, 1.0, 0.3, 0.77], size=m)
    return nb.MultiBernoulli(
        r, nb.Gaussians(rng.normal(size=(m, d)), random_covs(rng, m, d)), rng.integers(0, 9, m)
    )


def random_steps(rng, family, d, K):
    out = []
    for _ in range(K):
        if family == "PPP":
            out.append(random_ppp(rng, d))
        elif family == "IIDCluster":
            J = int(rng.integers(1, 4))
            out.append(
                nb.IIDCluster(
                    rng.dirichlet(np.ones(int(rng.integers(1, 6)))),
                    rng.dirichlet(np.ones(J)),
                    rng.normal(size=(J, d)),
                    random_covs(rng, J, d),
                )
            )
        else:
            H = int(rng.integers(1, 4))
            base = random_mb(rng, d)
            # hypotheses share Bernoullis, as a track-oriented PMBM's do
            hyps = []
            for _ in range(H):
                keep = rng.random(len(base)) < 0.7
                extra = random_mb(rng, d)
                hyps.append(
                    nb.MultiBernoulli(
                        np.concatenate([base.r[keep], extra.r]),
                        nb.Gaussians(
                            np.concatenate([base.means[keep], extra.means]),
                            np.concatenate([base.densities.covs[keep], extra.densities.covs]),
                        ),
                        np.concatenate([base.labels[keep], extra.labels]),
                    )
                )
            ppp = random_ppp(rng, d) if family == "PMBM" else None
            out.append(nb.PMBM(ppp, tuple(hyps), rng.dirichlet(np.ones(H))))
    return out


def assert_same_ppp(a, b):
    np.testing.assert_array_equal(a.weights, b.weights)
    np.testing.assert_array_equal(a.gaussians.means, b.gaussians.means)
    np.testing.assert_array_equal(a.gaussians.covs, b.gaussians.covs)
    np.testing.assert_array_equal(a.rates, b.rates)
    np.testing.assert_array_equal(a.lows, b.lows)
    np.testing.assert_array_equal(a.highs, b.highs)
    if a.labels is not None and a.labels.size:
        np.testing.assert_array_equal(a.labels, b.labels)


def assert_same(a, b):
    assert type(a) is type(b)
    if isinstance(a, nb.PPP):
        assert_same_ppp(a, b)
    elif isinstance(a, nb.IIDCluster):
        np.testing.assert_array_equal(a.cardinality, b.cardinality)
        np.testing.assert_array_equal(a.weights, b.weights)
        np.testing.assert_array_equal(a.gaussians.means, b.gaussians.means)
        np.testing.assert_array_equal(a.gaussians.covs, b.gaussians.covs)
    else:
        assert (a.ppp is None) == (b.ppp is None)
        if a.ppp is not None:
            assert_same_ppp(a.ppp, b.ppp)
        np.testing.assert_array_equal(a.weights, b.weights)
        for x, y in zip(a.hypotheses, b.hypotheses, strict=True):
            np.testing.assert_array_equal(x.r, y.r)
            np.testing.assert_array_equal(x.densities.means, y.densities.means)
            np.testing.assert_array_equal(x.densities.covs, y.densities.covs)
            if len(x):
                np.testing.assert_array_equal(x.labels, y.labels)
