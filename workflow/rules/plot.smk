# Figures: they read the stored tables and compute no measure. Measured times appear only in the
# timing figure (its bytes differ between runs); every other figure is the same bytes on a rerun.

# The report's sections, item order and captions: nllbench.pipeline.report_items. Each figure's caption
# is written by `nllbench plot` from the run's numbers, beside the figure (<figure>.caption.txt).
from nllbench.pipeline.report_items import (
    SWEEP_FIGURES,
    TIMING_ITEM,
    CaptionFile,
    figure_category,
    figure_labels,
    sweep_figures,
)

# the figures this study draws (proper_scores only where the evaluation computes them: docs/scores.md)
STUDY_FIGURES = sweep_figures(config["evaluation"])


rule plot:
    input:
        summary=f"{RESULTS}/tables/summary.csv",
        steps=f"{RESULTS}/tables/steps.nc",
        calibration=f"{RESULTS}/tables/calibration.csv",
        reliability=f"{RESULTS}/tables/reliability.csv",
        # the tables' provenance (configuration slice, software versions) goes into the figure's
        # metadata; read from the file, not passed as a parameter, so the report shows no JSON blob
        provenance=f"{RESULTS}/tables/provenance.json",
    output:
        png=report(
            f"{RESULTS}/figures/{{figure}}.png",
            caption="../report/figure.rst",
            category=lambda w: figure_category(w.figure),
            labels=lambda w: figure_labels(w.figure),
        ),
        pdf=f"{RESULTS}/figures/{{figure}}.pdf",
        caption=f"{RESULTS}/figures/{{figure}}.caption.txt",
    log:
        f"{RESULTS}/logs/plot/{{figure}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/plot/{{figure}}.tsv"
    wildcard_constraints:
        figure="|".join(SWEEP_FIGURES),
    conda:
        "../envs/nllbench.yaml"
    threads: 1
    params:
        tables=lambda w, input: str(Path(input.summary).parent),
        # read by the report's caption template (figure.rst); from an output: not compared between runs
        caption=lambda w, output: CaptionFile(output.caption),
    shell:
        "nllbench plot {wildcards.figure} --tables {params.tables}"
        ' -o {output.png} --provenance "$(cat {input.provenance})" > {log} 2>&1'


rule plot_timing:
    input:
        rules.timing.output,
    output:
        png=report(
            f"{RESULTS}/figures/timing.png",
            caption="../report/figure.rst",
            category=TIMING_ITEM.category,
            labels=figure_labels("timing"),
        ),
        pdf=f"{RESULTS}/figures/timing.pdf",
        caption=f"{RESULTS}/figures/timing.caption.txt",
    log:
        f"{RESULTS}/logs/plot/timing.log",
    benchmark:
        f"{RESULTS}/benchmarks/plot/timing.tsv"
    conda:
        "../envs/nllbench.yaml"
    threads: 1
    params:
        caption=lambda w, output: CaptionFile(output.caption),
    shell:
        "nllbench plot timing --timing {input} -o {output.png} > {log} 2>&1"
