"""The close entries of a true and an estimated labelled sequence: step 1 of the exact trajectory-GOSPA
minimum (:mod:`nllbench.measures.tracks._tgospa.solver`).

An entry (frame, truth, estimate) is *close* when both exist and their distance d is below the
cut-off c; its gain d^p - c^p < 0 is what pairing them there saves. The solver, a group of
colliding truths (:mod:`nllbench.measures.tracks._tgospa.group`) and the joint Viterbi read them as a
:class:`Close`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from nllbench.measures._sequences import distances


@dataclass(frozen=True)
class Close:
    """The close entries (both exist, d < c), grouped by pair (truth, estimate) and sorted by frame.

    Attributes
    ----------
    frame, dist_p, gain : (E,) int64, float, float
        Frame, d^p and d^p - c^p (< 0) of each entry.
    ptr : (P + 1,) int64
        Entries of pair q are ``ptr[q]:ptr[q + 1]``.
    truth, est : (P,) int64
        The pair's truth and estimate (indices into the sorted identities);
        pairs are sorted by (truth, estimate).
    frames, n, m : int
        K and the numbers of true and estimated identities.
    """

    frame: np.ndarray
    dist_p: np.ndarray
    gain: np.ndarray
    ptr: np.ndarray
    truth: np.ndarray
    est: np.ndarray
    frames: int
    n: int
    m: int

    @property
    def first(self) -> np.ndarray:
        """(P,) the first close frame f0 of each pair."""
        return self.frame[self.ptr[:-1]]

    @property
    def last(self) -> np.ndarray:
        """(P,) the last close frame f1 of each pair."""
        return self.frame[self.ptr[1:] - 1]

    def pair_of(self) -> np.ndarray:
        """(E,) the pair of each entry."""
        return np.repeat(np.arange(self.truth.size, dtype=np.int64), np.diff(self.ptr))

    def lookup(self, frame: np.ndarray, truth: np.ndarray, est: np.ndarray) -> np.ndarray:
        """The entry of each (frame, truth, estimate), -1 where they are not close."""
        have = self.truth * self.m + self.est
        want = truth * self.m + est
        if have.size == 0:
            return np.full(want.shape, -1, dtype=np.int64)
        pos = np.minimum(np.searchsorted(have, want), have.size - 1)
        pair = np.where(have[pos] == want, pos, -1)
        keys = self.pair_of() * self.frames + self.frame  # sorted: by pair, then frame
        want = np.maximum(pair, 0) * self.frames + frame
        at = np.minimum(np.searchsorted(keys, want), keys.size - 1)
        return np.where((pair >= 0) & (keys[at] == want), at, -1)


def close_entries(X, Y, c: float, p: float) -> Close:
    """Every (frame, truth, estimate) of two labelled sequences with both present and d < c.

    d comes from :func:`nllbench.measures._sequences.distances` and d^p from
    NumPy's power, as in the MILP this replaced (same bits).
    """
    K, n, m = X.frames, X.count, Y.count
    frames, truths, ests, dp = [], [], [], []
    for k in range(K):
        d = distances(X.points[k], Y.points[k])
        rows, cols = np.nonzero(d < c)
        if rows.size:
            frames.append(np.full(rows.size, k, dtype=np.int64))
            truths.append(X.index[k][rows])
            ests.append(Y.index[k][cols])
            dp.append(d[rows, cols] ** p)
    if not frames:
        empty = np.empty(0, dtype=np.int64)
        return Close(empty, np.empty(0), np.empty(0), np.zeros(1, dtype=np.int64), empty, empty, K, n, m)
    frame, truth, est, dist_p = (np.concatenate(a) for a in (frames, truths, ests, dp))
    key = truth.astype(np.int64) * m + est
    order = np.lexsort((frame, key))  # by pair, then frame
    key, frame, dist_p = key[order], frame[order], dist_p[order]
    starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    ptr = np.append(starts, key.size).astype(np.int64)
    pair_key = key[starts]
    return Close(frame, dist_p, dist_p - c**p, ptr, pair_key // m, pair_key % m, K, n, m)
