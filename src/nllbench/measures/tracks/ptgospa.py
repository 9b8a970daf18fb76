"""Probabilistic trajectory GOSPA (PT-GOSPA), alpha = 2, and its decomposition.

Xia, García-Fernández, Karlsson, Ge, Svensson, Yuan, "Probabilistic
Trajectory GOSPA: A Metric for Uncertainty-Aware Multi-Object Tracking
Performance Evaluation", arXiv:2506.15148 (IEEE MFI 2025): trajectory GOSPA
(:mod:`nllbench.measures.tgospa`) with P-GOSPA's per-frame cost
(:mod:`nllbench.measures.point.pgospa`). At frame k, true trajectory i is a
Bernoulli of existence r_i^k and Gaussian N(m_i^k, P_i^k) (r_i^k = 0 where it
is not listed), and likewise estimate j. Over assignment sequences pi^1..pi^K
(each maps every true trajectory to an estimate or to none, injectively):

    PT-GOSPA^p = min_{pi^{1:K}} sum_k [ sum_{i: pi^k_i = j > 0} ( min(r_i^k, r_j^k) d^(c)^p
                                                               + |r_i^k - r_j^k| c^p / 2 )
                                      + c^p / 2 (the existence of the Bernoullis of frame k
                                                 that pi^k leaves unassigned) ]
                 + gamma^p sum_{k<K} sum_i s_i(pi^k, pi^{k+1}),

with d^(c) = min(W2, c) (W2 the 2-Wasserstein distance of the two Gaussians)
and s_i the switch count of trajectory GOSPA (1 between two estimates, 1/2
to or from none). With every r = 1 and every covariance zero it is
trajectory GOSPA; on one frame it is P-GOSPA (alpha = 2).

Pairing i with j at frame k saves min(r_i^k, r_j^k) (d^(c)^p - c^p) <= 0 over
leaving both unassigned, which is negative exactly where both exist (r > 0)
and W2 < c: trajectory GOSPA's minimum with that saving in place of
d^p - c^p. The same solvers therefore find it, exactly
(:func:`nllbench.measures.tracks._tgospa.solver.exact_assignment`, linear in the
frames) or as the LP relaxation (``method="lp"``).

No code of the authors is public, and the definition above is the
composition of the two published metrics (``docs/pgospa.md``, "Sources");
it reduces to both, which the tests check along with enumeration.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from nllbench.engine import validate as v
from nllbench.measures._sequences import LabelledSequence
from nllbench.measures._wasserstein import check_psd, psd_sqrt, w2, w2_frames
from nllbench.measures.tracks._tgospa import Close, exact_assignment
from nllbench.measures.tracks.tgospa import checked_arguments, lp_weights


@dataclass(frozen=True)
class PTGOSPAResult:
    """PT-GOSPA (alpha = 2) and its decomposition.

    ``localization + existence_mismatch + missed + false + switches == value ** p``
    (p-th-power units). Per-frame arrays have shape (K,); the switch cost of
    the transition k-1 -> k is booked at frame k.

    Attributes
    ----------
    value : float
    localization : float
        min(r_i, r_j) W2^p summed over the counted pairs (assigned, both r > 0, W2 < c).
    existence_mismatch : float
        |r_i - r_j| c^p / 2 summed over the counted pairs.
    missed, false : float
        c^p / 2 times the existence of the true (estimated) Bernoullis in no counted pair.
    switches : float
        gamma^p times the summed s_i (1 per full switch, 1/2 per half).
    n_switches, n_half_switches : int
    frame_localization, frame_existence_mismatch, frame_missed, frame_false, frame_switches : (K,) float
    assignment : (K, n) int
        pi^k_i as an index into ``estimate_ids`` (-1 for none), columns in the
        order of ``truth_ids`` (for ``method="lp"``: the largest weight of
        each row where it exceeds 1/2).
    truth_ids, estimate_ids : (n,), (m,) int
    exact : bool
        True for the integer optimum, False for the LP relaxation.
    p, c, gamma : float
    """

    value: float
    localization: float
    existence_mismatch: float
    missed: float
    false: float
    switches: float
    n_switches: int
    n_half_switches: int
    frame_localization: np.ndarray
    frame_existence_mismatch: np.ndarray
    frame_missed: np.ndarray
    frame_false: np.ndarray
    frame_switches: np.ndarray
    assignment: np.ndarray
    truth_ids: np.ndarray
    estimate_ids: np.ndarray
    exact: bool
    p: float
    c: float
    gamma: float


@dataclass(frozen=True)
class _Pairs:
    """The close entries (as :class:`Close`, ``dist_p`` holding min(r_i, r_j) W2^p) and per entry the
    existence mismatch |r_i - r_j| c^p / 2 and the two existences, aligned with ``close.frame``."""

    close: Close
    mismatch: np.ndarray
    r_truth: np.ndarray
    r_est: np.ndarray


def ptgospa(
    truth,
    truth_ids,
    estimates,
    estimate_ids,
    c: float,
    p: float = 1.0,
    gamma: float | None = None,
    method: str = "exact",
    *,
    truth_existence=None,
    truth_covariances=None,
    estimate_existence=None,
    estimate_covariances=None,
) -> PTGOSPAResult:
    """PT-GOSPA metric (alpha = 2) of estimated against true trajectories of Gaussian Bernoullis.

    Parameters
    ----------
    truth, estimates : sequences (one per frame) of (n_k, d) and (m_k, d) arrays
        The Bernoullis' means (a true trajectory's states).
    truth_ids, estimate_ids : sequences of (n_k,) and (m_k,) integer identities
        As in :func:`nllbench.measures.tgospa.tgospa`.
    c : float
        Cut-off (> 0).
    p : float
        Order (>= 1).
    gamma : float, optional
        Switch cost (> 0); default ``c``.
    method : {"exact", "lp"}
        The integer minimum (the definition) or its LP relaxation (a lower bound, itself a metric).
    truth_existence, estimate_existence : sequences of (n_k,) / (m_k,) floats in [0, 1], optional
        Existence probability of each listed Bernoulli; default 1.
    truth_covariances, estimate_covariances : sequences of (n_k, d, d) arrays, optional
        Symmetric positive semi-definite covariances; default zero (points).

    Returns
    -------
    PTGOSPAResult

    Examples
    --------
    >>> r = ptgospa([[[0.0, 0.0]], [[0.0, 0.0]]], [[1], [1]],
    ...             [[[0.5, 0.0]], [[0.5, 0.0]]], [[7], [7]], c=2.0, p=1,
    ...             estimate_existence=[[0.5], [1.0]])
    >>> r.value, r.localization, r.existence_mismatch
    (1.25, 0.75, 0.5)
    """
    c, p, gamma, X, Y = checked_arguments(truth, truth_ids, estimates, estimate_ids, c, p, gamma, method)
    dims = {pts.shape[1] for pts in X.points if pts.shape[0]} | {
        pts.shape[1] for pts in Y.points if pts.shape[0]
    }
    if len(dims) > 1:
        dx = {pts.shape[1] for pts in X.points if pts.shape[0]}
        raise ValueError(f"estimates: expected dimension {min(dx)} like truth, got {sorted(dims - dx)}")
    d = dims.pop() if dims else 0
    rx = _existence(truth_existence, X, "truth_existence")
    ry = _existence(estimate_existence, Y, "estimate_existence")
    ax = _roots(truth_covariances, X, d, "truth_covariances")
    ay = _roots(estimate_covariances, Y, d, "estimate_covariances")
    pairs = _pairs(X, Y, rx, ry, ax, ay, d, c, p)
    if method == "lp":
        return _lp_result(pairs, X, Y, rx, ry, c, p, gamma)
    A, _ = exact_assignment(pairs.close, gamma**p)
    return _exact_result(A, pairs, X, Y, rx, ry, c, p, gamma)


def _offsets(seq: LabelledSequence) -> np.ndarray:
    """(K + 1,) offsets of each frame's Bernoullis in the concatenation of the frames."""
    out = np.zeros(seq.frames + 1, dtype=np.int64)
    np.cumsum([pts.shape[0] for pts in seq.points], out=out[1:])
    return out


