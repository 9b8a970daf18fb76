"""read_mot_pair's preprocessing (every frame's IoU at once, the distractor matching only where a
distractor has a candidate) equals TrackEval's per-frame loop (tests/support/box_measures_reference.py)."""

from __future__ import annotations

import numpy as np
import pytest
from support.box_measures_reference import preprocessed_frames

from nllbench.trackers.motchallenge import DISTRACTORS, read_mot_pair


def write_pair(tmp_path, seed: int):
    """A ground truth (9 columns: flag, class, visibility) and a tracker result (10 columns) of 40
    frames, boxes near each other so that many pairs overlap, with distractor classes and zero flags."""
    rng = np.random.default_rng(seed)
    gt_rows, tr_rows = [], []
    for f in rng.permutation(np.arange(1, 41)):  # rows out of frame order, as files may have them
        n = rng.integers(0, 9)
        boxes = np.column_stack([rng.integers(0, 60, (n, 2)), rng.integers(5, 30, (n, 2))]).astype(float)
        cls = rng.choice([1, 1, 1, 2, 7, 8, 12, 3], n)
        flag = (rng.random(n) < 0.9).astype(int)
        for i, (b, c, z) in enumerate(zip(boxes, cls, flag, strict=True)):
            gt_rows.append(f"{f},{i + 1},{b[0]:g},{b[1]:g},{b[2]:g},{b[3]:g},{z},{c},1")
        if f % 7 == 0:
            continue  # a frame without tracker boxes
        m = rng.integers(0, 10)
        take = rng.integers(0, max(n, 1), m)
        jitter = rng.normal(0, 2, (m, 4)) if n else rng.random((m, 4)) * 40
        tb = (boxes[take] if n else np.full((m, 4), 10.0)) + jitter
        tb[:, 2:] = np.abs(tb[:, 2:]) + 1
        for j, b in enumerate(tb):
            box = ",".join(f"{x:.3f}" for x in b)
            tr_rows.append(f"{f},{j + 1 + 100 * (j % 2)},{box},{rng.random():.2f},-1,-1,-1")
    gt, tr = tmp_path / "gt.txt", tmp_path / "tr.txt"
    gt.write_text("\n".join(gt_rows) + "\n")
    tr.write_text("\n".join(tr_rows) + "\n")
    return tr, gt


@pytest.mark.parametrize("seed", range(6))
def test_read_mot_pair_equals_the_per_frame_preprocessing(tmp_path, seed):
    tr, gt = write_pair(tmp_path, seed)
    pair = read_mot_pair(tr, gt)
    g = np.loadtxt(gt, delimiter=",", ndmin=2)
    t = np.loadtxt(tr, delimiter=",", ndmin=2)
    frames, keep_t = preprocessed_frames(
        g[:, 0].astype(np.int64),
        g[:, 1].astype(np.int64),
        g[:, 2:6],
        g[:, 7].astype(np.int64),
        g[:, 6].astype(np.int64),
        t[:, 0].astype(np.int64),
        t[:, 1].astype(np.int64),
        t[:, 2:6],
        DISTRACTORS,
    )
    assert pair.removed_tracks == int((~keep_t).sum()) > 0
    assert len(pair.similarities) == len(frames)
    for (ids_g, ids_t, iou), a, b, s in zip(
        frames, pair.truth_ids, pair.track_ids, pair.similarities, strict=True
    ):
        assert a.tolist() == ids_g.tolist() and b.tolist() == ids_t.tolist()
        assert s.shape == iou.shape and s.tobytes() == iou.tobytes()
