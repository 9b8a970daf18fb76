"""Box measures as the MOTChallenge benchmark computes them: IoU similarity, HOTA, CLEAR and Identity.

The definitions are TrackEval's (Luiten & Hoffhues, TrackEval 1.3.0,
https://github.com/JonathonLuiten/TrackEval: ``datasets/_base_dataset.py``
``_calculate_box_ious``, ``metrics/hota.py``, ``metrics/clear.py``,
``metrics/identity.py``), the reference implementation of the MOTChallenge
benchmark:

* the similarity of two boxes is their intersection over union (IoU), 0
  where a box or the union has no area (up to machine epsilon);
* HOTA on the IoU at the 19 thresholds alpha = 0.05 .. 0.95
  (:func:`nllbench.measures.hota.hota_similarity`);
* CLEAR on IoU >= 0.5 with continued matches first
  (:func:`nllbench.measures.metrics.clear_similarity`), MOTP the mean IoU
  of the matches, with MT / PT / ML (tracked share > 0.8, >= 0.2, below)
  and Frag counted as TrackEval counts them;
* Identity on IoU >= 0.5 (:func:`nllbench.measures.metrics.identity_similarity`).

:func:`box_measures` gives one sequence's fields under TrackEval's names
(``HOTA``, ``DetA``, ..., ``MOTA``, ``IDF1``, ``CLR_TP``, ...), with
TrackEval's conventions for empty sequences; :func:`combine_sequences`
combines sequences as TrackEval's ``COMBINED_SEQ`` (counts summed, the
association and localisation scores weighted by their true positives).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from nllbench.measures.point.metrics import (
    ClearMOTResult,
    IdentityResult,
    clear_similarity,
    identity_similarity,
)
from nllbench.measures.run.cpu_clock import CPUClock
from nllbench.measures.tracks.hota import ALPHAS, HOTAResult, hota_similarity

_EPS = np.finfo(float).eps

#: HOTA's per-alpha fields (reported as their mean over alpha, and per alpha).
HOTA_ARRAYS = ("HOTA", "DetA", "AssA", "DetRe", "DetPr", "AssRe", "AssPr", "LocA", "OWTA")
#: HOTA's per-alpha counts.
HOTA_COUNTS = ("HOTA_TP", "HOTA_FN", "HOTA_FP")
#: HOTA's scalars at the first alpha.
HOTA_ZERO = ("HOTA(0)", "LocA(0)", "HOTALocA(0)")
#: CLEAR's counts and its float fields.
CLEAR_COUNTS = ("CLR_TP", "CLR_FN", "CLR_FP", "IDSW", "MT", "PT", "ML", "Frag", "CLR_Frames")
CLEAR_FLOATS = (
    "MOTA",
    "MOTP",
    "MODA",
    "CLR_Re",
    "CLR_Pr",
    "MTR",
    "PTR",
    "MLR",
    "sMOTA",
    "CLR_F1",
    "FP_per_frame",
    "MOTAL",
    "MOTP_sum",
)
#: Identity's counts and its float fields.
IDENTITY_COUNTS = ("IDTP", "IDFN", "IDFP")
IDENTITY_FLOATS = ("IDF1", "IDR", "IDP")
#: Every count field (integers).
COUNT_FIELDS = HOTA_COUNTS + CLEAR_COUNTS + IDENTITY_COUNTS
#: Every scalar float field (HOTA's arrays by their mean over alpha).
FLOAT_FIELDS = HOTA_ARRAYS + HOTA_ZERO + CLEAR_FLOATS + IDENTITY_FLOATS
#: The similarity threshold of CLEAR and Identity.
IOU_THRESHOLD = 0.5


def box_iou(boxes1, boxes2) -> np.ndarray:
    """Intersection over union of every pair of boxes ``(left, top, width, height)``: (n, m).

    As TrackEval's ``_calculate_box_ious`` (the same operations in the same
    order, so the same floats): corners ``x1 = left + width``; a box with area
    <= eps, or a pair with union <= eps, has IoU 0.

    Examples
    --------
    >>> box_iou([[0, 0, 2, 2]], [[1, 0, 2, 2], [5, 5, 1, 1]])
    array([[0.33333333, 0.        ]])
    """
    n, m = np.size(boxes1) // 4, np.size(boxes2) // 4
    i, j = np.repeat(np.arange(n), m), np.tile(np.arange(m), n)
    return box_iou_pairs(boxes1, boxes2, i, j).reshape(n, m)


def box_iou_pairs(boxes1, boxes2, i, j) -> np.ndarray:
    """The IoU of the pairs ``(boxes1[i[p]], boxes2[j[p]])``: (P,), the floats of :func:`box_iou`.

    Parameters
    ----------
    boxes1, boxes2 : (n, 4) and (m, 4) boxes ``(left, top, width, height)``
    i, j : (P,) int
        Indices into ``boxes1`` and ``boxes2``.

    Examples
    --------
    >>> box_iou_pairs([[0, 0, 2, 2]], [[1, 0, 2, 2], [5, 5, 1, 1]], [0, 0], [1, 0])
    array([0.        , 0.33333333])
    """
    a = np.array(boxes1, dtype=float).reshape(-1, 4)
    b = np.array(boxes2, dtype=float).reshape(-1, 4)
    i, j = np.asarray(i, dtype=np.int64), np.asarray(j, dtype=np.int64)
    a[:, 2] = a[:, 0] + a[:, 2]
    a[:, 3] = a[:, 1] + a[:, 3]
    b[:, 2] = b[:, 0] + b[:, 2]
    b[:, 3] = b[:, 1] + b[:, 3]
    area1 = ((a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1]))[i]
    area2 = ((b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1]))[j]
    width = np.maximum(np.minimum(a[i, 2], b[j, 2]) - np.maximum(a[i, 0], b[j, 0]), 0)
    inter = width * np.maximum(np.minimum(a[i, 3], b[j, 3]) - np.maximum(a[i, 1], b[j, 1]), 0)
    union = area1 + area2 - inter
    inter[(area1 <= _EPS) | (area2 <= _EPS) | (union <= _EPS)] = 0
    union[union <= _EPS] = 1
    return inter / union


@dataclass(frozen=True)
class BoxMeasures:
    """One sequence's (or the combined) MOTChallenge measures under TrackEval's field names.

    Attributes
    ----------
    fields : dict
        Every name of :data:`FLOAT_FIELDS` (float; HOTA's per-alpha fields by
        their mean over alpha) and :data:`COUNT_FIELDS` (int; HOTA's counts by
        their sum over alpha is *not* given: see ``alpha``).
    alpha : dict
        HOTA's per-alpha fields, (19,) float, and counts, (19,) int64.
    hota, clear, identity : the :class:`~nllbench.measures.hota.HOTAResult`,
        :class:`~nllbench.measures.metrics.ClearMOTResult` and
        :class:`~nllbench.measures.metrics.IdentityResult` of one sequence, with
        TrackEval's MOTA, MOTP (mean IoU), IDF1, IDP and IDR (None when combined).
    seconds : the CPU seconds they took (0 when combined).
    cpu_seconds : of which each measure's own work, by name (``hota``, ``clear_mot``, ``identity``;
        the final fields' few operations left out; empty when combined).
    """

    fields: dict
    alpha: dict
    hota: HOTAResult | None = None
    clear: ClearMOTResult | None = None
    identity: IdentityResult | None = None
    seconds: float = 0.0
    cpu_seconds: dict = field(default_factory=dict, compare=False)


def box_measures(similarities, truth_ids, track_ids, frames: int) -> BoxMeasures:
    """HOTA, CLEAR and Identity of one sequence from its per-frame IoU, as TrackEval computes them.

    Parameters
    ----------
    similarities : sequence (one per frame) of (n_k, m_k) IoU arrays
    truth_ids, track_ids : sequences of (n_k,) and (m_k,) integer identities
    frames : the sequence's number of frames (TrackEval's ``CLR_Frames``)
    """
    cpu0, clock = time.process_time(), CPUClock()
    n_gt = sum(np.size(i) for i in truth_ids)
    n_tr = sum(np.size(i) for i in track_ids)
    ho = hota_similarity(similarities, truth_ids, track_ids)
    clock.charge("hota")
    cm, matched = clear_similarity(similarities, truth_ids, track_ids, IOU_THRESHOLD)
    clock.charge("clear_mot")
    ids = identity_similarity(similarities, truth_ids, track_ids, IOU_THRESHOLD)
    clock.charge("identity")
    alpha = {
        "HOTA_TP": ho.tp.astype(np.int64),
        "HOTA_FN": ho.fn.astype(np.int64),
        "HOTA_FP": ho.fp.astype(np.int64),
        "AssA": ho.assa_alpha,
        "AssRe": ho.ass_re_alpha,
        "AssPr": ho.ass_pr_alpha,
        "LocA": ho.loca_alpha,
    }
    alpha = _hota_final(alpha)
    counts = {"IDTP": ids.idtp, "IDFN": ids.idfn, "IDFP": ids.idfp}
    tp = cm.matches + cm.switches
    clear = {"CLR_TP": tp, "CLR_FN": cm.misses, "CLR_FP": cm.false_positives, "IDSW": cm.switches}
    clear.update(_track_counts(truth_ids, track_ids, matched))
    clock.charge("clear_mot")
    clear["CLR_Frames"] = int(frames)
    clear["MOTP_sum"] = cm.distance_sum
    if n_tr == 0 or n_gt == 0:  # TrackEval's early returns: no final fields computed
        fields = dict.fromkeys(CLEAR_FLOATS, 0.0)
        fields.update(dict.fromkeys(CLEAR_COUNTS, 0))
        fields.update(CLR_FN=n_gt, CLR_FP=n_tr, MLR=1.0)
        fields["ML"] = clear["ML"] if n_tr == 0 else 0
    else:
        fields = _clear_final(clear)
    fields.update(_identity_final(counts))
    fields.update(_hota_fields(alpha))
    cm = replace(cm, mota=fields["MOTA"], motp=fields["MOTP"])
    ids = replace(ids, idf1=fields["IDF1"], idp=fields["IDP"], idr=fields["IDR"])
    return BoxMeasures(fields, alpha, ho, cm, ids, time.process_time() - cpu0, clock.seconds)


def combine_sequences(results: Sequence[BoxMeasures]) -> BoxMeasures:
    """The sequences combined as TrackEval's ``COMBINED_SEQ``.

    Counts (HOTA's per alpha, CLEAR's, Identity's, and CLEAR's ``MOTP_sum``)
    are summed; AssA, AssRe, AssPr and LocA are averaged per alpha weighted
    by each sequence's HOTA true positives; every ratio is then recomputed
    from the combined values.
    """
    if not results:
        raise ValueError("results: expected at least one sequence to combine, got none")
    alpha = {k: np.sum([r.alpha[k] for r in results], axis=0).astype(np.int64) for k in HOTA_COUNTS}
    weight = np.maximum(1.0, alpha["HOTA_TP"])
    for k in ("AssRe", "AssPr", "AssA"):
        alpha[k] = sum(r.alpha[k] * r.alpha["HOTA_TP"] for r in results) / weight
    loca = sum(r.alpha["LocA"] * r.alpha["HOTA_TP"] for r in results)
    alpha["LocA"] = np.maximum(1e-10, loca) / np.maximum(1e-10, alpha["HOTA_TP"])
    alpha = _hota_final(alpha)
    clear = {k: sum(r.fields[k] for r in results) for k in (*CLEAR_COUNTS, "MOTP_sum")}
    counts = {k: sum(r.fields[k] for r in results) for k in IDENTITY_COUNTS}
    fields = _clear_final(clear)
    fields.update(_identity_final(counts))
    fields.update(_hota_fields(alpha))
    return BoxMeasures(fields, alpha)


def _track_counts(truth_ids, track_ids, matched) -> dict:
    """MT, PT, ML and Frag as TrackEval's CLEAR counts them (from the per-frame matched identities).

    A frame with truth but no tracks counts towards a truth's presence, not its
    matches; only frames with both reset the "tracked in the previous frame"
    state that Frag counts (as TrackEval).
    """
    every = np.unique(np.concatenate([np.asarray(i, dtype=np.int64).reshape(-1) for i in truth_ids] + [[]]))
    every = every.astype(np.int64)
    present = np.zeros(every.size)
    hit = np.zeros(every.size)
    frag = np.zeros(every.size)
    tracked = np.zeros(every.size, dtype=bool)
    for gt, tr, (m_gt, _) in zip(truth_ids, track_ids, matched, strict=True):
        gt = np.asarray(gt, dtype=np.int64).reshape(-1)
        if gt.size == 0:
            continue
        present[np.searchsorted(every, gt)] += 1
        if np.size(tr) == 0:
            continue
        now = np.zeros(every.size, dtype=bool)
        now[np.searchsorted(every, m_gt)] = True
        hit[now] += 1
        frag += ~tracked & now
        tracked = now
    ratio = hit[present > 0] / present[present > 0]
    mt = int(np.sum(ratio > 0.8))
    pt = int(np.sum(ratio >= 0.2)) - mt
    return {"MT": mt, "PT": pt, "ML": int(every.size) - mt - pt, "Frag": int(np.sum(frag[frag > 0] - 1))}


def _clear_final(res: dict) -> dict:
    """CLEAR's fields from its counts and ``MOTP_sum`` (TrackEval's ``_compute_final_fields``)."""
    out = {k: int(res[k]) for k in CLEAR_COUNTS}
    tp, fn, fp, sw = (float(res[k]) for k in ("CLR_TP", "CLR_FN", "CLR_FP", "IDSW"))
    motp_sum = float(res["MOTP_sum"])
    n_ids = max(1.0, float(res["MT"] + res["ML"] + res["PT"]))
    gt = max(1.0, tp + fn)
    log_sw = np.log10(sw) if sw > 0 else sw
    out.update(
        MTR=res["MT"] / n_ids,
        MLR=res["ML"] / n_ids,
        PTR=res["PT"] / n_ids,
        CLR_Re=tp / gt,
        CLR_Pr=tp / max(1.0, tp + fp),
        MODA=(tp - fp) / gt,
        MOTA=(tp - fp - sw) / gt,
        MOTP=motp_sum / max(1.0, tp),
        sMOTA=(motp_sum - fp - sw) / gt,
        CLR_F1=tp / max(1.0, tp + 0.5 * fn + 0.5 * fp),
        FP_per_frame=fp / max(1.0, float(res["CLR_Frames"])),
        MOTAL=float((tp - fp - log_sw) / gt),
        MOTP_sum=motp_sum,
    )
    return out


def _identity_final(res: dict) -> dict:
    """Identity's fields from IDTP, IDFN, IDFP (TrackEval's ``_compute_final_fields``)."""
    tp, fn, fp = (int(res[k]) for k in IDENTITY_COUNTS)
    return {
        "IDTP": tp,
        "IDFN": fn,
        "IDFP": fp,
        "IDR": tp / max(1.0, tp + fn),
        "IDP": tp / max(1.0, tp + fp),
        "IDF1": tp / max(1.0, tp + 0.5 * fp + 0.5 * fn),
    }


def _hota_final(alpha: dict) -> dict:
    """HOTA's per-alpha ratios from its counts, AssA and LocA (TrackEval's ``_compute_final_fields``)."""
    tp, fn, fp = (alpha[k].astype(float) for k in HOTA_COUNTS)
    out = dict(alpha)
    out["DetRe"] = tp / np.maximum(1, tp + fn)
    out["DetPr"] = tp / np.maximum(1, tp + fp)
    out["DetA"] = tp / np.maximum(1, tp + fn + fp)
    out["HOTA"] = np.sqrt(out["DetA"] * out["AssA"])
    out["OWTA"] = np.sqrt(out["DetRe"] * out["AssA"])
    return out


def _hota_fields(alpha: dict) -> dict:
    """HOTA's scalars: each per-alpha field's mean over alpha, and the fields at the first alpha."""
    out = {k: float(np.mean(alpha[k])) for k in HOTA_ARRAYS}
    h0, l0 = float(alpha["HOTA"][0]), float(alpha["LocA"][0])
    out.update({"HOTA(0)": h0, "LocA(0)": l0, "HOTALocA(0)": h0 * l0})
    return out


__all__ = [
    "ALPHAS",
    "BoxMeasures",
    "box_iou",
    "box_iou_pairs",
    "box_measures",
    "combine_sequences",
]
