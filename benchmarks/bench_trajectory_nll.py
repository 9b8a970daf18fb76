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
from pathlib import Path

import numpy as np

import nllbench as nb
from nllbench.measures.evaluate import EvaluationSettings

sys.path.insert(0, str(Path(__file__).parent))
from scenes import N_TRACKS as N_LABELS  # noqa: E402
from scenes import N_TRUTH, SIZE, make_tables  # noqa: E402


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--frames", type=int, default=1000)
    p.add_argument("--rounds", type=int, default=5)
    args = p.parse_args()
    K = args.frames
    tracks, truth = make_tables(K, moving=True)
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
