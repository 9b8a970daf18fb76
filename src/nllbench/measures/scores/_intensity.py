"""The intensity of a density as Gaussian components plus uniform boxes, for the intensity score.

Helpers of :func:`nllbench.measures.scores.proper.intensity_score`: the
intensity's parts with identical components merged, which covariances are
diagonal, the refusals of box integrals without a closed form, and the
kernel constants and box-box term computed once per distinct input (a
run's kernel and PPP of undetected objects stay the same from step to step).
"""

from __future__ import annotations

import functools

import numpy as np

from nllbench.engine.densities import (
    PMBM,
    PPP,
    GaussianMixtures,
    Gaussians,
    IIDCluster,
    MultiBernoulli,
    as_pmbm,
)
from nllbench.measures.scores._mean_embedding import box_box


def kernel_constants(R: np.ndarray) -> tuple[np.ndarray, float]:
    """The kernel sds sqrt(R_tt) (d,) and log det R, computed once per distinct R (read-only)."""
    return _kernel_constants_of(R.tobytes(), R.shape[0])


@functools.lru_cache(maxsize=16)
def _kernel_constants_of(key: bytes, d: int) -> tuple[np.ndarray, float]:
    R = np.frombuffer(key, dtype=np.float64).reshape(d, d)
    s = np.sqrt(np.diag(R))
    s.setflags(write=False)
    return s, float(np.linalg.slogdet(R)[1])


def cached_box_box(rates: np.ndarray, lows: np.ndarray, highs: np.ndarray, s: np.ndarray) -> float:
    """:func:`~nllbench.measures.scores._mean_embedding.box_box`, once per distinct boxes and kernel.

    A run's PPP of undetected objects is mostly the same box at every step.
    """
    return _box_box_of(rates.tobytes(), lows.tobytes(), highs.tobytes(), s.tobytes(), s.shape[0])


@functools.lru_cache(maxsize=16)
def _box_box_of(rates: bytes, lows: bytes, highs: bytes, s: bytes, d: int) -> float:
    def arr(b):
        return np.frombuffer(b, dtype=np.float64).reshape(-1, d)

    return box_box(np.frombuffer(rates, dtype=np.float64), arr(lows), arr(highs), arr(s)[0])


def intensity_parts(density):
    """The intensity as Gaussian (w (K,), means, covs) plus boxes (rates (B,), lows, highs).

    Identical Gaussian components (as PMBM hypotheses sharing a track hold)
    are merged by adding their weights, and zero weights dropped: the
    double sum of the norm is then over distinct components only.
    """
    d = density.dim
    ws, ms, cs = [], [], []
    rates, lows, highs = np.empty(0), np.empty((0, d)), np.empty((0, d))
    density = as_pmbm(density)
    if isinstance(density, PPP):
        ppp = density
    elif isinstance(density, IIDCluster):
        mean_n = float(np.arange(density.cardinality.shape[0]) @ density.cardinality)
        ws.append(mean_n * density.weights)
        ms.append(density.gaussians.means)
        cs.append(density.gaussians.covs)
        ppp = None
    else:
        ppp = density.ppp
        # the shared Bernoullis once each: Bernoulli j weighs r_j times the total weight of the
        # hypotheses holding it (no hypothesis is built; a pooled PMBM stores each Bernoulli once)
        if density.n_hypotheses == 1 and not density.is_pooled:
            # one hypothesis as given is its own pool: the bincount below is 0.0 + w_0 for each
            pool = density.hypothesis(0)
            total = np.full(len(pool), 0.0 + density.weights[0])
        else:
            pool, total = _pooled_weights(density)
        if isinstance(pool.densities, GaussianMixtures):
            # a mixture Bernoulli's intensity r sum_c w_c N(m_c, P_c): one Gaussian per component
            gm = pool.densities
            ws.append((total * pool.r)[gm.owner] * gm.weights)
            ms.append(gm.components.means)
            cs.append(gm.components.covs)
        elif isinstance(pool.densities, Gaussians):
            ws.append(total * pool.r)
            ms.append(pool.densities.means)
            cs.append(pool.densities.covs)
        else:
            raise ValueError(
                f"density: its Bernoullis have {type(pool.densities).__name__} densities; the intensity "
                "score has a closed form for Gaussian densities only (Gaussians or Gaussian mixtures)"
            )
    if ppp is not None:
        ws.append(ppp.weights)
        ms.append(ppp.gaussians.means)
        cs.append(ppp.gaussians.covs)
        rates, lows, highs = ppp.rates, ppp.lows, ppp.highs
    w = np.concatenate(ws) if ws else np.empty(0)
    means = np.concatenate(ms) if ms else np.empty((0, d))
    covs = np.concatenate(cs) if cs else np.empty((0, d, d))
    keep = w > 0
    if not keep.all():
        w, means, covs = w[keep], means[keep], covs[keep]
    if w.size > 1:
        rows = np.concatenate([means, covs.reshape(w.size, -1)], axis=1)
        if _has_equal_rows(rows):  # (distinct components keep their order)
            uniq, first, inverse = np.unique(rows, axis=0, return_index=True, return_inverse=True)
            w = np.bincount(inverse.ravel(), weights=w, minlength=uniq.shape[0])
            means, covs = means[first], covs[first]
    keep_b = rates > 0
    return w, means, covs, rates[keep_b], lows[keep_b], highs[keep_b]


