"""``nllbench identity-run`` and ``nllbench identity``: what identity uncertainty is worth.

The identity study (``docs/trajectory_filters.md``): per seed, the williams15 objects once meeting and
once kept apart, the configured filters on both runs; then the tables, figure and page of all seeds.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from nllbench.cli.common import check_text_file, checked_outputs, json_option, require_files
from nllbench.options import MAX_SEED, integer

#: The files ``nllbench identity`` writes into its output directory.
OUTPUT_FILES = (
    "rows.csv",
    "summary.csv",
    "extra_cost.csv",
    "identity.png",
    "identity.pdf",
    "identity.caption.txt",
    "table.html",
    "table.caption.txt",
)


def _plan(args):
    from nllbench.pipeline.identity_study import plan_from_config

    return plan_from_config(json_option(args.config_json, "--config-json"))


#: What the directories of ``nllbench identity-run`` hold (their marker: not replaced by another kind).
POSTERIOR_DIR_KIND = "identity study trajectory posteriors"
SCENARIO_DIR_KIND = "identity study scenarios"


def _identity_run(args: argparse.Namespace) -> int:
    from nllbench.pipeline.identity_study import seed_rows

    plan = _plan(args)
    if (args.posterior_dir is None) != (args.scenario_dir is None):
        given = "--posterior-dir" if args.posterior_dir is not None else "--scenario-dir"
        raise ValueError(
            f"{given}: expected --posterior-dir and --scenario-dir together (a posterior is evaluated"
            " against its scenario), got only one"
        )
    start = time.perf_counter()

    def progress(text: str) -> None:
        if not args.quiet:
            print(f"[identity {time.perf_counter() - start:7.1f} s] {text}", file=sys.stderr, flush=True)

    targets = (
        ("--rows", args.rows, False),
        ("--posterior-dir", args.posterior_dir, POSTERIOR_DIR_KIND),
        ("--scenario-dir", args.scenario_dir, SCENARIO_DIR_KIND),
    )
    with checked_outputs(*targets) as (out, posterior_dir, scenario_dir):
        rows = seed_rows(plan, args.seed, progress, posterior_dir, scenario_dir)
        rows.to_csv(out, index=False, float_format="%.17g")  # every digit: re-read exactly
    return 0


def _identity(args: argparse.Namespace) -> int:
    import pandas as pd

    from nllbench.pipeline.identity_page import identity_page, identity_table_caption
    from nllbench.pipeline.identity_study import ROW_COLUMNS, extra_cost_table, summary_table
    from nllbench.pipeline.plots.identity import fig_identity, identity_caption
    from nllbench.pipeline.plots.style import captioned, save

    plan = _plan(args)
    require_files([("--rows", p) for p in args.rows])
    for p in args.rows:
        check_text_file(p, "--rows", "the rows of 'nllbench identity-run' (CSV)")
    targets = ("--out-dir", args.out_dir, "identity study results")
    with checked_outputs(targets, inputs=[("--rows", p) for p in args.rows]) as (out,):
        # the output is checked first: a refused --out-dir costs no reading
        parts = []
        for p in args.rows:
            t = pd.read_csv(p)
            if list(t.columns) != list(ROW_COLUMNS):
                raise ValueError(f"--rows {p!r}: expected columns {list(ROW_COLUMNS)}, got {list(t.columns)}")
            parts.append(t)
        rows = pd.concat(parts, ignore_index=True).sort_values("seed", kind="stable").reset_index(drop=True)
        names = [f.name for f in plan.filters]
        missing = sorted(set(names) - set(rows["filter"]))
        if missing:
            raise ValueError(f"--rows: expected rows of every configured filter, missing {missing}")
        seeds = int(rows["seed"].nunique())
        summary = summary_table(rows, names)
        extra = extra_cost_table(rows, names)
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        rows.to_csv(out / "rows.csv", index=False, float_format="%.17g")
        summary.to_csv(out / "summary.csv", index=False, float_format="%.10g")
        extra.to_csv(out / "extra_cost.csv", index=False, float_format="%.10g")
        caption = identity_caption(extra, summary, names, seeds, plan.clutter_rate, plan.steps, plan.q)
        record = {"identity": {"seeds": seeds, "filters": names, "q": plan.q}}
        save(captioned(fig_identity(rows, summary, names), caption), out / "identity.png", record)
        table_caption = identity_table_caption(seeds, plan.clutter_rate, plan.steps, plan.q)
        (out / "table.html").write_text(identity_page(summary, extra, names, table_caption), encoding="utf-8")
        (out / "table.caption.txt").write_text(table_caption, encoding="utf-8")
    print(extra.to_string(index=False))
    return 0


def add_parsers(sub) -> None:
    p = sub.add_parser(
        "identity-run",
        help="one seed of the identity study: the filters on runs with and without a coalescence",
        description="Simulate williams15 with the seed twice, once with its four objects meeting and"
        " once kept apart, run every configured filter on both and write one row per (condition,"
        " filter, measure) to --rows (CSV): the labelled-output trajectory NLL of per-frame filters,"
        " the exact trajectory-density NLL of trajectory filters, T-GOSPA and IDF1 of the estimates,"
        " and the filter's seconds. With --posterior-dir and --scenario-dir, each trajectory filter's"
        " final posterior is written as <condition>_<name>.nc and each run as <condition>.nc, and the"
        " trajectory filters' rows are computed from the files read back (nllbench evaluate-trajectory"
        " POSTERIOR SCENARIO --q <q> gives the same NLL).",
    )
    p.add_argument(
        "--config-json", required=True, help="the study's settings as JSON (the workflow's identity section)"
    )
    p.add_argument("--seed", required=True, type=integer(0, MAX_SEED), help="the seed of both runs")
    p.add_argument("--rows", required=True, help="the CSV file to write")
    p.add_argument(
        "--posterior-dir",
        help="directory that receives each trajectory filter's final posterior (<condition>_<name>.nc)",
    )
    p.add_argument(
        "--scenario-dir", help="directory that receives each condition's run (<condition>.nc, scenario file)"
    )
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    p.set_defaults(func=_identity_run)

    p = sub.add_parser(
        "identity",
        help="the identity study's tables, figure and page from the rows of its seeds",
        description="Read the rows of 'nllbench identity-run' (one file per seed) and write into"
        " --out-dir all rows (rows.csv), medians per filter, measure and condition (summary.csv),"
        " the paired extra cost of a meeting (extra_cost.csv), the figure (identity.png / .pdf,"
        " with its caption) and the table as a page (table.html, table.caption.txt).",
    )
    p.add_argument(
        "--config-json", required=True, help="the study's settings as JSON (the workflow's identity section)"
    )
    p.add_argument("--rows", required=True, nargs="+", help="the rows of each seed (CSV)")
    p.add_argument("--out-dir", required=True, help="directory that receives the study's files")
    p.set_defaults(func=_identity)
