"""The ``nllbench`` command line.

Subcommands
-----------
simulate      simulate a scenario preset to a NetCDF scenario file.
filter        run a reference filter on a scenario file; write its posteriors.
evaluate      score a posterior file against its scenario: NLL, GOSPA, OSPA,
              MOTA, MOTP, IDF1 and the Theorem 1 check.
gospa-table   mean and RMS GOSPA per filter from the tidy tables (the
              reference MATLAB code's table).
tables long   the long per-step table (CSV) from the per-step cube steps.nc.
example N     print the paper's Example N (1 or 2): NLL, its decomposition,
              GOSPA, MOTA and MOTP for both trackers.
theorem1      check Theorem 1 on random sets and print both sides.
score         score any tracker's tracks table (CSV/Parquet) against a truth
              table: the same metrics file as evaluate, with explicit fill-ins.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from nllbench.options import add_options, from_args, integer, number

POSITIVE = number(0, open_low=True)
NON_NEGATIVE = number(0)
PROBABILITY = number(0, 1)


@contextmanager
def _outputs(*targets: tuple[str, str | None, bool]):
    """Every output of a command, given as (option, path or None, is a directory).

    Yields the temporary path of each given target (None for absent ones).
    All targets are checked before anything is computed and are renamed into
    place together at the end; a failure leaves none of them
    (:class:`nllbench.store.committed_together`).
    """
    from nllbench.store import Output, committed_together

    given = [Output(Path(path), option, directory) for option, path, directory in targets if path]
    with committed_together(*given) as tmps:
        it = iter(tmps)
        yield [next(it) if path else None for _, path, _ in targets]


def _example(args: argparse.Namespace) -> int:
    from nllbench.examples import format_example, write_example

    if args.out_dir and len(args.number) != 1:
        raise ValueError("example: --out-dir takes one example number")
    for k, n in enumerate(args.number):
        if k:
            print()
        text = format_example(n)
        print(text)
        if args.out_dir:
            with _outputs(("--out-dir", args.out_dir, True)) as (out,):
                write_example(n, out, text)
    return 0


def _aggregate(args: argparse.Namespace) -> int:
    from nllbench.pipeline.aggregate import write_tables

    with _outputs(("--out-dir", args.out_dir, True)) as (out,):
        counts = write_tables(args.metrics_dirs, out, _config(args), long_csv=args.long_csv)
    print(
        f"wrote {args.out_dir}: {counts['steps']} per-step values, {counts['runs']} per-run rows, "
        f"{counts['summary']} summary rows from {len(args.metrics_dirs)} directories"
    )
    return 0


def _gospa_table(args: argparse.Namespace) -> int:
    from nllbench.pipeline.reference import write_gospa_table

    n = write_gospa_table(args.tables, args.output)
    print(f"wrote {args.output}: mean and RMS GOSPA of {n} (scenario, filter, clutter, P_D) settings")
    return 0


def _tables_long(args: argparse.Namespace) -> int:
    from nllbench.pipeline.aggregate import read_long_table

    df = read_long_table(args.tables, args.measure)
    with _outputs(("-o", args.output, False)) as (out,):
        df.to_csv(out, index=False)
    print(f"wrote {args.output}: {len(df)} per-step rows from {Path(args.tables) / 'steps.nc'}")
    return 0


def _timing(args: argparse.Namespace) -> int:
    from nllbench.pipeline.aggregate import collect_timing

    with _outputs(("-o", args.output, False)) as (out,):
        df = collect_timing(args.files)
        df.to_csv(out, index=False)
    print(f"wrote {args.output}: {len(df)} items, {df['seconds'].sum():.1f} s of compute")
    return 0


ESTIMATORS = ("round", "greedy", "map", "best_hypothesis", "map_cardinality")

FIGURES = (
    "example",
    "clutter",
    "decomposition",
    "q",
    "calibration",
    "theorem1",
    "ranks",
    "timing",
    "tgospa",
    "hota",
    "reliability",
    "nees",
    "cardinality",
)


def _checked_plot(args: argparse.Namespace) -> int:
    """``plot``, with its output paths checked before anything is drawn (plots.save writes them)."""
    from nllbench.store import check_output, remove_created_dirs

    created = []
    try:
        for path in (args.output, Path(args.output).with_suffix(".pdf")):
            created += check_output(path, "-o")
        return _plot(args)
    except BaseException:
        remove_created_dirs(created)
        raise


def _plot(args: argparse.Namespace) -> int:
    import pandas as pd

    from nllbench.pipeline import plots

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
            from nllbench.measures.names import THEOREM1_STEP
            from nllbench.pipeline.aggregate import read_long_table

            fig = plots.fig_theorem1(read_long_table(tables, THEOREM1_STEP))
        elif args.figure == "tgospa":
            fig = plots.fig_tgospa(summary)
        elif args.figure == "hota":
            fig = plots.fig_hota_vs_nll(summary, q)
        elif args.figure == "reliability":
            fig = plots.fig_reliability(
                pd.read_csv(tables / "reliability.csv"), pd.read_csv(tables / "calibration.csv")
            )
        elif args.figure == "nees":
            fig = plots.fig_nees(pd.read_csv(tables / "calibration.csv"))
        elif args.figure == "cardinality":
            fig = plots.fig_cardinality(pd.read_csv(tables / "calibration.csv"))
        else:
            fig = plots.fig_rank_agreement(summary, q)
    written = plots.save(fig, args.output, _config(args))
    print("wrote " + ", ".join(str(p) for p in written))
    return 0


def _leaderboard(args: argparse.Namespace) -> int:
    from nllbench.pipeline.report import write_leaderboard

    with _outputs(("-o", args.output, False)) as (out,):
        write_leaderboard(args.tables, args.example_dirs or [], out, args.theorem1)
    print(f"wrote {args.output}")
    return 0


def _theorem1(args: argparse.Namespace) -> int:
    from nllbench.measures.theorem1 import theorem1

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
    """The --provenance JSON, else the --settings object (the workflow's configuration slice), parsed."""
    if not getattr(args, "provenance", None):
        return json.loads(args.settings) if getattr(args, "settings", None) else None
    try:
        value = json.loads(args.provenance)
    except json.JSONDecodeError as exc:
        raise ValueError(f"--provenance: expected a JSON object, got {args.provenance!r} ({exc})") from None
    if not isinstance(value, dict):
        raise ValueError(f"--provenance: expected a JSON object, got {args.provenance!r}")
    return value


def _write_timing(path: str | None, rows: list[dict]) -> None:
    if path:
        from nllbench.store import write_summary_csv

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


def _json_option(text: str, option: str):
    """The value of a JSON option, or a ValueError naming the option."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{option}: expected JSON, got {text!r} ({exc})") from None


def _simulate(args: argparse.Namespace) -> int:
    from nllbench.pipeline.runs import simulate_file

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
    if args.mb_birth is not None:
        overrides["mb_birth"] = _json_option(args.mb_birth, "--mb-birth")
    if args.mb_start is not None:
        overrides["mb_start"] = args.mb_start
    truth = args.truth
    if truth is not None and args.truth_seed is not None:
        raise ValueError("simulate: --truth gives the truth; --truth-seed cannot be used with it")
    config = _config(args)
    if not _batch_mode(args, ("output",), ("output_dir",), "simulate"):
        if args.seeds:
            raise ValueError("simulate: --seeds needs --output-dir (a batch); use --seed with -o")
        with _outputs(("-o", args.output, False), ("--timing", args.timing, False)) as (out, timing):
            sim, sec = simulate_file(args.scenario, args.seed, out, overrides, config, truth)
            _write_timing(timing, [{"item": f"seed{args.seed}", "seconds": sec}])
        n = sum(len(x) for x in sim.truth)
        z = sum(len(x) for x in sim.measurements)
        print(
            f"wrote {args.output}: {args.scenario}, {len(sim.truth)} steps, {n} object-steps, "
            f"{z} measurements, seed {args.seed}"
        )
        return 0
    seeds = args.seeds if args.seeds else [args.seed]
    timing = []
    with _outputs(("--output-dir", args.output_dir, True), ("--timing", args.timing, False)) as (tmp, tt):
        for seed in seeds:
            _, sec = simulate_file(args.scenario, seed, tmp / f"seed{seed}.nc", overrides, config, truth)
            timing.append({"item": f"seed{seed}", "seconds": sec})
        _write_timing(tt, timing)
    print(f"wrote {len(seeds)} scenario files to {args.output_dir}")
    return 0


def _filter_settings(args):
    """(PHDSettings, PMBMSettings, FilterRunSettings) of ``nllbench filter`` from its options."""
    from nllbench.filters import PHDSettings, PMBMSettings
    from nllbench.settings import FilterRunSettings

    return (
        from_args(PHDSettings, args, "phd_"),
        from_args(PMBMSettings, args),
        from_args(FilterRunSettings, args),
    )


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
    from nllbench.pipeline.runs import filter_file

    if args.filter is None:
        raise ValueError("filter: --filter is required (or the --settings key filter)")
    phd, pmbm, run = _filter_settings(args)
    options = dict(
        max_cardinality=run.cphd_max_card,
        phd=phd,
        pmbm=pmbm,
        config=_config(args),
        warn=_warn("filter"),
        estimate_at=run.estimate_at,
        estimator=run.estimator,
        existence_threshold=run.existence_threshold,
    )
    if not _batch_mode(args, ("scenario_file", "output"), ("input_dir", "output_dir"), "filter"):
        from nllbench.store import read_scenario

        steps = read_scenario(args.scenario_file).steps
        progress = Progress(args.filter, steps, enabled=not args.quiet)
        with _outputs(("-o", args.output, False), ("--timing", args.timing, False)) as (out, timing):
            posts, sec = filter_file(args.scenario_file, args.filter, out, progress=progress, **options)
            _write_timing(timing, [{"item": Path(args.scenario_file).stem, "seconds": sec}])
        print(f"wrote {args.output}: {args.filter}, {len(posts)} steps in {sec:.2f} s")
        return 0
    files = _seed_files(args.input_dir)
    timing = []
    with _outputs(("--output-dir", args.output_dir, True), ("--timing", args.timing, False)) as (tmp, tt):
        for i, f in enumerate(files):
            _, sec = filter_file(f, args.filter, tmp / f.name, **options)
            timing.append({"item": f.stem, "seconds": sec})
            if not args.quiet:
                print(
                    f"[{args.filter}] {i + 1}/{len(files)} {f.name} ({sec:.2f} s)",
                    file=sys.stderr,
                    flush=True,
                )
        _write_timing(tt, timing)
    print(f"wrote {len(files)} posterior files to {args.output_dir}")
    return 0


def _evaluation_settings(args):
    """EvaluationSettings from the options of ``evaluate`` or ``score`` (score: the default estimator)."""
    from nllbench.measures.evaluate import EvaluationSettings

    return from_args(EvaluationSettings, args)


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


def _warn_empty(row: dict, path) -> None:
    n = row.get("estimator_empty_steps", 0)
    if n:
        _warn("evaluate")(
            f"{path}: at {n} steps the estimator returned no object although the posterior expects "
            "at least one (see docs/estimators.md; e.g. --estimator greedy for a (C)PHD)"
        )


def _evaluate(args: argparse.Namespace) -> int:
    from nllbench.pipeline.runs import evaluate_file
    from nllbench.store import write_summary_csv

    settings = _evaluation_settings(args)
    config = _config(args)
    check = dict(allow_mismatch=args.allow_mismatch, warn=_warn("evaluate"))
    if not _batch_mode(
        args,
        ("posterior", "scenario_file", "output"),
        ("posterior_dir", "scenario_dir", "output_dir"),
        "evaluate",
    ):
        if args.cov_scales is not None or args.probe_q is not None:
            raise ValueError(
                "evaluate: --cov-scales and --probe-q (a grid) are for a batch (--posterior-dir ...)"
            )
        summary_path = args.summary or str(Path(args.output).with_suffix("")) + ".summary.csv"
        targets = (
            ("-o", args.output, False),
            ("--summary", summary_path, False),
            ("--timing", args.timing, False),
        )
        with _outputs(*targets) as (out, summary, timing):
            row, sec, nll_sec = evaluate_file(
                args.posterior, args.scenario_file, out, settings, config, **check
            )
            write_summary_csv(row, summary)
            _write_timing(
                timing, [{"item": Path(args.posterior).stem, "seconds": sec, "nll_seconds": nll_sec}]
            )
        print(f"wrote {args.output} and {summary_path} ({sec:.2f} s)")
        _print_row(row, settings.qs)
        _warn_empty(row, args.posterior)
        return 0
    return _evaluate_batch(args, settings, config, check)


def _evaluate_batch(args: argparse.Namespace, settings, config: dict | None, check: dict) -> int:
    """The batch form of ``evaluate``: one directory, or one per (Q, scale) of a grid (--cov-scales)."""
    from nllbench.measures.evaluate import grid_settings
    from nllbench.pipeline.runs import evaluate_file_many
    from nllbench.pipeline.workflow import fmt
    from nllbench.store import write_summary_csv

    if args.summary:
        raise ValueError("evaluate: --summary is for one run; a batch writes summary.csv in --output-dir")
    grid = _evaluation_grid(args, settings)
    files = _seed_files(args.posterior_dir)
    patterns = [args.output_dir.format(q=q, cov=fmt(s)) for q, s in grid] if args.cov_scales else []
    dirs = [("--output-dir", d, True) for d in patterns or [args.output_dir]]
    jobs = grid_settings(settings, grid) if args.cov_scales is not None else [settings]
    rows, timing = [[] for _ in jobs], []
    with _outputs(*dirs, ("--timing", args.timing, False)) as (*tmps, tt):
        for f in files:
            scenario = Path(args.scenario_dir) / f.name
            outputs = [
                (tmp / f.name, s, _with_cell(config, s, args.cov_scales))
                for tmp, s in zip(tmps, jobs, strict=True)
            ]
            done = evaluate_file_many(f, scenario, outputs, **check)
            for k, (row, _, _) in enumerate(done):
                rows[k].append(row)
            _warn_empty(done[0][0], f)
            timing += _timing_rows(f.stem, done, jobs)
        for tmp, job_rows in zip(tmps, rows, strict=True):
            write_summary_csv(job_rows, tmp / "summary.csv")
        _write_timing(tt, timing)
    where = args.output_dir if len(dirs) == 1 else f"{len(dirs)} directories {args.output_dir}"
    print(f"wrote {len(files)} metrics files and summary.csv to {where}")
    return 0


def _evaluation_grid(args: argparse.Namespace, settings) -> list[tuple[int, float]]:
    """The (Q, scale) pairs of a batch: one (with --cov-scale) or the grid (with --cov-scales)."""
    from nllbench.measures.evaluate import evaluation_grid

    fields = ("{q}" in args.output_dir) + ("{cov}" in args.output_dir)
    if args.cov_scales is None:
        if args.probe_q is not None or fields:
            raise ValueError("evaluate: --probe-q and an --output-dir with {q}/{cov} need --cov-scales")
        return [(settings.qs[-1], settings.cov_scale)]
    if args.cov_scale != 1.0:
        raise ValueError("evaluate: give --cov-scale (one run) or --cov-scales (a grid), not both")
    if fields != 2:
        raise ValueError(
            "--output-dir: with --cov-scales expected a pattern with {q} and {cov},"
            f" got {args.output_dir!r}"
        )
    return evaluation_grid(settings.qs, args.cov_scales, args.probe_q or settings.qs[-1])


def _with_cell(config: dict | None, settings, cov_scales) -> dict | None:
    """The provenance of one metrics file of a grid: the job's, and the file's own (Q, scale) as ``cell``."""
    if config is None or cov_scales is None:
        return config
    return {**config, "cell": {"q": settings.qs[0], "cov_scale": settings.cov_scale}}


def _timing_rows(item: str, done: list, jobs: list) -> list[dict]:
    """Timing rows of one run: one per covariance scale, whose seconds sum to the run's.

    ``nll_seconds``: the Murty NLL at that scale (every Q ranked at once, up to
    ``q``, the largest); ``seconds``: that plus an equal share of the rest
    (reading, estimates and the measures, computed once for all scales).
    """
    scales: dict[float, dict] = {}
    for (row, _, nll_sec), s in zip(done, jobs, strict=True):
        q = max(s.qs[-1], scales.get(s.cov_scale, {}).get("q", 0))
        scales[s.cov_scale] = dict(item=item, filter=row["filter"], q=q, cov_scale=s.cov_scale, nll=nll_sec)
    rest = (done[0][1] - sum(r["nll"] for r in scales.values())) / len(scales)
    return [
        {**{k: v for k, v in r.items() if k != "nll"}, "seconds": r["nll"] + rest, "nll_seconds": r["nll"]}
        for r in scales.values()
    ]


def _score_fill(args: argparse.Namespace, state, settings):
    """The fill-ins of ``nllbench score``, with the calibrations fitted (and printed)."""
    from nllbench.trackers.scoring import FillIns, fit_score_calibration, fit_undetected_rate

    fov_low = fov_high = None
    if args.fov is not None:
        if len(args.fov) % 2:
            raise ValueError(f"--fov: expected LOW... HIGH... (an even count), got {len(args.fov)} numbers")
        half = len(args.fov) // 2
        fov_low, fov_high = tuple(args.fov[:half]), tuple(args.fov[half:])
    if args.undetected_rate is not None and args.fit_undetected_on:
        raise ValueError("score: give --undetected-rate or --fit-undetected-on, not both")
    if (args.undetected_rate or args.fit_undetected_on) and fov_low is None:
        raise ValueError("score: the undetected-object intensity needs its box: --fov LOW... HIGH...")
    calibration = None
    if args.fit_score_on:
        calibration = fit_score_calibration(*args.fit_score_on, state=state, threshold=args.threshold)
        print(f"score calibration: r = expit({calibration.intercept:.6g} + {calibration.slope:.6g} * score)")
    options = (fov_low, fov_high, args.default_std, calibration, args.existence_one)
    fill = FillIns(args.undetected_rate or 0.0, *options)
    if args.fit_undetected_on:
        fit = fit_undetected_rate(*args.fit_undetected_on, state=state, fill=fill, settings=settings)
        print(f"fitted undetected rate {fit['rate']:.6g} (calibration NLL {fit['calibration_nll']:.6g})")
        fill = FillIns(fit["rate"], *options, fit)
    return fill


def _score(args: argparse.Namespace) -> int:
    """``nllbench score``: a tracks table and a truth table in, a metrics file out (or a batch).

    Every output (-o, --summary, --per-frame; or --output-dir, --timing) is
    checked before any calibration is fitted and committed together at the
    end: a failure leaves none of them.
    """
    import warnings

    settings = _evaluation_settings(args)
    batch = _score_batch_mode(args)
    if not batch and args.timing:
        raise ValueError("score: --timing is for a batch (--tracks-dir --scenario-dir --output-dir)")
    if batch and (
        args.per_frame or args.summary or args.frames or args.scenario_file or args.seed is not None
    ):
        raise ValueError(
            "score: --per-frame, --summary, --frames, --scenario-file and --seed are for one run"
        )
    options = dict(state=tuple(args.state), settings=settings, tracker=args.tracker, config=_config(args))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UserWarning)
        if batch:
            rows, result = _score_batch(args, options)
        else:
            row, result, summary_path = _score_one(args, options)
    for w in sorted({str(w.message) for w in caught}):
        _warn("score")(w)
    if batch:
        print(f"wrote {len(rows)} metrics files and summary.csv to {args.output_dir}")
    else:
        written = [args.output, summary_path, *([args.per_frame] if args.per_frame else [])]
        print(f"wrote {', '.join(written)} ({result.frames.size} frames)")
        _print_row(row, options["settings"].qs)
    for key, value in result.fill_ins.items():
        print(f"  fill-in {key}: {json.dumps(value)}")
    return 0


def _score_one(args: argparse.Namespace, options: dict):
    """One run of ``score``: (summary row, ScoreResult, summary path), outputs committed together."""
    from nllbench.store import write_summary_csv
    from nllbench.trackers.scoring import score_file

    summary_path = args.summary or str(Path(args.output).with_suffix("")) + ".summary.csv"
    targets = (
        ("-o", args.output, False),
        ("--summary", summary_path, False),
        ("--per-frame", args.per_frame, False),
    )
    with _outputs(*targets) as (out, summary, per_frame):
        fill = _score_fill(args, options["state"], options["settings"])
        row, result = score_file(
            args.tracks,
            args.truth,
            out,
            frames=args.frames,
            scenario_file=args.scenario_file,
            seed=args.seed,
            per_frame=per_frame,
            fill=fill,
            **options,
        )
        write_summary_csv(row, summary)
    return row, result, summary_path


def _score_batch(args: argparse.Namespace, options: dict):
    """A batch of ``score``: (summary rows, last ScoreResult); --output-dir, --timing committed together."""
    from nllbench.store import write_summary_csv
    from nllbench.trackers.scoring import score_file

    settings = options["settings"]
    tables = _seed_tables(args.tracks_dir)
    rows, timing = [], []
    with _outputs(("--output-dir", args.output_dir, True), ("--timing", args.timing, False)) as (tmp, tt):
        fill = _score_fill(args, options["state"], settings)
        for f in tables:
            scenario = Path(args.scenario_dir) / (f.stem + ".nc")
            row, result = score_file(f, scenario, tmp / (f.stem + ".nc"), fill=fill, **options)
            rows.append(row)
            timing.append(
                {
                    "item": f.stem,
                    "filter": args.tracker,
                    "q": max(settings.qs),
                    "cov_scale": settings.cov_scale,
                    "seconds": result.metrics.seconds,
                    "nll_seconds": result.metrics.nll_seconds,
                }
            )
        write_summary_csv(rows, tmp / "summary.csv")
        _write_timing(tt, timing)
    return rows, result


def _score_batch_mode(args: argparse.Namespace) -> bool:
    """True for ``--tracks-dir --scenario-dir --output-dir``; False for ``TRACKS TRUTH -o OUTPUT``."""
    single = [args.tracks, args.truth, args.output]
    batch = [args.tracks_dir, args.scenario_dir, args.output_dir]
    usage = "score: give either TRACKS TRUTH -o OUTPUT (one run) or --tracks-dir --scenario-dir --output-dir"
    if any(a is not None for a in single) and any(a is not None for a in batch):
        raise ValueError(usage + ", not both")
    if all(a is not None for a in batch):
        return True
    if all(a is not None for a in single):
        return False
    raise ValueError(usage)


def _seed_tables(directory: str) -> list[Path]:
    """seed<N>.csv / .parquet / .pq files of a directory (any case, as the table reader), by seed.

    One table per seed: two spellings of one seed (seed1.csv and seed1.parquet,
    or seed1 and seed01) are an error, not a silent choice.
    """
    if not Path(directory).is_dir():
        raise ValueError(f"--tracks-dir {directory!r}: expected a directory of seed<N> tracks tables")
    files = [
        p
        for p in Path(directory).glob("seed*")
        if p.suffix.lower() in (".csv", ".parquet", ".pq") and p.stem[4:].isdigit()
    ]
    by_seed: dict[int, Path] = {}
    for p in sorted(files):
        seed = int(p.stem[4:])
        if seed in by_seed:
            raise ValueError(
                f"--tracks-dir {directory!r}: expected one table per seed, got {by_seed[seed].name} "
                f"and {p.name} for seed {seed}"
            )
        by_seed[seed] = p
    if not files:
        raise ValueError(f"--tracks-dir {directory!r}: no seed<N>.csv or seed<N>.parquet tracks tables found")
    return [by_seed[k] for k in sorted(by_seed)]


def _add_score_parser(sub) -> None:
    sc = sub.add_parser("score", help="score a tracks table (CSV/Parquet) against a truth table")
    sc.add_argument("tracks", nargs="?", help="tracks table (.csv or .parquet; see docs/score.md)")
    sc.add_argument("truth", nargs="?", help="truth table (.csv/.parquet: frame, id, state) or scenario .nc")
    sc.add_argument("-o", "--output", help="output NetCDF metrics file (as evaluate's; one run)")
    sc.add_argument("--tracks-dir", help="batch: directory of seed<N>.csv / seed<N>.parquet tracks tables")
    sc.add_argument(
        "--scenario-dir", help="batch: directory of the matching seed<N>.nc scenario files (truth)"
    )
    sc.add_argument("--output-dir", help="batch: directory for metrics files and summary.csv (atomic)")
    sc.add_argument("--timing", help="batch: CSV of compute seconds per item (as evaluate's)")
    sc.add_argument(
        "--per-frame", help="CSV with one row per frame (frame, nll, nll_lower, gospa, ospa, ...)"
    )
    sc.add_argument("--summary", help="one-row CSV summary (default: <output>.summary.csv)")
    sc.add_argument("--state", nargs="+", default=["x", "y"], help="state columns (first two: position)")
    sc.add_argument(
        "--frames", type=integer(), nargs="+", help="frames to score (default: union of both tables)"
    )
    sc.add_argument("--undetected-rate", type=NON_NEGATIVE, help="fill-in: uniform undetected-object rate")
    sc.add_argument(
        "--fov", type=number(), nargs="+", help="LOW... HIGH...: box of that intensity (per state column)"
    )
    sc.add_argument(
        "--fit-undetected-on",
        nargs=2,
        metavar=("TRACKS", "TRUTH"),
        help="fill-in: ML rate on a calibration set",
    )
    sc.add_argument(
        "--fit-score-on", nargs=2, metavar=("TRACKS", "TRUTH"), help="fill-in: score -> r calibration set"
    )
    sc.add_argument("--existence-one", action="store_true", help="fill-in: r = 1 when there is no r or score")
    sc.add_argument("--default-std", type=POSITIVE, help="fill-in: std of the covariance when there is none")
    sc.add_argument("--tracker", default="external", help="tracker name (the metrics file's 'filter')")
    sc.add_argument("--scenario-file", help="scenario file whose scenario, seed, clutter, pd label the run")
    sc.add_argument("--seed", type=integer(0), help="run seed recorded in the metrics file")
    sc.add_argument("--provenance", help="JSON object stored in the file (e.g. the config slice)")
    _add_settings_option(sc, "batch", "entry")
    _add_evaluation_options(sc, skip=("estimator",))
    sc.set_defaults(func=_score)


def _add_evaluation_options(parser: argparse.ArgumentParser, skip=()) -> None:
    """The options of :class:`~nllbench.measures.evaluate.EvaluationSettings` shared by evaluate and score."""
    from nllbench.measures.evaluate import EvaluationSettings

    add_options(parser, EvaluationSettings, skip=skip)
    parser.add_argument(
        "--full-state", dest="marginal", action="store_const", const="full", help="same as --marginal full"
    )


def _add_simulate_parser(sub) -> None:
    sim = sub.add_parser("simulate", help="simulate a scenario preset to a NetCDF file")
    sim.add_argument("--scenario", required=True, choices=["williams15", "williams15_mb", "chalmers"])
    sim.add_argument(
        "--seed", type=integer(0), default=0, help="seed of the measurement (and truth) generator"
    )
    sim.add_argument("--seeds", type=integer(0), nargs="+", help="batch: one file per seed in --output-dir")
    sim.add_argument("--clutter-rate", type=NON_NEGATIVE, help="expected clutter per scan")
    sim.add_argument("--pd", type=number(0, 1, open_low=True), help="detection probability")
    sim.add_argument("--ps", type=PROBABILITY, help="survival probability")
    sim.add_argument("--steps", type=integer(1), help="number of time steps")
    sim.add_argument("--process-noise", type=POSITIVE, help="q of the constant-velocity model")
    sim.add_argument("--measurement-noise", type=POSITIVE, help="std of each position measurement")
    sim.add_argument("--truth-seed", type=integer(-1), help="seed of the truth (-1: draw it from --seed)")
    sim.add_argument(
        "--truth", help="CSV of the truth (columns step, id, x, y, vx, vy; steps from 1): simulate around it"
    )
    sim.add_argument(
        "--mb-birth",
        help='multi-Bernoulli birth, JSON: [{"r": 0.005, "mean": [x, y, vx, vy], "std": [4 numbers]}, ...]'
        ' ("cov": a 4 x 4 matrix may replace "std")',
    )
    sim.add_argument(
        "--mb-start",
        action=argparse.BooleanOptionalAction,
        help="the MBM filters start from the birth Bernoullis, with no PPP (default: the preset's)",
    )
    _add_batch_io(
        sim, "output NetCDF file (one run)", "batch: directory of seed<N>.nc files (written atomically)"
    )
    sim.set_defaults(func=_simulate)


def _add_batch_io(parser: argparse.ArgumentParser, output: str, output_dir: str) -> None:
    """-o (one run), --output-dir and --timing (a batch), --provenance."""
    parser.add_argument("-o", "--output", help=output)
    parser.add_argument("--output-dir", help=output_dir)
    parser.add_argument("--timing", help="batch: CSV of compute seconds per item")
    parser.add_argument("--provenance", help="JSON object stored in the files (e.g. the config slice)")


def _add_filter_parser(sub) -> None:
    from nllbench.filters import PHDSettings, PMBMSettings
    from nllbench.settings import FilterRunSettings

    flt = sub.add_parser("filter", help="run a reference filter on a scenario file")
    flt.add_argument("scenario_file", nargs="?", help="NetCDF scenario file from 'nllbench simulate'")
    flt.add_argument(
        "--filter",
        choices=["phd", "cphd", "pmb", "pmbm", "mbm", "mbm01"],
        help="the filter (required: here or as the --settings key filter)",
    )
    flt.add_argument("--input-dir", help="batch: directory of seed<N>.nc scenario files")
    _add_batch_io(flt, "output NetCDF posterior file (one run)", "batch: directory for the posterior files")
    _add_settings_option(flt, "seeds")
    add_options(flt, PMBMSettings)
    add_options(flt, PHDSettings, "phd_")
    add_options(flt, FilterRunSettings)
    flt.add_argument("-q", "--quiet", action="store_true", help="no progress output")
    flt.set_defaults(func=_filter)


def _add_evaluate_parser(sub) -> None:
    ev = sub.add_parser("evaluate", help="score a posterior file against its scenario file")
    ev.add_argument("posterior", nargs="?", help="NetCDF posterior file")
    ev.add_argument("scenario_file", nargs="?", help="NetCDF scenario file with the truth")
    ev.add_argument("--posterior-dir", help="batch: directory of seed<N>.nc posterior files")
    ev.add_argument("--scenario-dir", help="batch: directory of the matching seed<N>.nc scenario files")
    _add_batch_io(
        ev, "output NetCDF metrics file (one run)", "batch: directory for metrics files and summary.csv"
    )
    _add_settings_option(ev, "batch")
    ev.add_argument("--summary", help="one-row CSV summary (default: <output>.summary.csv)")
    _add_evaluation_options(ev)
    ev.add_argument(
        "--cov-scales",
        type=POSITIVE,
        nargs="+",
        help="batch: a grid of probes, every --q at scale 1 and --probe-q at each scale, computed"
        " together; --output-dir is then a pattern with {q} and {cov}",
    )
    ev.add_argument("--probe-q", type=integer(1), help="the grid's probe Q (default: the largest --q)")
    ev.add_argument(
        "--allow-mismatch",
        action="store_true",
        help="score a posterior against a scenario other than its own (recorded in the metrics file)",
    )
    ev.set_defaults(func=_evaluate)


def _add_table_parsers(sub) -> None:
    ag = sub.add_parser("aggregate", help="tidy tables and summary statistics from metrics directories")
    ag.add_argument("metrics_dirs", nargs="+", help="directories of seed<N>.nc metrics files")
    ag.add_argument("--out-dir", required=True, help="output directory (written atomically)")
    ag.add_argument("--provenance", help="JSON object recorded in provenance.json")
    ag.add_argument(
        "--long-csv",
        action="store_true",
        help="also write steps.csv, the long per-step table (large; 'nllbench tables long' derives it later)",
    )
    ag.set_defaults(func=_aggregate)
    tb = sub.add_parser("tables", help="derived views of the tables written by 'nllbench aggregate'")
    tl = tb.add_subparsers(dest="view", required=True).add_parser(
        "long", help="the long per-step table (one row per value) from steps.nc, as CSV"
    )
    tl.add_argument("--tables", required=True, help="directory written by 'nllbench aggregate'")
    tl.add_argument("--measure", action="append", help="only this measure (repeatable; default: all)")
    tl.add_argument("-o", "--output", required=True, help="output CSV")
    tl.set_defaults(func=_tables_long)
    gt = sub.add_parser("gospa-table", help="mean and RMS GOSPA per filter from the tidy tables")
    gt.add_argument("--tables", required=True, help="directory written by 'nllbench aggregate'")
    gt.add_argument("-o", "--output", required=True, help="output CSV")
    gt.set_defaults(func=_gospa_table)
    tm = sub.add_parser("timing", help="collect timing CSVs of batch jobs into one table")
    tm.add_argument("files", nargs="+")
    tm.add_argument("-o", "--output", required=True)
    tm.set_defaults(func=_timing)


def _add_report_parsers(sub) -> None:
    pl = sub.add_parser("plot", help="draw one figure from stored tables (PNG and PDF)")
    pl.add_argument("figure", choices=FIGURES)
    pl.add_argument("--tables", help="directory written by 'nllbench aggregate'")
    pl.add_argument("--timing", help="timing table from 'nllbench timing' (figure timing)")
    pl.add_argument(
        "--example-dir", help="directory written by 'nllbench example N --out-dir' (figure example)"
    )
    pl.add_argument("--q", type=integer(1), help="the Murty budget to show (default: the largest)")
    pl.add_argument("-o", "--output", required=True, help="output .png (a .pdf is written beside it)")
    pl.add_argument("--provenance", help="JSON object stored in the figures' metadata")
    pl.set_defaults(func=_checked_plot)
    lb = sub.add_parser(
        "leaderboard", help="self-contained HTML summary: leaderboard, paired ranks, examples"
    )
    lb.add_argument("--tables", required=True, help="directory written by 'nllbench aggregate'")
    lb.add_argument("--example-dirs", nargs="*", help="directories written by 'nllbench example N --out-dir'")
    lb.add_argument("--theorem1", help="text written by 'nllbench theorem1' (shown on the page)")
    lb.add_argument("-o", "--output", required=True, help="output .html")
    lb.set_defaults(func=_leaderboard)


def _add_paper_parsers(sub) -> None:
    ex = sub.add_parser("example", help="print one of the paper's examples (1 or 2)")
    ex.add_argument("number", type=int, nargs="+", choices=[1, 2], help="example number")
    ex.add_argument("--out-dir", help="also write the trackers' posteriors, truth and table there")
    ex.set_defaults(func=_example)
    th = sub.add_parser("theorem1", help="check Theorem 1 (NLL vs GOSPA) on random sets")
    th.add_argument("--trials", type=integer(1), default=10)
    th.add_argument("--seed", type=integer(0), default=0)
    th.add_argument("--dim", type=integer(1), default=2)
    th.add_argument("--size", type=POSITIVE, default=20.0, help="field of view [0, size]^dim")
    th.add_argument("--max-objects", type=integer(0), default=8)
    th.add_argument("--rho", type=number(0, 1, open_low=True, open_high=True), default=0.8)
    th.add_argument("--scale", type=POSITIVE, default=2.0)
    th.set_defaults(func=_theorem1)


def build_parser() -> argparse.ArgumentParser:
    """The ``nllbench`` parser: one builder per command family."""
    p = argparse.ArgumentParser(prog="nllbench", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    for add in (
        _add_simulate_parser,
        _add_filter_parser,
        _add_evaluate_parser,
        _add_table_parsers,
        _add_report_parsers,
        _add_paper_parsers,
        _add_score_parser,
    ):
        add(sub)
    return p


def _add_settings_option(parser: argparse.ArgumentParser, *recorded: str) -> None:
    """``--settings``: a JSON object of this command's options (the workflow's config slice).

    Its keys are option names with underscores (``max_hypotheses`` for
    ``--max-hypotheses``); ``recorded`` keys (and ``filter`` where the command
    has no such option) are recorded only. Options given on the command line
    win over the object's values. The object is the provenance stored in the
    outputs (unless ``--provenance`` is given).
    """
    parser.add_argument(
        "--settings", help="JSON object of option values (e.g. the workflow's config slice), recorded"
    )
    parser.set_defaults(recorded_settings=("filter", *recorded))


def _option_value(action: argparse.Action, key: str, value):
    """A --settings value checked and converted as the option ``action`` would parse it."""
    where = f"--settings key {key}"
    if value is None:
        return None
    if action.nargs == 0:  # a switch: store_true / store_const / --x/--no-x
        if isinstance(action, argparse.BooleanOptionalAction) or action.const is True:
            if not isinstance(value, bool):
                raise ValueError(f"{where}: expected true or false, got {value!r}")
            return value
        if value not in (action.default, action.const):
            raise ValueError(f"{where}: expected {action.default!r} or {action.const!r}, got {value!r}")
        return value
    many = action.nargs in ("+", "*")
    if many and not isinstance(value, list):
        raise ValueError(f"{where}: expected a list, got {value!r}")
    if isinstance(value, (dict, list)) and not many:
        raise ValueError(f"{where}: expected one value, got {value!r}")
    out = []
    for item in value if many else [value]:
        if isinstance(item, (bool, dict, list)):
            raise ValueError(f"{where}: expected a number or a string, got {item!r}")
        try:
            item = action.type(str(item)) if action.type else item
        except argparse.ArgumentTypeError as exc:
            raise ValueError(f"{where}: {exc}") from None
        if action.choices is not None and item not in action.choices:
            raise ValueError(f"{where}: expected one of {list(action.choices)}, got {item!r}")
        out.append(item)
    return out if many else out[0]


def _settings_defaults(parser: argparse.ArgumentParser, args: argparse.Namespace) -> dict:
    """The --settings object of ``args`` as option defaults of its command's parser (checked)."""
    value = _json_option(args.settings, "--settings")
    if not isinstance(value, dict):
        raise ValueError(f"--settings: expected a JSON object, got {args.settings!r}")
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    actions: dict = {}
    for a in sub.choices[args.command]._actions:  # the first option of a dest (--marginal, not --full-state)
        if a.option_strings:
            actions.setdefault(a.dest, a)
    out = {}
    for key, v in value.items():
        if key in actions and key not in ("settings", "provenance", "help"):
            out[key] = _option_value(actions[key], key, v)
        elif key not in args.recorded_settings:
            options = sorted(k for k in actions if k not in ("settings", "provenance", "help"))
            raise ValueError(
                f"--settings key {key}: expected one of {options} or {list(args.recorded_settings)}"
            )
    return out


def parse(argv: list[str] | None = None) -> tuple[argparse.ArgumentParser, argparse.Namespace]:
    """The parsed command line; a --settings object gives option values that explicit options override."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "settings", None):
        defaults = _settings_defaults(parser, args)
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        sub.choices[args.command].set_defaults(**defaults)
        args = parser.parse_args(argv)
    return parser, args


def main(argv: list[str] | None = None) -> int:
    try:
        parser, args = parse(argv)
    except ValueError as exc:
        print(f"nllbench: error: {exc}", file=sys.stderr)
        return 2
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