def _pooled_weights(density: PMBM) -> tuple[MultiBernoulli, np.ndarray]:
    """The PMBM's pool of Bernoullis and, for each, the total weight of the hypotheses holding it."""
    try:
        pool = density.pool
    except TypeError:  # hypotheses of different single-object families: no shared pool
        raise ValueError(
            "density: its hypotheses hold different single-object families; the intensity score has "
            "a closed form for Gaussian densities only (Gaussians or Gaussian mixtures)"
        ) from None
    members = density.members
    sizes = np.array([m.shape[0] for m in members], dtype=np.int64)
    held = np.concatenate(members).astype(np.int64, copy=False)
    return pool, np.bincount(held, weights=np.repeat(density.weights, sizes), minlength=len(pool))


def _has_equal_rows(rows: np.ndarray) -> bool:
    """Whether two rows of ``rows`` (K, c) are equal (as ``np.unique(rows, axis=0)`` compares them).

    Sorted lexicographically, equal rows are neighbours.
    """
    ordered = rows[np.lexsort(rows.T[::-1])]
    return bool(np.any(np.all(ordered[1:] == ordered[:-1], axis=1)))


def diagonal(covs: np.ndarray) -> np.ndarray:
    """(K,) bool: which of the covariances ``covs`` (K, d, d) are diagonal."""
    off = ~np.eye(covs.shape[1], dtype=bool)
    return ~np.any(covs[:, off] != 0, axis=1)


def check_separable(R: np.ndarray, diag: np.ndarray) -> None:
    """Refuse a box intensity unless R is diagonal and every Gaussian covariance is diagonal or 2-D.

    ``diag`` (K,) bool: which of the intensity's Gaussian covariances are diagonal (:func:`diagonal`).

    With a diagonal R the box terms are products of one-dimensional integrals
    for diagonal covariances, and bivariate normal rectangle probabilities
    for correlated ones in 2-D (Owen's T function,
    :func:`nllbench.measures.scores._mean_embedding.bivariate_normal_cdf`); in more
    dimensions a correlated Gaussian's box integral is a multivariate normal
    rectangle probability with no closed form.
    """
    off = ~np.eye(R.shape[0], dtype=bool)
    if np.any(R[off] != 0):
        raise ValueError(
            "kernel_cov: the intensity score of a PPP with uniform boxes needs a diagonal kernel_cov "
            "(box integrals of a correlated Gaussian have no closed form), got off-diagonal entries"
        )
    bad = np.flatnonzero(~diag)
    if bad.size and R.shape[0] != 2:
        raise ValueError(
            f"density: the intensity score of a PPP with uniform boxes in {R.shape[0]}-D needs diagonal "
            "Gaussian covariances (box integrals of a correlated Gaussian have no closed form beyond 2-D); "
            f"component {int(bad[0])} of the intensity is not diagonal"
        )
