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
from nllbench.engine.densities import PMBM, Gaussians, MultiBernoulli, gaussian_logpdf
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
    if len(mb) and y.shape[0] and log_p is None:
        log_p = mb.densities.logpdf(y)
    return problem_of(mb.r, y.shape[0], log_lam, total_rate, log_p)


def problem_of(
    r: np.ndarray, n: int, log_lam: np.ndarray, total_rate: float, log_p: np.ndarray | None
) -> AssociationProblem:
    """The association problem of Bernoullis with existence ``r`` (m,) and ``log_p`` (m, n)
    = log p_k(y_l) at n truth objects (None when m or n is 0)."""
    m = r.shape[0]
    log_r, log_1mr = existence_logs(r)
    if not (m and n):
        log_p = np.zeros((m, n))
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


def existence_logs(r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(log r, log(1 - r))`` of existence probabilities ``r`` (m,): ``-inf`` at r = 0 and r = 1."""
    with np.errstate(divide="ignore"):
        return np.log(r), np.log1p(-r)


def decompose(prob: AssociationProblem, cols: np.ndarray) -> tuple[float, float, float]:
    """(localization, false, missed) of one association (eq. (11))."""
    return association_terms(prob.log_r, prob.log_1mr, prob.log_p, prob.log_lam, prob.total_rate, cols)


def association_terms(log_r, log_1mr, log_p, log_lam, total_rate: float, cols: np.ndarray, pool=None):
    """(localization, false, missed) of the association ``cols`` (n,) (eq. (11)) from its pieces.

    ``log_r``, ``log_1mr`` (m,) as :func:`existence_logs` gives them, ``log_p``
    (m, n) = log p_k(y_l) (any (m, n) array when m or n is 0), ``log_lam`` (n,):
    :func:`decompose` without building the cost matrix, the same sums in the same order.
    With ``pool`` (m,) int, ``log_p`` is a pool's (P, n) and Bernoulli k its row ``pool[k]``.
    """
    m = log_r.shape[0]
    to_bern = cols < m
    objects = np.flatnonzero(to_bern)
    ks = cols[to_bern]
    loc = -float((log_r[ks] + log_p[ks if pool is None else pool[ks], objects]).sum())
    free = np.ones(m, dtype=bool)
    free[ks] = False
    false = -float(log_1mr[free].sum())
    missed = total_rate - float(log_lam[~to_bern].sum())
    return loc + 0.0, false + 0.0, missed


def decomposed_result(value, lower, exact, terms, best_cols, log_w_h, n_terms, q, h) -> NLLResult:
    """The Murty NLL result with its decomposition ``terms`` = (localization, false, missed) at
    hypothesis ``h``'s best association ``best_cols`` (:func:`decompose`)."""
    loc, false, missed = terms
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
    """Per live hypothesis: its association problem; plus log w and log lambda(y).

    The Bernoullis are evaluated once each, as the pool's rows (:meth:`PMBM._table`).
    """
    n = y.shape[0]
    if pmbm.ppp is not None:
        total_rate = pmbm.ppp.total_rate
        log_lam = pmbm.ppp.log_intensity(y)
    else:
        total_rate = 0.0
        log_lam = np.full(n, -np.inf)
    with np.errstate(divide="ignore"):
        log_w = np.log(pmbm.weights)
    live = np.flatnonzero(pmbm.weights > 0)
    families, r, index, starts = pmbm._table(live)
    log_p = pool_logpdf(families, y)
    problems = {}
    for i, h in enumerate(live.tolist()):
        rows = index[starts[i] : starts[i + 1]]
        problems[h] = problem_of(r[rows], n, log_lam, total_rate, log_p[rows] if n else None)
    return problems, log_w, log_lam


def pool_logpdf(families: list, y: np.ndarray) -> np.ndarray:
    """log p_k(y_l) of every member of ``families``, stacked (M, n).

    Global hypotheses of a PMBM share most single-target hypotheses: a
    Gaussian that appears more than once (same mean and factor, bit for bit)
    is evaluated once. Each entry is computed on its own, so neither this
    sharing nor evaluating a shared pool instead of each hypothesis' copy
    changes a bit.
    """
    n = y.shape[0]
    sizes = [len(f) for f in families]
    if sum(sizes) == 0 or n == 0:
        return np.zeros((sum(sizes), n))
    if len(families) == 1 and isinstance(families[0], Gaussians):
        # one family (a single hypothesis, or a pooled PMBM's pool, whose members are stored once):
        # no other hypothesis' copies to share, so every member is evaluated as it stands
        f = families[0]
        return gaussian_logpdf(f.means, f._chol, f._log_norm, y)
    if not all(isinstance(f, Gaussians) for f in families):
        return np.concatenate([f.logpdf(y) if len(f) else np.zeros((0, n)) for f in families])
    means = np.concatenate([f.means for f in families])
    chol = np.concatenate([f._chol for f in families])
    log_norm = np.concatenate([f._log_norm for f in families])
    key = np.concatenate([means, chol.reshape(chol.shape[0], -1), log_norm[:, None]], axis=1)
    # sort by a fixed linear hash (identical rows hash identically), then
    # group runs of identical rows: a collision only splits a group
    weights = np.random.default_rng(20211).uniform(0.5, 1.5, key.shape[1])
    with np.errstate(over="ignore", invalid="ignore"):  # an inf or NaN hash only splits groups
        order = np.argsort(key @ weights, kind="stable")
    ordered = key[order]
    new_group = np.ones(order.size, dtype=bool)
    new_group[1:] = np.any(ordered[1:] != ordered[:-1], axis=1)
    first = order[new_group]
    group = np.empty(order.size, dtype=np.int64)
    group[order] = np.cumsum(new_group) - 1
    unique_p = gaussian_logpdf(means[first], chol[first], log_norm[first], y)
    return unique_p[group]
