"""``evaluate``: a posterior file scored against its scenario (one run, a batch, or a grid of probes).

The evaluation settings' options, the printed summary and the empty-estimate
warning are shared with ``score`` (:mod:`nllbench.cli.score`).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from nllbench.cli.common import (
    POSITIVE,
    add_batch_io,
    add_settings_option,
    batch_mode,
    checked_outputs,
    names_a_file,
    provenance_of,
    seed_files,
    warner,
    write_timing,
)
from nllbench.options import MAX_Q, add_options, from_args, integer

#: What a metrics directory of evaluate or score holds (recorded in its marker).
METRICS_FILES = "metrics files"


def parsed_evaluation_settings(args):
    """EvaluationSettings from the options of ``evaluate`` or ``score`` (score: the default estimator).

    A value given twice in ``--q`` or ``--cov-scales`` is refused, named (a typo, never merged).
    """
    from nllbench.measures.run.evaluate import EvaluationSettings
    from nllbench.options import refuse_repeats

    refuse_repeats(args.q or (), "--q", "Q")
    refuse_repeats(
        getattr(args, "cov_scales", None) or (), "--cov-scales", "scale", " (one metrics directory each)"
    )
    return from_args(EvaluationSettings, args)


def print_row(row: dict, qs) -> None:
    for q in qs:
        inf = row[f"nll_infinite_steps_q{q}"]
        note = f" ({inf} steps with an impossible truth)" if inf else ""
        print(f"  NLL (Q={q}): {row[f'nll_q{q}']:.4f}{note}")
    print(
        f"  GOSPA {row['gospa']:.4f}  OSPA {row['ospa']:.4f}  MOTA {row['mota']:.4f}  "
        f"MOTP {row['motp']:.4f}  IDF1 {row['idf1']:.4f}  switches {row['switches']}"
    )
    print(f"  Theorem 1: max |NLL - RHS| = {row['theorem1_max_abs_difference']:.2e}")
    if "energy_score_mean" in row:  # the proper scores (docs/scores.md)
        intensity = row.get("intensity_score_mean")
        print(
            f"  energy score {row['energy_score_mean']:.4f} +- {row['energy_score_mean_se']:.4f}  "
            f"intensity score {'n/a' if intensity is None else f'{intensity:.4f}'}  "
            f"cardinality RPS {row['cardinality_rps_mean']:.4f}"
        )


def warn_empty(row: dict, path) -> None:
    n = row.get("estimator_empty_steps", 0)
    if n:
        warner("evaluate")(
            f"{path}: at {n} step{'' if n == 1 else 's'} the estimator returned no object although the"
            " posterior expects "
            "at least one (see docs/estimators.md; e.g. --estimator greedy for a (C)PHD)"
        )


def one_run_outputs(args: argparse.Namespace, extra: tuple[str, str | None]):
    """(summary path, outputs) of one evaluate or score run: -o, --summary, and ``extra`` (option, path).

    The summary defaults to ``<output>.summary.csv`` (then an existing one is replaced only when
    nllbench wrote it with the output); the outputs are as :func:`checked_outputs` takes them.
    """
    summary_path = args.summary or str(Path(names_a_file(args.output, "-o")).with_suffix("")) + ".summary.csv"
    beside = None if args.summary else args.output  # a default summary replaces only nllbench's own
    summary = ("--summary", summary_path, False, beside)
    return summary_path, (("-o", args.output, False), summary, (*extra, False))


def _evaluate(args: argparse.Namespace) -> int:
    from nllbench.pipeline.runs import evaluate_file
    from nllbench.store import write_summary_csv

    settings = parsed_evaluation_settings(args)
    config = provenance_of(args)
    check = dict(allow_mismatch=args.allow_mismatch, warn=warner("evaluate"))
    if not batch_mode(
        args,
        ("posterior", "scenario_file", "output"),
        ("posterior_dir", "scenario_dir", "output_dir"),
        "evaluate",
    ):
        if args.cov_scales is not None or args.probe_q is not None:
            raise ValueError(
                "evaluate: --cov-scales and --probe-q (a grid) are for a batch (--posterior-dir ...)"
            )
        summary_path, targets = one_run_outputs(args, ("--timing", args.timing))
        inputs = [("POSTERIOR", args.posterior), ("SCENARIO_FILE", args.scenario_file)]
        with checked_outputs(*targets, inputs=inputs) as (out, summary, timing):
            row, sec, nll_sec = evaluate_file(
                args.posterior, args.scenario_file, out, settings, config, **check
            )
            write_summary_csv(row, summary)
            write_timing(
                timing, [{"item": Path(args.posterior).stem, "seconds": sec, "nll_seconds": nll_sec}]
            )
        print(f"wrote {args.output} and {summary_path} ({sec:.2f} s)")
        print_row(row, settings.qs)
        warn_empty(row, args.posterior)
        return 0
    return _evaluate_batch(args, settings, config, check)


def _evaluate_batch(args: argparse.Namespace, settings, config: dict | None, check: dict) -> int:
    """The batch form of ``evaluate``: one directory, or one per (Q, scale) of a grid (--cov-scales)."""
    from nllbench.measures.run.evaluate import grid_settings
    from nllbench.pipeline.runs import evaluate_file_many
    from nllbench.pipeline.workflow import fmt
    from nllbench.store import write_summary_csv

    if args.summary:
        raise ValueError("evaluate: --summary is for one run; a batch writes summary.csv in --output-dir")
    grid = _evaluation_grid(args, settings)
    files = seed_files(args.posterior_dir)
    patterns = [args.output_dir.format(q=q, cov=fmt(s)) for q, s in grid] if args.cov_scales else []
    dirs = [("--output-dir", d, METRICS_FILES) for d in patterns or [args.output_dir]]
    jobs = grid_settings(settings, grid) if args.cov_scales is not None else [settings]
    rows, timing = [[] for _ in jobs], []
    inputs = [("--posterior-dir", args.posterior_dir), ("--scenario-dir", args.scenario_dir)]
    with checked_outputs(*dirs, ("--timing", args.timing, False), inputs=inputs) as (*tmps, tt):
        for f in files:
            scenario = Path(args.scenario_dir) / f.name
            outputs = [
                (tmp / f.name, s, _with_cell(config, s, args.cov_scales))
                for tmp, s in zip(tmps, jobs, strict=True)
            ]
            done = evaluate_file_many(f, scenario, outputs, **check)
            for k, (row, _, _) in enumerate(done):
                rows[k].append(row)
            warn_empty(done[0][0], f)
            timing += _timing_rows(f.stem, done, jobs)
        for tmp, job_rows in zip(tmps, rows, strict=True):
            write_summary_csv(job_rows, tmp / "summary.csv")
        write_timing(tt, timing)
    where = args.output_dir if len(dirs) == 1 else f"{len(dirs)} directories {args.output_dir}"
    print(f"wrote {len(files)} metrics files and summary.csv to {where}")
    return 0


def _evaluation_grid(args: argparse.Namespace, settings) -> list[tuple[int, float]]:
    """The (Q, scale) pairs of a batch: one (with --cov-scale) or the grid (with --cov-scales)."""
    from nllbench.measures.run.evaluate import evaluation_grid

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


def add_evaluation_options(parser: argparse.ArgumentParser, skip=()) -> None:
    """The options of :class:`~nllbench.measures.run.evaluate.EvaluationSettings` (evaluate's and score's)."""
    from nllbench.measures.run.evaluate import EvaluationSettings

    add_options(parser, EvaluationSettings, skip=skip)
    parser.add_argument(
        "--full-state", dest="marginal", action="store_const", const="full", help="same as --marginal full"
    )


def _evaluate_trajectory(args: argparse.Namespace) -> int:
    import json
    import math

    from nllbench.pipeline.runs import trajectory_nll_file

    targets = (("-o", args.output, False),)
    inputs = [("POSTERIOR", args.posterior), ("SCENARIO_FILE", args.scenario_file)]
    with checked_outputs(*targets, inputs=inputs) as (out,):
        record = trajectory_nll_file(args.posterior, args.scenario_file, q=args.q, exact=args.exact)
        # +inf (likelihood 0) as the string "inf": the record stays strict JSON
        shown = {
            k: (str(v) if isinstance(v, float) and not math.isfinite(v) else v) for k, v in record.items()
        }
        if out is not None:
            from nllbench.store import write_json

            write_json(shown, out)
    print(json.dumps(shown, sort_keys=True))
    return 0


def add_parsers(sub) -> None:
    et = sub.add_parser(
        "evaluate-trajectory",
        help="the exact trajectory NLL of a scenario's truth under a trajectory posterior (nllbench filter"
        " --filter tpmbm or tpmb)",
    )
    et.add_argument("posterior", help="NetCDF trajectory posterior file")
    et.add_argument("scenario_file", help="NetCDF scenario file with the truth")
    et.add_argument(
        "--q", type=integer(1, MAX_Q), default=10, help="Murty budget per hypothesis (default 10)"
    )
    et.add_argument("--exact", action="store_true", help="also the exact sum over every association")
    et.add_argument("-o", "--output", help="JSON record (value, bounds, terms)")
    et.set_defaults(func=_evaluate_trajectory)
    ev = sub.add_parser("evaluate", help="score a posterior file against its scenario file")
    ev.add_argument("posterior", nargs="?", help="NetCDF posterior file")
    ev.add_argument("scenario_file", nargs="?", help="NetCDF scenario file with the truth")
    ev.add_argument("--posterior-dir", help="batch: directory of seed<N>.nc posterior files")
    ev.add_argument("--scenario-dir", help="batch: directory of the matching seed<N>.nc scenario files")
    add_batch_io(
        ev, "output NetCDF metrics file (one run)", "batch: directory for metrics files and summary.csv"
    )
    add_settings_option(ev, "batch")
    ev.add_argument("--summary", help="one-row CSV summary (default: <output>.summary.csv)")
    add_evaluation_options(ev)
    ev.add_argument(
        "--cov-scales",
        type=POSITIVE,
        nargs="+",
        help="batch: a grid of probes, every --q at scale 1 and --probe-q at each scale, computed"
        " together; --output-dir is then a pattern with {q} and {cov}",
    )
    ev.add_argument("--probe-q", type=integer(1, MAX_Q), help="the grid's probe Q (default: the largest --q)")
    ev.add_argument(
        "--allow-mismatch",
        action="store_true",
        help="score a posterior against a scenario other than its own (recorded in the metrics file)",
    )
    ev.set_defaults(func=_evaluate)
