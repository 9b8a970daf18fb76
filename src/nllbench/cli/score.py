"""``score``: any tracker's tracks table scored against a truth table, with explicit fill-ins."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from nllbench.cli.common import (
    NON_NEGATIVE,
    POSITIVE,
    add_settings_option,
    check_text_file,
    checked_outputs,
    provenance_of,
    say_first_compilation,
    warner,
    write_timing,
)
from nllbench.cli.evaluate import (
    METRICS_FILES,
    add_evaluation_options,
    one_run_outputs,
    parsed_evaluation_settings,
    print_row,
)
from nllbench.cli.progress import ProgressLine
from nllbench.cli.score_mot import add_mot_options, print_batch, print_combined, selected_measures
from nllbench.cli.score_stonesoup import STONESOUP_DEFAULTS, add_stonesoup_options
from nllbench.cli.score_trajectory import (
    add_trajectory_options,
    check_trajectory_args,
    print_trajectory,
    trajectory_options,
)
from nllbench.options import MAX_INT64, MAX_SEED, integer, number


def _score_fill(args: argparse.Namespace, state, settings):
    """The fill-ins of ``nllbench score``, with the calibrations fitted (and printed):
    :func:`nllbench.trackers.fillin_fits.fitted_fill_ins`."""
    from nllbench.trackers.fillin_fits import fitted_fill_ins

    return fitted_fill_ins(
        state=state,
        settings=settings,
        undetected_rate=args.undetected_rate,
        fov=args.fov,
        default_std=args.default_std,
        existence_one=args.existence_one,
        fit_undetected_on=args.fit_undetected_on,
        fit_score_on=args.fit_score_on,
        fit_constant_existence_on=getattr(args, "fit_constant_existence_on", None),
        threshold=args.threshold,
        frames=_union(args),
        read=read_options(args),
    )


def _score(args: argparse.Namespace) -> int:
    """``nllbench score``: a tracks table and a truth table in, a metrics file out (or a batch).

    Every output (-o, --summary, --per-frame; or --output-dir, --timing) is
    checked before any calibration is fitted and committed together at the
    end: a failure leaves none of them.
    """
    import warnings

    settings = preset_of(args, parsed_evaluation_settings(args))
    batch = _score_batch_mode(args)
    if not batch and args.timing:
        raise ValueError("score: --timing is for a batch (--tracks-dir --scenario-dir --output-dir)")
    if batch and (
        args.per_frame
        or args.summary
        or (args.frames and args.frames != ["union"])
        or args.scenario_file
        or args.seed is not None
    ):
        raise ValueError(
            "score: --per-frame, --summary, --frames (but --frames union), --scenario-file and --seed "
            "are for one run"
        )
    check_trajectory_args(args, batch)
    items = batch_items(args) if batch else None
    inputs = items[0] if batch else [(None, args.tracks, args.truth)]
    mot = items[1] if batch else [input_format(args, p) for p in (args.tracks, args.truth)] == ["mot"] * 2
    selected_measures(args, mot and getattr(args, "mot_matching", "iou") == "iou")
    say_first_compilation("score")
    check_stonesoup_options(args, [p for _, *pair in inputs for p in pair] + calibration_paths(args))
    options = dict(
        state=tuple(args.state),
        settings=settings,
        tracker=args.tracker,
        config=provenance_of(args),
        read=read_options(args),
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UserWarning)
        if batch:
            rows, result, needs = _score_batch(args, options, items)
        else:
            row, result, summary_path, needs = _score_one(args, options)
    for w in sorted({str(w.message) for w in caught}):
        warner("score")(w)
    if batch:
        print_batch(rows, args.output_dir)
    else:
        written = [args.output, summary_path, *([args.per_frame] if args.per_frame else [])]
        print(f"wrote {', '.join(written)} ({row['steps']} frames)")
        if result is not None:
            print_row(row, options["settings"].qs)
        else:
            print_combined(row)
    if needs:
        print(f"  NLL not computed: it needs {needs}")
    if result is None:
        return 0
    print_trajectory(result)
    for key, value in result.fill_ins.items():
        print(f"  fill-in {key}: {json.dumps(value)}")
    return 0


def _score_one(args: argparse.Namespace, options: dict):
    """One run of ``score``: (summary row, ScoreResult or None, summary path, what the NLL needs or None),
    outputs committed together (:func:`nllbench.trackers.score_runs.score_pair`). A MOTChallenge pair
    whose NLL lacks a fill-in gives TrackEval's measures only: -o then holds them."""
    from nllbench.trackers.score_runs import score_pair

    summary_path, targets = one_run_outputs(args, ("--per-frame", args.per_frame))
    inputs = [("TRACKS", args.tracks), ("TRUTH", args.truth), ("--scenario-file", args.scenario_file)]
    inputs += calibration_inputs(args)
    check_text_tables(inputs)
    tables = (("--per-window", args.per_window, False), ("--per-trajectory", args.per_trajectory, False))
    with checked_outputs(*targets, *tables, inputs=inputs) as (
        out,
        summary,
        per_frame,
        per_window,
        per_trajectory,
    ):
        fill = _score_fill(args, options["state"], options["settings"])
        trajectory = trajectory_options(
            args, fill, options["state"], options["settings"], read=lambda a, b: score_inputs(args, a, b)
        )
        row, result, needs = score_pair(
            args.tracks,
            args.truth,
            out,
            fill=fill,
            summary=summary,
            per_frame=per_frame,
            trajectory=trajectory,
            frames=_frames(args.frames),
            measures=args.measures,
            per_window=per_window,
            per_trajectory=per_trajectory,
            progress=ProgressLine("score", args.progress),
            scenario_file=args.scenario_file,
            seed=args.seed,
            **options,
        )
    return row, result, summary_path, needs


