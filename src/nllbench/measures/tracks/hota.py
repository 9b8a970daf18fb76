"""HOTA for point states (Luiten et al., "HOTA: A Higher Order Metric for Evaluating
Multi-Object Tracking", IJCV 129, 2021).

Similarity of a true point x and an estimate y: S = max(0, 1 - d(x, y) / threshold), with d
Euclidean, or the Mahalanobis distance under the estimate's covariance when ``estimate_covs``
is given (:mod:`nllbench.measures._sequences`; then ``threshold`` is in those units).
For each localisation threshold alpha in {0.05, 0.10, ..., 0.95}:

    DetA  = |TP| / (|TP| + |FN| + |FP|)
    AssA  = (1 / |TP|) sum_{c in TP} |TPA(c)| / (|TPA(c)| + |FNA(c)| + |FPA(c)|)
    HOTA  = sqrt(DetA * AssA)
    LocA  = (1 / |TP|) sum_{c in TP} S(c)

where, for a true positive c pairing true identity i with estimated identity
j, TPA(c) are the frames in which (i, j) are matched, FNA(c) the frames in
which i is present but not matched to j, FPA(c) those in which j is present
but not matched to i; so |TPA| + |FNA| + |FPA| = n_i + n_j - |TPA| with n_i, n_j
the frames in which i, j are present.

Matching (as described in the paper and done by the authors' reference implementation
TrackEval): one matching per frame, shared by every alpha, maximising
sum A_ij S_ij over one-to-one pairs (Hungarian), with the global alignment

    A_ij = C_ij / (n_i + n_j - C_ij),  C_ij = sum_k S^k_ij / (sum_j' S^k_ij' + sum_i' S^k_i'j - S^k_ij),

then a matched pair counts at alpha when S >= alpha (up to one ulp of 1).
Conventions for empty cases follow the reference: DetA and AssA are 0 when
there is no true positive (so HOTA = 0), and LocA is 1.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import linear_sum_assignment

from nllbench.engine import validate as v
from nllbench.measures._pairwise import pairwise_sums, segment_sums
from nllbench.measures._sequences import distances, labelled_sequence, sequence_factors

#: The 19 localisation thresholds 0.05, 0.10, ..., 0.95 (as an arange, like the reference).
ALPHAS = np.arange(0.05, 0.99, 0.05)
_EPS = np.finfo(float).eps
_NONE = np.empty(0, dtype=np.int64)


@dataclass(frozen=True)
class HOTAResult:
    """HOTA and its sub-measures: scalars are means over :data:`ALPHAS`, ``*_alpha`` arrays are (19,).

    Attributes
    ----------
    hota, deta, assa, loca : float
    hota_alpha, deta_alpha, assa_alpha, loca_alpha : (A,) float
    det_re_alpha, det_pr_alpha, ass_re_alpha, ass_pr_alpha : (A,) float
        Detection recall TP / (TP + FN) and precision TP / (TP + FP); association recall and
        precision: the AssA mean with |TPA| / (|TPA| + |FNA|) and |TPA| / (|TPA| + |FPA|).
    tp, fn, fp : (A,) int
        Detection counts per alpha.
    alphas : (A,) float
    threshold : float
    """

    hota: float
    deta: float
    assa: float
    loca: float
    hota_alpha: np.ndarray
    deta_alpha: np.ndarray
    assa_alpha: np.ndarray
    loca_alpha: np.ndarray
    det_re_alpha: np.ndarray
    det_pr_alpha: np.ndarray
    ass_re_alpha: np.ndarray
    ass_pr_alpha: np.ndarray
    tp: np.ndarray
    fn: np.ndarray
    fp: np.ndarray
    alphas: np.ndarray
    threshold: float


def hota(
    truth, truth_ids, estimates, estimate_ids, threshold: float = 2.0, *, estimate_covs=None
) -> HOTAResult:
    """HOTA, DetA, AssA and LocA of estimated against true point trajectories.

    Parameters
    ----------
    truth, estimates : sequences (one per frame) of (n_k, d) and (m_k, d) arrays
    truth_ids, estimate_ids : sequences of (n_k,) and (m_k,) integer identities
    threshold : float
        Distance at which the similarity ``1 - d / threshold`` reaches 0.
    estimate_covs : sequence of (m_k, d, d) arrays, optional
        The estimates' covariances: d is then the Mahalanobis distance of the
        true state from the estimate (covariance-aware similarity).

    Returns
    -------
    HOTAResult

    Examples
    --------
    >>> r = hota([[[0.0, 0.0]], [[0.0, 0.0]]], [[1], [1]], [[[0.0, 0.0]], [[0.0, 0.0]]], [[5], [5]])
    >>> r.hota, r.deta, r.assa, r.loca
    (1.0, 1.0, 1.0, 1.0)
    """
    threshold = v.positive_scalar(threshold, "threshold")
    X = labelled_sequence(truth, truth_ids, "truth", "truth_ids")
    Y = labelled_sequence(estimates, estimate_ids, "estimates", "estimate_ids", frames=X.frames)
    chol = sequence_factors(estimate_covs, Y.points) or [None] * X.frames
    sims = [
        np.maximum(0.0, 1.0 - distances(X.points[k], Y.points[k], chol[k]) / threshold)
        for k in range(X.frames)
    ]
    return _hota_core(sims, X.index, Y.index, X.count, Y.count, threshold)


def hota_similarity(similarities, truth_ids, estimate_ids) -> HOTAResult:
    """HOTA and its sub-measures from per-frame similarities in [0, 1] (e.g. box IoU), as TrackEval.

    The same core as :func:`hota` (one matching per frame, the global
    alignment, the alpha thresholds, the empty-case conventions), fed the
    similarities directly instead of ``1 - d / threshold``.

    Parameters
    ----------
    similarities : sequence (one per frame) of (n_k, m_k) arrays
        ``similarities[k][i, j]``: similarity of frame k's truth i and estimate j.
    truth_ids, estimate_ids : sequences of (n_k,) and (m_k,) integer identities

    Returns
    -------
    HOTAResult
        ``threshold`` is 1.0 (the similarity is taken as it is).

    Examples
    --------
    >>> r = hota_similarity([[[0.5]]], [[1]], [[7]])
    >>> r.deta, r.assa  # matched at the 10 alphas 0.05 .. 0.5 of 19
    (0.5263157894736842, 0.5263157894736842)
    """
    if not len(similarities) == len(truth_ids) == len(estimate_ids):
        raise ValueError(
            f"similarities: expected one per frame like truth_ids ({len(truth_ids)}) and "
            f"estimate_ids ({len(estimate_ids)}), got {len(similarities)}"
        )
    gi, n_gt = _id_index(truth_ids, "truth_ids")
    tj, n_est = _id_index(estimate_ids, "estimate_ids")
    sims = [
        np.asarray(S, dtype=float).reshape(a.size, b.size)
        for S, a, b in zip(similarities, gi, tj, strict=True)
    ]
    flat = np.concatenate([S.ravel() for S in sims] + [np.empty(0)])
    bad = np.flatnonzero(~((flat >= 0.0) & (flat <= 1.0)))
    if bad.size:
        k = int(np.searchsorted(np.cumsum([S.size for S in sims]), bad[0], side="right"))
        S = sims[k]
        raise ValueError(f"similarities[{k}]: expected values in [0, 1], got {S.min()} .. {S.max()}")
    return _hota_core(sims, gi, tj, n_gt, n_est, 1.0)


def _id_index(ids, name: str) -> tuple[list[np.ndarray], int]:
    """Per-frame indices 0..n-1 of the distinct identities (sorted), and n; identities distinct per frame."""
    frames = [np.asarray(i, dtype=np.int64).reshape(-1) for i in ids]
    sizes = np.array([lab.size for lab in frames], dtype=np.int64)
    every, index = np.unique(np.concatenate([*frames, _NONE]), return_inverse=True)
    key = np.sort(np.repeat(np.arange(sizes.size), sizes) * max(1, every.size) + index)
    twice = key[1:][key[1:] == key[:-1]]
    if twice.size:
        k = int(twice[0] // max(1, every.size))
        raise ValueError(f"{name}[{k}]: expected distinct identities, got {frames[k].tolist()}")
    return np.split(index.reshape(-1), np.cumsum(sizes)[:-1]) if frames else [], int(every.size)


def _hota_core(sims, gt_index, est_index, n_gt: int, n_est: int, threshold: float) -> HOTAResult:
    """HOTA from per-frame similarities and identity indices (:func:`hota`, :func:`hota_similarity`).

    A match passes the alphas ``0 .. level - 1`` (its ``level``: how many of ``ALPHAS - eps`` it
    reaches), so the per-alpha counts come from one level per match, and the identity pairs' |TPA|
    are kept sparse; the float sums are numpy's pairwise sums of the dense arrays the module notes
    define (``(A, m_k)`` per frame, ``(A, n_gt, n_est)`` for the association scores), computed from
    their non-zero entries only (:func:`~nllbench.measures._pairwise.pairwise_sums`), so the same floats.
    """
    e = _entries(sims, gt_index, est_index)
    n_i = np.bincount(e.rows_g, minlength=n_gt)
    n_j = np.bincount(e.cols_t, minlength=n_est)
    align = _global_alignment(e, n_i, n_j)
    weight = align.ravel()[e.g * n_est + e.t] * e.s  # align[np.ix_(gi, tj)] * S of every frame
    A = ALPHAS.size
    found = [
        linear_sum_assignment(weight[lo:hi].reshape(n, m), maximize=True) if hi > lo else _NO_MATCH
        for lo, hi, n, m in zip(e.first[:-1], e.first[1:], e.n, e.m, strict=True)
    ]
    per_frame = np.array([r.size for r, _ in found], dtype=np.int64)
    frame = np.repeat(np.arange(e.n.size), per_frame)
    at = e.first[frame] + np.concatenate([r * m for (r, _), m in zip(found, e.m, strict=True)] + [_NONE])
    at = at + np.concatenate([c for _, c in found] + [_NONE])  # the matches' entries, frame by frame
    s, g, t = e.s[at], e.g[at], e.t[at]
    level = np.searchsorted(ALPHAS - _EPS, s, side="right")  # s >= ALPHAS[a] - eps for a < level
    passed = np.bincount(level, minlength=A + 1)
    tp = passed[::-1].cumsum()[::-1][1:].astype(np.int64)
    fn = int(e.rows_g.size) - tp
    fp = int(e.cols_t.size) - tp
    loc_sum = _frame_loc_sums(s, level, per_frame).cumsum(axis=0)[-1] if per_frame.size else np.zeros(A)
    key = g * n_est + t
    pairs, pair_of = np.unique(key, return_inverse=True)
    counted = np.bincount(level * pairs.size + pair_of, minlength=(A + 1) * pairs.size)
    pair_tp = counted.reshape(A + 1, pairs.size)[::-1].cumsum(axis=0)[::-1][1:].astype(float)  # (A, U)
    return _scores(tp, fn, fp, loc_sum, pair_tp, pairs, n_i, n_j, threshold)


_NO_MATCH = (_NONE, _NONE)


@dataclass(frozen=True)
class _Entries:
    """Every frame's similarity matrix flattened row by row and concatenated (E entries in all).

    Attributes
    ----------
    s : (E,) float
        The similarities.
    g, t : (E,) int
        Their truth and estimate identity indices.
    frame, col : (E,) int
        Their frame, and their column within its matrix.
    row, column : (E,) int
        Their row and column among every frame's rows (sum n_k) and columns (sum m_k).
    n, m : (K,) int
        The frames' matrix shapes.
    first : (K + 1,) int
        Each frame's first entry, then E.
    rows_g, cols_t : (sum n_k,) and (sum m_k,) int
        The identity indices of every frame's rows and columns.
    row_first : (sum n_k + 1,) int
        Each row's first entry, then E.
    """

    s: np.ndarray
    g: np.ndarray
    t: np.ndarray
    frame: np.ndarray
    col: np.ndarray
    row: np.ndarray
    column: np.ndarray
    n: np.ndarray
    m: np.ndarray
    first: np.ndarray
    rows_g: np.ndarray
    cols_t: np.ndarray
    row_first: np.ndarray


def _entries(sims, gt_index, est_index) -> _Entries:
    """The :class:`_Entries` of per-frame (n_k, m_k) similarities with identity indices (n_k,), (m_k,)."""
    n = np.array([gi.size for gi in gt_index], dtype=np.int64)
    m = np.array([tj.size for tj in est_index], dtype=np.int64)
    rows_g = np.concatenate([*gt_index, _NONE]).astype(np.int64)
    cols_t = np.concatenate([*est_index, _NONE]).astype(np.int64)
    s = np.concatenate([np.ravel(S) for S in sims] + [np.empty(0)]).astype(float)
    first = np.concatenate([[0], np.cumsum(n * m)])
    row_m = np.repeat(m, n)  # each row's length
    row_first = np.concatenate([[0], np.cumsum(row_m)])
    row = np.repeat(np.arange(rows_g.size), row_m)
    col = np.arange(s.size) - row_first[row]
    column = np.repeat(np.cumsum(m) - m, n * m) + col
    frame = np.repeat(np.arange(n.size), n * m)
    return _Entries(
        s, rows_g[row], cols_t[column], frame, col, row, column, n, m, first, rows_g, cols_t, row_first
    )


def _frame_loc_sums(s, level, per_frame) -> np.ndarray:
    """(K, A): each frame's ``(counts * s).sum(axis=1)`` with counts (A, m_k) the alphas its matches pass.

    ``s`` and ``level`` (Q,): the matches frame by frame, ``per_frame`` (K,) their number per frame.
    The frames with m matches are summed together as one (frames, A, m) array (the same floats).
    """
    A = ALPHAS.size
    out = np.zeros((per_frame.size, A))
    first = np.cumsum(per_frame) - per_frame
    for m in np.unique(per_frame[per_frame > 0]).tolist():
        group = np.flatnonzero(per_frame == m)
        at = first[group][:, None] + np.arange(m)  # (frames, m)
        counts = level[at][:, None, :] > np.arange(A)[None, :, None]  # (frames, A, m)
        out[group] = (counts * s[at][:, None, :]).sum(axis=2)
    return out


def _global_alignment(e: _Entries, n_i, n_j) -> np.ndarray:
    """A_ij = C_ij / (n_i + n_j - C_ij) with C the similarity-normalised co-occurrence (module notes).

    Per frame, the share S / (column sum + row sum - S) (0 where that is <= eps) with numpy's sums of
    the frame's matrix, added into C frame by frame (``bincount`` adds in order): the floats of a
    loop over the frames. numpy sums a matrix's columns row by row, but a one-column matrix's
    column as a row (pairwise: :func:`~nllbench.measures._pairwise.segment_sums`).
    """
    nz = np.flatnonzero(e.s)  # zeros add nothing
    col_sum = np.bincount(e.column[nz], weights=e.s[nz], minlength=e.cols_t.size)
    row_sum = segment_sums(e.s, e.row_first[:-1], np.repeat(e.m, e.n))
    lone = np.flatnonzero(e.m == 1)  # frames of one column: numpy sums it as a row
    col_sum[(np.cumsum(e.m) - e.m)[lone]] = segment_sums(e.s, e.first[lone], e.n[lone])
    denom = col_sum[e.column] + row_sum[e.row] - e.s
    share = np.divide(e.s, denom, out=np.zeros_like(e.s), where=denom > _EPS)
    C = np.bincount(e.g * n_j.size + e.t, weights=share, minlength=n_i.size * n_j.size)
    C = C.reshape(n_i.size, n_j.size)
    return C / (n_i[:, None] + n_j[None, :] - C)


def _scores(tp, fn, fp, loc_sum, pair_tp, pairs, n_i, n_j, threshold) -> HOTAResult:
    """The scores from the counts (zero-division conventions as in the module notes).

    ``pair_tp`` (A, U): |TPA| of the identity pairs ``pairs`` (U,), flat indices ``i * n_est + j``
    (sorted) into the dense (n_gt, n_est) array of every pair, 0 elsewhere.
    """
    gi, tj = np.divmod(pairs, max(1, n_j.size))
    union = (n_i[gi] + n_j[tj])[None, :] - pair_tp
    per_tp = np.maximum(1, tp)
    at = pair_tp > 0
    a_idx, u_idx = np.nonzero(at)
    starts = np.concatenate([[0], np.cumsum(at.sum(axis=1))])
    lengths = np.full(ALPHAS.size, n_i.size * n_j.size, dtype=np.int64)

    def weighted(ratio):  # mean over true positives of a per-pair ratio
        values = (pair_tp * ratio)[a_idx, u_idx]
        return pairwise_sums(pairs[u_idx], values, starts, lengths) / per_tp

    assa = weighted(pair_tp / np.maximum(1, union))
    ass_re = weighted(pair_tp / np.maximum(1, n_i[gi][None, :]))
    ass_pr = weighted(pair_tp / np.maximum(1, n_j[tj][None, :]))
    deta = tp / np.maximum(1, tp + fn + fp)
    det_re = tp / np.maximum(1, tp + fn)
    det_pr = tp / np.maximum(1, tp + fp)
    loca = np.maximum(1e-10, loc_sum) / np.maximum(1e-10, tp)  # 1 when nothing matched
    h = np.sqrt(deta * assa)
    return HOTAResult(
        float(h.mean()),
        float(deta.mean()),
        float(assa.mean()),
        float(loca.mean()),
        h,
        deta,
        assa,
        loca,
        det_re,
        det_pr,
        ass_re,
        ass_pr,
        tp,
        fn,
        fp,
        ALPHAS.copy(),
        threshold,
    )
