"""A MOTChallenge ground truth and tracker result read together, as the benchmark's evaluation reads them.

TrackEval (Luiten & Hoffhues, TrackEval 1.3.0, ``datasets/mot_challenge_2d_box.py``,
``get_preprocessed_seq_data``), the MOTChallenge benchmark's evaluation,
prepares each frame of a sequence in this order:

1. the similarity of every ground-truth box with every tracker box is their
   IoU (:func:`nllbench.measures.boxes.box_iou`);
2. ground truth and tracker boxes are matched (Hungarian, IoU >= 0.5, every
   ground-truth class and consider flag); a tracker box matched to a
   ground-truth box of a distractor class (2 person on vehicle, 7 static
   person, 8 distractor, 12 reflection) is removed;
3. only ground-truth boxes of class 1 (pedestrian) with a non-zero consider
   flag (7th column) are kept.

A ground truth of 7 columns (no class), or whose 8th column is -1 throughout
(MOT15's layout, where it is an unset world coordinate), counts every row as
a pedestrian, as TrackEval's MOT15 evaluation; one of 6 columns (no flag)
counts every row as considered (TrackEval refuses it).
A tracker class (8th column) above 1 is refused, as TrackEval refuses it.
:func:`read_mot_pair` applies these rules and gives both tidy tables
(:func:`nllbench.trackers.adapters.mot_table`) of the rows kept, for the
NLL, with the IoU and identities per frame for the box measures
(:func:`pair_measures`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
from scipy.optimize import linear_sum_assignment

from nllbench.measures.boxes import BoxMeasures, box_iou_pairs, box_measures
from nllbench.trackers.adapters import mot_table, read_mot_rows

#: MOTChallenge's ground-truth classes (TrackEval's ``class_name_to_class_id``).
MOT_CLASSES = {
    1: "pedestrian",
    2: "person_on_vehicle",
    3: "car",
    4: "bicycle",
    5: "motorbike",
    6: "non_mot_vehicle",
    7: "static_person",
    8: "distractor",
    9: "occluder",
    10: "occluder_on_ground",
    11: "occluder_full",
    12: "reflection",
    13: "crowd",
}
#: The distractor classes: a tracker box matched to one is removed (TrackEval, MOT17).
DISTRACTORS = (2, 7, 8, 12)
_EPS = np.finfo(float).eps
_BOX = ["bb_left", "bb_top", "bb_width", "bb_height"]


@dataclass(frozen=True)
class MOTPair:
    """A sequence's ground truth and tracker result after TrackEval's preprocessing.

    Attributes
    ----------
    tracks, truth : pandas.DataFrame
        The tidy tables of the rows kept (for the NLL and the point measures).
    frames : (K,) int
        Every frame with a row in either file, sorted.
    truth_ids, track_ids : K (n_k,) and (m_k,) int arrays
        The identities kept in each frame, in file order.
    similarities : K (n_k, m_k) float arrays
        Their IoU.
    removed_tracks : int
        Tracker rows removed as matches of distractor-class ground truth.
    dropped_truth : int
        Ground-truth rows not evaluated (another class, or not considered).
    """

    tracks: object
    truth: object
    frames: np.ndarray
    truth_ids: list
    track_ids: list
    similarities: list
    removed_tracks: int
    dropped_truth: int

    def measures(self, frames=None) -> BoxMeasures:
        """:func:`pair_measures` of this pair."""
        return pair_measures(self, frames)


def read_mot_pair(
    tracks: str | os.PathLike,
    truth: str | os.PathLike,
    *,
    conf: str = "score",
    box_std_fraction: float | None = None,
) -> MOTPair:
    """Read a MOTChallenge tracker result and its ground truth, preprocessed as TrackEval (module notes).

    ``conf`` and ``box_std_fraction`` are :func:`nllbench.trackers.adapters.read_motchallenge`'s,
    for the tracks' table. An empty tracker result (a tracker that reported nothing) has no rows, as
    TrackEval reads it. Errors name the file and line.
    """
    gt, tr = read_mot_rows(truth), read_mot_rows(tracks, allow_empty=True)  # a silent tracker
    _check_classes(gt, tr, truth, tracks)
    g_frame = gt["frame"].to_numpy().astype(np.int64)
    t_frame = tr["frame"].to_numpy().astype(np.int64)
    g_box, t_box = gt[_BOX].to_numpy(dtype=float), tr[_BOX].to_numpy(dtype=float)
    g_class = np.ones(len(gt), dtype=np.int64)
    if _has_classes(gt):
        g_class = gt["x"].to_numpy().astype(np.int64)
    g_flag = gt["conf"].to_numpy().astype(np.int64) if "conf" in gt else np.ones(len(gt), dtype=np.int64)
    g_id, t_id = gt["id"].to_numpy().astype(np.int64), tr["id"].to_numpy().astype(np.int64)
    frames = np.union1d(g_frame, t_frame)
    keep_g = (g_flag != 0) & (g_class == 1)
    g_rows, n = _rows_by_frame(g_frame, frames)
    t_rows, m = _rows_by_frame(t_frame, frames)
    pair_g, pair_t, first = _frame_pairs(g_rows, n, t_rows, m)
    iou = box_iou_pairs(g_box, t_box, pair_g, pair_t)  # every frame's (n_k, m_k) IoU, row by row
    keep_t = _kept_tracks(iou, pair_g, pair_t, first, n, m, g_class, len(tr))
    kg, kt = keep_g[g_rows], keep_t[t_rows]  # frame by frame
    K = frames.size
    n = np.bincount(np.repeat(np.arange(K), n)[kg], minlength=K)  # the rows kept per frame
    m = np.bincount(np.repeat(np.arange(K), m)[kt], minlength=K)
    g_rows, t_rows = g_rows[kg], t_rows[kt]
    truth_ids = np.split(g_id[g_rows], np.cumsum(n)[:-1])
    track_ids = np.split(t_id[t_rows], np.cumsum(m)[:-1])
    kept = np.split(iou[keep_g[pair_g] & keep_t[pair_t]], np.cumsum(n * m)[:-1])
    sims = [values.reshape(a, b) for values, a, b in zip(kept, n.tolist(), m.tolist(), strict=True)]
    t_table = mot_table(
        _subset(tr, keep_t), tracks, kind="tracks", conf=conf, box_std_fraction=box_std_fraction
    )
    g_table = mot_table(_subset(gt, keep_g), truth, kind="truth")
    for table, path in ((t_table, tracks), (g_table, truth)):
        table.attrs["file"] = str(path)
    return MOTPair(
        t_table,
        g_table,
        frames,
        truth_ids,
        track_ids,
        sims,
        int((~keep_t).sum()),
        int((~keep_g).sum()),
    )


def pair_measures(pair: MOTPair, frames=None) -> BoxMeasures:
    """HOTA, CLEAR and Identity of a pair on IoU (:func:`nllbench.measures.boxes.box_measures`).

    ``frames``: the frames scored (a frame without rows counts as empty; rows
    in other frames are left out); default the pair's frames. TrackEval's
    ``CLR_Frames`` is their number.
    """
    if frames is None:
        frames = pair.frames
    frames = np.asarray(frames, dtype=np.int64).reshape(-1)
    at = {int(f): k for k, f in enumerate(pair.frames.tolist())}
    empty = (np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64), np.empty((0, 0)))
    picked = [
        (pair.truth_ids[at[f]], pair.track_ids[at[f]], pair.similarities[at[f]]) if f in at else empty
        for f in frames.tolist()
    ]
    gt, tr, sims = (list(x) for x in zip(*picked, strict=True)) if picked else ([], [], [])
    return box_measures(sims, gt, tr, frames.size)


def fit_constant_existence_boxes(pair: MOTPair, frames=None):
    """The constant r of a MOTChallenge calibration pair: the share of its tracker rows matched to a truth
    by the scoring's own matching (TrackEval's CLEAR on IoU >= 0.5, after its preprocessing).

    ``CLR_TP / (CLR_TP + CLR_FP)`` of :func:`pair_measures` on ``frames`` (default: the pair's):
    the Bernoulli maximum-likelihood r of the rows' outcomes, as
    :func:`nllbench.trackers.fitting.fit_constant_existence` by distance for other tables.
    Returns a :class:`~nllbench.trackers.fillins.ConstantExistence` (``matching="iou"``).
    """
    from nllbench.trackers.fillins import ConstantExistence

    fields = pair_measures(pair, frames).fields
    matched, rows = int(fields["CLR_TP"]), int(fields["CLR_TP"]) + int(fields["CLR_FP"])
    if rows == 0:
        raise ValueError("tracks: expected tracker rows to fit a constant existence on, got none")
    return ConstantExistence(matched / rows, rows, matched, 0.5, matching="iou")


def _rows_by_frame(frame: np.ndarray, frames: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The row indices frame by frame of ``frames`` (each in file order), and their number per frame."""
    order = np.argsort(frame, kind="stable")
    cuts = np.searchsorted(frame[order], frames, side="right")
    return order, np.diff(np.concatenate([[0], cuts])).astype(np.int64)


def _frame_pairs(g_rows, n, t_rows, m) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every frame's (truth row, tracker row) pairs, row by row of its (n_k, m_k) matrix: (P,) and (P,),
    and each frame's first pair (then P): (K + 1,)."""
    first = np.concatenate([[0], np.cumsum(n * m)])
    per_row = np.repeat(m, n)  # each truth row's pairs
    row = np.repeat(np.arange(g_rows.size), per_row)
    col = np.arange(first[-1]) - np.repeat(np.cumsum(per_row) - per_row, per_row)
    t_first = np.repeat(np.cumsum(m) - m, n * m)
    return g_rows[row], t_rows[t_first + col], first


def _kept_tracks(iou, pair_g, pair_t, first, n, m, g_class, rows: int) -> np.ndarray:
    """(rows,) bool: the tracker rows kept, all but those matched to distractor-class truth (module notes).

    Only frames where a distractor box has a candidate (IoU >= 0.5 - eps) are matched: elsewhere no match
    with a distractor counts (its score is 0), so no row is removed.
    """
    keep = np.ones(rows, dtype=bool)
    distractor = np.isin(g_class, DISTRACTORS)
    candidate = (iou >= 0.5 - _EPS) & distractor[pair_g]
    frame = np.repeat(np.arange(n.size), n * m)
    for k in np.flatnonzero(np.bincount(frame[candidate], minlength=n.size)).tolist():
        lo, hi = first[k], first[k + 1]
        score = iou[lo:hi].reshape(n[k], m[k]).copy()
        score[score < 0.5 - _EPS] = 0
        rows_k, cols = linear_sum_assignment(-score)
        ok = score[rows_k, cols] > _EPS
        g_of = pair_g[lo:hi].reshape(n[k], m[k])[:, 0]
        t_of = pair_t[lo:hi].reshape(n[k], m[k])[0]
        removed = cols[ok][distractor[g_of[rows_k[ok]]]]
        keep[t_of[removed]] = False
    return keep


def _subset(raw, keep: np.ndarray):
    """The rows ``keep`` of a :func:`read_mot_rows` frame, with their line numbers."""
    out = raw[keep].reset_index(drop=True)
    out.attrs["lines"] = np.asarray(raw.attrs.get("lines", np.arange(1, len(raw) + 1)))[keep]
    return out


def _has_classes(gt) -> bool:
    """Whether a ground truth has a class column: an 8th column not -1 throughout (MOT15's layout, whose
    8th to 10th columns are unset world coordinates, has none; TrackEval evaluates it without classes)."""
    return "x" in gt and not bool((gt["x"].to_numpy() == -1).all())


def _check_classes(gt, tr, truth, tracks) -> None:
    """Ground-truth classes among :data:`MOT_CLASSES`, tracker classes at most 1 (as TrackEval)."""
    checks = []
    if _has_classes(gt):
        checks.append((gt, truth, ~gt["x"].isin(list(MOT_CLASSES)).to_numpy(), "a MOTChallenge class 1..13"))
    if "x" in tr:
        checks.append((tr, tracks, tr["x"].to_numpy() > 1, "a class of at most 1 (pedestrian; -1 unset)"))
    for raw, path, bad, what in checks:
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"{path}: line {int(raw.attrs['lines'][i])}, column 8 (class): expected {what}, got "
                f"{float(raw['x'].iloc[i]):g}; only pedestrians are evaluated, as TrackEval"
            )