def _score_batch(args: argparse.Namespace, options: dict, batch: tuple):
    """A batch of ``score`` over ``batch`` (:func:`batch_items`): (summary rows, last ScoreResult or None,
    what the NLL needs or None); --output-dir, --timing committed together.

    MOTChallenge sequences also give the combined result (TrackEval's
    COMBINED_SEQ), as the last summary row and in ``motchallenge.nc``.
    """
    from functools import partial

    from nllbench.trackers.score_runs import score_batch

    settings = options["settings"]
    items, mot = batch
    check_text_tables([("--tracks-dir", f) for _, f, _ in items] + calibration_inputs(args))
    targets = ("--output-dir", args.output_dir, METRICS_FILES), ("--timing", args.timing, False)
    inputs = [
        ("--tracks-dir", args.tracks_dir),
        ("--scenario-dir", args.scenario_dir),
        *calibration_inputs(args),
    ]
    with checked_outputs(*targets, inputs=inputs) as (tmp, tt):
        fill = _score_fill(args, options["state"], settings)
        trajectory = trajectory_options(
            args, fill, options["state"], settings, read=lambda a, b: score_inputs(args, a, b)
        )
        rows, timing, result, needs = score_batch(
            items,
            tmp,
            mot=mot,
            fill=fill,
            trajectory=trajectory,
            frames=_frames(args.frames),
            measures=getattr(args, "measures", None),
            jobs=jobs_of(args, len(items)),
            progress=partial(run_progress, args.progress),
            **options,
        )
        write_timing(tt, timing)
    return rows, result, needs


def batch_items(args: argparse.Namespace) -> tuple[list[tuple[str, Path, Path]], bool]:
    """(name, tracks file, truth file) of each run of a batch, and whether they are MOTChallenge sequences
    (:func:`nllbench.trackers.formats.batch.batch_runs` of ``--tracks-dir``, ``--scenario-dir``)."""
    from nllbench.trackers.formats.batch import batch_runs

    return batch_runs(args.tracks_dir, args.scenario_dir, getattr(args, "format", "auto"))


