"""``nllbench audit``: which measures reward honest uncertainty (``docs/audit.md``)."""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

from nllbench.cli.common import check_text_file, checked_outputs, json_option, require_files

#: The files ``nllbench audit`` writes into its output directory.
OUTPUT_FILES = (
    "rows.csv",
    "verdicts.csv",
    "summary.csv",
    "audit.png",
    "audit.pdf",
    "audit.caption.txt",
    "verdicts.html",
    "verdicts.caption.txt",
    "run.json",
    "filter_rows.csv",
    "filter_preferences.csv",
    "filters.png",
    "filters.pdf",
    "filters.caption.txt",
)


def _audit(args: argparse.Namespace) -> int:
    import yaml

    from nllbench.pipeline.audit import (
        filter_rows_table,
        plan_from_config,
        preferences_table,
        rows_table,
        run_plan,
        summary_table,
        verdicts_table,
    )
    from nllbench.pipeline.audit_page import verdicts_page
    from nllbench.pipeline.plots.audit import fig_audit, fig_filter_preferences
    from nllbench.pipeline.plots.style import save

    if args.config is not None:
        require_files([("--config", args.config)])
        check_text_file(args.config, "--config", "an audit configuration (YAML)")
        try:
            config = yaml.safe_load(Path(args.config).read_text(encoding="utf-8"))
        except yaml.YAMLError as exc:
            raise ValueError(f"--config {args.config!r}: expected YAML, got a parse error ({exc})") from None
        inputs = [("--config", args.config)]
    else:
        config = json_option(args.config_json, "--config-json")
        inputs = []
    plan = plan_from_config(config)
    with checked_outputs(("--out-dir", args.out_dir, "audit results"), inputs=inputs) as (out,):
        start = time.perf_counter()

        def progress(text: str) -> None:
            if not args.quiet:
                print(f"[audit {time.perf_counter() - start:7.1f} s] {text}", file=sys.stderr, flush=True)

        run = run_plan(plan, progress)
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        rows_table(run).to_csv(out / "rows.csv", index=False, float_format="%.10g")
        verdicts = verdicts_table(run)
        verdicts.to_csv(out / "verdicts.csv", index=False, float_format="%.10g")
        summary = summary_table(run)
        summary.to_csv(out / "summary.csv", index=False)
        record = {
            "config": str(args.config) if args.config is not None else "--config-json",
            "settings": {k: list(v) if isinstance(v, tuple) else v for k, v in vars(plan.settings).items()},
            "seconds": run.seconds,
            "seconds_total": time.perf_counter() - start,
            "machine": {
                "platform": platform.platform(),
                "processor": platform.processor(),
                "cpus": os.cpu_count(),
            },
        }
        if run.rows:
            save(fig_audit(verdicts, summary, plan.settings.z), out / "audit.png", {"audit": record})
        prefs = preferences_table(run, plan.settings.z) if run.filter_rows else None
        if run.filter_rows:
            filter_rows_table(run).to_csv(out / "filter_rows.csv", index=False, float_format="%.10g")
            prefs.to_csv(out / "filter_preferences.csv", index=False, float_format="%.10g")
            save(fig_filter_preferences(prefs, plan.settings.z), out / "filters.png", {"audit": record})
        if run.rows:
            page, caption = verdicts_page(verdicts, summary, prefs, record)
            (out / "verdicts.html").write_text(page, encoding="utf-8")
            (out / "verdicts.caption.txt").write_text(caption, encoding="utf-8")
        (out / "run.json").write_text(json.dumps(record, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    for _, row in summary.iterrows():
        print(f"{row['measure']:>16}  {row['verdict']}")
    return 0


def add_parsers(sub) -> None:
    p = sub.add_parser(
        "audit",
        help="which measures reward honest uncertainty: the propriety audit",
        description="Draw truths from known densities, score each density and its perturbations (covariance"
        " scaled, existence tempered, means shifted, a Bernoulli added or dropped) with every measure on the"
        " same truths, and write the expected scores with paired standard errors (rows.csv), the verdict of"
        " each measure per density and probe (verdicts.csv), the overall verdicts (summary.csv), a figure"
        " (audit.png / .pdf), the verdict table as a page (verdicts.html) and the run's settings and"
        " timings (run.json) into --out-dir; with reference filters configured, also the probe value each"
        " measure prefers on each filter's run (filter_rows.csv, filter_preferences.csv, filters.png /"
        " .pdf).",
    )
    source = p.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--config", help="the audit configuration, a YAML file (e.g. config/audit/audit.yaml)"
    )
    source.add_argument(
        "--config-json",
        help="the audit configuration as a JSON object (the workflow passes its config's audit section)",
    )
    p.add_argument("--out-dir", required=True, help="directory that receives the audit's files")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    p.set_defaults(func=_audit)
