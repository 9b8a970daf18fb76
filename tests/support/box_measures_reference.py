"""Plain per-frame references of HOTA's counts and sums, Identity's co-occurrence counts and the
MOTChallenge preprocessing: the loops nllbench ran before they were vectorised (dense arrays, one frame
at a time), to compare the fast code with bit for bit."""

from __future__ import annotations

import numpy as np
from scipy.optimize import linear_sum_assignment

from nllbench.measures.boxes import box_iou
from nllbench.measures.tracks.hota import ALPHAS

_EPS = np.finfo(float).eps


def dense_alignment(sims, gt_index, est_index, n_gt: int, n_est: int) -> np.ndarray:
    """HOTA's global alignment score (n_gt, n_est), one frame at a time."""
    n_i = np.bincount(np.concatenate([*gt_index, np.empty(0, dtype=np.int64)]), minlength=n_gt)
    n_j = np.bincount(np.concatenate([*est_index, np.empty(0, dtype=np.int64)]), minlength=n_est)
    C = np.zeros((n_gt, n_est))
    for S, gi, tj in zip(sims, gt_index, est_index, strict=True):
        if not S.size:
            continue
        denom = S.sum(axis=0)[None, :] + S.sum(axis=1)[:, None] - S
        ok = denom > _EPS
        share = np.zeros_like(S)
        share[ok] = S[ok] / denom[ok]
        C[np.ix_(gi, tj)] += share
    return C / (n_i[:, None] + n_j[None, :] - C)


def dense_hota(sims, gt_index, est_index, n_gt: int, n_est: int) -> dict:
    """HOTA's per-alpha arrays from per-frame similarities and identity indices 0..n-1, with the dense
    (A, n_gt, n_est) |TPA| array: tp, fn, fp, loc_sum, assa, ass_re, ass_pr."""
    n_i = np.bincount(np.concatenate([*gt_index, np.empty(0, dtype=np.int64)]), minlength=n_gt)
    n_j = np.bincount(np.concatenate([*est_index, np.empty(0, dtype=np.int64)]), minlength=n_est)
    align = dense_alignment(sims, gt_index, est_index, n_gt, n_est)
    A = ALPHAS.size
    tp, fn, fp = (np.zeros(A, dtype=np.int64) for _ in range(3))
    loc_sum = np.zeros(A)
    pair_tp = np.zeros((A, n_gt, n_est))
    for S, gi, tj in zip(sims, gt_index, est_index, strict=True):
        rows, cols = (np.empty(0, dtype=np.int64),) * 2
        if S.size:
            rows, cols = linear_sum_assignment(align[np.ix_(gi, tj)] * S, maximize=True)
        s = S[rows, cols]
        counts = s[None, :] >= ALPHAS[:, None] - _EPS
        k_tp = counts.sum(axis=1)
        tp += k_tp
        fn += gi.size - k_tp
        fp += tj.size - k_tp
        loc_sum += (counts * s[None, :]).sum(axis=1)
        a_idx, m_idx = np.nonzero(counts)
        np.add.at(pair_tp, (a_idx, gi[rows[m_idx]], tj[cols[m_idx]]), 1.0)
    union = n_i[None, :, None] + n_j[None, None, :] - pair_tp
    per_tp = np.maximum(1, tp)

    def weighted(ratio):
        return (pair_tp * ratio).sum(axis=(1, 2)) / per_tp

    return {
        "tp": tp,
        "fn": fn,
        "fp": fp,
        "loc_sum": loc_sum,
        "assa": weighted(pair_tp / np.maximum(1, union)),
        "ass_re": weighted(pair_tp / np.maximum(1, n_i[None, :, None])),
        "ass_pr": weighted(pair_tp / np.maximum(1, n_j[None, None, :])),
    }


def identity_gain(sims, truth_ids, estimate_ids, threshold: float) -> np.ndarray:
    """Identity's (truth identities, estimate identities) co-occurrence counts, one frame at a time."""
    o_all = np.unique(np.concatenate([np.asarray(o, dtype=np.int64) for o in truth_ids] + [[]]))
    h_all = np.unique(np.concatenate([np.asarray(h, dtype=np.int64) for h in estimate_ids] + [[]]))
    gain = np.zeros((o_all.size, h_all.size))
    for S, o, h in zip(sims, truth_ids, estimate_ids, strict=True):
        i, j = np.nonzero(np.asarray(S, dtype=float).reshape(len(o), len(h)) >= threshold)
        np.add.at(
            gain, (np.searchsorted(o_all, np.asarray(o)[i]), np.searchsorted(h_all, np.asarray(h)[j])), 1.0
        )
    return gain


def preprocessed_frames(g_frame, g_id, g_box, g_class, g_flag, t_frame, t_id, t_box, distractors):
    """TrackEval's MOTChallenge preprocessing one frame at a time (IoU, Hungarian match in every frame,
    distractor matches removed, pedestrians considered kept): per frame (truth ids, track ids, IoU), and
    the tracker rows kept."""
    frames = np.union1d(g_frame, t_frame)
    keep_t = np.ones(t_frame.size, dtype=bool)
    keep_g = (g_flag != 0) & (g_class == 1)
    out = []
    for f in frames.tolist():
        gi, ti = np.flatnonzero(g_frame == f), np.flatnonzero(t_frame == f)
        iou = box_iou(g_box[gi], t_box[ti])
        if gi.size and ti.size:
            score = iou.copy()
            score[score < 0.5 - _EPS] = 0
            rows, cols = linear_sum_assignment(-score)
            ok = score[rows, cols] > _EPS
            removed = cols[ok][np.isin(g_class[gi[rows[ok]]], distractors)]
            keep_t[ti[removed]] = False
        kt, kg = keep_t[ti], keep_g[gi]
        out.append((g_id[gi[kg]], t_id[ti[kt]], iou[np.ix_(kg, kt)]))
    return out, keep_t
