"""Reading metrics files: each run's labels, its per-step records (for the cube) and its per-run rows.

One metrics file (``seed*.nc``, written by ``nllbench evaluate`` or ``nllbench
score``) is one run: a scenario, seed, filter, clutter rate, P_D and
calibration probe, evaluated at one or more Murty budgets Q. This module turns
it into

* per-step records ``(labels, measure, steps, values)`` for the cube
  (:func:`step_records`, :func:`nllbench.pipeline.cube.step_cube`);
* per-run rows ``{labels, q, measure, value}`` (:func:`run_rows`) and the sorted
  per-run table (:func:`runs_frame`): run means over steps; NLL is +inf when
  any step is, with ``nll_finite_mean`` and ``nll_infinite_steps`` beside it;
  T-GOSPA (its terms summed over steps), HOTA, DetA, AssA, LocA and the per-run
  calibration scores (:data:`~nllbench.measures.names.MEASURE_RUN`), and the
  proper scores' run means where the files have them
  (:data:`~nllbench.measures.names.PROPER_RUN`).

``q = 0`` marks measures that do not depend on the Murty budget (GOSPA, OSPA,
CLEAR MOT, IDF1, Theorem 1).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from nllbench.measures.names import (
    MEASURE_RUN,
    METRIC_STEP_VARIABLES,
    NLL_STEP,
    NLL_STEP_MEASURES,
    NLL_TERMS,
    OPTIONAL_VARIABLES,
    POINT_RUN,
    PROPER_RUN,
    PROPER_STEP,
    PTGOSPA_TERMS,
    TGOSPA_TERMS,
    TRAJECTORY_RUN,
)
from nllbench.pipeline.cube import LONG_COLUMNS

POINT_STEP = METRIC_STEP_VARIABLES[:-1]  # theorem1_excluded is a count, not a measure


def metrics_files(dirs: Iterable[str | Path]) -> list[Path]:
    """The metrics files (``seed*.nc``, sorted) of each directory; a directory without one is an error."""
    out = []
    for d in dirs:
        found = sorted(Path(d).glob("seed*.nc"))
        if not found:
            raise ValueError(f"{d}: no seed*.nc metrics files (did the evaluation job finish?)")
        out += found
    return out


def run_labels(ds, path) -> dict:
    """The labels of one metrics file's run: scenario, seed, filter, clutter, pd and the probe."""
    settings = json.loads(ds.attrs["evaluation_settings"])
    if int(ds.attrs.get("seed", -1)) < 0:
        raise ValueError(f"{path}: attribute 'seed' is missing; a table row needs its run's seed")
    return {
        "scenario": str(ds.attrs.get("scenario", "")),
        "seed": int(ds.attrs["seed"]),
        "filter": str(ds.attrs.get("filter", "")),
        "clutter": float(ds.attrs.get("clutter_rate", math.nan)),
        "pd": float(ds.attrs.get("p_detection", math.nan)),
        "cov_scale": float(settings["cov_scale"]),
        "temper": float(settings["temper"]),
        "marginal": str(settings["marginal"]),
    }


def step_records(ds, base: dict) -> list[tuple[dict, str, np.ndarray, np.ndarray]]:
    """One metrics file's per-step measures as (labels, measure, steps, values) records.

    ``labels`` are ``base`` (the run's keys) plus ``q`` (0 for measures that
    do not depend on the Murty budget); ``steps`` and ``values`` are (K,).
    """
    steps = np.asarray(ds["step"].values, dtype=np.int64)
    out = []
    for j, q in enumerate(ds["q"].values.tolist()):
        for term, name in zip(NLL_STEP, NLL_STEP_MEASURES, strict=True):
            out.append(({**base, "q": int(q)}, name, steps, ds[f"nll_{term}"].values[:, j]))
    if "nll_exact_value" in ds.variables and bool(ds["nll_exact_available"].values.all()):
        out.append(({**base, "q": 0}, "nll_exact", steps, ds["nll_exact_value"].values))
    for name in POINT_STEP:
        if name in ds.variables or name not in OPTIONAL_VARIABLES:  # a measure added later: absent
            out.append(({**base, "q": 0}, name, steps, ds[name].values))
    for name in PROPER_STEP:  # the proper scores, where the run has them
        if name in ds.variables:
            out.append(({**base, "q": 0}, name, steps, ds[name].values))
    return out


