"""Theorem 1 of the paper, executable: GOSPA as a special case of the NLL.

If (i) lambda(x) = lambda_bar / V <= 1 inside a field of view of volume V
(0 outside), (ii) r_i = rho for every Bernoulli, (iii) p_i(x) =
exp(-D(x_i, x)) / k with D a translation-invariant metric, and (iv)
log(1 - rho) = log(lambda_bar / V) = -c / 2, then

    NLL(Y, f_PMB) = V (1 - rho)
                    + min_gamma sum_{(i,j) in gamma} (D(x_i, y_j) + log(k / rho))
                    + c / 2 (|X| + |Y| - 2 |gamma|),

where the NLL is the best-association (Q = 1) approximation of eq. (10).
Here D(x, y) = ||x - y|| / scale (Euclidean), so
k = scale^d Gamma(d) 2 pi^(d/2) / Gamma(d/2). With k = rho the sum is the
GOSPA metric (p = 1, alpha = 2, cut-off c) in the metric D.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import linear_sum_assignment
from scipy.spatial.distance import cdist

from nllbench.engine import validate as v
from nllbench.engine.best_association import laplace_pmb_best_value
from nllbench.engine.densities import (
    PMBM,
    PPP,
    MultiBernoulli,
    laplace_log_normaliser,
    laplace_pmb_unchecked,
    log_box_volume,
)
from nllbench.engine.nll import NLLResult, nll
from nllbench.measures.point.metrics import GOSPAResult, gospa


@dataclass(frozen=True)
class Theorem1Result:
    """Both sides of Theorem 1 for estimates X and truth Y.

    Attributes
    ----------
    lhs : float
        NLL(Y, f_PMB) with one association (Q = 1), computed by ``nb.nll``.
    rhs : float
        The theorem's right-hand side, computed independently by a
        rectangular assignment.
    difference : float
        ``lhs - rhs``.
    volume, rho, c, log_k, scale : float
        V, rho, the implied cut-off c = -2 log(1 - rho), log k, and the
        metric scale.
    offset : float
        V (1 - rho).
    gospa : GOSPAResult
        GOSPA (p = 1, cut-off c) in the metric D = ||x - y|| / scale.
    nll_result : NLLResult
        The full Q = 1 NLL result (with its decomposition).
    """

    lhs: float
    rhs: float
    difference: float
    volume: float
    rho: float
    c: float
    log_k: float
    scale: float
    offset: float
    gospa: GOSPAResult
    nll_result: NLLResult


def _fov(low, high) -> tuple[np.ndarray, np.ndarray]:
    lo = np.atleast_1d(v.as_float_array(low, "low"))
    hi = np.atleast_1d(v.as_float_array(high, "high"))
    if lo.ndim != 1 or hi.shape != lo.shape:
        raise ValueError(f"high: expected the shape {lo.shape} of low, got {hi.shape}")
    v.check_finite(lo, "low")
    v.check_finite(hi, "high")
    if (hi <= lo).any():
        raise ValueError(f"high: expected every upper corner above low, got low={lo}, high={hi}")
    return lo, hi


def _rho(rho) -> float:
    r = float(rho)
    if not 0 < r < 1:
        raise ValueError(f"rho: expected a number strictly between 0 and 1, got {rho!r}")
    return r


def _log_volume(lo: np.ndarray, hi: np.ndarray) -> float:
    """log V of the box [lo, hi], in log space: exact where prod(hi - lo) overflows."""
    return float(log_box_volume(lo[None, :], hi[None, :])[0])


def _exp(x: float) -> float:
    """exp(x), +inf past the float range (math.exp would raise)."""
    with np.errstate(over="ignore"):
        return float(np.exp(x))


def _offset(lo: np.ndarray, hi: np.ndarray, rho: float) -> float:
    """V (1 - rho), the PPP rate of condition (i), as exp(log V + log(1 - rho)).

    Finite whenever the product is representable, even when V alone is not
    (e.g. a side of 3.4e308, or sides of 1e160 in 2-D with rho = 1 - 1e-15).
    """
    return _exp(_log_volume(lo, hi) + math.log1p(-rho))


def scale_for_k_equal_rho(rho: float, dim: int) -> float:
    """The metric scale at which k = rho, so that the NLL offset vanishes (log(k / rho) = 0)."""
    return _scale_k_rho(_rho(rho), dim)


@functools.lru_cache(maxsize=32)
def _scale_k_rho(rho: float, dim: int) -> float:
    """:func:`scale_for_k_equal_rho` of a validated rho, computed once per distinct (rho, dim)."""
    log_unit = float(laplace_log_normaliser(1.0, dim))  # k = scale^d * exp(log_unit)
    return math.exp((math.log(rho) - log_unit) / dim)


def theorem1_pmb(estimates, low, high, rho: float, scale: float) -> PMBM:
    """The PMB satisfying Theorem 1's conditions (i)-(iv) for estimates X.

    PPP: uniform on the box [low, high] with rate V (1 - rho) (so
    lambda = 1 - rho = exp(-c/2) inside); Bernoullis: r = rho, Laplace
    densities exp(-||x - x_i|| / scale) / k centred on the estimates.
    """
    lo, hi = _fov(low, high)
    rho = _rho(rho)
    scale = v.positive_scalar(scale, "scale")
    X = np.asarray(estimates, dtype=float)
    if X.size == 0:
        X = np.empty((0, lo.size))
    X = v.points(X, "estimates", dim=lo.size)
    ppp = PPP.uniform(_offset(lo, hi, rho), lo, hi)
    mb = MultiBernoulli.laplace(np.full(X.shape[0], rho), X, scale)
    return PMBM.pmb(ppp, mb)


def theorem1(estimates, truth, low, high, rho: float, scale: float) -> Theorem1Result:
    """Evaluate both sides of Theorem 1.

    Parameters
    ----------
    estimates : (m, d) array_like
        Point estimates X (the Bernoulli centres).
    truth : (n, d) array_like
        Ground truth Y; must lie inside the field of view.
    low, high : (d,) array_like
        Field of view [low, high].
    rho : float
        Existence probability, 0 < rho < 1; sets c = -2 log(1 - rho).
    scale : float
        Metric scale: D(x, y) = ||x - y|| / scale.

    Notes
    -----
    The quantities that depend on the field of view, rho and the scale only
    (the PPP, V, c, log k, the offset) are computed once per distinct
    (low, high, rho, scale) and reused: a run checks every step with the
    same ones. The PMB is the one :func:`theorem1_pmb` builds.
    """
    setting, X, Y = _checked(estimates, truth, low, high, rho, scale)
    pmb = _pmb(setting, X)
    rhs = _rhs(setting, X, Y)
    rho, c, scale = setting.rho, setting.c, setting.scale
    res = nll(pmb, Y, q=1)
    g = gospa(X / scale, Y / scale, c=c, p=1)
    return Theorem1Result(
        res.value,
        rhs,
        res.value - rhs,
        setting.volume,
        rho,
        c,
        setting.log_k,
        scale,
        setting.offset,
        g,
        res,
    )


def theorem1_sides(estimates, truth, low, high, rho: float, scale: float) -> tuple[float, float]:
    """Theorem 1's ``(lhs, rhs)``: those of :func:`theorem1`, bit for bit, for a check at every step.

    Same arguments and checks as :func:`theorem1`. The left-hand side is the
    engine's Q = 1 NLL of the same PMB through
    :func:`nllbench.engine.best_association.laplace_pmb_best_value` (the value
    of ``nb.nll(pmb, Y, q=1)``, from the same compiled Murty pass on the PMB's
    arrays, without the density objects or the decomposition); the right-hand
    side the same rectangular assignment. The GOSPA that :func:`theorem1` adds
    is not computed.
    """
    setting, X, Y = _checked(estimates, truth, low, high, rho, scale)
    lhs = laplace_pmb_best_value(setting.ppp, setting.rho, X, setting.scale, Y)
    return lhs, _rhs(setting, X, Y)


def _checked(estimates, truth, low, high, rho, scale) -> tuple[_Setting, np.ndarray, np.ndarray]:
    """The validated setting (cached per distinct one), estimates X (m, d) and truth Y (n, d) of
    :func:`theorem1`; ValueError naming the argument otherwise."""
    lo, hi = _fov(low, high)
    setting = _setting(tuple(lo.tolist()), tuple(hi.tolist()), _rho(rho), v.positive_scalar(scale, "scale"))
    X = np.asarray(estimates, dtype=float)
    if X.size == 0:
        X = np.empty((0, lo.size))
    X = v.points(X, "estimates", dim=lo.size)
    Y = np.asarray(truth, dtype=float)
    if Y.size == 0:
        Y = np.empty((0, lo.size))
    Y = v.points(Y, "truth", dim=lo.size)
    if ((Y < lo) | (Y > hi)).any():
        raise ValueError("truth: expected every object inside the field of view [low, high]")
    return setting, X, Y


def _rhs(setting: _Setting, X: np.ndarray, Y: np.ndarray) -> float:
    """The right-hand side V (1 - rho) + min over gamma (...), as a rectangular assignment on
    min(D + log(k / rho), c) (an assigned pair never costs more than c)."""
    rho, c, scale = setting.rho, setting.c, setting.scale
    nx, ny = X.shape[0], Y.shape[0]
    total = c / 2.0 * abs(nx - ny)
    if nx and ny:
        # a distance beyond the float range is +inf, and the cost of that pair is c exactly
        with np.errstate(over="ignore"):
            D = _distances(X, Y) / scale
        cost = np.minimum(D + setting.log_k - math.log(rho), c)
        rows, cols = linear_sum_assignment(cost)
        total += float(cost[rows, cols].sum())
    return setting.offset + total


def _distances(X: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """||X_i - Y_j|| (m, n): ``np.linalg.norm(X[:, None, :] - Y[None, :, :], axis=2)`` bit for bit.

    In one or two dimensions (the positions of a run's check) through cdist, a fraction of the
    cost on ~30 x 30 points: both take the square root of the squares of the differences,
    added in turn (s_0 + s_1). With more columns numpy's reduction may add them in another
    order, so the norm itself.
    """
    if X.shape[1] <= 2:
        return cdist(X, Y)
    return np.linalg.norm(X[:, None, :] - Y[None, :, :], axis=2)


@dataclass(frozen=True)
class _Setting:
    """What Theorem 1 fixes before the estimates: the PPP, V, rho, c, log k, the scale and V (1 - rho)."""

    ppp: PPP
    volume: float
    rho: float
    c: float
    log_k: float
    scale: float
    offset: float


def _pmb(setting: _Setting, X: np.ndarray) -> PMBM:
    """The PMB of :func:`theorem1_pmb` on validated estimates X (m, d): the same arrays, built unchecked
    (X is finite, rho in (0, 1), the scale positive, the PPP's dimension that of X)."""
    m = X.shape[0]
    return laplace_pmb_unchecked(setting.ppp, np.full(m, setting.rho), X, np.full(m, setting.scale))


@functools.lru_cache(maxsize=32)
def _setting(lo: tuple, hi: tuple, rho: float, scale: float) -> _Setting:
    """The :class:`_Setting` of a validated box (as tuples), rho and scale; computed once per distinct one.

    The PPP is the one :func:`theorem1_pmb` builds, with read-only arrays
    (it is shared by every call with these arguments).
    """
    lo_a, hi_a = np.array(lo), np.array(hi)
    offset = _offset(lo_a, hi_a, rho)
    ppp = PPP.uniform(offset, lo_a, hi_a)
    for value in vars(ppp).values():
        if isinstance(value, np.ndarray):
            value.setflags(write=False)
    volume = _exp(_log_volume(lo_a, hi_a))  # inf when V itself overflows; the offset may not
    c = -2.0 * math.log1p(-rho)
    log_k = float(laplace_log_normaliser(scale, lo_a.size))
    return _Setting(ppp, volume, rho, c, log_k, float(scale), offset)
