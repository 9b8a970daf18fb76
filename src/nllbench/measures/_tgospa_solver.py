"""The exact trajectory-GOSPA minimum, in time and memory linear in the frames.

Used by :func:`nllbench.measures.tgospa.tgospa`.

Notation: K frames, truths i, estimates j; a *pair* (i, j) is one that is
close (both exist, d < c) in some frame; its gain there is d^p - c^p < 0
(pairing saves that much), 0 elsewhere; a switch costs ``switch`` =
gamma^p (half of it to or from none). The minimum of the module docstring
of :mod:`nllbench.measures.tgospa` is found in four steps.

1. **Spans** (:func:`close_entries`). Label j is worth holding for truth i
   only on the span [f0, f1] of the frames where (i, j) is close, on all of
   [0, f0) (a *pre-hold*: no switch is paid before the first frame) or on
   all of (f1, K) (a *post-hold*): elsewhere, replacing j by none never costs
   more, as s(a, j) + s(j, b) >= s(a, 0) + s(0, b) unless a = b = j, and it
   frees capacity. (The MILP this replaces made the same reduction.)
2. **Each truth on its own** (:func:`_viterbi`). Dropping the rule that an
   estimate serves at most one truth per frame leaves one problem per truth:
   a Viterbi recursion over the states untouched-so-far, none, finished (a
   post-hold) and each label on its span, O(sum of the spans). The sum of
   the truths' minima is a lower bound; when their optimal paths share no
   estimate in any frame they are feasible, hence optimal.
3. **Groups** (:func:`exact_assignment`). Truths whose paths collide are
   grouped, and each group is solved jointly with the estimates' capacity
   among its members (:func:`_solve_group`); groups that then collide with
   others are merged and solved again, until no two collide. The groups'
   minima sum to a lower bound (only constraints between groups are
   dropped) attained by a feasible assignment: the minimum.
4. **A group** (:func:`_solve_group`). Lagrangian prices lam >= 0 on
   (estimate, frame) make each member's own problem dearer where the
   estimate is contested; the members' priced minima less sum(lam) are a
   lower bound LB (weak duality), improved by subgradient steps. Given a
   feasible joint path of cost UB (a greedy one, or priced paths that do not
   collide), a member state whose priced excess (forward + backward priced
   value through it, less the member's priced minimum) exceeds UB - LB lies
   on no joint path costing at most UB. On the states kept, a joint Viterbi
   recursion finds the minimum, carrying in its joint state only the
   members whose kept states can meet another's, between their first and
   last such frame (:func:`_windows`, :func:`_window_dp`); outside that
   window a member's cheapest way over its kept states meets nobody. When
   the joint states would be too many after the price steps, the group is
   solved as a mixed-integer programme of size linear in the frames
   (:func:`_group_milp`, HiGHS with zero gap) instead; :class:`SolveStats`
   reports how often.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba as nb
import numpy as np
from scipy import sparse
from scipy.optimize import LinearConstraint, milp
from scipy.sparse.csgraph import connected_components

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


@dataclass(frozen=True)
class SolveStats:
    """How the exact minimum was reached (for benchmarks and tests).

    Attributes
    ----------
    conflicts : int
        (frame, estimate) cells where the truths' own optimal paths collided (step 2).
    groups : tuple of int
        Sizes (truths) of the groups solved jointly, in order (step 3).
    price_steps : tuple of int
        Subgradient steps each group needed before its joint Viterbi (step 4).
    milp_groups : tuple of int
        Sizes of the groups that went to the mixed-integer programme instead.
    """

    conflicts: int
    groups: tuple
    price_steps: tuple
    milp_groups: tuple


def exact_assignment(close: Close, switch: float) -> tuple[np.ndarray, SolveStats]:
    """The optimal assignment (K, n): estimate index or -1 per frame and truth, holds included."""
    n, K = close.n, close.frames
    A = _own_paths_all(close, switch)
    a, b = _conflicts(A)
    n_conflicts = int(a.size)
    group = np.arange(n)  # each truth's group: the smallest truth in it
    sizes, steps, milps = [], [], []
    while a.size:
        merged = _merge(group, a, b)
        for r in np.unique(merged[a]):
            members = np.flatnonzero(merged == r)
            joint, n_steps = _solve_group(close, members, switch)
            if joint is None:
                joint = _group_milp(close, members, K, switch)
                milps.append(int(members.size))
            A[:, members] = joint
            sizes.append(int(members.size))
            steps.append(n_steps)
        group = merged
        a, b = _conflicts(A)
    return A, SolveStats(n_conflicts, tuple(sizes), tuple(steps), tuple(milps))


def _merge(group: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Groups (smallest member per truth) after joining the groups of every a[t] and b[t]."""
    n = group.size
    edges = sparse.coo_matrix(
        (np.ones(a.size + n), (np.concatenate([a, np.arange(n)]), np.concatenate([b, group]))), shape=(n, n)
    )
    _, label = connected_components(edges, directed=False)
    smallest = np.full(label.max(initial=-1) + 1, n)
    np.minimum.at(smallest, label, np.arange(n))
    return smallest[label]


