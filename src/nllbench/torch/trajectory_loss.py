"""The trajectory NLL of a batch of per-track state windows, as a training loss (smoothers).

Each track l of a sample is a trajectory Bernoulli over the K frames of the window: present at
frame t with probability ``sigmoid(logits[l, t])``, independently over frames, its state there
``N(means[l, t], P[l, t])``; undetected trajectories are a Poisson process of mean Lambda whose
members are present at each frame with probability rho (given at least one), uniform on a box.
The likelihood of the true trajectories is the density that ``nb.trajectory_nll`` declares
(``docs/trajectory.md``, "The density"), with every label holding a row at every frame:

    f(Y) = exp(-Lambda) sum_theta prod_{l unmatched} a_l prod_{(j -> l)} w_{l,j}
           prod_{j unmatched} lambda(Y_j)

    a_l = prod_t (1 - r_{l,t}),
    w_{l,j} = prod_{t in S_j} r_{l,t} p_{l,t}(y_{j,t}) prod_{t not in S_j} (1 - r_{l,t})

The sum over theta is truncated to the Q best associations and differentiated as the per-frame
loss is (:mod:`nllbench.torch._core`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from nllbench.torch import _core
from nllbench.torch._inputs import (
    as_float64,
    check_finite,
    check_options,
    check_shape,
    covariance,
    output_mask_of,
    per_sample,
)
from nllbench.torch.loss import finish

#: The trajectory NLL's terms (``nb.trajectory_nll``'s); they sum to the value.
TRAJECTORY_TERMS = ("localization", "presence", "false", "undetected", "association")


@dataclass(frozen=True)
class TrajectoryPoisson:
    """Undetected trajectories: mean ``rate`` (Lambda), presence ``presence`` (rho), uniform on the box.

    rate : float or tensor, scalar or (B,), >= 0; presence : float or tensor in (0, 1];
    low, high : (d,) box corners (``nb.trajectory_nll``'s ``undetected=(rate, presence)``, ``fov``).
    """

    rate: object
    presence: object
    low: object
    high: object


@dataclass(frozen=True)
class TrajectorySetNLLResult:
    """The trajectory NLL of a batch (the fields of :class:`nllbench.torch.SetNLLResult`, the terms
    those of ``nb.trajectory_nll``: localization, presence, false, undetected, association; an
    infinite sample has ``undetected = inf`` and the other terms 0)."""

    loss: torch.Tensor
    per_sample: torch.Tensor
    localization: torch.Tensor
    presence: torch.Tensor
    false: torch.Tensor
    undetected: torch.Tensor
    association: torch.Tensor
    infinite: torch.Tensor
    complete: np.ndarray
    n_terms: np.ndarray

    def terms(self) -> dict[str, torch.Tensor]:
        """The decomposition, name -> (B,) detached tensor; the terms sum to ``per_sample``."""
        return {name: getattr(self, name) for name in TRAJECTORY_TERMS}


def trajectory_set_nll(
    logits,
    means,
    *,
    variances=None,
    scale_tril=None,
    truth,
    truth_present,
    output_mask=None,
    undetected: TrajectoryPoisson | None = None,
    q: int = 16,
    reduction: str = "mean",
    infinite: str = "raise",
) -> TrajectorySetNLLResult:
    """The trajectory NLL of per-track windows at the true trajectories, differentiable.

    Parameters
    ----------
    logits : (B, N, K) tensor
        Per-frame existence logits of each track (finite).
    means : (B, N, K, d) tensor
    variances : (B, N, K, d) tensor, optional; scale_tril : (B, N, K, d, d) tensor, optional
        Exactly one: diagonal covariances or lower Cholesky factors.
    truth : (B, M, K, d) tensor
        True trajectories' states (anything where absent).
    truth_present : (B, M, K) bool tensor
        Frames where each true trajectory exists (``S_j``); a trajectory present nowhere is padding.
    output_mask : (B, N) bool tensor, optional
        Tracks that exist (False: padding).
    undetected : TrajectoryPoisson, optional
        Undetected trajectories; None: none (a truth no track can take makes the value ``+inf``).
    q, reduction, infinite
        As for :func:`nllbench.torch.set_nll`.

    Returns
    -------
    TrajectorySetNLLResult
    """
    q = check_options(q, reduction, infinite)
    if not isinstance(logits, torch.Tensor):
        raise TypeError(f"logits: expected a tensor (B, N, K), got {type(logits).__name__}")
    device = logits.device
    lg = as_float64(logits, "logits", device, "(B, N, K)")
    check_finite(lg, "logits")
    if lg.ndim != 3:
        raise ValueError(f"logits: expected shape (B, N, K), got {tuple(lg.shape)}")
    B, N, K = lg.shape
    mu = as_float64(means, "means", device, "(B, N, K, d)")
    if mu.ndim != 4 or tuple(mu.shape[:3]) != (B, N, K):
        raise ValueError(
            f"means: expected shape (B, N, K, d) with (B, N, K) = {(B, N, K)}, got {tuple(mu.shape)}"
        )
    check_finite(mu, "means")
    d = mu.shape[-1]
    var, L = covariance(variances, scale_tril, (B, N, K), d, device)
    present = torch.as_tensor(truth_present, device=device)
    if present.dtype != torch.bool:
        raise TypeError(f"truth_present: expected a bool tensor (B, M, K), got dtype {present.dtype}")
    if present.ndim != 3 or present.shape[0] != B or present.shape[2] != K:
        raise ValueError(
            f"truth_present: expected shape (B, M, K) = ({B}, M, {K}), got {tuple(present.shape)}"
        )
    M = present.shape[1]
    if not isinstance(truth, torch.Tensor) or not truth.is_floating_point():
        raise TypeError("truth: expected a floating-point tensor (B, M, K, d)")
    check_shape(truth, "truth", (B, M, K, d), "(B, M, K, d)")
    y = torch.where(present[..., None], truth.to(device=device, dtype=torch.float64), 0.0)
    if not torch.isfinite(y).all():
        raise ValueError("truth: expected finite states at the frames where truth_present is True")
    t_mask = present.any(-1)
    out_mask = output_mask_of(output_mask, B, N, device)

    log_r = torch.nn.functional.logsigmoid(lg)  # (B, N, K)
    log_1mr = torch.nn.functional.logsigmoid(-lg)
    # log p_{l,t}(y_{j,t}) for every frame: (B, K, N, M) -> (B, N, M, K)
    per_frame = _core.gaussian_logpdf(
        y.transpose(1, 2),
        mu.transpose(1, 2),
        None if var is None else var.transpose(1, 2),
        None if L is None else L.transpose(1, 2),
    ).permute(0, 2, 3, 1)
    pres = present[:, None, :, :]  # (B, 1, M, K)
    zero = torch.zeros((), dtype=torch.float64, device=device)
    loc = torch.where(pres, log_r[:, :, None, :] + per_frame, zero).sum(-1)  # (B, N, M)
    claim = torch.where(pres, zero, log_1mr[:, :, None, :]).sum(-1)
    alone = log_1mr.sum(-1)  # (B, N): log a_l
    log_lam, total_rate = _undetected(undetected, y, present, B, K, d, device)

    log_w = (loc + claim)[:, None]
    alone_h = alone[:, None]
    base = total_rate[:, None] - torch.where(out_mask[:, None, :], alone_h, zero).sum(-1)
    cost = _core.cost_matrix(log_w, alone_h, log_lam, out_mask)
    ranked = _core.rank(cost, t_mask, q)
    costs = _core.association_costs(cost, base, ranked, t_mask)
    nll, log_terms = _core.log_likelihood(
        costs, torch.zeros((B, 1), dtype=torch.float64, device=device), ranked
    )
    with torch.no_grad():
        h, cols = _core.best_association(log_terms, ranked)
        named = {
            "localization": -_core.matched_sum(loc[:, None], h, cols, t_mask),
            "presence": -_core.matched_sum(claim[:, None], h, cols, t_mask),
            "false": -_core.unmatched_sum(alone_h, h, cols, t_mask, out_mask),
            "undetected": total_rate - _core.ppp_sum(log_lam, cols, t_mask, N),
        }
    return finish(nll, ranked, named, reduction, infinite, TrajectorySetNLLResult, "undetected")


def _undetected(spec, y, present, B: int, K: int, d: int, device) -> tuple[torch.Tensor, torch.Tensor]:
    """(log lambda(Y_j) (B, M), Lambda (B,)) of the undetected trajectories (``-inf``, 0 without them).

    ``log Lambda - log(1 - (1 - rho)^K) + |S_j| (log rho - log V) + (K - |S_j|) log(1 - rho)``,
    ``-inf`` for a state outside the box, for rho = 1 and a gap, and for Lambda = 0; those
    infinities are constants (safe values behind ``torch.where``), so no NaN reaches the gradient.
    """
    M = present.shape[1]
    if spec is None:
        return torch.full((B, M), -math.inf, dtype=torch.float64, device=device), torch.zeros(
            B, dtype=torch.float64, device=device
        )
    if not isinstance(spec, TrajectoryPoisson):
        raise TypeError(f"undetected: expected TrajectoryPoisson or None, got {type(spec).__name__}")
    rate = per_sample(as_float64(spec.rate, "undetected.rate", device, "()"), B, 0, "undetected.rate", "()")
    rho = per_sample(
        as_float64(spec.presence, "undetected.presence", device, "()"), B, 0, "undetected.presence", "()"
    )
    check_finite(rate, "undetected.rate")
    if (rate < 0).any():
        raise ValueError("undetected.rate: expected values >= 0, got a negative rate")
    if not ((rho > 0) & (rho <= 1)).all():
        raise ValueError("undetected.presence: expected values in (0, 1]")
    low = as_float64(spec.low, "undetected.low", device, "(d,)").reshape(-1)
    high = as_float64(spec.high, "undetected.high", device, "(d,)").reshape(-1)
    if low.shape != (d,) or high.shape != (d,) or not (low < high).all():
        raise ValueError(f"undetected.low, high: expected shape ({d},) each with low < high")
    log_volume = torch.log(high - low).sum()
    positive = rate > 0
    log_rate = torch.log(torch.where(positive, rate, torch.ones_like(rate)))
    below_one = rho < 1
    log_1mrho = torch.log1p(-torch.where(below_one, rho, torch.full_like(rho, 0.5)))
    # 1 - (1 - rho)^K = -expm1(K log(1 - rho)); exactly 1 at rho = 1
    log_norm = torch.where(below_one, torch.log(-torch.expm1(K * log_1mrho)), torch.zeros_like(rho))
    n = present.sum(-1).to(torch.float64)  # (B, M): |S_j|
    gap = torch.where(below_one[:, None], (K - n) * log_1mrho[:, None], torch.zeros_like(n))
    value = (log_rate - log_norm)[:, None] + n * (torch.log(rho) - log_volume)[:, None] + gap
    inside = (((y >= low) & (y <= high)).all(-1) | ~present).all(-1)
    ok = positive[:, None] & inside & (below_one[:, None] | (n == K))
    return torch.where(ok, value, torch.full_like(value, -math.inf)), rate
