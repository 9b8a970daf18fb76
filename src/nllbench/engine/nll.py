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

This module is the public boundary (argument checks, the closed forms, the
choice of route); the PMBM routes live beside it: the Murty pass in
:mod:`nllbench.engine.batched`, the exact subset sum in
:mod:`nllbench.engine.exact`, the association problem they share in
:mod:`nllbench.engine.association` and the result record in
:mod:`nllbench.engine.result`.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import gammaln

from nllbench.engine import validate as v
from nllbench.engine.assignment import check_q
from nllbench.engine.association import (
    FORBIDDEN_COST,
    AssociationProblem,
    association_problem,
    impossible,
    pmbm_problems,
)
from nllbench.engine.batched import nll_pmbm_murty
from nllbench.engine.densities import PMBM, PPP, IIDCluster, as_pmbm
from nllbench.engine.exact import EXACT_WORK_LIMIT, nll_pmbm_exact
from nllbench.engine.result import NLLResult

__all__ = [
    "EXACT_WORK_LIMIT",
    "FORBIDDEN_COST",
    "AssociationProblem",
    "NLLResult",
    "association_problem",
    "nll",
    "nll_many",
]

_METHODS = ("murty", "exact")
_BUDGETS = ("hypothesis", "global")


def nll(density, truth, q: int = 1, method: str = "murty", budget: str = "hypothesis") -> NLLResult:
    """Negative log-likelihood of ``density`` at the ground-truth set ``truth``.

    Parameters
    ----------
    density : PPP, IIDCluster, MultiBernoulli or PMBM
    truth : (n, d) array_like
        Ground-truth object states; ``n = 0`` (an empty set) is allowed.
    q : int
        Murty budget: associations kept per hypothesis (or in total with
        ``budget="global"``); an integer in [1, 2**63 - 1].
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
    q = check_q(q, "q")
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
    qs = [check_q(q, f"qs[{i}]") for i, q in enumerate(qs)]
    if not qs:
        raise ValueError("qs: expected at least one positive integer, got an empty sequence")
    if budget not in _BUDGETS:
        raise ValueError(f"budget: expected one of {_BUDGETS}, got {budget!r}")
    density = as_pmbm(density)
    if not isinstance(density, PMBM):
        return [nll(density, truth, q=q) for q in qs]
    y = v.truth_set(truth, density.dim)
    return nll_pmbm_murty(density, y, qs, budget)


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


def _nll_pmbm(pmbm: PMBM, y: np.ndarray, q: int, method: str, budget: str) -> NLLResult:
    if method == "exact":
        if pmbm.ppp is not None and pmbm.ppp.total_rate == math.inf:
            return impossible(pmbm, {}, method, q)  # exp(-Lambda) = 0 multiplies every term
        problems, log_w, _ = pmbm_problems(pmbm, y)
        return nll_pmbm_exact(pmbm, problems, log_w, q)
    return nll_pmbm_murty(pmbm, y, [q], budget)[0]  # (it refuses an infinite PPP rate the same way)
