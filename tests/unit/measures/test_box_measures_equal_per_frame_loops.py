"""HOTA, Identity and box IoU computed for every frame at once equal the plain per-frame loops bit for bit
(tests/support/box_measures_reference.py): the counts, the global alignment, the per-alpha sums."""

from __future__ import annotations

import numpy as np
import pytest
from support.box_measures_reference import dense_alignment, dense_hota, identity_gain

from nllbench.measures.boxes import box_iou, box_iou_pairs
from nllbench.measures.point.metrics import identity_similarity
from nllbench.measures.tracks.hota import _entries, _global_alignment, hota, hota_similarity


def random_sequence(seed: int, frames: int = 25, n_gt: int = 30, n_est: int = 60):
    """Per-frame similarities in [0, 1] (some exactly 0, some on a 1/20 grid: ties) with distinct
    identities, with frames of every awkward shape: empty, one column of many rows, one row, rows
    longer than numpy's 128-entry summation block, and many matches."""
    rng = np.random.default_rng(seed)
    sims, gt, est = [], [], []
    for k in range(frames):
        n, m = rng.integers(0, 12), rng.integers(0, 15)
        kind = k % 6
        if kind == 1:
            n, m = rng.integers(9, n_gt), 1  # numpy sums a one-column matrix's column pairwise
        elif kind == 2:
            n, m = 1, rng.integers(0, n_est)
        elif kind == 3 and seed % 2:
            n, m = rng.integers(1, 4), rng.integers(130, 200)
        elif kind == 4:
            n, m = rng.integers(9, n_gt), rng.integers(9, 40)  # 8 and more matches: numpy's 8 running sums
        g = rng.choice(n_gt, n, replace=False)
        t = rng.choice(max(n_est, m), m, replace=False)
        S = rng.random((n, m)) * (rng.random((n, m)) < 0.5)
        if rng.random() < 0.4:
            S = np.round(S * 20) / 20
        sims.append(S)
        gt.append(g)
        est.append(t)
    return sims, gt, est


def indices(ids):
    every = np.unique(np.concatenate([*ids, np.empty(0, dtype=np.int64)]))
    return [np.searchsorted(every, i) for i in ids], every.size


@pytest.mark.parametrize("seed", range(8))
def test_global_alignment_equals_the_per_frame_loop(seed):
    sims, gt, est = random_sequence(seed)
    gi, n_gt = indices(gt)
    tj, n_est = indices(est)
    n_i = np.bincount(np.concatenate([*gi, []]).astype(np.int64), minlength=n_gt)
    n_j = np.bincount(np.concatenate([*tj, []]).astype(np.int64), minlength=n_est)
    got = _global_alignment(_entries(sims, gi, tj), n_i, n_j)
    assert got.tobytes() == dense_alignment(sims, gi, tj, n_gt, n_est).tobytes()


@pytest.mark.parametrize("seed", range(12))
def test_hota_equals_the_dense_per_frame_computation(seed):
    sims, gt, est = random_sequence(seed)
    r = hota_similarity(sims, gt, est)
    gi, n_gt = indices(gt)
    tj, n_est = indices(est)
    ref = dense_hota(sims, gi, tj, n_gt, n_est)
    for name, got in (("tp", r.tp), ("fn", r.fn), ("fp", r.fp), ("assa", r.assa_alpha)):
        assert got.dtype == ref[name].dtype and got.tobytes() == ref[name].tobytes(), name
    assert r.ass_re_alpha.tobytes() == ref["ass_re"].tobytes()
    assert r.ass_pr_alpha.tobytes() == ref["ass_pr"].tobytes()
    loca = np.maximum(1e-10, ref["loc_sum"]) / np.maximum(1e-10, ref["tp"])
    assert r.loca_alpha.tobytes() == loca.tobytes()


def test_hota_of_no_frames_and_of_frames_without_pairs():
    for sims, gt, est in [
        ([], [], []),
        ([np.zeros((0, 2)), np.zeros((3, 0))], [[], [1, 2, 3]], [[4, 5], []]),
    ]:
        r = hota_similarity(sims, gt, est)
        assert (r.hota, r.deta, r.assa, r.loca) == (0.0, 0.0, 0.0, 1.0)
        assert not r.tp.any()


def test_point_hota_goes_through_the_same_sums():
    rng = np.random.default_rng(4)
    truth = [rng.random((k % 5, 2)) * 4 for k in range(30)]
    est = [rng.random((k % 7, 2)) * 4 for k in range(30)]
    t_ids = [np.arange(x.shape[0]) for x in truth]
    e_ids = [(np.arange(x.shape[0]) + k // 10) % 9 for k, x in enumerate(est)]
    r = hota(truth, t_ids, est, e_ids, threshold=2.0)
    sims = [
        np.maximum(0.0, 1.0 - np.linalg.norm(a[:, None] - b[None], axis=2) / 2.0)
        for a, b in zip(truth, est, strict=True)
    ]
    assert hota_similarity(sims, t_ids, e_ids).hota == pytest.approx(r.hota, abs=1e-15)


@pytest.mark.parametrize("seed", range(4))
def test_identity_counts_equal_the_per_frame_loop(seed):
    sims, gt, est = random_sequence(seed)
    gain = identity_gain(sims, gt, est, 0.5)
    r = identity_similarity(sims, gt, est, 0.5)
    from nllbench.measures.point.metrics import _identity_result

    n_obj, n_pred = sum(len(g) for g in gt), sum(len(e) for e in est)
    assert r == _identity_result(gain, n_obj, n_pred)


def test_a_repeated_identity_is_refused_naming_the_first_frame():
    sims = [np.zeros((2, 1)), np.zeros((2, 2)), np.zeros((2, 2))]
    with pytest.raises(ValueError, match=r"truth_ids\[1\]: expected distinct identities, got \[4, 4\]"):
        hota_similarity(sims, [[1, 2], [4, 4], [5, 5]], [[1], [1, 2], [3, 3]])
    with pytest.raises(ValueError, match=r"estimate_ids\[2\]: expected distinct identities"):
        hota_similarity(sims, [[1, 2], [3, 4], [5, 6]], [[1], [1, 2], [3, 3]])
    with pytest.raises(ValueError, match=r"similarities\[2\]: expected values in \[0, 1\], got -0.5 .. 0.0"):
        hota_similarity([*sims[:2], np.array([[0.0, -0.5], [0, 0]])], [[1, 2]] * 3, [[1], [1, 2], [1, 2]])


def test_box_iou_pairs_equal_box_iou_bit_for_bit():
    rng = np.random.default_rng(2)
    a = np.column_stack([rng.random((40, 2)) * 50, rng.random((40, 2)) * 30 + 1e-9])
    b = np.column_stack([rng.random((30, 2)) * 50, rng.random((30, 2)) * 30])
    a[3, 2:] = 1e-300  # a box without area
    b[5] = a[7]  # the same box twice
    full = box_iou(a, b)
    i, j = rng.integers(0, 40, 500), rng.integers(0, 30, 500)
    assert box_iou_pairs(a, b, i, j).tobytes() == full[i, j].tobytes()
    assert full[3].max() == 0.0 and full[7, 5] == 1.0
