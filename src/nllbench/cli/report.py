"""The report commands: ``plot`` (one figure from stored tables) and ``leaderboard`` (the HTML summary)."""

from __future__ import annotations

import argparse
from pathlib import Path

from nllbench.cli.common import (
    check_text_file,
    checked_outputs,
    files_in,
    names_a_file,
    provenance_of,
    require_files,
)
from nllbench.options import MAX_Q, integer

#: The figures ``nllbench plot`` draws, with what each shows (``example`` once per example directory).
FIGURES = {
    "example": "the paper's Fig. 1 or 2 from --example-dir (Bernoullis, PPP region, truth)",
    "clutter": "NLL and GOSPA per filter against the clutter rate",
    "decomposition": "the NLL's terms per filter and clutter rate",
    "q": "NLL against the Murty budget Q, per filter, with the exact NLL",
    "calibration": "NLL and GOSPA against the covariance scale (the calibration probe)",
    "theorem1": "both sides of Theorem 1 at every evaluated step",
    "ranks": "rank agreement (Kendall tau) between the measures",
    "timing": "NLL evaluation time per run, from --timing",
    "tgospa": "the trajectory-GOSPA decomposition per filter and clutter rate",
    "hota": "HOTA against NLL, a point per filter and setting",
    "reliability": "reliability diagrams of the existence probabilities r",
    "nees": "state consistency (ANEES and its chi-square interval)",
    "cardinality": "cardinality calibration (interval coverage and log score)",
    "trajectory": "trajectory NLL beside the per-frame NLL, IDF1 and HOTA, per labelled filter",
    "proper_scores": "energy, intensity and cardinality scores beside the NLL and GOSPA against clutter",
}

#: The files of a --tables directory each figure reads (example and timing read no tables).
FIGURE_TABLES = {
    "example": (),
    "timing": (),
    "theorem1": ("summary.csv", "steps.nc"),
    "reliability": ("summary.csv", "reliability.csv", "calibration.csv"),
    "nees": ("summary.csv", "calibration.csv"),
    "cardinality": ("summary.csv", "calibration.csv"),
}
#: The files of an example directory (``nllbench example N --out-dir``) the figure and the page read.
EXAMPLE_FILES = ("truth.csv", "table.csv", "M1.nc", "M2.nc")
#: The files of a --tables directory the leaderboard needs.
LEADERBOARD_TABLES = ("summary.csv", "paired.csv", "ranking.csv", "provenance.json")
#: The files of a --tables directory the leaderboard reads when they exist.
LEADERBOARD_OPTIONAL = ("fill_ins.csv", "gospa.csv")


def _plot_inputs(args: argparse.Namespace) -> list[tuple[str, Path]]:
    """(option, path) of the files ``plot`` reads for its figure."""
    tables = FIGURE_TABLES.get(args.figure, ("summary.csv",))
    example = EXAMPLE_FILES if args.figure == "example" else ()
    timing = [("--timing", Path(args.timing))] if args.timing and args.figure == "timing" else []
    return (
        files_in("--tables", args.tables, tables)
        + files_in("--example-dir", args.example_dir, example)
        + timing
    )


def _checked_plot(args: argparse.Namespace) -> int:
    """``plot``, with its outputs (``-o`` as .png and .pdf) checked before anything is drawn.

    The figure is written by :func:`nllbench.pipeline.plots.save` (atomically, both files together).
    """
    from nllbench.store import Output, check_not_an_input, check_output, remove_created_dirs

    given = Path(names_a_file(args.output, "-o"))
    paths = dict.fromkeys([given, given.with_suffix(".png"), given.with_suffix(".pdf")])  # errors: -o first
    primary = given if given.suffix in (".png", ".pdf") else given.with_suffix(".png")
    outputs = [Output(p, "-o", beside=None if p in (given, primary) else primary) for p in paths]
    inputs = _plot_inputs(args)
    check_not_an_input(outputs, inputs)
    created = []
    try:
        for o in outputs:
            created += check_output(o.path, "-o", beside=o.beside)
        require_files(inputs)
        if args.figure == "timing" and args.timing:
            check_text_file(args.timing, "--timing", "a timing table from 'nllbench timing' (CSV)")
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
        elif args.figure == "proper_scores":
            fig = plots.fig_proper_scores(summary, q)
        elif args.figure == "trajectory":
            fig = plots.fig_trajectory(summary, q)
        else:
            fig = plots.fig_rank_agreement(summary, q)
    written = plots.save(fig, args.output, provenance_of(args))
    print("wrote " + ", ".join(str(p) for p in written))
    return 0


def _leaderboard(args: argparse.Namespace) -> int:
    from nllbench.pipeline.report import write_leaderboard

    needed = files_in("--tables", args.tables, LEADERBOARD_TABLES) + [("--theorem1", args.theorem1)]
    for d in args.example_dirs or []:
        needed += files_in("--example-dirs", d, ["table.csv"])
    needed = [(option, path) for option, path in needed if path is not None]
    inputs = needed + files_in("--tables", args.tables, LEADERBOARD_OPTIONAL)
    with checked_outputs(("-o", args.output, False), inputs=inputs) as (out,):
        require_files(needed)
        write_leaderboard(args.tables, args.example_dirs or [], out, args.theorem1)
    print(f"wrote {args.output}")
    return 0


def add_parsers(sub) -> None:
    pl = sub.add_parser(
        "plot",
        help="draw one figure from stored tables (PNG and PDF)",
        description="Draw one figure as PNG and PDF (-o FIGURE.png; the .pdf beside it) from the tables"
        " of 'nllbench aggregate' (--tables), a timing table (--timing) or an example directory"
        " (--example-dir).\n\nFigures:\n"
        + "\n".join(f"  {name:<14}{what}" for name, what in FIGURES.items()),
    )
    pl.add_argument("figure", choices=list(FIGURES), metavar="FIGURE", help="one of the figures listed above")
    pl.add_argument("--tables", help="directory written by 'nllbench aggregate'")
    pl.add_argument("--timing", help="timing table from 'nllbench timing' (figure timing)")
    pl.add_argument(
        "--example-dir", help="directory written by 'nllbench example N --out-dir' (figure example)"
    )
    pl.add_argument("--q", type=integer(1, MAX_Q), help="the Murty budget to show (default: the largest)")
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
