"""The Murty NLL of a PMBM for several budgets at once (the pass behind ``nb.nll_many``).

``method="murty"`` of :func:`nllbench.engine.nll.nll` and every budget of
:func:`nllbench.engine.nll.nll_many`: with the per-hypothesis budget (Pinto et
al., IEEE SPL 2021, eq. (9)) one compiled pass ranks each hypothesis once
(:mod:`nllbench.engine._mixture`); with the global budget the Q best
(hypothesis, association) pairs are ranked over all hypotheses together. Both
bound the associations left out (see docs/nll.md, "Exactness and bounds").
"""

from __future__ import annotations

import math

import numpy as np

from nllbench.engine._mixture import mixture_murty
from nllbench.engine.assignment import count_assignments, count_assignments_log, murty
from nllbench.engine.association import (
    association_terms,
    decompose,
    decomposed_result,
    existence_logs,
    impossible,
    pmbm_problems,
    pool_logpdf,
    problem_of,
)
from nllbench.engine.densities import PMBM
from nllbench.engine.logsum import log_remaining, log_row_sum_bound, logsumexp
from nllbench.engine.result import NLLResult


def nll_pmbm_murty(pmbm: PMBM, y: np.ndarray, qs: list[int], budget: str) -> list[NLLResult]:
    """Murty results for several budgets; per-hypothesis budgets share one ranking."""
    total_rate = 0.0 if pmbm.ppp is None else pmbm.ppp.total_rate
    if total_rate == math.inf:
        return [impossible(pmbm, {}, "murty", q) for q in qs]  # exp(-Lambda) = 0 multiplies every term
    if budget == "global":
        problems, log_w, log_lam = pmbm_problems(pmbm, y)
        return [
            _murty_result(pmbm, y, problems, log_w, log_lam, *_rank_global(problems, log_w, q), q) for q in qs
        ]
    return _nll_pmbm_compiled(pmbm, y, qs, total_rate)


def _nll_pmbm_compiled(pmbm: PMBM, y: np.ndarray, qs: list[int], total_rate: float) -> list[NLLResult]:
    """Per-hypothesis budgets through the compiled mixture pass (:mod:`nllbench.engine._mixture`).

    Every hypothesis is ranked once, one association beyond the largest
    budget: for every q the listed associations are the first q found (a
    prefix that does not depend on the budget, see
    :func:`nllbench.engine.assignment.ranked_in_search_order`) and the (q+1)-th
    bounds every unlisted one, so ``nll(q)`` and ``nll_many`` agree to the
    last bit. The decomposition of the best association is computed once
    per distinct (hypothesis, association) among the budgets, from the
    hypothesis' existence logs and log-densities (no cost matrix).
    """
    n = y.shape[0]
    log_lam = np.full(n, -np.inf) if pmbm.ppp is None else pmbm.ppp.log_intensity(y)
    weights = pmbm.weights
    live = np.flatnonzero(weights > 0)
    log_w = np.log(weights[live])  # (H,) of the live hypotheses: no log 0
    families, r, index, starts = pmbm._table(live)
    log_p = pool_logpdf(families, y)  # (P, n): each Bernoulli of the pool once
    n_forced = int(np.count_nonzero(log_lam == -np.inf))
    cap = max(qs) + 2
    if starts.size == 2:  # one live hypothesis (a PMB or an MB)
        count, log_count = _counts(n, int(np.count_nonzero(r[index] > 0)), n_forced, cap)
        counts, log_counts = np.array([count], dtype=np.int64), np.array([log_count])
    else:
        cumulative = np.concatenate([[0], np.cumsum(r[index] > 0)])
        alive = (cumulative[starts[1:]] - cumulative[starts[:-1]]).tolist()  # Bernoullis with r > 0
        counted = {a: _counts(n, a, n_forced, cap) for a in set(alive)}
        counts = np.array([counted[a][0] for a in alive], dtype=np.int64)
        log_counts = np.array([counted[a][1] for a in alive])
    ranked = mixture_murty(log_p, r, index, starts, log_lam, total_rate, log_w, counts, log_counts, qs)
    out = []
    terms = {}  # (hypothesis, association) -> its decomposition, shared by the budgets
    for q, (value, lower, exact, n_terms, best, best_cols) in zip(qs, ranked, strict=True):
        if best < 0:
            h = int(np.argmax(weights))
            i = int(np.searchsorted(live, h))
            prob = problem_of(
                r[index[starts[i] : starts[i + 1]]], n, log_lam, total_rate, _rows(log_p, index, starts, i)
            )
            out.append(impossible(pmbm, {h: prob}, "murty", q))
            continue
        key = (best, best_cols.tobytes())
        if key not in terms:
            rows = index[starts[best] : starts[best + 1]]
            log_r, log_1mr = existence_logs(r[rows])
            terms[key] = association_terms(log_r, log_1mr, log_p, log_lam, total_rate, best_cols, rows)
        h = int(live[best])
        out.append(
            decomposed_result(value, lower, exact, terms[key], best_cols, float(log_w[best]), n_terms, q, h)
        )
    return out


def _rows(log_p: np.ndarray, index: np.ndarray, starts: np.ndarray, i: int) -> np.ndarray | None:
    """Hypothesis i's rows of ``log_p`` (None when there is no truth object)."""
    return log_p[index[starts[i] : starts[i + 1]]] if log_p.shape[1] else None


def _counts(n: int, m: int, forced: int, cap: int) -> tuple[int, float]:
    """(min(number of associations, cap), its log (:func:`count_assignments_log`)) of ``n`` objects and
    ``m`` Bernoullis; no big integers when the count is clearly above the cap."""
    log_count = count_assignments_log(n, m, forced)
    if log_count > math.log(cap) + 1.0:
        return cap, log_count
    return min(count_assignments(n, m, forced), cap), log_count


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
        return impossible(pmbm, problems, "murty", q)
    value = -logsumexp(-all_costs)
    # Bounds on the exact NLL: per hypothesis, the unlisted associations sum to
    # at most (their count) x exp(-rest), and the whole sum to at most the
    # product of row sums (a permanent bound); keep the smaller.
    exact = True
    upper_terms = []
    n_forced = int(np.sum(log_lam == -np.inf))
    for h in live:
        log_listed = logsumexp(-costs_by_h[h])
        log_count = count_assignments_log(n, int(np.sum(pmbm.existence(h) > 0)), n_forced)
        log_left = log_remaining(log_count, costs_by_h[h].size)
        if math.isinf(rest_by_h[h]) or log_left == -math.inf:
            upper_terms.append(log_listed)
            continue
        exact = False
        by_count = float(np.logaddexp(log_listed, log_left - rest_by_h[h]))
        by_rows = log_w[h] + log_row_sum_bound(problems[h])
        upper_terms.append(max(log_listed, min(by_count, by_rows)))
    # (min: the per-hypothesis sums may round an ulp away from the global one)
    lower = value if exact else min(value, -logsumexp(np.array(upper_terms)))
    listed = [h for h in live if costs_by_h[h].size]  # not empty: all_costs is not
    best_h = min(listed, key=lambda h: costs_by_h[h][0])
    best_cols = found[best_h][1][0]
    return decomposed_result(
        value,
        lower,
        exact,
        decompose(problems[best_h], best_cols),
        best_cols,
        float(log_w[best_h]),
        int(all_costs.size),
        q,
        best_h,
    )


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
