"""The exact trajectory-GOSPA minimum, in time and memory linear in the frames.

Used by :func:`nllbench.measures.tracks.tgospa.tgospa`.

Notation: K frames, truths i, estimates j; a *pair* (i, j) is one that is
close (both exist, d < c) in some frame; its gain there is d^p - c^p < 0
(pairing saves that much), 0 elsewhere; a switch costs ``switch`` =
gamma^p (half of it to or from none). The minimum of the module docstring
of :mod:`nllbench.measures.tracks.tgospa` is found in four steps.

1. **Spans** (:func:`nllbench.measures.tracks._tgospa.close.close_entries`). Label j is worth
   holding for truth i only on the span [f0, f1] of the frames where (i, j) is close, on all of
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
   among its members (:func:`nllbench.measures.tracks._tgospa.group.solve_group`); groups that
   then collide with others are merged and solved again, until no two collide. The groups'
   minima sum to a lower bound (only constraints between groups are
   dropped) attained by a feasible assignment: the minimum.
4. **A group** (:mod:`nllbench.measures.tracks._tgospa.group`). Lagrangian prices lam >= 0 on
   (estimate, frame) make each member's own problem dearer where the
   estimate is contested; the members' priced minima less sum(lam) are a
   lower bound LB (weak duality), improved by subgradient steps. Given a
   feasible joint path of cost UB (a greedy one, or priced paths that do not
   collide), a member state whose priced excess (forward + backward priced
   value through it, less the member's priced minimum) exceeds UB - LB lies
   on no joint path costing at most UB. On the states kept, a joint Viterbi
   recursion finds the minimum, carrying in its joint state only the members
   that can meet another at that frame, each over the stretch around such
   frames bounded by frames where it has a single kept state (every path it
   can take passes there, so its cost splits there;
   :mod:`nllbench.measures.tracks._tgospa.joint`). When
   the joint states would be too many after the price steps, the group is
   solved as a mixed-integer programme of size linear in the frames
   (:func:`_group_milp`, HiGHS with zero gap) instead; :class:`SolveStats`
   reports how often.

The value is the integer minimum up to rounding: every bound and pruning
test above keeps a margin of 1e-9 of the problem's scale, so rounding can
only keep more states, never drop one the minimum needs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba as nb
import numpy as np
from scipy import sparse
from scipy.optimize import LinearConstraint, milp
from scipy.sparse.csgraph import connected_components

from nllbench.measures.tracks._tgospa.close import Close
from nllbench.measures.tracks._tgospa.group import solve_group
from nllbench.measures.tracks._tgospa.joint import F, N, U


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
            joint, n_steps = solve_group(close, members, switch)
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
            new_n, ptr_n = v_n, N
            if 0.0 < new_n:
                new_n, ptr_n = 0.0, U
            if best1 + half < new_n:
                new_n, ptr_n = best1 + half, arg1
            new_f, ptr_f = v_f, F
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
                    best, arg = 0.0, U
                else:
                    best, arg = value[q], q
                if v_n + half < best:
                    best, arg = v_n + half, N
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
        state, best = U, 0.0
        if v_n < best:
            state, best = N, v_n
        if v_f < best:
            state, best = F, v_f
        for t in range(n_active):
            if value[active[t]] < best:
                state, best = active[t], value[active[t]]
        if state >= 0:
            for kk in range(hi + 1, K):  # post-hold
                A[kk, i] = est[state]
        k = hi
        while k >= lo and state != U:
            if state == N:
                state = back_n[k]
            elif state == F:
                if back_f[k] != F:
                    state = back_f[k]
                    for kk in range(k, K):  # post-hold of the label left at k - 1
                        A[kk, i] = est[state]
            else:
                A[k, i] = est[state]
                prev = back[span_ptr[state] + k - f0[state]]
                if prev == U:
                    for kk in range(k):  # pre-hold
                        A[kk, i] = est[state]
                state = prev
            k -= 1


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
    x = highs(cost, sparse.vstack(blocks, format="csr"), lower, upper, integrality)
    chosen = np.flatnonzero(np.round(x[:n_piece]) == 1)
    out = np.full((K, close.n), -1, dtype=np.int64)
    length = p_end[chosen] - p_start[chosen] + 1
    frames = np.repeat(p_start[chosen] - np.cumsum(length) + length, length) + np.arange(length.sum())
    out[frames, np.repeat(close.truth[p_pair[chosen]], length)] = np.repeat(close.est[p_pair[chosen]], length)
    return out[:, members]


def highs(cost, A, lower, upper, integrality) -> np.ndarray:
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
