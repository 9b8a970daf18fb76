# The propriety audit (docs/audit.md): which measures reward honest uncertainty. Planned only when the
# configuration has an `audit` section (rule all asks for its files); the job hands that section to
# `nllbench audit --config-json`, checked when the workflow is parsed (nllbench.pipeline.audit_workflow).
# Its figure and run.json record measured seconds: like the timing figure, not the same bytes on a rerun.

# The report's section, item order and captions: nllbench.pipeline.report_items (AUDIT_ITEMS); the
# captions are written by `nllbench audit` from the run's numbers, beside each file.
from nllbench.pipeline.audit_workflow import (
    audit_config_json,
    audit_has_filters,
    audit_section,
)
from nllbench.pipeline.report_items import audit_category, audit_labels

# the section as JSON, checked now (errors name the key before any job runs); None: no audit
AUDIT_CONFIG = audit_config_json(config) if audit_section(config) is not None else None

# part 2's figure and tables, only where the audit runs reference filters
AUDIT_FILTER_OUTPUTS = (
    dict(
        filters=report(
            f"{RESULTS}/audit/filters.png",
            caption="../report/audit_filters.rst",
            category=audit_category("filters"),
            labels=audit_labels("filters"),
        ),
        filters_pdf=f"{RESULTS}/audit/filters.pdf",
        filters_caption=f"{RESULTS}/audit/filters.caption.txt",
        filter_rows=f"{RESULTS}/audit/filter_rows.csv",
        preferences=f"{RESULTS}/audit/filter_preferences.csv",
    )
    if audit_has_filters(config)
    else {}
)


rule audit:
    output:
        **AUDIT_FILTER_OUTPUTS,
        figure=report(
            f"{RESULTS}/audit/audit.png",
            caption="../report/figure.rst",
            category=audit_category("audit"),
            labels=audit_labels("audit"),
        ),
        table=report(
            f"{RESULTS}/audit/verdicts.html",
            caption="../report/audit_table.rst",
            category=audit_category("verdicts"),
            labels=audit_labels("verdicts"),
        ),
        pdf=f"{RESULTS}/audit/audit.pdf",
        caption=f"{RESULTS}/audit/audit.caption.txt",
        table_caption=f"{RESULTS}/audit/verdicts.caption.txt",
        rows=f"{RESULTS}/audit/rows.csv",
        verdicts=f"{RESULTS}/audit/verdicts.csv",
        summary=f"{RESULTS}/audit/summary.csv",
        run=f"{RESULTS}/audit/run.json",
    log:
        f"{RESULTS}/logs/audit.log",
    benchmark:
        f"{RESULTS}/benchmarks/audit.tsv"
    conda:
        "../envs/nllbench.yaml"
    threads: 1
    params:
        # the config's audit section as JSON: compared between runs, so a changed section re-runs the audit
        config=AUDIT_CONFIG,
        out_dir=lambda w, output: str(Path(output.summary).parent),
        # read by the report's caption templates; from outputs: not compared between runs
        caption=lambda w, output: CaptionFile(output.caption),
        table_caption=lambda w, output: CaptionFile(output.table_caption),
        filters_caption=lambda w, output: CaptionFile(
            Path(output.summary).parent / "filters.caption.txt"
        ),
    shell:
        "nllbench audit --config-json {params.config:q} --out-dir {params.out_dir} > {log} 2>&1"
