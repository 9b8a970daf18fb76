"""Train a small set-prediction network twice: a Hungarian matching loss, then the set NLL.

Usage (the numbers in docs/torch.md, "What training on the NLL changes")::

    python examples/train_set_nll.py [--seeds 0 1 2] [--steps 1500] [--test 500] [--out results/train_set_nll]
    python examples/train_set_nll.py --smoke        # a few steps, to check that it runs

Scenes: 0 to 4 objects uniform on the box [0, 10]^2; each detected with probability 0.85, its
measurement the position plus N(0, 0.5^2 I) and an amplitude N(1.5, 1); Poisson clutter of mean 3,
uniform on the box, amplitude N(0, 1) (so that existence is uncertain, and learnable). The
network (in the spirit of MT3v2, Pinto et al. 2022, but one frame and small enough for a CPU): a
transformer encoder over the measurements, and per measurement an existence logit, a mean (the
measurement plus an offset) and diagonal variances: a multi-Bernoulli of one Bernoulli per
measurement (padded measurements are padded outputs). Every density is scored with a
fixed Poisson part for the undetected objects, uniform on the box with mean 0.3 (= 2 objects x
0.15 missed), in training (set NLL) and in evaluation (both networks).

Losses, same network, optimiser, steps and seed:

* ``hungarian`` (MT3v2's recipe): one Hungarian match per sample on the pair cost
  ``-log(r_k N(y_l; m_k, P_k))``, the Gaussian NLL of the matched pairs (per truth) plus the binary
  cross-entropy of every existence logit against "matched" (per output);
* ``set_nll``: ``nllbench.torch.set_nll`` (Q = 8), the NLL of the whole PMB at the true set.

Both are scored on the same held-out scenes by nllbench: NLL (``nb.nll``, Q = 100), the energy
score (``nb.energy_score``, kernel covariance I, 200 samples), GOSPA (c = 2, p = 1) of the
outputs with r > 0.5, the NEES of GOSPA-matched estimates (2 when calibrated; with coverage of the
95 % ellipse) and the reliability of existence (expected calibration error of r against "matched
within c by the optimal assignment", 10 bins). Per seed: means over scenes, and the paired
difference set_nll - hungarian over scenes with a 95 % interval (normal, paired per scene; NEES and
ECE by a 1,000-resample scene bootstrap). Writes scores.csv (one row per seed and loss) and
differences.csv under --out, and prints both.
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from scipy.optimize import linear_sum_assignment
from scipy.stats import chi2

import nllbench as nb
import nllbench.torch as nbt

BOX = (np.zeros(2), np.full(2, 10.0))
P_D, SIGMA, CLUTTER, MAX_OBJECTS, AMPLITUDE = 0.85, 0.5, 3.0, 4, 1.5
PPP_RATE = 0.3  # expected undetected objects: E[n] (1 - P_D) = 2 x 0.15
C_GOSPA = 2.0


def scenes(rng: np.random.Generator, n: int):
    """n scenes: (measurements (n, L, 3): position / 10 and amplitude, mask (n, L), truths [(M_b, 2)])."""
    meas, truths = [], []
    for _ in range(n):
        x = rng.uniform(0.0, 10.0, (rng.integers(0, MAX_OBJECTS + 1), 2))
        z = x[rng.random(len(x)) < P_D]
        z = np.hstack([z + rng.normal(0.0, SIGMA, z.shape), rng.normal(AMPLITUDE, 1.0, (len(z), 1))])
        n_clutter = rng.poisson(CLUTTER)
        clutter = np.hstack([rng.uniform(0.0, 10.0, (n_clutter, 2)), rng.normal(0.0, 1.0, (n_clutter, 1))])
        meas.append(rng.permutation(np.vstack([z, clutter])))
        truths.append(x)
    L = max(1, max(len(z) for z in meas))
    Z = np.zeros((n, L, 3))
    mask = np.zeros((n, L), dtype=bool)
    for i, z in enumerate(meas):
        Z[i, : len(z)], mask[i, : len(z)] = z, True
    Z[..., :2] /= 10.0
    return torch.tensor(Z, dtype=torch.float32), torch.tensor(mask), truths


class SetPredictor(torch.nn.Module):
    """Measurements in, one Bernoulli per measurement out (logit, mean, variances): a small transformer.

    Each measurement attends to the others (self-attention over the set, as MT3v2's encoder does)
    and becomes a Bernoulli: existence logit, mean = the measurement plus a predicted offset,
    diagonal variances. Padded measurements give padded outputs (``output_mask``).
    """

    def __init__(self, width: int = 64) -> None:
        super().__init__()
        self.embed = torch.nn.Sequential(
            torch.nn.Linear(3, width), torch.nn.ReLU(), torch.nn.Linear(width, width)
        )
        enc = torch.nn.TransformerEncoderLayer(width, 4, 2 * width, dropout=0.0, batch_first=True)
        self.encoder = torch.nn.TransformerEncoder(enc, 2, enable_nested_tensor=False)
        self.head = torch.nn.Linear(width, 5)

    def forward(self, z: torch.Tensor, mask: torch.Tensor):
        out = self.head(self.encoder(self.embed(z), src_key_padding_mask=~mask))
        logits = out[..., 0]
        means = 10.0 * z[..., :2] + out[..., 1:3]
        variances = torch.nn.functional.softplus(out[..., 3:5]) + 1e-3
        return logits, means, variances


def hungarian_loss(logits, means, variances, mask, truths):
    """MT3v2's recipe: one Hungarian match on -log(r N), Gaussian NLL of the pairs + BCE of all logits."""
    nll_pairs, n_truths = logits.new_zeros(()), 0
    target = torch.zeros_like(logits)
    for b, y in enumerate(truths):
        live = torch.nonzero(mask[b]).flatten()
        if len(y) == 0 or live.numel() == 0:
            continue
        yt = torch.as_tensor(y, dtype=means.dtype)
        dist = torch.distributions.Normal(means[b, live][:, None, :], variances[b, live][:, None, :].sqrt())
        log_p = dist.log_prob(yt[None]).sum(-1)  # (N_b, M_b)
        cost = -(log_p + torch.nn.functional.logsigmoid(logits[b, live])[:, None])
        k, m = linear_sum_assignment(cost.detach().numpy())
        nll_pairs = nll_pairs - log_p[k, m].sum()
        n_truths += len(y)
        target[b, live[k]] = 1.0
    bce = torch.nn.functional.binary_cross_entropy_with_logits(logits[mask], target[mask])
    return nll_pairs / max(n_truths, 1) + bce


def set_nll_loss(logits, means, variances, mask, truths):
    """``nllbench.torch.set_nll``: the PMB's NLL at the true set (the fixed Poisson part), Q = 8."""
    out = nbt.set_nll(
        logits,
        means,
        variances=variances,
        output_mask=mask,
        truth=[torch.as_tensor(y) for y in truths],
        poisson=nbt.UniformPoisson(PPP_RATE, *BOX),
        q=8,
    )
    return out.loss


def train(loss_name: str, seed: int, steps: int, batch: int, log_every: int) -> SetPredictor:
    torch.manual_seed(seed)
    rng = np.random.default_rng(1000 + seed)  # training scenes: the same stream for both losses
    net = SetPredictor()
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    loss_fn = {"hungarian": hungarian_loss, "set_nll": set_nll_loss}[loss_name]
    t0 = time.perf_counter()
    for step in range(steps):
        z, mask, truths = scenes(rng, batch)
        loss = loss_fn(*net(z, mask), mask, truths)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), 5.0)
        opt.step()
        sched.step()
        if log_every and (step % log_every == 0 or step == steps - 1):
            elapsed = time.perf_counter() - t0
            print(f"  {loss_name} seed {seed} step {step}: loss {loss.item():.3f} ({elapsed:.0f} s)")
    return net


