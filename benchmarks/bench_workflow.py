"""Benchmark: the workflow's wall time, and where its CPU time goes.

``--main``: the default main job (``snakemake --cores 2``, config/config.yaml,
or ``--configfile``) into a scratch results directory; prints its wall time,
the machine's load average before and after, the CPU seconds of everything
(snakemake and its jobs), split per nllbench command (evaluate, filter, ...;
exact, from ``getrusage`` of each job), the jobs' wall seconds per rule
(Snakemake's benchmark files) and the size of each results/ directory.

Without ``--main``: does a 500-run sweep on 2 cores spend its time computing?

Runs the workflow on a generated configuration with 6 filters x 84 seeds = 504
(scenario, filter, seed) runs (Williams scenario, 10 steps, Q = 1, no probe),
once with one seed per job (every run pays a job's start-up) and once batched
(``seeds_per_job`` seeds per job), and reports for each: wall time, jobs, the
seconds spent in nllbench's own computation (summed from the jobs' timing
tables) and that sum's share of the available core time (wall x cores).

Run:  python benchmarks/bench_workflow.py [--seeds 84] [--batch 42] [--cores 2] [--skip-unbatched]
      python benchmarks/bench_workflow.py --main [--configfile config/quick.yaml] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import resource
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


WRAPPER = r"""#!{python}
# nllbench under a stopwatch: appends (command, wall s, CPU s of it and its children) to a log
import resource, subprocess, sys, time
t0 = time.perf_counter()
rc = subprocess.call([{real!r}, *sys.argv[1:]])
wall = time.perf_counter() - t0
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
with open({log!r}, "a") as f:
    f.write(f"{{sys.argv[1] if len(sys.argv) > 1 else '-'}}\t{{wall}}\t{{ru.ru_utime + ru.ru_stime}}\n")
sys.exit(rc)
"""


def stopwatch(bin_dir: Path, log: Path) -> dict:
    """Environment whose ``nllbench`` is the real one run under :data:`WRAPPER` (exact CPU per job).

    Snakemake's benchmark files sample a job's CPU time every 30 s and lose
    the last interval, so they undercount long jobs; ``getrusage`` of the
    finished child does not.
    """
    import shutil

    real = shutil.which("nllbench")
    if real is None:
        raise SystemExit("nllbench is not on PATH (activate the environment)")
    bin_dir.mkdir(parents=True, exist_ok=True)
    wrapper = bin_dir / "nllbench"
    wrapper.write_text(WRAPPER.format(python=sys.executable, real=real, log=str(log)))
    wrapper.chmod(0o755)
    return {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}


def rule_of(benchmark: Path, root: Path) -> str:
    """The rule a benchmark file belongs to: its first path component under benchmarks/."""
    parts = benchmark.relative_to(root).parts
    return parts[0] if len(parts) > 1 else Path(parts[0]).stem


def per_rule(results: Path) -> pd.DataFrame:
    """Per rule: jobs and their summed wall seconds (Snakemake's benchmark files)."""
    rows = []
    root = results / "benchmarks"
    for f in sorted(root.rglob("*.tsv")):
        b = pd.read_csv(f, sep="\t")
        rows.append({"rule": rule_of(f, root), "job_s": float(b["s"].iloc[0])})
    jobs = pd.DataFrame(rows, columns=["rule", "job_s"])
    return jobs.groupby("rule").agg(jobs=("job_s", "size"), job_s=("job_s", "sum"))


def per_command(log: Path) -> pd.DataFrame:
    """Per nllbench command (evaluate, filter, ...): calls, wall and exact CPU seconds."""
    t = pd.read_csv(log, sep="\t", names=["command", "wall_s", "cpu_s"])
    return t.groupby("command").agg(calls=("cpu_s", "size"), wall_s=("wall_s", "sum"), cpu_s=("cpu_s", "sum"))


def run_main(configfile: str, cores: int, results: Path, scratch: Path) -> tuple[float, float, Path]:
    """Run the main job (rule all) into ``results``; (wall s, CPU s of everything, command log)."""
    log = scratch / "commands.tsv"
    env = stopwatch(scratch / "bin", log)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(
        [
            "snakemake",
            "--cores",
            str(cores),
            "--configfile",
            configfile,
            "--config",
            f"results={results}",
            "--quiet",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
    )
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode:
        raise SystemExit(proc.stderr[-3000:])
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return wall, cpu, log


def main_job(args) -> int:
    load = os.getloadavg()
    with tempfile.TemporaryDirectory(dir="/tmp") as d:
        results = Path(args.keep) if args.keep else Path(d) / "results"
        wall, cpu, log = run_main(args.configfile, args.cores, results, Path(d))
        commands = per_command(log)
        rules = per_rule(results)
        sizes = {
            p.name: sum(f.stat().st_size for f in p.rglob("*") if f.is_file()) for p in results.iterdir()
        }
    after = os.getloadavg()
    print(f"{args.configfile}, snakemake --cores {args.cores}: wall {wall:.1f} s ({wall / 60:.1f} min)")
    print(f"load average (1 min) before {load[0]:.2f}, after {after[0]:.2f}, on {os.cpu_count()} CPUs")
    print(
        f"CPU seconds, snakemake and every job: {cpu:.1f} ({cpu / (wall * args.cores):.0%} of wall x cores)"
    )
    total = commands["cpu_s"].sum()
    print(
        f"\n{'nllbench command':>18}{'calls':>7}{'CPU (s)':>10}{'share':>7}{'CPU/call':>10}{'wall (s)':>10}"
    )
    for name, r in commands.sort_values("cpu_s", ascending=False).iterrows():
        print(
            f"{name:>18}{int(r['calls']):>7}{r['cpu_s']:>10.1f}{r['cpu_s'] / total:>7.0%}"
            f"{r['cpu_s'] / r['calls']:>10.2f}{r['wall_s']:>10.1f}"
        )
    print(f"{'(snakemake itself)':>18}{'':>7}{cpu - total:>10.1f}")
    print(f"\n{'rule':>18}{'jobs':>7}{'job wall (s)':>14}")
    for name, r in rules.sort_values("job_s", ascending=False).iterrows():
        print(f"{name:>18}{int(r['jobs']):>7}{r['job_s']:>14.1f}")
    print("\nresults/ (MB): " + ", ".join(f"{k} {v / 1e6:.1f}" for k, v in sorted(sizes.items())))
    print(f"total {sum(sizes.values()) / 1e6:.1f} MB")
    return 0


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
    ap.add_argument("--main", action="store_true", help="time the main job (rule all) of --configfile")
    ap.add_argument("--configfile", default="config/config.yaml", help="with --main: the configuration")
    ap.add_argument("--keep", help="with --main: results directory to keep (default: a deleted scratch one)")
    args = ap.parse_args()
    if args.main:
        return main_job(args)
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
