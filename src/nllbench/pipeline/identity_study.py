"""What identity uncertainty is worth: trajectory NLLs on runs with and without a coalescence of objects.

For each seed, the williams15 preset (four objects that meet around step 39)
is simulated, and then simulated again around the same truth with each object
moved by a fixed offset so that they never meet (the same motion, measurement
and clutter model). On both runs the PMBM and PMB filters (per-frame, labelled)
and the trajectory PMBM filter (``tpmbm``, a density over sets of trajectories)
run on the same measurements; the rows hold the labelled-output trajectory NLL
of PMBM and PMB (``docs/trajectory.md``, full state and position) and the exact
trajectory-density NLL of ``tpmbm`` (``docs/trajectory_filters.md``, full state).
"""

from __future__ import annotations

import dataclasses
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from nllbench.engine.trajectory_density import (
    estimate_trajectories,
    trajectory_density_nll,
    truth_trajectories,
)
from nllbench.filters import (
    TRAJECTORY_ESTIMATE_THRESHOLD,
    TRAJECTORY_FILTERS,
    PMBMSettings,
    run_filter_full,
    run_tpmb_final,
    run_tpmbm_final,
)
from nllbench.measures.likelihood.filter_trajectory_nll import posterior_trajectory_runs
from nllbench.measures.point.metrics import identity_scores
from nllbench.measures.run.evaluate import EvaluationSettings
from nllbench.measures.tracks.tgospa import tgospa
from nllbench.simulation.scenarios import get_scenario, simulate, simulate_with_truth
from nllbench.store import read_scenario, scenario_identity, write_scenario
from nllbench.store.trajectory_posterior import read_trajectory_posterior, write_trajectory_posterior

#: Position offsets that keep the four williams15 objects apart (x, y), one per object.
SEPARATING_OFFSETS = np.array([[-50.0, -50.0], [50.0, -50.0], [-50.0, 50.0], [50.0, 50.0]])


def separated(truth, truth_ids, offsets=SEPARATING_OFFSETS):
    """The truth with object i moved by ``offsets[i % len(offsets)]`` in position at every step."""
    out = []
    for x, ids in zip(truth, truth_ids, strict=True):
        y = np.array(x, dtype=float, copy=True)
        y[:, :2] += offsets[np.asarray(ids) % len(offsets)]
        out.append(y)
    return out


def estimate_scores(truth, truth_ids, states, labels, settings: EvaluationSettings = EvaluationSettings()):
    """(trajectory GOSPA, IDF1) of per-step estimates on position, at the evaluation's defaults."""
    y = [np.asarray(x)[:, :2] for x in truth]
    e = [np.asarray(x).reshape(-1, np.shape(x)[-1] if np.size(x) else 4)[:, :2] for x in states]
    tg = tgospa(y, truth_ids, e, labels, settings.cutoff, settings.p, settings.tgospa_gamma)
    ids = identity_scores(y, truth_ids, e, labels, settings.threshold)
    return tg.value, ids.idf1


