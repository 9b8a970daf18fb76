"""Random small densities (PPPs, multi-Bernoullis, PMBMs) the tests draw."""

from __future__ import annotations

import numpy as np

import nllbench as nb


def random_covs(rng, k, d, spread=1.0):
    A = rng.normal(size=(k, d, d))
    return spread * (A @ np.swapaxes(A, 1, 2) + 0.3 * np.eye(d))


def random_r(rng, m, special=True):
    """Existence probabilities, often including the exact corner values 0 and 1."""
    if special and rng.random() < 0.5:
        return rng.choice([0.0, 1.0, 0.3, 0.5, 0.9, 0.99], size=m)
    return rng.uniform(0.0, 1.0, m)


def random_mb(rng, m, d, family="gaussian", zero_one=False):
    r = rng.choice([0.0, 1.0], size=m) if zero_one else random_r(rng, m)
    means = rng.normal(0.0, 2.0, (m, d))
    if family == "laplace":
        return nb.MultiBernoulli.laplace(r, means, rng.uniform(0.5, 2.0, m))
    return nb.MultiBernoulli.gaussian(r, means, random_covs(rng, m, d))


def random_ppp(rng, d, kind=None):
    kind = kind or rng.choice(["gaussian", "uniform", "both", "zero"])
    parts = []
    if kind in ("gaussian", "both"):
        J = int(rng.integers(1, 3))
        parts.append(
            nb.PPP.gaussian(rng.uniform(0.1, 2.0, J), rng.normal(0, 2, (J, d)), random_covs(rng, J, d, 3.0))
        )
    if kind in ("uniform", "both"):
        parts.append(nb.PPP.uniform(rng.uniform(0.5, 3.0), np.full(d, -4.0), np.full(d, 4.0)))
    if kind == "zero":
        return nb.PPP.empty(d)
    out = parts[0]
    for p in parts[1:]:
        out = out + p
    return out


def random_pmbm(rng, d=2, family="PMBM", max_m=3, max_h=3):
    """A random density of the named family (PMBM, PMB, MBM, MBM01, MB)."""
    H = 1 if family in ("PMB", "MB") else int(rng.integers(1, max_h + 1))
    zero_one = family == "MBM01"
    kind = "laplace" if rng.random() < 0.2 else "gaussian"
    hyps = [random_mb(rng, int(rng.integers(0, max_m + 1)), d, kind, zero_one) for _ in range(H)]
    w = rng.dirichlet(np.ones(H))
    if H > 1 and rng.random() < 0.2:
        w[0] = 0.0
        w = w / w.sum()
    ppp = random_ppp(rng, d) if family in ("PMBM", "PMB") else None
    return nb.PMBM(ppp, hyps, w)
