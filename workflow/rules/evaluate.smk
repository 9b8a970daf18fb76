# Evaluation: one job per (setting, filter, batch of seeds). It writes the metrics directory of
# every (Q, covariance scale) pair of the sweep, reading each posterior once and ranking its
# associations once per scale for every Q (nllbench evaluate --cov-scales).


rule evaluate:
    input:
        posteriors=f"{RESULTS}/posteriors/{SETTING}/{{filter}}/batch{{batch}}",
        scenarios=f"{RESULTS}/scenarios/{SETTING}/batch{{batch}}",
    output:
        metrics=[directory(d) for d in evaluation_outputs(RESULTS, SWEEP, SETTING)],
        timing=f"{RESULTS}/timing/evaluate/{SETTING}/{{filter}}/batch{{batch}}.csv",
    log:
        f"{RESULTS}/logs/evaluate/{SETTING}/{{filter}}/batch{{batch}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/evaluate/{SETTING}/{{filter}}/batch{{batch}}.tsv"
    conda:
        "../envs/nllbench.yaml"
    threads: 1
    params:
        pattern=lambda w: f"{RESULTS}/metrics/{SETTING.format(scenario=w.scenario, clutter=w.clutter, pd=w.pd)}/{w.filter}/q{{q}}_cov{{cov}}/batch{w.batch}",
        settings=lambda w: evaluate_settings(config, w.filter, w.batch),
    shell:
        "nllbench evaluate --posterior-dir {input.posteriors} --scenario-dir {input.scenarios}"
        " --output-dir {params.pattern:q} --settings {params.settings:q} --timing {output.timing} > {log} 2>&1"