def read_options(args: argparse.Namespace):
    """The :class:`~nllbench.trackers.formats.ReadOptions` of ``score``'s options."""
    from nllbench.trackers.formats import ReadOptions
    from nllbench.trackers.formats.stonesoup import StoneSoupOptions

    stonesoup = StoneSoupOptions(
        **{k.removeprefix("stonesoup_"): getattr(args, k, v) for k, v in STONESOUP_DEFAULTS.items()}
    )
    return ReadOptions(
        format=getattr(args, "format", "auto"),
        state=tuple(args.state),
        mot_conf=getattr(args, "mot_conf", "score"),
        mot_box_std_fraction=getattr(args, "mot_box_std_fraction", None),
        mot_matching=getattr(args, "mot_matching", "iou"),
        stonesoup=stonesoup,
    )


def input_format(args: argparse.Namespace, path) -> str:
    """How ``score`` reads ``path``: ``"mot"``, ``"stonesoup"`` or ``"table"`` (CSV / Parquet / scenario .nc).

    :func:`nllbench.trackers.formats.input_format` with ``--format``; a suffix
    no reader claims is ``"table"`` here (the reader then names the file).
    """
    from nllbench.trackers.formats import input_format as format_of

    try:
        kind = format_of(path, getattr(args, "format", "auto"))
    except ValueError:
        return "table"
    return "table" if kind == "scenario" else kind


def run_progress(seconds: float, name: str) -> ProgressLine:
    """The progress line of a batch's run ``name`` (every ``seconds``; picklable for ``--jobs``)."""
    return ProgressLine(f"score {name}", seconds)


def jobs_of(args: argparse.Namespace, runs: int) -> int:
    """``--jobs``, default the cores this process may use (at most the runs)."""
    import os

    jobs = getattr(args, "jobs", None)
    if jobs is None:
        jobs = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(int(jobs), runs))


def score_inputs(args: argparse.Namespace, tracks, truth):
    """(tracks, truth) as ``score`` takes them: paths, or tables read from MOTChallenge or Stone Soup files
    (:func:`nllbench.trackers.formats.read_inputs` with the command's options)."""
    return score_tables(args, tracks, truth)[0]


def score_tables(args: argparse.Namespace, tracks, truth):
    """(:func:`score_inputs`'s (tracks, truth), the MOTPair or None):
    :func:`nllbench.trackers.formats.read_inputs`."""
    from nllbench.trackers.formats import read_inputs

    return read_inputs(tracks, truth, read_options(args))


def preset_of(args: argparse.Namespace, settings):
    """``settings`` with ``--preset``'s convention; a setting given other than its default overrides it.

    (:func:`nllbench.measures.run.presets.preset_settings` with the changed settings as overrides.)
    """
    if getattr(args, "preset", None) is None:
        return settings
    from dataclasses import fields

    from nllbench.measures.run.evaluate import EvaluationSettings
    from nllbench.measures.run.presets import preset_settings

    default = EvaluationSettings()
    changed = {
        f.name: getattr(settings, f.name)
        for f in fields(settings)
        if getattr(settings, f.name) != getattr(default, f.name)
    }
    return preset_settings(args.preset, default, **changed)


def calibration_inputs(args: argparse.Namespace) -> list[tuple[str, str]]:
    """(option, path) of the calibration tables (--fit-undetected-on, --fit-score-on, ...), when given."""
    return [
        (option, path)
        for option in ("--fit-undetected-on", "--fit-score-on", "--fit-constant-existence-on")
        for path in getattr(args, option[2:].replace("-", "_")) or []
    ]


def calibration_paths(args: argparse.Namespace) -> list[str]:
    """The paths of the calibration inputs."""
    return [path for _, path in calibration_inputs(args)]


def check_text_tables(inputs: list[tuple[str, str | Path | None]]) -> None:
    """Refuse a .csv input that is not text (gzip, NetCDF, Parquet ... named .csv), naming its option."""
    for option, path in inputs:
        if path is not None and Path(path).suffix.lower() == ".csv":
            check_text_file(path, option, "a text CSV table")


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


