"""The proper scores where the NLL is infinite: PMBM, MBM and MBM01 on Williams-2015.

Usage (the table in docs/scores.md, "MBM01: a finite, comparable number where the NLL is infinite")::

    python examples/proper_scores_mbm01.py [--clutter 20 50] [--seeds 6] [--filters pmbm mbm mbm01]

For each clutter rate and filter, runs the filter on seeds 0..seeds-1 (81 steps, P_D 0.9) and
evaluates each run with the default settings at Q = 10 (the energy score's samples seeded by the
run's seed); prints the runs whose NLL is infinite (and their infinite steps), and the means over
runs of the energy, intensity and cardinality scores and of GOSPA.
"""

import argparse
import math

import numpy as np

from nllbench.filters import run_filter
from nllbench.measures.evaluate import EvaluationSettings, evaluate_run
from nllbench.simulation.scenarios import get_scenario, simulate


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--clutter", nargs="+", type=float, default=[20.0, 50.0])
    p.add_argument("--seeds", type=int, default=6)
    p.add_argument("--filters", nargs="+", default=["pmbm", "mbm", "mbm01"])
    args = p.parse_args()
    print(
        "| clutter | filter | runs with NLL = inf | energy score | intensity score"
        " | cardinality RPS | GOSPA |"
    )
    print("|---|---|---|---|---|---|---|")
    for clutter in args.clutter:
        sc = get_scenario("williams15", clutter_rate=clutter)
        fov = (sc.model.fov_low, sc.model.fov_high)
        for name in args.filters:
            rows, infinite_steps = [], []
            for seed in range(args.seeds):
                sim = simulate(sc, np.random.default_rng(seed), seed=seed)
                posts = run_filter(name, sim.measurements, sc.model, max_cardinality=40)
                m = evaluate_run(
                    posts, sim.truth, sim.truth_ids, *fov, EvaluationSettings(qs=(10,)), seed=seed
                )
                rows.append(m.summary())
                infinite_steps.append(rows[-1]["nll_infinite_steps_q10"])
            inf = sum(math.isinf(r["nll_q10"]) for r in rows)
            means = [
                np.mean([r[k] for r in rows])
                for k in ("energy_score_mean", "intensity_score_mean", "cardinality_rps_mean", "gospa")
            ]
            print(
                f"| {clutter:g} | {name} | {inf}/{len(rows)} (infinite steps {infinite_steps}) | "
                + " | ".join(f"{v:.3f}" for v in means)
                + " |"
            )


if __name__ == "__main__":
    main()
