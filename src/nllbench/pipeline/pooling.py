"""Pooling over seeds: the runs' calibration counts added per setting, and the scored trackers' fill-ins.

* ``tables/calibration.csv`` (:func:`pooled_calibration`): per setting (no
  ``q``), the calibration scores of the counts pooled over seeds, ANEES with
  its chi-square interval.
* ``tables/reliability.csv`` (:func:`pooled_reliability`): per setting and bin
  of r, the pooled reliability-diagram counts.
* ``tables/fill_ins.csv`` (:func:`fill_ins_table`): the fill-in records of the
  trackers scored by ``nllbench score``, one row per distinct record.

The counts are sums of integers and of per-pair terms, so pooling is exact
and independent of the order in which the runs are added.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from nllbench.pipeline.collect import metrics_files, run_labels
from nllbench.pipeline.cube import KEYS
from nllbench.store import read_metrics

CALIBRATION_KEYS = [k for k in KEYS if k != "q"]  # the panels do not depend on the Murty budget


def collect_calibration_counts(dirs: Iterable[str | Path]) -> dict[tuple, dict[int, object]]:
    """Each run's :class:`~nllbench.measures.calibration.CalibrationCounts`, per setting and seed.

    Returns ``{setting: {seed: counts}}`` with ``setting`` the values of
    :data:`CALIBRATION_KEYS`. A run evaluated at several Q (one file per Q)
    has the same counts in each file and is taken once; files without the
    panel (written before it existed) are skipped.
    """
    out: dict[tuple, dict[int, object]] = {}
    for f in metrics_files(dirs):
        ds = read_metrics(f)
        add_calibration_counts(out, ds, run_labels(ds, f))
    return out


def add_calibration_counts(out: dict, ds, labels: dict) -> None:
    """Add one metrics dataset's counts to ``out`` (see :func:`collect_calibration_counts`)."""
    from nllbench.store import read_calibration_counts

    if "reliability_count" not in ds.variables:
        return
    key = tuple(labels[k] for k in CALIBRATION_KEYS)
    out.setdefault(key, {}).setdefault(labels["seed"], read_calibration_counts(ds))


def pooled_calibration(counts: dict[tuple, dict[int, object]]):
    """Calibration scores pooled over seeds (tables/calibration.csv), long form.

    Per setting, the runs' counts are added (exact: sums of integers and of
    per-pair terms), and the scores are those of the pooled counts: ``brier``
    (mean (r - o)^2), ``ece`` (Naeini et al. 2015), ``anees`` (average NEES)
    with ``anees_ci95_low``/``anees_ci95_high`` = chi2_{0.025, 0.975}(N d) / N
    for the pooled number N of pairs (Bar-Shalom, Li, Kirubarajan 2001, ch. 5),
    ``nees_inside95_share`` (0.95 when consistent), ``cardinality_coverage90``
    (0.90 when calibrated), ``cardinality_log_score`` (mean -log P(n), +inf
    when some step's P(n) = 0), and the counts ``bernoullis``, ``nees_pairs``,
    ``nees_dof``, ``cardinality_steps``, ``unassociated``. A score that is
    undefined (no Bernoulli or no matched pair: PHD, CPHD) has no row.
    Columns: :data:`CALIBRATION_KEYS`, ``n_runs``, ``measure``, ``value``.
    """
    import pandas as pd

    rows = []
    for key in sorted(counts):
        runs = counts[key]
        total = sum((runs[s] for s in sorted(runs)[1:]), runs[min(runs)])
        interval = total.anees_interval()
        scores = {
            "bernoullis": total.bernoullis,
            "brier": total.brier,
            "ece": total.ece,
            "nees_pairs": total.nees_pairs,
            "nees_dof": total.nees_dof,
            "anees": total.anees,
            "anees_ci95_low": None if interval is None else interval[0],
            "anees_ci95_high": None if interval is None else interval[1],
            "nees_inside95_share": total.nees_inside_share,
            "cardinality_steps": total.card_steps,
            "cardinality_coverage90": total.cardinality_coverage,
            "cardinality_log_score": total.cardinality_log_score,
            "unassociated": total.unassociated,
        }
        base = dict(zip(CALIBRATION_KEYS, key, strict=True), n_runs=len(runs))
        rows += [{**base, "measure": m, "value": float(v)} for m, v in scores.items() if v is not None]
    return pd.DataFrame(rows, columns=CALIBRATION_KEYS + ["n_runs", "measure", "value"])


