"""The set NLL of a batch of network outputs, as a training loss (per frame).

Each sample's outputs are a Poisson multi-Bernoulli (mixture) density: N Bernoullis with existence
``sigmoid(logits)`` and Gaussian states, an optional Poisson part, optional global hypotheses with
weights ``softmax(hypothesis_logits)``. The loss is its negative log-likelihood at the true set
(Pinto et al., IEEE SPL 2021, eq. (1)-(4)), with each hypothesis' sum over associations truncated
to its Q best (eq. (9)): the value ``nb.nll`` gives for the same density and Q (per-hypothesis
budget). How the gradient is obtained is in :mod:`nllbench.torch._core` and ``docs/torch.md``.
"""

from __future__ import annotations

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
    poisson_at,
    poisson_parts,
    truth_batch,
)

#: The decomposition's names (those of :class:`nllbench.NLLResult`, without the i.i.d. cardinality).
TERMS = ("localization", "false", "missed", "mixture", "association")


@dataclass(frozen=True)
class SetNLLResult:
    """The set NLL of a batch: the loss to differentiate and what to log beside it.

    Attributes
    ----------
    loss : () tensor, float64
        The reduced loss (``reduction="none"``: the (B,) per-sample values), differentiable.
    per_sample : (B,) tensor, float64
        Each sample's NLL, differentiable; ``+inf`` (a constant, no gradient) for a sample whose
        likelihood is 0 under every listed association.
    localization, false, missed, mixture, association : (B,) tensors, detached
        The decomposition of ``nb.nll`` at each sample's best (hypothesis, association):
        ``-sum log(r_k p_k(y_l))`` over matched pairs, ``-sum log(1 - r_k)`` over unmatched
        outputs, ``Lambda - sum log lambda(y_l)`` over truths left to the Poisson part,
        ``-log w_h``, and the rest (<= 0); they sum to ``per_sample``. An infinite sample has
        ``missed = inf`` and the other terms 0.
    infinite : (B,) bool tensor
        Samples of zero likelihood (dropped from the loss with ``infinite="skip"``).
    complete : (B,) bool array
        Every association of non-zero likelihood was summed: the value is the exact NLL.
    n_terms : (B,) int array
        (hypothesis, association) terms summed.
    """

    loss: torch.Tensor
    per_sample: torch.Tensor
    localization: torch.Tensor
    false: torch.Tensor
    missed: torch.Tensor
    mixture: torch.Tensor
    association: torch.Tensor
    infinite: torch.Tensor
    complete: np.ndarray
    n_terms: np.ndarray

    def terms(self) -> dict[str, torch.Tensor]:
        """The decomposition, name -> (B,) detached tensor; the terms sum to ``per_sample``."""
        return {name: getattr(self, name) for name in TERMS}


