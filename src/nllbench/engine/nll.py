"""Negative log-likelihood of a multi-object density at the ground-truth set.

NLL(Y, f) = -log f(Y)   (Pinto et al., IEEE SPL 2021, eq. (1)).

* PPP and i.i.d. cluster (PHD, CPHD): closed forms, exact.
* PMBM and its special cases (PMB, MBM, MBM01, MB): a sum over global
  hypotheses h and over associations A of the truth to Bernoullis or the PPP
  (eq. (2)-(4)). ``method="murty"`` keeps the Q cheapest associations of
  each hypothesis (eq. (9)); ``method="exact"`` sums over every association
  with a subset dynamic programme (exponential only in min(n, m)).

Everything is computed in log space. ``+inf`` is returned exactly when the
density gives the truth likelihood zero (too many objects for an MB with no
PPP, an r = 1 Bernoulli with no object to explain, a PPP with zero intensity
at an object, more objects than a CPHD cardinality allows).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numba as nb
import numpy as np
from scipy.special import gammaln, logsumexp

from nllbench.engine import validate as v
from nllbench.engine._mixture import mixture_murty
from nllbench.engine.assignment import (
    MAX_FINITE_COST,
    count_assignments,
    count_assignments_log,
    murty,
    ranked_in_search_order,
)
from nllbench.engine.densities import (
    PMBM,
    PPP,
    Gaussians,
    IIDCluster,
    MultiBernoulli,
    _gaussian_logpdf,
    as_pmbm,
    batched_logpdf,
)

#: The NLL decomposition (:meth:`NLLResult.terms`): the terms sum to the value (Pinto et al., IEEE SPL
#: 2021, eq. (10) and the discussion after it); :mod:`nllbench.measures.names` names the rest.
NLL_TERMS = ("localization", "false", "missed", "cardinality", "mixture", "association")
_METHODS = ("murty", "exact")
_BUDGETS = ("hypothesis", "global")
# Largest min(n, m) * max(n, m) * 2**min(n, m) the exact method accepts.
EXACT_WORK_LIMIT = 2e8
# Association costs above this are forbidden cells: exp(-1e250) is 0 in double
# precision (it underflows below 1e-308 long before), and the Murty core only
# takes finite costs whose sums cannot overflow.
FORBIDDEN_COST = MAX_FINITE_COST


@dataclass(frozen=True)
class NLLResult:
    """The NLL of a density at a truth set, with bounds and decomposition.

    Attributes
    ----------
    value : float
        The NLL (approximate for ``method="murty"`` unless ``exact``);
        ``+inf`` exactly when the likelihood is 0.
    lower, upper : float
        Bounds on the exact NLL: ``lower <= exact NLL <= upper``; equal to
        ``value`` when ``exact``. For Murty, ``upper == value`` (dropping
        associations only lowers the likelihood).
    exact : bool
        True when every association with non-zero likelihood was summed.
    localization, false, missed : float
        The paper's eq. (11) terms for the single best (hypothesis,
        association) pair: ``-sum log(r_i p_i(y_j))`` over matched pairs,
        ``-sum log(1 - r_i)`` over unmatched Bernoullis, and
        ``Lambda - sum log lambda(y_j)`` over objects left to the PPP.
    cardinality : float
        i.i.d. cluster only: ``-log(n! p(n))``; the spatial part is in
        ``localization``. 0 for other families.
    mixture : float
        ``-log w_h`` of the best hypothesis (0 for a single hypothesis).
    association : float
        ``value`` minus all other terms: ``-log`` of (summed likelihood /
        best term), so <= 0; it measures association uncertainty.

        The terms always sum to ``value``. For an impossible truth
        (``value = +inf``) the term that makes it impossible is ``+inf``
        (``missed`` when some object cannot be explained, ``false`` when an
        r = 1 Bernoulli cannot be matched, ``cardinality`` for a CPHD) and
        the others are 0.
    n_terms : int
        Number of (hypothesis, association) terms summed (Murty), or the
        number of associations of non-zero likelihood for closed forms and
        the exact method where known (-1 if not counted).
    method : str
    q : int
    """

    value: float
    lower: float
    upper: float
    exact: bool
    localization: float = 0.0
    false: float = 0.0
    missed: float = 0.0
    cardinality: float = 0.0
    mixture: float = 0.0
    association: float = 0.0
    n_terms: int = -1
    method: str = "murty"
    q: int = 1
    best_hypothesis: int = field(default=-1, repr=False)
    best_assignment: np.ndarray | None = field(default=None, repr=False, compare=False)

    def terms(self) -> dict[str, float]:
        """The decomposition as a dict; its values sum to ``value``."""
        return {name: getattr(self, name) for name in NLL_TERMS}


def nll(density, truth, q: int = 1, method: str = "murty", budget: str = "hypothesis") -> NLLResult:
    """Negative log-likelihood of ``density`` at the ground-truth set ``truth``.

    Parameters
    ----------
    density : PPP, IIDCluster, MultiBernoulli or PMBM
    truth : (n, d) array_like
        Ground-truth object states; ``n = 0`` (an empty set) is allowed.
    q : int
        Murty budget: associations kept per hypothesis (or in total with
        ``budget="global"``).
    method : {"murty", "exact"}
        ``"murty"``: the Q best associations (paper eq. (9)), exact when Q
        reaches the number of associations. ``"exact"``: every association.
    budget : {"hypothesis", "global"}
        ``"hypothesis"`` (the paper's approximation): Q associations per
        global hypothesis. ``"global"`` (an nllbench extension): the Q best
        (hypothesis, association) pairs over all hypotheses together.

    Returns
    -------
    NLLResult

    Notes
    -----
    For hypothesis h with Bernoullis (r_k, p_k) and PPP intensity lambda
    (Lambda its integral), an association A sends each object to one
    Bernoulli (at most one object each) or to the PPP. Its likelihood is
    ``exp(-Lambda) prod_{k free} (1 - r_k) prod_{(k,l) in A} r_k p_k(y_l)
    prod_{l to PPP} lambda(y_l)`` and f(Y) = sum_h w_h sum_A of that.

    Examples
    --------
    >>> import numpy as np, nllbench as nb
    >>> mb = nb.MultiBernoulli.gaussian([0.9], [[0.0, 0.0]], [np.eye(2)])
    >>> round(nb.nll(mb, [[0.0, 0.0]]).value, 4)  # -log(0.9 / (2 pi))
    1.9433
    """
    if method not in _METHODS:
        raise ValueError(f"method: expected one of {_METHODS}, got {method!r}")
    if budget not in _BUDGETS:
        raise ValueError(f"budget: expected one of {_BUDGETS}, got {budget!r}")
    q = _budget_value(q, "q")
    density = as_pmbm(density)
    if not isinstance(density, (PPP, IIDCluster, PMBM)):
        raise TypeError(
            f"density: expected PPP, IIDCluster, MultiBernoulli or PMBM, got {type(density).__name__}"
        )
    y = v.truth_set(truth, density.dim)
    if isinstance(density, PPP):
        return _nll_ppp(density, y, method, q)
    if isinstance(density, IIDCluster):
        return _nll_iid(density, y, method, q)
    return _nll_pmbm(density, y, q, method, budget)


def nll_many(density, truth, qs, budget: str = "hypothesis") -> list[NLLResult]:
    """``[nll(density, truth, q) for q in qs]`` (Murty), ranking each hypothesis once.

    With the per-hypothesis budget the Q best associations for every Q in
    ``qs`` are prefixes of one ranking at ``max(qs)``, so this costs about as
    much as the largest Q alone. Results equal those of separate calls to the
    last bit (see docs/nll.md, "Floating-point edges").
    """
    if isinstance(qs, (str, bytes)) or not hasattr(qs, "__iter__"):
        raise TypeError(f"qs: expected a sequence of positive integers, got {qs!r}")
    qs = [_budget_value(q, f"qs[{i}]") for i, q in enumerate(qs)]
    if not qs:
        raise ValueError("qs: expected at least one positive integer, got an empty sequence")
    if budget not in _BUDGETS:
        raise ValueError(f"budget: expected one of {_BUDGETS}, got {budget!r}")
    density = as_pmbm(density)
    if not isinstance(density, PMBM):
        return [nll(density, truth, q=q) for q in qs]
    y = v.truth_set(truth, density.dim)
    return _nll_pmbm_murty(density, y, qs, budget)


def _budget_value(q, name: str) -> int:
    """A Murty budget: a positive integer (``bool`` and non-integral numbers refused)."""
    if isinstance(q, bool) or not isinstance(q, (int, np.integer)) or q < 1:
        raise ValueError(f"{name}: expected a positive integer, got {q!r}")
    return int(q)


def _decomposed_result(value, lower, exact, problem, best_cols, log_w_h, n_terms, q, h) -> NLLResult:
    """The Murty NLL result with its decomposition at hypothesis ``h``'s best association."""
    loc, false, missed = _decompose(problem, best_cols)
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
        association=_association_remainder(value, loc + false + missed + mixture),
        n_terms=n_terms,
        method="murty",
        q=q,
        best_hypothesis=h,
        best_assignment=best_cols,
    )


