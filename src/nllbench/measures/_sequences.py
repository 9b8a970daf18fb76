"""Validation of per-frame sequences of labelled point sets (shared by the trajectory measures)."""

from __future__ import annotations

from dataclasses import dataclass

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


def distances(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Euclidean distances ``(n, m)`` between the rows of a (n, d) and b (m, d); dimensions must agree."""
    if a.shape[0] and b.shape[0]:
        if a.shape[1] != b.shape[1]:
            raise ValueError(f"estimates: expected dimension {a.shape[1]} like truth, got {b.shape[1]}")
        return cdist(a, b)
    return np.empty((a.shape[0], b.shape[0]))
