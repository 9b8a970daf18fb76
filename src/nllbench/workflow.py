"""Helpers for the Snakemake workflow: the sweep's jobs, batches and output paths.

The workflow declares; these functions compute what it needs (which seeds a
batch holds, which metric directories exist, the config slice each job
records), so that the rule files stay free of logic and the logic is tested.
"""

from __future__ import annotations

import copy
import json
import math
import shlex
from dataclasses import dataclass
from itertools import product
from pathlib import Path


def _finite_number(checker, instance) -> bool:
    """JSON-schema type ``number`` without NaN and infinity (YAML ``.nan``/``.inf`` parse as floats)."""
    return isinstance(instance, (int, float)) and not isinstance(instance, bool) and math.isfinite(instance)


def _key(path) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _describe(error) -> str:
    """One validation error as 'config key <dotted path>: <what is wrong>'."""
    where = _key(error.absolute_path)
    if error.validator == "required":
        missing = [k for k in error.validator_value if k not in error.instance]
        return "config: missing key " + ", ".join(f"{where}.{k}" if where else k for k in missing)
    if error.validator == "additionalProperties":
        return f"config key {where or '(top level)'}: {error.message}"
    if error.validator == "type" and isinstance(error.instance, float) and not math.isfinite(error.instance):
        return f"config key {where}: expected a finite number, got {error.instance}"
    return f"config key {where}: {error.message}"


def _fill_defaults(node, schema) -> None:
    """Add the schema's ``default`` of every absent optional key, in every object present."""
    if not isinstance(node, dict):
        return
    for key, sub in schema.get("properties", {}).items():
        if key not in node and "default" in sub:
            node[key] = copy.deepcopy(sub["default"])
        if key in node:
            _fill_defaults(node[key], sub)


def validated_config(config: dict, schema_path: str | Path) -> dict:
    """The configuration checked against the JSON schema, with the schema's defaults filled in.

    Numbers must be finite (``.nan`` and ``.inf`` are refused); a missing
    required key is named with its dotted path (``sweep.filters``); optional
    keys take the ``default`` written in the schema, nowhere else. Raises
    ValueError listing every problem.
    """
    import jsonschema
    import yaml

    schema = yaml.safe_load(Path(schema_path).read_text())
    base = jsonschema.Draft202012Validator
    types = base.TYPE_CHECKER.redefine("number", _finite_number)
    validator = jsonschema.validators.extend(base, type_checker=types)(schema)
    errors = sorted(validator.iter_errors(config), key=lambda e: [str(p) for p in e.absolute_path])
    if errors:
        raise ValueError("invalid configuration:\n  " + "\n  ".join(_describe(e) for e in errors))
    out = copy.deepcopy(config)
    _fill_defaults(out, schema)
    return out


