"""Sums of exponentials in log space, and the bounds on the associations a ranking leaves out.

Shared by the Murty NLL of a PMBM (:mod:`nllbench.engine.batched`) and of a
trajectory posterior (:mod:`nllbench.engine.trajectory_nll`): the log of a sum of
listed association weights, a bound on the sum over every association by
summing each object's row on its own, and the log of the number of
associations a ranking did not list (docs/nll.md, "Exactness and bounds").
"""

from __future__ import annotations

import math

import numpy as np

from nllbench.engine.association import AssociationProblem


def logsumexp(a: np.ndarray) -> float:
    """log(sum(exp(a))) of a 1-D array; -inf for an empty or all -inf array."""
    if a.size == 0:
        return -math.inf
    top = float(np.max(a))
    if top == -math.inf:
        return -math.inf
    return top + math.log(float(np.sum(np.exp(a - top))))


def log_row_sum_bound(prob: AssociationProblem) -> float:
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


def log_remaining(log_total: float, listed: int) -> float:
    """log(N - k) for N = exp(log_total) associations of which k are listed."""
    if listed == 0:
        return log_total
    ratio = math.exp(math.log(listed) - log_total)
    if ratio >= 1.0 - 1e-12:
        return -math.inf
    return log_total + math.log1p(-ratio)
