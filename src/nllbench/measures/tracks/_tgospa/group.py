"""One group of colliding true trajectories solved jointly (step 4 of
:mod:`nllbench.measures.tracks._tgospa.solver`).

Lagrangian prices on the contested (estimate, frame) cells, each member's
cheapest path on its own at those prices (forward and time-reversed
recursions, :func:`_own`), a feasible joint path (:func:`_greedy`), the
member states a joint path within the bounds can take (:func:`_survivors`),
and the joint Viterbi over them (:mod:`nllbench.measures.tracks._tgospa.joint`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numba as nb
import numpy as np

from nllbench.measures.tracks._tgospa.close import Close
from nllbench.measures.tracks._tgospa.joint import (
    N,
    U,
    edge_values,
    joint_paths,
    list_viterbi,
    open_frames,
    state_lists,
    window_dp,
)


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
    ``cost`` included), ``none[t, k]`` ending on none; back-pointers: U
    (pre-held), N (from none) or the label at k - 1.
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
                none[t, k], back_none[t, k] = v_n, N
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
                    best, arg = pre[q], U
                else:
                    best, arg = lab[at - 1], q
                if v_n + half < best:
                    best, arg = v_n + half, N
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
        if prev == U:
            row[:k] = est[state]
            return
        state = -1 if prev == N else prev
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


@nb.njit(cache=True)
def _pair_lookup(member_ptr, est, n_est, t, table):  # pragma: no cover
    """Fill ``table`` (n_est,) with member t's local pair of each estimate (-1 for none); returns it."""
    table[:] = -1
    for q in range(member_ptr[t], member_ptr[t + 1]):
        table[est[q]] = q
    return table


@nb.njit(cache=True)
def _path_cost(paths, member_ptr, f0, f1, est, span_ptr, cost, switch, n_est):  # pragma: no cover
    """The members' cost of the paths (g, K): gains where a held label is on its span, plus switches."""
    g, K = paths.shape
    table = np.empty(n_est, dtype=np.int64)
    gains, full, half = 0.0, 0, 0
    for t in range(g):
        _pair_lookup(member_ptr, est, n_est, t, table)
        for k in range(K):
            x = paths[t, k]
            if x >= 0:
                q = table[x]
                if f0[q] <= k <= f1[q]:
                    gains += cost[span_ptr[q] + k - f0[q]]
            if k and x != paths[t, k - 1]:
                if x >= 0 and paths[t, k - 1] >= 0:
                    full += 1
                else:
                    half += 1
    return gains + switch * full + switch / 2.0 * half


def _true_cost(grp: _Group, paths: np.ndarray, switch: float) -> float:
    """The members' cost (frame gains plus switches) of the paths (g, K)."""
    n_est = int(grp.est.max(initial=0)) + 1
    return _path_cost(paths, grp.member_ptr, grp.f0, grp.f1, grp.est, grp.span_ptr, grp.cost, switch, n_est)


@nb.njit(cache=True)
def _collision_cells(paths, n_est):  # pragma: no cover
    """The cells est * K + frame held by two or more of the paths (g, K) (each once), and the members
    that hold one."""
    g, K = paths.shape
    seen_frame = np.full(n_est, -1, dtype=np.int64)
    seen_member = np.full(n_est, -1, dtype=np.int64)
    counted = np.full(n_est, -1, dtype=np.int64)
    cells = []
    involved = np.zeros(g, dtype=np.bool_)
    for k in range(K):
        for t in range(g):
            x = paths[t, k]
            if x < 0:
                continue
            if seen_frame[x] == k:
                involved[t] = True
                involved[seen_member[x]] = True
                if counted[x] != k:
                    counted[x] = k
                    cells.append(x * K + k)
            else:
                seen_frame[x], seen_member[x] = k, t
    out = np.empty(len(cells), dtype=np.int64)
    for i in range(len(cells)):
        out[i] = cells[i]
    return out, involved


def _collisions(paths: np.ndarray, K: int) -> np.ndarray:
    """The cells est * K + frame held by two or more of the paths (g, K), sorted."""
    n_est = int(paths.max(initial=0)) + 1
    return np.sort(_collision_cells(paths, n_est)[0])


@nb.njit(cache=True)
def _usage(paths, cells):  # pragma: no cover
    """How many of the paths (g, K) hold each cell est * K + frame."""
    g, K = paths.shape
    use = np.zeros(cells.size)
    for i in range(cells.size):
        x, k = cells[i] // K, cells[i] % K
        for t in range(g):
            if paths[t, k] == x:
                use[i] += 1.0
    return use


def _cell_usage(paths: np.ndarray, cells: np.ndarray, K: int) -> np.ndarray:
    """How many of the paths (g, K) hold each cell est * K + frame."""
    return _usage(paths, cells)