#: The summary columns of the box measures: nllbench's names for TrackEval's fields.
SUMMARY_NAMES = {
    "hota": "HOTA",
    "deta": "DetA",
    "assa": "AssA",
    "loca": "LocA",
    "mota": "MOTA",
    "motp": "MOTP",
    "switches": "IDSW",
    "idf1": "IDF1",
}


def box_summary(measures: BoxMeasures) -> dict:
    """Summary columns of box measures: nllbench's (``hota``, ``mota``, ``idf1``, ...; :data:`SUMMARY_NAMES`)
    and every TrackEval field under its own name (``HOTA``, ``DetRe``, ``CLR_TP``, ``IDTP``, ...)."""
    from nllbench.measures.boxes import COUNT_FIELDS, FLOAT_FIELDS, HOTA_COUNTS

    row = {"matching": "iou"}
    row.update({k: measures.fields[v] for k, v in SUMMARY_NAMES.items()})
    row.update({k: measures.fields[k] for k in FLOAT_FIELDS})
    row.update({k: int(measures.fields[k]) for k in COUNT_FIELDS if k not in HOTA_COUNTS})
    return row


def with_box_measures(result, pair: MOTPair):
    """A :class:`~nllbench.trackers.score_tables.ScoreResult` with HOTA, CLEAR and Identity on the
    pair's boxes.

    The result's ``hota``, ``clear`` and ``identity`` (of the point estimates,
    by distance) are replaced by those of every tracker box on IoU, on the
    result's frames (:func:`pair_measures`); ``boxes`` holds TrackEval's fields;
    the fill-ins record the matching and what the preprocessing removed.
    """
    from dataclasses import replace

    m = pair_measures(pair, result.frames)
    metrics = replace(result.metrics, hota=m.hota, clear=m.clear, identity=m.identity)
    na = tuple(k for k in result.not_applicable if k != "motp")
    if m.fields["CLR_TP"] == 0:
        na += ("motp",)  # the mean IoU of no matched pair is undefined (TrackEval writes 0)
    fill = dict(result.fill_ins)
    fill["motchallenge"] = preprocessing_record(pair)
    return replace(result, metrics=metrics, not_applicable=na, fill_ins=fill, boxes=m)


def preprocessing_record(pair: MOTPair) -> dict:
    """What the matching and preprocessing did (for the fill-ins record)."""
    return {
        "similarity": "iou",
        "iou_threshold": 0.5,
        "removed_tracker_rows": pair.removed_tracks,
        "dropped_truth_rows": pair.dropped_truth,
        "rule": "TrackEval 1.3.0 MotChallenge2DBox (MOT17): distractor classes 2 7 8 12 removed",
    }
