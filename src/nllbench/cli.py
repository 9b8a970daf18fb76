"""The ``nllbench`` command line.

Subcommands
-----------
simulate      simulate a scenario preset to a NetCDF scenario file.
filter        run a reference filter on a scenario file; write its posteriors.
evaluate      score a posterior file against its scenario: NLL, GOSPA, OSPA,
              MOTA, MOTP, IDF1 and the Theorem 1 check.
example N     print the paper's Example N (1 or 2): NLL, its decomposition,
              GOSPA, MOTA and MOTP for both trackers.
theorem1      check Theorem 1 on random sets and print both sides.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np


def _example(args: argparse.Namespace) -> int:
    from nllbench.examples import format_example, write_example

    if args.out_dir and len(args.number) != 1:
        raise ValueError("example: --out-dir takes one example number")
    for k, number in enumerate(args.number):
        if k:
            print()
        text = format_example(number)
        print(text)
        if args.out_dir:
            write_example(number, args.out_dir, text)
    return 0


def _aggregate(args: argparse.Namespace) -> int:
    from nllbench.aggregate import write_tables

    counts = write_tables(args.metrics_dirs, args.out_dir, _config(args))
    print(
        f"wrote {args.out_dir}: {counts['steps']} per-step rows, {counts['runs']} per-run rows, "
        f"{counts['summary']} summary rows from {len(args.metrics_dirs)} directories"
    )
    return 0


def _timing(args: argparse.Namespace) -> int:
    from nllbench.aggregate import collect_timing

    df = collect_timing(args.files)
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(args.output, index=False)
    print(f"wrote {args.output}: {len(df)} items, {df['seconds'].sum():.1f} s of compute")
    return 0


FIGURES = ("example", "clutter", "decomposition", "q", "calibration", "theorem1", "ranks", "timing")


def _plot(args: argparse.Namespace) -> int:
    import pandas as pd

    from nllbench import plots

    if args.figure == "example":
        if not args.example_dir:
            raise ValueError("plot example: --example-dir is required")
        fig = plots.fig_example(args.example_dir)
    elif args.figure == "timing":
        if not args.timing:
            raise ValueError("plot timing: --timing is required")
        fig = plots.fig_timing(pd.read_csv(args.timing))
    else:
        if not args.tables:
            raise ValueError(f"plot {args.figure}: --tables is required")
        tables = Path(args.tables)
        summary = pd.read_csv(tables / "summary.csv")
        q = args.q if args.q is not None else int(summary[summary["measure"] == "nll"]["q"].max())
        if args.figure == "clutter":
            fig = plots.fig_vs_clutter(summary, q)
        elif args.figure == "decomposition":
            fig = plots.fig_decomposition(summary, q)
        elif args.figure == "q":
            fig = plots.fig_nll_vs_q(summary)
        elif args.figure == "calibration":
            fig = plots.fig_calibration(summary, args.q)
        elif args.figure == "theorem1":
            fig = plots.fig_theorem1(pd.read_csv(tables / "steps.csv"))
        else:
            fig = plots.fig_rank_agreement(summary, q)
    written = plots.save(fig, args.output, _config(args))
    print("wrote " + ", ".join(str(p) for p in written))
    return 0


def _leaderboard(args: argparse.Namespace) -> int:
    from nllbench.report import write_leaderboard

    write_leaderboard(args.tables, args.example_dirs or [], args.output, args.theorem1)
    print(f"wrote {args.output}")
    return 0


def _theorem1(args: argparse.Namespace) -> int:
    from nllbench.theorem1 import theorem1

    rng = np.random.default_rng(args.seed)
    lo = np.zeros(args.dim)
    hi = np.full(args.dim, args.size)
    worst = 0.0
    print(f"{'trial':>5}{'|X|':>5}{'|Y|':>5}{'NLL (Q=1)':>14}{'RHS':>14}{'difference':>12}")
    for t in range(args.trials):
        X = rng.uniform(lo, hi, (rng.integers(0, args.max_objects + 1), args.dim))
        Y = rng.uniform(lo, hi, (rng.integers(0, args.max_objects + 1), args.dim))
        r = theorem1(X, Y, lo, hi, args.rho, args.scale)
        worst = max(worst, abs(r.difference))
        print(f"{t:5d}{len(X):5d}{len(Y):5d}{r.lhs:14.6f}{r.rhs:14.6f}{r.difference:12.2e}")
    print(f"max |difference| = {worst:.3e}")
    return 0 if worst < 1e-9 else 1


class Progress:
    """Progress of a long run on stderr: a live line on a terminal, else every 10%."""

    def __init__(self, label: str, total: int, enabled: bool = True):
        self.label, self.total, self.enabled = label, total, enabled
        self.tty = sys.stderr.isatty()
        self.start = time.perf_counter()
        self.next_pct = 10

    def __call__(self, k: int) -> None:
        if not self.enabled:
            return
        done = k + 1
        elapsed = time.perf_counter() - self.start
        line = f"[{self.label}] step {done}/{self.total} ({elapsed:.1f} s)"
        if self.tty:
            print("\r" + line, end="" if done < self.total else "\n", file=sys.stderr, flush=True)
        elif 100 * done >= self.next_pct * self.total or done == self.total:
            print(line, file=sys.stderr, flush=True)
            while 100 * done >= self.next_pct * self.total:
                self.next_pct += 10


def _config(args: argparse.Namespace) -> dict | None:
    """The --provenance JSON (e.g. the workflow's configuration slice), parsed."""
    if not getattr(args, "provenance", None):
        return None
    try:
        value = json.loads(args.provenance)
    except json.JSONDecodeError as exc:
        raise ValueError(f"--provenance: expected a JSON object, got {args.provenance!r} ({exc})") from None
    if not isinstance(value, dict):
        raise ValueError(f"--provenance: expected a JSON object, got {args.provenance!r}")
    return value


def _write_timing(path: str | None, rows: list[dict]) -> None:
    if path:
        from nllbench.io import write_summary_csv

        write_summary_csv(rows, path)


def _batch_mode(args, single: tuple[str, ...], batch: tuple[str, ...], command: str) -> bool:
    """True for the batch form; checks that exactly one form's arguments are given, completely."""
    s = " ".join(a.upper() if a in ("posterior", "scenario_file") else "--" + a for a in single)
    b = " ".join("--" + a.replace("_", "-") for a in batch)
    usage = f"{command}: give either {s} (one run) or {b} (a batch)"
    has_single = [getattr(args, a) is not None for a in single]
    has_batch = [getattr(args, a) is not None for a in batch]
    if any(has_single) and any(has_batch):
        raise ValueError(usage + ", not both")
    if all(has_batch):
        return True
    if all(has_single):
        return False
    raise ValueError(usage)


def _simulate(args: argparse.Namespace) -> int:
    from nllbench.io import atomic_directory
    from nllbench.runs import simulate_file

    overrides = {
        "clutter_rate": args.clutter_rate,
        "p_detection": args.pd,
        "p_survival": args.ps,
        "steps": args.steps,
        "process_noise": args.process_noise,
        "measurement_noise": args.measurement_noise,
    }
    if args.truth_seed is not None:
        overrides["truth_seed"] = None if args.truth_seed < 0 else args.truth_seed
    config = _config(args)
    if not _batch_mode(args, ("output",), ("output_dir",), "simulate"):
        if args.seeds:
            raise ValueError("simulate: --seeds needs --output-dir (a batch); use --seed with -o")
        sim, sec = simulate_file(args.scenario, args.seed, args.output, overrides, config)
        _write_timing(args.timing, [{"item": f"seed{args.seed}", "seconds": sec}])
        n = sum(len(x) for x in sim.truth)
        z = sum(len(x) for x in sim.measurements)
        print(
            f"wrote {args.output}: {args.scenario}, {len(sim.truth)} steps, {n} object-steps, "
            f"{z} measurements, seed {args.seed}"
        )
        return 0
    seeds = args.seeds if args.seeds else [args.seed]
    timing = []
    with atomic_directory(args.output_dir) as tmp:
        for seed in seeds:
            _, sec = simulate_file(args.scenario, seed, tmp / f"seed{seed}.nc", overrides, config)
            timing.append({"item": f"seed{seed}", "seconds": sec})
    _write_timing(args.timing, timing)
    print(f"wrote {len(seeds)} scenario files to {args.output_dir}")
    return 0


def _filter_settings(args):
    from nllbench.filters import PHDSettings, PMBMSettings

    phd = PHDSettings(prune=args.phd_prune, merge=args.phd_merge, cap=args.phd_cap)
    pmbm = PMBMSettings(
        gate=args.gate,
        max_hypotheses=args.max_hypotheses,
        hypothesis_floor=args.hypothesis_floor,
        existence_floor=args.existence_floor,
        ppp_floor=args.ppp_floor,
        recycle=args.recycle,
    )
    return phd, pmbm


def _warn(command: str):
    return lambda msg: print(f"nllbench {command}: warning: {msg}", file=sys.stderr)


def _seed_files(directory: str) -> list[Path]:
    files = sorted(
        Path(directory).glob("seed*.nc"), key=lambda p: int(p.stem[4:]) if p.stem[4:].isdigit() else -1
    )
    if not files:
        raise ValueError(f"{directory}: no seed*.nc files found")
    return files


def _filter(args: argparse.Namespace) -> int:
    from nllbench.io import atomic_directory
    from nllbench.runs import filter_file

    phd, pmbm = _filter_settings(args)
    config = _config(args)
    options = dict(
        max_cardinality=args.cphd_max_card, phd=phd, pmbm=pmbm, config=config, warn=_warn("filter")
    )
    if not _batch_mode(args, ("scenario_file", "output"), ("input_dir", "output_dir"), "filter"):
        from nllbench.io import read_scenario

        steps = read_scenario(args.scenario_file).steps
        progress = Progress(args.filter, steps, enabled=not args.quiet)
        posts, sec = filter_file(args.scenario_file, args.filter, args.output, progress=progress, **options)
        _write_timing(args.timing, [{"item": Path(args.scenario_file).stem, "seconds": sec}])
        print(f"wrote {args.output}: {args.filter}, {len(posts)} steps in {sec:.2f} s")
        return 0
    files = _seed_files(args.input_dir)
    timing = []
    with atomic_directory(args.output_dir) as tmp:
        for i, f in enumerate(files):
            _, sec = filter_file(f, args.filter, tmp / f.name, **options)
            timing.append({"item": f.stem, "seconds": sec})
            if not args.quiet:
                print(
                    f"[{args.filter}] {i + 1}/{len(files)} {f.name} ({sec:.2f} s)",
                    file=sys.stderr,
                    flush=True,
                )
    _write_timing(args.timing, timing)
    print(f"wrote {len(files)} posterior files to {args.output_dir}")
    return 0


def _evaluation_settings(args):
    from nllbench.evaluate import EvaluationSettings

    return EvaluationSettings(
        qs=tuple(args.q),
        marginal="full" if args.full_state else "position",
        cutoff=args.cutoff,
        p=args.p,
        threshold=args.threshold,
        existence_threshold=args.existence_threshold,
        cov_scale=args.cov_scale,
        temper=args.temper,
        theorem_rho=args.theorem_rho,
        budget=args.budget,
        exact=args.exact,
    )


def _print_row(row: dict, qs) -> None:
    for q in qs:
        inf = row[f"nll_infinite_steps_q{q}"]
        note = f" ({inf} steps with an impossible truth)" if inf else ""
        print(f"  NLL (Q={q}): {row[f'nll_q{q}']:.4f}{note}")
    print(
        f"  GOSPA {row['gospa']:.4f}  OSPA {row['ospa']:.4f}  MOTA {row['mota']:.4f}  "
        f"MOTP {row['motp']:.4f}  IDF1 {row['idf1']:.4f}  switches {row['switches']}"
    )
    print(f"  Theorem 1: max |NLL - RHS| = {row['theorem1_max_abs_difference']:.2e}")


def _evaluate(args: argparse.Namespace) -> int:
    from nllbench.io import atomic_directory, write_summary_csv
    from nllbench.runs import evaluate_file

    settings = _evaluation_settings(args)
    config = _config(args)
    if not _batch_mode(
        args,
        ("posterior", "scenario_file", "output"),
        ("posterior_dir", "scenario_dir", "output_dir"),
        "evaluate",
    ):
        row, sec, nll_sec = evaluate_file(args.posterior, args.scenario_file, args.output, settings, config)
        _write_timing(
            args.timing, [{"item": Path(args.posterior).stem, "seconds": sec, "nll_seconds": nll_sec}]
        )
        summary_path = args.summary or str(Path(args.output).with_suffix("")) + ".summary.csv"
        write_summary_csv(row, summary_path)
        print(f"wrote {args.output} and {summary_path} ({sec:.2f} s)")
        _print_row(row, settings.qs)
        return 0
    if args.summary:
        raise ValueError("evaluate: --summary is for one run; a batch writes summary.csv in --output-dir")
    files = _seed_files(args.posterior_dir)
    rows, timing = [], []
    with atomic_directory(args.output_dir) as tmp:
        for f in files:
            scenario = Path(args.scenario_dir) / f.name
            row, sec, nll_sec = evaluate_file(f, scenario, tmp / f.name, settings, config)
            rows.append(row)
            timing.append(
                {
                    "item": f.stem,
                    "filter": row["filter"],
                    "q": max(settings.qs),
                    "cov_scale": settings.cov_scale,
                    "seconds": sec,
                    "nll_seconds": nll_sec,
                }
            )
        write_summary_csv(rows, tmp / "summary.csv")
    _write_timing(args.timing, timing)
    print(f"wrote {len(files)} metrics files and summary.csv to {args.output_dir}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="nllbench", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    sim = sub.add_parser("simulate", help="simulate a scenario preset to a NetCDF file")
    sim.add_argument("--scenario", required=True, choices=["williams15", "chalmers"])
    sim.add_argument("--seed", type=int, default=0, help="seed of the measurement (and truth) generator")
    sim.add_argument("--seeds", type=int, nargs="+", help="batch: one file per seed in --output-dir")
    sim.add_argument("--clutter-rate", type=float, help="expected clutter per scan")
    sim.add_argument("--pd", type=float, help="detection probability")
    sim.add_argument("--ps", type=float, help="survival probability")
    sim.add_argument("--steps", type=int, help="number of time steps")
    sim.add_argument("--process-noise", type=float, help="q of the constant-velocity model")
    sim.add_argument("--measurement-noise", type=float, help="std of each position measurement")
    sim.add_argument("--truth-seed", type=int, help="seed of the truth (-1: draw it from --seed)")
    sim.add_argument("-o", "--output", help="output NetCDF file (one run)")
    sim.add_argument("--output-dir", help="batch: directory of seed<N>.nc files (written atomically)")
    sim.add_argument("--timing", help="batch: CSV of compute seconds per item")
    sim.add_argument("--provenance", help="JSON object stored in the file (e.g. the config slice)")
    sim.set_defaults(func=_simulate)
    flt = sub.add_parser("filter", help="run a reference filter on a scenario file")
    flt.add_argument("scenario_file", nargs="?", help="NetCDF scenario file from 'nllbench simulate'")
    flt.add_argument("--filter", required=True, choices=["phd", "cphd", "pmb", "pmbm", "mbm", "mbm01"])
    flt.add_argument("-o", "--output", help="output NetCDF posterior file (one run)")
    flt.add_argument("--input-dir", help="batch: directory of seed<N>.nc scenario files")
    flt.add_argument("--output-dir", help="batch: directory for the posterior files (written atomically)")
    flt.add_argument("--timing", help="batch: CSV of compute seconds per item")
    flt.add_argument("--provenance", help="JSON object stored in the file (e.g. the config slice)")
    flt.add_argument("--gate", type=float, default=20.0, help="squared Mahalanobis gate (PMBM family)")
    flt.add_argument("--max-hypotheses", type=int, default=200, help="cap on global hypotheses")
    flt.add_argument(
        "--hypothesis-floor", type=float, default=1e-4, help="prune hypotheses below this weight"
    )
    flt.add_argument("--existence-floor", type=float, default=1e-5, help="prune Bernoullis below this r")
    flt.add_argument("--ppp-floor", type=float, default=1e-5, help="prune PPP components below this weight")
    flt.add_argument("--recycle", type=float, default=0.0, help="recycle Bernoullis below this r (0: off)")
    flt.add_argument("--phd-prune", type=float, default=1e-5, help="(C)PHD pruning threshold")
    flt.add_argument("--phd-merge", type=float, default=4.0, help="(C)PHD merging distance")
    flt.add_argument("--phd-cap", type=int, default=100, help="(C)PHD maximum components")
    flt.add_argument("--cphd-max-card", type=int, help="CPHD cardinality bound (default: from the scene)")
    flt.add_argument("-q", "--quiet", action="store_true", help="no progress output")
    flt.set_defaults(func=_filter)
    ev = sub.add_parser("evaluate", help="score a posterior file against its scenario file")
    ev.add_argument("posterior", nargs="?", help="NetCDF posterior file")
    ev.add_argument("scenario_file", nargs="?", help="NetCDF scenario file with the truth")
    ev.add_argument("-o", "--output", help="output NetCDF metrics file (one run)")
    ev.add_argument("--posterior-dir", help="batch: directory of seed<N>.nc posterior files")
    ev.add_argument("--scenario-dir", help="batch: directory of the matching seed<N>.nc scenario files")
    ev.add_argument("--output-dir", help="batch: directory for metrics files and summary.csv (atomic)")
    ev.add_argument("--timing", help="batch: CSV of compute seconds per item")
    ev.add_argument("--provenance", help="JSON object stored in the files (e.g. the config slice)")
    ev.add_argument("--summary", help="one-row CSV summary (default: <output>.summary.csv)")
    ev.add_argument("--q", type=int, nargs="+", default=[1, 10, 100], help="Murty budgets for the NLL")
    ev.add_argument(
        "--full-state", action="store_true", help="NLL on the full state, not the position marginal"
    )
    ev.add_argument("--cutoff", type=float, default=2.0, help="GOSPA/OSPA cut-off c")
    ev.add_argument("--p", type=float, default=1.0, help="GOSPA/OSPA order p")
    ev.add_argument("--threshold", type=float, default=2.0, help="MOTA/MOTP/IDF1 matching threshold")
    ev.add_argument("--existence-threshold", type=float, default=0.4, help="estimator threshold on r")
    ev.add_argument("--cov-scale", type=float, default=1.0, help="probe: scale every covariance by s")
    ev.add_argument("--temper", type=float, default=1.0, help="probe: temper existence probabilities")
    ev.add_argument("--theorem-rho", type=float, default=0.9, help="rho of the Theorem 1 check")
    ev.add_argument("--budget", choices=["hypothesis", "global"], default="hypothesis")
    ev.add_argument("--exact", action="store_true", help="also the exact NLL where it is tractable")
    ev.set_defaults(func=_evaluate)
    ag = sub.add_parser("aggregate", help="tidy tables and summary statistics from metrics directories")
    ag.add_argument("metrics_dirs", nargs="+", help="directories of seed<N>.nc metrics files")
    ag.add_argument("--out-dir", required=True, help="output directory (written atomically)")
    ag.add_argument("--provenance", help="JSON object recorded in provenance.json")
    ag.set_defaults(func=_aggregate)
    tm = sub.add_parser("timing", help="collect timing CSVs of batch jobs into one table")
    tm.add_argument("files", nargs="+")
    tm.add_argument("-o", "--output", required=True)
    tm.set_defaults(func=_timing)
    pl = sub.add_parser("plot", help="draw one figure from stored tables (PNG and PDF)")
    pl.add_argument("figure", choices=FIGURES)
    pl.add_argument("--tables", help="directory written by 'nllbench aggregate'")
    pl.add_argument("--timing", help="timing table from 'nllbench timing' (figure timing)")
    pl.add_argument(
        "--example-dir", help="directory written by 'nllbench example N --out-dir' (figure example)"
    )
    pl.add_argument("--q", type=int, help="the Murty budget to show (default: the largest)")
    pl.add_argument("-o", "--output", required=True, help="output .png (a .pdf is written beside it)")
    pl.add_argument("--provenance", help="JSON object stored in the figures' metadata")
    pl.set_defaults(func=_plot)
    lb = sub.add_parser(
        "leaderboard", help="self-contained HTML summary: leaderboard, paired ranks, examples"
    )
    lb.add_argument("--tables", required=True, help="directory written by 'nllbench aggregate'")
    lb.add_argument("--example-dirs", nargs="*", help="directories written by 'nllbench example N --out-dir'")
    lb.add_argument("--theorem1", help="text written by 'nllbench theorem1' (shown on the page)")
    lb.add_argument("-o", "--output", required=True, help="output .html")
    lb.set_defaults(func=_leaderboard)
    ex = sub.add_parser("example", help="print one of the paper's examples (1 or 2)")
    ex.add_argument("number", type=int, nargs="+", choices=[1, 2], help="example number")
    ex.add_argument("--out-dir", help="also write the trackers' posteriors, truth and table there")
    ex.set_defaults(func=_example)
    th = sub.add_parser("theorem1", help="check Theorem 1 (NLL vs GOSPA) on random sets")
    th.add_argument("--trials", type=int, default=10)
    th.add_argument("--seed", type=int, default=0)
    th.add_argument("--dim", type=int, default=2)
    th.add_argument("--size", type=float, default=20.0, help="field of view [0, size]^dim")
    th.add_argument("--max-objects", type=int, default=8)
    th.add_argument("--rho", type=float, default=0.8)
    th.add_argument("--scale", type=float, default=2.0)
    th.set_defaults(func=_theorem1)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except KeyError as exc:
        print(
            f"nllbench {args.command}: error: missing entry {exc.args[0]!r} in an input file", file=sys.stderr
        )
        return 2
    except (ValueError, TypeError, OSError, RuntimeError) as exc:
        print(f"nllbench {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