def _conflicts(A: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Truths (a[t], b[t]) holding the same estimate in one frame of the assignment (K, n)."""
    if A.shape[1] < 2:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    order = np.argsort(A, axis=1, kind="stable")
    held = np.take_along_axis(A, order, axis=1)
    same = (held[:, 1:] == held[:, :-1]) & (held[:, 1:] >= 0)
    return order[:, :-1][same], order[:, 1:][same]


def _own_paths_all(close: Close, switch: float) -> np.ndarray:
    """Each truth's optimal path on its own (the estimates' capacity dropped), as an assignment (K, n)."""
    f0, f1 = close.first, close.last
    order = np.lexsort((f0, close.truth)).astype(np.int64)  # pairs of each truth, by first frame
    truth_ptr = np.searchsorted(close.truth[order], np.arange(close.n + 1)).astype(np.int64)
    span_ptr = np.zeros(close.truth.size + 1, dtype=np.int64)
    np.cumsum(f1 - f0 + 1, out=span_ptr[1:])
    A = np.full((close.frames, close.n), -1, dtype=np.int64)
    _viterbi(
        close.frames,
        truth_ptr,
        order,
        f0,
        f1,
        close.est,
        close.ptr,
        close.frame,
        close.gain,
        span_ptr,
        switch,
        A,
    )
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


def _ranges(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The concatenated ranges starts[t] .. starts[t] + counts[t] - 1."""
    counts = np.asarray(counts, dtype=np.int64)
    return np.repeat(np.asarray(starts, dtype=np.int64) - np.cumsum(counts) + counts, counts) + np.arange(
        int(counts.sum())
    )


@dataclass(frozen=True)
class _Group:
    """The pairs of a group of g truths on their spans (local pair l, grouped by member, by estimate).

    Attributes
    ----------
    member_ptr : (g + 1,) int64
        Local pairs of member t are ``member_ptr[t]:member_ptr[t + 1]``.
    order : (L,) int64
        The local pairs of each member by first frame (for :func:`_forward`).
    f0, f1, est : (L,) int64
        Span and estimate of each pair.
    span_ptr : (L + 1,) int64
        Frame k of pair l's span sits at ``span_ptr[l] + k - f0[l]`` in span arrays.
    cost : (S,) float
        Frame cost of each pair on its span: the gain where close, 0 elsewhere.
    key : (S,) int64
        est * K + frame of each span position (the (estimate, frame) cell it holds).
    frames : int
    """

    member_ptr: np.ndarray
    order: np.ndarray
    f0: np.ndarray
    f1: np.ndarray
    est: np.ndarray
    span_ptr: np.ndarray
    cost: np.ndarray
    key: np.ndarray
    frames: int

    @property
    def size(self) -> int:
        return self.member_ptr.size - 1

    def owner(self) -> np.ndarray:
        """(L,) the member of each local pair."""
        return np.repeat(np.arange(self.size), np.diff(self.member_ptr))

    def local(self) -> np.ndarray:
        """(S,) the local pair of each span position."""
        return np.repeat(np.arange(self.f0.size), self.f1 - self.f0 + 1)


def _group(close: Close, members: np.ndarray) -> _Group:
    """The :class:`_Group` of the truths ``members`` (sorted)."""
    K = close.frames
    pos = np.minimum(np.searchsorted(members, close.truth), members.size - 1)
    q = np.flatnonzero(members[pos] == close.truth)  # pairs are sorted by truth: grouped by member
    owner = pos[q]
    f0, f1 = close.first[q], close.last[q]
    member_ptr = np.searchsorted(owner, np.arange(members.size + 1)).astype(np.int64)
    span_ptr = np.zeros(q.size + 1, dtype=np.int64)
    np.cumsum(f1 - f0 + 1, out=span_ptr[1:])
    counts = close.ptr[q + 1] - close.ptr[q]
    ent = _ranges(close.ptr[q], counts)
    at = np.repeat(np.arange(q.size), counts)
    cost = np.zeros(int(span_ptr[-1]))
    cost[span_ptr[at] + close.frame[ent] - f0[at]] = close.gain[ent]
    local = np.repeat(np.arange(q.size), f1 - f0 + 1)
    key = close.est[q][local] * K + f0[local] + np.arange(cost.size) - span_ptr[local]
    order = np.lexsort((f0, owner)).astype(np.int64)
    return _Group(member_ptr, order, f0, f1, close.est[q], span_ptr, cost, key, K)


