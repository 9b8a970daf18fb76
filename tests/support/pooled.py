"""Pooled PMBMs for the tests: random pooled densities, their copied twins, equality to the bit."""

from __future__ import annotations

import dataclasses

import numpy as np

import nllbench as nb
from support.densities import random_covs, random_ppp, random_r


def bits_equal(a, b) -> bool:
    """``a`` and ``b`` equal to the bit: floats by their bytes, arrays by dtype, shape and bytes."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    if isinstance(a, float | np.floating) and isinstance(b, float | np.floating):
        return np.float64(a).tobytes() == np.float64(b).tobytes()
    if dataclasses.is_dataclass(a) and not isinstance(a, type):
        return type(a) is type(b) and all(
            bits_equal(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a)
        )
    if isinstance(a, tuple | list):
        return len(a) == len(b) and all(bits_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(bits_equal(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def random_pooled(rng, d=2, kind="gaussian", ppp=True, labels=None, max_p=7, max_h=5):
    """A pooled PMBM whose hypotheses share members of one pool (some unreferenced, some repeated)."""
    P = int(rng.integers(0, max_p + 1))
    r = random_r(rng, P)
    means = rng.normal(0.0, 2.0, (P, d))
    if labels is None:
        labels = rng.random() < 0.5
    lab = rng.choice([-1, 3, 7, 11], size=P) if labels else None
    if kind == "laplace":
        pool = nb.MultiBernoulli(r, nb.Laplaces(means, rng.uniform(0.5, 2.0, P)), lab)
    else:
        pool = nb.MultiBernoulli.gaussian(r, means, random_covs(rng, P, d), lab)
    H = int(rng.integers(1, max_h + 1))
    members = [np.flatnonzero(rng.random(P) < 0.7) for _ in range(H)]
    if H > 1 and P:
        members[-1] = np.concatenate([members[-1], [0]])  # one Bernoulli held twice by a hypothesis
    w = rng.dirichlet(np.ones(H))
    if H > 1 and rng.random() < 0.3:
        w[0] = 0.0  # a dead hypothesis: the engine ranks the live ones only
        w = w / w.sum()
    return nb.PMBM.pooled(random_ppp(rng, d) if ppp else None, pool, members, w)


def copied(f: nb.PMBM) -> nb.PMBM:
    """The same density with each hypothesis holding its own copies (as filters build PMBMs)."""
    return nb.PMBM(f.ppp, f.hypotheses, f.weights)


def same_hypotheses(f: nb.PMBM, c: nb.PMBM) -> None:
    """Assert that two PMBMs hold the same hypotheses, weights and density arrays, bit for bit."""
    assert f.n_hypotheses == c.n_hypotheses and bits_equal(f.weights, c.weights)
    for a, b in zip(f.hypotheses, c.hypotheses, strict=True):
        assert bits_equal(a.r, b.r)
        assert (a.labels is None) == (b.labels is None)
        assert a.labels is None or bits_equal(a.labels, b.labels)
        fields = ("means", "covs", "_chol", "_log_diag", "_log_norm")
        if isinstance(a.densities, nb.Laplaces):
            fields = ("centers", "scales")
        for name in fields:
            assert bits_equal(getattr(a.densities, name), getattr(b.densities, name)), name


def as_single_mixture(f: nb.PMBM, construct: bool = False) -> nb.PMBM:
    """A pooled Gaussian PMBM with each Bernoulli a one-component mixture (same members, weights)."""
    pool = f.pool
    g = pool.densities
    if construct:  # the public constructor: factorised anew
        mix = nb.GaussianMixtures(np.ones(len(g)), g.means, g.covs, np.arange(len(g) + 1))
    else:
        mix = nb.GaussianMixtures.single(g)
    return nb.PMBM.pooled(f.ppp, nb.MultiBernoulli(pool.r, mix, pool.labels), f.members, f.weights)
