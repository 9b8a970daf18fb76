# nllbench: the workflow declares, the package computes.
# Run:  snakemake --cores 2            (config/config.yaml)
#       snakemake --cores 2 --configfile .test/config/config.yaml
from snakemake.utils import min_version, validate

min_version("9.0")


configfile: "config/config.yaml"


validate(config, "workflow/schemas/config.schema.yaml")

RESULTS = config["results"]


include: "workflow/rules/paper.smk"


rule all:
    input:
        expand(f"{RESULTS}/paper/example{{number}}.txt", number=config["paper"]["examples"]),
        f"{RESULTS}/paper/theorem1.txt",
