"""Per-frame sequences of labelled point sets and the truth-to-estimate distances (shared by the measures).

The distance between a true state x and an estimate m is Euclidean,
``||x - m||``, or, given the estimate's covariance P (symmetric positive
definite), the Mahalanobis distance ``sqrt((x - m)^T P^-1 (x - m))``
(Mahalanobis, "On the generalised distance in statistics", Proc. National
Institute of Sciences of India 2, 1936), computed as ``||z||`` with
``L z = x - m`` solved by forward substitution on the Cholesky factor
``P = L L^T`` (no explicit inverse).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numba as nb
import numpy as np
from scipy.spatial.distance import cdist

from nllbench.engine import validate as v


@dataclass(frozen=True)
class LabelledSequence:
    """K frames of labelled points, with the labels mapped to 0..n-1.

    Attributes
    ----------
    points : list of K (n_k, d) float arrays
    index : list of K (n_k,) int arrays
        Trajectory index (0..n-1) of each point, in order of ``ids``.
    ids : (n,) int
        The distinct identities over the whole sequence, sorted.
    """

    points: list
    index: list
    ids: np.ndarray

    @property
    def frames(self) -> int:
        return len(self.points)

    @property
    def count(self) -> int:
        return int(self.ids.size)


def labelled_sequence(points, ids, name: str, id_name: str, frames: int | None = None) -> LabelledSequence:
    """Validate K frames of ``(n_k, d)`` points and ``(n_k,)`` distinct integer identities.

    The checks run on all frames at once; only when one fails are the frames
    checked one by one, so that the error names the first bad frame.
    """
    if frames is not None and len(points) != frames:
        raise ValueError(f"{name}: expected {frames} frames, got {len(points)}")
    if len(ids) != len(points):
        raise ValueError(f"{id_name}: expected {len(points)} frames like {name}, got {len(ids)}")
    fast = _all_at_once(points, ids)
    if fast is not None:
        return fast
    pts, labels = [], []
    for k, (x, i) in enumerate(zip(points, ids, strict=True)):
        arr = _frame_points(v.as_float_array(x, f"{name}[{k}]"))
        if arr.ndim != 2:
            raise ValueError(f"{name}[{k}]: expected a 2-D array of shape (n, d), got shape {arr.shape}")
        v.check_finite(arr, f"{name}[{k}]")
        lab = np.asarray(i).reshape(-1)
        if lab.size and not np.issubdtype(lab.dtype, np.integer):
            raise TypeError(f"{id_name}[{k}]: expected integer identities, got dtype {lab.dtype}")
        lab = lab.astype(np.int64)
        if lab.size != arr.shape[0]:
            raise ValueError(
                f"{id_name}[{k}]: expected {arr.shape[0]} identities (one per state), got {lab.size}"
            )
        if np.unique(lab).size != lab.size:
            raise ValueError(f"{id_name}[{k}]: expected distinct identities, got {lab.tolist()}")
        pts.append(arr)
        labels.append(lab)
    dims = {p.shape[1] for p in pts if p.shape[0]}
    if len(dims) > 1:
        raise ValueError(f"{name}: expected one state dimension in every frame, got {sorted(dims)}")
    return _indexed(pts, labels)


def _frame_points(arr: np.ndarray) -> np.ndarray:
    """An empty frame as (0, d) (d = 0 unless given)."""
    if arr.size == 0:
        return np.empty((0, arr.shape[1] if arr.ndim == 2 else 0))
    return arr


def _all_at_once(points, ids) -> LabelledSequence | None:
    """The sequence when every check passes, else None (then the frame-by-frame checks name the error)."""
    pts, labels = [], []
    try:
        for x, i in zip(points, ids, strict=True):
            arr = _frame_points(np.asarray(x, dtype=np.float64))
            lab = np.asarray(i).reshape(-1)
            if arr.ndim != 2 or lab.size != arr.shape[0] or (lab.size and lab.dtype.kind not in "iu"):
                return None
            pts.append(arr)
            labels.append(lab.astype(np.int64))
    except (TypeError, ValueError):
        return None
    if len({p.shape[1] for p in pts if p.shape[0]}) > 1:
        return None
    filled = [p for p in pts if p.shape[0]]
    if filled and not np.isfinite(np.concatenate(filled)).all():
        return None
    if labels:
        lab = np.concatenate(labels)
        frame = np.repeat(np.arange(len(labels)), [a.size for a in labels])
        order = np.lexsort((lab, frame))
        lab, frame = lab[order], frame[order]
        if np.any((lab[1:] == lab[:-1]) & (frame[1:] == frame[:-1])):
            return None
    return _indexed(pts, labels)


def _indexed(pts: list, labels: list) -> LabelledSequence:
    """Map the identities of every frame to 0..n-1 in sorted order."""
    if not labels:
        return LabelledSequence(pts, [], np.empty(0, dtype=np.int64))
    flat = np.concatenate(labels)
    all_ids = np.unique(flat)
    index = np.split(np.searchsorted(all_ids, flat), np.cumsum([a.size for a in labels])[:-1])
    return LabelledSequence(pts, index, all_ids)


def distances(a: np.ndarray, b: np.ndarray, chol: np.ndarray | None = None) -> np.ndarray:
    """Distances ``(n, m)`` between the true states a (n, d) and the estimates b (m, d).

    Euclidean, or with ``chol`` (m, d, d), the lower Cholesky factors of the
    estimates' covariances, the Mahalanobis distance of each true state from
    each estimate (module notes). Dimensions must agree.
    """
    if a.shape[0] and b.shape[0]:
        if a.shape[1] != b.shape[1]:
            raise ValueError(f"estimates: expected dimension {a.shape[1]} like truth, got {b.shape[1]}")
        if chol is None:
            return cdist(a, b)
        return _mahalanobis_kernel(
            np.ascontiguousarray(a, dtype=np.float64),
            np.ascontiguousarray(b, dtype=np.float64),
            np.ascontiguousarray(chol, dtype=np.float64),
        )
    return np.empty((a.shape[0], b.shape[0]))


def covariance_factors(covs, count: int, dim: int, name: str) -> np.ndarray:
    """Lower Cholesky factors (count, dim, dim) of ``count`` symmetric positive-definite covariances.

    ``covs`` may be any empty array when ``count`` is 0.
    """
    if count == 0:
        arr = v.as_float_array(covs, name)
        if arr.size:
            raise ValueError(f"{name}: expected no covariance (there is no estimate), got shape {arr.shape}")
        return np.empty((0, dim, dim))
    return v.covariances(covs, name, count, dim)[1]


def sequence_factors(covs, points: list, name: str = "estimate_covs") -> list | None:
    """Per-frame factors of ``covs`` (one (m_k, d, d) array per frame of ``points``), or None."""
    if covs is None:
        return None
    if len(covs) != len(points):
        raise ValueError(f"{name}: expected {len(points)} frames like the estimates, got {len(covs)}")
    return [
        covariance_factors(P, x.shape[0], x.shape[1], f"{name}[{k}]")
        for k, (P, x) in enumerate(zip(covs, points, strict=True))
    ]


#: Below this and above its inverse, ||z|| is summed scaled by its largest entry (no under/overflow).
_TINY = 2.0**-500


@nb.njit(cache=True)
def _mahalanobis_kernel(y, means, chol):
    """(n, m) Mahalanobis distances of the rows of y (n, d) from means (m, d) with factors chol (m, d, d).

    A difference that overflows is taken halved (exact) and the result
    doubled; a z entry that overflows means a distance beyond the largest
    float (>= |z_i|): +inf, never NaN.
    """
    n, d = y.shape
    m = means.shape[0]
    out = np.empty((n, m))
    diff = np.empty(d)
    z = np.empty(d)
    for j in range(m):
        for i in range(n):
            half = False
            for t in range(d):
                diff[t] = y[i, t] - means[j, t]
                if not math.isfinite(diff[t]):
                    half = True
            if half:
                for t in range(d):
                    diff[t] = 0.5 * y[i, t] - 0.5 * means[j, t]
            top = 0.0
            for t in range(d):
                acc = diff[t]
                for s in range(t):
                    acc -= chol[j, t, s] * z[s]
                z[t] = acc / chol[j, t, t]
                if not math.isfinite(z[t]):
                    top = math.inf
                    break
                top = max(top, abs(z[t]))
            if top == math.inf or top == 0.0:
                out[i, j] = top
                continue
            if _TINY < top < 1.0 / _TINY:
                acc = 0.0
                for t in range(d):
                    acc += z[t] * z[t]
                r = math.sqrt(acc)
            else:
                acc = 0.0
                for t in range(d):
                    acc += (z[t] / top) ** 2
                r = top * math.sqrt(acc)
            out[i, j] = 2.0 * r if half else r
    return out
