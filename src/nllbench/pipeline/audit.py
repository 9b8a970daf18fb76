"""The propriety audit as a study: its configuration, its run and its tables (``docs/audit.md``).

:func:`plan_from_config` checks an audit configuration (``config/audit/audit.yaml``)
and returns an :class:`AuditPlan`; :func:`run_plan` draws the truths, scores
every perturbation with every measure (:mod:`nllbench.measures.audit`) and
returns the tidy rows and verdicts; :func:`rows_table`, :func:`verdicts_table`
and :func:`summary_table` lay them out for the CSV files that
``nllbench audit`` writes and the figure reads.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields

from nllbench.measures.audit import AuditRow, FamilyVerdict, overall, study, verdicts
from nllbench.measures.audit_scores import (
    AuditSettings,
    filter_posterior,
    synthetic_density,
    synthetic_trajectory_density,
)

#: Keys of a frame-level density entry, by kind (the first ones required).
DENSITY_KEYS = {
    "synthetic": ({"name", "kind", "density"}, set()),
    "filter": (
        {"name", "kind", "filter", "scenario", "step", "seed"},
        {"max_hypotheses", "r_floor", "weight_floor"},
    ),
}
#: Keys of a trajectory-level density entry.
TRAJECTORY_KEYS = ({"name", "kind", "frames"}, set())
#: Top-level keys of an audit configuration.
TOP_KEYS = {"settings", "densities", "trajectories"}


@dataclass(frozen=True)
class DensitySpec:
    """One density of the audit: ``level`` "frame" or "trajectory", its ``name`` and how it is made."""

    level: str
    name: str
    kind: str
    options: tuple  # (key, value) pairs, sorted

    def build(self):
        """The density (frame level) or the sequence of labelled MBs (trajectory level)."""
        o = dict(self.options)
        if self.level == "trajectory":
            return synthetic_trajectory_density(int(o["frames"]))
        if self.kind == "synthetic":
            return synthetic_density(o["density"])
        return filter_posterior(
            o["filter"],
            o["scenario"],
            int(o["step"]),
            int(o["seed"]),
            int(o.get("max_hypotheses", 20)),
            float(o.get("r_floor", 0.02)),
            float(o.get("weight_floor", 0.01)),
        )


@dataclass(frozen=True)
class AuditPlan:
    """The settings and the densities of one audit run."""

    settings: AuditSettings
    densities: tuple[DensitySpec, ...]


def _entry(entry, where: str, required: set, optional: set) -> None:
    if not isinstance(entry, dict):
        raise ValueError(f"{where}: expected a mapping, got {type(entry).__name__}")
    missing = sorted(required - set(entry))
    unknown = sorted(set(entry) - required - optional)
    if missing:
        raise ValueError(f"{where}: missing key {missing[0]!r}")
    if unknown:
        raise ValueError(f"{where}: unknown key {unknown[0]!r}; expected {sorted(required | optional)}")


def plan_from_config(config: dict) -> AuditPlan:
    """An :class:`AuditPlan` from an audit configuration, every key checked (errors name the key)."""
    if not isinstance(config, dict):
        raise ValueError(f"config: expected a mapping, got {type(config).__name__}")
    unknown = sorted(set(config) - TOP_KEYS)
    if unknown:
        raise ValueError(f"config: unknown key {unknown[0]!r}; expected {sorted(TOP_KEYS)}")
    raw = config.get("settings") or {}
    if not isinstance(raw, dict):
        raise ValueError("settings: expected a mapping")
    names = {f.name for f in fields(AuditSettings)}
    bad = sorted(set(raw) - names)
    if bad:
        raise ValueError(f"settings: unknown key {bad[0]!r}; expected {sorted(names)}")
    values = {k: tuple(v) if isinstance(v, list) else v for k, v in raw.items()}
    settings = AuditSettings(**values)
    specs = []
    for i, entry in enumerate(config.get("densities") or []):
        kind = entry.get("kind") if isinstance(entry, dict) else None
        if kind not in DENSITY_KEYS:
            raise ValueError(f"densities[{i}].kind: expected one of {sorted(DENSITY_KEYS)}, got {kind!r}")
        _entry(entry, f"densities[{i}]", *DENSITY_KEYS[kind])
        opts = tuple(sorted((k, v) for k, v in entry.items() if k not in ("name", "kind")))
        specs.append(DensitySpec("frame", str(entry["name"]), kind, opts))
    for i, entry in enumerate(config.get("trajectories") or []):
        _entry(entry, f"trajectories[{i}]", *TRAJECTORY_KEYS)
        if entry["kind"] != "synthetic":
            raise ValueError(f"trajectories[{i}].kind: expected 'synthetic', got {entry['kind']!r}")
        specs.append(
            DensitySpec("trajectory", str(entry["name"]), "synthetic", (("frames", entry["frames"]),))
        )
    if not specs:
        raise ValueError("config: expected at least one entry in densities or trajectories")
    seen = [s.name for s in specs]
    dup = sorted({n for n in seen if seen.count(n) > 1})
    if dup:
        raise ValueError(f"densities: expected distinct names, got {dup[0]!r} twice")
    return AuditPlan(settings, tuple(specs))


@dataclass(frozen=True)
class AuditRun:
    """What :func:`run_plan` produced: the rows, the family verdicts, the overall verdicts and timings."""

    rows: tuple[AuditRow, ...]
    family_verdicts: tuple[FamilyVerdict, ...]
    overall: dict
    seconds: dict


def run_plan(plan: AuditPlan, progress: Callable[[str], None] | None = None) -> AuditRun:
    """Run every density of ``plan``; the truths of each come from ``plan.settings.seed``."""
    rows, seconds = [], {}
    for spec in plan.densities:
        start = time.perf_counter()
        rows.extend(study(spec.level, spec.name, spec.build(), plan.settings, progress))
        seconds[spec.name] = time.perf_counter() - start
    fam = verdicts(rows, plan.settings.z)
    return AuditRun(tuple(rows), tuple(fam), overall(fam), seconds)


def rows_table(run: AuditRun):
    """One row per (level, density, measure, family, value): expected score, SE, paired difference."""
    import pandas as pd

    return pd.DataFrame([asdict(r) for r in run.rows])


def verdicts_table(run: AuditRun):
    """One row per (level, density, measure, family): verdict, argmin, the values that score better."""
    import pandas as pd

    out = []
    for v in run.family_verdicts:
        d = asdict(v)
        d["better"] = " ".join(f"{x:g}" for x in v.better)
        d["better_sides"] = " ".join(v.better_sides)
        out.append(d)
    return pd.DataFrame(out)


def summary_table(run: AuditRun):
    """One row per measure: its overall verdict."""
    import pandas as pd

    return pd.DataFrame({"measure": list(run.overall), "verdict": list(run.overall.values())})
