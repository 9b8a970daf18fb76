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
    """Per (scenario, filter, clutter, pd): runs, steps, mean GOSPA and RMS GOSPA.

    ``steps`` is the long per-step table (:func:`nllbench.pipeline.cube.long_table`
    of ``tables/steps.nc``; columns scenario, seed, filter, clutter, pd,
    cov_scale, temper, q, step, measure, value); rows of the unprobed posteriors (covariance scale 1, no
    tempering) are used. RMS GOSPA = sqrt(mean over steps and runs of d^2).
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
        rows.append(
            {
                **dict(zip(GROUP, key, strict=True)),
                "runs": int(grp["seed"].nunique()),
                "steps": int(v.size),
                "mean_gospa": float(v.mean()),
                "rms_gospa": float(np.sqrt(np.mean(v**2))),
            }
        )
    return pd.DataFrame(rows, columns=[*GROUP, "runs", "steps", "mean_gospa", "rms_gospa"])


def write_gospa_table(tables: str | Path, output: str | Path) -> int:
    """Read the GOSPA of ``tables/steps.nc`` (aggregate), write the table as CSV; return its rows."""
    from nllbench.pipeline.cube import read_long_table
    from nllbench.store import write_summary_csv

    table = gospa_table(read_long_table(tables, ["gospa"]))
    write_summary_csv(table.to_dict("records"), output)
    return len(table)
