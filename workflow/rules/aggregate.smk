# The per-step cube (tables/steps.nc; its long CSV on demand: nllbench tables long), one tidy
# table of every run, summary statistics over seeds, paired comparisons and rankings, the HTML
# leaderboard, and the timing table.


rule aggregate:
    input:
        metric_dirs(RESULTS, SWEEP),
    output:
        steps_nc=f"{RESULTS}/tables/steps.nc",
        runs_csv=f"{RESULTS}/tables/runs.csv",
        runs_nc=f"{RESULTS}/tables/runs.nc",
        summary=f"{RESULTS}/tables/summary.csv",
        paired=f"{RESULTS}/tables/paired.csv",
        ranking=f"{RESULTS}/tables/ranking.csv",
        fill_ins=f"{RESULTS}/tables/fill_ins.csv",
        calibration=f"{RESULTS}/tables/calibration.csv",
        reliability=f"{RESULTS}/tables/reliability.csv",
        provenance=f"{RESULTS}/tables/provenance.json",
    log:
        f"{RESULTS}/logs/aggregate.log",
    benchmark:
        f"{RESULTS}/benchmarks/aggregate.tsv"
    conda:
        "../envs/nllbench.yaml"
    threads: 1
    params:
        out_dir=lambda w, output: str(Path(output.summary).parent),
        provenance=config_slice(config, "sweep", "filter", "evaluation"),
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
    conda:
        "../envs/nllbench.yaml"
    threads: 1
    shell:
        "nllbench timing {input} -o {output} > {log} 2>&1"


rule leaderboard:
    input:
        tables=rules.aggregate.output.summary,
        paired=rules.aggregate.output.paired,
        ranking=rules.aggregate.output.ranking,
        fill_ins=rules.aggregate.output.fill_ins,
        examples=expand(
            f"{RESULTS}/paper/example{{number}}/table.csv",
            number=config["paper"]["examples"],
        ),
        theorem1=f"{RESULTS}/paper/theorem1.txt",
        gospa=f"{RESULTS}/tables/gospa.csv",
    output:
        report(
            f"{RESULTS}/report/leaderboard.html",
            caption="../report/leaderboard.rst",
            category="1 Paper",
            labels={"item": "1 headline and leaderboard"},
        ),
    log:
        f"{RESULTS}/logs/leaderboard.log",
    benchmark:
        f"{RESULTS}/benchmarks/leaderboard.tsv"
    conda:
        "../envs/nllbench.yaml"
    threads: 1
    params:
        tables=lambda w, input: str(Path(input.tables).parent),
        examples=lambda w, input: " ".join(str(Path(t).parent) for t in input.examples),
    shell:
        "nllbench leaderboard --tables {params.tables} --example-dirs {params.examples}"
        " --theorem1 {input.theorem1} -o {output} > {log} 2>&1"
