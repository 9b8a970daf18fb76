"""A straightforward Murty, the benchmark's baseline.

Classic partitioning (Murty 1968) where every subproblem re-solves a masked
copy of the whole cost matrix with ``scipy.optimize.linear_sum_assignment``.
No warm start, no bounds. It handles no mandatory columns (r = 1), so the
benchmark uses r < 1 when comparing against it.
"""

from __future__ import annotations

import heapq
import itertools

import numpy as np
from scipy.optimize import linear_sum_assignment


def _solve(C, fixed, forbidden):
    Cm = C.copy()
    for i, j in forbidden:
        Cm[i, j] = np.inf
    for i, j in fixed:
        keep = Cm[i, j]
        Cm[i, :] = np.inf
        Cm[:, j] = np.inf
        Cm[i, j] = keep
    try:
        rows, cols = linear_sum_assignment(Cm)
    except ValueError:  # infeasible
        return None
    cost = Cm[rows, cols].sum()
    if not np.isfinite(cost):
        return None
    out = np.empty(C.shape[0], dtype=np.int64)
    out[rows] = cols
    return float(cost), out


def murty_baseline(C, Q):
    """The Q cheapest assignments (costs only) of rows to distinct columns."""
    n = C.shape[0]
    tie = itertools.count()
    first = _solve(C, [], [])
    if first is None:
        return np.empty(0)
    heap = [(first[0], next(tie), first[1], (), ())]
    costs = []
    while heap and len(costs) < Q:
        cost, _, sol, fixed, forbidden = heapq.heappop(heap)
        costs.append(cost)
        fixed_rows = {i for i, _ in fixed}
        new_fixed = list(fixed)
        for i in range(n):
            if i in fixed_rows:
                continue
            child_forbidden = forbidden + ((i, int(sol[i])),)
            res = _solve(C, new_fixed, child_forbidden)
            if res is not None:
                heapq.heappush(heap, (res[0], next(tie), res[1], tuple(new_fixed), child_forbidden))
            new_fixed.append((i, int(sol[i])))
    return np.array(costs)