def _flip(grp: _Group, span_values: np.ndarray) -> np.ndarray:
    """Span values in reversed time: every pair's span reversed in place."""
    local = grp.local()
    t = np.arange(span_values.size) - grp.span_ptr[local]
    return span_values[grp.span_ptr[local] + grp.f1[local] - grp.f0[local] - t]


@nb.njit(cache=True)
def _forward(K, member_ptr, order, f0, f1, span_ptr, cost, pre, switch):  # pragma: no cover
    """Forward values of each member on its own over all K frames, with back-pointers.

    The states of :func:`_viterbi`, untouched-so-far folded into none (cost
    0) and into a label's first frame (entered from the start at the price
    ``pre[l]`` of its pre-hold, inf where it may not be held). Returns
    ``(lab, none, back_lab, back_none)``: ``lab[span_ptr[l] + k - f0[l]]`` is
    the cheapest cost of frames 0..k ending on label l at k (its frame cost
    ``cost`` included), ``none[t, k]`` ending on none; back-pointers: _U
    (pre-held), _N (from none) or the label at k - 1.
    """
    half = switch / 2.0
    g = member_ptr.size - 1
    lab = np.empty(span_ptr[-1])
    back_lab = np.empty(span_ptr[-1], dtype=np.int64)
    none = np.empty((g, K))
    back_none = np.empty((g, K), dtype=np.int64)
    active = np.empty(f0.size, dtype=np.int64)
    for t in range(g):
        a, b = member_ptr[t], member_ptr[t + 1]
        v_n = 0.0
        n_active, nxt = 0, a
        for k in range(K):
            best1, best2, arg1, arg2 = np.inf, np.inf, -1, -1
            for s in range(n_active):
                x = lab[span_ptr[active[s]] + k - 1 - f0[active[s]]]
                if x < best1:
                    best2, arg2 = best1, arg1
                    best1, arg1 = x, active[s]
                elif x < best2:
                    best2, arg2 = x, active[s]
            if best1 + half < v_n:
                none[t, k], back_none[t, k] = best1 + half, arg1
            else:
                none[t, k], back_none[t, k] = v_n, _N
            s = 0
            while s < n_active:
                if f1[active[s]] == k - 1:
                    n_active -= 1
                    active[s] = active[n_active]
                else:
                    s += 1
            while nxt < b and f0[order[nxt]] == k:
                active[n_active] = order[nxt]
                n_active += 1
                nxt += 1
            for s in range(n_active):
                q = active[s]
                at = span_ptr[q] + k - f0[q]
                if f0[q] == k:
                    best, arg = pre[q], _U
                else:
                    best, arg = lab[at - 1], q
                if v_n + half < best:
                    best, arg = v_n + half, _N
                other, other_arg = (best1, arg1) if arg1 != q else (best2, arg2)
                if other + switch < best:
                    best, arg = other + switch, other_arg
                lab[at] = best + cost[at]
                back_lab[at] = arg
            v_n = none[t, k]
    return lab, none, back_lab, back_none


@nb.njit(cache=True)
def _trace(t, end, k, f0, f1, est, span_ptr, back_lab, back_none, row):  # pragma: no cover
    """Fill row[0:k + 1] with member t's cheapest path ending at frame k on ``end``.

    ``end``: -1 for none, l for label l (k in its span), or L + l for label l
    post-held (k > f1[l]).
    """
    L = f0.size
    q = end - L if end >= L else end
    if end >= L:
        row[f1[q] + 1 : k + 1] = est[q]
        k = f1[q]
    state = q
    while True:
        row[k] = -1 if state < 0 else est[state]
        if k == 0:
            return
        prev = back_none[t, k] if state < 0 else back_lab[span_ptr[state] + k - f0[state]]
        if prev == _U:
            row[:k] = est[state]
            return
        state = -1 if prev == _N else prev
        k -= 1


def _own(
    grp: _Group, cost: np.ndarray, pre: np.ndarray, post: np.ndarray, switch: float, reverse: bool = True
):
    """Each member's cheapest path on its own at span costs ``cost`` and hold prices ``pre``, ``post``.

    Returns (fwd, rev, opt, paths): :func:`_forward` in both directions
    (reversed time: spans flipped, pre- and post-holds swapped; None unless
    ``reverse``), the members' minima (g,) and their cheapest paths (g, K)
    (estimate or -1).
    """
    K, g = grp.frames, grp.size
    fwd = _forward(K, grp.member_ptr, grp.order, grp.f0, grp.f1, grp.span_ptr, cost, pre, switch)
    rev = None
    if reverse:
        f0r, f1r = K - 1 - grp.f1, K - 1 - grp.f0
        order_r = np.lexsort((f0r, grp.owner())).astype(np.int64)
        rev = _forward(K, grp.member_ptr, order_r, f0r, f1r, grp.span_ptr, _flip(grp, cost), post, switch)
    lab, none = fwd[0], fwd[1]
    ends = lab[grp.span_ptr[1:] - 1] + post  # a span's end, then held to the end
    opt = none[:, K - 1].copy()
    paths = np.full((g, K), -1, dtype=np.int64)
    L = grp.f0.size
    for t in range(g):
        a, b = grp.member_ptr[t], grp.member_ptr[t + 1]
        end = -1
        if b > a and ends[a:b].min() < opt[t]:
            end = a + int(np.argmin(ends[a:b]))
            opt[t] = ends[end]
            end = end if grp.f1[end] == K - 1 else end + L
        _trace(t, end, K - 1, grp.f0, grp.f1, grp.est, grp.span_ptr, fwd[2], fwd[3], paths[t])
    return fwd, rev, opt, paths


