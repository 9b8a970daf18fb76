"""Per-step cost and posterior size of the trajectory PMBM filter against the per-frame PMBM filter.

Runs both filters on the same simulated measurements (williams15 and chalmers
presets, clutter 5, seed 0) at growing numbers of steps and prints, per run:
seconds per step of each filter (same process, same measurements), their
ratio, the trajectory posterior file's size and the PMBM posterior file's
size (every step). Usage: ``python benchmarks/bench_trajectory_filter.py``.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from nllbench.filters.pmbm import run_pmbm
from nllbench.filters.tpmbm import run_tpmbm_final
from nllbench.simulation.scenarios import get_scenario, simulate
from nllbench.store import write_posterior
from nllbench.store.trajectory_posterior import write_trajectory_posterior


def main(steps=(20, 40, 80), presets=("williams15", "chalmers")) -> None:
    print("preset steps pmbm_s_per_step tpmbm_s_per_step ratio tpmbm_file_kB pmbm_file_kB")
    with tempfile.TemporaryDirectory() as tmp:
        for name in presets:
            for K in steps:
                sc = get_scenario(name, steps=K, clutter_rate=5.0)
                sim = simulate(sc, np.random.default_rng(0), seed=0)
                t0 = time.perf_counter()
                p_states = run_pmbm(sim.measurements, sc.model, "pmbm").states
                t1 = time.perf_counter()
                t_state = run_tpmbm_final(sim.measurements, sc.model)
                t2 = time.perf_counter()
                tp, pp = Path(tmp) / "t.nc", Path(tmp) / "p.nc"
                write_trajectory_posterior(t_state.to_density(sc.model), tp)
                write_posterior([s.to_density(with_ppp=True) for s in p_states], pp)
                a, b = (t1 - t0) / K, (t2 - t1) / K
                print(
                    f"{name} {K} {a:.4f} {b:.4f} {b / a:.2f} {tp.stat().st_size / 1e3:.0f} "
                    f"{pp.stat().st_size / 1e3:.0f}",
                    flush=True,
                )


if __name__ == "__main__":
    args = sys.argv[1:]
    main(
        *([tuple(int(x) for x in args[0].split(","))] if args else []),
        *([tuple(args[1].split(","))] if args[1:] else []),
    )
