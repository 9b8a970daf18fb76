"""Ranked assignment (Murty's algorithm) for the NLL's association problem.

The problem (paper eq. (7)-(8), transposed): ``n`` ground-truth objects
(rows) are each assigned to exactly one of ``M`` columns (the hypothesis'
Bernoullis followed by one private PPP column per object); a column takes at
most one object; columns flagged *mandatory* (Bernoullis with r = 1) must
take one. ``+inf`` marks a forbidden cell. We want the Q cheapest assignments
in increasing order of cost.

The compiled kernel (Murty's algorithm with shortest augmenting paths) is in
:mod:`nllbench.engine._murty`; :mod:`nllbench.engine._pruned` ranks only the
cells that can hold one of the Q best assignments, component by component.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from nllbench.engine._pruned import ranked

MAX_FINITE_COST = 1e250  # larger finite costs could overflow when summed
#: Largest Murty budget: the compiled ranking counts associations in 64-bit signed integers.
MAX_Q = 2**63 - 1


def check_q(q, name: str = "q") -> int:
    """A Murty budget as an int: an integer in [1, :data:`MAX_Q`] (``bool`` and non-integral numbers refused).

    The error names the parameter (``name``) and the allowed range.
    """
    if isinstance(q, bool) or not isinstance(q, (int, np.integer)):
        raise ValueError(f"{name}: expected a positive integer, got {q!r} (allowed: 1 to 2**63 - 1)")
    if not 1 <= q <= MAX_Q:
        shown = f"{q!r}" if abs(q) < 2**128 else f"an integer of {int(q).bit_length()} bits"
        raise ValueError(f"{name}: expected a positive integer, got {shown} (allowed: 1 to 2**63 - 1)")
    return int(q)


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
    q = check_q(q)
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
    costs, cols, rest = ranked(np.ascontiguousarray(C), mand, int(q), bound)
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


def kernels_cached() -> bool | None:
    """Whether numba's on-disk cache already holds the ranking kernel (a witness for the compiled
    kernels: the first use after installing compiles them); None when numba's cache layout is unknown."""
    import os

    try:
        return os.path.exists(ranked._cache._cache_file._index_path)
    except AttributeError:
        return None
