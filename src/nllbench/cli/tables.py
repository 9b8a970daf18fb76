"""The table commands: ``aggregate`` (metrics files to tables), ``tables long``, ``gospa-table``, ``timing``.

``gospa-table`` is the reference MATLAB code's table of the paper (mean and RMS GOSPA per filter).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from nllbench.cli.common import checked_outputs, provenance_of


def _aggregate(args: argparse.Namespace) -> int:
    from nllbench.pipeline.aggregate import write_tables

    with checked_outputs(("--out-dir", args.out_dir, True)) as (out,):
        counts = write_tables(args.metrics_dirs, out, provenance_of(args), long_csv=args.long_csv)
    print(
        f"wrote {args.out_dir}: {counts['steps']} per-step values, {counts['runs']} per-run rows, "
        f"{counts['summary']} summary rows from {len(args.metrics_dirs)} directories"
    )
    return 0


def _tables_long(args: argparse.Namespace) -> int:
    from nllbench.pipeline.aggregate import read_long_table

    df = read_long_table(args.tables, args.measure)
    with checked_outputs(("-o", args.output, False)) as (out,):
        df.to_csv(out, index=False)
    print(f"wrote {args.output}: {len(df)} per-step rows from {Path(args.tables) / 'steps.nc'}")
    return 0


def _gospa_table(args: argparse.Namespace) -> int:
    from nllbench.pipeline.reference import write_gospa_table

    n = write_gospa_table(args.tables, args.output)
    print(f"wrote {args.output}: mean and RMS GOSPA of {n} (scenario, filter, clutter, P_D) settings")
    return 0


def _timing(args: argparse.Namespace) -> int:
    from nllbench.pipeline.aggregate import collect_timing

    with checked_outputs(("-o", args.output, False)) as (out,):
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
    tm.add_argument("files", nargs="+")
    tm.add_argument("-o", "--output", required=True)
    tm.set_defaults(func=_timing)