def identity_rows(
    seeds,
    clutter_rate: float = 5.0,
    steps: int = 81,
    q: int = 10,
    settings: PMBMSettings = PMBMSettings(),
    wide: PMBMSettings | None = None,
) -> list[dict]:
    """One row per (seed, condition, filter, measure): ``value`` and the filter's seconds.

    ``wide``, if given, also runs ``tpmbm`` with those settings (filter name ``tpmbm-wide``).
    """
    rows = []
    for seed in seeds:
        sc = get_scenario("williams15", clutter_rate=clutter_rate, steps=steps)
        meet = simulate(sc, np.random.default_rng(seed), seed=seed)
        apart_truth = separated(meet.truth, meet.truth_ids)
        apart = simulate_with_truth(
            sc, apart_truth, meet.truth_ids, np.random.default_rng(seed), seed, "offset"
        )
        for condition, sim in (("coalescence", meet), ("separated", apart)):
            model = sim.scenario.model
            base = dict(seed=seed, condition=condition, clutter_rate=clutter_rate, steps=steps)
            for name in ("pmbm", "pmb"):
                t0 = time.perf_counter()
                run = run_filter_full(
                    name, sim.measurements, model, pmbm_settings=settings, estimate_at="update"
                )
                sec = time.perf_counter() - t0
                posts = run.posteriors
                tg, idf1 = estimate_scores(
                    sim.truth,
                    sim.truth_ids,
                    [x.states for x in run.estimates],
                    [x.labels for x in run.estimates],
                )
                for measure, value in (("T-GOSPA", tg), ("IDF1", idf1)):
                    rows.append(dict(base, filter=name, measure=measure, value=value, seconds=sec))
                for marginal in ("full", "position"):
                    (traj,) = posterior_trajectory_runs(
                        posts, sim.truth, sim.truth_ids, model.fov_low, model.fov_high,
                        [EvaluationSettings(qs=(q,), marginal=marginal)],
                    )  # fmt: skip
                    rows.append(
                        dict(base, filter=name, measure=f"labelled-output ({marginal})", value=traj.value,
                             seconds=sec)
                    )  # fmt: skip
            truths = truth_trajectories(sim.truth, sim.truth_ids)
            for name, s in (("tpmbm", settings), ("tpmbm-wide", wide)):
                if s is None:
                    continue
                t0 = time.perf_counter()
                state = run_tpmbm_final(sim.measurements, model, s)
                sec = time.perf_counter() - t0
                density = state.to_density(model)
                res = trajectory_density_nll(density, truths, q)
                rows.append(
                    dict(base, filter=name, measure="trajectory density (full)", value=res.value, seconds=sec)
                )
                tg, idf1 = estimate_scores(sim.truth, sim.truth_ids, *estimate_trajectories(density))
                for measure, value in (("T-GOSPA", tg), ("IDF1", idf1)):
                    rows.append(dict(base, filter=name, measure=measure, value=value, seconds=sec))
    return rows


# --- the study as the workflow runs it: a plan from the configuration, one seed at a time ------------------

#: Per-frame filters whose Bernoullis carry labels: scored by the labelled-output trajectory NLL.
LABELLED_FILTERS = ("pmbm", "pmb", "mbm", "mbm01")
#: Trajectory filters the study can run: name -> function (measurements, model, settings) -> final state
#: (with ``to_density(model)``). A filter of :data:`nllbench.filters.TRAJECTORY_FILTERS` is added here.
TRAJECTORY_RUNNERS: dict[str, Callable] = {"tpmbm": run_tpmbm_final, "tpmb": run_tpmb_final}
#: The scenario preset of the study: four objects that meet around step 39 (kept apart by
#: :data:`SEPARATING_OFFSETS`).
SCENARIO = "williams15"
#: The conditions of each seed, in figure order.
CONDITIONS = ("separated", "coalescence")
#: Keys of the configuration's ``identity`` section.
PLAN_KEYS = ("seeds", "clutter_rate", "steps", "q", "filters")
#: Keys of a filter entry besides the PMBM settings (:class:`nllbench.filters.PMBMSettings`' fields).
ENTRY_KEYS = ("filter", "name")
#: The trajectory NLL each kind of filter is scored by (the figure's first panel, full state).
NLL_MEASURES = {"labelled": "labelled-output (full)", "trajectory": "trajectory density (full)"}
#: A trajectory filter's name in the study names its posterior files (:func:`posterior_file`).
FILE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]*")


def posterior_file(condition: str, name: str) -> str:
    """The name of a trajectory filter's posterior file in a seed's posterior directory."""
    return f"{condition}_{name}.nc"


def scenario_file(condition: str) -> str:
    """The name of a condition's scenario file in a seed's scenario directory."""
    return f"{condition}.nc"


@dataclass(frozen=True)
class StudyFilter:
    """One filter of the study: ``name`` (its label in the tables), ``filter`` (a registered filter) and
    its ``settings``; ``kind`` is "labelled" (per-frame, labelled output) or "trajectory"."""

    name: str
    filter: str
    settings: PMBMSettings

    @property
    def kind(self) -> str:
        return "trajectory" if self.filter in TRAJECTORY_RUNNERS else "labelled"


