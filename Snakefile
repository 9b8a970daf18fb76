# nllbench: the workflow declares, the package computes.
#   snakemake --cores 2                                   (config/config.yaml: the paper)
#   snakemake --cores 2 --configfile config/quick.yaml    (a quick sweep)
#   snakemake --report results/report.html                (after a run)
from pathlib import Path

from snakemake.utils import min_version

from nllbench.pipeline.workflow import (
    Sweep,
    calibration_dirs,
    config_slice,
    evaluate_settings,
    evaluation_outputs,
    evaluation_timing_files,
    filter_settings,
    metric_dirs,
    name_constraint,
    part_seeds,
    score_flags,
    score_settings,
    simulate_flags,
    simulate_provenance,
    tracker_calibration_files,
    tracker_command,
    tracker_tables,
    truth_input,
    trackers_of_kind,
)
from nllbench.pipeline.audit_workflow import audit_targets
from nllbench.pipeline.identity_workflow import identity_targets
from nllbench.pipeline.config import validated_config
from nllbench.pipeline.config_file import (
    check_results,
    mark_results_directory,
    read_config_files,
)

min_version("9.0")


# The configuration files read again, strictly, before anything else: a key given twice, a
# file too large or an alias bomb is refused naming file, line and key (Snakemake's own
# loader keeps the last of two equal keys). config/config.yaml only when no --configfile is
# given: a --configfile must be complete by itself (snakemake would fill its missing keys
# from this file).
CONFIG_FILES = read_config_files(
    workflow.overwrite_configfiles or ["config/config.yaml"]
)
if not workflow.overwrite_configfiles:

    configfile: "config/config.yaml"


# checked against the schema (finite numbers, every required key named when
# missing); optional keys take the schema's defaults
SCHEMA = f"{workflow.basedir}/workflow/schemas/config.schema.yaml"
config.update(validated_config(config, SCHEMA))
# paths taken as written (no '~', no braces) and a results directory that nllbench wrote or
# that is new or empty: Snakemake deletes a file named like an output before its job runs
check_results(config, CONFIG_FILES, workflow.config_settings.config)

RESULTS = config["results"]
SWEEP = Sweep.from_config(config)
SETTING = "{scenario}/clutter{clutter}_pd{pd}"


report: "workflow/report/workflow.rst"


# Compile the numerical kernels once, into numba's on-disk cache, before any job starts: in a
# fresh clone every job that starts before the cache exists would compile them itself (about 25
# CPU s each); with a warm cache this costs about 3 CPU s (`nllbench warmup --help`). Not run by
# a dry run; a failure only means that the jobs compile the kernels themselves. The results
# directory gets its marker first (nllbench.pipeline.config_file.mark_results_directory), so
# that the next run accepts it.
onstart:
    mark_results_directory(RESULTS)
    shell(
        "nllbench warmup || echo 'nllbench warmup failed: each job compiles the kernels it needs'"
    )


wildcard_constraints:
    scenario=r"[a-z0-9_]+",
    clutter=r"[0-9.]+",
    pd=r"[0-9.]+",
    batch=r"\d+",
    filter=r"[a-z0-9]+",
    q=r"\d+",
    cov=r"[0-9.]+",
    number=r"\d+",


include: "workflow/rules/paper.smk"
include: "workflow/rules/simulate.smk"
include: "workflow/rules/filter.smk"
include: "workflow/rules/evaluate.smk"
include: "workflow/rules/trackers.smk"
include: "workflow/rules/aggregate.smk"
include: "workflow/rules/plot.smk"
include: "workflow/rules/reference.smk"
include: "workflow/rules/audit.smk"
include: "workflow/rules/identity.smk"


# The paper's outputs come first (rule priorities in paper.smk), then the Monte Carlo study.
rule all:
    input:
        expand(
            f"{RESULTS}/paper/example{{number}}/example.txt",
            number=config["paper"]["examples"],
        ),
        expand(
            f"{RESULTS}/figures/example{{number}}.png",
            number=config["paper"]["examples"],
        ),
        f"{RESULTS}/paper/theorem1.txt",
        f"{RESULTS}/tables/summary.csv",
        f"{RESULTS}/tables/gospa.csv",
        f"{RESULTS}/tables/paired.csv",
        f"{RESULTS}/report/leaderboard.html",
        expand(f"{RESULTS}/figures/{{figure}}.png", figure=STUDY_FIGURES),
        f"{RESULTS}/figures/timing.png",
        audit_targets(RESULTS, config),
        identity_targets(RESULTS, config),