def scene_scores(logits, means, variances, y, rng) -> dict:
    """nllbench's scores of one scene's PMB (outputs + the fixed Poisson part) at its truth."""
    r = 1.0 / (1.0 + np.exp(-logits))
    covs = variances[:, :, None] * np.eye(2)
    density = nb.PMB(nb.PPP.uniform(PPP_RATE, *BOX), nb.MultiBernoulli.gaussian(r, means, covs))
    nll = nb.nll(density, y, q=100).value
    energy = nb.energy_score(density, y, kernel_cov=1.0, n_samples=200, seed=rng).value
    est = r > 0.5
    gospa = nb.gospa(means[est], y, c=C_GOSPA, p=1).value
    nees, matched = [], np.zeros(len(r), dtype=bool)
    if len(y):
        d = np.linalg.norm(means[:, None, :] - y[None, :, :], axis=2)
        rows, cols = linear_sum_assignment(np.minimum(d, C_GOSPA))
        ok = d[rows, cols] < C_GOSPA
        matched[rows[ok]] = True  # for the existence reliability: every output, by the optimal assignment
        e_rows, e_cols = linear_sum_assignment(np.minimum(d[est], C_GOSPA)) if est.any() else ([], [])
        idx = np.flatnonzero(est)
        for i, j in zip(e_rows, e_cols, strict=True):
            if d[idx[i], j] < C_GOSPA:
                diff = y[j] - means[idx[i]]
                nees.append(float(np.sum(diff**2 / variances[idx[i]])))
    return {"nll": nll, "energy": energy, "gospa": gospa, "nees": nees, "r": r, "matched": matched}


