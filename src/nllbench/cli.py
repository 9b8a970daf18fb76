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
import sys
import time
from pathlib import Path

import numpy as np


def _example(args: argparse.Namespace) -> int:
    from nllbench.examples import format_example

    for k, number in enumerate(args.number):
        if k:
            print()
        print(format_example(number))
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


def _simulate(args: argparse.Namespace) -> int:
    from nllbench.io import write_scenario
    from nllbench.scenarios import get_scenario, simulate

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
    sc = get_scenario(args.scenario, **overrides)
    sim = simulate(sc, np.random.default_rng(args.seed), seed=args.seed)
    write_scenario(sim, args.output)
    n = sum(len(x) for x in sim.truth)
    z = sum(len(x) for x in sim.measurements)
    print(
        f"wrote {args.output}: {sc.name}, {sc.steps} steps, {n} object-steps, "
        f"{z} measurements, seed {args.seed}"
    )
    return 0


def _filter(args: argparse.Namespace) -> int:
    import dataclasses

    from nllbench.filters import PHDSettings, PMBMSettings, run_filter
    from nllbench.io import read_scenario, write_posterior

    data = read_scenario(args.scenario_file)
    if data.model is None:
        raise ValueError(f"{args.scenario_file}: the file has no model (F, Q, H, R, birth); cannot filter it")
    max_truth = max((len(x) for x in data.truth), default=0)
    max_card = args.cphd_max_card
    if max_card is None:
        expected = float(data.model.initial.weights.sum() + data.model.birth.weights.sum() * data.steps)
        max_card = int(max(2 * max_truth, min(expected, 4 * max_truth + 20)) + 10)
    elif args.filter == "cphd" and max_card < max_truth:
        print(
            f"nllbench filter: warning: --cphd-max-card {max_card} is below the {max_truth} objects "
            "the scene holds at its busiest step; the CPHD posterior gives those truths "
            "likelihood 0 (NLL = inf)",
            file=sys.stderr,
        )
    phd = PHDSettings(prune=args.phd_prune, merge=args.phd_merge, cap=args.phd_cap)
    pmbm = PMBMSettings(
        gate=args.gate,
        max_hypotheses=args.max_hypotheses,
        hypothesis_floor=args.hypothesis_floor,
        existence_floor=args.existence_floor,
        ppp_floor=args.ppp_floor,
        recycle=args.recycle,
    )
    progress = Progress(args.filter, data.steps, enabled=not args.quiet)
    t0 = time.perf_counter()
    posts = run_filter(
        args.filter,
        data.measurements,
        data.model,
        max_cardinality=max_card,
        phd_settings=phd,
        pmbm_settings=pmbm,
        progress=progress,
    )
    seconds = time.perf_counter() - t0
    params: dict = {"filter": args.filter}
    if args.filter in ("phd", "cphd"):
        params.update(dataclasses.asdict(phd))
    else:
        params.update(dataclasses.asdict(pmbm))
    if args.filter == "cphd":
        params["max_cardinality"] = max_card
    scenario_attrs = {k: v for k, v in data.attrs.items() if k not in ("content", "Conventions")}
    attrs = {
        **{
            f"scenario_{k}" if k in ("nllbench_version", "nllbench_schema_version") else k: v
            for k, v in scenario_attrs.items()
        },
        "filter": args.filter,
        "filter_parameters": params,
        "scenario_file": str(args.scenario_file),
        "filter_seconds": seconds,
    }
    write_posterior(posts, args.output, attrs)
    print(f"wrote {args.output}: {args.filter}, {len(posts)} steps in {seconds:.2f} s")
    return 0