def _association_remainder(value: float, named: float) -> float:
    """The association term ``value - named`` (the other terms' sum).

    When the likelihood is 0 (``value = +inf``), the infinite named term
    already accounts for it and the remainder is 0, never ``inf - inf``.
    """
    if value == math.inf:
        return 0.0
    return value - named


# ---------------------------------------------------------------------------
# closed forms
# ---------------------------------------------------------------------------


def _nll_ppp(ppp: PPP, y: np.ndarray, method: str, q: int) -> NLLResult:
    """NLL = Lambda - sum_l log lambda(y_l)  (eq. (3))."""
    value = ppp.total_rate - float(np.sum(ppp.log_intensity(y)))
    return NLLResult(value, value, value, True, missed=value, n_terms=1, method=method, q=q)


def _nll_iid(c: IIDCluster, y: np.ndarray, method: str, q: int) -> NLLResult:
    """NLL = -log n! - log p(n) - sum_l log s(y_l)  (eq. (1) and the text after it)."""
    n = y.shape[0]
    if n > c.max_cardinality or c.cardinality[n] == 0:
        inf = math.inf
        return NLLResult(inf, inf, inf, True, cardinality=inf, n_terms=0, method=method, q=q)
    card = -float(gammaln(n + 1)) - math.log(c.cardinality[n])
    loc = -float(np.sum(c.log_spatial(y))) if n else 0.0
    value = card + loc
    return NLLResult(
        value, value, value, True, localization=loc, cardinality=card, n_terms=1, method=method, q=q
    )


