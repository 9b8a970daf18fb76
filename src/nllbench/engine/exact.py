"""The exact NLL of a PMBM: every association summed by a subset dynamic programme.

``method="exact"`` of :func:`nllbench.engine.nll.nll`: per hypothesis, the sum
over all associations of Pinto et al. (IEEE SPL 2021, eq. (2)-(4)) as a table
over subsets of the smaller side, O(n m 2^min(n, m)) (see docs/nll.md,
"Exactness and bounds").
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np
from scipy.special import logsumexp

from nllbench.engine.assignment import ranked_in_search_order
from nllbench.engine.association import AssociationProblem, decompose, impossible
from nllbench.engine.densities import PMBM
from nllbench.engine.result import NLLResult, association_remainder

# Largest min(n, m) * max(n, m) * 2**min(n, m) the exact method accepts.
EXACT_WORK_LIMIT = 2e8


def log_sum_all(prob: AssociationProblem) -> float:
    """log of the sum over *every* association's likelihood (subset DP, exact).

    Iterates over the larger side and keeps a table over subsets of the
    smaller side: O(n m 2^min(n, m)).
    """
    return float(logsumexp(_all_exponents(prob))) - prob.total_rate


def _all_exponents(prob: AssociationProblem) -> np.ndarray:
    """The terms whose log-sum-exp, minus Lambda, is :func:`log_sum_all` (2^min(n, m),)."""
    m, n = prob.log_p.shape
    log_w = prob.log_r[:, None] + prob.log_p  # (m, n): log r_k p_k(y_l)
    if n <= m:  # Bernoullis outside (each detects one object or none), objects in the mask
        return _matchings_exponents(log_w, prob.log_1mr, prob.log_lam)
    return _matchings_exponents(log_w.T, prob.log_lam, prob.log_1mr)


def log_sum_all_many(problems: list) -> list[float]:
    """:func:`log_sum_all` of each problem, bit for bit: tables of equal size share one
    ``logsumexp(axis=1)`` call (row by row the same operations as one call each; a call
    per hypothesis was most of the exact NLL's time)."""
    exps = [_all_exponents(prob) for prob in problems]
    out = [0.0] * len(problems)
    by_size: dict[int, list[int]] = {}
    for i, e in enumerate(exps):
        by_size.setdefault(e.size, []).append(i)
    for idx in by_size.values():
        sums = logsumexp(np.stack([exps[i] for i in idx]), axis=1)
        for i, total in zip(idx, sums, strict=True):
            out[i] = float(total) - problems[i].total_rate
    return out


#: log 2 (numpy's NPY_LOGE2 rounds to the same double)
_LOG2 = math.log(2.0)


@nb.njit(cache=True)
def _logaddexp(x: float, y: float) -> float:
    """log(exp(x) + exp(y)), operation for operation as numpy's ``logaddexp`` (npymath) computes it."""
    if x == y:  # equal infinities without a NaN
        return x + _LOG2
    d = x - y
    if d > 0:
        return x + math.log1p(math.exp(-d))
    if d <= 0:
        return y + math.log1p(math.exp(d))
    return d  # NaN


@nb.njit(cache=True)
def _matchings_table(log_w: np.ndarray, log_alone_outer: np.ndarray) -> np.ndarray:
    """The subset DP of :func:`_log_sum_matchings` over the outer items: the table, (2^b,).

    The same sums in the same order as the vectorised form (per outer item,
    the unmatched factor, then the inner items j = 0, 1, ... in turn), so the
    values agree to the last bit; compiled because the table is walked
    ``a * b`` times per association problem.
    """
    a, b = log_w.shape
    size = 1 << b
    dp = np.full(size, -np.inf)
    dp[0] = 0.0
    new = np.empty(size)
    for i in range(a):
        for mask in range(size):
            new[mask] = dp[mask] + log_alone_outer[i]
        for j in range(b):
            bit = 1 << j
            w = log_w[i, j]
            for mask in range(size):
                if mask & bit:
                    new[mask] = _logaddexp(new[mask], dp[mask ^ bit] + w)
        dp, new = new, dp
    return dp


def _log_sum_matchings(log_w: np.ndarray, log_alone_outer: np.ndarray, log_alone_inner: np.ndarray) -> float:
    """log sum over partial matchings of ``exp(sum log_w[i, j] + unmatched factors)``.

    ``log_w`` (a, b): a pair (i, j) matched; ``log_alone_outer`` (a,) and
    ``log_alone_inner`` (b,): the factor of an unmatched item of each side.
    The table holds, per subset (bit mask) of the b inner items, the log
    sum over matchings of the outer items seen so far that cover exactly
    that subset; the unmatched inner items' factors are added at the end.
    """
    return float(logsumexp(_matchings_exponents(log_w, log_alone_outer, log_alone_inner)))


def _matchings_exponents(
    log_w: np.ndarray, log_alone_outer: np.ndarray, log_alone_inner: np.ndarray
) -> np.ndarray:
    """The (2^b,) terms whose log-sum-exp is :func:`_log_sum_matchings`: table plus unmatched factors."""
    a, b = log_w.shape
    idx = np.arange(1 << b)
    dp = _matchings_table(np.ascontiguousarray(log_w, dtype=float), np.asarray(log_alone_outer, dtype=float))
    rest = np.zeros(1 << b)  # sum of the factors of the inner items NOT in the mask
    for j in range(b):
        rest = rest + np.where((idx & (1 << j)) == 0, log_alone_inner[j], 0.0)
    return dp + rest


def nll_pmbm_exact(
    pmbm: PMBM, problems: dict[int, AssociationProblem], log_w: np.ndarray, q: int
) -> NLLResult:
    best = (math.inf, -1, None)
    for h, prob in problems.items():
        n, cols = prob.cost.shape
        m = cols - n
        small, large = min(n, m), max(n, m)
        if small * max(large, 1) * 2.0**small > EXACT_WORK_LIMIT:
            raise ValueError(
                f"method: 'exact' would enumerate 2^{small} subsets for hypothesis {h} "
                f"(n={n} objects, m={m} Bernoullis); use method='murty' with a large q"
            )
        # the problem is valid by construction: murty's checks are skipped, the ranking is its own
        top_costs, top_cols, _ = ranked_in_search_order(prob.cost, prob.mandatory, 1)
        if top_costs.size:
            c = float(top_costs[0]) + prob.base - log_w[h]
            if c < best[0]:
                best = (c, h, top_cols[0])
    sums = log_sum_all_many(list(problems.values()))
    terms = [log_w[h] + total for h, total in zip(problems, sums, strict=True)]
    if best[1] < 0:
        return impossible(pmbm, problems, "exact", q)
    value = -float(logsumexp(terms))
    _, best_h, best_cols = best
    loc, false, missed = decompose(problems[best_h], best_cols)
    mixture = -float(log_w[best_h]) + 0.0
    assoc = association_remainder(value, loc + false + missed + mixture)
    return NLLResult(
        value,
        value,
        value,
        True,
        localization=loc,
        false=false,
        missed=missed,
        mixture=mixture,
        association=assoc,
        n_terms=-1,
        method="exact",
        q=q,
        best_hypothesis=best_h,
        best_assignment=best_cols,
    )
