"""Per-step cost and posterior size of the trajectory PMBM and PMB filters against the per-frame ones.

Runs the four filters (PMBM, ``tpmbm``, PMB, ``tpmb``) on the same simulated
measurements (williams15 and chalmers presets, clutter 5, seed 0) at growing
numbers of steps, in one round per run, and prints per run: seconds per step
of each filter (same process, same measurements), the ratios ``tpmbm / pmbm``
and ``tpmb / pmb``, the trajectory posterior files' sizes and the per-frame
posterior files' sizes (every step). Usage:
``python benchmarks/bench_trajectory_filter.py [STEPS,...] [PRESET,...]``.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from nllbench.filters import run_trajectory_final
from nllbench.filters.pmbm import run_pmbm
from nllbench.simulation.scenarios import get_scenario, simulate
from nllbench.store import write_posterior
from nllbench.store.trajectory_posterior import write_trajectory_posterior


def _run(name, measurements, model):
    """(the filter's output, seconds): the last state of a trajectory filter, every state of the others."""
    t0 = time.perf_counter()
    if name.startswith("t"):
        out = run_trajectory_final(name, measurements, model)
    else:
        out = run_pmbm(measurements, model, name).states
    return out, time.perf_counter() - t0


def main(steps=(20, 40, 80), presets=("williams15", "chalmers")) -> None:
    print("preset steps pmbm_s tpmbm_s ratio pmb_s tpmb_s ratio (s per step) tpmbm_kB pmbm_kB tpmb_kB pmb_kB")
    with tempfile.TemporaryDirectory() as tmp:
        for name in presets:
            for K in steps:
                sc = get_scenario(name, steps=K, clutter_rate=5.0)
                sim = simulate(sc, np.random.default_rng(0), seed=0)
                secs, sizes = {}, {}
                for flt in ("pmbm", "tpmbm", "pmb", "tpmb"):
                    path = Path(tmp) / f"{flt}.nc"
                    out, sec = _run(flt, sim.measurements, sc.model)
                    if flt.startswith("t"):
                        write_trajectory_posterior(out.to_density(sc.model), path)
                    else:
                        write_posterior([s.to_density(with_ppp=True) for s in out], path)
                    secs[flt], sizes[flt] = sec / K, path.stat().st_size / 1e3
                print(
                    f"{name} {K} {secs['pmbm']:.4f} {secs['tpmbm']:.4f} {secs['tpmbm'] / secs['pmbm']:.2f} "
                    f"{secs['pmb']:.4f} {secs['tpmb']:.4f} {secs['tpmb'] / secs['pmb']:.2f} "
                    f"{sizes['tpmbm']:.0f} {sizes['pmbm']:.0f} {sizes['tpmb']:.0f} {sizes['pmb']:.0f}",
                    flush=True,
                )


if __name__ == "__main__":
    args = sys.argv[1:]
    main(
        *([tuple(int(x) for x in args[0].split(","))] if args else []),
        *([tuple(args[1].split(","))] if args[1:] else []),
    )
