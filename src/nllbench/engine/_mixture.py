"""The Murty NLL of a whole PMBM in one compiled pass (per-hypothesis budget, paper eq. (9)).

:func:`nllbench.engine.nll.nll` and :func:`nllbench.engine.nll.nll_many` validate their
input once and hand flat arrays to :func:`mixture_murty`: for every live
global hypothesis h it builds the association cost matrix (eq. (7)-(8)),
ranks it once with the Murty kernel of :mod:`nllbench.engine.assignment` (to
``max(qs) + 1``), and, for every budget q, sums the q best associations of
every hypothesis in log space and bounds the ones left out. Nothing in the
loop goes back to Python. The hypotheses read their Bernoullis through an
index into one pool (a pooled PMBM's shared Bernoullis, each evaluated once):
no Bernoulli is copied per hypothesis.

Summation order: sums of ``log(1 - r)`` (the empty association's cost), the
log-sum-exp of the listed terms and the row-sum bound are sequential loops
here, where the per-hypothesis Python path used NumPy's pairwise sums; they
agree to about 1e-15 relative (the tests require 1e-12). The association
ranking itself is the same code, so the listed associations are the same.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from nllbench.engine._pruned import ranked
from nllbench.engine.assignment import MAX_FINITE_COST

_INF = np.inf
_SLACK = 1e-12  # the rounding slack of a lower bound, as in nllbench.engine.assignment
_EXP_ZERO = -746.0  # math.exp(x) == 0.0 for every x < -745.14 (the smallest subnormal is 4.9e-324)


@nb.njit(cache=True)
def _logsumexp(a):
    """log(sum(exp(a))) of a 1-D array; -inf when empty or all -inf."""
    if a.size == 0:
        return -_INF
    top = a.max()
    if top == -_INF:
        return -_INF
    s = 0.0
    for x in a:
        s += math.exp(x - top)
    return top + math.log(s)


@nb.njit(cache=True)
def _logaddexp(x, y):
    """numpy.logaddexp for two floats."""
    if x == y:
        return x + math.log(2.0)
    t = x - y
    if t > 0:
        return x + math.log1p(math.exp(-t))
    return y + math.log1p(math.exp(t))


@nb.njit(cache=True)
def _cost_matrix(log_p, r, rows, log_lam):
    """Cost (n, m + n), mandatory (m + n,) and base of the hypothesis of pool ``rows`` (m,)
    (see nll.association_problem)."""
    m, n = rows.size, log_lam.size
    C = np.full((n, m + n), _INF)
    mand = np.zeros(m + n, dtype=np.bool_)
    base_sum = 0.0
    for k in range(m):
        rk = r[rows[k]]
        log_r = math.log(rk) if rk > 0 else -_INF
        log_1mr = math.log1p(-rk) if rk < 1 else -_INF
        sure = rk == 1.0
        mand[k] = sure
        if not sure:
            base_sum += log_1mr
        for l in range(n):
            c = -(log_r + log_p[rows[k], l] - (0.0 if sure else log_1mr))
            # exp(-c) is 0 in double precision: a forbidden cell (nll.FORBIDDEN_COST)
            C[l, k] = c if c <= MAX_FINITE_COST else _INF
    for l in range(n):
        c = -log_lam[l]
        C[l, m + l] = c if c <= MAX_FINITE_COST else _INF
    return C, mand, base_sum


@nb.njit(cache=True)
def _row_sum_bound(C):
    """log prod_l sum_j exp(-C[l, j]) (>= log of the sum over all associations, before -base)."""
    n, M = C.shape
    total = 0.0
    for l in range(n):
        top = -_INF
        for j in range(M):
            if -C[l, j] > top:
                top = -C[l, j]
        if top == -_INF:
            return -_INF
        s = 0.0
        for j in range(M):
            x = -C[l, j] - top
            if x > _EXP_ZERO:  # exp(x) is exactly 0.0 below: skipping it changes no bit
                s += math.exp(x)
        total += top + math.log(s)
    return total


@nb.njit(cache=True)
def _cap(C, count, q):
    """Assignments to rank: q, or fewer when fewer exist (then the list is complete).

    Same bounds as nllbench.engine.assignment._assignment_cap: ``count`` (the
    association count), M! / (M - n)!, and the product of allowed cells per row.
    """
    n, M = C.shape
    best = min(q + 1, count)
    if best == 0:
        return 0
    if math.lgamma(M + 1) - math.lgamma(M - n + 1) < math.log(best) + 1e-9:
        perm = 1
        for i in range(n):
            perm *= M - i
        best = min(best, perm)
    log_prod = 0.0
    per_row = np.empty(n, dtype=np.int64)
    for l in range(n):
        k = 0
        for j in range(M):
            if C[l, j] < _INF:
                k += 1
        per_row[l] = k
        log_prod += math.log(max(k, 1))
    if log_prod < math.log(best) + 1e-9:
        prod = 1
        for l in range(n):
            prod *= per_row[l]
        best = min(best, prod)
    return best


@nb.njit(cache=True)
def _rank_all(log_p, r, index, starts, log_lam, total_rate, counts, qrank):
    """Rank every hypothesis: costs in search order (H, qrank), columns, counts, rests, bases, row bounds."""
    H = starts.size - 1
    n = log_lam.size
    costs = np.full((H, qrank), _INF)
    cols = np.zeros((H, qrank, n), dtype=np.int64)
    found = np.zeros(H, dtype=np.int64)
    rest = np.full(H, _INF)
    base = np.empty(H)
    rows = np.empty(H)
    for h in range(H):
        a, b = starts[h], starts[h + 1]
        C, mand, base_sum = _cost_matrix(log_p, r, index[a:b], log_lam)
        base[h] = total_rate - base_sum
        rows[h] = _row_sum_bound(C)
        if n == 0:
            if not mand.any():
                costs[h, 0] = 0.0
                found[h] = 1
            continue
        q = _cap(C, counts[h], qrank)
        everything = q <= qrank
        if not everything:
            q = qrank
        if q == 0:
            continue
        c, cc, rr = ranked(C, mand, q, _INF)
        k = c.size
        for i in range(k):  # element by element: a slice assignment compiles numba's shape-error path
            costs[h, i] = c[i]
            for j in range(n):
                cols[h, i, j] = cc[i, j]
        found[h] = k
        if everything:
            rr = _INF  # q covers every assignment there is
        if rr < _INF:
            rr -= _SLACK * (1.0 + abs(rr))
        rest[h] = rr
    return costs, cols, found, rest, base, rows


@nb.njit(cache=True)
def _log_remaining(log_total, listed):
    """log(N - k) for N = exp(log_total) associations of which k are listed.

    :func:`nllbench.engine.logsum.log_remaining`, compiled.
    """
    if listed == 0:
        return log_total
    ratio = math.exp(math.log(listed) - log_total)
    if ratio >= 1.0 - 1e-12:
        return -_INF
    return log_total + math.log1p(-ratio)


@nb.njit(cache=True)
def _sum_for_budget(q, costs, found, rest, base, rows, log_w, log_counts):
    """value, lower, exact, n_terms, best hypothesis, best position (in search order) for budget q."""
    H = found.size
    total = 0
    for h in range(H):
        total += min(q, found[h])
    all_costs = np.empty(total)
    upper = np.empty(H)
    exact = True
    best_cost, best_h, best_pos = _INF, -1, -1
    t = 0
    for h in range(H):
        k = min(q, found[h])
        order = np.argsort(costs[h, :k], kind="mergesort")
        offset = base[h] - log_w[h]
        g = np.empty(k)
        for i in range(k):
            g[i] = costs[h, order[i]] + offset
            all_costs[t + i] = g[i]
        t += k
        if k and (best_h < 0 or g[0] < best_cost):
            best_cost, best_h, best_pos = g[0], h, order[0]
        if found[h] > q:
            nxt = costs[h, q]
            rest_h = nxt - _SLACK * (1.0 + abs(nxt)) + offset
        else:
            rest_h = rest[h] + offset
        log_listed = _logsumexp(-g)
        log_left = _log_remaining(log_counts[h], k)
        if math.isinf(rest_h) or log_left == -_INF:
            upper[h] = log_listed
            continue
        exact = False
        by_count = _logaddexp(log_listed, log_left - rest_h)
        by_rows = log_w[h] + (rows[h] - base[h])
        upper[h] = max(log_listed, min(by_count, by_rows))
    if total == 0:
        return _INF, _INF, True, 0, -1, -1
    value = -_logsumexp(-all_costs)
    lower = value if exact else min(value, -_logsumexp(upper))
    return value, lower, exact, total, best_h, best_pos


def mixture_murty(log_p, r, index, starts, log_lam, total_rate, log_w, counts, log_counts, qs, rank=None):
    """Per-hypothesis Murty NLL of a mixture for every budget in ``qs``.

    Parameters
    ----------
    log_p : (P, n) float
        log p_k(y_l) of every Bernoulli of the pool the hypotheses share.
    r : (P,) float
        Their existence probabilities.
    index : (M,) int
        The live hypotheses' Bernoullis, in turn, as rows of ``log_p`` and ``r``.
    starts : (H + 1,) int
        Hypothesis h holds rows ``index[starts[h]:starts[h + 1]]``.
    log_lam : (n,) float; total_rate : float
        The PPP at the truth, and its integral.
    log_w : (H,) float
        log weights of the live hypotheses.
    counts : (H,) int
        Number of associations of each hypothesis, capped at ``max(qs) + 1``.
    log_counts : (H,) float
        Their uncapped logs (:func:`nllbench.engine.assignment.count_assignments_log`).
    qs : list of int
    rank : int, optional
        Assignments to rank per hypothesis, at least ``max(qs)``; default ``max(qs) + 1`` (the
        one more bounds the unlisted rest). ``max(qs)`` suffices for the values alone: the first
        q of a longer ranking are the ranking for q (:func:`nllbench.engine._pruned.ranked`), so
        the values are the same bits; the bounds, exactness and counts need the default.

    Returns
    -------
    list of (value, lower, exact, n_terms, best_h, best_cols, base_best) per q;
    ``best_h`` is -1 when no association has non-zero likelihood.
    """
    qrank = max(qs) + 1 if rank is None else rank
    qrank = int(min(qrank, max(int(np.max(counts, initial=1)), 1)))
    costs, cols, found, rest, base, rows = _rank_all(
        np.ascontiguousarray(log_p),
        r,
        np.ascontiguousarray(index, dtype=np.int64),
        starts,
        log_lam,
        total_rate,
        counts,
        qrank,
    )
    out = []
    for q in qs:
        value, lower, exact, n_terms, best_h, best_pos = _sum_for_budget(
            q, costs, found, rest, base, rows, log_w, log_counts
        )
        best_cols = cols[best_h, best_pos].copy() if best_h >= 0 else None
        out.append((float(value), float(lower), bool(exact), int(n_terms), int(best_h), best_cols))
    return out
