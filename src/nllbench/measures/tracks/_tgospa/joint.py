"""The joint Viterbi over the kept member states of a group (:mod:`nllbench.measures.tracks._tgospa.group`).

A member's state at a frame is one of: none, a label on its span, a label
pre-held (before its span, entered free at its first frame) or post-held
(after its span, to the end). :func:`state_lists` lays the kept states out
per (member, frame); :func:`open_frames` finds the stretches where a member
can meet another, split where it has a single state in between;
:func:`list_viterbi` gives each member's best ways before and after a
frame, over its kept states; :func:`edge_values` what a member brings into
and out of a stretch; :func:`window_dp` the joint minimum over the
stretches, its joint state holding only the members open at the frame; and
:func:`joint_paths` the paths.
"""

from __future__ import annotations

import numba as nb
import numpy as np

U, N, F = -1, -2, -3  # back-pointer codes of the untouched, none and finished states


_KIND_N, _KIND_LABEL, _KIND_PRE, _KIND_POST = 0, 1, 2, 3


@nb.njit(cache=True)
def state_lists(
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
def open_frames(ptr, est, n_est):  # pragma: no cover
    """(g, K) the frames where a member takes part in the joint recursion, and (g,) its component.

    A member *meets* another at frame k when one of its states there holds
    an estimate a state of the other may hold there. It takes part from its
    first to its last meeting, except between two meetings with a *cut* in
    between: a frame where it has a single state (every path it can take
    passes there, so its cost splits there). Members that never meet, even
    through others, are in different components (the smallest member of
    each names it): their joint problems are independent.
    """
    g, K = ptr.shape[0], ptr.shape[1] - 1
    seen_frame = np.full(n_est, -1, dtype=np.int64)
    seen_member = np.full(n_est, -1, dtype=np.int64)
    meets = np.zeros((g, K), dtype=np.bool_)
    parent = np.arange(g)
    for k in range(K):
        for t in range(g):
            for s in range(ptr[t, k], ptr[t, k + 1]):
                e = est[s]
                if e < 0:
                    continue
                if seen_frame[e] == k:
                    u = seen_member[e]
                    if u != t:
                        meets[t, k] = True
                        meets[u, k] = True
                        a, b = _find(parent, t), _find(parent, u)
                        parent[max(a, b)] = min(a, b)
                else:
                    seen_frame[e], seen_member[e] = k, t
    for t in range(g):
        parent[t] = _find(parent, t)
    open_ = np.zeros((g, K), dtype=np.bool_)
    for t in range(g):
        last, cut_since = -1, False  # the previous meeting; a cut after it
        for k in range(K):
            if meets[t, k]:
                if last >= 0 and not cut_since:
                    open_[t, last : k + 1] = True
                open_[t, k] = True
                last, cut_since = k, False
            elif ptr[t, k + 1] - ptr[t, k] == 1:
                cut_since = True
    return open_, parent


@nb.njit(cache=True)
def _find(parent, x):  # pragma: no cover
    while parent[x] != x:
        parent[x] = parent[parent[x]]
        x = parent[x]
    return x


@nb.njit(cache=True)
def _next_cut(ptr, t, k):  # pragma: no cover
    """The first frame after k where member t has a single state (K if none)."""
    K = ptr.shape[1] - 1
    k += 1
    while k < K and ptr[t, k + 1] - ptr[t, k] != 1:
        k += 1
    return k


@nb.njit(cache=True)
def edge_values(ptr, open_, fv, bv):  # pragma: no cover
    """What a member's state brings when it enters (first frame of an open stretch) or leaves (last).

    Between two stretches lies a cut c (:func:`open_frames`). Entering the
    first stretch: the forward value (the member's cheapest way there); a
    later one: the forward value less that of the state at the cut before it.
    Leaving the last stretch: the backward value; an earlier one: the
    backward value less that of the state at the cut after it. The pieces add
    up to the member's cost over all frames.
    """
    g, K = ptr.shape[0], ptr.shape[1] - 1
    enter = np.zeros(fv.size)
    leave = np.zeros(fv.size)
    for t in range(g):
        cut = -1  # the cut after the previous stretch
        for k in range(K):
            if not open_[t, k]:
                continue
            if k == 0 or not open_[t, k - 1]:
                base = 0.0 if cut < 0 else fv[ptr[t, cut]]
                for s in range(ptr[t, k], ptr[t, k + 1]):
                    enter[s] = fv[s] - base
            if k == K - 1 or not open_[t, k + 1]:
                later = False
                for j in range(k + 1, K):
                    if open_[t, j]:
                        later = True
                        break
                cut = _next_cut(ptr, t, k) if later else K
                base = bv[ptr[t, cut]] if later else 0.0
                for s in range(ptr[t, k], ptr[t, k + 1]):
                    leave[s] = bv[s] - base
    return enter, leave


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
def list_viterbi(ptr, kind, pair, fc, f0, f1, switch):  # pragma: no cover
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
def _axis_op(T, dims, a, w, mode):  # pragma: no cover
    """One axis of the row-major tensor T (shape ``dims``) at position a, by a cost matrix w.

    mode 0 (a member leaves): out[o, i'] = min_i T[o, i, i'] + w[i, 0];
    mode 1 (a member moves on): out[o, j, i'] = min_i T[o, i, i'] + w[i, j];
    mode 2 (a member enters): out[o, j, i'] = T[o, i'] + w[0, j].
    Returns (out, its dims).
    """
    outer = 1
    for x in dims[:a]:
        outer *= x
    inner = 1
    for x in dims[a + 1 :] if mode != 2 else dims[a:]:
        inner *= x
    n_in = dims[a] if mode != 2 else 1
    n_out = 1 if mode == 0 else w.shape[1]
    out = np.full(outer * n_out * inner, np.inf)
    for o in range(outer):
        for j in range(n_out):
            base_out = (o * n_out + j) * inner
            for i in range(n_in):
                c = w[i, j]
                if c == np.inf:
                    continue
                base_in = (o * n_in + i) * inner
                for r in range(inner):
                    x = T[base_in + r] + c
                    if x < out[base_out + r]:
                        out[base_out + r] = x
    if mode == 0:
        new_dims = np.concatenate((dims[:a], dims[a + 1 :]))
    elif mode == 1:
        new_dims = dims.copy()
        new_dims[a] = n_out
    else:
        new_dims = np.concatenate((dims[:a], np.array([n_out]), dims[a:]))
    return out, new_dims


@nb.njit(cache=True)
def _step_matrix(ptr, kind, pair, fc, f0, f1, switch, t, k, mode, enter, leave):  # pragma: no cover
    """The cost matrix of member t between frames k - 1 and k for :func:`_axis_op`."""
    if mode == 0:
        n = ptr[t, k] - ptr[t, k - 1]
        w = np.empty((n, 1))
        for i in range(n):
            w[i, 0] = leave[ptr[t, k - 1] + i]
        return w
    m = ptr[t, k + 1] - ptr[t, k]
    if mode == 2:
        w = np.empty((1, m))
        for j in range(m):
            w[0, j] = enter[ptr[t, k] + j]
        return w
    n = ptr[t, k] - ptr[t, k - 1]
    w = np.empty((n, m))
    for i in range(n):
        r = ptr[t, k - 1] + i
        for j in range(m):
            s = ptr[t, k] + j
            w[i, j] = _step_cost(kind[r], pair[r], kind[s], pair[s], k, f0, f1, switch) + fc[s]
    return w


@nb.njit(cache=True)
def window_dp(
    ptr, kind, pair, est, fc, enter, leave, open_, f0, f1, switch, max_states, max_work
):  # pragma: no cover
    """The cheapest joint path of the members over their open frames, no estimate held twice in a frame.

    Member t takes part where ``open_[t, k]`` (its states there:
    ``ptr[t, k]:ptr[t, k + 1]``), entering and leaving each stretch with
    :func:`edge_values`. The values over the joint states of a frame are a
    tensor, one axis per member open there; from one frame to the next each
    member's axis is reduced (it leaves), moved on by its own step costs (a
    min-plus product, member by member: the joint step cost is the sum of
    the members') or added (it enters), then joint states holding an
    estimate twice are set to +inf. Returns (cost, choice (g, K): state index
    where open, -1 elsewhere); cost is +inf when no joint path exists and NaN
    when a tensor would exceed ``max_states`` entries or the steps
    ``max_work``.
    """
    g, K = ptr.shape[0], ptr.shape[1] - 1
    choice = np.full((g, K), -1, dtype=np.int64)
    k0, k1 = K, -1
    for t in range(g):
        for k in range(K):
            if open_[t, k]:
                k0, k1 = min(k0, k), max(k1, k)
    if k0 > k1:
        return 0.0, choice
    stored = []  # each frame's tensor
    T = np.zeros(1)
    dims = np.empty(0, dtype=np.int64)
    work = 0
    digits = np.empty(g, dtype=np.int64)
    for k in range(k0, k1 + 1):
        a = 0
        for t in range(g):
            was = k > k0 and open_[t, k - 1]
            now = open_[t, k]
            if not was and not now:
                continue
            mode = 1 if was and now else (0 if was else 2)
            w = _step_matrix(ptr, kind, pair, fc, f0, f1, switch, t, k, mode, enter, leave)
            work += T.size * w.shape[1]
            if work > max_work:
                return np.nan, choice
            T, dims = _axis_op(T, dims, a, w, mode)
            if T.size > max_states:
                return np.nan, choice
            if mode != 0:
                a += 1
        members = np.empty(dims.size, dtype=np.int64)
        n_open = 0
        for t in range(g):
            if open_[t, k]:
                members[n_open] = t
                n_open += 1
        any_finite = False
        for idx in range(T.size):  # an estimate held twice: not a joint state
            if T[idx] == np.inf:
                continue
            rest = idx
            for i in range(n_open - 1, -1, -1):
                digits[i] = ptr[members[i], k] + rest % dims[i]
                rest //= dims[i]
            for i in range(n_open):
                e = est[digits[i]]
                if e < 0:
                    continue
                for j in range(i):
                    if est[digits[j]] == e:
                        T[idx] = np.inf
            any_finite |= T[idx] < np.inf
        if not any_finite:
            return np.inf, choice
        stored.append(T)
    # the end: every member left open leaves
    best, arg = np.inf, -1
    members = np.empty(dims.size, dtype=np.int64)
    n_open = 0
    for t in range(g):
        if open_[t, k1]:
            members[n_open] = t
            n_open += 1
    for idx in range(T.size):
        if T[idx] == np.inf:
            continue
        x = T[idx]
        rest = idx
        for i in range(n_open - 1, -1, -1):
            x += leave[ptr[members[i], k1] + rest % dims[i]]
            rest //= dims[i]
        if x < best:
            best, arg = x, idx
    if arg < 0:
        return np.inf, choice
    _backtrack(stored, arg, k0, k1, ptr, kind, pair, fc, f0, f1, switch, leave, open_, choice)
    return best, choice


@nb.njit(cache=True)
def _joint_index(ptr, open_, k, members_out, dims_out):  # pragma: no cover
    """The members open at frame k and their state counts (the tensor's axes); returns their number."""
    n = 0
    for t in range(ptr.shape[0]):
        if open_[t, k]:
            members_out[n] = t
            dims_out[n] = ptr[t, k + 1] - ptr[t, k]
            n += 1
    return n


@nb.njit(cache=True)
def _backtrack(
    stored, arg, k0, k1, ptr, kind, pair, fc, f0, f1, switch, leave, open_, choice
):  # pragma: no cover
    """Write into ``choice`` the joint states of the cheapest path ending at joint index ``arg`` at k1."""
    g = ptr.shape[0]
    cur_m, cur_d = np.empty(g, dtype=np.int64), np.empty(g, dtype=np.int64)
    prev_m, prev_d = np.empty(g, dtype=np.int64), np.empty(g, dtype=np.int64)
    state = np.full(g, -1, dtype=np.int64)
    prev_state = np.full(g, -1, dtype=np.int64)
    for k in range(k1, k0 - 1, -1):
        n = _joint_index(ptr, open_, k, cur_m, cur_d)
        rest = arg
        state[:] = -1
        for i in range(n - 1, -1, -1):
            state[cur_m[i]] = ptr[cur_m[i], k] + rest % cur_d[i]
            rest //= cur_d[i]
        for t in range(g):
            if state[t] >= 0:
                choice[t, k] = state[t]
        if k == k0:
            break
        V = stored[k - 1 - k0]
        m = _joint_index(ptr, open_, k - 1, prev_m, prev_d)
        best, arg = np.inf, -1
        for idx in range(V.size):
            if V[idx] == np.inf:
                continue
            x = V[idx]
            rest = idx
            prev_state[:] = -1
            for i in range(m - 1, -1, -1):
                prev_state[prev_m[i]] = ptr[prev_m[i], k - 1] + rest % prev_d[i]
                rest //= prev_d[i]
            for t in range(g):
                r, s = prev_state[t], state[t]
                if r >= 0 and s >= 0:
                    x += _step_cost(kind[r], pair[r], kind[s], pair[s], k, f0, f1, switch)
                elif r >= 0:
                    x += leave[r]
            if x < best:
                best, arg = x, idx


@nb.njit(cache=True)
def joint_paths(choice, open_, ptr, est, fv, fb, bn):  # pragma: no cover
    """(g, K) estimates held: the joint choice where open; elsewhere the pointers of
    :func:`list_viterbi`: on from a stretch's end to the cut after it (or to the end), back from a
    stretch's start to that cut (or to the start); a member never open takes its cheapest way."""
    g, K = choice.shape
    out = np.full((g, K), -1, dtype=np.int64)
    for t in range(g):
        cut, opened = -1, False
        for k in range(K):
            if not open_[t, k]:
                continue
            out[t, k] = est[choice[t, k]]
            if k == 0 or not open_[t, k - 1]:  # back to the cut before (or the start)
                s = choice[t, k]
                for j in range(k - 1, cut, -1):
                    s = fb[s]
                    out[t, j] = est[s]
            if k == K - 1 or not open_[t, k + 1]:  # on to the cut after (or the end)
                later = False
                for j in range(k + 1, K):
                    if open_[t, j]:
                        later = True
                        break
                cut = _next_cut(ptr, t, k) if later else K - 1
                s = choice[t, k]
                for j in range(k + 1, cut + 1):
                    s = bn[s]
                    out[t, j] = est[s]
            opened = True
        if opened:
            continue
        s, best = -1, np.inf
        for r in range(ptr[t, K - 1], ptr[t, K]):
            if fv[r] < best:
                best, s = fv[r], r
        out[t, K - 1] = est[s]
        for j in range(K - 2, -1, -1):
            s = fb[s]
            out[t, j] = est[s]
    return out
