"""Point estimates extracted from posteriors (for GOSPA, OSPA, MOTA, MOTP).

* PPP (PHD): each Gaussian component with weight >= 0.5 gives round(weight)
  estimates at its mean (Vo & Ma 2006).
* i.i.d. cluster (CPHD): the MAP cardinality n*, then the n* heaviest
  spatial components' means (Vo, Vo & Cantoni 2007).
* PMBM family: the best global hypothesis; its Bernoullis with
  r > ``threshold`` (0.4 as in the PMBM reference code) give their means.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from nllbench.densities import PMBM, PPP, IIDCluster, MultiBernoulli

DEFAULT_EXISTENCE_THRESHOLD = 0.4


@dataclass(frozen=True)
class Estimates:
    """Estimated states (k, d) and their labels (k,) (-1 where the density has none)."""

    states: np.ndarray
    labels: np.ndarray


def estimate(density, threshold: float = DEFAULT_EXISTENCE_THRESHOLD) -> Estimates:
    """Point estimates of ``density`` (see the module docstring)."""
    if isinstance(density, MultiBernoulli):
        density = PMBM(None, (density,), np.ones(1))
    if isinstance(density, PMBM):
        mb = density.hypotheses[int(np.argmax(density.weights))]
        keep = mb.r > threshold
        labels = mb.labels[keep] if mb.labels is not None else np.full(int(keep.sum()), -1)
        return Estimates(mb.means[keep], labels)
    if isinstance(density, PPP):
        counts = np.floor(density.weights + 0.5).astype(int)
        idx = np.repeat(np.arange(counts.size), counts)
        labels = density.labels[idx] if density.labels is not None else np.full(idx.size, -1)
        return Estimates(density.gaussians.means[idx], labels)
    if isinstance(density, IIDCluster):
        n = int(np.argmax(density.cardinality))
        order = np.argsort(-density.weights, kind="stable")[: min(n, density.weights.size)]
        return Estimates(density.gaussians.means[order], np.full(order.size, -1))
    raise TypeError(
        f"density: expected PPP, IIDCluster, MultiBernoulli or PMBM, got {type(density).__name__}"
    )
