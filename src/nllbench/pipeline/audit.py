"""The propriety audit as a study: its configuration, its run and its tables (``docs/audit.md``).

:func:`plan_from_config` checks an audit configuration (``config/audit/audit.yaml``)
and returns an :class:`AuditPlan`; :func:`run_plan` draws the truths, scores
every perturbation with every measure (:mod:`nllbench.measures.run.audit`) and
returns the tidy rows and verdicts; :func:`rows_table`, :func:`verdicts_table`
and :func:`summary_table` lay them out for the CSV files that
``nllbench audit`` writes and the figure reads.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, fields

from nllbench.measures.run.audit import (
    AuditRow,
    FamilyVerdict,
    family_verdict,
    overall,
    paired_rows,
    perturb,
    perturbations,
    study,
    verdicts,
)
from nllbench.measures.run.audit_scores import (
    AuditSettings,
    filter_posterior,
    frame_scores,
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
#: Keys of a reference-filter entry (part 2: the probes on a filter's run against the simulated truth).
FILTER_KEYS = ({"name", "filter", "scenario", "steps", "seed"}, {"max_hypotheses"})
#: The probe families of part 2.
FILTER_FAMILIES = ("covariance", "existence")
#: Top-level keys of an audit configuration.
TOP_KEYS = {"settings", "densities", "trajectories", "filters"}


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
class FilterSpec:
    """A reference filter run on a simulated scenario (part 2): ``steps`` steps of seed ``seed``."""

    name: str
    filter: str
    scenario: str
    steps: int
    seed: int
    max_hypotheses: int = 20

    def run(self) -> tuple[list, list]:
        """(position-marginal posterior per step, true positions (n_k, 2) per step)."""
        import numpy as np

        from nllbench.engine.transforms import POSITION, marginal
        from nllbench.filters import PMBMSettings, run_filter
        from nllbench.simulation.scenarios import get_scenario, simulate

        sc = get_scenario(self.scenario, steps=self.steps)
        sim = simulate(sc, np.random.default_rng(self.seed))
        posts = run_filter(
            self.filter,
            sim.measurements,
            sc.model,
            pmbm_settings=PMBMSettings(max_hypotheses=self.max_hypotheses),
        )
        truths = [np.ascontiguousarray(np.asarray(x, dtype=float)[:, list(POSITION)]) for x in sim.truth]
        return [marginal(d) for d in posts], truths


@dataclass(frozen=True)
class AuditPlan:
    """The settings, the densities (part 1) and the reference filters (part 2) of one audit run."""

    settings: AuditSettings
    densities: tuple[DensitySpec, ...]
    filters: tuple[FilterSpec, ...] = ()


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
    filters = []
    for i, entry in enumerate(config.get("filters") or []):
        _entry(entry, f"filters[{i}]", *FILTER_KEYS)
        if entry["filter"] not in ("pmbm", "pmb", "mbm", "mbm01"):
            raise ValueError(
                f"filters[{i}].filter: expected pmbm, pmb, mbm or mbm01 (densities with Bernoullis), "
                f"got {entry['filter']!r}"
            )
        steps = entry["steps"]
        if not (isinstance(steps, int) and steps >= settings.blocks):
            raise ValueError(f"filters[{i}].steps: expected an integer >= settings.blocks, got {steps!r}")
        filters.append(
            FilterSpec(
                str(entry["name"]),
                entry["filter"],
                str(entry["scenario"]),
                steps,
                int(entry["seed"]),
                int(entry.get("max_hypotheses", 20)),
            )
        )
    if not specs and not filters:
        raise ValueError("config: expected at least one entry in densities, trajectories or filters")
    seen = [s.name for s in specs] + [f.name for f in filters]
    dup = sorted({n for n in seen if seen.count(n) > 1})
    if dup:
        raise ValueError(f"densities: expected distinct names, got {dup[0]!r} twice")
    return AuditPlan(settings, tuple(specs), tuple(filters))


@dataclass(frozen=True)
class AuditRun:
    """What :func:`run_plan` produced: the rows, the family verdicts, the overall verdicts and timings."""

    rows: tuple[AuditRow, ...]
    family_verdicts: tuple[FamilyVerdict, ...]
    overall: dict
    seconds: dict
    filter_rows: tuple[AuditRow, ...] = ()


def run_plan(plan: AuditPlan, progress: Callable[[str], None] | None = None) -> AuditRun:
    """Run every density of ``plan`` (truths from ``plan.settings.seed``), then every filter's probes."""
    rows, seconds = [], {}
    for spec in plan.densities:
        start = time.perf_counter()
        rows.extend(study(spec.level, spec.name, spec.build(), plan.settings, progress))
        seconds[spec.name] = time.perf_counter() - start
    fam = verdicts(rows, plan.settings.z)
    frows = []
    for spec in plan.filters:
        start = time.perf_counter()
        frows.extend(filter_probe_rows(spec, plan.settings, progress))
        seconds[spec.name] = time.perf_counter() - start
    return AuditRun(tuple(rows), tuple(fam), overall(fam), seconds, tuple(frows))


def filter_probe_rows(
    spec: FilterSpec, settings: AuditSettings, progress: Callable[[str], None] | None = None
) -> list[AuditRow]:
    """Part 2: the covariance and existence probes of a filter's posteriors against the simulated truth.

    Every step's posterior is probed alike and scored against that step's
    true positions by every frame-level measure; the steps play the draws
    (paired over the probes; they are not independent, so the standard
    errors are those of steps taken as exchangeable). The truth is not drawn
    from the posterior: the probe value a measure prefers says how it judges
    the filter's stated uncertainty, not whether the measure is proper.
    """
    posts, truths = spec.run()
    perts = tuple(p for p in perturbations(settings) if p.family in FILTER_FAMILIES)
    scores = []
    for pert in perts:
        if progress:
            progress(f"{spec.name}: {pert.family} {pert.value:g}")
        scores.append(frame_scores([perturb(d, pert, settings) for d in posts], truths, settings))
    return paired_rows("filter", spec.name, perts, scores)


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


def filter_rows_table(run: AuditRun):
    """Part 2, one row per (filter, measure, family, probe value): expected score, SE, paired difference."""
    import pandas as pd

    return pd.DataFrame([asdict(r) for r in run.filter_rows])


def preferences_table(run: AuditRun, z: float):
    """Part 2, one row per (filter, measure, family): the probe value the measure prefers.

    ``preferred``: the value of the smallest mean score over the steps (the
    honest value 1 where it ties); ``better``: the values scoring better than
    the unprobed posterior by more than ``z`` paired SE; ``insensitive``:
    every probe value scores the same at every step.
    """
    import pandas as pd

    groups: dict[tuple, list[AuditRow]] = {}
    for r in run.filter_rows:
        groups.setdefault((r.density, r.measure, r.family), []).append(r)
    out = []
    for (name, measure, fam), g in groups.items():
        v = family_verdict(g, z)
        out.append(
            {
                "filter": name,
                "measure": measure,
                "family": fam,
                "preferred": v.argmin,
                "better": " ".join(f"{x:g}" for x in v.better),
                "insensitive": v.verdict == "insensitive",
            }
        )
    return pd.DataFrame(out)
