# Figures: they read the stored tables and compute no measure.

SWEEP_FIGURES = ["clutter", "decomposition", "q", "calibration", "theorem1", "ranks"]


rule plot:
    input:
        summary=f"{RESULTS}/tables/summary.csv",
        steps=f"{RESULTS}/tables/steps.csv",
        timing=f"{RESULTS}/timing/evaluate.csv",
    output:
        png=report(
            f"{RESULTS}/figures/{{figure}}.png",
            caption="../report/figure.rst",
            category="Figures",
        ),
        pdf=f"{RESULTS}/figures/{{figure}}.pdf",
    log:
        f"{RESULTS}/logs/plot/{{figure}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/plot/{{figure}}.tsv"
    wildcard_constraints:
        figure="|".join(SWEEP_FIGURES),
    params:
        tables=lambda w, input: str(Path(input.summary).parent),
        provenance=lambda w: config_slice(config, "sweep", "evaluation", figure=w.figure),
    threads: 1
    conda:
        "../envs/nllbench.yaml"
    shell:
        "nllbench plot {wildcards.figure} --tables {params.tables} --timing {input.timing}"
        " -o {output.png} --provenance {params.provenance:q} > {log} 2>&1"
