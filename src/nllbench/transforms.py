"""Transforms of multi-object densities: marginals and uncertainty-calibration probes.

* :func:`marginal` keeps some state components (e.g. position), so that the
  NLL is comparable with position-based measures such as GOSPA.
* :func:`scale_covariances` and :func:`temper_existence` change a posterior's
  *uncertainty* but not its point estimates: the NLL moves while GOSPA, OSPA,
  MOTA and MOTP cannot (the paper's argument, made measurable).

All functions are pure: they return new densities.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from nllbench.densities import PMBM, PPP, Gaussians, IIDCluster, MultiBernoulli

POSITION = (0, 1)


def _map(density, fn, box_fn=None):
    """Apply ``fn(means, covs) -> (means, covs)`` to every Gaussian of ``density``
    and ``box_fn(lows, highs) -> (lows, highs)`` to every uniform PPP box."""
    if isinstance(density, PPP):
        means, covs = fn(density.gaussians.means, density.gaussians.covs)
        lows, highs = (density.lows, density.highs) if box_fn is None else box_fn(density.lows, density.highs)
        return PPP(density.weights, Gaussians(means, covs), density.rates, lows, highs, labels=density.labels)
    if isinstance(density, IIDCluster):
        means, covs = fn(density.gaussians.means, density.gaussians.covs)
        return IIDCluster(density.cardinality, density.weights, gaussians=Gaussians(means, covs))
    if isinstance(density, MultiBernoulli):
        if not isinstance(density.densities, Gaussians):
            raise TypeError("density: expected Gaussian Bernoulli densities, got Laplace ones")
        means, covs = fn(density.densities.means, density.densities.covs)
        return MultiBernoulli(density.r, Gaussians(means, covs), density.labels)
    if isinstance(density, PMBM):
        ppp = None if density.ppp is None else _map(density.ppp, fn, box_fn)
        return PMBM(ppp, tuple(_map(mb, fn, box_fn) for mb in density.hypotheses), density.weights)
    raise TypeError(
        f"density: expected PPP, IIDCluster, MultiBernoulli or PMBM, got {type(density).__name__}"
    )


def marginal(density, dims: Sequence[int] = POSITION):
    """The density of the state components ``dims`` (default: position x, y).

    Gaussian marginals keep the selected mean entries and covariance block;
    a uniform box keeps its rate and the selected sides. Existence
    probabilities, weights and cardinalities are unchanged.
    """
    idx = np.asarray(dims, dtype=int)
    if idx.ndim != 1 or idx.size == 0 or len(set(idx.tolist())) != idx.size:
        raise ValueError(f"dims: expected distinct state indices, got {dims!r}")
    if np.any(idx < 0) or np.any(idx >= density.dim):
        raise ValueError(f"dims: expected indices in 0..{density.dim - 1}, got {dims!r}")
    return _map(
        density,
        lambda m, P: (m[:, idx], P[:, idx[:, None], idx[None, :]]),
        lambda lo, hi: (lo[:, idx], hi[:, idx]),
    )


def scale_covariances(density, s: float):
    """Multiply every covariance by ``s`` > 0 (means, weights and r unchanged)."""
    s = float(s)
    if not np.isfinite(s) or s <= 0:
        raise ValueError(f"s: expected a positive covariance scale, got {s!r}")
    return _map(density, lambda m, P: (m, s * P))


def temper_existence(density, tau: float, about: float = 0.4):
    """Sharpen (tau > 1) or flatten (tau < 1) existence probabilities about ``about``.

    logit(r') - logit(about) = tau (logit(r) - logit(about)), so r = 0 and
    r = 1 stay, and no r crosses ``about``: with ``about`` equal to the
    estimator's existence threshold (0.4) the point estimates do not change.
    Only MB / PMBM densities have existence probabilities; others are returned as they are.
    """
    tau = float(tau)
    if not np.isfinite(tau) or tau <= 0:
        raise ValueError(f"tau: expected a positive tempering exponent, got {tau!r}")
    if not 0 < about < 1:
        raise ValueError(f"about: expected a probability strictly between 0 and 1, got {about!r}")
    if isinstance(density, MultiBernoulli):
        return MultiBernoulli(_temper(density.r, tau, about), density.densities, density.labels)
    if isinstance(density, PMBM):
        return PMBM(
            density.ppp, tuple(temper_existence(mb, tau, about) for mb in density.hypotheses), density.weights
        )
    if isinstance(density, (PPP, IIDCluster)):
        return density
    raise TypeError(
        f"density: expected PPP, IIDCluster, MultiBernoulli or PMBM, got {type(density).__name__}"
    )


def _temper(r: np.ndarray, tau: float, about: float) -> np.ndarray:
    inner = (r > 0) & (r < 1)
    out = r.copy()
    x = r[inner]
    logit = np.log(x) - np.log1p(-x)
    c = np.log(about) - np.log1p(-about)
    z = c + tau * (logit - c)
    out[inner] = 1.0 / (1.0 + np.exp(-z))
    # keep strictly inside (0, 1): rounding must not turn a possible object into a sure one
    out[inner] = np.clip(out[inner], np.nextafter(0.0, 1.0), np.nextafter(1.0, 0.0))
    return out
