"""``score``: any tracker's tracks table scored against a truth table, with explicit fill-ins."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from nllbench.cli.common import (
    NON_NEGATIVE,
    POSITIVE,
    add_settings_option,
    checked_outputs,
    provenance_of,
    warner,
    write_timing,
)
from nllbench.cli.evaluate import (
    add_evaluation_options,
    one_run_outputs,
    parsed_evaluation_settings,
    print_row,
)
from nllbench.cli.score_trajectory import (
    add_trajectory_options,
    check_trajectory_args,
    print_trajectory,
    trajectory_options,
    write_trajectory_tables,
)
from nllbench.options import integer, number


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

    settings = parsed_evaluation_settings(args)
    batch = _score_batch_mode(args)
    if not batch and args.timing:
        raise ValueError("score: --timing is for a batch (--tracks-dir --scenario-dir --output-dir)")
    if batch and (
        args.per_frame or args.summary or args.frames or args.scenario_file or args.seed is not None
    ):
        raise ValueError(
            "score: --per-frame, --summary, --frames, --scenario-file and --seed are for one run"
        )
    check_trajectory_args(args, batch)
    options = dict(
        state=tuple(args.state), settings=settings, tracker=args.tracker, config=provenance_of(args)
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UserWarning)
        if batch:
            rows, result = _score_batch(args, options)
        else:
            row, result, summary_path = _score_one(args, options)
    for w in sorted({str(w.message) for w in caught}):
        warner("score")(w)
    if batch:
        print(f"wrote {len(rows)} metrics files and summary.csv to {args.output_dir}")
    else:
        written = [args.output, summary_path, *([args.per_frame] if args.per_frame else [])]
        print(f"wrote {', '.join(written)} ({result.frames.size} frames)")
        print_row(row, options["settings"].qs)
    print_trajectory(result)
    for key, value in result.fill_ins.items():
        print(f"  fill-in {key}: {json.dumps(value)}")
    return 0


def _score_one(args: argparse.Namespace, options: dict):
    """One run of ``score``: (summary row, ScoreResult, summary path), outputs committed together."""
    from nllbench.store import write_summary_csv
    from nllbench.trackers.scoring import score_file

    summary_path, targets = one_run_outputs(args, ("--per-frame", args.per_frame))
    tables = (("--per-window", args.per_window, False), ("--per-trajectory", args.per_trajectory, False))
    with checked_outputs(*targets, *tables) as (out, summary, per_frame, per_window, per_trajectory):
        fill = _score_fill(args, options["state"], options["settings"])
        trajectory = trajectory_options(args, fill, options["state"], options["settings"])
        row, result = score_file(
            args.tracks,
            args.truth,
            out,
            frames=args.frames,
            scenario_file=args.scenario_file,
            seed=args.seed,
            per_frame=per_frame,
            fill=fill,
            trajectory=trajectory,
            **options,
        )
        write_summary_csv(row, summary)
        if trajectory is not None:
            write_trajectory_tables(result, per_window, per_trajectory)
    return row, result, summary_path


def _score_batch(args: argparse.Namespace, options: dict):
    """A batch of ``score``: (summary rows, last ScoreResult); --output-dir, --timing committed together."""
    from nllbench.store import write_summary_csv
    from nllbench.trackers.scoring import score_file

    settings = options["settings"]
    tables = _seed_tables(args.tracks_dir)
    rows, timing = [], []
    with checked_outputs(("--output-dir", args.output_dir, True), ("--timing", args.timing, False)) as (
        tmp,
        tt,
    ):
        fill = _score_fill(args, options["state"], settings)
        trajectory = trajectory_options(args, fill, options["state"], settings)
        for f in tables:
            scenario = Path(args.scenario_dir) / (f.stem + ".nc")
            row, result = score_file(
                f, scenario, tmp / (f.stem + ".nc"), fill=fill, trajectory=trajectory, **options
            )
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
        write_timing(tt, timing)
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


def add_parsers(sub) -> None:
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
    add_settings_option(sc, "batch", "entry")
    add_evaluation_options(sc, skip=("estimator",))
    add_trajectory_options(sc)
    sc.set_defaults(func=_score)
