"""Benchmark: the trajectory NLL of a 1,000-frame tracks table (50 labels, 40 truth trajectories), Q = 10.

Times ``nb.trajectory_nll`` (read and validate the tables, build the
(labels + truths) x truths cost matrix, rank the Q best, bounds, terms)
next to ``nb.score`` on the same tables at the same Q (the per-frame NLL
and every measure of ``evaluate``: the baseline, measured in the same run).
Both sides run in interleaved rounds; the per-round ratio score /
trajectory is printed as median and min (worst), with the trajectory NLL's
own median and worst time against the 1-second target.

Run:  python benchmarks/bench_trajectory_nll.py [--frames 1000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np
import pandas as pd

import nllbench as nb
from nllbench.measures.evaluate import EvaluationSettings

N_LABELS, N_TRUTH, SIZE = 50, 40, 300.0


def make_tables(frames: int, seed: int = 0):
    """40 truths moving smoothly, tracked by 40 labels (noisy means, r near 1), plus 10 false labels."""
    rng = np.random.default_rng(seed)
    start = rng.uniform(0, SIZE, (N_TRUTH, 2))
    step = rng.normal(0, 0.3, (frames, N_TRUTH, 2)).cumsum(axis=0)
    truth, tracks = [], []
    for f in range(frames):
        X = start + step[f]
        truth.append(pd.DataFrame({"frame": f, "id": np.arange(N_TRUTH), "x": X[:, 0], "y": X[:, 1]}))
        M = np.concatenate([X + rng.normal(0, 0.7, X.shape), rng.uniform(0, SIZE, (N_LABELS - N_TRUTH, 2))])
        r = np.concatenate([rng.uniform(0.7, 0.99, N_TRUTH), rng.uniform(0.01, 0.3, N_LABELS - N_TRUTH)])
        var = rng.uniform(0.3, 1.0, (N_LABELS, 2))
        tracks.append(
            pd.DataFrame(
                {
                    "frame": f,
                    "id": np.arange(N_LABELS),
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
    p.add_argument("--rounds", type=int, default=5)
    args = p.parse_args()
    K = args.frames
    tracks, truth = make_tables(K)
    fov = ((-50.0, -50.0), (SIZE + 50.0, SIZE + 50.0))
    kw = dict(q=10, undetected=(1.0, 0.5), fov=fov)
    settings = EvaluationSettings(qs=(10,))
    fill = nb.FillIns(1.0, fov[0], fov[1])
    print(f"{K} frames, {N_LABELS} labels, {N_TRUTH} truth trajectories, Q = 10; {args.rounds} rounds")
    # warm-up (imports, compiled kernels) outside the timings
    nb.trajectory_nll(tracks[tracks.frame < 3], truth[truth.frame < 3], **kw)
    nb.score(tracks[tracks.frame < 2], truth[truth.frame < 2], fill=fill, settings=settings)
    t_traj, t_score, ratios = [], [], []
    for _ in range(args.rounds):
        t = time.perf_counter()
        res = nb.trajectory_nll(tracks, truth, **kw)
        t_traj.append(time.perf_counter() - t)
        t = time.perf_counter()
        per_frame = nb.score(tracks, truth, fill=fill, settings=settings)
        t_score.append(time.perf_counter() - t)
        ratios.append(t_score[-1] / t_traj[-1])
    total_frame_nll = float(np.sum(per_frame.metrics.nll["value"][:, 0]))
    print(
        f"  trajectory_nll: median {statistics.median(t_traj):.3f} s, worst {max(t_traj):.3f} s "
        f"(target < 1 s); value {res.value:.2f} (lower {res.lower:.2f}), {res.n_terms} associations"
    )
    print(f"  score (per-frame NLL + measures, baseline): median {statistics.median(t_score):.2f} s")
    print(
        f"  ratio score / trajectory_nll per round: median {statistics.median(ratios):.1f}x, "
        f"min {min(ratios):.1f}x; sum of per-frame NLLs {total_frame_nll:.2f}"
    )
    print(f"  terms: {', '.join(f'{k} {v:.2f}' for k, v in res.terms.items())}")
    return 0 if max(t_traj) < 1.0 else 1


if __name__ == "__main__":
    sys.exit(main())
