# The GOSPA table of the reference MATLAB code: mean and RMS GOSPA per filter.


rule gospa_table:
    input:
        f"{RESULTS}/tables/steps.nc",
    output:
        # shown on the leaderboard page (the report does not display CSV items)
        f"{RESULTS}/tables/gospa.csv",
    log:
        f"{RESULTS}/logs/gospa_table.log",
    benchmark:
        f"{RESULTS}/benchmarks/gospa_table.tsv"
    conda:
        "../envs/nllbench.yaml"
    threads: 1
    params:
        tables=lambda w, input: str(Path(input[0]).parent),
    shell:
        "nllbench gospa-table --tables {params.tables} -o {output} > {log} 2>&1"