def _existence(values, seq: LabelledSequence, name: str) -> np.ndarray:
    """The frames' existence probabilities, concatenated (N,) (default 1), checked at once.

    Only when a check fails are the frames checked one by one, to name the first bad one.
    """
    sizes = [pts.shape[0] for pts in seq.points]
    if values is None:
        return np.ones(sum(sizes))
    if len(values) != seq.frames:
        raise ValueError(f"{name}: expected {seq.frames} frames, got {len(values)}")
    try:
        arrays = [np.asarray(r, dtype=np.float64) for r in values]
        if all(a.ndim == 1 and a.size == n for a, n in zip(arrays, sizes, strict=True)):
            flat = np.concatenate(arrays) if arrays else np.empty(0)
            if np.all((flat >= 0.0) & (flat <= 1.0)):  # False for NaN
                return flat
    except (TypeError, ValueError):
        pass
    checked = [
        v.probabilities(r, f"{name}[{k}]", n) for k, (r, n) in enumerate(zip(values, sizes, strict=True))
    ]
    return np.concatenate([np.empty(0), *checked])


def _roots(values, seq: LabelledSequence, d: int, name: str) -> np.ndarray:
    """Square roots (N, d, d) of the frames' covariances, concatenated (default 0), checked at once."""
    sizes = [pts.shape[0] for pts in seq.points]
    if values is None:
        return np.zeros((sum(sizes), d, d))
    if len(values) != seq.frames:
        raise ValueError(f"{name}: expected {seq.frames} frames, got {len(values)}")
    arrays = []
    for k, (S, n) in enumerate(zip(values, sizes, strict=True)):
        arr = v.as_float_array(S, f"{name}[{k}]")
        if n == 0:
            if arr.size:
                raise ValueError(f"{name}[{k}]: expected no covariance (the frame is empty), got {arr.shape}")
            continue
        if arr.shape != (n, d, d):
            raise ValueError(f"{name}[{k}]: expected shape ({n}, {d}, {d}), got shape {arr.shape}")
        arrays.append(arr)
    flat = np.concatenate(arrays) if arrays else np.zeros((0, d, d))
    try:
        v.check_finite(flat, name)
        flat = check_psd(flat, name)
    except ValueError:
        for k, arr in enumerate(values):  # name the first bad frame
            if sizes[k]:
                v.check_finite(np.asarray(arr, dtype=np.float64), f"{name}[{k}]")
                check_psd(np.asarray(arr, dtype=np.float64), f"{name}[{k}]")
        raise
    return psd_sqrt(flat)


