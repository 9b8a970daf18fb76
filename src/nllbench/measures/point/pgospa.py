"""Probabilistic GOSPA (P-GOSPA) between multi-Bernoulli densities and its decomposition.

Xia, García-Fernández, Karlsson, Yuan, Chang, Svensson, "Probabilistic
GOSPA: A Metric for Performance Evaluation of Multi-Object Filters with
Uncertainties", arXiv:2412.11482 (IEEE TAES); the authors' MATLAB code is
``PGOSPA.m`` in github.com/yuhsuansia/Probabilistic-GOSPA, whose conventions
this module follows (``docs/pgospa.md``).

For multi-Bernoulli densities X = {(r_i, p_i)} and Y = {(r_j, p_j)} with
Gaussian single-object densities p, order p >= 1, cut-off c > 0 and
0 < alpha <= 2:

    P-GOSPA^p = min over assignments gamma of min(|X|, |Y|) pairs of
                sum_{(i, j) in gamma} [ min(r_i, r_j) d^(c)(p_i, p_j)^p + |r_i - r_j| c^p / alpha ]
                + c^p / alpha (sum of r over the Bernoullis of X and Y outside gamma),

with d^(c) = min(W2, c) and W2 the 2-Wasserstein distance of the two
Gaussians (:mod:`nllbench.measures._wasserstein`). For alpha = 2 this equals
the paper's Proposition 2 (the form of ``PGOSPA.m``): the minimum over
*partial* assignments of the same sum with the unclipped W2, a pair at W2 >= c
costing no less than leaving both unassigned. The decomposition (alpha = 2):
localisation sum min(r_i, r_j) W2^p and existence mismatch
sum |r_i - r_j| c^p / 2 over the pairs with min(r_i, r_j) > 0 and W2 < c, missed
(false) c^p / 2 times the existence of the Bernoullis of x (y) in no such
pair. For alpha < 2 (no decomposition in the paper; ``PGOSPA.m`` warns that
it is not valid) the terms are those of the minimising full assignment, a
pair's clipped distance included.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba as nb
import numpy as np
from scipy.optimize import linear_sum_assignment

from nllbench.engine import validate as v
from nllbench.engine.densities import (
    PMBM,
    PPP,
    GaussianMixtures,
    Gaussians,
    IIDCluster,
    Laplaces,
    MultiBernoulli,
)
from nllbench.measures._wasserstein import psd_sqrt, w2
from nllbench.measures.point.metrics import point_set


@dataclass(frozen=True)
class PGOSPAResult:
    """P-GOSPA between x and y and its decomposition.

    For multi-Bernoulli x and y (one hypothesis each),
    ``localization + existence_mismatch + missed + false == power == value ** p``
    (p-th-power units; the root is taken on the total only). For a mixture
    (an MBM or PMBM with H hypotheses on one side, G on the other) every
    field is the hypothesis-weighted mean over the H x G pairs of
    hypotheses, as the authors' ``computePGOSPAStepPMBM.m`` averages them:
    ``value`` is the weighted mean of the P-GOSPA values and the four terms
    are weighted means in p-th-power units, so they sum to ``power``, the
    weighted mean of value^p, which equals ``value ** p`` only for p = 1 or
    one pair of hypotheses.

    Attributes
    ----------
    value : float
    localization : float
        min(r_i, r_j) W2^p summed over the counted pairs.
    existence_mismatch : float
        |r_i - r_j| c^p / alpha summed over the counted pairs.
    missed, false : float
        c^p / alpha times the existence probabilities of the Bernoullis of x
        (of y) in no counted pair.
    power : float
        The sum of the four terms.
    hypothesis_values : (H, G) float
        P-GOSPA between hypothesis h of x and hypothesis g of y.
    hypothesis_weights : (H, G) float
        Their weights w_x[h] w_y[g] (summing to 1).
    assignments : tuple of H * G (k, 2) int arrays
        (x index, y index) of the counted pairs of each pair of hypotheses,
        row-major in (h, g); indices into the hypotheses' Bernoullis (into
        the rows of an array).
    p, c, alpha : float
    """

    value: float
    localization: float
    existence_mismatch: float
    missed: float
    false: float
    power: float
    hypothesis_values: np.ndarray
    hypothesis_weights: np.ndarray
    assignments: tuple
    p: float
    c: float
    alpha: float


@dataclass(frozen=True)
class _Side:
    """One argument as P Bernoullis with Gaussian moments, in hypotheses.

    ``r`` (P,) existence, ``means`` (P, d), ``roots`` (P, d, d) covariance
    square roots, ``zero`` (P,) which roots are 0; hypothesis h holds the
    rows ``members[h]`` with weight ``weights[h]`` (``members`` None: one
    hypothesis holding every row in order).
    """

    r: np.ndarray
    means: np.ndarray
    roots: np.ndarray
    zero: np.ndarray
    members: tuple | None
    weights: np.ndarray


def pgospa(x, y, c: float = 2.0, p: float = 1.0, alpha: float = 2.0) -> PGOSPAResult:
    """P-GOSPA metric between two multi-Bernoulli densities (or point sets), with its decomposition.

    Parameters
    ----------
    x, y : MultiBernoulli, PMBM (MB, MBM, PMB or PMBM) or (n, d) array_like
        An array is a ground truth: n Bernoullis with r = 1 and zero
        covariance at its rows (may be empty). x plays the truth in the
        decomposition (its unassigned existence is *missed*, y's is *false*),
        as in the authors' ``PGOSPA.m``; the value is symmetric.
        Single-object densities: a Gaussian as it is; a Gaussian mixture
        moment-matched to one Gaussian (its mean and covariance); a Laplace
        density exp(-||x - c|| / s) / k by its mean c and covariance
        (d + 1) s^2 I. The Poisson part of a PMB or PMBM is ignored, as the
        authors do; a mixture's value is the hypothesis-weighted mean
        (:class:`PGOSPAResult`).
    c : float
        Cut-off (> 0).
    p : float
        Order (>= 1).
    alpha : float
        In (0, 2]; 2 (the default) gives the decomposition of the paper.

    Returns
    -------
    PGOSPAResult

    Notes
    -----
    The minimum is one rectangular assignment (``scipy.optimize.linear_sum_assignment``)
    on min(r_i, r_j) (d^(c)^p - 2 c^p / alpha) <= 0, the saving of pairing i and j
    over leaving both unassigned; W2 for all pairs is computed at once
    (:mod:`nllbench.measures._wasserstein`). For a pooled PMBM the pool's
    distances are computed once and each hypothesis takes its rows.

    Examples
    --------
    >>> import numpy as np
    >>> y = MultiBernoulli.gaussian([0.5], [[0.6, 0.0]], [0.32 * np.eye(2)])  # W2 to the origin: 1
    >>> r = pgospa([[0.0, 0.0]], y, c=4.0, p=1)
    >>> [round(t, 12) for t in (r.value, r.localization, r.existence_mismatch, r.missed, r.false)]
    [1.5, 0.5, 1.0, 0.0, 0.0]
    """
    c = v.positive_scalar(c, "c")
    p = float(p)
    if not np.isfinite(p) or p < 1:
        raise ValueError(f"p: expected a number >= 1, got {p!r}")
    alpha = float(alpha)
    if not (0.0 < alpha <= 2.0):
        raise ValueError(f"alpha: expected a number in (0, 2], got {alpha!r}")
    X, Y = _side(x, "x"), _side(y, "y")
    if X.r.size and Y.r.size and X.means.shape[1] != Y.means.shape[1]:
        raise ValueError(f"y: expected state dimension {X.means.shape[1]} like x, got {Y.means.shape[1]}")
    W = w2(X.means, X.roots, Y.means, Y.roots, X.zero, Y.zero)
    H, G = X.weights.size, Y.weights.size
    if H == 1 and G == 1:
        part, pair = _hypothesis_pair(W, X, Y, 0, 0, c, p, alpha)
        power = float(part[0] + part[1] + part[2] + part[3])
        value = power ** (1.0 / p)
        return PGOSPAResult(
            value, *part.tolist(), power, np.full((1, 1), value), np.ones((1, 1)), (pair,), p, c, alpha
        )
    values, parts, pairs = np.zeros((H, G)), np.zeros((H, G, 4)), []
    for h in range(H):
        for g in range(G):
            part, pair = _hypothesis_pair(W, X, Y, h, g, c, p, alpha)
            parts[h, g] = part
            values[h, g] = float(part[0] + part[1] + part[2] + part[3]) ** (1.0 / p)
            pairs.append(pair)
    weights = X.weights[:, None] * Y.weights[None, :]
    terms = [float(np.sum(weights * parts[:, :, t])) for t in range(4)]
    return PGOSPAResult(
        float(np.sum(weights * values)),
        *terms,
        float(np.sum(weights * parts.sum(axis=2))),
        values,
        weights,
        tuple(pairs),
        p,
        c,
        alpha,
    )


def _hypothesis_pair(W, X: _Side, Y: _Side, h: int, g: int, c: float, p: float, alpha: float):
    """:func:`frame_terms` of hypothesis h of x against hypothesis g of y (``W`` over all Bernoullis)."""
    if X.members is None and Y.members is None:
        return frame_terms(W, X.r, Y.r, c, p, alpha)
    ix = np.arange(X.r.size) if X.members is None else X.members[h]
    iy = np.arange(Y.r.size) if Y.members is None else Y.members[g]
    return frame_terms(W[ix[:, None], iy], X.r[ix], Y.r[iy], c, p, alpha)


def frame_terms(W: np.ndarray, rx: np.ndarray, ry: np.ndarray, c: float, p: float, alpha: float):
    """P-GOSPA's four terms (4,) and counted pairs (k, 2) for distances W (nx, ny) and existences rx, ry.

    The module docstring's definition, by one rectangular assignment on the
    saving min(r_i, r_j) (d^(c)^p - 2 c^p / alpha) <= 0; a pair at W >= c
    costs c^p itself, so at alpha = 2 it saves exactly 0 and is not counted.
    """
    cp = c**p
    unit = cp / alpha
    nx, ny = W.shape
    if nx == 0 or ny == 0:
        terms = np.array([0.0, 0.0, unit * float(np.sum(rx)), unit * float(np.sum(ry))])
        return terms, np.empty((0, 2), dtype=np.int64)
    saving, dc = _saving(W, rx, ry, c, p, cp, unit)
    rows, cols = linear_sum_assignment(saving)
    terms, keep = _terms(saving, dc, rx, ry, rows, cols, unit, alpha == 2.0)
    pairs = np.empty((int(keep.sum()), 2), dtype=np.int64)
    pairs[:, 0], pairs[:, 1] = rows[keep], cols[keep]
    return terms, pairs


@nb.njit(cache=True)
def _saving(W, rx, ry, c, p, cp, unit):  # pragma: no cover - compiled
    """(nx, ny) savings min(r_i, r_j) (d^(c)^p - 2 unit) and the (nx, ny) d^(c)^p (c^p beyond c)."""
    nx, ny = W.shape
    saving = np.empty((nx, ny))
    dc = np.empty((nx, ny))
    for i in range(nx):
        for j in range(ny):
            w = W[i, j]
            if w >= c:
                v = cp
            elif p == 1.0:
                v = w
            elif p == 2.0:
                v = w * w
            else:
                v = w**p
            dc[i, j] = v
            saving[i, j] = min(rx[i], ry[j]) * (v - 2.0 * unit)
    return saving, dc


@nb.njit(cache=True)
def _terms(saving, dc, rx, ry, rows, cols, unit, partial):  # pragma: no cover - compiled
    """The four terms (4,) of the assignment rows -> cols and which of its pairs count (k,) bool.

    ``partial`` (alpha = 2): a pair counts only if it saves something; else every assigned pair counts.
    """
    free_x = np.ones(rx.size, dtype=np.bool_)
    free_y = np.ones(ry.size, dtype=np.bool_)
    keep = np.zeros(rows.size, dtype=np.bool_)
    loc, mismatch, missed, false = 0.0, 0.0, 0.0, 0.0
    for t in range(rows.size):
        i, j = rows[t], cols[t]
        if partial and not saving[i, j] < 0.0:
            continue
        keep[t] = True
        free_x[i] = False
        free_y[j] = False
        loc += min(rx[i], ry[j]) * dc[i, j]
        mismatch += abs(rx[i] - ry[j])
    for i in range(rx.size):
        if free_x[i]:
            missed += rx[i]
    for j in range(ry.size):
        if free_y[j]:
            false += ry[j]
    return np.array([loc, unit * mismatch, unit * missed, unit * false]), keep


def _side(obj, name: str) -> _Side:
    """An argument as Bernoullis with Gaussian moments (see :func:`pgospa`)."""
    if isinstance(obj, (PPP, IIDCluster)):
        raise TypeError(
            f"{name}: expected a multi-Bernoulli density (MB, MBM, PMB, PMBM) or points, "
            f"got {type(obj).__name__}"
        )
    if isinstance(obj, MultiBernoulli):
        mb, members, weights = obj, None, np.ones(1)
    elif isinstance(obj, PMBM) and obj.n_hypotheses == 1 and not obj.is_pooled:
        # a PMB: its pool is its one hypothesis, in order (read as it is, not concatenated)
        mb, members, weights = obj.hypotheses[0], None, obj.weights
    elif isinstance(obj, PMBM):  # the Poisson part is ignored (the authors' convention)
        mb, members, weights = obj.pool, obj.members, obj.weights
    else:
        pts = point_set(obj, name)
        n = pts.shape[0]
        zero = np.ones(n, dtype=bool)
        return _Side(np.ones(n), pts, np.zeros((n, pts.shape[1], pts.shape[1])), zero, None, np.ones(1))
    means, covs = single_object_moments(mb.densities)
    if members is not None:
        members = tuple(np.asarray(m, dtype=np.int64) for m in members)
    roots = psd_sqrt(covs)
    return _Side(mb.r, means, roots, ~(roots != 0.0).any(axis=(1, 2)), members, weights)


def single_object_moments(dens) -> tuple[np.ndarray, np.ndarray]:
    """Means (m, d) and covariances (m, d, d) of a single-object family (see :func:`pgospa`)."""
    if isinstance(dens, Gaussians):
        return dens.means, dens.covs
    if isinstance(dens, GaussianMixtures):
        g = dens.moment_matched()
        return g.means, g.covs
    if isinstance(dens, Laplaces):
        d = dens.dim
        return dens.centers, ((d + 1) * dens.scales**2)[:, None, None] * np.eye(d)[None]
    raise TypeError(f"densities: expected Gaussians, GaussianMixtures or Laplaces, got {type(dens).__name__}")
