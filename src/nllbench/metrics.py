"""Point-estimate measures that the NLL is compared with.

GOSPA (Rahmathullah, Garcia-Fernandez, Svensson, FUSION 2017) with
alpha = 2, any order p >= 1 and cut-off c > 0, and its decomposition.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import linear_sum_assignment

from nllbench import _validate as v


@dataclass(frozen=True)
class GOSPAResult:
    """GOSPA (alpha = 2) between estimates X and truth Y.

    ``value = (localization + missed + false) ** (1 / p)``; the three
    components are in p-th-power units (the root is taken on the total only).

    Attributes
    ----------
    value : float
    localization : float
        Sum of d(x, y)^p over assigned pairs (pairs with d < c).
    missed : float
        c^p / 2 per truth left unassigned.
    false : float
        c^p / 2 per estimate left unassigned.
    n_assigned, n_missed, n_false : int
    p, c : float
    assignment : (k, 2) int
        (estimate index, truth index) of the assigned pairs.
    """

    value: float
    localization: float
    missed: float
    false: float
    n_assigned: int
    n_missed: int
    n_false: int
    p: float
    c: float
    assignment: np.ndarray


def gospa(estimates, truth, c: float = 2.0, p: float = 1.0, alpha: float = 2.0) -> GOSPAResult:
    """GOSPA metric with alpha = 2 and the Euclidean base distance.

    d_p^(c,2)(X, Y) = ( min_gamma sum_{(i,j) in gamma} d(x_i, y_j)^p
                        + c^p / 2 (|X| + |Y| - 2 |gamma|) )^(1/p)

    Parameters
    ----------
    estimates : (k, d) array_like
        Estimated object states X (may be empty).
    truth : (n, d) array_like
        Ground-truth states Y (may be empty).
    c : float
        Cut-off distance (> 0). The paper uses 2.
    p : float
        Order, >= 1. The paper uses 1.
    alpha : float
        Must be 2 (the only value with the localisation/missed/false split).

    Notes
    -----
    For alpha = 2 a rectangular assignment on min(d, c)^p, plus c^p / 2 per
    unit of cardinality difference, is exact: an assigned pair at distance
    >= c costs c^p, the same as leaving both unassigned, so such pairs are
    reported as one miss and one false estimate.

    Examples
    --------
    >>> r = gospa([[3, 5], [7, 4]], [[2, 5], [6, 3]], c=2, p=1)
    >>> round(r.value, 6) == round(1 + 2 ** 0.5, 6)
    True
    """
    if alpha != 2:
        raise ValueError(f"alpha: expected 2 (the only value supported), got {alpha!r}")
    c = v.positive_scalar(c, "c")
    p = float(p)
    if not np.isfinite(p) or p < 1:
        raise ValueError(f"p: expected a number >= 1, got {p!r}")
    X = _point_set(estimates, "estimates")
    Y = _point_set(truth, "truth")
    if X.shape[0] and Y.shape[0] and X.shape[1] != Y.shape[1]:
        raise ValueError(f"truth: expected dimension {X.shape[1]} like estimates, got shape {Y.shape}")
    nx, ny = X.shape[0], Y.shape[0]
    half = c**p / 2.0
    if nx == 0 or ny == 0:
        missed, false = half * ny, half * nx
        return GOSPAResult(
            (missed + false) ** (1 / p), 0.0, missed, false, 0, ny, nx, p, c, np.empty((0, 2), dtype=np.int64)
        )
    dist = np.linalg.norm(X[:, None, :] - Y[None, :, :], axis=2)
    cost = np.minimum(dist, c) ** p
    rows, cols = linear_sum_assignment(cost)
    real = dist[rows, cols] < c
    rows, cols = rows[real], cols[real]
    loc = float(np.sum(dist[rows, cols] ** p))
    k = rows.size
    missed = half * (ny - k)
    false = half * (nx - k)
    return GOSPAResult(
        (loc + missed + false) ** (1 / p),
        loc,
        missed,
        false,
        k,
        ny - k,
        nx - k,
        p,
        c,
        np.stack([rows, cols], axis=1),
    )


def _point_set(value, name: str) -> np.ndarray:
    arr = v.as_float_array(value, name)
    if arr.size == 0:
        return np.empty((0, arr.shape[1] if arr.ndim == 2 else 0))
    if arr.ndim != 2:
        raise ValueError(f"{name}: expected a 2-D array of shape (k, d), got shape {arr.shape}")
    v.check_finite(arr, name)
    return arr


@dataclass(frozen=True)
class ClearMOTFrame:
    """CLEAR MOT counts for one frame (no identities, so no switches).

    Attributes
    ----------
    mota : float
        ``1 - (misses + false_positives) / n_truth`` (``nan``-free: with no
        truth it is ``1 - false_positives`` if that is 0, else ``-inf``).
    motp : float
        Mean Euclidean distance of the matched pairs (same unit as the
        states, not squared); ``inf`` when nothing is matched.
    matches, misses, false_positives : int
    distance_sum : float
    """

    mota: float
    motp: float
    matches: int
    misses: int
    false_positives: int
    distance_sum: float


def clear_mot_frame(estimates, truth, threshold: float = 2.0) -> ClearMOTFrame:
    """MOTA and MOTP of one frame (Bernardin & Stiefelhagen 2008).

    Pairs at Euclidean distance ``<= threshold`` (inclusive, as py-motmetrics
    and TrackEval) may match. The gate is applied inside the assignment: the
    matching maximises the number of matches, then minimises the summed
    distance among maximum matchings.

    Examples
    --------
    >>> r = clear_mot_frame([[0, 0], [1.43091, -1.25]], [[0, 0], [1.43091, 1.25]])
    >>> r.mota, round(r.motp, 4)
    (1.0, 1.9)
    """
    threshold = v.positive_scalar(threshold, "threshold")
    X = _point_set(estimates, "estimates")
    Y = _point_set(truth, "truth")
    nx, ny = X.shape[0], Y.shape[0]
    rows = cols = np.empty(0, dtype=np.int64)
    dist = np.empty((nx, ny))
    if nx and ny:
        if X.shape[1] != Y.shape[1]:
            raise ValueError(f"truth: expected dimension {X.shape[1]} like estimates, got shape {Y.shape}")
        dist = np.linalg.norm(X[:, None, :] - Y[None, :, :], axis=2)
        allowed = dist <= threshold
        # an unmatched estimate costs `unmatched`; one more match always pays
        # for any rerouting of the others (each costs <= threshold)
        unmatched = (min(nx, ny) + 1) * threshold + 1.0
        cost = np.concatenate([np.where(allowed, dist, np.inf), np.full((nx, nx), np.inf)], axis=1)
        cost[np.arange(nx), ny + np.arange(nx)] = unmatched
        rows, cols = linear_sum_assignment(cost)
        real = cols < ny
        rows, cols = rows[real], cols[real]
    k = rows.size
    dsum = float(dist[rows, cols].sum()) if k else 0.0
    misses, fps = ny - k, nx - k
    if ny:
        mota = 1.0 - (misses + fps) / ny
    else:
        mota = 1.0 if fps == 0 else -np.inf
    motp = dsum / k if k else np.inf
    return ClearMOTFrame(float(mota), float(motp), k, misses, fps, dsum)
