"""Benchmark: nb.pgospa per frame against nb.gospa and a per-pair version; nb.ptgospa against nb.tgospa.

* nb.pgospa (a truth of n points against an MB of n Gaussian Bernoullis in
  2-D) against nb.gospa on the same points and estimated means: the target is
  a median per-round ratio of at most about 2.
* A straightforward per-pair implementation (as the authors' ``PGOSPA.m``
  computes it: a loop over the pairs with ``scipy.linalg.sqrtm`` for the
  Wasserstein distance, the n x 2n cost matrix with dummy columns, one
  ``linear_sum_assignment``) on the same input; the values must agree.
* nb.ptgospa against nb.tgospa on the same trajectories (every r = 1, zero
  covariances: the same value) and with existences and covariances.

All sides are timed in this run, interleaved in rounds (each once per round);
the script prints the median and worst per-round ratios.

Run:  python benchmarks/bench_pgospa.py [--sizes 10 50 200] [--rounds 30]
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np
import scipy.linalg
from scipy.optimize import linear_sum_assignment

import nllbench as nb

sys.path.insert(0, str(Path(__file__).parent))
from rounds import overhead, rounds, speedup  # noqa: E402


def per_pair(
    truth: np.ndarray, r: np.ndarray, means: np.ndarray, covs: np.ndarray, c: float, p: float
) -> float:
    """P-GOSPA (alpha = 2) the straightforward way: W2 pair by pair (sqrtm), dummy columns, one assignment."""
    nx, ny = truth.shape[0], r.size
    half = c**p / 2.0
    zero = np.zeros((2, 2))
    cost = np.full((nx, ny + nx), np.inf)
    for i in range(nx):
        for j in range(ny):
            root = scipy.linalg.sqrtm(covs[j]).real
            inner = scipy.linalg.sqrtm(root @ zero @ root).real  # the truth's covariance is 0
            w2 = np.sqrt(
                max(np.sum((truth[i] - means[j]) ** 2) + np.trace(covs[j]) - 2 * np.trace(inner), 0.0)
            )
            cost[i, j] = min(1.0, r[j]) * w2**p + abs(1.0 - r[j]) * half - r[j] * half
        cost[i, ny + i] = half
    rows, cols = linear_sum_assignment(cost)
    return float((cost[rows, cols].sum() + half * r.sum()) ** (1.0 / p))


def scene(rng: np.random.Generator, n: int):
    """n true points in a 100 x 100 field; n estimates near most of them (r in (0, 1], small covariances)."""
    truth = rng.uniform(0, 100, (n, 2))
    near = int(0.9 * n)
    means = np.concatenate([truth[:near] + rng.normal(0, 1.0, (near, 2)), rng.uniform(0, 100, (n - near, 2))])
    L = rng.normal(0, 0.6, (n, 2, 2))
    covs = L @ np.swapaxes(L, 1, 2) + 0.05 * np.eye(2)
    r = rng.uniform(0.3, 1.0, n)
    return truth, r, means, covs


def trajectories(rng: np.random.Generator, K: int, n: int):
    """n objects over K frames, estimates with noise, a few swapped labels, existences and covariances."""
    T, TI, E, EI, R, S = [], [], [], [], [], []
    pos = rng.uniform(0, 50, (n, 2))
    for _ in range(K):
        pos = pos + rng.normal(0, 0.5, (n, 2))
        T.append(pos.copy())
        TI.append(np.arange(n))
        keep = rng.random(n) < 0.9
        E.append(pos[keep] + rng.normal(0, 0.4, (keep.sum(), 2)))
        EI.append(np.flatnonzero(keep) + 100 * (rng.random(keep.sum()) < 0.05))
        R.append(rng.uniform(0.4, 1.0, keep.sum()))
        L = rng.normal(0, 0.3, (keep.sum(), 2, 2))
        S.append(L @ np.swapaxes(L, 1, 2))
    return T, TI, E, EI, R, S


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10, 50, 200], help="objects per frame")
    ap.add_argument("--rounds", type=int, default=30, help="interleaved rounds per size")
    ap.add_argument("--per-pair-max", type=int, default=50, help="largest size timed per pair (it is slow)")
    args = ap.parse_args()
    rng = np.random.default_rng(2412)
    c, p = 5.0, 2.0
    ok = True
    for n in args.sizes:
        truth, r, means, covs = scene(rng, n)
        est = nb.MultiBernoulli.gaussian(r, means, covs)
        nb.pgospa(truth[:3], est, c=c, p=p)  # compile
        nb.gospa(means[:3], truth[:3], c=c, p=p)
        sides = {
            "gospa": lambda m=means, t=truth: nb.gospa(m, t, c=c, p=p),
            "pgospa": lambda t=truth, e=est: nb.pgospa(t, e, c=c, p=p),
        }
        if n <= args.per_pair_max:
            sides["per_pair"] = lambda t=truth, r=r, m=means, s=covs: per_pair(t, r, m, s, c, p)
        with warnings.catch_warnings():  # sqrtm of the zero matrix warns that it is singular
            warnings.simplefilter("ignore", scipy.linalg.LinAlgWarning)
            times, last = rounds(sides, args.rounds)
        print(
            f"n = {n} (truth points against {n} Gaussian Bernoullis, 2-D), {args.rounds} rounds, median time"
        )
        print(f"  nb.gospa (means only)   {np.median(times['gospa']) * 1e6:10.1f} us")
        print(
            f"  nb.pgospa               {np.median(times['pgospa']) * 1e6:10.1f} us   "
            f"to nb.gospa: {overhead(times['pgospa'], times['gospa'])} (target median <= about 2)"
        )
        ok &= float(np.median(np.array(times["pgospa"]) / times["gospa"])) <= 2.5
        if "per_pair" in times:
            print(
                f"  per pair (sqrtm loop)   {np.median(times['per_pair']) * 1e6:10.1f} us   "
                f"nb.pgospa faster by {speedup(times['per_pair'], times['pgospa'])}"
            )
            gap = abs(last["per_pair"] - last["pgospa"].value) / max(1.0, last["pgospa"].value)
            print(f"  values agree: relative difference {gap:.2g}")
            ok &= gap <= 1e-9

    K, n = 100, 10
    T, TI, E, EI, R, S = trajectories(rng, K, n)
    nb.ptgospa(T[:2], TI[:2], E[:2], EI[:2], c=c, p=p)
    times, last = rounds(
        {
            "tgospa": lambda: nb.tgospa(T, TI, E, EI, c=c, p=p),
            "ptgospa_certain": lambda: nb.ptgospa(T, TI, E, EI, c=c, p=p),
            "ptgospa": lambda: nb.ptgospa(
                T, TI, E, EI, c=c, p=p, estimate_existence=R, estimate_covariances=S
            ),
        },
        max(5, args.rounds // 3),
    )
    print(f"\nK = {K} frames, {n} objects, {max(5, args.rounds // 3)} rounds, median time")
    print(f"  nb.tgospa                          {np.median(times['tgospa']) * 1e3:8.2f} ms")
    print(
        f"  nb.ptgospa (r = 1, no covariance)  {np.median(times['ptgospa_certain']) * 1e3:8.2f} ms   "
        f"to nb.tgospa: {overhead(times['ptgospa_certain'], times['tgospa'])}"
    )
    print(
        f"  nb.ptgospa (r, covariances)        {np.median(times['ptgospa']) * 1e3:8.2f} ms   "
        f"to nb.tgospa: {overhead(times['ptgospa'], times['tgospa'])}"
    )
    same = last["tgospa"].value == last["ptgospa_certain"].value
    print(f"  r = 1 and no covariance give nb.tgospa's value: {same}")
    ok &= same
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