@dataclass(frozen=True)
class IdentityPlan:
    """The study's settings: seeds (each run with and without the coalescence), the scenario's clutter rate
    and steps, the Murty budget ``q`` of every NLL and the filters (a tuple of :class:`StudyFilter`)."""

    seeds: tuple[int, ...]
    clutter_rate: float
    steps: int
    q: int
    filters: tuple[StudyFilter, ...]


def _integer(value, key: str, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"{key}: expected an integer >= {low}, got {value!r}")
    return int(value)


def _study_filter(entry, where: str) -> StudyFilter:
    if isinstance(entry, str):
        entry = {"filter": entry}
    if not isinstance(entry, dict):
        raise TypeError(f"{where}: expected a filter name or a mapping, got {type(entry).__name__}")
    fields = [f.name for f in dataclasses.fields(PMBMSettings)]
    unknown = sorted(set(entry) - set(ENTRY_KEYS) - set(fields))
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {unknown}; expected {[*ENTRY_KEYS, *fields]}")
    name = entry.get("filter")
    known = (*LABELLED_FILTERS, *TRAJECTORY_RUNNERS)
    if name in TRAJECTORY_FILTERS and name not in TRAJECTORY_RUNNERS:
        raise ValueError(
            f"{where}.filter: {name!r} is a trajectory filter the identity study does not run yet (add it to "
            "nllbench.pipeline.identity_study.TRAJECTORY_RUNNERS)"
        )
    if name not in known:
        raise ValueError(f"{where}.filter: expected one of {list(known)}, got {name!r}")
    label = entry.get("name", name)
    if not isinstance(label, str) or not label or label != label.strip() or "," in label:
        raise ValueError(
            f"{where}.name: expected a non-empty name without commas or outer spaces, got {label!r}"
        )
    if name in TRAJECTORY_RUNNERS and not FILE_NAME.fullmatch(label):
        raise ValueError(
            f"{where}.name: a trajectory filter's name names its posterior files: expected letters, digits"
            f" and . _ + - (starting with a letter or digit), got {label!r}"
        )
    try:
        settings = PMBMSettings(**{k: v for k, v in entry.items() if k in fields})
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{where}: {exc}") from None
    return StudyFilter(label, name, settings)


def plan_from_config(section: dict) -> IdentityPlan:
    """The study's plan from a configuration's ``identity`` section; a ValueError names a wrong key.

    Keys: ``seeds`` (runs 0 .. seeds-1, default 10), ``clutter_rate`` (5), ``steps`` (null: the
    scenario's 81), ``q`` (10) and ``filters``: names (``pmbm``, ``pmb``, ``mbm``, ``mbm01``, ``tpmbm``,
    ``tpmb``) or mappings ``{filter, name, <PMBM setting>: value}`` (e.g. ``{filter: tpmbm, name: tpmbm-2000,
    max_hypotheses: 2000}``); settings not given are the reference code's (:class:`PMBMSettings`).
    """
    if not isinstance(section, dict):
        raise TypeError(f"identity: expected a mapping, got {type(section).__name__}")
    unknown = sorted(set(section) - set(PLAN_KEYS))
    if unknown:
        raise ValueError(f"identity: unknown key(s) {unknown}; expected {list(PLAN_KEYS)}")
    seeds = _integer(section.get("seeds", 10), "identity.seeds", 1)
    clutter = section.get("clutter_rate", 5.0)
    if isinstance(clutter, bool) or not isinstance(clutter, (int, float)) or not 0 <= clutter < np.inf:
        raise ValueError(f"identity.clutter_rate: expected a finite number >= 0, got {clutter!r}")
    steps = section.get("steps")
    steps = 81 if steps is None else _integer(steps, "identity.steps", 2)
    q = _integer(section.get("q", 10), "identity.q", 1)
    entries = section.get("filters", ["pmbm", "pmb", "tpmbm"])
    if not isinstance(entries, list) or not entries:
        raise ValueError(f"identity.filters: expected a non-empty list, got {entries!r}")
    filters = tuple(_study_filter(e, f"identity.filters[{i}]") for i, e in enumerate(entries))
    names = [f.name for f in filters]
    if len(set(names)) != len(names):
        raise ValueError(f"identity.filters: expected distinct names, got {names} (give a `name` to each)")
    return IdentityPlan(tuple(range(seeds)), float(clutter), steps, q, filters)


