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
    validated_config,
)

min_version("9.0")


# config/config.yaml only when no --configfile is given: a --configfile must be
# complete by itself (snakemake would fill its missing keys from this file).
if not workflow.overwrite_configfiles:

    configfile: "config/config.yaml"


# checked against the schema (finite numbers, every required key named when
# missing); optional keys take the schema's defaults
SCHEMA = f"{workflow.basedir}/workflow/schemas/config.schema.yaml"
config.update(validated_config(config, SCHEMA))

RESULTS = config["results"]
SWEEP = Sweep.from_config(config)
SETTING = "{scenario}/clutter{clutter}_pd{pd}"


report: "workflow/report/workflow.rst"


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
        expand(f"{RESULTS}/figures/{{figure}}.png", figure=SWEEP_FIGURES),
        f"{RESULTS}/figures/timing.png",