def _flat(seq: LabelledSequence, d: int) -> tuple[np.ndarray, np.ndarray]:
    """The frames' points (N, d) and trajectory indices (N,), concatenated."""
    pts = [p for p in seq.points if p.shape[0]]
    idx = [i for i in seq.index if i.size]
    if not pts:
        return np.zeros((0, d)), np.zeros(0, dtype=np.int64)
    return np.concatenate(pts), np.concatenate(idx).astype(np.int64)


def _pairs(X, Y, rx, ry, ax, ay, d: int, c: float, p: float) -> _Pairs:
    """Every (frame, truth, estimate) whose pairing saves something (both r > 0, W2 < c), grouped by pair.

    ``rx``, ``ry``, ``ax``, ``ay``: the frames' existences and covariance roots, concatenated.
    """
    K, n, m = X.frames, X.count, Y.count
    ox, oy = _offsets(X), _offsets(Y)
    mx, ix = _flat(X, d)
    my, iy = _flat(Y, d)
    zx = ~np.any(ax != 0.0, axis=(1, 2))
    zy = ~np.any(ay != 0.0, axis=(1, 2))
    if d <= 2:
        frame, rows, cols, W = w2_frames(ox, mx, ax, zx, oy, my, ay, zy)
    else:  # the Bures part by batched SVD, frame by frame
        frame, rows, cols, W = [np.empty(0, dtype=np.int64)] * 3 + [np.empty(0)]
        for k in range(K):
            a, b = slice(ox[k], ox[k + 1]), slice(oy[k], oy[k + 1])
            Wk = w2(mx[a], ax[a], my[b], ay[b], zx[a], zy[b])
            r, q = np.unravel_index(np.arange(Wk.size), Wk.shape)
            frame = np.r_[frame, np.full(Wk.size, k, dtype=np.int64)]
            rows, cols, W = np.r_[rows, r + ox[k]], np.r_[cols, q + oy[k]], np.r_[W, Wk.reshape(-1)]
    rmin = np.minimum(rx[rows], ry[cols])
    near = (W < c) & (rmin > 0)
    wp = W[near] ** p
    keep = np.flatnonzero(near)[wp < c**p]  # a saving (W2 < c can round to W2^p == c^p)
    wp = wp[wp < c**p]
    frame, rows, cols, rmin = frame[keep], rows[keep], cols[keep], rmin[keep]
    truth, est = ix[rows], iy[cols]
    key = truth * m + est
    order = np.lexsort((frame, key))  # by pair, then frame
    key, frame, rmin, wp, rows, cols = (
        key[order],
        frame[order],
        rmin[order],
        wp[order],
        rows[order],
        cols[order],
    )
    starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]]) if key.size else np.empty(0, dtype=np.int64)
    ptr = np.append(starts, key.size).astype(np.int64)
    pair_key = key[starts]
    close = Close(frame, rmin * wp, rmin * (wp - c**p), ptr, pair_key // m, pair_key % m, K, n, m)
    rt, re = rx[rows], ry[cols]
    return _Pairs(close, np.abs(rt - re) * (c**p / 2.0), rt, re)


def _free_existence(seq: LabelledSequence, r: np.ndarray, held: np.ndarray) -> np.ndarray:
    """(K,) the existence summed over the Bernoullis of each frame whose index is not ``held`` (K, count).

    ``r`` (N,): the frames' existences, concatenated.
    """
    K = seq.frames
    if r.size == 0:
        return np.zeros(K)
    frame = np.repeat(np.arange(K), [idx.size for idx in seq.index])
    index = np.concatenate(seq.index)
    free = ~held[frame, index]
    return np.bincount(frame[free], weights=r[free], minlength=K).astype(float)


def _exact_result(A: np.ndarray, pairs: _Pairs, X, Y, rx, ry, c, p, gamma) -> PTGOSPAResult:
    """Decomposition of the integral assignment A (K, n) (estimate index or -1, holds included)."""
    close = pairs.close
    K = A.shape[0]
    kk, ii = np.nonzero(A >= 0)
    entry = close.lookup(kk, ii, A[kk, ii])
    hit = entry >= 0
    kk, ii, jj, entry = kk[hit], ii[hit], A[kk[hit], ii[hit]], entry[hit]
    frame_loc = np.bincount(kk, weights=close.dist_p[entry], minlength=K).astype(float)
    frame_mis = np.bincount(kk, weights=pairs.mismatch[entry], minlength=K).astype(float)
    held_x = np.zeros((K, X.count), dtype=bool)
    held_x[kk, ii] = True
    held_y = np.zeros((K, Y.count), dtype=bool)
    held_y[kk, jj] = True
    half = c**p / 2.0
    frame_missed = half * _free_existence(X, rx, held_x)
    frame_false = half * _free_existence(Y, ry, held_y)
    before, after = A[:-1], A[1:]
    changed = before != after
    full = changed & (before >= 0) & (after >= 0)
    tv = np.zeros(K)
    tv[1:] = full.sum(axis=1) + 0.5 * (changed & ~full).sum(axis=1)
    return _assemble(frame_loc, frame_mis, frame_missed, frame_false, tv, A, X, Y, p, c, gamma, True)


def _lp_result(pairs: _Pairs, X, Y, rx, ry, c, p, gamma) -> PTGOSPAResult:
    """The LP relaxation over every frame and candidate pair and its (fractional) decomposition."""
    close = pairs.close
    K, n, m = close.frames, close.n, close.m
    pair = close.pair_of()
    gain = np.zeros((K, close.truth.size))
    gain[close.frame, pair] = close.gain
    w = lp_weights(gain, close.truth, close.est, n, m, gamma**p, integer=False)
    we = w[close.frame, pair] if pair.size else np.empty(0)  # weight of each close entry
    frame_loc = np.bincount(close.frame, weights=we * close.dist_p, minlength=K).astype(float)
    frame_mis = np.bincount(close.frame, weights=we * pairs.mismatch, minlength=K).astype(float)
    half = c**p / 2.0
    total_x = np.bincount(np.repeat(np.arange(K), np.diff(_offsets(X))), weights=rx, minlength=K)
    total_y = np.bincount(np.repeat(np.arange(K), np.diff(_offsets(Y))), weights=ry, minlength=K)
    frame_missed = half * (total_x - np.bincount(close.frame, weights=we * pairs.r_truth, minlength=K))
    frame_false = half * (total_y - np.bincount(close.frame, weights=we * pairs.r_est, minlength=K))
    tv = np.zeros(K)
    tv[1:] = 0.5 * np.abs(np.diff(w, axis=0)).sum(axis=1)
    assigned = np.full((K, n), -1, dtype=np.int64)
    if n and m and w.size:
        full = np.zeros((K, n, m))
        full[:, close.truth, close.est] = w
        best = full.argmax(axis=2)
        has = np.take_along_axis(full, best[:, :, None], axis=2)[:, :, 0] > 0.5
        assigned[has] = best[has]
    return _assemble(frame_loc, frame_mis, frame_missed, frame_false, tv, assigned, X, Y, p, c, gamma, False)


def _assemble(frame_loc, frame_mis, frame_missed, frame_false, tv, assigned, X, Y, p, c, gamma, exact):
    """The result from the per-frame terms, the switch variation and the assignment."""
    frame_switch = gamma**p * tv
    before, after = assigned[:-1], assigned[1:]
    changed = before != after
    n_full = int(np.sum(changed & (before >= 0) & (after >= 0)))
    n_half = int(np.sum(changed & ((before < 0) | (after < 0))))
    per_frame = (frame_loc, frame_mis, frame_missed, frame_false, frame_switch)
    parts = [float(np.sum(a)) for a in per_frame]
    return PTGOSPAResult(
        sum(parts) ** (1.0 / p),
        *parts,
        n_full,
        n_half,
        *per_frame,
        assigned,
        X.ids,
        Y.ids,
        exact,
        p,
        c,
        gamma,
    )
