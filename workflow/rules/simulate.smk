# Truth and measurements: one job per (scenario, clutter, P_D, batch of seeds).


rule simulate:
    input:
        truth=truth_input(config),
    output:
        scenarios=directory(f"{RESULTS}/scenarios/{SETTING}/batch{{batch}}"),
        timing=f"{RESULTS}/timing/simulate/{SETTING}/batch{{batch}}.csv",
    log:
        f"{RESULTS}/logs/simulate/{SETTING}/batch{{batch}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/simulate/{SETTING}/batch{{batch}}.tsv"
    conda:
        "../envs/nllbench.yaml"
    threads: 1
    params:
        seeds=lambda w: " ".join(map(str, SWEEP.batch_seeds(int(w.batch)))),
        steps=lambda w: (
            f"--steps {config['sweep']['steps']}"
            if config["sweep"].get("steps")
            else ""
        ),
        birth=simulate_flags(config),
        provenance=lambda w: config_slice(
            config,
            "sweep.steps",
            scenario=w.scenario,
            clutter=float(w.clutter),
            pd=float(w.pd),
            **simulate_provenance(config),
            seeds=SWEEP.batch_seeds(int(w.batch)),
        ),
    shell:
        "nllbench simulate --scenario {wildcards.scenario} --clutter-rate {wildcards.clutter}"
        " --pd {wildcards.pd} {params.steps} {params.birth} --seeds {params.seeds} --output-dir {output.scenarios}"
        " --timing {output.timing} --provenance {params.provenance:q} > {log} 2>&1"