def _true_cost(grp: _Group, paths: np.ndarray, switch: float) -> float:
    """The members' cost (frame gains plus switches) of the paths (g, K)."""
    t, k = np.nonzero(paths >= 0)
    x = paths[t, k]
    width = int(grp.est.max(initial=0)) + 1
    have = grp.owner() * width + grp.est  # sorted (by member, then estimate)
    pos = np.minimum(np.searchsorted(have, t * width + x), max(have.size - 1, 0))
    inside = (k >= grp.f0[pos]) & (k <= grp.f1[pos])
    gains = grp.cost[grp.span_ptr[pos[inside]] + k[inside] - grp.f0[pos[inside]]]
    before, after = paths[:, :-1], paths[:, 1:]
    changed = before != after
    full = changed & (before >= 0) & (after >= 0)
    return float(gains.sum()) + switch * float(full.sum()) + switch / 2.0 * float((changed & ~full).sum())


def _collisions(paths: np.ndarray, K: int) -> np.ndarray:
    """The cells est * K + frame held by two or more of the paths (g, K), sorted."""
    held = np.sort(paths, axis=0)
    same = (held[1:] == held[:-1]) & (held[1:] >= 0)
    return np.unique(held[1:][same] * K + np.nonzero(same)[1])


def _cell_usage(paths: np.ndarray, cells: np.ndarray, K: int) -> np.ndarray:
    """How many of the paths (g, K) hold each cell est * K + frame (sorted ``cells``)."""
    t, k = np.nonzero(paths >= 0)
    held = paths[t, k] * K + k
    pos = np.minimum(np.searchsorted(cells, held), max(cells.size - 1, 0))
    hit = cells.size > 0
    use = np.zeros(cells.size)
    if hit:
        np.add.at(use, pos[cells[pos] == held], 1.0)
    return use


def _prices(grp: _Group, cells: np.ndarray, lam: np.ndarray):
    """Span costs and pre-/post-hold prices with lam (on the sorted ``cells``) added."""
    K = grp.frames
    cost = grp.cost.copy()
    pre, post = np.zeros(grp.f0.size), np.zeros(grp.f0.size)
    if cells.size:
        pos = np.minimum(np.searchsorted(cells, grp.key), cells.size - 1)
        hit = cells[pos] == grp.key
        cost[hit] += lam[pos[hit]]
        total = np.concatenate([[0.0], np.cumsum(lam)])
        base = grp.est * K

        def between(lo, hi):  # sum of lam over est * K + [lo, hi)
            return total[np.searchsorted(cells, base + hi)] - total[np.searchsorted(cells, base + lo)]

        pre = between(0, grp.f0)
        post = between(grp.f1 + 1, K)
    return cost, pre, post


@nb.njit(cache=True)
def _blocked(taken, f0, f1, est, span_ptr, n_est):  # pragma: no cover
    """For one member's pairs: span positions, pre-holds and post-holds touching a cell the paths
    ``taken`` (r, K) hold (the span positions as a mask; the holds as flags)."""
    K = taken.shape[1]
    pair_of = np.full(n_est, -1, dtype=np.int64)
    for q in range(f0.size):
        pair_of[est[q]] = q
    span = np.zeros(span_ptr[-1], dtype=np.bool_)
    pre = np.zeros(f0.size, dtype=np.bool_)
    post = np.zeros(f0.size, dtype=np.bool_)
    for u in range(taken.shape[0]):
        for k in range(K):
            x = taken[u, k]
            if x < 0:
                continue
            q = pair_of[x]
            if q < 0:
                continue
            if k < f0[q]:
                pre[q] = True
            elif k > f1[q]:
                post[q] = True
            else:
                span[span_ptr[q] + k - f0[q]] = True
    return span, pre, post


