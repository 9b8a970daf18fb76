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
from nllbench.measures._sequences import distances, labelled_sequence, sequence_factors

#: The 19 localisation thresholds 0.05, 0.10, ..., 0.95 (as an arange, like the reference).
ALPHAS = np.arange(0.05, 0.99, 0.05)
_EPS = np.finfo(float).eps


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
    >>> r.deta, r.assa
    (0.5, 0.5)
    """
    if not len(similarities) == len(truth_ids) == len(estimate_ids):
        raise ValueError(
            f"similarities: expected one per frame like truth_ids ({len(truth_ids)}) and "
            f"estimate_ids ({len(estimate_ids)}), got {len(similarities)}"
        )
    gi, n_gt = _id_index(truth_ids, "truth_ids")
    tj, n_est = _id_index(estimate_ids, "estimate_ids")
    sims = []
    for k, S in enumerate(similarities):
        S = np.asarray(S, dtype=float).reshape(gi[k].size, tj[k].size)
        if S.size and not (np.all(S >= 0.0) and np.all(S <= 1.0)):
            raise ValueError(f"similarities[{k}]: expected values in [0, 1], got {S.min()} .. {S.max()}")
        sims.append(S)
    return _hota_core(sims, gi, tj, n_gt, n_est, 1.0)


def _id_index(ids, name: str) -> tuple[list[np.ndarray], int]:
    """Per-frame indices 0..n-1 of the distinct identities (sorted), and n; identities distinct per frame."""
    frames = [np.asarray(i, dtype=np.int64).reshape(-1) for i in ids]
    for k, lab in enumerate(frames):
        if np.unique(lab).size != lab.size:
            raise ValueError(f"{name}[{k}]: expected distinct identities, got {lab.tolist()}")
    every = np.unique(np.concatenate([*frames, np.empty(0, dtype=np.int64)]))
    return [np.searchsorted(every, lab) for lab in frames], int(every.size)


def _hota_core(sims, gt_index, est_index, n_gt: int, n_est: int, threshold: float) -> HOTAResult:
    """HOTA from per-frame similarities and identity indices (:func:`hota`, :func:`hota_similarity`)."""
    n_i = np.bincount(np.concatenate([*gt_index, np.empty(0, dtype=np.int64)]), minlength=n_gt)
    n_j = np.bincount(np.concatenate([*est_index, np.empty(0, dtype=np.int64)]), minlength=n_est)
    align = _global_alignment(sims, gt_index, est_index, n_i, n_j)
    A = ALPHAS.size
    tp, fn, fp = (np.zeros(A, dtype=np.int64) for _ in range(3))
    loc_sum = np.zeros(A)
    pair_tp = np.zeros((A, n_gt, n_est))  # |TPA| per alpha and identity pair
    for S, gi, tj in zip(sims, gt_index, est_index, strict=True):
        rows, cols = (np.empty(0, dtype=np.int64),) * 2
        if S.size:
            rows, cols = linear_sum_assignment(align[np.ix_(gi, tj)] * S, maximize=True)
        s = S[rows, cols]
        counts = s[None, :] >= ALPHAS[:, None] - _EPS  # (A, matched pairs)
        k_tp = counts.sum(axis=1)
        tp += k_tp
        fn += gi.size - k_tp
        fp += tj.size - k_tp
        loc_sum += (counts * s[None, :]).sum(axis=1)
        a_idx, m_idx = np.nonzero(counts)
        np.add.at(pair_tp, (a_idx, gi[rows[m_idx]], tj[cols[m_idx]]), 1.0)
    return _scores(tp, fn, fp, loc_sum, pair_tp, n_i, n_j, threshold)


def _global_alignment(sims, gt_index, est_index, n_i, n_j) -> np.ndarray:
    """A_ij = C_ij / (n_i + n_j - C_ij) with C the similarity-normalised co-occurrence (module notes)."""
    C = np.zeros((n_i.size, n_j.size))
    for S, gi, tj in zip(sims, gt_index, est_index, strict=True):
        if not S.size:
            continue
        denom = S.sum(axis=0)[None, :] + S.sum(axis=1)[:, None] - S
        ok = denom > _EPS
        share = np.zeros_like(S)
        share[ok] = S[ok] / denom[ok]
        C[np.ix_(gi, tj)] += share
    return C / (n_i[:, None] + n_j[None, :] - C)


def _scores(tp, fn, fp, loc_sum, pair_tp, n_i, n_j, threshold) -> HOTAResult:
    """The scores from the counts (zero-division conventions as in the module notes)."""
    union = n_i[None, :, None] + n_j[None, None, :] - pair_tp
    per_tp = np.maximum(1, tp)

    def weighted(ratio):  # mean over true positives of a per-pair ratio
        return (pair_tp * ratio).sum(axis=(1, 2)) / per_tp

    assa = weighted(pair_tp / np.maximum(1, union))
    ass_re = weighted(pair_tp / np.maximum(1, n_i[None, :, None]))
    ass_pr = weighted(pair_tp / np.maximum(1, n_j[None, None, :]))
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
