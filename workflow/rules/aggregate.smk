# One tidy table of every run, summary statistics over seeds, and the timing table.


rule aggregate:
    input:
        metric_dirs(RESULTS, SWEEP),
    output:
        steps_csv=f"{RESULTS}/tables/steps.csv",
        steps_nc=f"{RESULTS}/tables/steps.nc",
        runs_csv=f"{RESULTS}/tables/runs.csv",
        runs_nc=f"{RESULTS}/tables/runs.nc",
        summary=report(f"{RESULTS}/tables/summary.csv", caption="../report/summary.rst", category="Tables"),
        provenance=f"{RESULTS}/tables/provenance.json",
    log:
        f"{RESULTS}/logs/aggregate.log",
    benchmark:
        f"{RESULTS}/benchmarks/aggregate.tsv"
    params:
        out_dir=lambda w, output: str(Path(output.summary).parent),
        provenance=config_slice(config, "sweep", "filter", "evaluation"),
    threads: 1
    conda:
        "../envs/nllbench.yaml"
    resources:
        mem_mb=4000,
    shell:
        "nllbench aggregate {input} --out-dir {params.out_dir} --provenance {params.provenance:q} > {log} 2>&1"


rule timing:
    input:
        evaluation_timing_files(RESULTS, SWEEP),
    output:
        f"{RESULTS}/timing/evaluate.csv",
    log:
        f"{RESULTS}/logs/timing.log",
    benchmark:
        f"{RESULTS}/benchmarks/timing.tsv"
    threads: 1
    conda:
        "../envs/nllbench.yaml"
    shell:
        "nllbench timing {input} -o {output} > {log} 2>&1"
