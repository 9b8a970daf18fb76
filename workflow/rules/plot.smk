# Figures: they read the stored tables and compute no measure. Measured times appear only in the
# timing figure (its bytes differ between runs); every other figure is the same bytes on a rerun.

SWEEP_FIGURES = [
    "clutter",
    "decomposition",
    "q",
    "calibration",
    "theorem1",
    "ranks",
    "tgospa",
    "hota",
    "reliability",
    "nees",
    "cardinality",
    "trajectory",
]
# report section of each figure
FIGURE_CATEGORY = {
    "clutter": "2 Filters",
    "decomposition": "2 Filters",
    "q": "2 Filters",
    "ranks": "2 Filters",
    "tgospa": "2 Filters",
    "hota": "2 Filters",
    "trajectory": "2 Filters",
    "calibration": "3 Calibration",
    "reliability": "3 Calibration",
    "nees": "3 Calibration",
    "cardinality": "3 Calibration",
    "theorem1": "4 Theory",
}


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
            category=lambda w: FIGURE_CATEGORY[w.figure],
            labels=lambda w: {"figure": w.figure},
        ),
        pdf=f"{RESULTS}/figures/{{figure}}.pdf",
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
    shell:
        "nllbench plot {wildcards.figure} --tables {params.tables}"
        ' -o {output.png} --provenance "$(cat {input.provenance})" > {log} 2>&1'


rule plot_timing:
    input:
        rules.timing.output,
    output:
        png=report(
            f"{RESULTS}/figures/timing.png",
            caption="../report/timing.rst",
            category="5 Timing",
            labels={"figure": "NLL evaluation time"},
        ),
        pdf=f"{RESULTS}/figures/timing.pdf",
    log:
        f"{RESULTS}/logs/plot/timing.log",
    benchmark:
        f"{RESULTS}/benchmarks/plot/timing.tsv"
    conda:
        "../envs/nllbench.yaml"
    threads: 1
    shell:
        "nllbench plot timing --timing {input} -o {output.png} > {log} 2>&1"
