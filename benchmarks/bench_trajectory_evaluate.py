"""Benchmark: what the trajectory NLL adds to an evaluate job of the reference filters.

Runs the filter (PMB or PMBM) on simulated Williams-2015 seeds once, then
times ``evaluate_file_many`` on the posterior files with the grid of the
``.test`` workflow (Q = 1 and 3 at covariance scale 1, Q = 1 at scale 0.5,
the exact NLL), with the trajectory NLL (as the pipeline computes it) and
without it (the baseline: the same call with the trajectory part switched
off), in interleaved rounds. Prints the per-round extra seconds and the
ratio with / without, as median and worst (max extra, max ratio).

Run:  python benchmarks/bench_trajectory_evaluate.py [--filter pmbm] [--steps 8] [--seeds 2] [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import nllbench.pipeline.runs as runs
from nllbench.measures.evaluate import EvaluationSettings, grid_settings


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--filter", default="pmbm")
    p.add_argument("--steps", type=int, default=8)
    p.add_argument("--seeds", type=int, default=2)
    p.add_argument("--clutter", type=float, default=10.0)
    p.add_argument("--rounds", type=int, default=5)
    args = p.parse_args()
    tmp = Path(tempfile.mkdtemp())
    pairs = []
    for seed in range(args.seeds):
        sc, post = tmp / f"sc{seed}.nc", tmp / f"post{seed}.nc"
        runs.simulate_file("williams15", seed, sc, {"steps": args.steps, "clutter_rate": args.clutter})
        runs.filter_file(sc, args.filter, post)
        pairs.append((post, sc))
    base = EvaluationSettings(qs=(1, 3), exact=True)
    jobs = grid_settings(base, [(1, 1.0), (3, 1.0), (1, 0.5)])
    original = runs._trajectory_runs

    def job(with_trajectory: bool) -> float:
        runs._trajectory_runs = original if with_trajectory else (lambda *a: "switched off")
        t0 = time.perf_counter()
        for post, sc in pairs:
            outputs = [(tmp / f"m{i}.nc", s, None) for i, s in enumerate(jobs)]
            runs.evaluate_file_many(post, sc, outputs)
        return time.perf_counter() - t0

    job(True), job(False)  # compile and warm up both
    extra, ratio = [], []
    for _ in range(args.rounds):
        without = job(False)
        with_ = job(True)
        extra.append(with_ - without)
        ratio.append(with_ / without)
    runs._trajectory_runs = original
    print(
        f"{args.filter}, {args.seeds} seeds x {args.steps} steps, clutter {args.clutter:g}, "
        f"{len(jobs)} settings per file, {args.rounds} rounds"
    )
    print(
        "extra seconds per evaluate job (trajectory NLL): "
        f"median {statistics.median(extra):.3f}, worst {max(extra):.3f}"
    )
    print(f"ratio with / without: median {statistics.median(ratio):.3f}, worst {max(ratio):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
