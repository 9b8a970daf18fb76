"""The table commands: ``aggregate`` (metrics files to tables), ``tables long``, ``gospa-table``, ``timing``.

``gospa-table`` is the reference MATLAB code's table of the paper (mean and RMS GOSPA per filter).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from nllbench.cli.common import check_text_file, checked_outputs, files_in, not_a_file, provenance_of


def _aggregate(args: argparse.Namespace) -> int:
    """``aggregate``: metrics files of one run computed with other settings are refused first
    (:mod:`nllbench.pipeline.conflicts`), then the tables are written."""
    from nllbench.pipeline.aggregate import write_tables
    from nllbench.pipeline.conflicts import check_no_conflicts, read_run_records

    inputs = [("METRICS_DIRS", d) for d in args.metrics_dirs]
    with checked_outputs(("--out-dir", args.out_dir, "tables"), inputs=inputs) as (out,):
        check_no_conflicts(read_run_records(args.metrics_dirs))
        counts = write_tables(args.metrics_dirs, out, provenance_of(args), long_csv=args.long_csv)
    n = len(args.metrics_dirs)
    print(
        f"wrote {args.out_dir}: {counts['steps']} per-step values, {counts['runs']} per-run rows, "
        f"{counts['summary']} summary rows from {n} director{'y' if n == 1 else 'ies'}"
    )
    return 0


#: The file of an aggregate directory that ``tables long`` and ``gospa-table`` read.
STEP_CUBE = "steps.nc"


def _tables_long(args: argparse.Namespace) -> int:
    from nllbench.pipeline.aggregate import read_long_table

    inputs = files_in("--tables", args.tables, [STEP_CUBE])
    with checked_outputs(("-o", args.output, False), inputs=inputs) as (out,):
        df = read_long_table(args.tables, args.measure)
        df.to_csv(out, index=False)
    print(f"wrote {args.output}: {len(df)} per-step rows from {Path(args.tables) / STEP_CUBE}")
    return 0


def _gospa_table(args: argparse.Namespace) -> int:
    from nllbench.pipeline.reference import write_gospa_table

    inputs = files_in("--tables", args.tables, [STEP_CUBE])
    with checked_outputs(("-o", args.output, False), inputs=inputs) as (out,):
        n = write_gospa_table(args.tables, out)
    print(f"wrote {args.output}: mean and RMS GOSPA of {n} (scenario, filter, clutter, P_D) settings")
    return 0


#: The columns every timing CSV has (written by simulate, filter, evaluate and score --timing).
TIMING_COLUMNS = ("item", "seconds")


def check_timing_files(files: list[str]) -> None:
    """Each file once, a text CSV with the timing columns; else a ValueError naming the file."""
    import pandas as pd

    seen: set[str] = set()
    for f in files:
        real = os.path.realpath(f)
        if real in seen:
            raise ValueError(f"FILES {f!r}: given twice; expected each timing CSV once")
        seen.add(real)
        expected = f"a timing CSV with columns {', '.join(TIMING_COLUMNS)} (written by --timing)"
        if not Path(f).is_file():
            raise ValueError(f"FILES {f!r}: expected {expected}, got {not_a_file(f)}")
        check_text_file(f, "FILES", expected)
        try:
            columns = list(pd.read_csv(f, nrows=0).columns)
        except (ValueError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
            raise ValueError(f"FILES {f!r}: expected {expected}: {exc}") from None
        missing = [c for c in TIMING_COLUMNS if c not in columns]
        if missing:
            shown = ", ".join(columns[:6]) + (f" and {len(columns) - 6} more" if len(columns) > 6 else "")
            raise ValueError(f"FILES {f!r}: expected {expected}, got columns {shown or 'none'}")


def _timing(args: argparse.Namespace) -> int:
    from nllbench.pipeline.aggregate import collect_timing

    inputs = [("FILES", f) for f in args.files]
    with checked_outputs(("-o", args.output, False), inputs=inputs) as (out,):
        check_timing_files(args.files)
        df = collect_timing(args.files)
        df.to_csv(out, index=False)
    print(f"wrote {args.output}: {len(df)} items, {df['seconds'].sum():.1f} s of compute")
    return 0


def add_parsers(sub) -> None:
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
    tm.add_argument("files", nargs="+", help="timing CSVs written by simulate/filter/evaluate/score --timing")
    tm.add_argument("-o", "--output", required=True, help="output CSV (one row per item, with its job)")
    tm.set_defaults(func=_timing)
