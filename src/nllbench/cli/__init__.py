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
audit         which measures reward honest uncertainty: score known densities and
              their perturbations with every measure (docs/audit.md).
identity-run  one seed of the identity study: filters on runs with and without a
              coalescence of objects (docs/trajectory_filters.md).
identity      the identity study's tables, figure and page from its seeds' rows.
warmup        compile the numerical kernels once into numba's cache.

Modules
-------
One module per command family, each with its commands and their parsers
(``add_parsers``): :mod:`~nllbench.cli.data` (simulate, filter),
:mod:`~nllbench.cli.evaluate`, :mod:`~nllbench.cli.score`,
:mod:`~nllbench.cli.tables` (aggregate, tables, gospa-table, timing),
:mod:`~nllbench.cli.report` (plot, leaderboard), :mod:`~nllbench.cli.paper`
(example, theorem1), :mod:`~nllbench.cli.audit`, :mod:`~nllbench.cli.identity`
(identity-run, identity), :mod:`~nllbench.cli.warmup`;
:mod:`~nllbench.cli.common` holds what they share
(output checks, progress, batch forms, ``--settings``). This module builds the
top-level parser and runs a command (:func:`main`, the ``nllbench`` script).
"""

from __future__ import annotations

import argparse
import sys

from nllbench.cli import audit, data, evaluate, identity, paper, report, score, tables, warmup
from nllbench.cli.common import settings_defaults

DESCRIPTION = """\
Evaluate multi-object trackers by the negative log-likelihood (NLL) of their
posterior at the ground truth (Pinto et al., IEEE SPL 2021), next to GOSPA,
OSPA, MOTA, MOTP, IDF1, HOTA and trajectory GOSPA. nllbench simulates
scenarios, runs reference filters (PHD, CPHD, PMB, PMBM, MBM), scores their
posteriors or any tracker's tracks table, and turns the metrics into tables,
figures and an HTML leaderboard; 'snakemake' runs the whole study.

Run 'nllbench COMMAND --help' for a command's options and their defaults."""


class HelpFormatter(argparse.HelpFormatter):
    """Help that shows every option's default (when it has one).

    Descriptions are wrapped paragraph by paragraph (paragraphs end at a blank
    line); an indented line (a list item) is kept as written.
    """

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        out = []
        for paragraph in text.split("\n\n"):
            lines = paragraph.splitlines()
            if any(line.startswith("  ") for line in lines):
                out.append("\n".join(indent + line for line in lines))
            else:
                out.append(super()._fill_text(paragraph, width, indent))
        return "\n\n".join(out)

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        if (
            not action.option_strings
            or "%(default)" in text
            or "(default" in text
            or default is None
            or (default is False and not isinstance(action, argparse.BooleanOptionalAction))
            or default is argparse.SUPPRESS
            or isinstance(action, (argparse._HelpAction, argparse._VersionAction))
        ):
            return text
        if isinstance(action, argparse.BooleanOptionalAction):
            shown = action.option_strings[0 if default else 1]  # --x / --no-x
        elif isinstance(default, (list, tuple)):
            shown = " ".join(map(str, default))
        else:
            shown = str(default)
        return f"{text} (default: {shown.replace('%', '%%')})"


def _with_formatter(parser: argparse.ArgumentParser) -> None:
    """Give ``parser`` and every subcommand parser below it :class:`HelpFormatter`."""
    parser.formatter_class = HelpFormatter
    if getattr(parser, "deferred", False):  # its arguments, added later, hold no subcommand
        return
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                _with_formatter(child)


class _VersionAction(argparse._VersionAction):
    """``--version``: the installed package's version, looked up only when asked for."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        from importlib.metadata import version

        self.version = f"nllbench {version('nllbench')}"
        super().__call__(parser, namespace, values, option_string)


def build_parser() -> argparse.ArgumentParser:
    """The ``nllbench`` parser: one builder per command family; ``--version``; defaults in ``--help``."""
    p = argparse.ArgumentParser(prog="nllbench", description=DESCRIPTION)
    p.add_argument("--version", action=_VersionAction)
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for family in (data, evaluate, tables, report, paper, score, audit, identity, warmup):
        family.add_parsers(sub)
    _with_formatter(p)
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


def _refuse_special_files(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Refuse, before any work, a path argument that names a FIFO, device node or socket, or a
    directory that holds one (:func:`nllbench.store.check_regular_input`).

    Reading a FIFO blocks until something writes into it, and an output
    renamed over a device node replaces it; every argument value that names
    such a path is refused with its option (its name in ``--help`` for a
    positional argument), whether the command reads or writes it.
    """
    from nllbench.store import check_regular_input

    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    names = {}
    for a in sub.choices[args.command]._actions:
        names.setdefault(
            a.dest, min(a.option_strings, key=len) if a.option_strings else a.metavar or a.dest.upper()
        )
    for dest, value in vars(args).items():
        for v in value if isinstance(value, list) else [value]:
            if isinstance(v, str) and v:
                check_regular_input(v, names.get(dest, dest))


def main(argv: list[str] | None = None) -> int:
    """Run one command; exit status 2 with a one-line message on bad input (no traceback)."""
    try:
        parser, args = parse(argv)
    except ValueError as exc:
        print(f"nllbench: error: {exc}", file=sys.stderr)
        return 2
    try:
        _refuse_special_files(parser, args)
        return args.func(args)
    except KeyError as exc:
        print(
            f"nllbench {args.command}: error: missing entry {exc.args[0]!r} in an input file", file=sys.stderr
        )
        return 2
    except (ValueError, TypeError, OSError, RuntimeError) as exc:
        print(f"nllbench {args.command}: error: {exc}", file=sys.stderr)
        return 2
