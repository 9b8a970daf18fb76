"""Ranked assignment on the cells that can matter, component by component.

The Q best assignments of a cost matrix (:mod:`nllbench.engine.assignment`)
rarely use more than a few cells per row. :func:`_ranked_pruned`:

1. solves the root (the best assignment) with its optimal duals (u, v);
2. finds an upper bound on the Q-th best cost from Q distinct assignments
   that move some rows of the root to columns it leaves free
   (:func:`_upper_bound`);
3. drops every cell (i, j) whose lower bound ``root + C[i, j] - u[i] - v[j]``
   exceeds it: reduced costs are >= 0, so any assignment through the cell
   costs at least that much. Rows left with their root cell alone stay on
   it in every one of the Q best;
4. splits the rows that remain into connected components (rows sharing a
   column) and ranks each on its own: a lone row lists its cells, larger
   components go through the Murty kernel (:mod:`nllbench.engine._murty`);
5. enumerates the Q cheapest combinations of one option per component with
   a heap (:func:`_k_best_choices`), and sums every cost over the full
   matrix, in row order, as the kernel does.

:func:`ranked` puts the result in a canonical order (cost, then columns),
ranking more when an unlisted assignment could tie with the last listed one,
so that the first q of any longer list are the list for q.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from nllbench.engine._murty import DUMMY, INF, murty_kernel, solution_cost, solve_root, with_slack


@nb.njit(cache=True)
def _upper_bound(C, col, row4col, optional, root_cost, Q):
    """A cost that at least Q distinct assignments do not exceed (inf if fewer are found).

    The candidates are the root and its variants in which some rows move to
    columns the root leaves to dummies. Each such column is offered to the
    one row that it would cost least extra (among rows whose root column is
    optional), so the rows' offers never collide and every combination of
    at most one move per row is a distinct assignment, costing the root plus
    the moves' extra costs; :func:`_k_best_choices` finds the Q-th cheapest.
    Returns ``(bound, extra)``, ``extra`` being the bound minus the root
    (both inf when fewer than Q candidates exist).
    """
    n, M = C.shape
    owner = np.full(M, -1, dtype=np.int64)
    delta = np.full(M, INF)
    offers = np.zeros(n + 1, dtype=np.int64)
    for j in range(M):
        if row4col[j] != DUMMY:
            continue
        for i in range(n):
            c = col[i]
            if optional[c] and C[i, j] - C[i, c] < delta[j]:
                delta[j] = C[i, j] - C[i, c]
                owner[j] = i
        if owner[j] >= 0:
            offers[owner[j] + 1] += 1
    combinations = 1.0
    for i in range(n):
        combinations *= 1.0 + offers[i + 1]
    if combinations < Q:
        return INF, INF
    start = np.zeros(n + 1, dtype=np.int64)
    for i in range(n):
        start[i + 1] = start[i] + offers[i + 1] + 1
    cost = np.empty(start[n])
    fill = start[:-1].copy()
    for i in range(n):
        cost[fill[i]] = 0.0  # the row stays on its root column
        fill[i] += 1
    for j in range(M):
        i = owner[j]
        if i >= 0:
            # insertion sort within the row's offers (rounding cannot make a move cheaper than staying)
            x = max(delta[j], 0.0)
            t = fill[i]
            while t > start[i] + 1 and cost[t - 1] > x:
                cost[t] = cost[t - 1]
                t -= 1
            cost[t] = x
            fill[i] += 1
    extra = _k_best_choices(start, cost, Q)[0]
    if extra.size < Q:
        return INF, INF
    return root_cost + extra[Q - 1], extra[Q - 1]


@nb.njit(cache=True)
def _components(keep, row_kept):
    """Connected components of the kept rows, linked by shared columns: (n,) ids (-1: not kept), count."""
    n, M = keep.shape
    parent = np.arange(n)
    owner = np.full(M, -1, dtype=np.int64)
    for i in range(n):
        if not row_kept[i]:
            continue
        for j in range(M):
            if keep[i, j]:
                if owner[j] < 0:
                    owner[j] = i
                else:
                    a, b = i, owner[j]
                    while parent[a] != a:
                        a = parent[a]
                    while parent[b] != b:
                        b = parent[b]
                    if a != b:
                        parent[max(a, b)] = min(a, b)
    comp = np.full(n, -1, dtype=np.int64)
    n_comp = 0
    for i in range(n):
        if row_kept[i]:
            a = i
            while parent[a] != a:
                a = parent[a]
            if comp[a] < 0:
                comp[a] = n_comp
                n_comp += 1
            comp[i] = comp[a]
    return comp, n_comp


@nb.njit(cache=True)
def _component_options(C, keep, col_kept, mandatory, comp, n_comp, Q):
    """The Q best assignments of every component, each sorted by cost.

    A single row with no mandatory column lists its kept cells; larger
    components go through :func:`murty_kernel`. Returns flat arrays:
    component c's options are ``start[c]:start[c + 1]``, option o costs
    ``cost[o]`` (summed over the component's rows) and puts those rows, in
    the order ``rows[row_start[c]:row_start[c + 1]]``, on the columns
    ``cols[col_at[o]:]``; ``rest[c]`` bounds the component's unlisted
    assignments (inf: there are none).
    """
    n, M = C.shape
    row_start = np.zeros(n_comp + 1, dtype=np.int64)
    for i in range(n):
        if comp[i] >= 0:
            row_start[comp[i] + 1] += 1
    for c in range(n_comp):
        row_start[c + 1] += row_start[c]
    rows = np.empty(row_start[n_comp], dtype=np.int64)
    fill = row_start[:-1].copy()
    for i in range(n):
        if comp[i] >= 0:
            rows[fill[comp[i]]] = i
            fill[comp[i]] += 1
    start = np.zeros(n_comp + 1, dtype=np.int64)
    cost = np.empty(n_comp * Q + M)
    col_at = np.empty(n_comp * Q + M, dtype=np.int64)
    cols = np.empty(n * Q + M, dtype=np.int64)
    rest = np.full(n_comp, INF)
    n_opt, n_cols = np.int64(0), np.int64(0)  # not literal 0s: they would compile second signatures
    for c in range(n_comp):
        mine = rows[row_start[c] : row_start[c + 1]]
        single = mine.size == 1
        if single:
            for j in range(M):
                if keep[mine[0], j] and col_kept[j] and mandatory[j]:
                    single = False
        if single:
            n_opt, n_cols, rest[c] = _row_options(
                C, keep, col_kept, mine[0], Q, cost, col_at, cols, n_opt, n_cols
            )
        else:
            n_opt, n_cols, rest[c] = _kernel_options(
                C, keep, col_kept, mandatory, mine, Q, cost, col_at, cols, n_opt, n_cols
            )
        start[c + 1] = n_opt
    return start, cost, col_at, cols, rows, row_start, rest


@nb.njit(cache=True)
def _row_options(C, keep, col_kept, i, Q, cost, col_at, cols, n_opt, n_cols):
    """A lone row's options (see :func:`_component_options`): its kept cells by cost, at most Q.

    Appends to ``cost``, ``col_at`` and ``cols``; returns the new fill counts
    and the component's ``rest``.
    """
    M = C.shape[1]
    rest = INF
    o0 = n_opt
    for j in range(M):
        if keep[i, j] and col_kept[j]:
            # insertion sort by cost (stable): a row keeps few cells
            x = C[i, j]
            t = n_opt
            while t > o0 and cost[t - 1] > x:
                cost[t] = cost[t - 1]
                col_at[t] = col_at[t - 1]
                t -= 1
            cost[t] = x
            col_at[t] = j
            n_opt += 1
    if n_opt - o0 > Q:
        rest = cost[o0 + Q]
        n_opt = o0 + Q
    for o in range(o0, n_opt):
        cols[n_cols] = col_at[o]
        col_at[o] = n_cols
        n_cols += 1
    return n_opt, n_cols, rest


@nb.njit(cache=True)
def _kernel_options(C, keep, col_kept, mandatory, mine, Q, cost, col_at, cols, n_opt, n_cols):
    """A larger component's options (see :func:`_component_options`): the kernel's Q best, sorted.

    One option more than kept is ranked: its cost bounds the others tightly
    (the kernel's own bound is often the last option it lists). Appends to
    ``cost``, ``col_at`` and ``cols``; returns the new fill counts and the
    component's ``rest``.
    """
    sub_cols = np.flatnonzero(col_kept & _any_row(keep, mine))
    sub = np.full((mine.size, sub_cols.size), INF)
    for a in range(mine.size):
        for b in range(sub_cols.size):
            if keep[mine[a], sub_cols[b]]:
                sub[a, b] = C[mine[a], sub_cols[b]]
    costs, picks, rest = murty_kernel(sub, mandatory[sub_cols], Q + 1, INF)
    order = np.argsort(costs, kind="mergesort")
    if order.size > Q:
        rest = min(rest, costs[order[Q]])
        order = order[:Q]
    for t in order:
        cost[n_opt] = costs[t]
        col_at[n_opt] = n_cols
        for a in range(mine.size):
            cols[n_cols + a] = sub_cols[picks[t, a]]
        n_cols += mine.size
        n_opt += 1
    return n_opt, n_cols, rest


@nb.njit(cache=True)
def _any_row(keep, rows):
    """(M,) whether any of ``rows`` keeps the column."""
    out = np.zeros(keep.shape[1], dtype=np.bool_)
    for i in rows:
        out |= keep[i]
    return out


@nb.njit(cache=True)
def _k_best_choices(start, cost, Q):
    """The Q cheapest ways to pick one option per component, cheapest first.

    Options of each component are sorted; a component with a single option
    is a constant. Components are ordered by the extra cost of their second
    option, and every choice vector is reached once from a cheaper one
    (advance the last changed component's option, start the next component
    at its second option, or, when the last changed one is at its second,
    move that change to the next component), so a heap pops them in
    increasing cost. Returns ``(extra, parent, comp, pick, op, order, next)``,
    all (k,) but ``order``: choice t is choice ``parent[t]`` with component
    ``comp[t]`` moved to its option ``pick[t]`` and, when ``op[t] == 2``,
    component ``order[i - 1]`` (where ``order[i] == comp[t]``) back to its
    first; ``extra`` is the cost above the all-first choice, and ``next``
    bounds every choice not returned.
    """
    n_comp = start.size - 1
    span = np.empty(n_comp)
    for c in range(n_comp):
        span[c] = cost[start[c] + 1] - cost[start[c]] if start[c + 1] - start[c] > 1 else INF
    comps = np.argsort(span, kind="mergesort")
    T = 0
    while T < n_comp and span[comps[T]] < INF:
        T += 1
    extra = np.empty(Q)
    par = np.zeros(Q, dtype=np.int64)
    pos = np.zeros(Q, dtype=np.int64)
    pick = np.zeros(Q, dtype=np.int64)
    ops = np.zeros(Q, dtype=np.int64)
    extra[0] = 0.0
    k = 1
    # candidates: (extra cost, the popped choice it extends, position in comps of the
    # changed component, op: 0 advance it, 1 start it at its second option, 2 move there)
    cap = 3 * Q + 3
    e_from = np.empty(cap, dtype=np.int64)
    e_t = np.empty(cap, dtype=np.int64)
    e_op = np.empty(cap, dtype=np.int64)
    h_sum = np.empty(cap)  # a binary heap of (extra cost, candidate)
    h_id = np.empty(cap, dtype=np.int64)
    size, n_cand = 0, 0
    if T > 0:
        e_from[0], e_t[0], e_op[0] = 0, 0, 1
        zero = np.int64(0)  # not the literal 0: a literal argument compiles a second signature
        size, n_cand = _push(h_sum, h_id, zero, span[comps[0]], zero), 1
    while k < Q and size > 0:
        s, e = h_sum[0], h_id[0]
        size = _pop(h_sum, h_id, size)
        par[k], t, ops[k] = e_from[e], e_t[e], e_op[e]
        c = comps[t]
        pos[k] = t
        pick[k] = pick[par[k]] + 1 if ops[k] == 0 else 1
        extra[k] = s
        p = pick[k]
        if start[c] + p + 1 < start[c + 1]:
            e_from[n_cand], e_t[n_cand], e_op[n_cand] = k, t, 0
            size = _push(h_sum, h_id, size, s + (cost[start[c] + p + 1] - cost[start[c] + p]), n_cand)
            n_cand += 1
        if t + 1 < T:
            e_from[n_cand], e_t[n_cand], e_op[n_cand] = k, t + 1, 1
            size = _push(h_sum, h_id, size, s + span[comps[t + 1]], n_cand)
            n_cand += 1
            if p == 1:
                e_from[n_cand], e_t[n_cand], e_op[n_cand] = k, t + 1, 2
                size = _push(h_sum, h_id, size, s - span[c] + span[comps[t + 1]], n_cand)
                n_cand += 1
        k += 1
    nxt = h_sum[0] if size > 0 else INF
    return extra[:k], par[:k], comps[pos[:k]], pick[:k], ops[:k], comps, nxt


@nb.njit(cache=True)
def _push(h_sum, h_id, size, x, e):
    """Add (x, e) to a binary min-heap on ``h_sum``; returns the new size."""
    i = size
    while i > 0:
        p = (i - 1) // 2
        if h_sum[p] <= x:
            break
        h_sum[i], h_id[i] = h_sum[p], h_id[p]
        i = p
    h_sum[i], h_id[i] = x, e
    return size + 1


@nb.njit(cache=True)
def _pop(h_sum, h_id, size):
    """Remove the root of the heap of :func:`_push`; returns the new size."""
    size -= 1
    x, e = h_sum[size], h_id[size]
    i = 0
    while True:
        a = 2 * i + 1
        if a >= size:
            break
        if a + 1 < size and h_sum[a + 1] < h_sum[a]:
            a += 1
        if h_sum[a] >= x:
            break
        h_sum[i], h_id[i] = h_sum[a], h_id[a]
        i = a
    h_sum[i], h_id[i] = x, e
    return size


@nb.njit(cache=True)
def _prune(C, mandatory, col, row4col, u, v, root_cost, limit, tol):
    """Cells that may lie in an assignment costing at most ``limit`` (by the root duals).

    Returns ``keep`` (n, M), ``row_kept`` (n,) rows with a kept cell besides
    their root cell, ``col_kept`` (M,) the columns of those rows, ``dropped``
    (a lower bound on every assignment through a dropped cell) and ``fixed``
    (the summed cost of the other rows, which stay on their root cell).
    """
    n, M = C.shape
    keep = np.zeros((n, M), dtype=np.bool_)
    row_kept = np.zeros(n, dtype=np.bool_)
    dropped = INF
    for i in range(n):
        for j in range(M):
            if C[i, j] < INF:
                lb = root_cost + (C[i, j] - u[i] - v[j])
                if lb <= limit or j == col[i]:
                    keep[i, j] = True
                    if j != col[i]:
                        row_kept[i] = True
                elif lb - tol < dropped:
                    dropped = lb - tol
    col_kept = np.zeros(M, dtype=np.bool_)
    fixed = 0.0
    for i in range(n):
        if row_kept[i]:
            for j in range(M):
                col_kept[j] = col_kept[j] or keep[i, j]
        else:
            fixed += C[i, col[i]]
    for i in range(n):
        if not row_kept[i]:
            col_kept[col[i]] = False  # held by a fixed row in every one of the Q best
    for j in range(M):
        if mandatory[j] and row4col[j] >= 0 and row_kept[row4col[j]]:
            col_kept[j] = True
    return keep, row_kept, col_kept, dropped, fixed


@nb.njit(cache=True)
def _assemble(col, parent, changed, pick, op, order, start, col_at, cols, rows, row_start):
    """(k, n) assignments of the choices of :func:`_k_best_choices` (a parent plus one or two changes)."""
    n_comp = start.size - 1
    k = parent.size
    rank = np.empty(n_comp, dtype=np.int64)
    for i in range(n_comp):  # element by element: an array assignment compiles numba's shape-error path
        rank[order[i]] = i
    out_cols = np.empty((k, col.size), dtype=np.int64)
    for i in range(col.size):  # element by element: a row assignment compiles numba's shape-error path
        out_cols[0, i] = col[i]
    zero = np.int64(0)  # not the literal 0: a literal argument compiles a second signature
    for c in range(n_comp):
        _put_option(out_cols[0], c, zero, start, col_at, cols, rows, row_start)
    for t in range(1, k):
        for i in range(col.size):
            out_cols[t, i] = out_cols[parent[t], i]
        c = changed[t]
        _put_option(out_cols[t], c, pick[t], start, col_at, cols, rows, row_start)
        if op[t] == 2:
            _put_option(out_cols[t], order[rank[c] - 1], zero, start, col_at, cols, rows, row_start)
    return out_cols


@nb.njit(cache=True)
def _ranked_pruned(C, mandatory, Q, bound):
    """What :func:`murty_kernel` returns for ``C``, from the cells that can hold one of the Q best.

    Steps 1-5 of the module docstring. The bound through a cell holds
    because reduced costs are non-negative and the columns left to dummies
    carry the largest optional dual (:mod:`nllbench.engine._murty`), so an
    assignment costs the root plus its cells' reduced costs, or more.
    ``rest`` is the smallest of the dropped cells' bounds, the components'
    own ``rest`` and the first combination left out, each plus the cheapest
    choice elsewhere and minus the rounding tolerance ``tol``. Problems with
    at most two rows or a budget of at most three, fewer than three rows on
    optional root columns, or no finite upper bound (small or dense ones, or
    most rows on mandatory columns) go to the kernel unchanged: there it is
    as fast (measured on ``benchmarks/bench_nll.py`` scenes and on the 11,482
    association problems of a PMBM Williams-2015 run).
    """
    n, M = C.shape
    optional = np.empty(M, dtype=np.bool_)
    n_opt = 0
    for j in range(M):
        optional[j] = not mandatory[j]
        n_opt += optional[j]
    n_dummy = M - n
    if n <= 2 or Q <= 3 or n_dummy < 0 or n_dummy > n_opt:  # the kernel is as fast on the smallest ones
        return murty_kernel(C, mandatory, Q, bound)
    solved, col, row4col, u, v = _root_with_duals(C, optional, n_dummy)
    if not solved:
        return murty_kernel(C, mandatory, Q, bound)
    root_cost = solution_cost(C, col)
    if root_cost > with_slack(bound):
        return murty_kernel(C, mandatory, Q, bound)  # nothing within the bound: the kernel says so at once
    movable = 0
    for i in range(n):
        movable += optional[col[i]]
    if movable < 3:
        # most rows hold mandatory columns (Bernoullis with r = 1, as in a PMBM after
        # detections): few candidates, one component, and the kernel is as fast
        return murty_kernel(C, mandatory, Q, bound)
    ub = min(_upper_bound(C, col, row4col, optional, root_cost, Q)[0], bound)
    if ub == INF:
        return murty_kernel(C, mandatory, Q, bound)
    tol = _tolerance(C, col, u, v, ub - root_cost)
    keep, row_kept, col_kept, dropped, fixed = _prune(
        C, mandatory, col, row4col, u, v, root_cost, ub + tol, tol
    )
    comp, n_comp = _components(keep, row_kept)
    # rank each component on its own; an assignment is one option per component
    start, cost, col_at, cols, rows, row_start, rests = _component_options(
        C, keep, col_kept, mandatory, comp, n_comp, Q
    )
    base = fixed
    for c in range(n_comp):
        base += cost[start[c]]
    rest = dropped
    for c in range(n_comp):
        if rests[c] < INF:
            rest = min(rest, rests[c] + (base - cost[start[c]]) - tol)
    extra, parent, changed, pick, op, order, nxt = _k_best_choices(start, cost, Q)
    if nxt < INF:
        rest = min(rest, base + nxt - tol)
    out_cols = _assemble(col, parent, changed, pick, op, order, start, col_at, cols, rows, row_start)
    return _within_bound(C, out_cols, bound, rest)


@nb.njit(cache=True)
def _root_with_duals(C, optional, n_dummy):
    """The root of :func:`murty_kernel`'s search and its duals: (solved, col (n,), row4col (M,), u, v)."""
    n, M = C.shape
    col = np.empty(n, dtype=np.int64)
    row4col = np.empty(M, dtype=np.int64)
    u = np.empty(n)
    v = np.empty(M)
    forbid = np.zeros((n, M), dtype=np.bool_)
    blocked = np.zeros(M, dtype=np.bool_)
    dist = np.empty(M)
    pred = np.empty(M, dtype=np.int64)
    done = np.empty(M, dtype=np.bool_)
    order = np.empty(M, dtype=np.int64)
    solved = solve_root(C, optional, n_dummy, col, row4col, u, v, forbid, blocked, dist, pred, done, order)
    return solved, col, row4col, u, v


@nb.njit(cache=True)
def _tolerance(C, col, u, v, extra):
    """The rounding tolerance of :func:`_ranked_pruned`'s sums (``extra``: the bound minus the root).

    Every sum there has at most n + M terms of these magnitudes, each adding
    at most one unit roundoff (1.1e-16) of the running total; 1e-15 per term
    is 9 times that.
    """
    n, M = C.shape
    scale = n * abs(extra)
    for i in range(n):
        scale += abs(C[i, col[i]]) + abs(u[i])
    for j in range(M):
        scale += abs(v[j])
    return 1e-15 * (n + M) * (1.0 + scale)


@nb.njit(cache=True)
def _within_bound(C, out_cols, bound, rest):
    """(costs summed in row order, columns, rest) of the assignments costing at most ``bound``.

    As the kernel prunes (with its relative slack); the costs left out lower
    ``rest``.
    """
    k = out_cols.shape[0]
    out_cost = np.empty(k)
    within = np.ones(k, dtype=np.bool_)
    for t in range(k):
        out_cost[t] = solution_cost(C, out_cols[t])
        if out_cost[t] > with_slack(bound):
            within[t] = False
            rest = min(rest, out_cost[t])
    if not within.all():
        return out_cost[within], out_cols[within], rest
    return out_cost, out_cols, rest


@nb.njit(cache=True)
def _put_option(assignment, c, o, start, col_at, cols, rows, row_start):
    """Write option ``o`` of component ``c`` (see :func:`_component_options`) into an (n,) assignment."""
    at = col_at[start[c] + o]
    for a in range(row_start[c], row_start[c + 1]):
        assignment[rows[a]] = cols[at + a - row_start[c]]


@nb.njit(cache=True)
def _before(costs, cols, a, b):
    """Whether assignment a comes before b: by cost, then by their columns (lexicographic)."""
    if costs[a] != costs[b]:
        return costs[a] < costs[b]
    for i in range(cols.shape[1]):
        if cols[a, i] != cols[b, i]:
            return cols[a, i] < cols[b, i]
    return False


@nb.njit(cache=True)
def _canonical_order(costs, cols):
    """Indices that sort the assignments by (cost, columns); an insertion sort, as they come nearly sorted."""
    order = np.arange(costs.size)
    for t in range(1, costs.size):
        x = order[t]
        s = t
        while s > 0 and _before(costs, cols, x, order[s - 1]):
            order[s] = order[s - 1]
            s -= 1
        order[s] = x
    return order


@nb.njit(cache=True)
def ranked(C, mandatory, Q, bound):
    """The first Q assignments of ``C`` in (cost, columns) order, and a lower bound on the others.

    Ranks one assignment more than asked (its cost bounds the unlisted
    ones) and checks that nothing unlisted can tie with the last one listed;
    otherwise ranks twice as many. The list is therefore the same for every
    budget and every way of ranking, even when costs tie: the first q of a
    longer list are the list for q. The doubling stops at ``max(2 Q, 4096)``
    (a tie block larger than that, e.g. a matrix of equal costs with more
    assignments than that, or costs so large that the rounding tolerance
    hides every gap): the list is then still the Q best, in (cost, columns)
    order among those ranked. Returns ``(costs (k,), cols (k, n), rest)`` as
    :func:`murty_kernel`.
    """
    q = Q
    while True:
        costs, cols, rest = _ranked_pruned(C, mandatory, q + 1, bound)
        order = _canonical_order(costs, cols)
        k = min(Q, costs.size)
        clear = rest - 1e-12 * (1.0 + abs(rest)) > costs[order[Q - 1]] if costs.size > q else True
        if clear or q >= max(2 * Q, 4096):
            if costs.size > Q:
                rest = min(rest, costs[order[Q]])
            return costs[order[:k]], cols[order[:k]], rest
        q *= 2
