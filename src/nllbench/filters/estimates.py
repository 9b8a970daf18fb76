"""Point estimates extracted from posteriors (for GOSPA, OSPA, MOTA, MOTP).

Rules (``rule`` argument of :func:`estimate`; see ``docs/estimators.md``):

Intensity families (PPP of the PHD filter, i.i.d. cluster of the CPHD filter);
the intensity of an i.i.d. cluster is E[N] times its spatial weights:

``round``
    Each Gaussian component gives round(w) estimates at its mean, i.e.
    components with w >= 0.5 (Vo & Ma 2006, Section III-D). The PHD default.
``greedy``
    N = round(sum of weights); N times, take the heaviest component, report
    its mean and subtract 1 from its weight (the GM-PHD estimator of
    A. F. Garcia-Fernandez's public MATLAB multi-target tracking code). A
    component heavier than about 1.5 can be reported twice.
``map``
    N = the MAP cardinality (the cardinality pmf's first mode for an i.i.d.
    cluster, floor(sum w), the Poisson mode, for a PPP), then the N heaviest
    components, each at most once (Vo, Vo & Cantoni 2007). The CPHD default.

Multi-Bernoulli mixtures (PMBM, PMB, MBM, MBM01 posteriors):

``best_hypothesis``
    The global hypothesis of largest weight; its Bernoullis with
    r > ``threshold`` (0.4 in the PMBM reference code). The default.
``map_cardinality``
    n* = the MAP of the cardinality distribution sum_h w_h P_h(n) of the
    Bernoulli part (the PPP of undetected objects is not estimated); then the
    hypothesis maximising w_h times the product of its n* largest r and of
    (1 - r) of its other Bernoullis; its n* likeliest Bernoullis (no
    threshold). The MBM estimator of Garcia-Fernandez's reference code.

The point reported for a Bernoulli is its density's mean: the Gaussian mean,
the Laplace centre, or, for a Gaussian-mixture density sum_c w_c N(m_c, P_c),
the mixture mean sum_c w_c m_c (the MMSE point; not the heaviest component's
mean, which is the mode only for well separated components).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

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

DEFAULT_EXISTENCE_THRESHOLD = 0.4

INTENSITY_RULES = ("round", "greedy", "map")
MIXTURE_RULES = ("best_hypothesis", "map_cardinality")
RULES = INTENSITY_RULES + MIXTURE_RULES

#: The rule each reference filter uses unless told otherwise.
DEFAULT_RULES = {
    "phd": "round",
    "cphd": "map",
    "pmbm": "best_hypothesis",
    "pmb": "best_hypothesis",
    "mbm": "best_hypothesis",
    "mbm01": "best_hypothesis",
}


@dataclass(frozen=True)
class Estimates:
    """Estimated states (k, d) and their labels (k,) (-1 where the density has none).

    ``covs`` (k, d, d): the covariances of the Gaussian components the
    states are the means of (of a Gaussian-mixture Bernoulli: its
    moment-matched covariance; None when the density is neither, or the
    estimates come from elsewhere); the covariance-aware (Mahalanobis)
    distance of the measures uses them.
    """

    states: np.ndarray
    labels: np.ndarray
    covs: np.ndarray | None = None


def default_rule(density) -> str:
    """The rule used when none is given: ``round`` (PPP), ``map`` (IIDCluster), else ``best_hypothesis``."""
    if isinstance(density, PPP):
        return "round"
    if isinstance(density, IIDCluster):
        return "map"
    return "best_hypothesis"


def check_rule(rule: str, density) -> str:
    """``rule`` if it applies to ``density``'s family, else a ValueError naming both."""
    mixture = isinstance(density, (PMBM, MultiBernoulli))
    allowed = MIXTURE_RULES if mixture else INTENSITY_RULES
    if rule not in allowed:
        family = "multi-Bernoulli mixture" if mixture else type(density).__name__
        raise ValueError(f"estimator: expected one of {allowed} for a {family}, got {rule!r}")
    return rule


def estimate(density, threshold: float = DEFAULT_EXISTENCE_THRESHOLD, rule: str | None = None) -> Estimates:
    """Point estimates of ``density`` by ``rule`` (None: :func:`default_rule`; see the module docstring)."""
    if not isinstance(density, (PPP, IIDCluster, MultiBernoulli, PMBM)):
        raise TypeError(
            f"density: expected PPP, IIDCluster, MultiBernoulli or PMBM, got {type(density).__name__}"
        )
    rule = check_rule(default_rule(density) if rule is None else rule, density)
    density = as_pmbm(density)
    if isinstance(density, PMBM):
        if rule == "best_hypothesis":
            mb = density.hypothesis(int(np.argmax(density.weights)))
            return _mb_subset(mb, np.flatnonzero(mb.r > threshold))
        return map_cardinality_estimate(density)
    if isinstance(density, PPP):
        w, labels = density.weights, density.labels
        n_map = math.floor(float(w.sum()))
    else:
        mean_card = float(np.arange(density.cardinality.size) @ density.cardinality)
        w, labels = mean_card * density.weights, None
        n_map = int(np.argmax(density.cardinality))
    g = density.gaussians
    idx = intensity_indices(w, rule, n_map)
    return Estimates(g.means[idx], labels[idx] if labels is not None else np.full(idx.size, -1), g.covs[idx])