def set_nll(
    logits,
    means,
    *,
    variances=None,
    scale_tril=None,
    truth,
    truth_mask=None,
    output_mask=None,
    poisson=None,
    hypothesis_logits=None,
    q: int = 16,
    reduction: str = "mean",
    infinite: str = "raise",
) -> SetNLLResult:
    """The NLL of a batch of Poisson multi-Bernoulli (mixture) outputs at the true sets.

    Parameters
    ----------
    logits : (B, N) tensor, or (B, H, N) with ``hypothesis_logits``
        Existence logits: ``r = sigmoid(logits)``, computed in log space (``log r = logsigmoid``,
        ``log(1 - r) = logsigmoid(-logits)``), so that no finite logit gives ``log 0``. Finite.
    means : (B, N, d) or (B, H, N, d) tensor
    variances : tensor like ``means``, optional
        Diagonal covariances (positive).
    scale_tril : (B, N, d, d) or (B, H, N, d, d) tensor, optional
        Lower Cholesky factors of the covariances (positive diagonal; the upper triangle is
        ignored). Exactly one of ``variances`` and ``scale_tril``.
    truth : (B, M, d) tensor, or a list of B tensors (M_b, d)
        True sets, padded (``truth_mask`` says which rows are real; padded rows may hold anything).
    truth_mask : (B, M) bool tensor, optional
        With a padded ``truth``; None: every row is real.
    output_mask : (B, N) bool tensor, optional
        Outputs that exist (False: a padded output, left out of the density). None: all.
    poisson : UniformPoisson, GaussianPoisson, a sequence of them (superposed), or None
        The Poisson part (undetected objects, clutter-like extra objects); its tensors may be
        predicted and are differentiated.
    hypothesis_logits : (B, H) tensor, optional
        Global hypotheses with weights ``softmax(hypothesis_logits)`` (a multi-Bernoulli mixture).
    q : int
        Associations kept per hypothesis (the Q best, ranked without gradients).
    reduction : {"mean", "sum", "none"}
        Over the samples counted (all but the infinite ones with ``infinite="skip"``); ``"none"``:
        the (B,) values (a skipped sample's is 0, a constant).
    infinite : {"raise", "skip", "keep"}
        A sample of zero likelihood: a ``ValueError`` naming it; left out of the reduction (its
        ``infinite`` flag set; all left out gives a loss of 0 with zero gradient); or kept, making
        the loss ``+inf`` while every gradient stays finite (the infinite value is a constant).

    Returns
    -------
    SetNLLResult

    Notes
    -----
    The cost matrix is ``nb.nll``'s (paper eq. (7)-(8)); the Q best associations per hypothesis
    are ranked on the CPU by :func:`nllbench.murty` on a detached float64 copy, then their costs
    are gathered and summed with a log-sum-exp on the tensors' device in float64. With the Q
    associations fixed, the truncated likelihood ``sum_A exp(-c_A)`` has gradient
    ``sum_A exp(-c_A) (-grad c_A)``: the weighted sum of each association's gradient, which is
    what autograd gives; no differentiable assignment is needed (``docs/torch.md``).

    Examples
    --------
    >>> import torch, nllbench.torch as nbt
    >>> logits = torch.zeros(1, 2, requires_grad=True)
    >>> means = torch.tensor([[[0.0, 0.0], [3.0, 0.0]]], requires_grad=True)
    >>> out = nbt.set_nll(logits, means, variances=torch.ones(1, 2, 2), truth=[torch.zeros(1, 2)])
    >>> out.loss.backward()
    >>> round(out.loss.item(), 4), round(out.false[0].item(), 4)  # -log(0.5 N(0; 0, I) 0.5 + ...), log 2
    (3.2131, 0.6931)
    """
    q = check_options(q, reduction, infinite)
    if not isinstance(logits, torch.Tensor):
        raise TypeError(f"logits: expected a tensor (B, N), got {type(logits).__name__}")
    device = logits.device
    mixture = hypothesis_logits is not None
    lg = as_float64(logits, "logits", device, "(B, H, N)" if mixture else "(B, N)")
    check_finite(lg, "logits")
    if lg.ndim != (3 if mixture else 2):
        raise ValueError(
            f"logits: expected shape {'(B, H, N) with hypothesis_logits' if mixture else '(B, N)'}, "
            f"got {tuple(lg.shape)}"
        )
    if not mixture:
        lg = lg[:, None, :]
    B, H, N = lg.shape
    mu = as_float64(means, "means", device, "(B, N, d)")
    lead = (B, H, N) if mixture else (B, N)
    if mu.ndim != len(lead) + 1 or tuple(mu.shape[:-1]) != lead:
        raise ValueError(
            f"means: expected shape {'(B, H, N, d)' if mixture else '(B, N, d)'} with "
            f"{'(B, H, N)' if mixture else '(B, N)'} = {lead} from the logits, got {tuple(mu.shape)}"
        )
    check_finite(mu, "means")
    d = mu.shape[-1]
    var, L = covariance(variances, scale_tril, tuple(mu.shape[:-1]), d, device)
    if not mixture:
        mu = mu[:, None]
        var = None if var is None else var[:, None]
        L = None if L is None else L[:, None]
    if mixture:
        log_hyp = as_float64(hypothesis_logits, "hypothesis_logits", device, "(B, H)")
        check_shape(log_hyp, "hypothesis_logits", (B, H), "(B, H)")
        check_finite(log_hyp, "hypothesis_logits")
        log_hyp = torch.log_softmax(log_hyp, dim=1)
    else:
        log_hyp = torch.zeros((B, 1), dtype=torch.float64, device=device)
    out_mask = output_mask_of(output_mask, B, N, device)
    y, t_mask = truth_batch(truth, truth_mask, B, d, device)
    log_lam, total_rate = poisson_at(poisson_parts(poisson), y, B, d, device)

    log_r = torch.nn.functional.logsigmoid(lg)
    log_1mr = torch.nn.functional.logsigmoid(-lg)
    log_p = _core.gaussian_logpdf(y[:, None], mu, var, L)  # (B, H, N, M)
    log_w = log_r[..., None] + log_p
    zero = torch.zeros((), dtype=torch.float64, device=device)
    base = total_rate[:, None] - torch.where(out_mask[:, None, :], log_1mr, zero).sum(-1)
    cost = _core.cost_matrix(log_w, log_1mr, log_lam, out_mask)
    ranked = _core.rank(cost, t_mask, q)
    costs = _core.association_costs(cost, base, ranked, t_mask)
    nll, log_terms = _core.log_likelihood(costs, log_hyp, ranked)

    with torch.no_grad():
        h, cols = _core.best_association(log_terms, ranked)
        b = torch.arange(B, device=device)
        loc = -_core.matched_sum(log_w, h, cols, t_mask)
        false = -_core.unmatched_sum(log_1mr, h, cols, t_mask, out_mask)
        missed = total_rate - _core.ppp_sum(log_lam, cols, t_mask, N)
        mix = -log_hyp[b, h]
    return finish(
        nll,
        ranked,
        {"localization": loc, "false": false, "missed": missed, "mixture": mix},
        reduction,
        infinite,
        SetNLLResult,
        "missed",
    )


