"""Benchmark: what the proper scores add to the evaluation of a default-config Williams run.

The default study (config/config.yaml) evaluates each run on the grid Q in
{1, 10, 100} at covariance scale 1 and Q = 10 at scales 0.25 and 4, with the
exact NLL, in one ``evaluate_runs`` call per run (``nllbench evaluate
--cov-scales``). The proper scores (set energy score with 200 samples per
step, intensity score, cardinality RPS; ``proper_scores``) are computed once
per run, in the cell of the smallest Q at scale 1 (``grid_settings``).

For one Williams-2015 run (81 steps, clutter rate 20 by default, P_D 0.9,
seed 0) and each filter, the script runs the filter once (its CPU time is
the denominator of "share of the run"), then evaluates the run's posteriors
on that grid with ``proper_scores`` off (baseline) and on, interleaved in
rounds, measuring CPU time (``time.process_time``: the machine is shared, CPU
time moves less with load than wall time). It prints per filter the median
evaluation times, the median and worst (max) of the per-round ratios on/off,
the added seconds, and the added time as a share of the run's filter plus
evaluation time; and checks that both evaluations give the same NLL and GOSPA.

Run:  python benchmarks/bench_proper_cost.py [--rounds 3] [--clutter 20] [--filters phd pmbm ...]
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from dataclasses import replace  # noqa: E402

import numpy as np  # noqa: E402

from nllbench.filters import run_filter  # noqa: E402
from nllbench.measures.evaluate import (  # noqa: E402
    EvaluationSettings,
    evaluate_runs,
    evaluation_grid,
    grid_settings,
)
from nllbench.pipeline.runs import default_max_cardinality  # noqa: E402
from nllbench.simulation.scenarios import get_scenario, simulate  # noqa: E402

FILTERS = ("phd", "cphd", "pmb", "pmbm", "mbm", "mbm01")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--clutter", type=float, default=20.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--filters", nargs="+", default=list(FILTERS), choices=FILTERS)
    args = ap.parse_args()

    sc = get_scenario("williams15", clutter_rate=args.clutter)
    sim = simulate(sc, np.random.default_rng(args.seed), seed=args.seed)
    counts = [len(x) for x in sim.truth]
    expected = float(sc.model.initial.weights.sum() + sc.model.birth.weights.sum() * len(sim.truth))
    card = default_max_cardinality(counts, expected)
    fov = (sc.model.fov_low, sc.model.fov_high)
    grid = evaluation_grid((1, 10, 100), (0.25, 1.0, 4.0), 10)
    on = grid_settings(EvaluationSettings(qs=(1, 10, 100), exact=True, proper_scores=True), grid)
    off = [replace(s, proper_scores=False) for s in on]
    print(
        f"williams15, clutter {args.clutter:g}, P_D 0.9, seed {args.seed}, {len(sim.truth)} steps;"
        f" grid {grid};"
        f" energy samples {on[0].energy_samples}, kernel_cov {on[0].kernel_variance:g}; {args.rounds} rounds"
    )
    print(
        f"{'filter':7} {'filter s':>9} {'eval off':>9} {'eval on':>9} {'ratio med':>9} {'ratio max':>9}"
        f" {'added s':>8} {'of eval':>8} {'of run':>7} {'proper s':>9}"
    )
    total = {"filter": 0.0, "off": 0.0, "added": 0.0}
    for name in args.filters:
        run_filter(name, sim.measurements[:3], sc.model, max_cardinality=card)  # compile outside timings
        t = time.process_time()
        posts = run_filter(name, sim.measurements, sc.model, max_cardinality=card)
        t_filter = time.process_time() - t
        inputs = (posts, sim.truth, sim.truth_ids, *fov)
        evaluate_runs(posts[:3], sim.truth[:3], sim.truth_ids[:3], *fov, on[:1], None, args.seed)  # compile
        times = {"off": [], "on": []}
        results = {}
        for _ in range(args.rounds):
            for kind, settings in (("off", off), ("on", on)):
                t = time.process_time()
                results[kind] = evaluate_runs(*inputs, settings, None, args.seed)
                times[kind].append(time.process_time() - t)
        for a, b in zip(results["off"], results["on"], strict=True):
            assert np.array_equal(a.nll["value"], b.nll["value"]) and np.array_equal(a.gospa, b.gospa)
        proper = next(m.proper for m in results["on"] if m.proper is not None)
        ratios = [b / a for a, b in zip(times["off"], times["on"], strict=True)]
        t_off, t_on = statistics.median(times["off"]), statistics.median(times["on"])
        added = t_on - t_off
        total["filter"] += t_filter
        total["off"] += t_off
        total["added"] += added
        print(
            f"{name:7} {t_filter:9.2f} {t_off:9.2f} {t_on:9.2f} {statistics.median(ratios):9.3f}"
            f" {max(ratios):9.3f} {added:8.2f} {added / t_off:8.1%} {added / (t_filter + t_off):7.1%}"
            f" {proper.seconds:9.2f}"
        )
    share = total["added"] / (total["filter"] + total["off"])
    print(
        f"all filters: evaluation {total['off']:.2f} s + {total['added']:.2f} s for the proper scores"
        f" ({total['added'] / total['off']:.1%} of the evaluation); filters {total['filter']:.2f} s;"
        f" added share of filter + evaluation: {share:.1%}"
    )


if __name__ == "__main__":
    main()