def run_rows(ds, base: dict) -> list[dict]:
    """One metrics file's per-run rows: the NLL per Q, then the Q-independent measures (q = 0)."""
    rows = _nll_run_rows(ds, base)
    rows += [
        {**base, "q": 0, "measure": name, "value": float(ds[name].values)}
        for name in POINT_RUN
        if name in ds.variables or name not in OPTIONAL_VARIABLES
    ]
    rows.append({**base, "q": 0, "measure": "switches", "value": float(ds["clear_total_switches"].values)})
    return rows + _measure_run_rows(ds, base) + _trajectory_run_rows(ds, base)


def _trajectory_run_rows(ds, base: dict) -> list[dict]:
    """Rows of the run's trajectory NLL (nats per run), when the metrics file has one.

    The value, its bounds and terms (:data:`~nllbench.measures.names.TRAJECTORY_RUN`) at the
    file's Q (``trajectory_nll_q``, the largest Q of its NLL); the exact value, when stored, at
    ``q = 0``. A PHD/CPHD run has none: no row, never a number.
    """
    if "trajectory_nll" not in ds.variables:
        return []
    q = int(ds["trajectory_nll_q"].values)
    rows = [{**base, "q": q, "measure": name, "value": float(ds[name].values)} for name in TRAJECTORY_RUN]
    if "trajectory_nll_exact" in ds.variables:
        rows.append(
            {
                **base,
                "q": 0,
                "measure": "trajectory_nll_exact",
                "value": float(ds["trajectory_nll_exact"].values),
            }
        )
    return rows


def _nll_run_rows(ds, base: dict) -> list[dict]:
    """Per Q: the run's NLL (+inf when a step is), its finite mean, infinite steps, term means."""
    rows = []
    for j, q in enumerate(ds["q"].values.tolist()):
        for measure in ("nll_mean", "nll_finite_mean", "nll_infinite_steps"):
            name = "nll" if measure == "nll_mean" else measure
            rows.append({**base, "q": q, "measure": name, "value": float(ds[measure].values[j])})
        for term in NLL_TERMS:
            mean = _finite_or_inf_mean(ds[f"nll_{term}"].values[:, j])
            rows.append({**base, "q": q, "measure": f"nll_{term}", "value": mean})
    if "nll_exact_value" in ds.variables and bool(ds["nll_exact_available"].values.all()):
        mean = _finite_or_inf_mean(ds["nll_exact_value"].values)
        rows.append({**base, "q": 0, "measure": "nll_exact", "value": mean})
    return rows


def _finite_or_inf_mean(values: np.ndarray) -> float:
    """The mean over steps, +inf when some step is infinite (an impossible truth)."""
    return float(np.mean(values)) if np.isfinite(values).all() else math.inf


def _measure_run_rows(ds, base: dict) -> list[dict]:
    """Rows (q = 0) of the run-level T-GOSPA, HOTA and calibration scores present in ``ds``.

    The T-GOSPA and PT-GOSPA terms are summed over steps (not averaged), so that per run
    ``sum(terms) == tgospa ** p`` (Garcia-Fernandez et al., IEEE TSP 2020, eq. (5)), and
    likewise for ``ptgospa`` (docs/pgospa.md).
    """
    rows = [
        {**base, "q": 0, "measure": name, "value": float(ds[name].values)}
        for name in MEASURE_RUN
        if name in ds.variables
    ]
    rows += [
        {**base, "q": 0, "measure": name, "value": float(np.sum(ds[name].values))}
        for name in (*TGOSPA_TERMS, *PTGOSPA_TERMS)
        if name in ds.variables
    ]
    rows += [  # the proper scores' run means (docs/scores.md), where the run has them
        {**base, "q": 0, "measure": name, "value": float(ds[name].values)}
        for name in PROPER_RUN
        if name in ds.variables
    ]
    return rows


def runs_frame(rows: list[dict]):
    """The per-run table: one row per (run, q, measure), sorted, each Q-independent value once."""
    import pandas as pd

    run_cols = [c for c in LONG_COLUMNS if c != "step"]
    runs_df = pd.DataFrame(rows, columns=run_cols)
    # q-independent measures come from every q's file: keep one copy
    runs_df = runs_df.drop_duplicates(subset=run_cols[:-1]).sort_values(run_cols[:-1], kind="stable")
    return runs_df.reset_index(drop=True)


def collect_timing(files: Iterable[str | Path]):
    """Concatenate timing CSVs (seconds of compute per item) with their job's path."""
    import pandas as pd

    frames = []
    for f in files:
        df = pd.read_csv(f)
        df.insert(0, "job", str(Path(f).with_suffix("")))
        frames.append(df)
    return (
        pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=["job", "item", "seconds"])
    )
