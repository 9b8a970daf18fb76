"""The joint Viterbi over the kept member states of a group (:mod:`nllbench.measures._tgospa_group`).

A member's state at a frame is one of: none, a label on its span, a label
pre-held (before its span, entered free at its first frame) or post-held
(after its span, to the end). :func:`_state_lists` lays the kept states out
per (member, frame), :func:`_windows` finds where members can meet,
:func:`_list_viterbi` gives each member's best ways before and after,
:func:`_window_dp` the joint minimum inside the windows and
:func:`_joint_paths` the paths.
"""

from __future__ import annotations

import numba as nb
import numpy as np

_U, _N, _F = -1, -2, -3  # back-pointer codes of the untouched, none and finished states


_KIND_N, _KIND_LABEL, _KIND_PRE, _KIND_POST = 0, 1, 2, 3


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