def _member(grp: _Group, t: int, cost: np.ndarray) -> _Group:
    """Member t of the group alone, at span costs ``cost`` (of the whole group)."""
    a, b = grp.member_ptr[t], grp.member_ptr[t + 1]
    s0, s1 = grp.span_ptr[a], grp.span_ptr[b]
    f0 = grp.f0[a:b]
    return _Group(
        np.array([0, b - a], dtype=np.int64),
        np.argsort(f0, kind="stable").astype(np.int64),
        f0,
        grp.f1[a:b],
        grp.est[a:b],
        grp.span_ptr[a : b + 1] - s0,
        cost[s0:s1],
        grp.key[s0:s1],
        grp.frames,
    )


def _greedy(grp: _Group, own: np.ndarray, switch: float) -> np.ndarray:
    """A feasible joint path (g, K): member after member, its own path ``own[t]`` where it meets none
    of those before, else its cheapest path on its own away from the cells they hold."""
    g = grp.size
    paths = own.copy()
    n_est = int(grp.est.max(initial=0)) + 1
    for t in range(1, g):
        if not np.any((paths[:t] == paths[t]) & (paths[t] >= 0)):
            continue
        one = _member(grp, t, grp.cost)
        span, pre, post = _blocked(paths[:t], one.f0, one.f1, one.est, one.span_ptr, n_est)
        cost = np.where(span, np.inf, one.cost)
        paths[t] = _own(one, cost, np.where(pre, np.inf, 0.0), np.where(post, np.inf, 0.0), switch, False)[3][
            0
        ]
    return paths


_KIND_N, _KIND_LABEL, _KIND_PRE, _KIND_POST = 0, 1, 2, 3


def _survivors(grp: _Group, fwd, rev, opt, cost, pre, post, switch: float, slack: float):
    """The member states of priced excess at most ``slack`` (the module docstring, step 4).

    ``fwd``, ``rev``, ``opt`` from :func:`_own` at the priced ``cost``,
    ``pre``, ``post``. Returns ``ptr`` (g, K + 1) (member t's states at frame
    k are ``ptr[t, k]:ptr[t, k + 1]``) and per state: kind (none, label,
    pre-hold, post-hold), local pair (-1 for none), estimate held (-1 for
    none) and true frame cost (the gain of a close label, else 0).
    """
    K, g = grp.frames, grp.size
    lab, none = fwd[0], fwd[1]
    lab_r, none_r = rev[0], rev[1]
    owner = grp.owner()
    through = lab + _flip(grp, lab_r) - cost  # forward + backward through each span position
    first = lab_r[grp.span_ptr[1:] - 1] + pre  # held from the start, then the span and the rest
    last = lab[grp.span_ptr[1:] - 1] + post  # the span, then held to the end
    finite = np.isfinite(cost)
    scale = np.abs(cost[finite]).sum() + np.abs(opt).sum() + switch * K * g
    limit = slack + 1e-9 * scale  # rounding: keep rather than drop
    return _state_lists(
        K,
        grp.member_ptr,
        grp.f0,
        grp.f1,
        grp.est,
        grp.span_ptr,
        grp.cost,
        through - opt[owner[grp.local()]] <= limit,
        none + none_r[:, ::-1] - opt[:, None] <= limit,
        (first - opt[owner] <= limit) & (grp.f0 > 0),
        (last - opt[owner] <= limit) & (grp.f1 < K - 1),
    )


@nb.njit(cache=True)
def _state_lists(
    K, member_ptr, f0, f1, est, span_ptr, cost, keep_lab, keep_none, keep_pre, keep_post
):  # pragma: no cover
    """The kept states as lists per (member, frame): ptr (g, K + 1), kind, pair, estimate, frame cost."""
    g = member_ptr.size - 1
    count = np.zeros((g, K), dtype=np.int64)
    for t in range(g):
        for k in range(K):
            count[t, k] += keep_none[t, k]
        for q in range(member_ptr[t], member_ptr[t + 1]):
            for k in range(f0[q], f1[q] + 1):
                count[t, k] += keep_lab[span_ptr[q] + k - f0[q]]
            if keep_pre[q]:
                count[t, : f0[q]] += 1
            if keep_post[q]:
                count[t, f1[q] + 1 :] += 1
    ptr = np.empty((g, K + 1), dtype=np.int64)
    total = 0
    for t in range(g):
        for k in range(K):
            ptr[t, k] = total
            total += count[t, k]
        ptr[t, K] = total
    kind = np.empty(total, dtype=np.int64)
    pair = np.empty(total, dtype=np.int64)
    held = np.empty(total, dtype=np.int64)
    fc = np.zeros(total)
    at = ptr[:, :K].copy()
    for t in range(g):
        for k in range(K):
            if keep_none[t, k]:
                kind[at[t, k]], pair[at[t, k]], held[at[t, k]] = _KIND_N, -1, -1
                at[t, k] += 1
        for q in range(member_ptr[t], member_ptr[t + 1]):
            for k in range(f0[q], f1[q] + 1):
                if keep_lab[span_ptr[q] + k - f0[q]]:
                    s = at[t, k]
                    kind[s], pair[s], held[s], fc[s] = _KIND_LABEL, q, est[q], cost[span_ptr[q] + k - f0[q]]
                    at[t, k] += 1
            if keep_pre[q]:
                for k in range(0, f0[q]):
                    kind[at[t, k]], pair[at[t, k]], held[at[t, k]] = _KIND_PRE, q, est[q]
                    at[t, k] += 1
            if keep_post[q]:
                for k in range(f1[q] + 1, K):
                    kind[at[t, k]], pair[at[t, k]], held[at[t, k]] = _KIND_POST, q, est[q]
                    at[t, k] += 1
    return ptr, kind, pair, held, fc


