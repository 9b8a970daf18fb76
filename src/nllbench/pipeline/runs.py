"""File-to-file steps of the pipeline: simulate, filter and evaluate one run.

The command line (single files or batches of seeds) and the workflow call
these; each returns what it computed and the compute time in seconds (kept
out of the files, so that the same inputs give the same bytes).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from nllbench.engine.trajectory_density import (
    estimate_trajectories,
    trajectory_density_nll,
    truth_trajectories,
)
from nllbench.filters import (
    TRAJECTORY_ESTIMATE_THRESHOLD,
    TRAJECTORY_FILTERS,
    PHDSettings,
    PMBMSettings,
    run_filter_full,
    run_trajectory_final,
)
from nllbench.filters.estimates import DEFAULT_EXISTENCE_THRESHOLD
from nllbench.measures.likelihood.trajectory_windows import trajectory_attrs
from nllbench.measures.run.evaluate import EvaluationSettings, evaluate_runs
from nllbench.simulation.scenarios import get_scenario, read_truth_csv, simulate, simulate_with_truth
from nllbench.store import (
    ScenarioData,
    read_posterior,
    read_scenario,
    scenario_identity,
    write_metrics,
    write_posterior,
    write_scenario,
)
from nllbench.store.scenario import run_seed, scenario_mismatches  # their home; kept importable here
from nllbench.store.trajectory_posterior import read_trajectory_posterior, write_trajectory_posterior


def default_max_cardinality(truth_counts: list[int], expected_objects: float) -> int:
    """The CPHD cardinality bound chosen from the scene: never below twice its busiest step, plus 10."""
    busiest = max(truth_counts, default=0)
    return int(max(2 * busiest, min(expected_objects, 4 * busiest + 20)) + 10)


def simulate_file(
    scenario: str,
    seed: int,
    path,
    overrides: dict | None = None,
    config: dict | None = None,
    truth_file: str | None = None,
):
    """Simulate ``scenario`` with ``numpy.random.default_rng(seed)`` and write it to ``path``.

    With ``truth_file`` (a CSV, :func:`nllbench.simulation.scenarios.read_truth_csv`) the
    truth is read from it and only the measurements are simulated; the run
    has the file's steps unless ``overrides["steps"]`` says otherwise.
    """
    t0 = time.perf_counter()
    overrides = dict(overrides or {})
    if truth_file is None:
        sc = get_scenario(scenario, **overrides)
        sim = simulate(sc, np.random.default_rng(seed), seed=seed)
    else:
        steps = overrides.pop("steps", None)
        overrides.pop("truth_seed", None)
        truth, ids = read_truth_csv(truth_file, steps)
        sc = get_scenario(scenario, **overrides)
        digest = hashlib.sha256(Path(truth_file).read_bytes()).hexdigest()
        source = f"{Path(truth_file).name} sha256:{digest}"
        sim = simulate_with_truth(sc, truth, ids, np.random.default_rng(seed), seed, source)
    write_scenario(sim, path, config=config)
    return sim, time.perf_counter() - t0


def filter_file(
    scenario_path,
    filter_name: str,
    path,
    *,
    max_cardinality: int | None = None,
    phd: PHDSettings = PHDSettings(),
    pmbm: PMBMSettings = PMBMSettings(),
    progress: Callable[[int], None] | None = None,
    config: dict | None = None,
    warn: Callable[[str], None] | None = None,
    estimate_at: str = "posterior",
    estimator: str | None = None,
    existence_threshold: float = DEFAULT_EXISTENCE_THRESHOLD,
):
    """Run one reference filter on a scenario file and write its posteriors.

    With ``estimate_at="update"`` the filter's point estimates (by
    ``estimator``, before pruning and merging) are stored beside them.
    """
    data = read_scenario(scenario_path)
    if data.model is None:
        raise ValueError(f"{scenario_path}: the file has no model (F, Q, H, R, birth); cannot filter it")
    if filter_name in TRAJECTORY_FILTERS:
        if estimate_at != "posterior" or estimator is not None:
            raise ValueError(
                f"estimate_at, estimator: the {filter_name} filter writes no per-step estimates (its"
                " trajectory estimate comes from the posterior at evaluation); leave them at their defaults"
            )
        return _trajectory_filter_file(data, scenario_path, filter_name, path, pmbm, progress, config)
    counts = [len(x) for x in data.truth]
    if max_cardinality is None:
        expected = float(data.model.initial.weights.sum() + data.model.birth.weights.sum() * data.steps)
        max_cardinality = default_max_cardinality(counts, expected)
    elif filter_name == "cphd" and max_cardinality < max(counts, default=0) and warn:
        warn(
            f"--cphd-max-card {max_cardinality} is below the {max(counts)} objects the scene holds at its "
            "busiest step; the CPHD posterior gives those truths likelihood 0 (NLL = inf)"
        )
    t0 = time.perf_counter()
    run = run_filter_full(
        filter_name,
        data.measurements,
        data.model,
        max_cardinality=max_cardinality,
        phd_settings=phd,
        pmbm_settings=pmbm,
        progress=progress,
        estimate_at=estimate_at,
        estimator=estimator,
        existence_threshold=existence_threshold,
    )
    posts = run.posteriors
    params: dict = {"filter": filter_name, "estimate_at": estimate_at}
    params.update(dataclasses.asdict(phd if filter_name in ("phd", "cphd") else pmbm))
    if run.estimates is not None:
        params.update(estimator=run.estimator, existence_threshold=existence_threshold)
    if filter_name == "cphd":
        params["max_cardinality"] = max_cardinality
    renamed = {"nllbench_version", "nllbench_schema_version", "software_versions", "config"}
    attrs = {
        (f"scenario_{k}" if k in renamed else k): v
        for k, v in data.attrs.items()
        if k not in ("content", "Conventions")
    }
    attrs.update(filter=filter_name, filter_parameters=params, scenario_file=Path(scenario_path).name)
    if config is not None:
        attrs["config"] = config
    if run.estimates is not None:
        attrs.update(estimator=run.estimator, estimate_at=estimate_at)
    write_posterior(posts, path, attrs, estimates=run.estimates)
    return posts, time.perf_counter() - t0


def _scenario_attrs(data: ScenarioData) -> dict:
    renamed = {"nllbench_version", "nllbench_schema_version", "software_versions", "config"}
    return {
        (f"scenario_{k}" if k in renamed else k): v
        for k, v in data.attrs.items()
        if k not in ("content", "Conventions")
    }


def _trajectory_filter_file(data, scenario_path, filter_name, path, pmbm, progress, config):
    """Run a trajectory filter and write the last step's trajectory posterior (the whole run's density).

    Returns ``([density], seconds)``.
    """
    t0 = time.perf_counter()
    state = run_trajectory_final(filter_name, data.measurements, data.model, pmbm, progress)
    density = state.to_density(data.model)
    attrs = _scenario_attrs(data)
    params = {"filter": filter_name, **dataclasses.asdict(pmbm)}
    attrs.update(filter=filter_name, filter_parameters=params, scenario_file=Path(scenario_path).name)
    if config is not None:
        attrs["config"] = config
    write_trajectory_posterior(density, path, attrs)
    return [density], time.perf_counter() - t0


def trajectory_nll_file(posterior_path, scenario_path, q: int = 10, exact: bool = False) -> dict:
    """The exact trajectory NLL of a scenario's truth under a trajectory posterior file, as a record.

    Returns ``{"value", "lower", "upper", "exact", "complete", terms..., "tgospa", "idf1"}``: the
    last two of the filter's trajectory estimate (:func:`estimate_trajectories`) on position, at
    the evaluation's default settings.
    """
    density, attrs = read_trajectory_posterior(posterior_path)
    data = read_scenario(scenario_path)
    if density.time != data.steps - 1:
        raise ScenarioMismatchError(
            f"{posterior_path}: the posterior ends at step {density.time}, the scenario "
            f"{scenario_path} has {data.steps} steps (0..{data.steps - 1})"
        )
    from nllbench.pipeline.identity_study import estimate_scores

    truths = truth_trajectories(data.truth, data.truth_ids)
    res = trajectory_density_nll(density, truths, q=q, exact=exact)
    threshold = TRAJECTORY_ESTIMATE_THRESHOLD.get(str(attrs.get("filter", "")), 0.4)
    tg, idf1 = estimate_scores(data.truth, data.truth_ids, *estimate_trajectories(density, threshold))
    return {
        "filter": attrs.get("filter", ""),
        "value": res.value,
        "lower": res.lower,
        "upper": res.upper,
        "exact": res.exact,
        "complete": res.complete,
        "q": q,
        **res.terms,
        "tgospa": tg,
        "idf1": idf1,
    }


class ScenarioMismatchError(ValueError):
    """A posterior file records a scenario other than the one it is scored against."""


def check_scenario(
    posterior_attrs: dict, data: ScenarioData, posterior_path, scenario_path, allow_mismatch: bool = False
) -> str:
    """Refuse a posterior scored against the wrong scenario; return the check's record for provenance.

    Raises :class:`ScenarioMismatchError` naming every differing attribute,
    unless ``allow_mismatch`` (a deliberate cross-scoring), in which case the
    differences are returned for the metrics file's ``scenario_check``.
    """
    diffs = scenario_mismatches(posterior_attrs, data)
    recorded = [k for k in scenario_identity(data) if k in posterior_attrs]
    if not diffs:
        return "matched: " + ", ".join(recorded) if recorded else "not recorded in the posterior"
    text = "; ".join(f"{k}: posterior {a!r}, scenario {b!r}" for k, (a, b) in diffs.items())
    if allow_mismatch:
        return "mismatch allowed (--allow-mismatch): " + text
    raise ScenarioMismatchError(
        f"{posterior_path}: expected a posterior of the scenario in {scenario_path}, but they differ in "
        f"{text} (pass --allow-mismatch to score it anyway)"
    )


def _estimation_settings(post, settings: EvaluationSettings, path) -> EvaluationSettings:
    """Settings that record where the estimates come from (the filter's own when stored).

    A rule asked for that differs from the one the filter extracted with is an error.
    """
    if post.estimates is None:
        if settings.estimate_at == "update":
            raise ValueError(
                f"{path}: estimate_at 'update': the file holds no estimates (see filter --estimate-at)"
            )
        return settings
    stored = str(post.attrs.get("estimator", ""))
    if settings.estimator is not None and settings.estimator != stored:
        raise ValueError(
            f"{path}: estimator: the filter extracted its estimates with {stored!r} at update time, "
            f"got {settings.estimator!r}"
        )
    return dataclasses.replace(settings, estimator=stored, estimate_at="update")


def evaluate_file(
    posterior_path,
    scenario_path,
    path,
    settings: EvaluationSettings,
    config: dict | None = None,
    allow_mismatch: bool = False,
    warn: Callable[[str], None] | None = None,
):
    """Evaluate one posterior file against its scenario file; write the metrics file.

    The posterior must record the same scenario (:func:`check_scenario`)
    unless ``allow_mismatch``; the check's outcome is stored in the metrics
    file (attribute ``scenario_check``). Returns the one-row summary (with the
    run's identifying columns), the evaluation's seconds and the seconds of
    its Murty NLL part.
    """
    (out,) = evaluate_file_many(
        posterior_path, scenario_path, [(path, settings, config)], allow_mismatch, warn
    )
    return out


def evaluate_file_many(
    posterior_path,
    scenario_path,
    outputs,
    allow_mismatch: bool = False,
    warn: Callable[[str], None] | None = None,
):
    """:func:`evaluate_file` for several (metrics path, settings, provenance) triples of one run.

    The posterior and scenario are read once and what the settings share is
    computed once (:func:`nllbench.measures.run.evaluate.evaluate_runs`: they may differ in
    ``qs``, ``cov_scale``, ``exact`` and ``proper_scores``). Each metrics file equals the one
    :func:`evaluate_file` writes with its settings. Returns one (summary row,
    seconds, NLL seconds) per triple; the seconds are the shared evaluation's.
    """
    post = read_posterior(posterior_path)
    data = read_scenario(scenario_path)
    scenario_check = check_scenario(post.attrs, data, posterior_path, scenario_path, allow_mismatch)
    if warn and not scenario_check.startswith("matched"):
        warn(f"{posterior_path}: scenario check: {scenario_check}")
    if len(post) != data.steps:
        raise ValueError(
            f"{posterior_path}: expected {data.steps} steps like {scenario_path}, got {len(post)}"
        )
    settings = [_estimation_settings(post, s, posterior_path) for _, s, _ in outputs]
    runs = evaluate_runs(
        post,
        data.truth,
        data.truth_ids,
        data.attrs["fov_low"],
        data.attrs["fov_high"],
        settings,
        post.estimates,
        seed=run_seed(post.attrs),
    )
    trajectory = _trajectory_runs(post, data, settings)
    keep = (
        "scenario",
        "seed",
        "filter",
        "clutter_rate",
        "p_detection",
        "p_survival",
        "steps",
        "filter_parameters",
    )
    attrs = {k: post.attrs[k] for k in keep if k in post.attrs}
    attrs.update(
        posterior_file=Path(posterior_path).name,
        scenario_file=Path(scenario_path).name,
        scenario_check=scenario_check,
    )
    out = []
    for i, ((path, _, config), s, metrics) in enumerate(zip(outputs, settings, runs, strict=True)):
        extra = {} if config is None else {"config": json.dumps(config, sort_keys=True)}
        run = trajectory if isinstance(trajectory, str) else trajectory[i]
        if not isinstance(run, str):
            metrics = dataclasses.replace(metrics, trajectory=run)
        extra.update(trajectory_attrs(run))
        write_metrics(metrics, path, {**attrs, **extra})
        row = {
            **{k: attrs.get(k, "") for k in ("scenario", "seed", "filter", "clutter_rate", "p_detection")},
            "marginal": s.marginal,
            "cov_scale": s.cov_scale,
            "temper": s.temper,
            **metrics.summary(),
        }
        if isinstance(run, str):
            row["trajectory_nll"] = "n/a"  # not applicable (the text of nllbench.trackers.checks.NA)
        out.append((row, metrics.seconds, metrics.nll_seconds))
    return out


def _trajectory_runs(post, data: ScenarioData, settings) -> list | str:
    """The trajectory NLL of a labelled filter's posteriors per settings, or why it does not apply
    (:func:`nllbench.measures.likelihood.filter_trajectory_nll.posterior_trajectory_runs`)."""
    from nllbench.measures.likelihood.filter_trajectory_nll import posterior_trajectory_runs

    return posterior_trajectory_runs(
        post, data.truth, data.truth_ids, data.attrs["fov_low"], data.attrs["fov_high"], settings
    )
