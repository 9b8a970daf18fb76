"""Benchmark: forward + backward of the set NLL loss on a batch, against a per-sample implementation.

A batch of 64 samples, N = 16 outputs (logits, means, diagonal variances, d = 2), 0 to 16 truths per
sample, a uniform Poisson part, Q = 16 (the issue's setting). Two sides, same inputs, same Q best:

* ``nllbench.torch.set_nll``: one cost tensor for the batch, one detached copy to the CPU, the
  engine's Murty ranking per sample, then one gather and one log-sum-exp for the whole batch;
* ``per_sample``: the straightforward implementation (as a training loop written around a C Murty
  would be): per sample, its cost matrix built in torch, ranked by the same ``nb.murty``, each
  association's cost summed in a Python loop, a log-sum-exp per sample, the losses added.

Both losses and gradients agree (checked each run). Sides run in interleaved rounds
(``rounds.py``); printed: ms per sample of each (median and worst round), and the per-round ratio
per_sample / set_nll (median and worst). ``--device cuda`` times the set NLL on a GPU (ranking
stays on the CPU).

Run:  python benchmarks/bench_torch_loss.py [--batch 64] [--rounds 7] [--threads 1] [--device cpu]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import numpy as np
import torch

import nllbench as nb
import nllbench.torch as nbt

sys.path.insert(0, str(Path(__file__).parent))
from rounds import rounds, speedup  # noqa: E402

LOW, HIGH, RATE, D = np.zeros(2), np.full(2, 10.0), 1.0, 2


def batch(rng: np.random.Generator, B: int, N: int, M: int, device: str):
    logits = torch.tensor(rng.normal(0.0, 2.0, (B, N)), requires_grad=True, device=device)
    means = torch.tensor(rng.uniform(0.0, 10.0, (B, N, D)), requires_grad=True, device=device)
    variances = torch.tensor(rng.uniform(0.3, 2.0, (B, N, D)), requires_grad=True, device=device)
    truth = [
        torch.tensor(rng.uniform(0.0, 10.0, (rng.integers(0, M + 1), D)), device=device) for _ in range(B)
    ]
    return logits, means, variances, truth


def ours(logits, means, variances, truth, q: int):
    out = nbt.set_nll(
        logits,
        means,
        variances=variances,
        truth=truth,
        poisson=nbt.UniformPoisson(RATE, LOW, HIGH),
        q=q,
        reduction="sum",
    )
    grads = torch.autograd.grad(out.loss, (logits, means, variances))
    return out.loss.item(), grads


def per_sample(logits, means, variances, truth, q: int):
    """The straightforward loss: one sample at a time, one association at a time."""
    total = logits.new_zeros((), dtype=torch.float64)
    log_lam = float(np.log(RATE) - np.sum(np.log(HIGH - LOW)))
    for b, y in enumerate(truth):
        lg, mu, var = logits[b].double(), means[b].double(), variances[b].double()
        log_r, log_1mr = torch.nn.functional.logsigmoid(lg), torch.nn.functional.logsigmoid(-lg)
        base = RATE - log_1mr.sum()
        m = y.shape[0]
        if m == 0:
            total = total + base
            continue
        diff = y[None, :, :] - mu[:, None, :]
        log_p = -0.5 * (
            (diff**2 / var[:, None, :]).sum(-1) + torch.log(var).sum(-1)[:, None] + D * np.log(2 * np.pi)
        )
        to_output = -(log_r[:, None] + log_p - log_1mr[:, None]).T  # (m, N)
        N = to_output.shape[1]
        cost = np.full((m, N + m), np.inf)
        cost[:, :N] = to_output.detach().cpu().numpy()
        cost[np.arange(m), N + np.arange(m)] = -log_lam
        ranked = nb.murty(cost, q)
        terms = []
        for cols in ranked.columns:
            c = base
            for l_, k in enumerate(cols):
                c = c + (to_output[l_, k] if k < N else -log_lam)
            terms.append(-c)
        total = total - torch.logsumexp(torch.stack(terms), 0)
    grads = torch.autograd.grad(total, (logits, means, variances))
    return total.item(), grads


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--outputs", type=int, default=16)
    p.add_argument("--truths", type=int, default=16, help="at most; each sample draws 0..this many")
    p.add_argument("--q", type=int, default=16)
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--device", default="cpu")
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    inputs = batch(rng, args.batch, args.outputs, args.truths, args.device)
    print(
        f"batch {args.batch}, N = {args.outputs} outputs, 0..{args.truths} truths, Q = {args.q}, "
        f"{torch.get_num_threads()} thread(s), device {args.device}; {args.rounds} rounds, forward + backward"
    )
    # warm-up outside the timings (compiled Murty kernels, torch's first calls), and the agreement check
    a, b = ours(*inputs, args.q), per_sample(*inputs, args.q)
    assert abs(a[0] - b[0]) <= 1e-9 * abs(b[0]), (a[0], b[0])
    for ga, gb in zip(a[1], b[1], strict=True):
        torch.testing.assert_close(ga, gb, rtol=1e-9, atol=1e-10)
    sides = {"set_nll": lambda: ours(*inputs, args.q), "per_sample": lambda: per_sample(*inputs, args.q)}
    times, _ = rounds(sides, args.rounds)
    for name, t in times.items():
        ms = [1e3 * x / args.batch for x in t]
        print(f"  {name:>10}: median {statistics.median(ms):.3f} ms/sample, worst {max(ms):.3f} ms/sample")
    print(f"  per_sample / set_nll: {speedup(times['per_sample'], times['set_nll'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
