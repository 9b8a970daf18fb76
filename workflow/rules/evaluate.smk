# Evaluation: one job per (setting, filter, Q, covariance scale, batch of seeds).


rule evaluate:
    input:
        posteriors=f"{RESULTS}/posteriors/{SETTING}/{{filter}}/batch{{batch}}",
        scenarios=f"{RESULTS}/scenarios/{SETTING}/batch{{batch}}",
    output:
        metrics=directory(
            f"{RESULTS}/metrics/{SETTING}/{{filter}}/q{{q}}_cov{{cov}}/batch{{batch}}"
        ),
        timing=f"{RESULTS}/timing/evaluate/{SETTING}/{{filter}}/q{{q}}_cov{{cov}}/batch{{batch}}.csv",
    log:
        f"{RESULTS}/logs/evaluate/{SETTING}/{{filter}}/q{{q}}_cov{{cov}}/batch{{batch}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/evaluate/{SETTING}/{{filter}}/q{{q}}_cov{{cov}}/batch{{batch}}.tsv"
    conda:
        "../envs/nllbench.yaml"
    threads: 1
    params:
        flags=lambda w: evaluate_flags(config, w.q, w.cov, w.filter),
        provenance=lambda w: config_slice(
            config,
            *EVALUATION_KEYS,
            filter=w.filter,
            estimator=estimator_for(config, w.filter),
            q=int(w.q),
            cov_scale=float(w.cov),
            batch=int(w.batch),
        ),
    shell:
        "nllbench evaluate --posterior-dir {input.posteriors} --scenario-dir {input.scenarios}"
        " --output-dir {output.metrics} --q {wildcards.q} --cov-scale {wildcards.cov} {params.flags}"
        " --timing {output.timing} --provenance {params.provenance:q} > {log} 2>&1"