@nb.njit(cache=True)
def _windows(ptr, est, n_est):  # pragma: no cover
    """Per member, the first and last frame where one of its states holds an estimate another member's
    state may hold in that frame (lo = K, hi = -1 for a member that never meets another)."""
    g, K = ptr.shape[0], ptr.shape[1] - 1
    seen_frame = np.full(n_est, -1, dtype=np.int64)
    seen_member = np.full(n_est, -1, dtype=np.int64)
    lo = np.full(g, K, dtype=np.int64)
    hi = np.full(g, -1, dtype=np.int64)
    for k in range(K):
        for t in range(g):
            for s in range(ptr[t, k], ptr[t, k + 1]):
                e = est[s]
                if e < 0:
                    continue
                if seen_frame[e] == k:
                    u = seen_member[e]
                    if u != t:
                        lo[t], hi[t] = min(lo[t], k), max(hi[t], k)
                        lo[u], hi[u] = min(lo[u], k), max(hi[u], k)
                else:
                    seen_frame[e], seen_member[e] = k, t
    return lo, hi


@nb.njit(cache=True)
def _step_cost(pk, pq, ck, cq, k, f0, f1, switch):  # pragma: no cover
    """A member's switch cost from state (pk, pq) at k - 1 to (ck, cq) at k (inf where not allowed)."""
    if ck == _KIND_N:
        if pk == _KIND_N:
            return 0.0
        return switch / 2.0 if pk == _KIND_LABEL else np.inf
    if ck == _KIND_LABEL:
        if pk == _KIND_LABEL:
            return 0.0 if pq == cq else switch
        if pk == _KIND_N:
            return switch / 2.0
        if pk == _KIND_PRE and pq == cq and k == f0[cq]:
            return 0.0
        return np.inf
    if ck == _KIND_PRE:
        return 0.0 if pk == _KIND_PRE and pq == cq else np.inf
    if pk == _KIND_POST and pq == cq:
        return 0.0
    return 0.0 if pk == _KIND_LABEL and pq == cq and k == f1[cq] + 1 else np.inf


@nb.njit(cache=True)
def _list_viterbi(ptr, kind, pair, fc, f0, f1, switch):  # pragma: no cover
    """Each member's forward and backward values over its kept states only, with pointers.

    Returns (fv, fb, bv, bn) per state: the cheapest cost of frames 0..k
    ending in it (its frame cost included) and the state before it (-1 at
    frame 0 or unreachable); the cheapest cost of frames k + 1..K - 1 from it
    and the state after it (-1 at the last frame).
    """
    g, K = ptr.shape[0], ptr.shape[1] - 1
    S = kind.size
    fv = np.full(S, np.inf)
    bv = np.full(S, np.inf)
    fb = np.full(S, -1, dtype=np.int64)
    bn = np.full(S, -1, dtype=np.int64)
    for t in range(g):
        for s in range(ptr[t, 0], ptr[t, 1]):
            if kind[s] == _KIND_N or kind[s] == _KIND_PRE or (kind[s] == _KIND_LABEL and f0[pair[s]] == 0):
                fv[s] = fc[s]
        for k in range(1, K):
            for s in range(ptr[t, k], ptr[t, k + 1]):
                best, arg = np.inf, -1
                for r in range(ptr[t, k - 1], ptr[t, k]):
                    x = fv[r] + _step_cost(kind[r], pair[r], kind[s], pair[s], k, f0, f1, switch)
                    if x < best:
                        best, arg = x, r
                fv[s] = best + fc[s]
                fb[s] = arg
        for s in range(ptr[t, K - 1], ptr[t, K]):
            bv[s] = 0.0
        for k in range(K - 2, -1, -1):
            for s in range(ptr[t, k], ptr[t, k + 1]):
                for r in range(ptr[t, k + 1], ptr[t, k + 2]):
                    x = _step_cost(kind[s], pair[s], kind[r], pair[r], k + 1, f0, f1, switch) + fc[r] + bv[r]
                    if x < bv[s]:
                        bv[s] = x
                        bn[s] = r
    return fv, fb, bv, bn


