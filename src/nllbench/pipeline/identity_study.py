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

import time

import numpy as np

from nllbench.engine.trajectory_density import (
    estimate_trajectories,
    trajectory_density_nll,
    truth_trajectories,
)
from nllbench.filters import PMBMSettings, run_filter_full, run_tpmbm_final
from nllbench.measures.likelihood.trajectory_posterior import posterior_trajectory_runs
from nllbench.measures.point.metrics import identity_scores
from nllbench.measures.run.evaluate import EvaluationSettings
from nllbench.measures.tracks.tgospa import tgospa
from nllbench.simulation.scenarios import get_scenario, simulate, simulate_with_truth

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