def _runs(plan: IdentityPlan, seed: int):
    sc = get_scenario(SCENARIO, clutter_rate=plan.clutter_rate, steps=plan.steps)
    meet = simulate(sc, np.random.default_rng(seed), seed=seed)
    apart_truth = separated(meet.truth, meet.truth_ids)
    apart = simulate_with_truth(sc, apart_truth, meet.truth_ids, np.random.default_rng(seed), seed, "offset")
    return {"separated": apart, "coalescence": meet}


def _filter_rows(f: StudyFilter, sim, q: int, posterior=None, attrs=None) -> list[tuple[str, float, float]]:
    """(measure, value, filter seconds) of one filter on one run.

    A trajectory filter's final posterior is written to ``posterior`` (a path, with ``attrs``) if given,
    and its rows are computed from the file read back: what ``nllbench evaluate-trajectory`` reads.
    """
    model = sim.scenario.model
    if f.kind == "trajectory":
        t0 = time.perf_counter()
        density = TRAJECTORY_RUNNERS[f.filter](sim.measurements, model, f.settings).to_density(model)
        sec = time.perf_counter() - t0
        if posterior is not None:
            write_trajectory_posterior(density, posterior, attrs)
            density, _ = read_trajectory_posterior(posterior)
        nll = trajectory_density_nll(density, truth_trajectories(sim.truth, sim.truth_ids), q).value
        # each filter's published estimate threshold (0.4 tpmbm, 0.5 tpmb), as evaluate-trajectory uses
        estimate = estimate_trajectories(density, TRAJECTORY_ESTIMATE_THRESHOLD[f.filter])
        tg, idf1 = estimate_scores(sim.truth, sim.truth_ids, *estimate)
        return [(NLL_MEASURES["trajectory"], nll, sec), ("T-GOSPA", tg, sec), ("IDF1", idf1, sec)]
    t0 = time.perf_counter()
    run = run_filter_full(f.filter, sim.measurements, model, pmbm_settings=f.settings, estimate_at="update")
    sec = time.perf_counter() - t0
    states = [x.states for x in run.estimates]
    tg, idf1 = estimate_scores(sim.truth, sim.truth_ids, states, [x.labels for x in run.estimates])
    out = [("T-GOSPA", tg, sec), ("IDF1", idf1, sec)]
    for marginal in ("full", "position"):
        (traj,) = posterior_trajectory_runs(
            run.posteriors, sim.truth, sim.truth_ids, model.fov_low, model.fov_high,
            [EvaluationSettings(qs=(q,), marginal=marginal)],
        )  # fmt: skip
        out.append((f"labelled-output ({marginal})", traj.value, sec))
    return out


#: Columns of the study's rows (:func:`seed_rows`).
ROW_COLUMNS = ("seed", "condition", "filter", "registered", "kind", "measure", "value", "seconds")