@nb.njit(cache=True)
def _window_dp(
    ptr, kind, pair, est, fc, fv, bv, lo, hi, f0, f1, switch, max_states, max_work
):  # pragma: no cover
    """The cheapest joint path of the members inside their windows, no estimate held twice in a frame.

    Member t takes part in frames lo[t]..hi[t] (its states there:
    ``ptr[t, k]:ptr[t, k + 1]``); it enters with the forward value of its
    state at lo[t] and leaves with the backward value at hi[t] (the cheapest
    ways on its own before and after). Returns (cost, choice (g, K): state
    index inside the windows, -1 elsewhere); cost is +inf when no joint path
    exists and NaN when a frame would need more than ``max_states`` joint
    states or the transitions more than ``max_work`` steps.
    """
    g, K = ptr.shape[0], ptr.shape[1] - 1
    choice = np.full((g, K), -1, dtype=np.int64)
    k0, k1 = K, -1
    for t in range(g):
        if lo[t] <= hi[t]:
            k0, k1 = min(k0, lo[t]), max(k1, hi[t])
    if k0 > k1:
        return 0.0, choice
    cap = 1024
    combos = np.full((cap, g), -1, dtype=np.int64)
    value = np.zeros(cap)
    back = np.full(cap, -1, dtype=np.int64)
    start = np.zeros(k1 - k0 + 3, dtype=np.int64)
    start[1] = 1  # one empty joint state before k0, value 0
    digits = np.empty(g, dtype=np.int64)
    n, work = 1, 0
    for k in range(k0, k1 + 1):
        p_lo, p_hi = start[k - k0], start[k - k0 + 1]
        for p in range(p_lo, p_hi):  # members leaving after k - 1: their backward values
            for t in range(g):
                if hi[t] == k - 1:
                    value[p] += bv[combos[p, t]]
        total = 1
        for t in range(g):
            if lo[t] <= k <= hi[t]:
                total *= ptr[t, k + 1] - ptr[t, k]
                if total > max_states:
                    return np.nan, choice
        work += total * (p_hi - p_lo) * g
        if work > max_work:
            return np.nan, choice
        for idx in range(total):
            rest = idx
            ok = True
            enter = 0.0
            for t in range(g):
                digits[t] = -1
                if lo[t] <= k <= hi[t]:
                    size = ptr[t, k + 1] - ptr[t, k]
                    digits[t] = ptr[t, k] + rest % size
                    rest //= size
                    e = est[digits[t]]
                    for u in range(t):
                        if digits[u] >= 0 and e >= 0 and est[digits[u]] == e:
                            ok = False
                    enter += fv[digits[t]] if lo[t] == k else fc[digits[t]]
            if not ok:
                continue
            best, arg = np.inf, -1
            for p in range(p_lo, p_hi):
                x = value[p] + enter
                for t in range(g):
                    if lo[t] < k <= hi[t]:
                        r, s = combos[p, t], digits[t]
                        x += _step_cost(kind[r], pair[r], kind[s], pair[s], k, f0, f1, switch)
                if x < best:
                    best, arg = x, p
            if best == np.inf:
                continue
            if n == cap:
                cap *= 2
                grown = np.full((cap, g), -1, dtype=np.int64)
                grown[:n] = combos[:n]
                combos = grown
                v2 = np.zeros(cap)
                v2[:n] = value[:n]
                value = v2
                b2 = np.full(cap, -1, dtype=np.int64)
                b2[:n] = back[:n]
                back = b2
            combos[n] = digits
            value[n] = best
            back[n] = arg
            n += 1
        start[k - k0 + 2] = n
        if n == start[k - k0 + 1]:
            return np.inf, choice
    best, arg = np.inf, -1
    for p in range(start[k1 - k0 + 1], n):
        x = value[p]
        for t in range(g):
            if hi[t] == k1:
                x += bv[combos[p, t]]
        if x < best:
            best, arg = x, p
    for k in range(k1, k0 - 1, -1):
        choice[:, k] = combos[arg]
        arg = back[arg]
    return best, choice


@nb.njit(cache=True)
def _joint_paths(choice, lo, hi, ptr, est, fv, fb, bn):  # pragma: no cover
    """(g, K) estimates held: the joint choice inside each window, the pointers of
    :func:`_list_viterbi` before and after it (or from the cheapest end, for a member without one)."""
    g, K = choice.shape
    out = np.full((g, K), -1, dtype=np.int64)
    for t in range(g):
        if lo[t] <= hi[t]:
            for k in range(lo[t], hi[t] + 1):
                out[t, k] = est[choice[t, k]]
            s, k0 = choice[t, lo[t]], lo[t]
            s_end = choice[t, hi[t]]
            for k in range(hi[t] + 1, K):
                s_end = bn[s_end]
                out[t, k] = est[s_end]
        else:
            s, k0 = -1, K - 1
            best = np.inf
            for r in range(ptr[t, K - 1], ptr[t, K]):
                if fv[r] < best:
                    best, s = fv[r], r
            out[t, K - 1] = est[s]
        for k in range(k0 - 1, -1, -1):
            s = fb[s]
            out[t, k] = est[s]
    return out