@dataclass(frozen=True)
class Sweep:
    """The Monte Carlo sweep of a configuration.

    Runs are (scenario, clutter, pd, filter, seed); jobs handle a batch of
    ``seeds_per_job`` consecutive seeds, so that each job's start-up (about a
    second of Python imports) is paid once per batch, not once per run.
    """

    scenarios: tuple[str, ...]
    filters: tuple[str, ...]
    clutter_rates: tuple[float, ...]
    detection_probabilities: tuple[float, ...]
    seeds: int
    seeds_per_job: int
    qs: tuple[int, ...]
    cov_scales: tuple[float, ...]
    probe_q: int

    @classmethod
    def from_config(cls, config: dict) -> Sweep:
        s, e = config["sweep"], config["evaluation"]
        return cls(
            tuple(s["scenarios"]),
            tuple(s["filters"]),
            tuple(s["clutter_rates"]),
            tuple(s["detection_probabilities"]),
            int(s["seeds"]),
            int(s["seeds_per_job"]),
            tuple(int(q) for q in e["q"]),
            tuple(e["cov_scales"]),
            int(e["probe_q"]),
        )

    @property
    def batches(self) -> list[int]:
        return list(range(-(-self.seeds // self.seeds_per_job)))

    def batch_seeds(self, batch: int) -> list[int]:
        """Seeds of batch ``batch``: [batch * size, min((batch + 1) * size, seeds))."""
        start = batch * self.seeds_per_job
        if not 0 <= start < self.seeds:
            raise ValueError(f"batch: expected 0..{len(self.batches) - 1}, got {batch}")
        return list(range(start, min(start + self.seeds_per_job, self.seeds)))

    def evaluations(self) -> list[tuple[int, float]]:
        """(q, cov_scale) pairs evaluated: every q at scale 1, the probe q at every scale."""
        pairs = {(q, 1.0) for q in self.qs} | {(self.probe_q, float(s)) for s in self.cov_scales}
        return sorted(pairs)

    def settings(self) -> list[dict]:
        """Every (scenario, clutter, pd) setting as wildcard values."""
        return [
            {"scenario": sc, "clutter": fmt(c), "pd": fmt(pd)}
            for sc, c, pd in product(self.scenarios, self.clutter_rates, self.detection_probabilities)
        ]


def fmt(x: float) -> str:
    """A number as it appears in paths and wildcards: 10 -> '10', 0.9 -> '0.9'."""
    f = float(x)
    return str(int(f)) if f.is_integer() else repr(f)


def metric_dirs(results: str, sweep: Sweep) -> list[str]:
    """Every evaluation output directory of the sweep."""
    out = []
    for st in sweep.settings():
        for filt, (q, s), b in product(sweep.filters, sweep.evaluations(), sweep.batches):
            out.append(
                f"{results}/metrics/{st['scenario']}/clutter{st['clutter']}_pd{st['pd']}/{filt}/"
                f"q{q}_cov{fmt(s)}/batch{b}"
            )
    return out


def config_slice(config: dict, *keys: str, **extra) -> str:
    """JSON of the config values a job depends on (its provenance), plus its own values.

    ``keys`` are dotted paths (``"filter"``, ``"sweep.steps"``). Only what the
    job uses is recorded, so that adding a value to a sweep list changes no
    finished job's parameters and re-runs nothing that does not depend on it.
    """
    out: dict = {}
    for key in keys:
        node, parts = config, key.split(".")
        for part in parts:
            node = node[part]
        out[key] = node
    out.update(extra)
    return json.dumps(out, sort_keys=True)


EVALUATION_KEYS = tuple(
    f"evaluation.{k}"
    for k in ("marginal", "cutoff", "p", "threshold", "existence_threshold", "theorem_rho", "budget", "exact")
)


#: Point-estimation rule per filter when the configuration names none.
DEFAULT_ESTIMATORS = {
    "phd": "round",
    "cphd": "map",
    "pmbm": "best_hypothesis",
    "pmb": "best_hypothesis",
    "mbm": "best_hypothesis",
    "mbm01": "best_hypothesis",
}


def estimator_for(config: dict, filter_name: str) -> str:
    """The point-estimation rule of ``filter_name`` (``evaluation.estimators``)."""
    return config["evaluation"].get("estimators", DEFAULT_ESTIMATORS)[filter_name]


def simulate_flags(config: dict) -> str:
    """Flags of ``nllbench simulate`` from ``sweep.mb_birth`` and ``sweep.mb_start`` (null: the preset's)."""
    s = config["sweep"]
    flags = ""
    if s.get("mb_birth") is not None:
        flags += " --mb-birth " + shlex.quote(json.dumps(s["mb_birth"], sort_keys=True))
    if s.get("mb_start") is not None:
        flags += " --mb-start" if s["mb_start"] else " --no-mb-start"
    return flags.strip()


def filter_flags(config: dict, filter_name: str | None = None) -> str:
    """Command-line flags of ``nllbench filter`` from the config's ``filter`` section.

    With ``filter.estimate_at: update`` the filter extracts its estimates with
    ``filter_name``'s rule (``evaluation.estimators``) and stores them.
    """
    f = config["filter"]
    flags = (
        f"--gate {f['gate']} --max-hypotheses {f['max_hypotheses']}"
        f" --hypothesis-floor {f['hypothesis_floor']} --existence-floor {f['existence_floor']}"
        f" --ppp-floor {f['ppp_floor']} --recycle {f['recycle']} --phd-prune {f['phd_prune']}"
        f" --phd-merge {f['phd_merge']} --phd-cap {f['phd_cap']}"
    )
    if f.get("cphd_max_card") is not None:
        flags += f" --cphd-max-card {f['cphd_max_card']}"
    if f.get("project_before_cap"):
        flags += " --project-before-cap"
    if f.get("estimate_at", "posterior") == "update" and filter_name is not None:
        flags += f" --estimate-at update --estimator {estimator_for(config, filter_name)}"
        flags += f" --existence-threshold {config['evaluation']['existence_threshold']}"
    return flags


def evaluate_flags(config: dict, q: int, cov_scale: float, filter_name: str | None = None) -> str:
    """Command-line flags of ``nllbench evaluate`` for one (Q, covariance scale) job.

    The exact NLL does not depend on Q or the probe: it is asked for once per
    run, in the job with the smallest Q at scale 1.
    """
    e = config["evaluation"]
    flags = (
        f"--cutoff {e['cutoff']} --p {e['p']} --threshold {e['threshold']}"
        f" --existence-threshold {e['existence_threshold']} --theorem-rho {e['theorem_rho']}"
        f" --budget {e['budget']}"
    )
    if e["marginal"] == "full":
        flags += " --full-state"
    if filter_name is not None:
        flags += f" --estimator {estimator_for(config, filter_name)}"
    if e.get("exact") and int(q) == min(int(x) for x in e["q"]) and float(cov_scale) == 1.0:
        flags += " --exact"
    return flags


def evaluation_timing_files(results: str, sweep: Sweep) -> list[str]:
    """The timing CSV of every evaluation job."""
    prefix = f"{results}/metrics/"
    return [f"{results}/timing/evaluate/" + d[len(prefix) :] + ".csv" for d in metric_dirs(results, sweep)]
