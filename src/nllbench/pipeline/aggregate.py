"""Aggregation: one pass over the metrics files, then every table of ``nllbench aggregate``.

This module only orchestrates; each job has its own module:

* :mod:`nllbench.pipeline.collect`: reading metrics files into per-step
  records and the per-run table (``runs.csv``, ``runs.nc``);
* :mod:`nllbench.pipeline.cube`: the per-step cube (``steps.nc``) and its long
  form (``steps.csv``, ``nllbench tables long``);
* :mod:`nllbench.pipeline.statistics`: the summary over seeds with bootstrap
  intervals (``summary.csv``), paired differences with the Wilcoxon test
  (``paired.csv``) and ranks with ties (``ranking.csv``);
* :mod:`nllbench.pipeline.pooling`: calibration counts pooled over seeds
  (``calibration.csv``, ``reliability.csv``) and the scored trackers'
  fill-ins (``fill_ins.csv``).

:func:`write_tables` writes them all, atomically, with ``provenance.json``.
Rows are sorted, so the same metrics give the same bytes whatever order the
jobs ran in. :func:`read_long_table` and :func:`collect_timing` are kept here
for the command line.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from nllbench.pipeline.collect import (
    collect_timing,
    metrics_files,
    run_labels,
    run_rows,
    runs_frame,
    step_records,
)
from nllbench.pipeline.cube import long_table, read_long_table, step_cube, step_values, write_step_cube
from nllbench.pipeline.pooling import (
    add_calibration_counts,
    add_fill_ins,
    fill_ins_frame,
    pooled_calibration,
    pooled_reliability,
)
from nllbench.pipeline.statistics import paired, ranking, summarise
from nllbench.store import read_metrics

__all__ = ["Collected", "collect", "collect_all", "collect_timing", "read_long_table", "write_tables"]


def collect(dirs: Iterable[str | Path]):
    """(per-step cube, per-run table) from metrics directories.

    The per-step cube is an ``xarray.Dataset``
    (:func:`~nllbench.pipeline.cube.step_cube`); its long form is
    :func:`~nllbench.pipeline.cube.long_table`. The per-run table is a long
    pandas DataFrame (:func:`~nllbench.pipeline.collect.runs_frame`).
    """
    collected = collect_all(dirs)
    return collected.steps, collected.runs


@dataclass(frozen=True)
class Collected:
    """What one pass over the metrics files gathers (:func:`collect_all`).

    Attributes
    ----------
    steps : xarray.Dataset
        The per-step cube (:func:`~nllbench.pipeline.cube.step_cube`).
    runs : pandas.DataFrame
        The per-run long table (:func:`~nllbench.pipeline.collect.runs_frame`).
    counts : dict
        ``{setting: {seed: CalibrationCounts}}``
        (:func:`~nllbench.pipeline.pooling.collect_calibration_counts`).
    fill_ins : pandas.DataFrame
        The scored trackers' fill-in records (:func:`~nllbench.pipeline.pooling.fill_ins_table`).
    """

    steps: object
    runs: object
    counts: dict
    fill_ins: object


def collect_all(dirs: Iterable[str | Path]) -> Collected:
    """:func:`collect`, the calibration counts and the fill-ins in one pass.

    Each metrics file is read once. The counts are those of
    :func:`~nllbench.pipeline.pooling.collect_calibration_counts`, the fill-ins
    those of :func:`~nllbench.pipeline.pooling.fill_ins_table`.
    """
    records: list[tuple] = []
    rows: list[dict] = []
    counts: dict[tuple, dict[int, object]] = {}
    fill_ins: dict[tuple, list[int]] = {}
    for f in metrics_files(dirs):
        ds = read_metrics(f)
        base = run_labels(ds, f)
        records += step_records(ds, base)
        rows += run_rows(ds, base)
        add_calibration_counts(counts, ds, base)
        add_fill_ins(fill_ins, ds.attrs)
    return Collected(step_cube(records), runs_frame(rows), counts, fill_ins_frame(fill_ins))


def write_tables(
    dirs: Iterable[str | Path], out_dir: str | Path, provenance: dict | None = None, long_csv: bool = False
) -> dict:
    """Write steps.nc (the per-step cube), runs.csv, runs.nc, summary.csv, paired.csv,
    ranking.csv, fill_ins.csv, calibration.csv and reliability.csv, and provenance.json
    into ``out_dir``; steps.csv (the long per-step table) too when ``long_csv``."""
    from nllbench.store import (
        atomic_directory,
        provenance_record,
        write_csv,
        write_json,
        write_long_table_nc,
    )

    dirs = list(dirs)
    collected = collect_all(dirs)
    steps, runs, counts = collected.steps, collected.runs, collected.counts
    summary = summarise(runs)
    pairs = paired(runs)
    ranks = ranking(pairs)
    calibration, reliability = pooled_calibration(counts), pooled_reliability(counts)
    csvs = {
        "runs": runs,
        "summary": summary,
        "paired": pairs,
        "ranking": ranks,
        "fill_ins": collected.fill_ins,
        "calibration": calibration,
        "reliability": reliability,
    }
    with atomic_directory(out_dir) as tmp:
        write_step_cube(steps, tmp / "steps.nc")
        if long_csv:
            write_csv(long_table(steps), tmp / "steps.csv")
        for name, df in csvs.items():
            write_csv(df, tmp / f"{name}.csv")
        write_long_table_nc(runs, tmp / "runs.nc", "nllbench tidy runs table (long form)")
        write_json(provenance_record(provenance, sources=len(dirs)), tmp / "provenance.json")
    return {
        "steps": step_values(steps),
        "runs": len(runs),
        "summary": len(summary),
        "paired": len(pairs),
        "calibration": len(calibration),
        "reliability": len(reliability),
    }
