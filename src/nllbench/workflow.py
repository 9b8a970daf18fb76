"""Helpers for the Snakemake workflow: the sweep's jobs, batches and output paths.

The workflow declares; these functions compute what it needs (which seeds a
batch holds, which metric directories exist, the config slice each job
records), so that the rule files stay free of logic and the logic is tested.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from itertools import product


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
    """JSON of the named top-level config sections plus job values (a job's provenance)."""
    out = {k: config[k] for k in keys if k in config}
    out.update(extra)
    return json.dumps(out, sort_keys=True)
