"""Benchmark: trajectory GOSPA (exact MILP) on 100 frames x 20 trajectories, against baselines.

Baselines timed in the same run:
* the LP relaxation of the same programme (the paper's LP metric), on the same scene;
* on a small scene (8 frames, 4 true and 4 estimated trajectories), an exact
  Viterbi over *every* per-frame assignment (the exhaustive route the tests use),
  next to the MILP on that scene.

Also the same scene with a fresh estimated identity at every frame (as from a
filter without labels), where the exact solve's per-pair spans pay off most.

The scene: 20 true trajectories that are born and die at random frames,
estimated with noise, some identity swaps, gaps and false tracks.

Run:  python benchmarks/bench_tgospa.py [--repeat N]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from nllbench.measures.metrics import tgospa

sys.path.insert(0, str(Path(__file__).parents[1] / "tests"))
from test_tgospa import brute_force, random_case  # noqa: E402


def scene(K: int, n: int, rng):
    """K frames of n trajectories with births/deaths; estimates with swaps, gaps and false tracks."""
    start = rng.integers(0, K // 2, n)
    stop = start + rng.integers(K // 3, K, n)
    pos = rng.uniform(0, 100, (n, 2))
    vel = rng.normal(0, 1, (n, 2))
    T, TI, E, EI = [], [], [], []
    labels = np.arange(n) + 1000
    for k in range(K):
        pos = pos + vel
        alive = np.flatnonzero((start <= k) & (k < stop))
        T.append(pos[alive].copy())
        TI.append(alive)
        if k % 17 == 5:  # swap two estimated identities now and then
            i, j = rng.choice(n, 2, replace=False)
            labels[[i, j]] = labels[[j, i]]
        seen = alive[rng.random(alive.size) < 0.9]
        false = rng.uniform(0, 100, (int(rng.poisson(1.0)), 2))
        E.append(np.concatenate([pos[seen] + rng.normal(0, 0.5, (seen.size, 2)), false]))
        EI.append(np.concatenate([labels[seen], 5000 + 10 * k + np.arange(false.shape[0])]))
    return T, TI, E, EI


def best_time(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    T, TI, E, EI = scene(100, 20, rng)
    exact = tgospa(T, TI, E, EI, c=2.0, p=1, gamma=2.0)
    lp = tgospa(T, TI, E, EI, c=2.0, p=1, gamma=2.0, method="lp")
    t_exact = best_time(lambda: tgospa(T, TI, E, EI, c=2.0, p=1, gamma=2.0), args.repeat)
    t_lp = best_time(lambda: tgospa(T, TI, E, EI, c=2.0, p=1, gamma=2.0, method="lp"), args.repeat)
    print(f"100 frames x 20 true trajectories ({len(exact.estimate_ids)} estimated):")
    print(f"  exact (MILP): {t_exact * 1e3:8.1f} ms  value {exact.value:.6f}")
    print(
        f"  LP relaxation: {t_lp * 1e3:7.1f} ms  value {lp.value:.6f}  (exact/LP time {t_exact / t_lp:.2f}x)"
    )
    print(
        f"  decomposition: loc {exact.localization:.3f} missed {exact.missed:.3f} false {exact.false:.3f} "
        f"switches {exact.switches:.3f} ({exact.n_switches} full, {exact.n_half_switches} half)"
    )
    fresh = [5000 + 100 * k + np.arange(len(e)) for k, e in enumerate(E)]  # a new identity every frame
    t_exact = best_time(lambda: tgospa(T, TI, E, fresh, c=2.0, p=1, gamma=2.0), args.repeat)
    t_lp = best_time(lambda: tgospa(T, TI, E, fresh, c=2.0, p=1, gamma=2.0, method="lp"), 1)
    print(f"the same with a fresh estimate identity every frame ({sum(len(f) for f in fresh)} estimated):")
    print(
        f"  exact (MILP): {t_exact * 1e3:8.1f} ms; LP relaxation: {t_lp * 1e3:8.1f} ms "
        f"(LP/exact {t_lp / t_exact:.1f}x)"
    )
    small = random_case(np.random.default_rng(3), 8, 4, 4)
    t_milp = best_time(lambda: tgospa(*small, c=2.0, p=1, gamma=1.0), args.repeat)
    t_enum = best_time(lambda: brute_force(*small, 2.0, 1, 1.0), 1)
    assert abs(tgospa(*small, c=2.0, p=1, gamma=1.0).value - brute_force(*small, 2.0, 1, 1.0)) < 1e-9
    print("8 frames x 4 x 4 trajectories:")
    print(
        f"  exact (MILP): {t_milp * 1e3:8.1f} ms; exhaustive Viterbi: {t_enum * 1e3:8.1f} ms "
        f"(enumeration/MILP {t_enum / t_milp:.1f}x)"
    )


if __name__ == "__main__":
    main()
