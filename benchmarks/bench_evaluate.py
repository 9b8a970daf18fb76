"""Benchmark: evaluating a full Williams run (81 steps), all measures, Q in {1, 10, 100}.

Prints the wall time of ``evaluate_run`` per filter, and, for the PMBM, the
time of the NLL part against a baseline that ranks every hypothesis once per
Q (three separate ``nb.nll`` calls per step) instead of once for all Q
(``nb.nll_many``), measured in the same run, with the ratio.

Run:  python benchmarks/bench_evaluate.py
"""

from __future__ import annotations

import sys
import time

import numpy as np

import nllbench as nb
from nllbench.evaluate import EvaluationSettings, evaluate_run
from nllbench.filters import FILTERS, run_filter
from nllbench.scenarios import get_scenario, simulate
from nllbench.transforms import marginal


def main() -> int:
    sc = get_scenario("williams15")
    sim = simulate(sc, np.random.default_rng(1))
    settings = EvaluationSettings(qs=(1, 10, 100))
    print(f"evaluate_run on williams15 ({sc.steps} steps), Q in {settings.qs}, all measures")
    posts_by = {}
    for name in FILTERS:
        posts = run_filter(name, sim.measurements, sc.model, max_cardinality=20)
        posts_by[name] = posts
        t = time.perf_counter()
        m = evaluate_run(posts, sim.truth, sim.truth_ids, sc.model.fov_low, sc.model.fov_high, settings)
        dt = time.perf_counter() - t
        s = m.summary()
        print(
            f"  {name:6} {dt:7.2f} s   NLL(Q=100) {s['nll_q100']:9.3f}   GOSPA {s['gospa']:.3f}   "
            f"max |Thm 1 diff| {s['theorem1_max_abs_difference']:.1e}"
        )
    posts = [marginal(p, (0, 1)) for p in posts_by["pmbm"]]
    truth = [X[:, :2] for X in sim.truth]
    t = time.perf_counter()
    shared = [nb.nll_many(p, y, (1, 10, 100)) for p, y in zip(posts, truth, strict=True)]
    t_shared = time.perf_counter() - t
    t = time.perf_counter()
    separate = [[nb.nll(p, y, q=q) for q in (1, 10, 100)] for p, y in zip(posts, truth, strict=True)]
    t_separate = time.perf_counter() - t
    same = all(
        a.value == b.value
        for ra, rb in zip(shared, separate, strict=True)
        for a, b in zip(ra, rb, strict=True)
    )
    print(
        f"\nPMBM NLL part, 81 steps x Q in (1, 10, 100): one ranking {t_shared:.2f} s, "
        f"one ranking per Q {t_separate:.2f} s, ratio {t_separate / t_shared:.2f}x, identical values: {same}"
    )
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
