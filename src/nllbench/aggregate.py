"""Aggregation of metrics files into tidy tables and summary statistics over seeds.

Tables (long form, one value per row):

* per step: scenario, seed, filter, clutter, pd, cov_scale, temper, marginal, q, step, measure, value
* per run:  the same without ``step`` (run means over steps; NLL is +inf when
  any step is, with ``nll_finite_mean`` and ``nll_infinite_steps`` beside it)
* summary:  per (scenario, filter, clutter, pd, cov_scale, q, measure): the
  number of runs, mean, standard deviation, standard error and a 95 %
  Student-t confidence interval over seeds; ``n_infinite`` counts runs whose
  value is infinite (NLL +inf, MOTA -inf with no truth); mean and interval are
  then that infinity: nothing is averaged into NaN.

``q = 0`` marks measures that do not depend on the Murty budget (GOSPA, OSPA,
CLEAR MOT, IDF1, Theorem 1). Rows are sorted, so the same metrics give the
same bytes whatever order the jobs ran in.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from nllbench.io import METRIC_STEP_VARIABLES, read_metrics

KEYS = ["scenario", "filter", "clutter", "pd", "cov_scale", "temper", "marginal", "q"]
NLL_STEP = [
    "value",
    "lower",
    "upper",
    "localization",
    "false",
    "missed",
    "cardinality",
    "mixture",
    "association",
]
POINT_STEP = list(METRIC_STEP_VARIABLES[:-1])  # theorem1_excluded is a count, not a measure
POINT_RUN = ["gospa_mean", "ospa_mean", "mota", "motp", "idf1", "theorem1_max_abs_difference"]


def _files(dirs: Iterable[str | Path]) -> list[Path]:
    out = []
    for d in dirs:
        found = sorted(Path(d).glob("seed*.nc"))
        if not found:
            raise ValueError(f"{d}: no seed*.nc metrics files (did the evaluation job finish?)")
        out += found
    return out


def collect(dirs: Iterable[str | Path]):
    """(per-step table, per-run table) as pandas DataFrames from metrics directories."""
    import pandas as pd

    step_rows: list[dict] = []
    run_rows: list[dict] = []
    for f in _files(dirs):
        ds = read_metrics(f)
        settings = json.loads(ds.attrs["evaluation_settings"])
        if int(ds.attrs.get("seed", -1)) < 0:
            raise ValueError(f"{f}: attribute 'seed' is missing; a table row needs its run's seed")
        base = {
            "scenario": str(ds.attrs.get("scenario", "")),
            "seed": int(ds.attrs.get("seed", -1)),
            "filter": str(ds.attrs.get("filter", "")),
            "clutter": float(ds.attrs.get("clutter_rate", math.nan)),
            "pd": float(ds.attrs.get("p_detection", math.nan)),
            "cov_scale": float(settings["cov_scale"]),
            "temper": float(settings["temper"]),
            "marginal": str(settings["marginal"]),
        }
        steps = ds["step"].values
        for j, q in enumerate(ds["q"].values.tolist()):
            for term in NLL_STEP:
                name = "nll" if term == "value" else f"nll_{term}"
                vals = ds[f"nll_{term}"].values[:, j]
                step_rows += [
                    {**base, "q": q, "step": int(k), "measure": name, "value": float(x)}
                    for k, x in zip(steps, vals, strict=True)
                ]
            run_rows.append({**base, "q": q, "measure": "nll", "value": float(ds["nll_mean"].values[j])})
            run_rows.append(
                {
                    **base,
                    "q": q,
                    "measure": "nll_finite_mean",
                    "value": float(ds["nll_finite_mean"].values[j]),
                }
            )
            run_rows.append(
                {
                    **base,
                    "q": q,
                    "measure": "nll_infinite_steps",
                    "value": float(ds["nll_infinite_steps"].values[j]),
                }
            )
            for term in NLL_STEP[3:]:  # run means of the decomposition (+inf if a step is)
                vals = ds[f"nll_{term}"].values[:, j]
                mean = float(np.mean(vals)) if np.isfinite(vals).all() else math.inf
                run_rows.append({**base, "q": q, "measure": f"nll_{term}", "value": mean})
        if "nll_exact_value" in ds.variables and bool(ds["nll_exact_available"].values.all()):
            vals = ds["nll_exact_value"].values
            step_rows += [
                {**base, "q": 0, "step": int(k), "measure": "nll_exact", "value": float(x)}
                for k, x in zip(steps, vals, strict=True)
            ]
            mean = float(np.mean(vals)) if np.isfinite(vals).all() else math.inf
            run_rows.append({**base, "q": 0, "measure": "nll_exact", "value": mean})
        for name in POINT_STEP:
            vals = ds[name].values
            step_rows += [
                {**base, "q": 0, "step": int(k), "measure": name, "value": float(x)}
                for k, x in zip(steps, vals, strict=True)
            ]
        for name in POINT_RUN:
            run_rows.append({**base, "q": 0, "measure": name, "value": float(ds[name].values)})
        run_rows.append(
            {**base, "q": 0, "measure": "switches", "value": float(ds["clear_total_switches"].values)}
        )
    step_cols = [
        "scenario",
        "seed",
        "filter",
        "clutter",
        "pd",
        "cov_scale",
        "temper",
        "marginal",
        "q",
        "step",
        "measure",
        "value",
    ]
    run_cols = [c for c in step_cols if c != "step"]
    steps_df = pd.DataFrame(step_rows, columns=step_cols)
    runs_df = pd.DataFrame(run_rows, columns=run_cols)
    # q-independent measures come from every q's file: keep one copy
    steps_df = steps_df.drop_duplicates(subset=step_cols[:-1]).sort_values(step_cols[:-1], kind="stable")
    runs_df = runs_df.drop_duplicates(subset=run_cols[:-1]).sort_values(run_cols[:-1], kind="stable")
    return steps_df.reset_index(drop=True), runs_df.reset_index(drop=True)


def summarise(runs):
    """Mean and 95 % confidence interval over seeds, per setting and measure."""
    import pandas as pd
    from scipy.stats import t as student_t

    rows = []
    for key, group in runs.groupby(KEYS + ["measure"], sort=True, dropna=False):
        v = group["value"].to_numpy(dtype=float)
        if np.isnan(v).any():
            raise ValueError(f"runs: NaN value for {dict(zip(KEYS + ['measure'], key, strict=True))}")
        n = v.size
        n_inf = int(np.isinf(v).sum())
        row = dict(zip(KEYS + ["measure"], key, strict=True))
        if n_inf:
            signs = set(np.sign(v[np.isinf(v)]).tolist())
            if len(signs) > 1:
                raise ValueError(f"runs: both +inf and -inf values for {row}")
            mean = std = sem = lo = hi = math.inf * signs.pop()
        else:
            mean = float(v.mean())
            std = float(v.std(ddof=1)) if n > 1 else 0.0
            sem = std / math.sqrt(n) if n > 1 else 0.0
            half = float(student_t.ppf(0.975, n - 1)) * sem if n > 1 else 0.0
            lo, hi = mean - half, mean + half
        finite = v[np.isfinite(v)]
        row.update(
            n=n,
            n_infinite=n_inf,
            mean=mean,
            std=std,
            sem=sem,
            ci95_low=lo,
            ci95_high=hi,
            finite_mean=float(finite.mean()) if finite.size else math.inf,
        )
        rows.append(row)
    return pd.DataFrame(rows)


def write_tables(dirs: Iterable[str | Path], out_dir: str | Path, provenance: dict | None = None) -> dict:
    """Write steps.csv, steps.nc, runs.csv, runs.nc and summary.csv (+ provenance.json) into ``out_dir``."""
    import xarray as xr

    from nllbench.io import atomic_directory, software_versions

    dirs = list(dirs)
    steps, runs = collect(dirs)
    summary = summarise(runs)
    out_dir = Path(out_dir)
    with atomic_directory(out_dir) as tmp:
        steps.to_csv(tmp / "steps.csv", index=False)
        runs.to_csv(tmp / "runs.csv", index=False)
        summary.to_csv(tmp / "summary.csv", index=False)
        for name, df in (("steps", steps), ("runs", runs)):
            ds = xr.Dataset.from_dataframe(df.reset_index(drop=True).rename_axis("row"))
            ds.attrs.update(content="table", description=f"nllbench tidy {name} table (long form)")
            encoding = {c: {"zlib": True, "complevel": 4} for c in ds.data_vars if ds[c].dtype.kind in "fiu"}
            ds.to_netcdf(tmp / f"{name}.nc", engine="netcdf4", encoding=encoding)
        meta = {"software_versions": software_versions(), "config": provenance or {}, "sources": len(dirs)}
        (tmp / "provenance.json").write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
    return {"steps": len(steps), "runs": len(runs), "summary": len(summary)}


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
