"""Benchmark: ``nllbench score`` on a 1,000-frame tracks file (50 Bernoullis, 40 truths per frame), Q = 10.

Prints the throughput in frames per second of

* ``score`` from the CSV files (read, validate, build the densities, evaluate),
* the same from Parquet files,
* ``evaluate_run`` (what ``nllbench evaluate`` runs after reading its
  posterior file) on the same densities already in memory: the baseline,
  measured in the same run,

with the ratios to the baseline, and checks that all give identical NLL values.

Run:  python benchmarks/bench_score.py [--frames 1000]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from nllbench.measures.evaluate import EvaluationSettings, evaluate_run
from nllbench.trackers.scoring import FillIns, build_densities, score
from nllbench.trackers.tracks import frame_list, truth_sets, validate_tracks, validate_truth

N_BERNOULLI, N_TRUTH, SIZE = 50, 40, 300.0


def make_tables(frames: int, seed: int = 0):
    """40 objects per frame seen by 40 tracks (noisy means, r near 1) plus 10 false tracks (r low)."""
    rng = np.random.default_rng(seed)
    truth, tracks = [], []
    for f in range(frames):
        X = rng.uniform(0, SIZE, (N_TRUTH, 2))
        truth.append(pd.DataFrame({"frame": f, "id": np.arange(N_TRUTH), "x": X[:, 0], "y": X[:, 1]}))
        M = np.concatenate(
            [X + rng.normal(0, 0.7, X.shape), rng.uniform(0, SIZE, (N_BERNOULLI - N_TRUTH, 2))]
        )
        r = np.concatenate([rng.uniform(0.7, 0.99, N_TRUTH), rng.uniform(0.01, 0.3, N_BERNOULLI - N_TRUTH)])
        var = rng.uniform(0.3, 1.0, (N_BERNOULLI, 2))
        tracks.append(
            pd.DataFrame(
                {
                    "frame": f,
                    "id": np.arange(N_BERNOULLI),
                    "r": r,
                    "x": M[:, 0],
                    "y": M[:, 1],
                    "var_x": var[:, 0],
                    "var_y": var[:, 1],
                    "cov_x_y": 0.1 * np.sqrt(var[:, 0] * var[:, 1]),
                }
            )
        )
    return pd.concat(tracks, ignore_index=True), pd.concat(truth, ignore_index=True)


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--frames", type=int, default=1000)
    args = p.parse_args()
    K = args.frames
    settings = EvaluationSettings(qs=(10,))
    fill = FillIns(1.0, (0.0, 0.0), (SIZE, SIZE))
    tracks, truth = make_tables(K)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        tracks.to_csv(tmp / "tracks.csv", index=False)
        truth.to_csv(tmp / "truth.csv", index=False)
        tracks.to_parquet(tmp / "tracks.parquet", index=False)
        truth.to_parquet(tmp / "truth.parquet", index=False)
        print(f"{K} frames, {N_BERNOULLI} Bernoullis and {N_TRUTH} truths per frame, Q = 10")
        # warm-up (imports, compiled kernels) on two frames, outside the timings
        score(tracks[tracks.frame < 2], truth[truth.frame < 2], fill=fill, settings=settings)
        t = time.perf_counter()
        res_csv = score(tmp / "tracks.csv", tmp / "truth.csv", fill=fill, settings=settings)
        t_csv = time.perf_counter() - t
        t = time.perf_counter()
        res_pq = score(tmp / "tracks.parquet", tmp / "truth.parquet", fill=fill, settings=settings)
        t_pq = time.perf_counter() - t
        # the baseline: the same densities, already in memory, through evaluate_run
        tt, yy = validate_tracks(tmp / "tracks.csv"), validate_truth(tmp / "truth.csv")
        frames = frame_list(tt, yy)
        t = time.perf_counter()
        dens, _ = build_densities(tt, frames, fill)
        t_build = time.perf_counter() - t
        X, ids = truth_sets(yy, frames)
        lo, hi = res_csv.theorem_fov
        t = time.perf_counter()
        base = evaluate_run(dens, X, ids, lo, hi, settings)
        t_eval = time.perf_counter() - t
    same = np.array_equal(res_csv.metrics.nll["value"], base.nll["value"]) and np.array_equal(
        res_pq.metrics.nll["value"], base.nll["value"]
    )
    print(f"  building the densities alone: {t_build:.2f} s")
    for name, sec in (
        ("nllbench score (CSV)", t_csv),
        ("nllbench score (Parquet)", t_pq),
        ("evaluate_run, same densities (baseline)", t_eval),
    ):
        print(f"  {name:46} {sec:7.2f} s  {K / sec:8.1f} frames/s  ratio to baseline {sec / t_eval:5.2f}x")
    print(f"  identical NLL values: {same}; mean NLL {float(np.mean(base.nll['value'])):.3f}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