def finish(nll, ranked, named: dict, reduction: str, infinite: str, record, infinite_term: str):
    """The reduced loss and the record: infinite samples handled as asked, terms zeroed for them."""
    bad = ~ranked.feasible
    if infinite == "raise" and bool(bad.any()):
        which = torch.nonzero(bad).flatten().tolist()
        raise ValueError(
            f"samples {which}: expected a truth of non-zero likelihood, got likelihood 0 under every "
            "association (more truths than outputs and no Poisson part, or a truth where the Poisson "
            "intensity is 0 and no output may take it); give a Poisson part, or infinite='skip' / 'keep'"
        )
    zero = torch.zeros((), dtype=nll.dtype, device=nll.device)
    inf = torch.tensor(float("inf"), dtype=nll.dtype, device=nll.device)
    detached = nll.detach()
    terms = {}
    for name, value in named.items():
        fill = inf if name == infinite_term else zero
        terms[name] = torch.where(bad, fill, torch.nan_to_num(value, nan=0.0))
    explained = sum(terms.values())
    terms["association"] = torch.where(bad, zero, detached - torch.where(bad, zero, explained))
    counted = ~bad if infinite == "skip" else torch.ones_like(bad)
    kept = torch.where(bad, zero, nll) if infinite == "skip" else nll
    if reduction == "none":
        loss = kept
    elif reduction == "sum":
        loss = kept.sum()
    else:
        loss = kept.sum() / counted.sum().clamp(min=1)
    return record(loss, nll, **terms, infinite=bad, complete=ranked.complete, n_terms=ranked.n_terms)


class SetNLLLoss(torch.nn.Module):
    """:func:`set_nll` as a module: ``q``, ``reduction``, ``infinite`` and a fixed ``poisson`` part set once.

    ``forward(logits, means, *, variances=None, scale_tril=None, truth, truth_mask=None,
    output_mask=None, poisson=None, hypothesis_logits=None)`` returns the :class:`SetNLLResult`
    (``.loss`` to differentiate); a ``poisson`` given to ``forward`` (e.g. predicted) replaces the
    fixed one.
    """

    def __init__(self, q: int = 16, reduction: str = "mean", infinite: str = "raise", poisson=None) -> None:
        super().__init__()
        self.q = check_options(q, reduction, infinite)
        self.reduction = reduction
        self.infinite = infinite
        self.poisson = poisson_parts(poisson) or None

    def forward(self, logits, means, *, truth, poisson=None, **kwargs) -> SetNLLResult:
        return set_nll(
            logits,
            means,
            truth=truth,
            poisson=self.poisson if poisson is None else poisson,
            q=self.q,
            reduction=self.reduction,
            infinite=self.infinite,
            **kwargs,
        )
