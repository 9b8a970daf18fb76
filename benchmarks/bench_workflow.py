"""Benchmark: does a 500-run sweep on 2 cores spend its time computing?

Runs the workflow on a generated configuration with 6 filters x 84 seeds = 504
(scenario, filter, seed) runs (Williams scenario, 10 steps, Q = 1, no probe),
once with one seed per job (every run pays a job's start-up) and once batched
(``seeds_per_job`` seeds per job), and reports for each: wall time, jobs, the
seconds spent in nllbench's own computation (summed from the jobs' timing
tables) and that sum's share of the available core time (wall x cores).

Run:  python benchmarks/bench_workflow.py [--seeds 84] [--batch 42] [--cores 2] [--skip-unbatched]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
import yaml

ROOT = Path(__file__).resolve().parents[1]


STEPS = 10


def config(results: Path, seeds: int, per_job: int) -> dict:
    cfg = yaml.safe_load((ROOT / "config/config.yaml").read_text())
    cfg["results"] = str(results)
    cfg["paper"]["theorem1"]["trials"] = 1
    cfg["sweep"].update(
        scenarios=["williams15"],
        filters=["phd", "cphd", "pmb", "pmbm", "mbm", "mbm01"],
        clutter_rates=[10],
        detection_probabilities=[0.9],
        seeds=seeds,
        seeds_per_job=per_job,
        steps=STEPS,
    )
    cfg["evaluation"].update(q=[1], cov_scales=[1], probe_q=1, exact=False)
    return cfg


SLURM = [
    "--workflow-profile",
    "profiles/slurm",
    "--default-resources",
    "slurm_account=nllbench",
    "slurm_partition=debug",
    "runtime=30",
    "mem_mb=1000",
    "cpus_per_task=1",
]


def run(tmp: Path, seeds: int, per_job: int, cores: int, slurm: bool = False) -> dict:
    results = tmp / f"results_{per_job}_{'slurm' if slurm else 'local'}"
    path = tmp / f"config_{per_job}_{int(slurm)}.yaml"
    path.write_text(yaml.safe_dump(config(results, seeds, per_job)))
    # only the sweep's jobs (simulate, filter, evaluate), not the tables and figures
    t0 = time.perf_counter()
    proc = subprocess.run(
        [
            "snakemake",
            "--cores",
            str(cores),
            "--configfile",
            str(path),
            "--scheduler",
            "greedy",
            "--quiet",
            "all",
            "--until",
            "evaluate",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - t0
    if proc.returncode:
        raise SystemExit(proc.stderr[-3000:])
    compute = 0.0
    jobs = 0
    for kind in ("simulate", "filter", "evaluate"):
        for f in (results / "timing" / kind).rglob("*.csv"):
            compute += float(pd.read_csv(f)["seconds"].sum())
            jobs += 1
    return {
        "where": "slurm" if slurm else "local",
        "runs": 6 * seeds,
        "seeds_per_job": per_job,
        "jobs": jobs,
        "wall_s": wall,
        "compute_s": compute,
        "share": compute / (wall * cores),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=84)
    ap.add_argument("--batch", type=int, default=42)
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--steps", type=int, default=10, help="time steps of each run (81: the full scenario)")
    ap.add_argument(
        "--unbatched-seeds", type=int, help="seeds for the one-seed-per-job run (default: --seeds)"
    )
    ap.add_argument("--skip-unbatched", action="store_true")
    ap.add_argument(
        "--slurm", action="store_true", help="also the batched sweep through SLURM (SLURM_CONF set)"
    )
    args = ap.parse_args()
    global STEPS
    STEPS = args.steps
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        rows = [run(tmp, args.seeds, args.batch, args.cores)]
        if not args.skip_unbatched:
            rows.append(run(tmp, args.unbatched_seeds or args.seeds, 1, args.cores))
        if args.slurm:
            rows.append(run(tmp, args.seeds, args.batch, args.cores, slurm=True))
    print(f"{args.cores} cores, greedy scheduler, williams15 with {args.steps} steps, Q = 1, 6 filters")
    header = ("where", "runs", "seeds/job", "jobs", "wall (s)", "compute (s)", "share", "wall/run (s)")
    print("".join(f"{h:>{w}}" for h, w in zip(header, (7, 6, 10, 7, 10, 13, 8, 14), strict=True)))
    for r in rows:
        print(
            f"{r['where']:>7}{r['runs']:>6}{r['seeds_per_job']:>10}{r['jobs']:>7}{r['wall_s']:>10.1f}{r['compute_s']:>13.1f}"
            f"{r['share']:>8.0%}{r['wall_s'] / r['runs']:>14.3f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
