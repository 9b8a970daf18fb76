"""The ``nllbench`` command line.

Subcommands
-----------
simulate      simulate a scenario preset to a NetCDF scenario file.
filter        run a reference filter on a scenario file; write its posteriors.
evaluate      score a posterior file against its scenario: NLL, GOSPA, OSPA,
              MOTA, MOTP, IDF1 and the Theorem 1 check.
score         score any tracker's tracks table (CSV/Parquet) against a truth
              table: the same metrics file as evaluate, with explicit fill-ins.
aggregate     tidy tables and summary statistics from metrics directories.
tables long   the long per-step table (CSV) from the per-step cube steps.nc.
gospa-table   mean and RMS GOSPA per filter from the tidy tables (the
              reference MATLAB code's table).
timing        collect the timing CSVs of batch jobs into one table.
plot          draw one figure from stored tables (PNG and PDF).
leaderboard   a self-contained HTML summary of the tables.
example N     print the paper's Example N (1 or 2): NLL, its decomposition,
              GOSPA, MOTA and MOTP for both trackers.
theorem1      check Theorem 1 on random sets and print both sides.

Modules
-------
One module per command family, each with its commands and their parsers
(``add_parsers``): :mod:`~nllbench.cli.data` (simulate, filter),
:mod:`~nllbench.cli.evaluate`, :mod:`~nllbench.cli.score`,
:mod:`~nllbench.cli.tables` (aggregate, tables, gospa-table, timing),
:mod:`~nllbench.cli.report` (plot, leaderboard), :mod:`~nllbench.cli.paper`
(example, theorem1); :mod:`~nllbench.cli.common` holds what they share
(output checks, progress, batch forms, ``--settings``). This module builds the
top-level parser and runs a command (:func:`main`, the ``nllbench`` script).
"""

from __future__ import annotations

import argparse
import sys

from nllbench.cli import data, evaluate, paper, report, score, tables
from nllbench.cli.common import settings_defaults


def build_parser() -> argparse.ArgumentParser:
    """The ``nllbench`` parser: one builder per command family."""
    p = argparse.ArgumentParser(prog="nllbench", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    for family in (data, evaluate, tables, report, paper, score):
        family.add_parsers(sub)
    return p


def parse(argv: list[str] | None = None) -> tuple[argparse.ArgumentParser, argparse.Namespace]:
    """The parsed command line; a --settings object gives option values that explicit options override."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "settings", None):
        defaults = settings_defaults(parser, args)
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        sub.choices[args.command].set_defaults(**defaults)
        args = parser.parse_args(argv)
    return parser, args


def main(argv: list[str] | None = None) -> int:
    """Run one command; exit status 2 with a one-line message on bad input (no traceback)."""
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
