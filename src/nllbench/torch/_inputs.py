"""Checks and layouts of the loss's tensors (shapes named in every error), and the Poisson parts."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from nllbench.engine.assignment import check_q
from nllbench.torch._core import gaussian_logpdf

REDUCTIONS = ("mean", "sum", "none")
INFINITE = ("raise", "skip", "keep")


@dataclass(frozen=True)
class UniformPoisson:
    """A Poisson part of total rate ``rate`` uniform on the box ``[low, high]`` (0 outside).

    rate : float or tensor, scalar or (B,) (one per sample; may be predicted, it is differentiated)
    low, high : (d,) sequence or tensor, ``low < high``
    """

    rate: object
    low: object
    high: object


@dataclass(frozen=True)
class GaussianPoisson:
    """A Poisson part of Gaussian-mixture intensity ``sum_c exp(log_weights_c) N(x; means_c, P_c)``.

    log_weights : (C,) or (B, C); means : (C, d) or (B, C, d); ``variances`` like ``means`` or
    ``scale_tril`` (C, d, d) or (B, C, d, d). Unbatched shapes are shared by every sample; any of
    them may be predicted by the network (they are differentiated).
    """

    log_weights: torch.Tensor
    means: torch.Tensor
    variances: torch.Tensor | None = None
    scale_tril: torch.Tensor | None = None


def as_float64(x, name: str, device, shape_hint: str) -> torch.Tensor:
    """``x`` as a float64 tensor on ``device`` (a differentiable cast); NaN refused."""
    if not isinstance(x, torch.Tensor):
        try:
            x = torch.as_tensor(x, dtype=torch.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError(f"{name}: expected a tensor {shape_hint}, got {type(x).__name__}") from exc
    if not (x.is_floating_point()):
        raise TypeError(f"{name}: expected a floating-point tensor {shape_hint}, got dtype {x.dtype}")
    x = x.to(device=device, dtype=torch.float64)
    if torch.isnan(x).any():
        raise ValueError(f"{name}: expected no NaN, got NaN")
    return x


def check_finite(x: torch.Tensor, name: str) -> None:
    if not torch.isfinite(x).all():
        raise ValueError(f"{name}: expected finite values, got inf")


def check_shape(x: torch.Tensor, name: str, shape: tuple, text: str) -> None:
    if tuple(x.shape) != tuple(shape):
        raise ValueError(f"{name}: expected shape {text} = {tuple(shape)}, got {tuple(x.shape)}")


def covariance(variances, scale_tril, lead: tuple, d: int, device, prefix: str = ""):
    """(variances, scale_tril): exactly one given, checked (positive variances / diagonal)."""
    if (variances is None) == (scale_tril is None):
        raise ValueError(
            f"{prefix}variances, {prefix}scale_tril: expected exactly one of them, got "
            + ("both" if variances is not None else "neither")
        )
    if variances is not None:
        var = as_float64(variances, prefix + "variances", device, "(..., d)")
        check_shape(var, prefix + "variances", (*lead, d), "(..., d) like the means")
        check_finite(var, prefix + "variances")
        if not (var > 0).all():
            raise ValueError(f"{prefix}variances: expected positive values, got a value <= 0")
        return var, None
    L = as_float64(scale_tril, prefix + "scale_tril", device, "(..., d, d)")
    check_shape(L, prefix + "scale_tril", (*lead, d, d), "(..., d, d) like the means")
    check_finite(L, prefix + "scale_tril")
    if not (torch.diagonal(L, dim1=-2, dim2=-1) > 0).all():
        raise ValueError(f"{prefix}scale_tril: expected lower Cholesky factors with a positive diagonal")
    return None, torch.tril(L)


def truth_batch(truth, truth_mask, B: int, d: int, device) -> tuple[torch.Tensor, torch.Tensor]:
    """(truth (B, M, d) float64 with padded rows zeroed, mask (B, M) bool) from a padded tensor or a list."""
    if isinstance(truth, (list, tuple)):
        if truth_mask is not None:
            raise ValueError("truth_mask: expected None when truth is a list of (M_b, d) tensors")
        if len(truth) != B:
            raise ValueError(f"truth: expected a list of B = {B} tensors of shape (M_b, d), got {len(truth)}")
        rows = [as_float64(t, f"truth[{b}]", device, "(M_b, d)") for b, t in enumerate(truth)]
        rows = [t.reshape(0, d) if t.numel() == 0 else t for t in rows]
        for b, t in enumerate(rows):
            if t.ndim != 2 or t.shape[1] != d:
                raise ValueError(f"truth[{b}]: expected shape (M_b, {d}), got {tuple(t.shape)}")
        M = max((t.shape[0] for t in rows), default=0)
        y = torch.zeros((B, M, d), dtype=torch.float64, device=device)
        mask = torch.zeros((B, M), dtype=torch.bool, device=device)
        for b, t in enumerate(rows):
            y[b, : t.shape[0]] = t
            mask[b, : t.shape[0]] = True
        check_finite(y, "truth")
        return y, mask
    y = as_float64(truth, "truth", device, "(B, M, d)") if truth_mask is None else truth_raw(truth, device)
    if y.ndim != 3 or y.shape[0] != B or y.shape[2] != d:
        raise ValueError(f"truth: expected shape (B, M, d) = ({B}, M, {d}), got {tuple(y.shape)}")
    if truth_mask is None:
        mask = torch.ones(y.shape[:2], dtype=torch.bool, device=device)
    else:
        mask = torch.as_tensor(truth_mask, device=device)
        if mask.dtype != torch.bool:
            raise TypeError(f"truth_mask: expected a bool tensor (B, M), got dtype {mask.dtype}")
        check_shape(mask, "truth_mask", tuple(y.shape[:2]), "(B, M)")
    y = torch.where(mask[..., None], y, torch.zeros((), dtype=y.dtype, device=device))
    if not torch.isfinite(y).all():
        raise ValueError("truth: expected finite values at the rows that truth_mask keeps")
    return y, mask


def truth_raw(truth, device) -> torch.Tensor:
    """A padded truth tensor whose padded rows may hold anything (NaN included)."""
    if not isinstance(truth, torch.Tensor) or not truth.is_floating_point():
        raise TypeError("truth: expected a floating-point tensor (B, M, d)")
    return truth.to(device=device, dtype=torch.float64)


def poisson_parts(poisson) -> tuple:
    if poisson is None:
        return ()
    parts = tuple(poisson) if isinstance(poisson, (list, tuple)) else (poisson,)
    for i, p in enumerate(parts):
        if not isinstance(p, (UniformPoisson, GaussianPoisson)):
            raise TypeError(
                f"poisson[{i}]: expected UniformPoisson or GaussianPoisson, got {type(p).__name__}"
            )
    return parts


def per_sample(x: torch.Tensor, B: int, extra: int, name: str, text: str) -> torch.Tensor:
    """An unbatched poisson field broadcast to the batch (a leading B added when missing)."""
    if x.ndim == extra:
        return x.expand(B, *x.shape)
    if x.ndim == extra + 1 and x.shape[0] == B:
        return x
    raise ValueError(f"{name}: expected shape {text} or (B, {text[1:]} with B = {B}, got {tuple(x.shape)}")


def poisson_at(parts: tuple, y: torch.Tensor, B: int, d: int, device) -> tuple[torch.Tensor, torch.Tensor]:
    """(log lambda(y) (B, M), Lambda (B,)) of the superposed Poisson parts; (-inf, 0) without any.

    ``-inf`` entries (outside every box, a zero rate) are constants: a zero rate enters through
    ``torch.where`` on a safe value, so that no ``0 * inf`` reaches the gradient.
    """
    M = y.shape[1]
    logs = []
    total = torch.zeros(B, dtype=torch.float64, device=device)
    for i, p in enumerate(parts):
        if isinstance(p, UniformPoisson):
            rate = as_float64(p.rate, f"poisson[{i}].rate", device, "() or (B,)")
            rate = per_sample(rate, B, 0, f"poisson[{i}].rate", "()")
            check_finite(rate, f"poisson[{i}].rate")
            if (rate < 0).any():
                raise ValueError(f"poisson[{i}].rate: expected values >= 0, got a negative rate")
            low = as_float64(p.low, f"poisson[{i}].low", device, "(d,)").reshape(-1)
            high = as_float64(p.high, f"poisson[{i}].high", device, "(d,)").reshape(-1)
            if low.shape != (d,) or high.shape != (d,):
                raise ValueError(
                    f"poisson[{i}].low, high: expected shape ({d},), got "
                    f"{tuple(low.shape)} and {tuple(high.shape)}"
                )
            if not (low < high).all():
                raise ValueError(f"poisson[{i}].low, high: expected low < high in every dimension")
            log_volume = torch.log(high - low).sum()
            positive = rate > 0
            log_rate = torch.where(
                positive,
                torch.log(torch.where(positive, rate, torch.ones_like(rate))),
                torch.full_like(rate, -math.inf),
            )
            inside = ((y >= low) & (y <= high)).all(-1)  # (B, M), the box closed as in nb.PPP
            level = (log_rate - log_volume)[:, None].expand(B, M)
            logs.append(torch.where(inside, level, torch.full_like(level, -math.inf)))
            total = total + rate
        else:
            w = per_sample(
                as_float64(p.log_weights, f"poisson[{i}].log_weights", device, "(C,)"),
                B,
                1,
                f"poisson[{i}].log_weights",
                "(C,)",
            )
            check_finite(w, f"poisson[{i}].log_weights")
            C = w.shape[1]
            means = per_sample(
                as_float64(p.means, f"poisson[{i}].means", device, "(C, d)"),
                B,
                2,
                f"poisson[{i}].means",
                "(C, d)",
            )
            check_shape(means, f"poisson[{i}].means", (B, C, d), "(B, C, d)")
            var, L = covariance(
                None
                if p.variances is None
                else per_sample(torch.as_tensor(p.variances), B, 2, f"poisson[{i}].variances", "(C, d)"),
                None
                if p.scale_tril is None
                else per_sample(torch.as_tensor(p.scale_tril), B, 3, f"poisson[{i}].scale_tril", "(C, d, d)"),
                (B, C),
                d,
                device,
                prefix=f"poisson[{i}].",
            )
            log_pdf = gaussian_logpdf(y, means, var, L)  # (B, C, M)
            logs.append(
                torch.logsumexp(w[..., None] + log_pdf, dim=1)
                if C
                else torch.full((B, M), -math.inf, dtype=torch.float64, device=device)
            )
            total = total + torch.exp(w).sum(-1)
    if not logs:
        return torch.full((B, M), -math.inf, dtype=torch.float64, device=device), total
    if len(logs) == 1:
        return logs[0], total
    stacked = torch.stack(logs)
    top = stacked.max(0).values
    finite = torch.isfinite(top)
    safe_top = torch.where(finite, top, torch.zeros_like(top)).detach()
    sum_exp = torch.exp(stacked - safe_top).sum(0)
    summed = safe_top + torch.log(torch.where(finite, sum_exp, torch.ones_like(sum_exp)))
    return torch.where(finite, summed, top), total


def check_options(q, reduction: str, infinite: str) -> int:
    q = check_q(q, "q")
    if reduction not in REDUCTIONS:
        raise ValueError(f"reduction: expected one of {REDUCTIONS}, got {reduction!r}")
    if infinite not in INFINITE:
        raise ValueError(f"infinite: expected one of {INFINITE}, got {infinite!r}")
    return q


def output_mask_of(output_mask, B: int, N: int, device) -> torch.Tensor:
    """``output_mask`` as a bool tensor (B, N) on ``device``; all True where it is None."""
    if output_mask is None:
        return torch.ones((B, N), dtype=torch.bool, device=device)
    mask = torch.as_tensor(output_mask, device=device)
    if mask.dtype != torch.bool:
        raise TypeError(f"output_mask: expected a bool tensor (B, N), got dtype {mask.dtype}")
    check_shape(mask, "output_mask", (B, N), "(B, N)")
    return mask
