"""Trajectory GOSPA (García-Fernández, Rahmathullah, Svensson, IEEE TSP 68, 2020), alpha = 2.

For true trajectories i and estimated trajectories j over frames k = 1..T,
an assignment sequence pi^1..pi^T maps every true trajectory to an estimated
one or to 0 (injectively on the non-zero values), and

    d^p = min_{pi^{1:T}} sum_k [ sum_{(i, j = pi^k_i): both exist, d(x_i^k, y_j^k) < c} d^p
                                 + c^p / 2 (|X^k| + |Y^k| - 2 #those pairs) ]
          + gamma^p sum_{k<T} sum_i s_i(pi^k, pi^{k+1}),

with s_i = 0 if pi^k_i = pi^{k+1}_i, 1 if they differ and are both non-zero,
1/2 otherwise (the paper's assignment-sequence definition with the per-frame
GOSPA base metric). With binary w^k_ij = 1[pi^k_i = j], sum_i s_i is half the
total variation (1/2) sum_ij |w^k_ij - w^{k+1}_ij| (as in the paper), so the
minimum is a mixed-integer linear programme; its LP relaxation (w in [0, 1])
is the paper's LP metric, a lower bound that is itself a metric
(``method="lp"``, solved with HiGHS over every frame and candidate pair).

The exact minimum (``method="exact"``) is found in time and memory linear in
the frames for a fixed number of trajectories:

1. Only the *close* entries (frame k, truth i, estimate j: both exist and
   d < c) gain anything (d^p - c^p < 0); they are kept sparse.
2. A label j is worth holding for truth i only on the span [f0, f1] of the
   frames where (i, j) is close, on all of [0, f0) (a *pre-hold*: no switch
   is paid before the first frame) or on all of (f1, K) (a *post-hold*):
   elsewhere, replacing j by none never costs more, as
   s(a, j) + s(j, b) >= s(a, 0) + s(0, b) unless a = b = j, and frees capacity.
3. Dropping the rule that an estimate serves at most one truth per frame
   leaves one independent problem per truth: a Viterbi recursion over the
   states {untouched so far, none, finished (post-hold), label j on its span}
   (:func:`_viterbi`), O(sum of the spans) for all truths. Its minimum is a
   lower bound; when the truths' optimal paths share no estimate in any frame
   they are feasible, hence optimal.
4. Otherwise the truths that collide are grouped and each group is solved
   jointly by a mixed-integer programme whose size is linear in the frames
   (:func:`_group_milp`: one binary per close entry, per gap between two
   close frames of a pair, per pre- and post-hold; an estimate's or truth's
   load carried from one interval start to the next by one continuous
   variable); HiGHS with zero gap. Groups that still collide with another
   are merged and solved again, until no two collide: the sum of the group
   minima is a lower bound (it drops constraints between groups) attained by
   a feasible assignment, so it is the minimum.

The value is recomputed from the integral assignment in both cases.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba as nb
import numpy as np
from scipy import sparse
from scipy.optimize import LinearConstraint, milp

from nllbench.engine import _validate as v
from nllbench.measures._sequences import distances, labelled_sequence


@dataclass(frozen=True)
class TGOSPAResult:
    """Trajectory GOSPA (alpha = 2) and its decomposition.

    ``localization + missed + false + switches == value ** p`` (p-th-power
    units; the root is taken on the total only). Per-frame arrays have shape
    (K,); the switch cost of the transition k-1 -> k is booked at frame k.

    Attributes
    ----------
    value : float
    localization : float
        Sum of d^p over assigned pairs that both exist and are closer than c.
    missed, false : float
        c^p / 2 per true (estimated) point left without such a pair.
    switches : float
        gamma^p times the summed s_i (1 per full switch, 1/2 per half).
    n_switches, n_half_switches : int
        Transitions between two estimates, and between an estimate and none.
    frame_localization, frame_missed, frame_false, frame_switches : (K,) float
    assignment : (K, n) int
        pi^k_i as an index into ``estimate_ids`` (-1 for none), columns in the
        order of ``truth_ids``.
    truth_ids, estimate_ids : (n,), (m,) int
        The distinct identities, sorted.
    exact : bool
        True for the integer optimum, False for the LP relaxation (then the
        decomposition is that of the fractional optimum and ``assignment``
        holds the largest weight of each row where it exceeds 1/2).
    p, c, gamma : float
    """

    value: float
    localization: float
    missed: float
    false: float
    switches: float
    n_switches: int
    n_half_switches: int
    frame_localization: np.ndarray
    frame_missed: np.ndarray
    frame_false: np.ndarray
    frame_switches: np.ndarray
    assignment: np.ndarray
    truth_ids: np.ndarray
    estimate_ids: np.ndarray
    exact: bool
    p: float
    c: float
    gamma: float


def tgospa(
    truth,
    truth_ids,
    estimates,
    estimate_ids,
    c: float,
    p: float = 1.0,
    gamma: float | None = None,
    method: str = "exact",
) -> TGOSPAResult:
    """Trajectory GOSPA metric (alpha = 2) of estimated against true trajectories.

    Parameters
    ----------
    truth, estimates : sequences (one per frame) of (n_k, d) and (m_k, d) arrays
    truth_ids, estimate_ids : sequences of (n_k,) and (m_k,) integer identities
        An identity names a trajectory; it may be absent in some frames and return.
    c : float
        Cut-off (> 0).
    p : float
        Order (>= 1).
    gamma : float, optional
        Switch cost (> 0); default ``c``: a full switch costs as much as one
        missed and one false point in one frame.
    method : {"exact", "lp"}
        ``"exact"``: the integer minimum (the definition), in time and memory
        linear in the frames for a fixed number of trajectories (module
        docstring). ``"lp"``: the LP relaxation over every frame and candidate
        pair, the paper's LP metric (a lower bound of the exact value; its
        size grows with frames times pairs).

    Returns
    -------
    TGOSPAResult

    Examples
    --------
    >>> r = tgospa([[[0.0, 0.0]], [[0.0, 0.0]]], [[1], [1]],
    ...            [[[0.5, 0.0]], [[0.5, 0.0]]], [[7], [8]], c=2.0, p=1, gamma=1.0)
    >>> r.value, r.localization, r.switches
    (2.0, 1.0, 1.0)
    """
    c = v.positive_scalar(c, "c")
    p = float(p)
    if not np.isfinite(p) or p < 1:
        raise ValueError(f"p: expected a number >= 1, got {p!r}")
    gamma = c if gamma is None else v.positive_scalar(gamma, "gamma")
    if method not in ("exact", "lp"):
        raise ValueError(f"method: expected 'exact' or 'lp', got {method!r}")
    X = labelled_sequence(truth, truth_ids, "truth", "truth_ids")
    Y = labelled_sequence(estimates, estimate_ids, "estimates", "estimate_ids", frames=X.frames)
    close = _close_entries(X, Y, c, p)
    if method == "lp":
        return _lp_result(close, X, Y, c, p, gamma)
    assignment, _ = _exact_assignment(close, X.frames, gamma**p)
    return _result(assignment, close, X, Y, c, p, gamma)


@dataclass(frozen=True)
class _Close:
    """The close entries (both exist, d < c), grouped by pair (truth, estimate) and sorted by frame.

    Attributes
    ----------
    frame, dist_p : (E,) int64, float
        Frame and d^p of each entry.
    ptr : (P + 1,) int64
        Entries of pair q are ``ptr[q]:ptr[q + 1]``.
    truth, est : (P,) int64
        The pair's truth and estimate (indices into the sorted identities);
        pairs are sorted by (truth, estimate).
    gain : (E,) float
        d^p - c^p, what pairing the entry saves (< 0).
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

    def keys(self) -> np.ndarray:
        """(E,) sorted keys pair * K + frame of the entries."""
        pair = np.repeat(np.arange(self.truth.size, dtype=np.int64), np.diff(self.ptr))
        return pair * self.frames + self.frame

    def pair_index(self, truth: np.ndarray, est: np.ndarray) -> np.ndarray:
        """The pair of each (truth, estimate), -1 where it is never close."""
        have = self.truth * self.m + self.est
        want = truth * self.m + est
        if have.size == 0:
            return np.full(want.shape, -1, dtype=np.int64)
        pos = np.minimum(np.searchsorted(have, want), have.size - 1)
        return np.where(have[pos] == want, pos, -1)