# ---------------------------------------------------------------------------
# PMBM family
# ---------------------------------------------------------------------------


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


def _decompose(prob: AssociationProblem, cols: np.ndarray) -> tuple[float, float, float]:
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


def _log_sum_all(prob: AssociationProblem) -> float:
    """log of the sum over *every* association's likelihood (subset DP, exact).

    Iterates over the larger side and keeps a table over subsets of the
    smaller side: O(n m 2^min(n, m)).
    """
    return float(logsumexp(_all_exponents(prob))) - prob.total_rate


def _all_exponents(prob: AssociationProblem) -> np.ndarray:
    """The terms whose log-sum-exp, minus Lambda, is :func:`_log_sum_all` (2^min(n, m),)."""
    m, n = prob.log_p.shape
    log_w = prob.log_r[:, None] + prob.log_p  # (m, n): log r_k p_k(y_l)
    if n <= m:  # Bernoullis outside (each detects one object or none), objects in the mask
        return _matchings_exponents(log_w, prob.log_1mr, prob.log_lam)
    return _matchings_exponents(log_w.T, prob.log_lam, prob.log_1mr)


def _log_sum_all_many(problems: list) -> list[float]:
    """:func:`_log_sum_all` of each problem, bit for bit: tables of equal size share one
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


def _impossible(pmbm: PMBM, problems: dict[int, AssociationProblem], method: str, q: int) -> NLLResult:
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


def _pmbm_problems(pmbm: PMBM, y: np.ndarray):
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


def _nll_pmbm(pmbm: PMBM, y: np.ndarray, q: int, method: str, budget: str) -> NLLResult:
    if pmbm.ppp is not None and pmbm.ppp.total_rate == math.inf:
        return _impossible(pmbm, {}, method, q)  # exp(-Lambda) = 0 multiplies every term
    if method == "exact":
        problems, log_w, _ = _pmbm_problems(pmbm, y)
        return _nll_pmbm_exact(pmbm, problems, log_w, q)
    return _nll_pmbm_murty(pmbm, y, [q], budget)[0]


def _nll_pmbm_murty(pmbm: PMBM, y: np.ndarray, qs: list[int], budget: str) -> list[NLLResult]:
    """Murty results for several budgets; per-hypothesis budgets share one ranking."""
    if pmbm.ppp is not None and pmbm.ppp.total_rate == math.inf:
        return [_impossible(pmbm, {}, "murty", q) for q in qs]  # exp(-Lambda) = 0 multiplies every term
    if budget == "global":
        problems, log_w, log_lam = _pmbm_problems(pmbm, y)
        return [
            _murty_result(pmbm, y, problems, log_w, log_lam, *_rank_global(problems, log_w, q), q) for q in qs
        ]
    return _nll_pmbm_compiled(pmbm, y, qs)


def _nll_pmbm_compiled(pmbm: PMBM, y: np.ndarray, qs: list[int]) -> list[NLLResult]:
    """Per-hypothesis budgets through the compiled mixture pass (:mod:`nllbench.engine._mixture`).

    Every hypothesis is ranked once, one association beyond the largest
    budget: for every q the listed associations are the first q found (a
    prefix that does not depend on the budget, see
    :func:`nllbench.engine.assignment.ranked_in_search_order`) and the (q+1)-th
    bounds every unlisted one, so ``nll(q)`` and ``nll_many`` agree to the
    last bit.
    """
    n = y.shape[0]
    total_rate, log_lam = _ppp_at(pmbm, y)
    with np.errstate(divide="ignore"):
        log_w_all = np.log(pmbm.weights)
    live = np.flatnonzero(pmbm.weights > 0)
    hyps = [pmbm.hypotheses[h] for h in live]
    log_p = _shared_logpdf([mb.densities for mb in hyps], y)
    r = np.concatenate([mb.r for mb in hyps])
    starts = np.zeros(len(hyps) + 1, dtype=np.int64)
    starts[1:] = np.cumsum([len(mb) for mb in hyps])
    n_forced = int(np.sum(log_lam == -np.inf))
    cumulative = np.concatenate([[0], np.cumsum(r > 0)])
    alive = cumulative[starts[1:]] - cumulative[starts[:-1]]  # Bernoullis with r > 0, per hypothesis
    cap = max(qs) + 2
    sizes, which = np.unique(alive, return_inverse=True)
    counts = np.array([_capped_count(n, int(a), n_forced, cap) for a in sizes], dtype=np.int64)[which]
    log_counts = np.array([count_assignments_log(n, int(a), n_forced) for a in sizes])[which]
    ranked = mixture_murty(log_p, r, starts, log_lam, total_rate, log_w_all[live], counts, log_counts, qs)
    out = []
    for q, (value, lower, exact, n_terms, best, best_cols) in zip(qs, ranked, strict=True):
        if best < 0:
            h = int(np.argmax(pmbm.weights))
            i = int(np.searchsorted(live, h))
            prob = association_problem(
                pmbm.hypotheses[h], y, log_lam, total_rate, log_p[starts[i] : starts[i + 1]]
            )
            out.append(_impossible(pmbm, {h: prob}, "murty", q))
            continue
        h = int(live[best])
        prob = association_problem(
            pmbm.hypotheses[h], y, log_lam, total_rate, log_p[starts[best] : starts[best + 1]]
        )
        out.append(
            _decomposed_result(value, lower, exact, prob, best_cols, float(log_w_all[h]), n_terms, q, h)
        )
    return out


def _capped_count(n: int, m: int, forced: int, cap: int) -> int:
    """min(number of associations, cap), without big integers when the count is clearly larger."""
    if count_assignments_log(n, m, forced) > math.log(cap) + 1.0:
        return cap
    return min(count_assignments(n, m, forced), cap)


def _ppp_at(pmbm: PMBM, y: np.ndarray) -> tuple[float, np.ndarray]:
    """(Lambda, log lambda(y)) of the PMBM's PPP; (0, -inf) without one."""
    if pmbm.ppp is None:
        return 0.0, np.full(y.shape[0], -np.inf)
    return pmbm.ppp.total_rate, pmbm.ppp.log_intensity(y)


