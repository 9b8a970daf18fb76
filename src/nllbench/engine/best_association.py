"""The Murty NLL value of a one-hypothesis PMBM at Q = 1, without the rest of the result record.

``nll_best_value(pmb, y)`` is ``nb.nll(pmb, y, q=1).value`` bit for bit, for a
PMBM with one global hypothesis (a PMB, or an MB without a PPP) and a truth
set the caller has validated. It runs the same compiled pass
(:func:`nllbench.engine._mixture.mixture_murty`) on the same inputs (the
Bernoullis' ``log p_k(y_l)`` from :func:`nllbench.engine.association.pool_logpdf`,
the PPP's ``log lambda(y_l)`` and integral, the same capped association
count), so the value is that pass's own, and leaves out what the value does
not need: the argument checks of :func:`nllbench.engine.nll.nll`, the
association problem rebuilt in Python, the eq. (11) decomposition, and the
second-best association that ``nb.nll`` ranks for its bounds (the pass ranks
the best alone: the first of a longer ranking is the same assignment and cost,
:func:`nllbench.engine._pruned.ranked`).

``laplace_pmb_best_value(ppp, rho, centers, scale, y)`` is the same value for
the PMB of a PPP and Laplace Bernoullis with one existence probability and one
scale (Theorem 1's PMB), from those arrays: the Bernoullis' log-pdfs are
:meth:`nllbench.engine.densities.Laplaces.logpdf`'s entries, computed without
building the density objects.

For a hot path that needs the value only, at every step of a run: Theorem 1's
left-hand side (:mod:`nllbench.measures.likelihood.theorem1`).
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy.spatial.distance import cdist

from nllbench.engine._mixture import mixture_murty
from nllbench.engine.assignment import count_assignments, count_assignments_log
from nllbench.engine.association import pool_logpdf
from nllbench.engine.densities import PMBM, PPP, laplace_log_normaliser

#: The budget of this route, and the cap on the association count that the Murty pass sees
#: for it (``max(qs) + 2``, as :func:`nllbench.engine.nll.nll` passes it).
_Q = 1
_CAP = _Q + 2


def nll_best_value(pmbm: PMBM, y: np.ndarray) -> float:
    """``nll(pmbm, y, q=1).value`` of a PMBM with one global hypothesis, bit for bit.

    Parameters
    ----------
    pmbm : PMBM
        One global hypothesis (``n_hypotheses == 1``), with or without a PPP.
    y : (n, d) float ndarray
        The truth, validated by the caller: finite, C-contiguous or not, ``d``
        the density's dimension (``(0, d)`` for an empty set).

    Returns
    -------
    float
        The NLL at the best association: ``+inf`` exactly when
        :func:`nllbench.engine.nll.nll` gives ``+inf``.
    """
    if not isinstance(pmbm, PMBM) or pmbm.n_hypotheses != 1:
        got = f"{pmbm.n_hypotheses} hypotheses" if isinstance(pmbm, PMBM) else type(pmbm).__name__
        raise ValueError(f"pmbm: expected a PMBM with one global hypothesis, got {got}")
    n = y.shape[0]
    if pmbm.ppp is None:
        total_rate, log_lam = 0.0, np.full(n, -np.inf)
    else:
        total_rate = pmbm.ppp.total_rate
        if total_rate == math.inf:
            return math.inf  # exp(-Lambda) = 0 multiplies every term
        log_lam = pmbm.ppp.log_intensity(y)
    with np.errstate(divide="ignore"):
        log_w = np.log(pmbm.weights)
    if pmbm.is_pooled:
        pool = pmbm.pool
        densities, r, index = pool.densities, pool.r, pmbm.members[0]
    else:
        mb = pmbm.hypotheses[0]
        densities, r, index = mb.densities, mb.r, np.arange(len(mb))
    log_p = pool_logpdf([densities], y)
    return _murty_value(log_p, r, index, log_lam, total_rate, log_w)


def laplace_pmb_best_value(ppp: PPP, rho: float, centers: np.ndarray, scale: float, y: np.ndarray) -> float:
    """:func:`nll_best_value` of the PMB of ``ppp`` and Laplace Bernoullis, bit for bit, from the arrays.

    Parameters
    ----------
    ppp : PPP
        The Poisson part.
    rho : float
        Every Bernoulli's existence probability, in (0, 1].
    centers : (m, d) float ndarray
        The Laplace centres, finite (``(0, d)`` for none).
    scale : float
        Their common scale, positive and finite.
    y : (n, d) float ndarray
        The truth, validated by the caller as for :func:`nll_best_value`.

    Returns
    -------
    float
        ``nll_best_value(laplace_pmb_unchecked(ppp, np.full(m, rho), centers, np.full(m, scale)), y)``.
    """
    total_rate = ppp.total_rate
    if total_rate == math.inf:
        return math.inf
    m, n = centers.shape[0], y.shape[0]
    if m and n:  # Laplaces.logpdf's entries: -dist / scale_j - log k_j, with every scale_j = scale
        log_p = -cdist(centers, y) / scale - _laplace_log_k(float(scale), centers.shape[1])
    else:
        log_p = np.zeros((m, n))
    return _murty_value(log_p, np.full(m, rho), np.arange(m), ppp.log_intensity(y), total_rate, np.zeros(1))


@functools.lru_cache(maxsize=32)
def _laplace_log_k(scale: float, dim: int) -> float:
    """log k of a Laplace density of this scale: the entry that ``Laplaces.log_normaliser`` gives each."""
    return float(laplace_log_normaliser(np.full(1, scale), dim)[0])


def _murty_value(log_p, r, index, log_lam, total_rate, log_w) -> float:
    """The Q = 1 value of the compiled Murty pass on one hypothesis' rows ``index`` of ``log_p`` and ``r``."""
    n = log_lam.shape[0]
    n_forced = int(np.count_nonzero(log_lam == -np.inf))
    alive = int(np.count_nonzero(r[index] > 0))
    count = _capped_count(n, alive, n_forced)
    ((value, *_),) = mixture_murty(
        log_p,
        r,
        index,
        np.array([0, index.size], dtype=np.int64),
        log_lam,
        total_rate,
        log_w,
        np.array([count], dtype=np.int64),
        np.array([count_assignments_log(n, alive, n_forced)]),
        [_Q],
        rank=_Q,  # the value alone: the best assignment, without ranking the next (the same bits)
    )
    return value


def _capped_count(n: int, m: int, forced: int) -> int:
    """min(number of associations, the cap), without big integers when the count is clearly larger."""
    if count_assignments_log(n, m, forced) > math.log(_CAP) + 1.0:
        return _CAP
    return min(count_assignments(n, m, forced), _CAP)
