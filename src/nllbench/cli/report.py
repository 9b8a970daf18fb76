"""The report commands: ``plot`` (one figure from stored tables) and ``leaderboard`` (the HTML summary)."""

from __future__ import annotations

import argparse
from pathlib import Path

from nllbench.cli.common import checked_outputs, provenance_of
from nllbench.options import integer

#: The figures ``nllbench plot`` draws (``example`` once per example directory).
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
    "trajectory",
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
        elif args.figure == "trajectory":
            fig = plots.fig_trajectory(summary, q)
        else:
            fig = plots.fig_rank_agreement(summary, q)
    written = plots.save(fig, args.output, provenance_of(args))
    print("wrote " + ", ".join(str(p) for p in written))
    return 0


def _leaderboard(args: argparse.Namespace) -> int:
    from nllbench.pipeline.report import write_leaderboard

    with checked_outputs(("-o", args.output, False)) as (out,):
        write_leaderboard(args.tables, args.example_dirs or [], out, args.theorem1)
    print(f"wrote {args.output}")
    return 0


def add_parsers(sub) -> None:
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
