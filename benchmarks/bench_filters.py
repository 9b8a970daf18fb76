"""Benchmark: per-step time of every reference filter on the Williams and Chalmers scenarios.

Also: PMBM time against the clutter rate (5, 10, 20, 40) and the hypothesis
cap, and the vectorised GM-PHD against a per-component GM-PHD (one Python
object and one scipy call per component-measurement pair, the way
object-per-Gaussian libraries work). Every ratio is taken within a round
(the sides of a comparison run once per round, in turn) and printed as the
median and worst round.

Run:  python benchmarks/bench_filters.py [--seeds 1] [--rounds 3]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from scipy.stats import multivariate_normal

from nllbench.filters import FILTERS, PMBMSettings, run_filter
from nllbench.filters.phd import PHDSettings, run_phd
from nllbench.simulation.scenarios import get_scenario, simulate

sys.path.insert(0, str(Path(__file__).parent))
from rounds import rounds, speedup, spread  # noqa: E402


class _Component:
    """One Gaussian component as an object (the baseline's representation)."""

    def __init__(self, w, m, P):
        self.w, self.m, self.P = w, m, P


def naive_phd(measurements, model, settings=PHDSettings()):
    """GM-PHD with a Python object per component and a scipy call per pair (baseline)."""
    comps = [
        _Component(w, m, P)
        for w, m, P in zip(model.initial.weights, model.initial.means, model.initial.covs, strict=True)
    ]
    kappa = model.clutter_intensity
    H, R = model.H, model.R
    for k, Z in enumerate(measurements):
        if k:
            comps = [
                _Component(model.p_survival * c.w, model.F @ c.m, model.F @ c.P @ model.F.T + model.Q)
                for c in comps
            ]
            comps += [
                _Component(w, m, P)
                for w, m, P in zip(model.birth.weights, model.birth.means, model.birth.covs, strict=True)
            ]
        new = [_Component((1 - model.p_detection) * c.w, c.m, c.P) for c in comps]
        for z in Z:
            batch = []
            for c in comps:
                S = H @ c.P @ H.T + R
                K = c.P @ H.T @ np.linalg.inv(S)
                q = model.p_detection * c.w * multivariate_normal(H @ c.m, S).pdf(z)
                batch.append(_Component(q, c.m + K @ (z - H @ c.m), (np.eye(4) - K @ H) @ c.P))
            total = kappa + sum(b.w for b in batch)
            for b in batch:
                b.w /= total
            new += batch
        comps = [c for c in new if c.w > settings.prune]
        comps = sorted(comps, key=lambda c: -c.w)[: settings.cap]  # (no merging: cheaper than the real thing)
    return comps


def per_step(fn, steps):
    t = time.perf_counter()
    fn()
    return (time.perf_counter() - t) / steps * 1e3


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds of each comparison")
    args = ap.parse_args()
    scenes = {}
    for name in ("williams15", "chalmers"):
        sc = get_scenario(name)
        scenes[name] = (sc, [simulate(sc, np.random.default_rng(s)) for s in range(args.seeds)])
    run_filter(
        "pmbm", scenes["williams15"][1][0].measurements[:2], scenes["williams15"][0].model
    )  # JIT warm-up

    print("ms per step (mean over seeds)")
    print(f"{'filter':8}" + "".join(f"{n:>14}" for n in scenes))
    for f in FILTERS:
        row = []
        for sc, sims in scenes.values():
            times = [
                per_step(
                    lambda s=s, f=f, sc=sc: run_filter(f, s.measurements, sc.model, max_cardinality=30),
                    sc.steps,
                )
                for s in sims
            ]
            row.append(np.mean(times))
        print(f"{f:8}" + "".join(f"{t:14.2f}" for t in row))

    sc, sims = scenes["williams15"]
    sim = sims[0]
    times, _ = rounds(
        {
            "vectorised": lambda: run_phd(sim.measurements, sc.model),
            "per-component": lambda: naive_phd(sim.measurements, sc.model),
        },
        args.rounds,
    )
    ms = {k: np.median(v) / sc.steps * 1e3 for k, v in times.items()}
    print(
        f"\nGM-PHD on williams15 ({args.rounds} interleaved rounds, median): vectorised "
        f"{ms['vectorised']:.2f} ms/step, per-component baseline {ms['per-component']:.2f} ms/step"
    )
    print(f"  speed-up per round: {speedup(times['per-component'], times['vectorised'])}")

    print(f"\nPMBM on williams15 vs clutter rate (max 200 hypotheses; {args.rounds} interleaved rounds)")
    runs = {}
    for rate in (5, 10, 20, 40):
        scr = get_scenario("williams15", clutter_rate=rate)
        s = simulate(scr, np.random.default_rng(0))
        runs[rate] = (lambda s=s, scr=scr: run_filter("pmbm", s.measurements, scr.model), scr.steps)
    times, _ = rounds({rate: fn for rate, (fn, _) in runs.items()}, args.rounds)
    for rate, (_, steps) in runs.items():
        print(
            f"  clutter {rate:3d}: {np.median(times[rate]) / steps * 1e3:8.2f} ms/step  "
            f"x clutter 5: {spread(times[rate], times[5])}"
        )
    print(f"\nPMBM on williams15 (clutter 10) vs hypothesis cap ({args.rounds} interleaved rounds)")
    caps = (25, 50, 100, 200, 400)
    times, _ = rounds(
        {
            cap: lambda cap=cap: run_filter(
                "pmbm", sim.measurements, sc.model, pmbm_settings=PMBMSettings(max_hypotheses=cap)
            )
            for cap in caps
        },
        args.rounds,
    )
    for cap in caps:
        print(
            f"  cap {cap:4d}: {np.median(times[cap]) / sc.steps * 1e3:8.2f} ms/step  "
            f"x cap 25: {spread(times[cap], times[25])}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
