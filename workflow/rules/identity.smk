# The identity study (docs/trajectory_filters.md): what identity uncertainty is worth. Per seed, the
# williams15 objects once meeting and once kept apart, and every filter of the configuration's
# `identity` section on both runs (per-frame filters: labelled-output trajectory NLL; trajectory filters:
# exact trajectory-density NLL; T-GOSPA and IDF1 of all). Planned only when the configuration has an
# `identity` section (rule all asks for its files); the section is checked when the workflow is parsed
# (nllbench.pipeline.identity_workflow). Its rows record each filter's measured seconds: like the timing
# figure, rows.csv and summary.csv are not the same bytes on a rerun (the NLL, T-GOSPA and IDF1 are).
# Each seed's job also writes the trajectory filters' final posteriors and the runs they scored
# (identity_runs/posteriors/seed<N>/<condition>_<name>.nc, identity_runs/scenarios/seed<N>/<condition>.nc):
# its trajectory rows are computed from those files, as `nllbench evaluate-trajectory` reads them.

# The report's section, item order and captions: nllbench.pipeline.report_items (IDENTITY_ITEMS); the
# captions are written by `nllbench identity` from the run's numbers, beside each file.
from nllbench.pipeline.identity_workflow import (
    identity_config_json,
    identity_run_files,
    identity_run_options,
    identity_section,
    identity_seeds,
)
from nllbench.pipeline.report_items import identity_category, identity_labels

# the section as JSON, checked now (errors name the key before any job runs); None: no study
IDENTITY_CONFIG = (
    identity_config_json(config) if identity_section(config) is not None else None
)
# the trajectory filters' posteriors and the runs they scored, per seed (none without trajectory filters)
IDENTITY_RUN_FILES = identity_run_files(RESULTS, config)


rule identity_run:
    output:
        rows=f"{RESULTS}/identity_runs/seed{{seed}}.csv",
        posteriors=IDENTITY_RUN_FILES["posteriors"],
        scenarios=IDENTITY_RUN_FILES["scenarios"],
    log:
        f"{RESULTS}/logs/identity/seed{{seed}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/identity/seed{{seed}}.tsv"
    wildcard_constraints:
        seed=r"\d+",
    conda:
        "../envs/nllbench.yaml"
    threads: 1
    params:
        # compared between runs: a changed section re-runs the seeds
        config=IDENTITY_CONFIG,
        # --posterior-dir, --scenario-dir: the directories of the files above; from outputs: not compared
        files=lambda w, output: identity_run_options(output),
    shell:
        "nllbench identity-run --config-json {params.config:q} --seed {wildcards.seed}"
        " --rows {output.rows} {params.files} > {log} 2>&1"


rule identity:
    input:
        rows=expand(
            f"{RESULTS}/identity_runs/seed{{seed}}.csv", seed=identity_seeds(config)
        ),
    output:
        figure=report(
            f"{RESULTS}/identity/identity.png",
            caption="../report/figure.rst",
            category=identity_category("identity"),
            labels=identity_labels("identity"),
        ),
        table=report(
            f"{RESULTS}/identity/table.html",
            caption="../report/audit_table.rst",
            category=identity_category("identity_table"),
            labels=identity_labels("identity_table"),
        ),
        pdf=f"{RESULTS}/identity/identity.pdf",
        caption=f"{RESULTS}/identity/identity.caption.txt",
        table_caption=f"{RESULTS}/identity/table.caption.txt",
        rows=f"{RESULTS}/identity/rows.csv",
        summary=f"{RESULTS}/identity/summary.csv",
        extra=f"{RESULTS}/identity/extra_cost.csv",
    log:
        f"{RESULTS}/logs/identity/identity.log",
    benchmark:
        f"{RESULTS}/benchmarks/identity/identity.tsv"
    conda:
        "../envs/nllbench.yaml"
    threads: 1
    params:
        config=IDENTITY_CONFIG,
        out_dir=lambda w, output: str(Path(output.summary).parent),
        # read by the report's caption templates; from outputs: not compared between runs
        caption=lambda w, output: CaptionFile(output.caption),
        table_caption=lambda w, output: CaptionFile(output.table_caption),
    shell:
        "nllbench identity --config-json {params.config:q} --rows {input.rows}"
        " --out-dir {params.out_dir} > {log} 2>&1"