def _evaluate(args: argparse.Namespace) -> int:
    from nllbench.evaluate import EvaluationSettings, evaluate_run
    from nllbench.io import read_posterior, read_scenario, write_metrics, write_summary_csv

    post = read_posterior(args.posterior)
    data = read_scenario(args.scenario_file)
    if len(post) != data.steps:
        raise ValueError(
            f"{args.posterior}: expected {data.steps} steps like {args.scenario_file}, got {len(post)}"
        )
    settings = EvaluationSettings(
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
    )
    metrics = evaluate_run(
        post, data.truth, data.truth_ids, data.attrs["fov_low"], data.attrs["fov_high"], settings
    )
    keep = ("scenario", "seed", "filter", "clutter_rate", "p_detection", "p_survival", "filter_parameters")
    attrs = {k: post.attrs[k] for k in keep if k in post.attrs}
    attrs.update(posterior_file=str(args.posterior), scenario_file=str(args.scenario_file))
    write_metrics(metrics, args.output, attrs)
    row = {
        **{k: attrs.get(k, "") for k in ("scenario", "seed", "filter", "clutter_rate", "p_detection")},
        "marginal": settings.marginal,
        "cov_scale": settings.cov_scale,
        "temper": settings.temper,
        **metrics.summary(),
    }
    summary_path = args.summary or str(Path(args.output).with_suffix("")) + ".summary.csv"
    write_summary_csv(row, summary_path)
    inf_steps = {q: row[f"nll_infinite_steps_q{q}"] for q in settings.qs}
    print(f"wrote {args.output} and {summary_path} ({metrics.seconds:.2f} s)")
    for q in settings.qs:
        note = f" ({inf_steps[q]} steps with an impossible truth)" if inf_steps[q] else ""
        print(f"  NLL (Q={q}): {row[f'nll_q{q}']:.4f}{note}")
    print(
        f"  GOSPA {row['gospa']:.4f}  OSPA {row['ospa']:.4f}  MOTA {row['mota']:.4f}  "
        f"MOTP {row['motp']:.4f}  IDF1 {row['idf1']:.4f}  switches {row['switches']}"
    )
    print(f"  Theorem 1: max |NLL - RHS| = {row['theorem1_max_abs_difference']:.2e}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="nllbench", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    sim = sub.add_parser("simulate", help="simulate a scenario preset to a NetCDF file")
    sim.add_argument("--scenario", required=True, choices=["williams15", "chalmers"])
    sim.add_argument("--seed", type=int, default=0, help="seed of the measurement (and truth) generator")
    sim.add_argument("--clutter-rate", type=float, help="expected clutter per scan")
    sim.add_argument("--pd", type=float, help="detection probability")
    sim.add_argument("--ps", type=float, help="survival probability")
    sim.add_argument("--steps", type=int, help="number of time steps")
    sim.add_argument("--process-noise", type=float, help="q of the constant-velocity model")
    sim.add_argument("--measurement-noise", type=float, help="std of each position measurement")
    sim.add_argument("--truth-seed", type=int, help="seed of the truth (-1: draw it from --seed)")
    sim.add_argument("-o", "--output", required=True, help="output NetCDF file")
    sim.set_defaults(func=_simulate)
    flt = sub.add_parser("filter", help="run a reference filter on a scenario file")
    flt.add_argument("scenario_file", help="NetCDF scenario file from 'nllbench simulate'")
    flt.add_argument("--filter", required=True, choices=["phd", "cphd", "pmb", "pmbm", "mbm", "mbm01"])
    flt.add_argument("-o", "--output", required=True, help="output NetCDF posterior file")
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
    ev.add_argument("posterior", help="NetCDF posterior file")
    ev.add_argument("scenario_file", help="NetCDF scenario file with the truth")
    ev.add_argument("-o", "--output", required=True, help="output NetCDF metrics file")
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
    ev.set_defaults(func=_evaluate)
    ex = sub.add_parser("example", help="print one of the paper's examples (1 or 2)")
    ex.add_argument("number", type=int, nargs="+", choices=[1, 2], help="example number")
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
    except (ValueError, TypeError, OSError, KeyError) as exc:
        print(f"nllbench {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
