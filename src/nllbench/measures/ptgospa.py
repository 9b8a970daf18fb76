"""Probabilistic trajectory GOSPA (PT-GOSPA), alpha = 2, and its decomposition.

Xia, García-Fernández, Karlsson, Ge, Svensson, Yuan, "Probabilistic
Trajectory GOSPA: A Metric for Uncertainty-Aware Multi-Object Tracking
Performance Evaluation", arXiv:2506.15148 (IEEE MFI 2025): trajectory GOSPA
(:mod:`nllbench.measures.tgospa`) with P-GOSPA's per-frame cost
(:mod:`nllbench.measures.pgospa`). At frame k, true trajectory i is a
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
(:func:`nllbench.measures._tgospa_solver.exact_assignment`, linear in the
frames) or as the LP relaxation (``method="lp"``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from nllbench.engine import validate as v
from nllbench.measures._sequences import LabelledSequence, labelled_sequence
from nllbench.measures._tgospa_solver import Close, exact_assignment
from nllbench.measures._wasserstein import check_psd, psd_sqrt, w2
from nllbench.measures.tgospa import _solve


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
    c = v.positive_scalar(c, "c")
    p = float(p)
    if not np.isfinite(p) or p < 1:
        raise ValueError(f"p: expected a number >= 1, got {p!r}")
    gamma = c if gamma is None else v.positive_scalar(gamma, "gamma")
    if method not in ("exact", "lp"):
        raise ValueError(f"method: expected 'exact' or 'lp', got {method!r}")
    X = labelled_sequence(truth, truth_ids, "truth", "truth_ids")
    Y = labelled_sequence(estimates, estimate_ids, "estimates", "estimate_ids", frames=X.frames)
    rx = _existence(truth_existence, X, "truth_existence")
    ry = _existence(estimate_existence, Y, "estimate_existence")
    ax = _roots(truth_covariances, X, "truth_covariances")
    ay = _roots(estimate_covariances, Y, "estimate_covariances")
    pairs = _pairs(X, Y, rx, ry, ax, ay, c, p)
    if method == "lp":
        return _lp_result(pairs, X, Y, rx, ry, c, p, gamma)
    A, _ = exact_assignment(pairs.close, gamma**p)
    return _exact_result(A, pairs, X, Y, rx, ry, c, p, gamma)


def _existence(values, seq: LabelledSequence, name: str) -> list:
    """Per-frame (n_k,) existence probabilities (default 1)."""
    if values is None:
        return [np.ones(pts.shape[0]) for pts in seq.points]
    if len(values) != seq.frames:
        raise ValueError(f"{name}: expected {seq.frames} frames, got {len(values)}")
    out = []
    for k, (r, pts) in enumerate(zip(values, seq.points, strict=True)):
        out.append(v.probabilities(r, f"{name}[{k}]", pts.shape[0]))
    return out


def _roots(values, seq: LabelledSequence, name: str) -> list:
    """Per-frame (n_k, d, d) square roots of the covariances (None: zero covariances)."""
    if values is None:
        return [None] * seq.frames
    if len(values) != seq.frames:
        raise ValueError(f"{name}: expected {seq.frames} frames, got {len(values)}")
    out = []
    for k, (S, pts) in enumerate(zip(values, seq.points, strict=True)):
        arr = v.as_float_array(S, f"{name}[{k}]")
        n, d = pts.shape
        if n == 0:
            if arr.size:
                raise ValueError(f"{name}[{k}]: expected no covariance (the frame is empty), got {arr.shape}")
            out.append(np.zeros((0, d, d)))
            continue
        if arr.shape != (n, d, d):
            raise ValueError(f"{name}[{k}]: expected shape ({n}, {d}, {d}), got shape {arr.shape}")
        v.check_finite(arr, f"{name}[{k}]")
        out.append(psd_sqrt(check_psd(arr, f"{name}[{k}]")))
    return out


def _pairs(X, Y, rx, ry, ax, ay, c: float, p: float) -> _Pairs:
    """Every (frame, truth, estimate) whose pairing saves something (both r > 0, W2 < c), grouped by pair."""
    K, n, m = X.frames, X.count, Y.count
    cols = {name: [] for name in ("frame", "truth", "est", "rmin", "wp", "rt", "re")}
    for k in range(K):
        a, b = X.points[k], Y.points[k]
        if a.shape[0] == 0 or b.shape[0] == 0:
            continue
        if a.shape[1] != b.shape[1]:
            raise ValueError(f"estimates: expected dimension {a.shape[1]} like truth, got {b.shape[1]}")
        d = a.shape[1]
        A = ax[k] if ax[k] is not None else np.zeros((a.shape[0], d, d))
        B = ay[k] if ay[k] is not None else np.zeros((b.shape[0], d, d))
        W = w2(a, A, b, B)
        rmin = np.minimum(rx[k][:, None], ry[k][None, :])
        rows, cc = np.nonzero((W < c) & (rmin > 0))
        if rows.size == 0:
            continue
        wp = W[rows, cc] ** p
        keep = wp < c**p  # a saving (W2 < c can round to W2^p == c^p)
        rows, cc, wp = rows[keep], cc[keep], wp[keep]
        for name, val in (
            ("frame", np.full(rows.size, k, dtype=np.int64)),
            ("truth", X.index[k][rows]),
            ("est", Y.index[k][cc]),
            ("rmin", rmin[rows, cc]),
            ("wp", wp),
            ("rt", rx[k][rows]),
            ("re", ry[k][cc]),
        ):
            cols[name].append(val)
    if not cols["frame"]:
        empty, none = np.empty(0, dtype=np.int64), np.empty(0)
        close = Close(empty, none, none, np.zeros(1, dtype=np.int64), empty, empty, K, n, m)
        return _Pairs(close, none, none, none)
    frame, truth, est, rmin, wp, rt, re = (np.concatenate(cols[name]) for name in cols)
    key = truth.astype(np.int64) * m + est
    order = np.lexsort((frame, key))  # by pair, then frame
    key, frame, rmin, wp, rt, re = key[order], frame[order], rmin[order], wp[order], rt[order], re[order]
    starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    ptr = np.append(starts, key.size).astype(np.int64)
    pair_key = key[starts]
    close = Close(frame, rmin * wp, rmin * (wp - c**p), ptr, pair_key // m, pair_key % m, K, n, m)
    return _Pairs(close, np.abs(rt - re) * (c**p / 2.0), rt, re)


def _free_existence(seq: LabelledSequence, r: list, held: np.ndarray) -> np.ndarray:
    """(K,) the existence summed over the Bernoullis of each frame whose index is not ``held`` (K, count)."""
    K = seq.frames
    sizes = [idx.size for idx in seq.index]
    if sum(sizes) == 0:
        return np.zeros(K)
    frame = np.repeat(np.arange(K), sizes)
    index = np.concatenate(seq.index)
    rr = np.concatenate(r)
    free = ~held[frame, index]
    return np.bincount(frame[free], weights=rr[free], minlength=K).astype(float)


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
    w = _solve(gain, close.truth, close.est, n, m, gamma**p, integer=False)
    we = w[close.frame, pair] if pair.size else np.empty(0)  # weight of each close entry
    frame_loc = np.bincount(close.frame, weights=we * close.dist_p, minlength=K).astype(float)
    frame_mis = np.bincount(close.frame, weights=we * pairs.mismatch, minlength=K).astype(float)
    half = c**p / 2.0
    total_x = np.array([float(np.sum(r)) for r in rx])
    total_y = np.array([float(np.sum(r)) for r in ry])
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
