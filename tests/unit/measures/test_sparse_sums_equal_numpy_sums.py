"""numpy's pairwise sums from a vector's non-zero entries only, and per-segment sums: the floats of np.sum."""

from __future__ import annotations

import numpy as np
import pytest

from nllbench.measures._pairwise import pairwise_sums, segment_sums

#: Lengths around numpy's pairwise summation's block (128) and unroll (8), and a few large ones.
LENGTHS = [0, 1, 2, 7, 8, 9, 15, 16, 17, 127, 128, 129, 135, 136, 137, 255, 256, 257, 1000, 4099, 70001]


def sparse(rows: np.ndarray):
    """The non-zero entries of each row of ``rows`` (R, n): positions, values, starts."""
    r, c = np.nonzero(rows)
    return c, rows[r, c], np.searchsorted(r, np.arange(rows.shape[0] + 1))


@pytest.mark.parametrize("n", LENGTHS)
@pytest.mark.parametrize("density", [0.002, 0.05, 0.6, 1.0])
def test_pairwise_sums_equal_np_sum_bit_for_bit(n, density):
    rng = np.random.default_rng(n + int(1000 * density))
    rows = rng.random((6, n)) * (rng.random((6, n)) < density)
    rows[0] = 0.0  # a vector without entries
    if n:
        rows[1, -1] = 0.3  # an entry at the very end
        rows[2] = np.round(rows[2] * 4) / 4  # repeated values
    pos, val, starts = sparse(rows)
    got = pairwise_sums(pos, val, starts, np.full(6, n))
    assert got.tobytes() == rows.sum(axis=1).tobytes()
    for k in range(6):  # and each row as a 1-D np.sum
        assert got[k] == rows[k].sum()


def test_pairwise_sums_take_vectors_of_mixed_lengths_and_given_zeros():
    rng = np.random.default_rng(3)
    vectors = [rng.random(n) * (rng.random(n) < 0.3) for n in (300, 5, 0, 129, 300, 40, 1)]
    pos = np.concatenate([np.arange(v.size) for v in vectors])  # every entry, zeros too
    val = np.concatenate(vectors)
    starts = np.concatenate([[0], np.cumsum([v.size for v in vectors])])
    got = pairwise_sums(pos, val, starts, np.array([v.size for v in vectors]))
    assert got.tobytes() == np.array([v.sum() for v in vectors]).tobytes()


def test_a_three_dimensional_sum_over_its_last_two_axes_is_one_pairwise_sum_per_row():
    # HOTA's association sums: (A, n_gt, n_est).sum(axis=(1, 2)) of a mostly-zero array
    rng = np.random.default_rng(5)
    for shape in [(4, 239, 181), (3, 1, 900), (3, 700, 1), (2, 13, 11)]:
        dense = rng.integers(0, 9, shape) * (rng.random(shape) < 0.01) * rng.random(shape)
        pos, val, starts = sparse(dense.reshape(shape[0], -1))
        got = pairwise_sums(pos, val, starts, np.full(shape[0], shape[1] * shape[2]))
        assert got.tobytes() == dense.sum(axis=(1, 2)).tobytes()


def test_the_sparse_sum_is_not_the_plain_running_sum():
    # the test above could not pass by luck: here the orders of addition give different floats
    x = np.zeros(300)
    x[[3, 150, 299]] = [0.1, 0.2, 0.3]
    at = np.array([3, 150, 299])
    got = pairwise_sums(at, x[at], np.array([0, 3]), np.array([300]))[0]
    assert got == x.sum() == 0.1 + (0.2 + 0.3) != (0.1 + 0.2) + 0.3


@pytest.mark.parametrize("lengths", [[0, 3, 8, 9, 200, 129, 3, 1], [1], []])
def test_segment_sums_equal_np_sum_of_each_segment(lengths):
    rng = np.random.default_rng(len(lengths))
    values = rng.random(sum(lengths) + 5)
    starts = np.concatenate([[2], 2 + np.cumsum(lengths)[:-1]]).astype(np.int64)[: len(lengths)]
    got = segment_sums(values, starts, np.array(lengths, dtype=np.int64))
    want = np.array([values[s : s + n].sum() for s, n in zip(starts, lengths, strict=True)])
    assert got.tobytes() == want.tobytes()
