"""numpy's sum of mostly-zero vectors, from their non-zero entries only: the same floats, bit for bit.

``np.sum`` of a float64 vector (and of each row of a C-contiguous array
along its last axis) is numpy's pairwise summation (``pairwise_sum`` in
numpy's ``loops_utils.h.src``): a vector of n > 128 entries is split at
n2 = n // 2 rounded down to a multiple of 8 and the two halves' sums are
added; a block of 8 <= n <= 128 entries keeps 8 running sums (entry i in
sum i % 8, over the first n - n % 8 entries), adds them as
((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7)) and then the last n % 8
entries one by one; a block of n < 8 entries is summed one by one from 0.
The reduction's result is 0.0 plus that sum.

Adding a zero changes nothing (x + 0.0 is x for every x but -0.0), so for
entries that are not -0.0 the sum is that tree evaluated over the entries
that are not zero: :func:`pairwise_sums` does so with whole-array numpy
operations (``np.bincount`` adds its weights one by one in input order, as
the running sums do), in time proportional to the non-zero entries and the
tree's leaves rather than to n. Used where a sum of a large, mostly-zero
array must keep the floats of the dense ``np.sum``
(:mod:`nllbench.measures.tracks.hota`).
"""

from __future__ import annotations

import numpy as np

#: numpy's pairwise summation block (``PW_BLOCKSIZE``) and unroll factor.
_BLOCK = 128
_UNROLL = 8


def pairwise_sums(pos, val, starts, lengths) -> np.ndarray:
    """numpy's sums of vectors given by their non-zero entries: (S,) float, as ``np.sum`` of each vector.

    Parameters
    ----------
    pos : (E,) int
        Positions of the entries: those of vector k, ``pos[starts[k]:starts[k + 1]]``, increasing and
        in ``[0, lengths[k])``.
    val : (E,) float
        Their values (none -0.0; zeros may be left out or given).
    starts : (S + 1,) int
        Where each vector's entries start, then E.
    lengths : (S,) int
        The vectors' lengths.

    Examples
    --------
    >>> x = np.zeros(300)
    >>> x[[3, 150, 299]] = [0.1, 0.2, 0.3]
    >>> at = np.array([3, 150, 299])
    >>> bool(pairwise_sums(at, x[at], np.array([0, 3]), np.array([300]))[0] == x.sum() != 0.1 + 0.2 + 0.3)
    True
    """
    pos, val = np.asarray(pos, dtype=np.int64), np.asarray(val, dtype=float)
    starts, lengths = np.asarray(starts, dtype=np.int64), np.asarray(lengths, dtype=np.int64)
    counts = np.diff(starts)
    segment = np.repeat(np.arange(lengths.size), counts)
    small = lengths[segment] <= _BLOCK  # one block each: all at once
    keys = lengths.size
    out = 0.0 + _leaf_sums(pos[small], val[small], lengths[segment[small]], segment[small], keys)
    for n in np.unique(lengths[(counts > 0) & (lengths > _BLOCK)]).tolist():
        group = np.flatnonzero((lengths == n) & (counts > 0))
        at = np.flatnonzero(lengths[segment] == n)
        rank = np.searchsorted(group, segment[at])  # the entry's vector within the group
        out[group] = 0.0 + _tree_sums(pos[at], val[at], rank, group.size, n)
    return out


def segment_sums(values, starts, lengths) -> np.ndarray:
    """``np.sum`` of each segment ``values[starts[k] : starts[k] + lengths[k]]``: (S,) float.

    By numpy itself: the segments of one length are gathered into the rows of one C-contiguous
    array and summed along its last axis (each row as ``np.sum`` of it alone), one length at a time.
    """
    values = np.asarray(values, dtype=float)
    starts, lengths = np.asarray(starts, dtype=np.int64), np.asarray(lengths, dtype=np.int64)
    out = np.zeros(lengths.size)
    for n in np.unique(lengths[lengths > 0]).tolist():
        group = np.flatnonzero(lengths == n)
        out[group] = values[starts[group][:, None] + np.arange(n)].sum(axis=1)
    return out


def _tree_sums(pos, val, rank, count: int, n: int) -> np.ndarray:
    """(count,): the pairwise sums of ``count`` vectors of length n (entries ``pos``, ``val`` of vector
    ``rank``, in order)."""
    levels = _tree(n)
    leaf_lo = np.concatenate([lo[~split] for lo, _, split in levels])
    leaf_n = np.concatenate([size[~split] for _, size, split in levels])
    order = np.argsort(leaf_lo, kind="stable")
    leaf = order[np.searchsorted(leaf_lo[order], pos, side="right") - 1]  # the entry's leaf
    keys, key_of = np.unique(rank * leaf_lo.size + leaf, return_inverse=True)
    sums = _leaf_sums(pos - leaf_lo[leaf], val, leaf_n[leaf], key_of.reshape(-1), keys.size)
    values = np.zeros((count, leaf_lo.size))  # leaves numbered level by level, as concatenated
    values[keys // leaf_lo.size, keys % leaf_lo.size] = sums
    below = None  # the next level's node sums (count, nodes)
    first_leaf = np.cumsum([0] + [int((~split).sum()) for _, _, split in levels])
    for depth in range(len(levels) - 1, -1, -1):
        _, size, split = levels[depth]
        here = np.zeros((count, size.size))
        here[:, ~split] = values[:, first_leaf[depth] : first_leaf[depth + 1]]
        if split.any():
            here[:, split] = below[:, 0::2] + below[:, 1::2]
        below = here
    return below[:, 0]


def _tree(n: int) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """numpy's pairwise summation tree of a length-n vector, level by level from the root: each level's
    nodes (start, length, whether split), the children of a level's split nodes in order on the next."""
    lo, size = np.zeros(1, dtype=np.int64), np.array([n], dtype=np.int64)
    levels = []
    while True:
        split = size > _BLOCK
        levels.append((lo, size, split))
        if not split.any():
            return levels
        half = size[split] // 2
        half -= half % _UNROLL
        lo = np.stack([lo[split], lo[split] + half], axis=1).reshape(-1)
        size = np.stack([half, size[split] - half], axis=1).reshape(-1)


def _leaf_sums(offset, val, size, key, keys: int) -> np.ndarray:
    """(keys,): numpy's sum of each block of <= 128 entries from its entries (offset in the block, value,
    block length, block key 0..keys-1), in order within each block."""
    cut = np.where(size >= _UNROLL, size - size % _UNROLL, 0)  # the running sums' part of the block
    head = offset < cut
    r = np.bincount(key[head] * _UNROLL + offset[head] % _UNROLL, weights=val[head], minlength=keys * _UNROLL)
    r = r.reshape(keys, _UNROLL)
    out = ((r[:, 0] + r[:, 1]) + (r[:, 2] + r[:, 3])) + ((r[:, 4] + r[:, 5]) + (r[:, 6] + r[:, 7]))
    tail = np.zeros((keys, _UNROLL - 1))
    tail[key[~head], offset[~head] - cut[~head]] = val[~head]
    for i in range(_UNROLL - 1):  # one by one, as numpy adds the last n % 8 (or all of n < 8)
        out = out + tail[:, i]
    return out
