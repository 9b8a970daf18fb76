"""Ranked assignment (Murty's algorithm) for the NLL's association problem.

The problem (paper eq. (7)-(8), transposed): ``n`` ground-truth objects
(rows) are each assigned to exactly one of ``M`` columns (the hypothesis'
Bernoullis followed by one private PPP column per object); a column takes at
most one object; columns flagged *mandatory* (Bernoullis with r = 1) must
take one. ``+inf`` marks a forbidden cell. We want the Q cheapest assignments
in increasing order of cost.

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
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numba as nb
import numpy as np

_INF = np.inf
MAX_FINITE_COST = 1e250  # larger finite costs could overflow when summed
_FREE = -1  # column held by nobody (only during an augmentation)
_DUMMY = -2  # column held by one of the implicit dummy rows


@nb.njit(cache=True)
def _dijkstra(C, row, col4row, row4col, u, v, forbid, blocked, optional, limit, dist, pred, done, order):
    """Shortest augmenting path from free ``row``; update duals and matching.

    ``blocked[j]`` excludes column j (held by a fixed row); ``forbid[i, j]``
    excludes a cell. One function, like :func:`_murty_kernel` and for the same
    measured reason: it is the innermost loop. Returns ``(delta, status)`` with status 0 = augmented,
    1 = infeasible, 2 = stopped because every remaining path is longer than
    ``limit`` (then ``delta`` is a lower bound on the true path length).
    """
    M = C.shape[1]
    for j in range(M):
        dist[j] = _INF
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
                    if c < _INF:
                        nd = d_i + c - ui - v[j]
                        if nd < dist[j]:
                            dist[j] = nd
                            pred[j] = i
        # closest unscanned column
        jmin = -1
        best = _INF
        for j in range(M):
            if not done[j] and dist[j] < best:
                best = dist[j]
                jmin = j
        if jmin < 0:
            return _INF, 1
        if best > limit:
            return best, 2
        done[jmin] = True
        order[n_done] = jmin
        n_done += 1
        holder = row4col[jmin]
        if holder == _FREE:
            sink = jmin
            break
        if holder == _DUMMY:
            i = -1
            if dummy_from < 0:
                # The dummy holding jmin may move to any optional column. All
                # dummy-held columns share the largest optional dual, so each
                # is reached at this same distance: scan them as one group
                # (they relax nothing new), then relax the other optional ones.
                dummy_from = jmin
                vj = v[jmin]
                for j in range(M):
                    if not done[j] and row4col[j] == _DUMMY:
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
            row4col[j] = _DUMMY
            j = dummy_from
    return delta, 0


@nb.njit(cache=True)
def _with_slack(x):
    """x plus a relative 1e-12, so that ties with a threshold survive rounding."""
    if math.isinf(x):
        return x
    return x + 1e-12 * (1.0 + abs(x))


@nb.njit(cache=True)
def _solution_cost(C, col4row):
    s = 0.0
    for i in range(col4row.shape[0]):
        s += C[i, col4row[i]]
    return s


@nb.njit(cache=True)
def _murty_kernel(C, mandatory, Q, bound):
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
        return out_cost[:0], out_cols[:0], _INF if n_dummy < 0 or n_dummy > n_opt else 0.0

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
    rest = _INF

    # ---- root: dummies on the first optional columns, then augment each row
    n_free -= 1
    root = free_slots[n_free]
    k = 0
    for j in range(M):
        row4col[j] = _FREE
        if optional[j] and k < n_dummy:
            row4col[j] = _DUMMY
            k += 1
        s_v[root, j] = 0.0
    for i in range(n):
        s_col[root, i] = -1
        s_u[root, i] = 0.0
    col = s_col[root]
    for i in range(n):
        delta, status = _dijkstra(
            C, i, col, row4col, s_u[root], s_v[root], forbid, blocked, optional, _INF, dist, pred, done, order
        )
        if status != 0:
            return out_cost[:0], out_cols[:0], _INF
    cost = _solution_cost(C, col)
    if cost > _with_slack(bound):
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
            thr = _with_slack(thr)
            # lower bound from the smallest reduced cost left in row r
            lb_red = _INF
            for j in range(M):
                if j != c and not blocked[j] and not forbid[r, j]:
                    cij = C[r, j]
                    if cij < _INF:
                        red = cij - pu[r] - pv[j]
                        if red < lb_red:
                            lb_red = red
            if lb_red < 0.0:
                lb_red = 0.0
            if lb_red < _INF:
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
                        row4col[j] = _DUMMY
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
                        ccost = _solution_cost(C, s_col[ch])
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


@dataclass(frozen=True)
class RankedAssignments:
    """The Q best assignments of a cost matrix.

    Attributes
    ----------
    costs : (k,) float
        Total costs, non-decreasing; ``k <= Q`` (fewer when fewer feasible
        assignments exist).
    columns : (k, n) int
        ``columns[q, i]`` is the column assigned to row ``i`` in solution ``q``.
    rest : float
        A lower bound on the cost of every assignment not returned. ``inf``
        means the list is complete; a finite value does not prove that more
        assignments exist (e.g. when exactly Q exist).
    """

    costs: np.ndarray
    columns: np.ndarray
    rest: float

    @property
    def complete(self) -> bool:
        return bool(np.isinf(self.rest))


def murty(
    cost: np.ndarray, q: int, mandatory: np.ndarray | None = None, bound: float = np.inf
) -> RankedAssignments:
    """Q lowest-cost assignments of every row of ``cost`` to distinct columns.

    Parameters
    ----------
    cost : (n, M) array_like
        Assignment costs with ``n <= M``; ``+inf`` forbids a cell. NaN and
        ``-inf`` are rejected.
    q : int
        Number of assignments wanted (>= 1).
    mandatory : (M,) bool, optional
        Columns that must be assigned a row.
    bound : float
        Assignments costing more than ``bound`` are not needed (pruned).

    Returns
    -------
    RankedAssignments

    Examples
    --------
    >>> r = murty([[1.0, 2.0], [2.0, 1.0]], 2)
    >>> r.costs.tolist(), r.columns.tolist()
    ([2.0, 4.0], [[0, 1], [1, 0]])
    """
    C = np.asarray(cost, dtype=np.float64)
    if C.ndim != 2:
        raise ValueError(f"cost: expected a 2-D array of shape (n, M), got shape {C.shape}")
    n, M = C.shape
    if n > M:
        raise ValueError(f"cost: expected at most as many rows as columns, got shape {C.shape}")
    if np.any(np.isnan(C)) or np.any(C == -np.inf):
        raise ValueError("cost: expected finite values or +inf, got NaN or -inf")
    finite = C[np.isfinite(C)]
    if finite.size and np.max(np.abs(finite)) > MAX_FINITE_COST:
        raise ValueError(
            f"cost: expected finite magnitudes below {MAX_FINITE_COST:g} (sums must not overflow)"
        )
    if isinstance(q, bool) or not isinstance(q, (int, np.integer)) or q < 1:
        raise ValueError(f"q: expected a positive integer, got {q!r}")
    q = int(q)
    bound = float(bound)
    if math.isnan(bound):
        raise ValueError("bound: expected a number or inf, got nan")
    if mandatory is None:
        mand = np.zeros(M, dtype=bool)
    else:
        mand = np.asarray(mandatory, dtype=bool)
        if mand.shape != (M,):
            raise ValueError(f"mandatory: expected shape ({M},), got shape {mand.shape}")
    costs, cols, rest = ranked_in_search_order(C, mand, int(q), bound)
    order = np.argsort(costs, kind="stable")  # the sums may differ from the search order by an ulp
    return RankedAssignments(costs[order], cols[order], rest)


def ranked_in_search_order(
    C: np.ndarray, mand: np.ndarray, q: int, bound: float = math.inf, max_count: int | None = None
) -> tuple[np.ndarray, np.ndarray, float]:
    """The trusted core of :func:`murty`: no validation, results in the order found.

    The first k assignments found for budget q are the same for every larger
    budget (a candidate is pruned only when q others are known to cost no
    more), so prefixes of one ranking reproduce smaller budgets exactly.
    ``max_count``, if given, is an upper bound on the number of feasible
    assignments (e.g. :func:`count_assignments`); q is capped at it, and at
    the number of assignments of the matrix, *before* anything is allocated.
    Returns ``(costs, columns, rest)`` as :class:`RankedAssignments`, with
    ``rest`` already lowered by the rounding slack.
    """
    n, M = C.shape
    if n == 0:
        if mand.any():
            return np.empty(0), np.empty((0, 0), dtype=np.int64), math.inf
        return np.zeros(1), np.empty((1, 0), dtype=np.int64), math.inf
    cap = _assignment_cap(C, max_count, q)
    everything = cap <= q
    if everything:
        q = cap
    if q == 0:
        return np.empty(0), np.empty((0, n), dtype=np.int64), math.inf
    costs, cols, rest = _murty_kernel(np.ascontiguousarray(C), mand, int(q), bound)
    if everything and bound == math.inf:
        rest = math.inf  # q covers every assignment there is
    if math.isfinite(rest):
        rest -= 1e-12 * (1.0 + abs(rest))  # a lower bound stays one when lowered
    return costs, cols, float(rest)


def _assignment_cap(C: np.ndarray, max_count: int | None, q: int) -> int:
    """An upper bound on the number of feasible assignments of C, or q + 1 if it exceeds q.

    Bounds: M! / (M - n)! injective maps, the product over rows of their
    allowed (finite) cells, and ``max_count``. Exact integers, stopped early.
    """
    n, M = C.shape
    best = q + 1 if max_count is None else min(q + 1, max_count)
    if best == 0:
        return 0
    if math.lgamma(M + 1) - math.lgamma(M - n + 1) < math.log(best) + 1e-9:
        best = min(best, math.perm(M, n))
    per_row = np.count_nonzero(C < np.inf, axis=1)
    if np.sum(np.log(np.maximum(per_row, 1))) < math.log(best) + 1e-9:
        best = min(best, math.prod(int(k) for k in per_row))
    return best


@lru_cache(maxsize=4096)
def count_assignments_log(n: int, m: int, forced: int = 0) -> float:
    """log of the number of ways to assign n objects to m Bernoullis or the PPP.

    ``forced`` of the n objects cannot go to the PPP (zero intensity there)
    and must take a Bernoulli. The count is
    ``sum_i C(n - forced, i) P(m, forced + i)``: choose which of the free
    objects also go to Bernoullis, then injectively which Bernoullis take the
    ``forced + i`` objects. Every assignment of the association problem is
    counted (an upper bound when other cells are forbidden); ``-inf`` when
    there is none.
    """
    free = n - forced
    if forced > m:
        return -math.inf
    terms = [
        math.lgamma(free + 1)
        - math.lgamma(i + 1)
        - math.lgamma(free - i + 1)
        + math.lgamma(m + 1)
        - math.lgamma(m - forced - i + 1)
        for i in range(min(free, m - forced) + 1)
    ]
    top = max(terms)
    return top + math.log(sum(math.exp(t - top) for t in terms))


@lru_cache(maxsize=4096)
def count_assignments(n: int, m: int, forced: int = 0) -> int:
    """The exact number that :func:`count_assignments_log` gives the log of (a Python int)."""
    free = n - forced
    if forced > m:
        return 0
    return sum(math.comb(free, i) * math.perm(m, forced + i) for i in range(min(free, m - forced) + 1))
