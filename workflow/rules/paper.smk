# The paper's illustrative examples and the Theorem 1 check.


rule paper_example:
    output:
        f"{RESULTS}/paper/example{{number}}.txt",
    log:
        f"{RESULTS}/logs/paper_example/{{number}}.log",
    benchmark:
        f"{RESULTS}/benchmarks/paper_example/{{number}}.tsv"
    wildcard_constraints:
        number=r"\d+",
    shell:
        "nllbench example {wildcards.number} > {output} 2> {log}"


rule theorem1_check:
    output:
        f"{RESULTS}/paper/theorem1.txt",
    log:
        f"{RESULTS}/logs/theorem1_check.log",
    benchmark:
        f"{RESULTS}/benchmarks/theorem1_check.tsv"
    params:
        t=config["paper"]["theorem1"],
    shell:
        "nllbench theorem1 --trials {params.t[trials]} --seed {params.t[seed]}"
        " --rho {params.t[rho]} --scale {params.t[scale]} --dim {params.t[dim]}"
        " --size {params.t[size]} > {output} 2> {log}"
