"""The Murty kernel: the Q best assignments of one cost matrix, compiled.

The problem is stated in :mod:`nllbench.engine.assignment`.

Algorithm
---------
Rows that may stay unassigned are modelled as ``M - n`` implicit *dummy rows*
that cost 0 on every optional column and cannot take a mandatory one, giving
a square problem with a perfect matching. Dummy rows are identical, so their
dual variables are equal at every optimal state; they need not be stored:
the dual of a column held by a dummy equals the largest dual among optional
columns, and a "hop" from such a column to any optional column ``j'`` costs
``v[j_held] - v[j']`` in reduced cost. Murty's partitioning branches on the
real rows only, so assignments that differ only in which dummy holds which
free column are never enumerated twice.

Each subproblem is solved by one shortest augmenting path (Dijkstra on
reduced costs, Jonker-Volgenant / Crouse style) started from the parent's
optimal solution and dual variables, as in Miller, Stone and Cox,
"Optimizing Murty's ranked assignment method", IEEE TAES 33(3), 1997.
Subproblems are skipped when a lower bound (the parent's cost plus the
smallest reduced cost left in the freed row) or the partial Dijkstra
distance shows they cannot enter the top Q, and the queue never keeps more
candidates than places left.

Kept apart from the public API (:mod:`nllbench.engine.assignment`) and from
the pruned ranking built on it (:mod:`nllbench.engine._pruned`).
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

INF = np.inf
_FREE = -1  # column held by nobody (only during an augmentation)
DUMMY = -2  # column held by one of the implicit dummy rows


@nb.njit(cache=True)
def _dijkstra(C, row, col4row, row4col, u, v, forbid, blocked, optional, limit, dist, pred, done, order):
    """Shortest augmenting path from free ``row``; update duals and matching.

    ``blocked[j]`` excludes column j (held by a fixed row); ``forbid[i, j]``
    excludes a cell. One function, like :func:`murty_kernel` and for the same
    measured reason: it is the innermost loop. Returns ``(delta, status)`` with status 0 = augmented,
    1 = infeasible, 2 = stopped because every remaining path is longer than
    ``limit`` (then ``delta`` is a lower bound on the true path length).
    """
    M = C.shape[1]
    for j in range(M):
        dist[j] = INF
        pred[j] = -1
        done[j] = blocked[j]
    n_done = 0
    i = row
    d_i = 0.0
    dummy_from = -1
    sink = -1
    while True:
        if i >= 0:
            ui = u[i]
            for j in range(M):
                if not done[j] and not forbid[i, j]:
                    c = C[i, j]
                    if c < INF:
                        nd = d_i + c - ui - v[j]
                        if nd < dist[j]:
                            dist[j] = nd
                            pred[j] = i
        # closest unscanned column
        jmin = -1
        best = INF
        for j in range(M):
            if not done[j] and dist[j] < best:
                best = dist[j]
                jmin = j
        if jmin < 0:
            return INF, 1
        if best > limit:
            return best, 2
        done[jmin] = True
        order[n_done] = jmin
        n_done += 1
        holder = row4col[jmin]
        if holder == _FREE:
            sink = jmin
            break
        if holder == DUMMY:
            i = -1
            if dummy_from < 0:
                # The dummy holding jmin may move to any optional column. All
                # dummy-held columns share the largest optional dual, so each
                # is reached at this same distance: scan them as one group
                # (they relax nothing new), then relax the other optional ones.
                dummy_from = jmin
                vj = v[jmin]
                for j in range(M):
                    if not done[j] and row4col[j] == DUMMY:
                        dist[j] = best
                        pred[j] = -2
                        done[j] = True
                        order[n_done] = j
                        n_done += 1
                for j in range(M):
                    if not done[j] and optional[j]:
                        nd = best + vj - v[j]
                        if nd < dist[j]:
                            dist[j] = nd
                            pred[j] = -2
        else:
            i = holder
            d_i = best
    delta = dist[sink]
    # dual update (keeps reduced costs >= 0 and 0 on matched cells)
    u[row] += delta
    for t in range(n_done):
        j = order[t]
        shift = delta - dist[j]
        holder = row4col[j]
        if holder >= 0:
            u[holder] += shift
        v[j] -= shift
    # augment along the path
    j = sink
    while True:
        p = pred[j]
        if p >= 0:
            row4col[j] = p
            prev = col4row[p]
            col4row[p] = j
            if p == row:
                break
            j = prev
        else:
            row4col[j] = DUMMY
            j = dummy_from
    return delta, 0


@nb.njit(cache=True)
def with_slack(x):
    """x plus a relative 1e-12, so that ties with a threshold survive rounding."""
    if math.isinf(x):
        return x
    return x + 1e-12 * (1.0 + abs(x))


@nb.njit(cache=True)
def solution_cost(C, col4row):
    s = 0.0
    for i in range(col4row.shape[0]):
        s += C[i, col4row[i]]
    return s


@nb.njit(cache=True)
def solve_root(C, optional, n_dummy, col, row4col, u, v, forbid, blocked, dist, pred, done, order):
    """Optimal assignment of ``C`` with its duals. Fills ``col`` (n,), ``row4col`` (M,), ``u`` (n,)
    and ``v`` (M,); False when no assignment exists.

    Start (as in Jonker and Volgenant's column reduction): with v = 0, each
    row whose cheapest cell lies in a column nobody took yet takes it, at
    u = that cost, while enough optional columns stay for the dummies;
    dummies take the first untaken optional columns. Every reduced cost is
    then >= 0 and 0 on the matching; one shortest augmenting path per row
    left over completes it.
    """
    n, M = C.shape
    for j in range(M):
        row4col[j] = _FREE
        v[j] = 0.0
    avail = 0  # optional columns no row has taken
    for j in range(M):
        avail += optional[j]
    for i in range(n):
        col[i] = -1
        u[i] = 0.0
        jmin = -1
        for j in range(M):
            if C[i, j] < INF and (jmin < 0 or C[i, j] < C[i, jmin]):
                jmin = j
        if jmin >= 0 and row4col[jmin] == _FREE and (not optional[jmin] or avail > n_dummy):
            col[i] = jmin
            row4col[jmin] = i
            u[i] = C[i, jmin]
            avail -= optional[jmin]
    k = 0
    for j in range(M):
        if optional[j] and row4col[j] == _FREE and k < n_dummy:
            row4col[j] = DUMMY
            k += 1
    for i in range(n):
        if col[i] >= 0:
            continue
        _, status = _dijkstra(
            C, i, col, row4col, u, v, forbid, blocked, optional, INF, dist, pred, done, order
        )
        if status != 0:
            return False
    return True


@nb.njit(cache=True)
def murty_kernel(C, mandatory, Q, bound):
    """Q best assignments of ``C`` (n, M); see the module docstring.

    Returns ``(costs (k,), cols (k, n), rest)`` with k <= Q and ``rest`` a
    lower bound on the cost of every assignment not returned (``inf`` when
    none exists: the enumeration is complete).

    Kept as one function on purpose (about 220 lines, in commented blocks:
    root, pop, the freed rows' children, queue insertion): split into njit
    helpers that pass the per-node state arrays (root solve, child bound,
    child solve, queue insert), it measured 0.5-0.7x the speed on
    ``benchmarks/bench_nll.py`` (2026-11-23), because numba does not inline
    them and the calls copy array views in the innermost loop.
    """
    n, M = C.shape
    optional = np.empty(M, dtype=np.bool_)
    n_opt = 0
    for j in range(M):
        optional[j] = not mandatory[j]
        if optional[j]:
            n_opt += 1
    out_cost = np.empty(Q, dtype=np.float64)
    out_cols = np.empty((Q, n), dtype=np.int64)
    n_dummy = M - n
    if n_dummy < 0 or n_dummy > n_opt or Q <= 0:
        return out_cost[:0], out_cols[:0], INF if n_dummy < 0 or n_dummy > n_opt else 0.0

    S = Q + 2  # popped (<= Q) + queued (<= Q - popped) + one child being solved
    s_col = np.empty((S, n), dtype=np.int64)
    s_u = np.empty((S, n), dtype=np.float64)
    s_v = np.empty((S, M), dtype=np.float64)
    s_fixed = np.zeros((S, n), dtype=np.bool_)
    s_parent = np.full(S, -1, dtype=np.int64)
    s_fr = np.full(S, -1, dtype=np.int64)
    s_fc = np.full(S, -1, dtype=np.int64)
    s_cost = np.empty(S, dtype=np.float64)
    free_slots = np.empty(S, dtype=np.int64)
    n_free = 0
    for s in range(S - 1, -1, -1):
        free_slots[n_free] = s
        n_free += 1

    # scratch
    dist = np.empty(M)
    pred = np.empty(M, dtype=np.int64)
    done = np.empty(M, dtype=np.bool_)
    order = np.empty(M, dtype=np.int64)
    row4col = np.empty(M, dtype=np.int64)
    blocked = np.zeros(M, dtype=np.bool_)
    forbid = np.zeros((n, M), dtype=np.bool_)
    rowmask = np.zeros(n, dtype=np.bool_)

    # sorted queue of candidate slots (cheapest first)
    q_cost = np.empty(Q + 2)
    q_slot = np.empty(Q + 2, dtype=np.int64)
    q_head = 0
    q_count = 0
    rest = INF

    # ---- root
    n_free -= 1
    root = free_slots[n_free]
    col = s_col[root]
    if not solve_root(
        C, optional, n_dummy, col, row4col, s_u[root], s_v[root], forbid, blocked, dist, pred, done, order
    ):
        return out_cost[:0], out_cols[:0], INF
    cost = solution_cost(C, col)
    if cost > with_slack(bound):
        return out_cost[:0], out_cols[:0], cost
    s_cost[root] = cost
    q_cost[0] = cost
    q_slot[0] = root
    q_count = 1

    popped = 0
    while q_count > 0 and popped < Q:
        P = q_slot[q_head]
        pcost = q_cost[q_head]
        q_head += 1
        q_count -= 1
        out_cost[popped] = pcost
        for i in range(n):
            out_cols[popped, i] = s_col[P, i]
        popped += 1
        K = Q - popped
        if K == 0:
            # P's subspace is not expanded: its other assignments cost >= pcost
            if pcost < rest:
                rest = pcost
            break
        # compact the queue so that insertion has room
        if q_head > 0:
            for t in range(q_count):
                q_cost[t] = q_cost[q_head + t]
                q_slot[t] = q_slot[q_head + t]
            q_head = 0
        # forbidden cells of P's subproblem: walk its ancestors
        a = P
        while a >= 0:
            if s_fr[a] >= 0:
                forbid[s_fr[a], s_fc[a]] = True
            a = s_parent[a]
        for i in range(n):
            rowmask[i] = s_fixed[P, i]
        for j in range(M):
            blocked[j] = False
        for i in range(n):
            if rowmask[i]:
                blocked[s_col[P, i]] = True
        pu = s_u[P]
        pv = s_v[P]
        for r in range(n):
            if rowmask[r]:
                continue
            c = s_col[P, r]
            # threshold: the K-th queued cost, or the external bound
            thr = bound
            if q_count >= K and q_cost[K - 1] < thr:
                thr = q_cost[K - 1]
            # ties with the threshold are kept: the duals round differently from the sums
            thr = with_slack(thr)
            # lower bound from the smallest reduced cost left in row r
            lb_red = INF
            for j in range(M):
                if j != c and not blocked[j] and not forbid[r, j]:
                    cij = C[r, j]
                    if cij < INF:
                        red = cij - pu[r] - pv[j]
                        if red < lb_red:
                            lb_red = red
            if lb_red < 0.0:
                lb_red = 0.0
            if lb_red < INF:
                lb = pcost + lb_red
                if lb > thr:
                    if lb < rest:
                        rest = lb
                else:
                    n_free -= 1
                    ch = free_slots[n_free]
                    for i in range(n):
                        s_col[ch, i] = s_col[P, i]
                        s_u[ch, i] = pu[i]
                        s_fixed[ch, i] = rowmask[i]
                    for j in range(M):
                        s_v[ch, j] = pv[j]
                        row4col[j] = DUMMY
                    for i in range(n):
                        row4col[s_col[ch, i]] = i
                    row4col[c] = _FREE
                    s_col[ch, r] = -1
                    forbid[r, c] = True
                    delta, status = _dijkstra(
                        C,
                        r,
                        s_col[ch],
                        row4col,
                        s_u[ch],
                        s_v[ch],
                        forbid,
                        blocked,
                        optional,
                        thr - pcost,
                        dist,
                        pred,
                        done,
                        order,
                    )
                    forbid[r, c] = False
                    keep = False
                    if status == 0:
                        ccost = solution_cost(C, s_col[ch])
                        if ccost > thr:
                            if ccost < rest:
                                rest = ccost
                        else:
                            keep = True
                    elif status == 2:
                        if pcost + delta < rest:
                            rest = pcost + delta
                    if keep:
                        s_cost[ch] = ccost
                        s_parent[ch] = P
                        s_fr[ch] = r
                        s_fc[ch] = c
                        # insert into the sorted queue (stable: after equal costs)
                        pos = q_count
                        while pos > 0 and q_cost[pos - 1] > ccost:
                            q_cost[pos] = q_cost[pos - 1]
                            q_slot[pos] = q_slot[pos - 1]
                            pos -= 1
                        q_cost[pos] = ccost
                        q_slot[pos] = ch
                        q_count += 1
                        if q_count > K:
                            q_count -= 1
                            dropped = q_slot[q_count]
                            if q_cost[q_count] < rest:
                                rest = q_cost[q_count]
                            free_slots[n_free] = dropped
                            n_free += 1
                    else:
                        free_slots[n_free] = ch
                        n_free += 1
            # the next children keep row r fixed to its column in P
            rowmask[r] = True
            blocked[c] = True
        # clear the forbidden cells of P's ancestors
        a = P
        while a >= 0:
            if s_fr[a] >= 0:
                forbid[s_fr[a], s_fc[a]] = False
            a = s_parent[a]
    if q_count > 0 and q_cost[q_head] < rest:
        rest = q_cost[q_head]
    return out_cost[:popped], out_cols[:popped], rest
