"""One global hypothesis's association problem, shared by the Murty and exact routes.

The cost matrix of Pinto et al. (IEEE SPL 2021, eq. (7)-(8)) per live
hypothesis of a PMBM, the decomposition of one association into the eq. (11)
terms, and the result of a truth whose likelihood is 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from nllbench.engine.assignment import MAX_FINITE_COST, murty
from nllbench.engine.densities import PMBM, MultiBernoulli, batched_logpdf
from nllbench.engine.result import NLLResult, association_remainder

# Association costs above this are forbidden cells: exp(-1e250) is 0 in double
# precision (it underflows below 1e-308 long before), and the Murty core only
# takes finite costs whose sums cannot overflow.
FORBIDDEN_COST = MAX_FINITE_COST


@dataclass(frozen=True)
class AssociationProblem:
    """The association problem of one global hypothesis (paper eq. (7)-(8)).

    Attributes
    ----------
    cost : (n, m + n) float
        ``cost[l, k]`` for Bernoulli k < m: ``-log(r_k p_k(y_l) / (1 - r_k))``
        (``-log p_k(y_l)`` when r_k = 1, ``+inf`` when r_k = 0);
        ``cost[l, m + l] = -log lambda(y_l)``; other PPP cells ``+inf``, and
        so is every cell above ``FORBIDDEN_COST`` (its likelihood factor
        ``exp(-cost)`` is exactly 0 in double precision).
    mandatory : (m + n,) bool
        Bernoullis with r = 1 (they must take an object).
    base : float
        Cost of the empty association: ``Lambda - sum_{r_k < 1} log(1 - r_k)``.
    log_r, log_1mr, log_p, log_lam : the pieces, shapes (m,), (m,), (m, n), (n,)
    """

    cost: np.ndarray
    mandatory: np.ndarray
    base: float
    log_r: np.ndarray
    log_1mr: np.ndarray
    log_p: np.ndarray
    log_lam: np.ndarray
    total_rate: float


def association_problem(
    mb: MultiBernoulli, y: np.ndarray, log_lam: np.ndarray, total_rate: float, log_p: np.ndarray | None = None
) -> AssociationProblem:
    """Build hypothesis ``mb``'s cost matrix for truth ``y`` (n, d).

    ``log_p`` (m, n), if given, is ``mb.densities.logpdf(y)`` computed beforehand.
    """
    n = y.shape[0]
    m = len(mb)
    r = mb.r
    with np.errstate(divide="ignore"):
        log_r = np.log(r)
        log_1mr = np.log1p(-r)
    if not (m and n):
        log_p = np.zeros((m, n))
    elif log_p is None:
        log_p = mb.densities.logpdf(y)
    sure = r == 1.0
    cost = np.full((n, m + n), np.inf)
    # -(log r + log p - log(1 - r)); for r = 1 the (1 - r) factor is absent
    cost[:, :m] = -(log_r[:, None] + log_p - np.where(sure, 0.0, log_1mr)[:, None]).T
    cost[np.arange(n), m + np.arange(n)] = -log_lam
    # A factor exp(-cost) with cost above FORBIDDEN_COST is 0 in double
    # precision whatever the other factors (|log| of any density value stays
    # far below it), so such a cell is forbidden in all but name: mark it so,
    # which also keeps every sum of costs finite.
    cost[cost > FORBIDDEN_COST] = np.inf
    mandatory = np.zeros(m + n, dtype=bool)
    mandatory[:m] = sure
    base = total_rate - float(np.sum(log_1mr[~sure]))
    return AssociationProblem(cost, mandatory, base, log_r, log_1mr, log_p, log_lam, total_rate)


def decompose(prob: AssociationProblem, cols: np.ndarray) -> tuple[float, float, float]:
    """(localization, false, missed) of one association (eq. (11))."""
    m = prob.log_r.shape[0]
    to_bern = cols < m
    rows = np.flatnonzero(to_bern)
    ks = cols[to_bern]
    loc = -float(np.sum(prob.log_r[ks] + prob.log_p[ks, rows]))
    free = np.ones(m, dtype=bool)
    free[ks] = False
    false = -float(np.sum(prob.log_1mr[free]))
    missed = prob.total_rate - float(np.sum(prob.log_lam[~to_bern]))
    return loc + 0.0, false + 0.0, missed


def decomposed_result(value, lower, exact, problem, best_cols, log_w_h, n_terms, q, h) -> NLLResult:
    """The Murty NLL result with its decomposition at hypothesis ``h``'s best association."""
    loc, false, missed = decompose(problem, best_cols)
    mixture = -log_w_h + 0.0
    return NLLResult(
        value,
        lower,
        value,
        exact,
        localization=loc,
        false=false,
        missed=missed,
        mixture=mixture,
        association=association_remainder(value, loc + false + missed + mixture),
        n_terms=n_terms,
        method="murty",
        q=q,
        best_hypothesis=h,
        best_assignment=best_cols,
    )


def impossible(pmbm: PMBM, problems: dict[int, AssociationProblem], method: str, q: int) -> NLLResult:
    """Result for a truth of likelihood 0, naming the term that makes it so."""
    inf = math.inf
    h = int(np.argmax(pmbm.weights))
    prob = problems.get(h)
    objects_unexplained = True
    if pmbm.ppp is not None and pmbm.ppp.total_rate == inf:
        pass  # exp(-Lambda) = 0: the PPP's term (missed) is the infinite one
    elif prob is not None and prob.cost.shape[0] <= prob.cost.shape[1]:
        free = murty(prob.cost, 1) if prob.cost.shape[0] else None
        objects_unexplained = free is not None and free.costs.size == 0
    if objects_unexplained:
        return NLLResult(inf, inf, inf, True, missed=inf, n_terms=0, method=method, q=q)
    return NLLResult(inf, inf, inf, True, false=inf, n_terms=0, method=method, q=q)


def pmbm_problems(pmbm: PMBM, y: np.ndarray):
    """Per live hypothesis: its association problem; plus log w and log lambda(y)."""
    n = y.shape[0]
    if pmbm.ppp is not None:
        total_rate = pmbm.ppp.total_rate
        log_lam = pmbm.ppp.log_intensity(y)
    else:
        total_rate = 0.0
        log_lam = np.full(n, -np.inf)
    with np.errstate(divide="ignore"):
        log_w = np.log(pmbm.weights)
    live = [h for h in range(len(pmbm.hypotheses)) if pmbm.weights[h] > 0]
    hyps = [pmbm.hypotheses[h] for h in live]
    log_ps = batched_logpdf([mb.densities for mb in hyps], y) if n else [None] * len(hyps)
    problems = {
        h: association_problem(mb, y, log_lam, total_rate, lp)
        for h, mb, lp in zip(live, hyps, log_ps, strict=True)
    }
    return problems, log_w, log_lam
