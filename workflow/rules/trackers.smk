# External trackers (config section `trackers`): their tracks per setting and batch of seeds, from
# a command or existing tables, scored by `nllbench score` into metrics directories that
# `nllbench aggregate` reads with the reference filters'. Calibration seeds are simulated apart.

COMMAND_TRACKERS = trackers_of_kind(config, "command")
TABLE_TRACKERS = trackers_of_kind(config, "tracks")
TRACKS = f"{RESULTS}/tracks/{SETTING}/tracker-{{tracker}}/{{part}}"


rule simulate_calibration:
    input:
        truth=truth_input(config),
    output:
        scenarios=directory(f"{RESULTS}/scenarios/{SETTING}/calibration{{cseed}}"),
    log:
        f"{RESULTS}/logs/simulate/{SETTING}/calibration{{cseed}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/simulate/{SETTING}/calibration{{cseed}}.tsv"
    wildcard_constraints:
        cseed=r"\d+",
    conda:
        "../envs/nllbench.yaml"
    threads: 1
    params:
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
            seeds=[int(w.cseed)],
        ),
    shell:
        "nllbench simulate --scenario {wildcards.scenario} --clutter-rate {wildcards.clutter}"
        " --pd {wildcards.pd} {params.steps} {params.birth} --seeds {wildcards.cseed}"
        " --output-dir {output.scenarios} --provenance {params.provenance:q} > {log} 2>&1"


rule track:
    input:
        f"{RESULTS}/scenarios/{SETTING}/{{part}}",
    output:
        directory(TRACKS),
    log:
        f"{RESULTS}/logs/track/{SETTING}/tracker-{{tracker}}/{{part}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/track/{SETTING}/tracker-{{tracker}}/{{part}}.tsv"
    wildcard_constraints:
        tracker=name_constraint(COMMAND_TRACKERS),
        part=r"(batch|calibration)\d+",
    conda:
        "../envs/nllbench.yaml"
    threads: 1
    params:
        command=lambda w, input, output: tracker_command(
            config, w.tracker, input[0], output[0], w, w.part
        ),
    shell:
        "{params.command} > {log} 2>&1"


rule gather_tracks:
    input:
        lambda w: tracker_tables(config, w.tracker, w, part_seeds(SWEEP, w.part)),
    output:
        directory(TRACKS),
    log:
        f"{RESULTS}/logs/track/{SETTING}/tracker-{{tracker}}/{{part}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/track/{SETTING}/tracker-{{tracker}}/{{part}}.tsv"
    wildcard_constraints:
        tracker=name_constraint(TABLE_TRACKERS),
        part=r"(batch|calibration)\d+",
    conda:
        "../envs/nllbench.yaml"
    threads: 1
    params:
        seeds=lambda w: " ".join(map(str, part_seeds(SWEEP, w.part))),
    shell:
        "python -m nllbench.pipeline.workflow gather-tracks --output-dir {output} --seeds {params.seeds}"
        " --tables {input:q} > {log} 2>&1"


rule score_tracker:
    input:
        tracks=f"{RESULTS}/tracks/{SETTING}/tracker-{{tracker}}/batch{{batch}}",
        scenarios=f"{RESULTS}/scenarios/{SETTING}/batch{{batch}}",
        calibration=lambda w: calibration_dirs(RESULTS, config, w.tracker, w),
    output:
        metrics=directory(
            f"{RESULTS}/metrics/{SETTING}/tracker-{{tracker}}/q{{q}}_cov{{cov}}/batch{{batch}}"
        ),
        timing=f"{RESULTS}/timing/evaluate/{SETTING}/tracker-{{tracker}}/q{{q}}_cov{{cov}}/batch{{batch}}.csv",
    log:
        f"{RESULTS}/logs/score/{SETTING}/tracker-{{tracker}}/q{{q}}_cov{{cov}}/batch{{batch}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/score/{SETTING}/tracker-{{tracker}}/q{{q}}_cov{{cov}}/batch{{batch}}.tsv"
    wildcard_constraints:
        tracker=name_constraint([*COMMAND_TRACKERS, *TABLE_TRACKERS]),
    conda:
        "../envs/nllbench.yaml"
    threads: 1
    params:
        flags=lambda w: score_flags(
            config,
            w.tracker,
            tracker_calibration_files(RESULTS, config, w.tracker, w),
        ),
        settings=lambda w: score_settings(config, w.tracker, w.q, w.cov, w.batch),
    shell:
        "nllbench score --tracks-dir {input.tracks} --scenario-dir {input.scenarios}"
        " --output-dir {output.metrics} {params.flags} --settings {params.settings:q}"
        " --timing {output.timing} --jobs {threads} > {log} 2>&1"