def ece(r: np.ndarray, hit: np.ndarray, bins: int = 10) -> float:
    """Expected calibration error of existence probabilities r against the outcomes hit."""
    which = np.minimum((r * bins).astype(int), bins - 1)
    total = 0.0
    for k in range(bins):
        sel = which == k
        if sel.any():
            total += sel.sum() / r.size * abs(r[sel].mean() - hit[sel].mean())
    return total


def evaluate(net: SetPredictor, test, seed: int) -> list[dict]:
    z, mask, truths = test
    with torch.no_grad():
        logits, means, variances = (t.double().numpy() for t in net(z, mask))
    rng = np.random.default_rng(seed)
    live = mask.numpy()
    return [
        scene_scores(logits[i][live[i]], means[i][live[i]], variances[i][live[i]], truths[i], rng)
        for i in range(len(truths))
    ]


def summary(rows: list[dict]) -> dict:
    nees = np.concatenate([np.asarray(s["nees"], dtype=float) for s in rows])
    r = np.concatenate([s["r"] for s in rows])
    hit = np.concatenate([s["matched"] for s in rows])
    return {
        "nll": float(np.mean([s["nll"] for s in rows])),
        "energy": float(np.mean([s["energy"] for s in rows])),
        "gospa": float(np.mean([s["gospa"] for s in rows])),
        "nees": float(nees.mean()) if nees.size else math.nan,
        "coverage95": float(np.mean(nees <= chi2.ppf(0.95, 2))) if nees.size else math.nan,
        "ece": ece(r, hit),
        "mean_r": float(r.mean()),
    }


def paired(a: list[dict], b: list[dict], rng: np.random.Generator, n_boot: int) -> dict:
    """set_nll (b) - hungarian (a): per-scene means with normal 95 % intervals; NEES, ECE by bootstrap."""
    out = {}
    for key in ("nll", "energy", "gospa"):
        diff = np.array([y[key] - x[key] for x, y in zip(a, b, strict=True)])
        half = 1.96 * diff.std(ddof=1) / math.sqrt(diff.size)
        out[key] = (diff.mean(), diff.mean() - half, diff.mean() + half)
    n = len(a)
    for key in ("nees", "ece", "coverage95"):
        point = summary(b)[key] - summary(a)[key]
        boots = []
        for _ in range(n_boot):
            idx = rng.integers(0, n, n)
            boots.append(summary([b[i] for i in idx])[key] - summary([a[i] for i in idx])[key])
        boots = np.asarray(boots)
        boots = boots[np.isfinite(boots)]
        lo, hi = np.percentile(boots, [2.5, 97.5]) if boots.size else (math.nan, math.nan)
        out[key] = (point, lo, hi)
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    p.add_argument("--steps", type=int, default=1500)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--test", type=int, default=500, help="held-out scenes")
    p.add_argument("--boot", type=int, default=1000, help="bootstrap resamples for NEES and ECE")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--out", type=Path, default=Path("results/train_set_nll"))
    p.add_argument("--smoke", action="store_true", help="a few steps and scenes: check that it runs")
    args = p.parse_args()
    if args.smoke:
        args.seeds, args.steps, args.batch, args.test, args.boot = [0], 3, 8, 12, 20
    torch.set_num_threads(args.threads)
    args.out.mkdir(parents=True, exist_ok=True)
    test = scenes(np.random.default_rng(99), args.test)  # held-out scenes, the same for every run
    rows, diffs = [], []
    for seed in args.seeds:
        per_loss = {}
        for loss_name in ("hungarian", "set_nll"):
            t0 = time.perf_counter()
            net = train(loss_name, seed, args.steps, args.batch, 0 if args.smoke else max(args.steps // 5, 1))
            seconds = time.perf_counter() - t0
            per_loss[loss_name] = evaluate(net, test, seed)
            rows.append({"seed": seed, "loss": loss_name, "train_s": seconds, **summary(per_loss[loss_name])})
            print(pd.DataFrame(rows[-1:]).to_string(index=False, float_format="%.3f"))
        d = paired(per_loss["hungarian"], per_loss["set_nll"], np.random.default_rng(seed), args.boot)
        for key, (mean, lo, hi) in d.items():
            diffs.append(
                {"seed": seed, "measure": key, "set_nll_minus_hungarian": mean, "low95": lo, "high95": hi}
            )
    scores = pd.DataFrame(rows)
    differences = pd.DataFrame(diffs)
    scores.to_csv(args.out / "scores.csv", index=False)
    differences.to_csv(args.out / "differences.csv", index=False)
    print(scores.to_string(index=False, float_format="%.3f"))
    print(differences.to_string(index=False, float_format="%.3f"))


if __name__ == "__main__":
    main()