def _shared_logpdf(families: list, y: np.ndarray) -> np.ndarray:
    """log p_k(y_l) of every member of ``families``, stacked (M, n).

    Global hypotheses of a PMBM share most single-target hypotheses: a
    Gaussian that appears in several of them (same mean and factor, bit for
    bit) is evaluated once. Each entry is computed on its own, so sharing
    changes no bit.
    """
    n = y.shape[0]
    sizes = [len(f) for f in families]
    if sum(sizes) == 0 or n == 0:
        return np.zeros((sum(sizes), n))
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
    unique_p = _gaussian_logpdf(means[first], chol[first], log_norm[first], y)
    return unique_p[group]


def _rank_global(problems, log_w, q: int):
    """The q best (hypothesis, association) pairs overall (global budget)."""
    order = sorted(problems, key=lambda h: -log_w[h])
    found: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    rest_by_h: dict[int, float] = {}
    threshold = math.inf  # the q-th best global cost so far
    for h in order:
        prob = problems[h]
        offset = prob.base - log_w[h]
        ranked = murty(prob.cost, q, prob.mandatory, threshold - offset)
        found[h] = (ranked.costs + offset, ranked.columns)
        rest_by_h[h] = ranked.rest + offset
        threshold = _trim_to_global_budget(found, rest_by_h, q)
    return found, rest_by_h


