# Reference filters: one job per (setting, filter, batch of seeds).


rule filter:
    input:
        f"{RESULTS}/scenarios/{SETTING}/batch{{batch}}",
    output:
        posteriors=directory(
            f"{RESULTS}/posteriors/{SETTING}/{{filter}}/batch{{batch}}"
        ),
        timing=f"{RESULTS}/timing/filter/{SETTING}/{{filter}}/batch{{batch}}.csv",
    log:
        f"{RESULTS}/logs/filter/{SETTING}/{{filter}}/batch{{batch}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/filter/{SETTING}/{{filter}}/batch{{batch}}.tsv"
    conda:
        "../envs/nllbench.yaml"
    threads: 1
    params:
        flags=lambda w: filter_flags(config, w.filter),
        provenance=lambda w: config_slice(
            config,
            "filter",
            filter=w.filter,
            estimator=estimator_for(config, w.filter),
            seeds=SWEEP.batch_seeds(int(w.batch)),
        ),
    shell:
        "nllbench filter -q --filter {wildcards.filter} --input-dir {input} --output-dir {output.posteriors}"
        " {params.flags} --timing {output.timing} --provenance {params.provenance:q} > {log} 2>&1"