def intensity_indices(weights: np.ndarray, rule: str, n_map: int = 0) -> np.ndarray:
    """Component indices reported by an intensity rule (repeated when reported twice).

    ``weights`` (J,) are intensity weights; ``n_map`` is the MAP cardinality
    (used by ``map`` only). Rounding is half up (MATLAB's ``round`` on
    non-negative numbers).
    """
    w = np.asarray(weights, dtype=float)
    if rule == "round":
        counts = np.floor(w + 0.5).astype(np.int64)
        return np.repeat(np.arange(w.size), counts)
    if rule == "map":
        n = min(int(n_map), w.size)
        return np.sort(np.argsort(-w, kind="stable")[:n])
    if rule == "greedy":
        n = int(math.floor(float(w.sum()) + 0.5)) if w.size else 0
        left = w.copy()
        out = np.empty(n, dtype=np.int64)
        for i in range(n):  # n is the expected number of objects: a short loop
            j = int(np.argmax(left))
            out[i] = j
            left[j] -= 1.0
        return out
    raise ValueError(f"estimator: expected one of {INTENSITY_RULES}, got {rule!r}")


def _mb_subset(mb: MultiBernoulli, idx: np.ndarray) -> Estimates:
    labels = mb.labels[idx] if mb.labels is not None else np.full(idx.size, -1)
    dens = mb.densities
    if isinstance(dens, GaussianMixtures):  # a mixture's point is its mean; its spread, the moment match
        dens = dens.moment_matched()
    covs = dens.covs[idx] if isinstance(dens, Gaussians) else None
    return Estimates(mb.means[idx], labels, covs)


def _log_cardinality(r: np.ndarray) -> np.ndarray:
    """log P(n) for n = 0..len(r) of a multi-Bernoulli (Poisson-binomial), by convolution."""
    pmf = np.zeros(r.size + 1)
    pmf[0] = 1.0
    for ri in r:
        pmf[1:] = pmf[1:] * (1.0 - ri) + pmf[:-1] * ri
        pmf[0] *= 1.0 - ri
    with np.errstate(divide="ignore"):
        return np.log(pmf)


def _top_n_log_score(r: np.ndarray, n: int) -> tuple[float, np.ndarray]:
    """log of prod(n largest r) prod(1 - r of the rest), and those n indices (-inf if len(r) < n)."""
    if r.size < n:
        return -math.inf, np.empty(0, dtype=np.int64)
    order = np.argsort(-r, kind="stable")
    top, rest = order[:n], order[n:]
    with np.errstate(divide="ignore"):
        score = float(np.sum(np.log(r[top])) + np.sum(np.log1p(-r[rest])))
    return score, np.sort(top)


def map_cardinality_choice(log_weights: np.ndarray, rs: list[np.ndarray]) -> tuple[int, np.ndarray]:
    """The ``map_cardinality`` rule on normalised log hypothesis weights (H,) and each one's r.

    Returns the chosen hypothesis and the indices (into its r) of its n*
    likeliest Bernoullis. Log space throughout; r = 0 or 1 are exact.
    """
    n_max = max((r.size for r in rs), default=0)
    log_card = np.full(n_max + 1, -np.inf)
    for lw, r in zip(log_weights, rs, strict=True):
        lc = _log_cardinality(r)
        log_card[: lc.size] = np.logaddexp(log_card[: lc.size], lw + lc)
    n = int(np.argmax(log_card))  # the first mode
    best, best_h, best_idx = -math.inf, 0, np.empty(0, dtype=np.int64)
    for h, (lw, r) in enumerate(zip(log_weights, rs, strict=True)):
        score, idx = _top_n_log_score(r, n)
        if lw + score > best:
            best, best_h, best_idx = lw + score, h, idx
    return best_h, best_idx


def map_cardinality_estimate(density: PMBM) -> Estimates:
    """The ``map_cardinality`` rule (see the module docstring) on a PMBM's Bernoulli part."""
    with np.errstate(divide="ignore"):
        log_w = np.log(density.weights)
    h, idx = map_cardinality_choice(log_w, [density.existence(h) for h in range(density.n_hypotheses)])
    return _mb_subset(density.hypothesis(h), idx)


def expected_cardinality(density) -> float:
    """E[number of objects] of a posterior (PPP: total rate; PMBM: PPP rate + sum_h w_h sum r)."""
    if isinstance(density, PPP):
        return float(density.total_rate)
    if isinstance(density, IIDCluster):
        return float(np.arange(density.cardinality.size) @ density.cardinality)
    if isinstance(density, MultiBernoulli):
        return float(density.r.sum())
    if isinstance(density, PMBM):
        ppp = float(density.ppp.total_rate) if density.ppp is not None else 0.0
        rs = (density.existence(h) for h in range(density.n_hypotheses))
        return ppp + float(sum(w * r.sum() for w, r in zip(density.weights, rs, strict=True)))
    raise TypeError(
        f"density: expected PPP, IIDCluster, MultiBernoulli or PMBM, got {type(density).__name__}"
    )


__all__ = [
    "DEFAULT_EXISTENCE_THRESHOLD",
    "DEFAULT_RULES",
    "RULES",
    "Estimates",
    "estimate",
    "expected_cardinality",
]