#: Limits of the joint Viterbi (joint states in one frame; transition steps over all frames),
#: beyond which more price steps are taken.
MAX_JOINT_STATES = 4096
MAX_JOINT_WORK = 20_000_000
#: Transition steps the joint Viterbi may take at the first price step (doubling at each step after):
#: a price step costs about as much as this many.
FIRST_JOINT_WORK = 200_000
#: Price steps before a group goes to the mixed-integer programme.
MAX_PRICE_STEPS = 60


def _joint_size(ptr: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> tuple[float, float]:
    """Largest number of joint states in a frame, and the transition steps, of :func:`_window_dp`."""
    K = ptr.shape[1] - 1
    frames = np.arange(K)
    inside = (frames >= lo[:, None]) & (frames <= hi[:, None])
    sizes = np.where(inside, np.diff(ptr, axis=1), 1).astype(float)
    joint = np.exp(np.log(sizes).sum(axis=0))
    return float(joint.max(initial=1.0)), float((joint[1:] * joint[:-1]).sum() * ptr.shape[0])


def _solve_group(close: Close, members: np.ndarray, switch: float):
    """The joint optimum (K, g) of ``members``, and the price steps taken; (None, steps) when too large.

    The module docstring, step 4: the upper bound starts from :func:`_greedy`
    and improves whenever the priced paths do not collide; each step prices
    the cells where they collide by a subgradient step of Polyak's length
    theta (UB - LB) / |g|^2 (theta halved after three steps without a better
    bound), until the kept states make a joint Viterbi small enough (a
    budget of :data:`FIRST_JOINT_WORK` transition steps, doubling with every
    price step, up to :data:`MAX_JOINT_WORK`).
    """
    grp = _group(close, members)
    K = grp.frames
    best = None
    cells, lam = np.empty(0, dtype=np.int64), np.empty(0)
    best_lb, theta, stall = -np.inf, 1.0, 0
    for step in range(MAX_PRICE_STEPS + 1):
        cost, pre, post = _prices(grp, cells, lam)
        fwd, rev, opt, paths = _own(grp, cost, pre, post, switch)
        lb = float(opt.sum() - lam.sum())
        hit = _collisions(paths, K)
        if best is None:
            best = _greedy(grp, paths, switch)
            ub = _true_cost(grp, best, switch)
        if hit.size == 0:
            value = _true_cost(grp, paths, switch)
            if value < ub:
                ub, best = value, paths
        if lb > best_lb:
            best_lb, stall = lb, 0
        else:
            stall += 1
            if stall >= 3:
                theta, stall = theta / 2.0, 0
        ptr, kind, pair, est, fc = _survivors(grp, fwd, rev, opt, cost, pre, post, switch, max(ub - lb, 0.0))
        lo, hi = _windows(ptr, est, int(grp.est.max(initial=0)) + 1)
        joint, work = _joint_size(ptr, lo, hi)
        if joint <= MAX_JOINT_STATES and work <= min(MAX_JOINT_WORK, FIRST_JOINT_WORK * 2.0**step):
            fv, fb, bv, bn = _list_viterbi(ptr, kind, pair, fc, grp.f0, grp.f1, switch)
            value, choice = _window_dp(
                ptr,
                kind,
                pair,
                est,
                fc,
                fv,
                bv,
                lo,
                hi,
                grp.f0,
                grp.f1,
                switch,
                MAX_JOINT_STATES,
                MAX_JOINT_WORK,
            )
            if np.isfinite(value):
                return _joint_paths(choice, lo, hi, ptr, est, fv, fb, bn).T, step
        new = np.setdiff1d(hit, cells)
        if new.size:
            cells = np.concatenate([cells, new])
            lam = np.concatenate([lam, np.zeros(new.size)])
            order = np.argsort(cells)
            cells, lam = cells[order], lam[order]
        grad = _cell_usage(paths, cells, K) - 1.0
        grad[(lam <= 0.0) & (grad < 0.0)] = 0.0
        norm = float(grad @ grad)
        if norm == 0.0:
            break
        lam = np.maximum(lam + theta * max(ub - lb, 0.0) / norm * grad, 0.0)
    return None, MAX_PRICE_STEPS


def _group_milp(close: Close, members: np.ndarray, K: int, switch: float) -> np.ndarray:
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
