"""The GOSPA table that the reference MATLAB code reports, from the per-step results.

A. F. Garcia-Fernandez's public multi-target tracking code scores its filters
by GOSPA (c = 10, p = 2, alpha = 2, on position) at every step of every Monte
Carlo run and reports the root mean square over steps and runs. Both that
RMS and the plain mean are tabulated per (scenario, filter, clutter, P_D).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

GROUP = ["scenario", "filter", "clutter", "pd"]


def gospa_table(steps):
    """Per (scenario, filter, clutter, pd): runs, steps, mean and RMS GOSPA with their standard errors.

    ``steps`` is the long per-step table (:func:`nllbench.pipeline.cube.long_table`
    of ``tables/steps.nc``; columns scenario, seed, filter, clutter, pd,
    cov_scale, temper, q, step, measure, value); rows of the unprobed posteriors (covariance scale 1, no
    tempering) are used. RMS GOSPA = sqrt(mean over steps and runs of d^2).

    Standard errors treat runs (seeds) as the independent units, since the
    steps of one run are correlated: ``mean_gospa_se`` is the sample standard
    deviation (ddof 1) of the per-run means of d over sqrt(runs) (weighted
    by each run's steps when they differ: the per-run means are combined
    with weights steps_r / steps, SE = sqrt(sum_r w_r^2) times that standard
    deviation); ``rms_gospa_se`` follows by the delta method,
    SE(sqrt(m)) = SE(m) / (2 sqrt(m)) with m the mean of d^2. With one run
    both are undefined and left empty (NaN).
    """
    import pandas as pd

    missing = [c for c in [*GROUP, "seed", "cov_scale", "temper", "measure", "value"] if c not in steps]
    if missing:
        raise ValueError(f"steps: expected a column {missing[0]!r} (the per-step table of aggregate)")
    g = steps[(steps["measure"] == "gospa") & (steps["cov_scale"] == 1.0) & (steps["temper"] == 1.0)]
    if g.empty:
        raise ValueError("steps: no GOSPA rows at covariance scale 1 (was the run evaluated?)")
    # a run evaluated at several Q repeats its (Q-independent) GOSPA rows: count each step once
    g = g.drop_duplicates(subset=[*GROUP, "seed", "step"])
    rows = []
    for key, grp in g.groupby(GROUP, sort=True):
        v = grp["value"].to_numpy(dtype=float)
        per_run = grp.assign(sq=grp["value"] ** 2).groupby("seed")[["value", "sq"]].agg(["mean", "size"])
        counts = per_run[("value", "size")].to_numpy(dtype=float)
        rms = float(np.sqrt(np.mean(v**2)))
        mean_se = _standard_error(per_run[("value", "mean")].to_numpy(dtype=float), counts)
        square_se = _standard_error(per_run[("sq", "mean")].to_numpy(dtype=float), counts)
        rows.append(
            {
                **dict(zip(GROUP, key, strict=True)),
                "runs": int(grp["seed"].nunique()),
                "steps": int(v.size),
                "mean_gospa": float(v.mean()),
                "mean_gospa_se": mean_se,
                "rms_gospa": rms,
                "rms_gospa_se": square_se / (2 * rms) if rms > 0 else (0.0 if square_se == 0 else np.nan),
            }
        )
    columns = [*GROUP, "runs", "steps", "mean_gospa", "mean_gospa_se", "rms_gospa", "rms_gospa_se"]
    return pd.DataFrame(rows, columns=columns)


def _standard_error(run_means: np.ndarray, steps: np.ndarray) -> float:
    """Standard error of the step-weighted mean of per-run means, runs independent (NaN for one run)."""
    if run_means.size < 2:
        return float("nan")
    w = steps / steps.sum()
    return float(np.std(run_means, ddof=1) * np.sqrt(np.sum(w**2)))


def write_gospa_table(tables: str | Path, output: str | Path) -> int:
    """Read the GOSPA of ``tables/steps.nc`` (aggregate), write the table as CSV; return its rows."""
    from nllbench.pipeline.cube import read_long_table
    from nllbench.store import write_summary_csv

    table = gospa_table(read_long_table(tables, ["gospa"]))
    write_summary_csv(table.to_dict("records"), output)
    return len(table)