def _murty_result(pmbm, y, problems, log_w, log_lam, found, rest_by_h, q: int) -> NLLResult:
    """NLLResult from the listed associations ``found`` (global costs) and the rest bounds."""
    n = y.shape[0]
    live = list(problems)
    costs_by_h = {h: c for h, (c, _) in found.items()}
    all_costs = np.concatenate([costs_by_h[h] for h in live]) if live else np.empty(0)
    if all_costs.size == 0:
        return _impossible(pmbm, problems, "murty", q)
    value = -_logsumexp(-all_costs)
    # Bounds on the exact NLL: per hypothesis, the unlisted associations sum to
    # at most (their count) x exp(-rest), and the whole sum to at most the
    # product of row sums (a permanent bound); keep the smaller.
    exact = True
    upper_terms = []
    n_forced = int(np.sum(log_lam == -np.inf))
    for h in live:
        log_listed = _logsumexp(-costs_by_h[h])
        log_count = count_assignments_log(n, int(np.sum(pmbm.hypotheses[h].r > 0)), n_forced)
        log_left = _log_remaining(log_count, costs_by_h[h].size)
        if math.isinf(rest_by_h[h]) or log_left == -math.inf:
            upper_terms.append(log_listed)
            continue
        exact = False
        by_count = float(np.logaddexp(log_listed, log_left - rest_by_h[h]))
        by_rows = log_w[h] + _log_row_sum_bound(problems[h])
        upper_terms.append(max(log_listed, min(by_count, by_rows)))
    # (min: the per-hypothesis sums may round an ulp away from the global one)
    lower = value if exact else min(value, -_logsumexp(np.array(upper_terms)))
    listed = [h for h in live if costs_by_h[h].size]  # not empty: all_costs is not
    best_h = min(listed, key=lambda h: costs_by_h[h][0])
    best_cols = found[best_h][1][0]
    return _decomposed_result(
        value, lower, exact, problems[best_h], best_cols, float(log_w[best_h]), int(all_costs.size), q, best_h
    )


def _logsumexp(a: np.ndarray) -> float:
    """log(sum(exp(a))) of a 1-D array; -inf for an empty or all -inf array."""
    if a.size == 0:
        return -math.inf
    top = float(np.max(a))
    if top == -math.inf:
        return -math.inf
    return top + math.log(float(np.sum(np.exp(a - top))))


def _trim_to_global_budget(found, rest_by_h, q: int) -> float:
    """Keep the q cheapest (hypothesis, association) pairs over ``found``, in place.

    Dropped pairs lower their hypothesis' ``rest``. Returns the q-th cost
    (``inf`` while fewer than q pairs are kept).
    """
    hs = list(found)
    costs = np.concatenate([found[h][0] for h in hs])
    if costs.size <= q:
        return math.inf
    owner = np.concatenate([np.full(found[h][0].size, h) for h in hs])
    cut = float(np.partition(costs, q - 1)[q - 1])
    # keep everything below the cut, then fill up to q with ties at the cut
    keep = costs < cut
    ties = np.flatnonzero(costs == cut)[: q - int(keep.sum())]
    keep[ties] = True
    for h in hs:
        mine = owner == h
        k = keep[mine]
        c, cols = found[h]
        if not k.all():
            rest_by_h[h] = min(rest_by_h[h], float(c[~k].min()))
            found[h] = (c[k], cols[k])
    return cut


def _log_row_sum_bound(prob: AssociationProblem) -> float:
    """log of exp(-base) prod_l sum_j exp(-cost[l, j]) >= the sum over all associations.

    Summing over every map of objects to columns, injective or not, can
    only add non-negative terms.
    """
    if prob.cost.shape[0] == 0:
        return -prob.base
    a = -prob.cost
    top = a.max(axis=1)
    if np.any(top == -np.inf):
        return -math.inf
    return -prob.base + float(np.sum(top + np.log(np.exp(a - top[:, None]).sum(axis=1))))


def _log_remaining(log_total: float, listed: int) -> float:
    """log(N - k) for N = exp(log_total) associations of which k are listed."""
    if listed == 0:
        return log_total
    ratio = math.exp(math.log(listed) - log_total)
    if ratio >= 1.0 - 1e-12:
        return -math.inf
    return log_total + math.log1p(-ratio)


def _nll_pmbm_exact(
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
    sums = _log_sum_all_many(list(problems.values()))
    terms = [log_w[h] + total for h, total in zip(problems, sums, strict=True)]
    if best[1] < 0:
        return _impossible(pmbm, problems, "exact", q)
    value = -float(logsumexp(terms))
    _, best_h, best_cols = best
    loc, false, missed = _decompose(problems[best_h], best_cols)
    mixture = -float(log_w[best_h]) + 0.0
    assoc = _association_remainder(value, loc + false + missed + mixture)
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