def pooled_reliability(counts: dict[tuple, dict[int, object]]):
    """Reliability diagram data pooled over seeds (tables/reliability.csv).

    One row per setting and non-empty bin of r (empty bins have no row):
    ``bin_low``/``bin_high`` (edges), ``count`` (Bernoullis), ``r_sum``,
    ``explained`` (those explaining a true object), ``mean_r`` = r_sum / count
    and ``frequency`` = explained / count, each the sum over the seeds' runs.
    """
    import pandas as pd

    from nllbench.measures.calibration import RELIABILITY_BINS

    rows = []
    for key in sorted(counts):
        runs = counts[key]
        count = sum(runs[s].bin_count for s in sorted(runs))
        r_sum = sum(runs[s].bin_r_sum for s in sorted(runs))
        explained = sum(runs[s].bin_explained for s in sorted(runs))
        base = dict(zip(CALIBRATION_KEYS, key, strict=True), n_runs=len(runs))
        for b in np.flatnonzero(count):
            rows.append(
                {
                    **base,
                    "bin_low": b / RELIABILITY_BINS,
                    "bin_high": (b + 1) / RELIABILITY_BINS,
                    "count": int(count[b]),
                    "r_sum": float(r_sum[b]),
                    "explained": int(explained[b]),
                    "mean_r": float(r_sum[b] / count[b]),
                    "frequency": float(explained[b] / count[b]),
                }
            )
    cols = CALIBRATION_KEYS + ["n_runs", "bin_low", "bin_high", "count", "r_sum", "explained", "mean_r"]
    return pd.DataFrame(rows, columns=cols + ["frequency"])


FILL_IN_COLUMNS = ["scenario", "filter", "clutter", "pd", "cov_scale", "q", "seeds", "fill_ins"]


def fill_ins_table(dirs: Iterable[str | Path]):
    """The fill-ins of every scored tracker (``nllbench score``): one row per distinct record.

    Reads each metrics file's ``fill_ins`` attribute (JSON; files of the
    reference filters have none and give no row). Rows group the runs of a
    (scenario, filter, clutter, pd, cov_scale, q) whose records are equal;
    ``q`` is the job's largest Q (the one a fitted rate was fitted at),
    ``seeds`` the runs' seeds (space-separated), ``fill_ins`` the record with
    sorted keys.
    """
    import xarray as xr

    groups: dict[tuple, list[int]] = {}
    for f in metrics_files(dirs):
        with xr.open_dataset(f, engine="netcdf4") as ds:
            add_fill_ins(groups, dict(ds.attrs))
    return fill_ins_frame(groups)


def add_fill_ins(groups: dict, attrs) -> None:
    """Add one metrics file's fill-in record (if any) to ``groups`` (see :func:`fill_ins_table`)."""
    if "fill_ins" not in attrs:
        return
    settings = json.loads(attrs["evaluation_settings"])
    key = (
        str(attrs.get("scenario", "")),
        str(attrs.get("filter", "")),
        float(attrs.get("clutter_rate", math.nan)),
        float(attrs.get("p_detection", math.nan)),
        float(settings["cov_scale"]),
        int(max(settings["qs"])),
        json.dumps(json.loads(attrs["fill_ins"]), sort_keys=True),
    )
    groups.setdefault(key, []).append(int(attrs.get("seed", -1)))


def fill_ins_frame(groups: dict):
    """The fill-ins table (columns :data:`FILL_IN_COLUMNS`) of the groups :func:`add_fill_ins` made."""
    import pandas as pd

    rows = [(*k[:6], " ".join(map(str, sorted(v))), k[6]) for k, v in sorted(groups.items())]
    return pd.DataFrame(rows, columns=FILL_IN_COLUMNS)