def seed_rows(
    plan: IdentityPlan,
    seed: int,
    progress: Callable[[str], None] | None = None,
    posterior_dir: str | os.PathLike | None = None,
    scenario_dir: str | os.PathLike | None = None,
) -> pd.DataFrame:
    """One seed of the study: a row per (condition, filter, measure), columns :data:`ROW_COLUMNS`.

    ``seconds`` is the filter's run time (measured: not the same on a rerun). With ``posterior_dir`` and
    ``scenario_dir`` (existing directories, given together), each condition's run is written to
    ``scenario_dir/<condition>.nc`` (:func:`scenario_file`) and each trajectory filter's final posterior
    to ``posterior_dir/<condition>_<name>.nc`` (:func:`posterior_file`); that filter's rows are then
    computed from the file read back, so ``nllbench evaluate-trajectory POSTERIOR SCENARIO --q <q>``
    gives the same NLL.
    """
    if (posterior_dir is None) != (scenario_dir is None):
        raise ValueError(
            "posterior_dir, scenario_dir: expected both or neither (a posterior is evaluated against its"
            f" scenario), got posterior_dir={posterior_dir!r}, scenario_dir={scenario_dir!r}"
        )
    files = posterior_dir is not None and any(f.kind == "trajectory" for f in plan.filters)
    rows = []
    for condition, sim in _runs(plan, seed).items():
        identity = {}
        if files:
            scenario = os.path.join(scenario_dir, scenario_file(condition))
            write_scenario(sim, scenario)
            identity = scenario_identity(read_scenario(scenario))
        for f in plan.filters:
            posterior = attrs = None
            if files and f.kind == "trajectory":
                posterior = os.path.join(posterior_dir, posterior_file(condition, f.name))
                attrs = {
                    **identity,
                    "filter": f.filter,
                    "filter_parameters": {"filter": f.filter, **dataclasses.asdict(f.settings)},
                    "scenario_file": scenario_file(condition),
                    "identity_study": {"seed": seed, "condition": condition, "name": f.name, "q": plan.q},
                }
            for measure, value, sec in _filter_rows(f, sim, plan.q, posterior, attrs):
                rows.append((seed, condition, f.name, f.filter, f.kind, measure, float(value), sec))
            if progress:
                progress(f"seed {seed}, {condition}: {f.name} done")
    return pd.DataFrame(rows, columns=list(ROW_COLUMNS))


def _order(table: pd.DataFrame, plan_names) -> pd.DataFrame:
    return table.assign(
        _f=table["filter"].map({n: i for i, n in enumerate(plan_names)}),
        _c=table["condition"].map({c: i for i, c in enumerate(CONDITIONS)}),
    )


def summary_table(rows: pd.DataFrame, names) -> pd.DataFrame:
    """Per (filter, measure, condition): median, mean, interquartile range, count, infinite count, and the
    filter's median seconds; filters in the order ``names``, conditions separated then coalescence."""
    finite = rows.assign(value=rows["value"].where(np.isfinite(rows["value"])))
    g = finite.groupby(["filter", "kind", "measure", "condition"], sort=False)
    out = g["value"].agg(
        median="median", mean="mean", q25=lambda v: v.quantile(0.25), q75=lambda v: v.quantile(0.75)
    )
    out["runs"] = rows.groupby(["filter", "kind", "measure", "condition"], sort=False)["value"].size()
    out["infinite"] = out["runs"] - g["value"].count()
    out["median_seconds"] = g["seconds"].median()
    out = _order(out.reset_index(), names)
    return out.sort_values(["_f", "measure", "_c"]).drop(columns=["_f", "_c"]).reset_index(drop=True)


def extra_cost_table(rows: pd.DataFrame, names) -> pd.DataFrame:
    """What a meeting costs: per (filter, measure), the paired difference coalescence - separated per seed,
    its median, interquartile range and the number of seeds (a seed with an infinite value is counted in
    ``infinite`` and left out of the quantiles)."""
    wide = rows.pivot_table(
        index=["filter", "kind", "measure", "seed"], columns="condition", values="value", aggfunc="first"
    )
    diff = (wide["coalescence"] - wide["separated"]).rename("extra").reset_index()
    finite = diff.assign(extra=diff["extra"].where(np.isfinite(diff["extra"])))
    g = finite.groupby(["filter", "kind", "measure"], sort=False)["extra"]
    out = g.agg(median="median", q25=lambda v: v.quantile(0.25), q75=lambda v: v.quantile(0.75), seeds="size")
    out["infinite"] = out["seeds"] - g.count()
    out = out.reset_index().rename(columns={"median": "median_extra", "q25": "q25_extra", "q75": "q75_extra"})
    out = _order(out.assign(condition="separated"), names)
    return out.sort_values(["_f", "measure"]).drop(columns=["_f", "_c", "condition"]).reset_index(drop=True)