def add_parsers(sub) -> None:
    sc = sub.add_parser("score", help="score a tracks table (CSV/Parquet) against a truth table")
    sc.add_argument(
        "tracks",
        nargs="?",
        help="tracks table (.csv or .parquet), MOTChallenge .txt or Stone Soup .yaml (only tracking "
        "types are built from it: a writer, reader or other tag is refused by name); see docs/score.md "
        "in nllbench's source",
    )
    sc.add_argument(
        "truth",
        nargs="?",
        help="truth table (.csv/.parquet: frame, id, state), scenario .nc, MOTChallenge gt .txt or Stone"
        " Soup .yaml of GroundTruthPaths",
    )
    sc.add_argument("-o", "--output", help="output NetCDF metrics file (as evaluate's; one run)")
    sc.add_argument(
        "--tracks-dir",
        help="batch: directory of seed<N>.csv / .parquet / .yaml tracks tables, or of MOTChallenge <SEQ>.txt",
    )
    sc.add_argument(
        "--scenario-dir",
        help="batch: directory of the matching seed<N>.nc scenario files (truth), or MOTChallenge"
        " ground truth <SEQ>.txt or <SEQ>/gt/gt.txt",
    )
    sc.add_argument("--output-dir", help="batch: directory for metrics files and summary.csv (atomic)")
    sc.add_argument(
        "--timing",
        help="batch: CSV of seconds per item: wall (seconds), NLL, proper scores, and CPU seconds of the "
        "item, its reading and its MOTChallenge box measures; then the item's CPU seconds by part, adding up "
        "to it: density building, estimates, each measure (cpu_seconds_<name>; empty: not computed), rest",
    )
    sc.add_argument(
        "--jobs",
        type=integer(1, 1024),
        help="batch: runs scored at once, in worker processes (default: the cores there are)",
    )
    sc.add_argument(
        "--per-frame", help="CSV with one row per frame (frame, nll, nll_lower, gospa, ospa, ...)"
    )
    sc.add_argument("--summary", help="one-row CSV summary (default: <output>.summary.csv)")
    sc.add_argument("--state", nargs="+", default=["x", "y"], help="state columns (first two: position)")
    sc.add_argument(
        "--frames",
        type=_frame_token,
        nargs="+",
        help="frames to score: integers, or 'union' for every frame of either table (default: both"
        " tables must cover the same frames; a frame in one table only is refused, naming it)",
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
    sc.add_argument("--seed", type=integer(0, MAX_SEED), help="run seed recorded in the metrics file")
    sc.add_argument("--provenance", help="JSON object stored in the file (e.g. the config slice)")
    sc.add_argument(
        "--progress",
        type=NON_NEGATIVE,
        default=10.0,
        metavar="SECONDS",
        help="a progress line on stderr (frames done, rate, time left) every SECONDS of a long run; 0: none",
    )
    add_settings_option(sc, "batch", "entry")
    add_evaluation_options(sc, skip=("estimator",))
    add_mot_options(sc)
    add_stonesoup_options(sc)
    add_trajectory_options(sc)
    sc.set_defaults(func=_score)


def check_stonesoup_options(args: argparse.Namespace, paths) -> None:
    """Refuse a ``--stonesoup-*`` option given other than its default when no input is Stone Soup YAML."""
    if any(p is not None and input_format(args, p) == "stonesoup" for p in paths):
        return
    given = [k for k, v in STONESOUP_DEFAULTS.items() if getattr(args, k, v) != v]
    if given:
        raise ValueError(
            f"--{given[0].replace('_', '-')}: is for Stone Soup YAML inputs (.yaml, .yml or --format "
            "stonesoup), and none is given"
        )


_FRAME_NUMBER = integer(-MAX_INT64 - 1, MAX_INT64)


def _frame_token(text: str):
    """argparse type of ``--frames``: an integer frame, or the word ``union``."""
    return "union" if text == "union" else _FRAME_NUMBER(text)


def _union(args: argparse.Namespace):
    """``"union"`` with ``--frames union`` (then it holds for the calibration pairs too), else None."""
    return "union" if args.frames == ["union"] else None


def _frames(tokens):
    """``--frames`` as :func:`nllbench.score` takes it: None, ``"union"`` or a list of integers."""
    if tokens is None:
        return None
    if "union" in tokens:
        if len(tokens) != 1:
            raise ValueError(
                f"--frames: expected 'union' alone or integers, got {' '.join(map(str, tokens))}"
            )
        return "union"
    return tokens
