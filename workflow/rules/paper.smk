# The paper's illustrative examples (Fig. 1 and Fig. 2) and the Theorem 1 check. They run first
# (priority), so an interrupted run already has them.

PAPER_PRIORITY = 100


rule paper_example:
    output:
        text=f"{RESULTS}/paper/example{{number}}/example.txt",
        # the examples' tables are shown in the report's headline page (CSV items do not display)
        table=f"{RESULTS}/paper/example{{number}}/table.csv",
    log:
        f"{RESULTS}/logs/paper_example/{{number}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/paper_example/{{number}}.tsv"
    priority: PAPER_PRIORITY
    conda:
        "../envs/nllbench.yaml"
    threads: 1
    params:
        out_dir=lambda w, output: str(Path(output.text).parent),
    shell:
        "nllbench example {wildcards.number} --out-dir {params.out_dir} > {log} 2>&1"


rule paper_figure:
    input:
        f"{RESULTS}/paper/example{{number}}/example.txt",
    output:
        png=report(
            f"{RESULTS}/figures/example{{number}}.png",
            caption="../report/example.rst",
            category="1 Paper",
            labels=lambda w: {
                "item": f"{int(w.number) + 1} example {w.number} figure"
            },
        ),
        pdf=f"{RESULTS}/figures/example{{number}}.pdf",
    log:
        f"{RESULTS}/logs/paper_figure/{{number}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/paper_figure/{{number}}.tsv"
    priority: PAPER_PRIORITY
    conda:
        "../envs/nllbench.yaml"
    threads: 1
    params:
        example_dir=lambda w, input: str(Path(input[0]).parent),
    shell:
        "nllbench plot example --example-dir {params.example_dir} -o {output.png}"
        # provenance inline, not a parameter: the report shows parameters, and a JSON blob reads badly
        " --provenance '{{\"example\": {wildcards.number}}}' > {log} 2>&1"


rule theorem1_check:
    output:
        # shown in the report's headline page (text items do not display in the report)
        f"{RESULTS}/paper/theorem1.txt",
    log:
        f"{RESULTS}/logs/theorem1_check.log",
    benchmark:
        f"{RESULTS}/benchmarks/theorem1_check.tsv"
    priority: PAPER_PRIORITY
    conda:
        "../envs/nllbench.yaml"
    threads: 1
    params:
        trials=config["paper"]["theorem1"]["trials"],
        seed=config["paper"]["theorem1"]["seed"],
        rho=config["paper"]["theorem1"]["rho"],
        scale=config["paper"]["theorem1"]["scale"],
        dim=config["paper"]["theorem1"]["dim"],
        size=config["paper"]["theorem1"]["size"],
    shell:
        "nllbench theorem1 --trials {params.trials} --seed {params.seed} --rho {params.rho}"
        " --scale {params.scale} --dim {params.dim} --size {params.size} > {output} 2> {log}"
