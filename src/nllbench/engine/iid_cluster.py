"""The i.i.d. cluster process (the CPHD filter's posterior, Pinto et al., IEEE SPL 2021, eq. (1)).

Re-exported by :mod:`nllbench.engine.densities` with the other multi-object densities.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from nllbench.engine import validate as v
from nllbench.engine.gaussian_mixture import GaussianMixture, Gaussians


@dataclass(frozen=True)
class IIDCluster:
    """i.i.d. cluster process (CPHD posterior, paper eq. (1)).

    f(X) = |X|! p(|X|) prod_{x in X} s(x), with s(x) = sum_j w_j N(x; m_j, P_j).

    Built as ``IIDCluster(cardinality, weights, means, covs)`` or
    ``IIDCluster(cardinality, weights, gaussians=...)``.

    Attributes
    ----------
    cardinality : (N + 1,) float
        pmf of the number of objects over n = 0..N (sums to 1); zero beyond N.
    spatial : GaussianMixture with J components
        The spatial density s: ``weights`` (J,) summing to 1 and
        ``gaussians`` (its J components), each also readable on the cluster.
    """

    cardinality: np.ndarray
    spatial: GaussianMixture

    def __init__(self, cardinality, weights, means=None, covs=None, *, gaussians: Gaussians | None = None):
        if gaussians is None:
            gaussians = Gaussians(means, covs)
        elif not isinstance(gaussians, Gaussians):
            raise TypeError(f"gaussians: expected Gaussians, got {type(gaussians).__name__}")
        card = v.normalised(cardinality, "cardinality")
        if card.size == 0:
            raise ValueError("cardinality: expected a pmf over n = 0..N with N >= 0, got an empty array")
        if len(gaussians) == 0 and np.all(card[1:] == 0):
            w = np.empty(0)  # surely empty: no spatial density needed
        else:
            w = v.normalised(weights, "weights", len(gaussians))
        object.__setattr__(self, "cardinality", card)
        object.__setattr__(self, "spatial", GaussianMixture._of_components(w, gaussians))

    @property
    def weights(self) -> np.ndarray:
        """(J,) spatial mixture weights (sum to 1)."""
        return self.spatial.weights

    @property
    def gaussians(self) -> Gaussians:
        """The J Gaussian components of the spatial density."""
        return self.spatial.components

    @property
    def dim(self) -> int:
        return self.spatial.dim

    @property
    def max_cardinality(self) -> int:
        return self.cardinality.shape[0] - 1

    def log_spatial(self, y: np.ndarray) -> np.ndarray:
        """log s(y_l), shape (n,)."""
        return self.spatial.logpdf(y)