def _close_entries(X, Y, c: float, p: float) -> _Close:
    """Every (frame, truth, estimate) with both present and d < c, with d^p (d from ``distances``)."""
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
        return _Close(empty, np.empty(0), np.empty(0), np.zeros(1, dtype=np.int64), empty, empty, K, n, m)
    frame, truth, est, dist_p = (np.concatenate(a) for a in (frames, truths, ests, dp))
    key = truth.astype(np.int64) * m + est
    order = np.lexsort((frame, key))  # by pair, then frame
    key, frame, dist_p = key[order], frame[order], dist_p[order]
    starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    ptr = np.append(starts, key.size).astype(np.int64)
    pair_key = key[starts]
    return _Close(frame, dist_p, dist_p - c**p, ptr, pair_key // m, pair_key % m, K, n, m)


@dataclass(frozen=True)
class SolveStats:
    """How the exact minimum was reached (for benchmarks and tests).

    Attributes
    ----------
    conflicts : int
        Frames x estimates where the truths' independent optimal paths collided.
    groups : tuple of int
        Sizes (truths) of the groups solved jointly by the mixed-integer programme, in order.
    """

    conflicts: int
    groups: tuple


def _exact_assignment(close: _Close, K: int, switch: float) -> tuple[np.ndarray, SolveStats]:
    """The optimal assignment (K, n): estimate index or -1 per frame and truth (module docstring, 2-4)."""
    n = close.n
    A = _paths(close, K, switch)
    a, b = _conflicts(A)
    n_conflicts = int(a.size)
    parent = np.arange(n)
    sizes = []
    while a.size:
        changed = set()
        for x, y in zip(a.tolist(), b.tolist(), strict=True):
            rx, ry = _root(parent, x), _root(parent, y)
            if rx != ry:
                parent[max(rx, ry)] = min(rx, ry)
                changed.add(min(rx, ry))
        roots = np.array([_root(parent, i) for i in range(n)])
        for r in sorted({_root(parent, x) for x in changed}):
            members = np.flatnonzero(roots == r)
            A[:, members] = _group_milp(close, members, K, switch)
            sizes.append(int(members.size))
        a, b = _conflicts(A)
    return A, SolveStats(n_conflicts, tuple(sizes))


def _root(parent: np.ndarray, x: int) -> int:
    while parent[x] != x:
        parent[x] = parent[parent[x]]
        x = parent[x]
    return int(x)


def _conflicts(A: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Truths (a[t], b[t]) holding the same estimate in one frame of the assignment (K, n)."""
    if A.shape[1] < 2:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    order = np.argsort(A, axis=1, kind="stable")
    held = np.take_along_axis(A, order, axis=1)
    same = (held[:, 1:] == held[:, :-1]) & (held[:, 1:] >= 0)
    return order[:, :-1][same], order[:, 1:][same]


def _paths(close: _Close, K: int, switch: float) -> np.ndarray:
    """Each truth's optimal path on its own (the estimates' capacity dropped), as an assignment (K, n)."""
    f0, f1 = close.first, close.last
    order = np.lexsort((f0, close.truth)).astype(np.int64)  # pairs of each truth, by first frame
    truth_ptr = np.searchsorted(close.truth[order], np.arange(close.n + 1)).astype(np.int64)
    span_ptr = np.zeros(close.truth.size + 1, dtype=np.int64)
    np.cumsum(f1 - f0 + 1, out=span_ptr[1:])
    A = np.full((K, close.n), -1, dtype=np.int64)
    _viterbi(K, truth_ptr, order, f0, f1, close.est, close.ptr, close.frame, close.gain, span_ptr, switch, A)
    return A


_U, _N, _F = -1, -2, -3  # back-pointer codes of the untouched, none and finished states


@nb.njit(cache=True)
def _viterbi(K, truth_ptr, order, f0, f1, est, ptr, frame, gain, span_ptr, switch, A):  # pragma: no cover
    """Each truth's cheapest path on its own, written into A (K, n) (estimate index, -1 for none).

    States of truth i at frame k: U (untouched so far: no switch is paid to
    enter a label at its first close frame f0, the label being held on all of
    [0, f0), a pre-hold), N (none), F (finished: the last label is held to the
    end, a post-hold, entered at f1 + 1 for free) and label q = (i, j) on its
    span [f0[q], f1[q]], where it costs gain if close and 0 otherwise.
    Transitions cost 0 (stay), switch / 2 (to or from N) or switch (between
    two labels). Pairs of truth i are ``order[truth_ptr[i]:truth_ptr[i + 1]]``
    by first frame; back-pointers of label q at frame k sit at
    ``span_ptr[q] + k - f0[q]``.
    """
    half = switch / 2.0
    inf = np.inf
    n = truth_ptr.size - 1
    P = f0.size
    back = np.empty(span_ptr[P], dtype=np.int64)
    back_n = np.empty(K, dtype=np.int64)
    back_f = np.empty(K, dtype=np.int64)
    value = np.empty(P)
    cursor = np.empty(P, dtype=np.int64)
    active = np.empty(P, dtype=np.int64)
    for i in range(n):
        a, b = truth_ptr[i], truth_ptr[i + 1]
        if a == b:
            continue
        lo = f0[order[a]]
        hi = lo
        for t in range(a, b):
            hi = max(hi, f1[order[t]])
        v_n, v_f = inf, inf  # U costs 0 throughout
        n_active, nxt = 0, a
        for k in range(lo, hi + 1):
            best1, best2, arg1, arg2 = inf, inf, -1, -1  # two cheapest labels at k - 1
            for t in range(n_active):
                x = value[active[t]]
                if x < best1:
                    best2, arg2 = best1, arg1
                    best1, arg1 = x, active[t]
                elif x < best2:
                    best2, arg2 = x, active[t]
            new_n, ptr_n = v_n, _N
            if 0.0 < new_n:
                new_n, ptr_n = 0.0, _U
            if best1 + half < new_n:
                new_n, ptr_n = best1 + half, arg1
            new_f, ptr_f = v_f, _F
            t = 0
            while t < n_active:  # labels whose span ended at k - 1 may pass into F
                q = active[t]
                if f1[q] == k - 1:
                    if value[q] < new_f:
                        new_f, ptr_f = value[q], q
                    n_active -= 1
                    active[t] = active[n_active]
                else:
                    t += 1
            while nxt < b and f0[order[nxt]] == k:
                q = order[nxt]
                active[n_active] = q
                n_active += 1
                cursor[q] = ptr[q]
                nxt += 1
            for t in range(n_active):
                q = active[t]
                if f0[q] == k:
                    best, arg = 0.0, _U
                else:
                    best, arg = value[q], q
                if v_n + half < best:
                    best, arg = v_n + half, _N
                other, other_arg = (best1, arg1) if arg1 != q else (best2, arg2)
                if other + switch < best:
                    best, arg = other + switch, other_arg
                c = cursor[q]
                if c < ptr[q + 1] and frame[c] == k:
                    best += gain[c]
                    cursor[q] = c + 1
                value[q] = best
                back[span_ptr[q] + k - f0[q]] = arg
            v_n, v_f = new_n, new_f
            back_n[k], back_f[k] = ptr_n, ptr_f
        # the end: U (never assigned), N, F, or a label held to the end
        state, best = _U, 0.0
        if v_n < best:
            state, best = _N, v_n
        if v_f < best:
            state, best = _F, v_f
        for t in range(n_active):
            if value[active[t]] < best:
                state, best = active[t], value[active[t]]
        if state >= 0:
            for kk in range(hi + 1, K):  # post-hold
                A[kk, i] = est[state]
        k = hi
        while k >= lo and state != _U:
            if state == _N:
                state = back_n[k]
            elif state == _F:
                if back_f[k] != _F:
                    state = back_f[k]
                    for kk in range(k, K):  # post-hold of the label left at k - 1
                        A[kk, i] = est[state]
            else:
                A[k, i] = est[state]
                prev = back[span_ptr[state] + k - f0[state]]
                if prev == _U:
                    for kk in range(k):  # pre-hold
                        A[kk, i] = est[state]
                state = prev
            k -= 1


def _group_milp(close: _Close, members: np.ndarray, K: int, switch: float) -> np.ndarray:
    """The joint optimum of the truths ``members`` (estimates shared only among them), (K, len(members)).

    A mixed-integer programme of size linear in the close entries (module
    docstring, 4): per pair q = (i, j) of these truths, one binary per close
    entry (its gain), per gap between two consecutive close frames (held on
    the whole gap or not at all; anything in between costs as much switch and
    frees nothing), per pre-hold [0, f0) and post-hold (f1, K) (step 2).
    Consecutive pieces of a pair pay switch / 2 |v - v'|. Each truth and
    estimate holds at most one piece per frame: for an identity whose pieces
    start at frames s_1 < s_2 < ..., a continuous load L_t in [0, 1] counts
    the pieces covering s_t, L_t = L_{t-1} + (pieces starting at s_t) -
    (pieces ending in [s_{t-1}, s_t)); every frame is covered by a subset of
    the pieces covering the last start before it, so this suffices.
    """
    q = np.flatnonzero(np.isin(close.truth, members))
    lo, hi = close.ptr[q], close.ptr[q + 1]
    counts = hi - lo
    ent = np.concatenate([np.arange(s, e) for s, e in zip(lo.tolist(), hi.tolist(), strict=True)])
    pair = np.repeat(q, counts)
    fr = close.frame[ent]
    # pieces: close entries, gaps, holds: (pair, start, end, cost)
    nxt_same = np.r_[pair[1:] == pair[:-1], False]
    gap = nxt_same & (np.r_[fr[1:], 0] > fr + 1)
    f0, f1 = close.frame[lo], close.frame[hi - 1]
    pre, post = f0 > 0, f1 < K - 1
    p_pair = np.concatenate([pair, pair[gap], q[pre], q[post]])
    p_start = np.concatenate([fr, fr[gap] + 1, np.zeros(pre.sum(), dtype=np.int64), f1[post] + 1])
    p_end = np.concatenate([fr, np.r_[fr[1:], 0][gap] - 1, f0[pre] - 1, np.full(post.sum(), K - 1)])
    p_cost = np.concatenate([close.gain[ent], np.zeros(gap.sum() + pre.sum() + post.sum())])
    order = np.lexsort((p_start, p_pair))
    p_pair, p_start, p_end, p_cost = p_pair[order], p_start[order], p_end[order], p_cost[order]
    n_piece = p_pair.size
    # switch terms between consecutive pieces of a pair
    later = np.flatnonzero(p_pair[1:] == p_pair[:-1]) + 1
    n_sw = later.size
    # loads: identity (truth i, or n + estimate j) x start frame
    ident = np.concatenate([close.truth[p_pair], close.n + close.est[p_pair]])
    piece = np.tile(np.arange(n_piece), 2)
    starts = ident * (K + 1) + np.tile(p_start, 2)
    rows, inverse = np.unique(starts, return_inverse=True)
    n_rows = rows.size
    ends = np.searchsorted(rows, ident * (K + 1) + np.tile(p_end, 2), side="right")
    ends_ok = ends < n_rows
    ends_ok[ends_ok] = rows[ends[ends_ok]] // (K + 1) == ident[ends_ok]
    chained = np.flatnonzero(rows[1:] // (K + 1) == rows[:-1] // (K + 1)) + 1
    L0, Z0 = n_piece, n_piece + n_rows
    width = Z0 + n_sw
    r_sw = np.arange(n_sw)
    loads = sparse.csr_matrix(
        (
            np.concatenate(
                [np.ones(n_rows), -np.ones(chained.size), -np.ones(piece.size), np.ones(ends_ok.sum())]
            ),
            (
                np.concatenate([np.arange(n_rows), chained, inverse, ends[ends_ok]]),
                np.concatenate([L0 + np.arange(n_rows), L0 + chained - 1, piece, piece[ends_ok]]),
            ),
        ),
        shape=(n_rows, width),
    )
    blocks = [loads]
    for sign in (1.0, -1.0):  # -z + sign (v_later - v_earlier) <= 0
        blocks.append(
            sparse.csr_matrix(
                (
                    np.concatenate([-np.ones(n_sw), np.full(n_sw, sign), np.full(n_sw, -sign)]),
                    (np.tile(r_sw, 3), np.concatenate([Z0 + r_sw, later, later - 1])),
                ),
                shape=(n_sw, width),
            )
        )
    lower = np.concatenate([np.zeros(n_rows), np.full(2 * n_sw, -np.inf)])
    upper = np.zeros(n_rows + 2 * n_sw)
    cost = np.concatenate([p_cost, np.zeros(n_rows), np.full(n_sw, switch / 2.0)])
    integrality = np.concatenate([np.ones(n_piece, dtype=int), np.zeros(n_rows + n_sw, dtype=int)])
    x = _highs(cost, sparse.vstack(blocks, format="csr"), lower, upper, integrality)
    chosen = np.flatnonzero(np.round(x[:n_piece]) == 1)
    out = np.full((K, close.n), -1, dtype=np.int64)
    length = p_end[chosen] - p_start[chosen] + 1
    frames = np.repeat(p_start[chosen] - np.cumsum(length) + length, length) + np.arange(length.sum())
    out[frames, np.repeat(close.truth[p_pair[chosen]], length)] = np.repeat(close.est[p_pair[chosen]], length)
    return out[:, members]


def _solve(gain, ti, ej, n: int, m: int, switch: float, integer: bool) -> np.ndarray:
    """argmin over w (K, P) of sum gain * w + switch / 2 * sum_t |w_t - w_{t-1}| (injective per frame).

    ``gain`` is (K, P) for the P candidate pairs (truth ti[P], estimate ej[P]).
    Pairs that never gain are left out: their w only adds switch cost.
    """
    K, P = gain.shape
    if P == 0:
        return np.zeros((K, 0))
    nw, ne = K * P, (K - 1) * P
    cost = np.concatenate([gain.reshape(-1), np.full(ne, switch / 2.0)])
    w_idx = np.arange(nw).reshape(K, P)
    blocks = []
    # sum_j w^k_ij <= 1 and sum_i w^k_ij <= 1: rows indexed by (k, truth) and (k, estimate)
    for owner, count in ((ti, n), (ej, m)):
        rows = (np.arange(K)[:, None] * count + owner[None, :]).reshape(-1)
        blocks.append(sparse.csr_matrix((np.ones(nw), (rows, w_idx.reshape(-1))), shape=(K * count, nw + ne)))
    lower = [np.full(K * n, -np.inf), np.full(K * m, -np.inf)]
    upper = [np.ones(K * n), np.ones(K * m)]
    if ne:
        switch_blocks, switch_lower, switch_upper = _switch_rows(
            nw, w_idx[1:].reshape(-1), w_idx[:-1].reshape(-1), nw + ne
        )
        blocks += switch_blocks
        lower += switch_lower
        upper += switch_upper
    A = sparse.vstack(blocks, format="csr")
    integrality = np.concatenate([np.full(nw, int(integer)), np.zeros(ne, dtype=int)])
    x = _highs(cost, A, np.concatenate(lower), np.concatenate(upper), integrality)
    w = x[:nw].reshape(K, P)
    return np.round(w) if integer else np.clip(w, 0.0, 1.0)


def _switch_rows(first: int, later: np.ndarray, earlier: np.ndarray, width: int):
    """Rows e_t >= +-(w_later - w_earlier) for switch variables e at columns first, first + 1, ...

    As -e + w_later - w_earlier <= 0 and -e - w_later + w_earlier <= 0: returns
    (blocks, lower, upper) lists to stack under the other constraints (``width`` columns).
    """
    ne = later.size
    r = np.arange(ne)
    blocks, lower, upper = [], [], []
    for sign in (1.0, -1.0):
        blocks.append(
            sparse.csr_matrix(
                (
                    np.concatenate([-np.ones(ne), np.full(ne, sign), np.full(ne, -sign)]),
                    (np.concatenate([r, r, r]), np.concatenate([first + r, later, earlier])),
                ),
                shape=(ne, width),
            )
        )
        lower.append(np.full(ne, -np.inf))
        upper.append(np.zeros(ne))
    return blocks, lower, upper


def _highs(cost, A, lower, upper, integrality) -> np.ndarray:
    """Minimise cost @ x subject to lower <= A x <= upper, 0 <= x <= 1, with HiGHS.

    HiGHS stops a MILP within an absolute gap of 1e-6 in the objective even
    with zero relative gap; scaling the costs so that the largest is 1e6
    makes that gap 1e-12 of the largest cost.
    """
    top = float(np.max(np.abs(cost), initial=0.0))
    scale = 1e6 / top if top > 0 else 1.0
    res = milp(
        cost * scale,
        constraints=LinearConstraint(A, lower, upper),
        integrality=integrality,
        bounds=(0.0, 1.0),
        options={"mip_rel_gap": 0.0},
    )
    if res.x is None:
        raise RuntimeError(f"tgospa: the HiGHS solver failed ({res.message})")
    return res.x


def _result(A: np.ndarray, close: _Close, X, Y, c, p, gamma) -> TGOSPAResult:
    """Decomposition of the integral assignment A (K, n) (estimate index or -1, holds included)."""
    K, n = A.shape
    kk, ii = np.nonzero(A >= 0)
    pair = close.pair_index(ii, A[kk, ii])
    keys = close.keys()
    want = pair * K + kk
    pos = np.minimum(np.searchsorted(keys, want), max(keys.size - 1, 0))
    hit = (pair >= 0) & (keys[pos] == want) if keys.size else np.zeros(kk.size, dtype=bool)
    frame_loc = np.bincount(kk[hit], weights=close.dist_p[pos[hit]], minlength=K)
    n_pairs = np.bincount(kk[hit], minlength=K).astype(float)
    before, after = A[:-1], A[1:]
    changed = before != after
    full = changed & (before >= 0) & (after >= 0)
    tv = np.zeros(K)
    tv[1:] = full.sum(axis=1) + 0.5 * (changed & ~full).sum(axis=1)
    return _assemble(frame_loc, n_pairs, tv, A, X, Y, c, p, gamma, exact=True)


def _assemble(frame_loc, n_pairs, tv, assigned, X, Y, c, p, gamma, exact: bool) -> TGOSPAResult:
    """The result from per-frame localization, counted pairs, switch variation and the assignment."""
    half = c**p / 2.0
    n_truth = np.array([pts.shape[0] for pts in X.points], dtype=float)
    n_est = np.array([pts.shape[0] for pts in Y.points], dtype=float)
    frame_missed = half * (n_truth - n_pairs)
    frame_false = half * (n_est - n_pairs)
    frame_switch = gamma**p * tv
    before, after = assigned[:-1], assigned[1:]
    changed = before != after
    n_full = int(np.sum(changed & (before >= 0) & (after >= 0)))
    n_half = int(np.sum(changed & ((before < 0) | (after < 0))))
    parts = [float(np.sum(a)) for a in (frame_loc, frame_missed, frame_false, frame_switch)]
    total = sum(parts)
    return TGOSPAResult(
        total ** (1.0 / p),
        *parts,
        n_full,
        n_half,
        frame_loc,
        frame_missed,
        frame_false,
        frame_switch,
        assigned,
        X.ids,
        Y.ids,
        exact,
        p,
        c,
        gamma,
    )


def _lp_result(close: _Close, X, Y, c, p, gamma) -> TGOSPAResult:
    """The LP relaxation over every frame and candidate pair (the paper's LP metric) and its decomposition."""
    K, n, m = close.frames, close.n, close.m
    pair = np.repeat(np.arange(close.truth.size), np.diff(close.ptr))
    gain = np.zeros((K, close.truth.size))
    gain[close.frame, pair] = close.gain
    w = _solve(gain, close.truth, close.est, n, m, gamma**p, integer=False)
    counted = np.zeros_like(w)  # weight of pairs that both exist within c
    counted[close.frame, pair] = w[close.frame, pair]
    dist_p = np.zeros_like(w)
    dist_p[close.frame, pair] = close.dist_p
    frame_loc = np.sum(counted * dist_p, axis=1)
    n_pairs = counted.sum(axis=1)
    tv = np.zeros(K)
    tv[1:] = 0.5 * np.abs(np.diff(w, axis=0)).sum(axis=1)
    assigned = np.full((K, n), -1, dtype=np.int64)
    if n and m and w.size:
        full = np.zeros((K, n, m))
        full[:, close.truth, close.est] = w
        best = full.argmax(axis=2)
        has = np.take_along_axis(full, best[:, :, None], axis=2)[:, :, 0] > 0.5
        assigned[has] = best[has]
    return _assemble(frame_loc, n_pairs, tv, assigned, X, Y, c, p, gamma, exact=False)
