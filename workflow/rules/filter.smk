# Reference filters: one job per (setting, filter, batch of seeds).


rule filter:
    input:
        f"{RESULTS}/scenarios/{SETTING}/batch{{batch}}",
    output:
        # temp(): removed once every evaluation of the batch is done (config keep_posteriors)
        posteriors=(
            directory(f"{RESULTS}/posteriors/{SETTING}/{{filter}}/batch{{batch}}")
            if config["keep_posteriors"]
            else temp(
                directory(f"{RESULTS}/posteriors/{SETTING}/{{filter}}/batch{{batch}}")
            )
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
        settings=lambda w: filter_settings(
            config, w.filter, SWEEP.batch_seeds(int(w.batch))
        ),
    shell:
        "nllbench filter -q --input-dir {input} --output-dir {output.posteriors}"
        " --settings {params.settings:q} --timing {output.timing} > {log} 2>&1"
