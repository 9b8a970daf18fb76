"""The assignment sum of a batch, differentiable: rank without gradients, rescore with them.

Both forms (:mod:`nllbench.torch.loss`, per frame; :mod:`nllbench.torch.trajectory_loss`, per window)
reduce to the same sum per sample b and hypothesis h (Pinto et al., IEEE SPL 2021, eq. (2)-(4),
(7)-(9); ``docs/trajectory.md`` for the trajectory case):

    f_b(Y) = sum_h w_h exp(-Lambda) prod_k a_k sum_A prod_{(l -> k) in A} w_{k,l} / a_k
             prod_{l -> PPP} lambda(y_l)

with ``log w_{k,l}`` the pair log-weights (N, M), ``log a_k`` the log-probability that output k
explains nothing, ``log lambda(y_l)`` the Poisson part at truth l and Lambda its integral. The
cost of association A is ``base + sum_l cost[l, A(l)]`` on the per-frame NLL's (M, N + M) cost
matrix (:func:`nllbench.engine.trajectory_nll.association_problem_from_weights` builds the same one).

The Q cheapest associations of each (b, h) come from the engine's ranking
(:func:`nllbench.engine.assignment.murty`) on a detached float64 copy on the CPU; then the costs of
those fixed associations are gathered from the differentiable cost tensor on its device and
combined with a log-sum-exp. With the Q associations fixed, the truncated likelihood is a smooth
function of the outputs, and its gradient is the weighted sum of each association's gradient
(the weights its share of the truncated sum): exactly what autograd computes here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from nllbench.engine.assignment import murty

LOG_2PI = math.log(2.0 * math.pi)


@dataclass(frozen=True)
class Ranked:
    """The Q best associations of every (sample, hypothesis).

    columns : (B, H, Q, M) int64, on the tensors' device
        Column of truth l in association q: output k < N, or ``N + l`` (the Poisson part). Rows of
        padded truths hold 0; associations beyond those that exist repeat the first.
    listed : (B, H, Q) bool, on the device
        The association exists (fewer than Q may).
    feasible : (B,) bool, on the device
        Some association of some hypothesis has non-zero likelihood.
    complete : (B,) bool (numpy)
        Every association with non-zero likelihood was listed (the value is the exact NLL).
    n_terms : (B,) int64 (numpy)
        Associations summed per sample.
    """

    columns: torch.Tensor
    listed: torch.Tensor
    feasible: torch.Tensor
    complete: np.ndarray
    n_terms: np.ndarray


def cost_matrix(
    log_w: torch.Tensor, log_alone: torch.Tensor, log_lam: torch.Tensor, output_mask: torch.Tensor
) -> torch.Tensor:
    """(B, H, M, N + M) association costs, ``+inf`` on forbidden cells.

    ``cost[l, k] = -(log w_{k,l} - log a_k)`` for an output k, ``cost[l, N + l] = -log lambda(y_l)``;
    every other Poisson cell, and every cell of a masked output, ``+inf``. The infinities are
    constants (``torch.where`` on the values), so no gradient passes through them.
    """
    B, H, N, M = log_w.shape
    inf = torch.tensor(math.inf, dtype=log_w.dtype, device=log_w.device)
    to_output = -(log_w - log_alone[..., None]).transpose(-1, -2)  # (B, H, M, N)
    to_output = torch.where(output_mask[:, None, None, :], to_output, inf)
    eye = torch.eye(M, dtype=torch.bool, device=log_w.device)
    to_ppp = torch.where(eye, (-log_lam)[:, None, :, None].expand(B, H, M, M), inf)
    return torch.cat([to_output, to_ppp], dim=-1)


def rank(cost: torch.Tensor, truth_mask: torch.Tensor, q: int) -> Ranked:
    """The Q cheapest associations of each (sample, hypothesis) of ``cost`` (B, H, M, N + M).

    A detached float64 copy goes to the CPU once; each (sample, hypothesis) is ranked by the
    engine's Murty ranking on its live truths' rows (no mandatory columns: every existence
    probability is below 1, the logits being finite). Returns :class:`Ranked`.
    """
    B, H, M, width = cost.shape
    N = width - M
    C = cost.detach().to("cpu", torch.float64).numpy()
    mask = truth_mask.detach().cpu().numpy()
    cols = np.zeros((B, H, q, M), dtype=np.int64)
    listed = np.zeros((B, H, q), dtype=bool)
    complete = np.ones(B, dtype=bool)
    for b in range(B):
        rows = np.flatnonzero(mask[b])
        keep = np.concatenate([np.arange(N), N + rows])
        for h in range(H):
            ranked = murty(C[b, h][np.ix_(rows, keep)], q)
            k = ranked.costs.size
            if k == 0:
                continue
            chosen = ranked.columns  # (k, m_b): into [outputs, Poisson cells of the live rows]
            cols[b, h, :k, rows] = np.where(chosen < N, chosen, N + rows[np.maximum(chosen - N, 0)]).T
            cols[b, h, k:] = cols[b, h, 0]
            listed[b, h, :k] = True
            complete[b] &= ranked.complete or k < q
    device = cost.device
    return Ranked(
        torch.from_numpy(cols).to(device),
        torch.from_numpy(listed).to(device),
        torch.from_numpy(listed.any(axis=(1, 2))).to(device),
        complete,
        listed.sum(axis=(1, 2)),
    )


def association_costs(
    cost: torch.Tensor, base: torch.Tensor, ranked: Ranked, truth_mask: torch.Tensor
) -> torch.Tensor:
    """(B, H, Q) total costs ``base + sum_l cost[l, A(l)]`` of the listed associations, differentiable.

    Padded truths add 0 (a ``torch.where``, so nothing of their rows reaches the gradient).
    """
    B, H, M, width = cost.shape
    q = ranked.columns.shape[2]
    flat = cost.reshape(B, H, M * width)
    index = (torch.arange(M, device=cost.device) * width + ranked.columns).reshape(B, H, q * M)
    picked = flat.gather(-1, index).reshape(B, H, q, M)
    zero = torch.zeros((), dtype=cost.dtype, device=cost.device)
    picked = torch.where(truth_mask[:, None, None, :], picked, zero)
    return base[..., None] + picked.sum(-1)


def log_likelihood(
    costs: torch.Tensor, log_hyp: torch.Tensor, ranked: Ranked
) -> tuple[torch.Tensor, torch.Tensor]:
    """(per-sample NLL (B,), log-terms (B, H, Q)): ``-logsumexp_{h,q}(log w_h - cost_{h,q})``.

    An infeasible sample (no listed association) gets ``+inf`` as a constant: its terms are replaced
    by zeros before the log-sum-exp so that no ``-inf - (-inf)`` reaches the gradient (which is 0 for
    it). Unlisted slots are ``-inf`` constants.
    """
    terms = log_hyp[..., None] - costs
    minus_inf = torch.tensor(-math.inf, dtype=costs.dtype, device=costs.device)
    terms = torch.where(ranked.listed, terms, minus_inf)
    feasible = ranked.feasible
    safe = torch.where(
        feasible[:, None, None], terms, torch.zeros((), dtype=costs.dtype, device=costs.device)
    )
    nll = -torch.logsumexp(safe.flatten(1), dim=1)
    inf = torch.tensor(math.inf, dtype=costs.dtype, device=costs.device)
    return torch.where(feasible, nll, inf), terms


def best_association(terms: torch.Tensor, ranked: Ranked) -> tuple[torch.Tensor, torch.Tensor]:
    """(best hypothesis (B,), its best association's columns (B, M)): the largest listed term."""
    B, H, q = terms.shape
    flat = terms.detach().flatten(1).argmax(dim=1)  # an infeasible sample's (all -inf) is unused
    h = flat // q
    best = ranked.columns[torch.arange(B, device=terms.device), h, flat % q]
    return h, best


def matched_sum(
    pair: torch.Tensor, h: torch.Tensor, cols: torch.Tensor, truth_mask: torch.Tensor
) -> torch.Tensor:
    """(B,) ``sum_{l matched} pair[b, h_b, A(l), l]`` over live truths sent to an output (detached)."""
    B, H, N, M = pair.shape
    if N == 0:
        return torch.zeros(B, dtype=pair.dtype, device=pair.device)
    b = torch.arange(B, device=pair.device)
    take = truth_mask & (cols < N)
    k = torch.where(take, cols, torch.zeros_like(cols))
    values = pair.detach()[b[:, None], h[:, None], k, torch.arange(M, device=pair.device)[None, :]]
    return torch.where(take, values, torch.zeros((), dtype=pair.dtype, device=pair.device)).sum(-1)


def unmatched_sum(alone: torch.Tensor, h: torch.Tensor, cols: torch.Tensor, truth_mask, output_mask):
    """(B,) ``sum_{k unmatched} alone[b, h_b, k]`` over live outputs that take no truth (detached)."""
    B, H, N = alone.shape
    b = torch.arange(B, device=alone.device)
    taken = torch.zeros((B, N + 1), dtype=torch.bool, device=alone.device)
    idx = torch.where(truth_mask & (cols < N), cols, torch.full_like(cols, N))
    taken.scatter_(1, idx, True)
    free = output_mask & ~taken[:, :N]
    values = alone.detach()[b, h]
    return torch.where(free, values, torch.zeros((), dtype=alone.dtype, device=alone.device)).sum(-1)


def ppp_sum(log_lam: torch.Tensor, cols: torch.Tensor, truth_mask: torch.Tensor, n_outputs: int):
    """(B,) ``sum log lambda(y_l)`` over live truths left to the Poisson part (detached)."""
    left = truth_mask & (cols >= n_outputs)
    zero = torch.zeros((), dtype=log_lam.dtype, device=log_lam.device)
    return torch.where(left, log_lam.detach(), zero).sum(-1)


def gaussian_logpdf(
    y: torch.Tensor, means: torch.Tensor, variances: torch.Tensor | None, scale_tril: torch.Tensor | None
) -> torch.Tensor:
    """``log N(y_l; m_k, P_k)`` for outputs k, points l: means (..., N, d), y (..., M, d) -> (..., N, M).

    ``P_k = diag(variances_k)`` or ``scale_tril_k scale_tril_k^T`` (lower Cholesky factor, positive
    diagonal), as torch.distributions names them.
    """
    d = means.shape[-1]
    diff = y[..., None, :, :] - means[..., :, None, :]  # (..., N, M, d)
    if variances is not None:
        maha = (diff * diff / variances[..., :, None, :]).sum(-1)
        log_det = torch.log(variances).sum(-1)
    else:
        # forward substitution L z = diff^T for each output's factor
        z = torch.linalg.solve_triangular(scale_tril, diff.transpose(-1, -2), upper=False)
        maha = (z * z).sum(-2)
        log_det = 2.0 * torch.log(torch.diagonal(scale_tril, dim1=-2, dim2=-1)).sum(-1)
    return -0.5 * (maha + log_det[..., None] + d * LOG_2PI)