@nb.njit(cache=True)
def _drop_contested_holds(paths, member_ptr, f0, f1, est, n_est):  # pragma: no cover
    """Remove (in place) every pre- or post-hold of the paths (g, K) that holds a cell another path holds."""
    g, K = paths.shape
    seen_frame = np.full(n_est, -1, dtype=np.int64)
    seen_member = np.full(n_est, -1, dtype=np.int64)
    contested = np.zeros((g, K), dtype=np.bool_)
    for k in range(K):
        for t in range(g):
            x = paths[t, k]
            if x < 0:
                continue
            if seen_frame[x] == k:
                contested[t, k] = True
                contested[seen_member[x], k] = True
            else:
                seen_frame[x], seen_member[x] = k, t
    table = np.empty(n_est, dtype=np.int64)
    for t in range(g):
        _pair_lookup(member_ptr, est, n_est, t, table)
        for k in range(K):
            if not contested[t, k] or paths[t, k] < 0:
                continue
            q = table[paths[t, k]]
            if k < f0[q]:
                paths[t, : f0[q]] = -1
            elif k > f1[q]:
                paths[t, f1[q] + 1 :] = -1


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
    """A feasible joint path (g, K) from the members' own paths ``own``.

    First every pre- or post-hold on a contested cell is dropped (it saved a
    half switch; the others lose nothing by it); then, member after member,
    one that still meets a member before it takes its cheapest path on its
    own away from the cells those hold.
    """
    paths = own.copy()
    n_est = int(grp.est.max(initial=0)) + 1
    _drop_contested_holds(paths, grp.member_ptr, grp.f0, grp.f1, grp.est, n_est)
    _, involved = _collision_cells(paths, n_est)
    done = np.flatnonzero(~involved)  # those meet nobody
    for t in np.flatnonzero(involved):
        if np.any((paths[done] == paths[t]) & (paths[t] >= 0)):
            one = _member(grp, t, grp.cost)
            span, pre, post = _blocked(paths[done], one.f0, one.f1, one.est, one.span_ptr, n_est)
            cost = np.where(span, np.inf, one.cost)
            inf = np.where(pre, np.inf, 0.0), np.where(post, np.inf, 0.0)
            paths[t] = _own(one, cost, *inf, switch, False)[3][0]
        done = np.append(done, t)
    return paths


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
    return state_lists(
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


#: Limits of the joint Viterbi (joint states in one frame; steps over all frames; joint values kept
#: for the way back), beyond which more price steps are taken.
MAX_JOINT_STATES = 1 << 16
MAX_JOINT_WORK = 50_000_000
MAX_JOINT_KEPT = 4_000_000
#: Steps the joint Viterbi may take at the first price step (doubling at each step after).
FIRST_JOINT_WORK = 1_000_000
#: Price steps before a group goes to the mixed-integer programme.
MAX_PRICE_STEPS = 60


def _joint_size(ptr: np.ndarray, open_: np.ndarray) -> tuple[float, float, float]:
    """Of :func:`window_dp`: the largest tensor (joint states in a frame), its steps (about the
    tensor times the states of the members moving on), and the entries it keeps for the way back."""
    sizes = np.where(open_, np.diff(ptr, axis=1), 1).astype(float)
    joint = np.exp(np.log(sizes).sum(axis=0))
    along = np.where(open_, sizes, 0.0).sum(axis=0)
    both = np.maximum(joint, np.r_[1.0, joint[:-1]])
    return (
        float(joint.max(initial=1.0)),
        float((both * (along + 1.0)).sum()),
        float(joint[open_.any(axis=0)].sum()),
    )


def _joint(grp: _Group, fwd, rev, opt, cost, pre, post, switch: float, slack: float, budget: float):
    """The joint optimum (K, g) over the states of priced excess <= slack; None when a joint Viterbi
    (one per component of members that can meet) would exceed :data:`MAX_JOINT_STATES` joint states or
    ``budget`` transition steps in all."""
    ptr, kind, pair, est, fc = _survivors(grp, fwd, rev, opt, cost, pre, post, switch, slack)
    open_, component = open_frames(ptr, est, int(grp.est.max(initial=0)) + 1)
    parts = [np.flatnonzero(component == c) for c in np.unique(component)]
    sizes = np.array([_joint_size(ptr[m], open_[m]) for m in parts]).reshape(-1, 3)
    if (
        sizes[:, 0].max() > MAX_JOINT_STATES
        or sizes[:, 1].sum() > min(MAX_JOINT_WORK, budget)
        or sizes[:, 2].sum() > MAX_JOINT_KEPT
    ):
        return None
    fv, fb, bv, bn = list_viterbi(ptr, kind, pair, fc, grp.f0, grp.f1, switch)
    enter, leave = edge_values(ptr, open_, fv, bv)
    choice = np.full(open_.shape, -1, dtype=np.int64)
    for m in parts:
        if not open_[m].any():
            continue
        value, choice[m] = window_dp(
            ptr[m],
            kind,
            pair,
            est,
            fc,
            enter,
            leave,
            open_[m],
            grp.f0,
            grp.f1,
            switch,
            MAX_JOINT_STATES,
            MAX_JOINT_WORK,
        )
        if not np.isfinite(value):
            return None
    return joint_paths(choice, open_, ptr, est, fv, fb, bn).T


def solve_group(close: Close, members: np.ndarray, switch: float):
    """The joint optimum (K, g) of ``members``, and the price steps taken; (None, steps) when too large.

    The module docstring, step 4: the upper bound is the best of the priced
    paths repaired by :func:`_greedy` (unchanged where they do not collide); each step prices
    the cells where they collide by a subgradient step of Polyak's length
    theta (UB - LB) / |g|^2 (theta halved after three steps without a better
    bound), until the kept states make a joint Viterbi small enough (a
    budget of :data:`FIRST_JOINT_WORK` transition steps, doubling with every
    price step, up to :data:`MAX_JOINT_WORK`), tried again only once UB - LB
    has halved since the last try.
    """
    grp = _group(close, members)
    K = grp.frames
    ub = np.inf
    prices = _Prices.none()
    best_lb, theta, stall, tried = -np.inf, 1.0, 0, np.inf
    for step in range(MAX_PRICE_STEPS + 1):
        cost, pre, post = _prices(grp, prices.cells, prices.lam)
        fwd, rev, opt, paths = _own(grp, cost, pre, post, switch)
        lb = float(opt.sum() - prices.lam.sum())
        hit = _collisions(paths, K)
        repaired = _greedy(grp, paths, switch) if hit.size else paths
        value = _true_cost(grp, repaired, switch)
        if value < ub:
            ub = value
        if lb > best_lb:
            best_lb, stall = lb, 0
        else:
            stall += 1
            if stall >= 3:
                theta, stall = theta / 2.0, 0
        slack = max(ub - lb, 0.0)
        if slack <= tried / 2.0:  # a joint Viterbi is worth trying again only once the slack has halved
            joint = _joint(grp, fwd, rev, opt, cost, pre, post, switch, slack, FIRST_JOINT_WORK * 2.0**step)
            if joint is not None:
                return joint, step
            tried = slack
        prices = prices.with_cells(_not_in(hit, prices.cells), K)
        if not prices.step(_cell_usage(paths, prices.cells, K), theta * max(ub - lb, 0.0)):
            break
    return None, MAX_PRICE_STEPS


def _not_in(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The elements of the sorted a that are not in the sorted b."""
    if b.size == 0:
        return a
    pos = np.minimum(np.searchsorted(b, a), b.size - 1)
    return a[b[pos] != a]


@dataclass(frozen=True)
class _Prices:
    """Lagrangian prices lam >= 0 on contested cells.

    Cells are grouped in blocks: runs of consecutive frames of one estimate
    that became contested at the same step (a post-hold against a later use,
    say). The subgradient step is scaled by 1 / (block size) per cell, so
    that it moves every contest's total price alike, whatever its length;
    the prices stay per cell.

    Attributes
    ----------
    cells : (C,) int64
        est * K + frame, sorted.
    lam : (C,) float
        The price of each cell.
    size : (C,) float
        The size of each cell's block.
    """

    cells: np.ndarray
    lam: np.ndarray
    size: np.ndarray

    @classmethod
    def none(cls) -> _Prices:
        return cls(np.empty(0, dtype=np.int64), np.empty(0), np.empty(0))

    def with_cells(self, new: np.ndarray, K: int) -> _Prices:
        """The prices with the sorted new cells added, at price 0, in blocks of consecutive frames."""
        if new.size == 0:
            return self
        run = np.r_[True, (np.diff(new) != 1) | (new[1:] // K != new[:-1] // K)]
        block = np.cumsum(run) - 1
        size = np.bincount(block)[block].astype(float)
        cells = np.concatenate([self.cells, new])
        order = np.argsort(cells, kind="stable")
        return _Prices(
            cells[order],
            np.concatenate([self.lam, np.zeros(new.size)])[order],
            np.concatenate([self.size, size])[order],
        )

    def step(self, usage: np.ndarray, length: float) -> bool:
        """One projected, block-scaled subgradient step of Polyak's length (in place of lam);
        False when the subgradient is 0 (no contested cell, no priced cell left unused)."""
        grad = usage - 1.0
        grad[(self.lam <= 0.0) & (grad < 0.0)] = 0.0
        norm = float((grad * grad / self.size).sum())  # not BLAS: a threaded dot waits for idle cores
        if norm == 0.0:
            return False
        self.lam[:] = np.maximum(self.lam + length / norm * grad / self.size, 0.0)
        return True
