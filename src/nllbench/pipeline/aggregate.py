"""Aggregation of metrics files into tidy tables and summary statistics over seeds.

Tables (the per-run and later ones in long form, one value per row):

* per step: a labelled cube (:func:`step_cube`, ``tables/steps.nc``) with
  dimensions scenario, filter, clutter, pd, cov_scale, temper, marginal, q,
  seed, step and one variable per measure; absent cells are masked, never a
  value. Its long form (scenario, seed, filter, clutter, pd, cov_scale,
  temper, marginal, q, step, measure, value) is derived on demand
  (:func:`long_table`, ``nllbench tables long``).
* per run:  the same without ``step`` (run means over steps; NLL is +inf when
  any step is, with ``nll_finite_mean`` and ``nll_infinite_steps`` beside it)
* summary:  per (scenario, filter, clutter, pd, cov_scale, q, measure): the
  number of runs, mean, standard deviation, standard error, a seeded 95 %
  percentile-bootstrap interval of the mean, median and interquartile range,
  and the same over the finite runs only (:func:`summarise`); ``n_infinite``
  counts runs whose value is infinite (NLL +inf, MOTA -inf with no truth):
  nothing is averaged into NaN.
* paired:   per setting, measure and pair of filters, the mean paired
  difference over seeds with its bootstrap interval, the Wilcoxon signed-rank
  p-value and the number of seeds (:func:`paired`).
* ranking:  per setting and measure, the filters' ranks with ties where the
  paired intervals cover zero (:func:`ranking`).
* calibration: per setting (no ``q``), the calibration scores of the counts
  pooled over seeds, ANEES with its chi-square interval (:func:`pooled_calibration`).
* reliability: per setting and bin of r, the pooled reliability-diagram
  counts (:func:`pooled_reliability`).

The per-run table also carries T-GOSPA (with its terms summed over steps),
HOTA, DetA, AssA, LocA and the per-run calibration scores (:data:`MEASURE_RUN`).

``q = 0`` marks measures that do not depend on the Murty budget (GOSPA, OSPA,
CLEAR MOT, IDF1, Theorem 1). Rows are sorted, so the same metrics give the
same bytes whatever order the jobs ran in.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from nllbench.measures.names import (
    MEASURE_RUN,
    METRIC_STEP_VARIABLES,
    NLL_STEP,
    NLL_STEP_MEASURES,
    NLL_TERMS,
    POINT_RUN,
    TGOSPA_TERMS,
)
from nllbench.store import read_metrics

KEYS = ["scenario", "filter", "clutter", "pd", "cov_scale", "temper", "marginal", "q"]
POINT_STEP = METRIC_STEP_VARIABLES[:-1]  # theorem1_excluded is a count, not a measure


def _files(dirs: Iterable[str | Path]) -> list[Path]:
    out = []
    for d in dirs:
        found = sorted(Path(d).glob("seed*.nc"))
        if not found:
            raise ValueError(f"{d}: no seed*.nc metrics files (did the evaluation job finish?)")
        out += found
    return out


def collect(dirs: Iterable[str | Path]):
    """(per-step cube, per-run table) from metrics directories.

    The per-step cube is an ``xarray.Dataset`` (:func:`step_cube`); its long
    form is :func:`long_table`. The per-run table is a long pandas DataFrame
    (:func:`runs_frame`).
    """
    collected = collect_all(dirs)
    return collected.steps, collected.runs


@dataclass(frozen=True)
class Collected:
    """What one pass over the metrics files gathers (:func:`collect_all`).

    Attributes
    ----------
    steps : xarray.Dataset
        The per-step cube (:func:`step_cube`).
    runs : pandas.DataFrame
        The per-run long table (:func:`runs_frame`).
    counts : dict
        ``{setting: {seed: CalibrationCounts}}`` (:func:`collect_calibration_counts`).
    fill_ins : pandas.DataFrame
        The scored trackers' fill-in records (:func:`fill_ins_table`).
    """

    steps: object
    runs: object
    counts: dict
    fill_ins: object


def collect_all(dirs: Iterable[str | Path]) -> Collected:
    """:func:`collect`, :func:`collect_calibration_counts` and :func:`fill_ins_table` in one pass.

    Each metrics file is read once.
    """
    step_records: list[tuple] = []
    run_rows: list[dict] = []
    counts: dict[tuple, dict[int, object]] = {}
    fill_ins: dict[tuple, list[int]] = {}
    for f in _files(dirs):
        ds = read_metrics(f)
        base = _run_labels(ds, f)
        step_records += _step_records(ds, base)
        run_rows += _run_rows(ds, base)
        _add_calibration_counts(counts, ds, base)
        _add_fill_ins(fill_ins, ds.attrs)
    return Collected(step_cube(step_records), runs_frame(run_rows), counts, _fill_ins_frame(fill_ins))


def _run_labels(ds, path) -> dict:
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


def _finite_or_inf_mean(values: np.ndarray) -> float:
    """The mean over steps, +inf when some step is infinite (an impossible truth)."""
    return float(np.mean(values)) if np.isfinite(values).all() else math.inf


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


def _run_rows(ds, base: dict) -> list[dict]:
    """One metrics file's per-run rows: the NLL per Q, then the Q-independent measures (q = 0)."""
    rows = _nll_run_rows(ds, base)
    rows += [{**base, "q": 0, "measure": name, "value": float(ds[name].values)} for name in POINT_RUN]
    rows.append({**base, "q": 0, "measure": "switches", "value": float(ds["clear_total_switches"].values)})
    return rows + _measure_run_rows(ds, base)


def runs_frame(rows: list[dict]):
    """The per-run table: one row per (run, q, measure), sorted, each Q-independent value once."""
    import pandas as pd

    run_cols = [c for c in LONG_COLUMNS if c != "step"]
    runs_df = pd.DataFrame(rows, columns=run_cols)
    # q-independent measures come from every q's file: keep one copy
    runs_df = runs_df.drop_duplicates(subset=run_cols[:-1]).sort_values(run_cols[:-1], kind="stable")
    return runs_df.reset_index(drop=True)


# ---------------------------------------------------------------------------
# the per-step cube
# ---------------------------------------------------------------------------

#: Columns of the long per-step table, in order; rows sort by all but ``value``.
LONG_COLUMNS = [
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
#: Dimensions of the per-step cube, in order. Measures that do not depend on
#: the Murty budget (``q = 0`` in the long table) have every dimension but ``q``.
CUBE_DIMS = ("scenario", "filter", "clutter", "pd", "cov_scale", "temper", "marginal", "q", "seed", "step")
#: mask variable of each family of measures (the measures of a family are written together)
_MASKS = {"nll": "nll_present", "nll_exact": "nll_exact_present", "point": "present"}
_COORD_TYPES = {"clutter": float, "pd": float, "cov_scale": float, "temper": float, "q": int, "seed": int}


def _family(measure: str) -> str:
    if measure in NLL_STEP_MEASURES:
        return "nll"
    return "nll_exact" if measure == "nll_exact" else "point"


def _step_records(ds, base: dict) -> list[tuple[dict, str, np.ndarray, np.ndarray]]:
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
        out.append(({**base, "q": 0}, name, steps, ds[name].values))
    return out


def step_cube(records: Iterable[tuple[dict, str, np.ndarray, np.ndarray]]):
    """The per-step results as a labelled cube (an ``xarray.Dataset``).

    Dimensions :data:`CUBE_DIMS`, each coordinate sorted. One float64 variable
    per measure: the NLL and its terms (``nll``, ``nll_lower``, ...) over
    every dimension; ``nll_exact`` and the point measures (GOSPA, OSPA, CLEAR
    MOT counts, Theorem 1, ...) over every dimension but ``q`` (they do not
    depend on the Murty budget). A cell exists when a metrics file gave it a
    value: the boolean variable named by a measure's ``ancillary_variables``
    attribute (``nll_present``, ``nll_exact_present`` or ``present``) is True
    there. Absent cells (a probe not evaluated at that Q, steps past a shorter
    scenario's end, an exact NLL that was not tractable) hold NaN, the
    variable's NetCDF ``_FillValue``: read them only through the mask
    (:func:`long_table` does). A measure given twice for one cell (a
    Q-independent measure from each Q's file) keeps its first value, as the
    long table did.

    Parameters
    ----------
    records : iterable of (labels, measure, steps, values)
        As made by ``_step_records``: ``labels`` maps every dimension but
        ``step`` to its label; ``steps`` (K,) int and ``values`` (K,) float.
    """
    import xarray as xr

    records = list(records)
    labels = {
        d: sorted({_label(d, r[0][d]) for r in records} - ({0} if d == "q" else set()))
        for d in CUBE_DIMS[:-1]
    }
    labels["step"] = sorted({int(k) for r in records for k in r[2]})
    if not labels["q"]:
        labels["q"] = []
    index = {d: {v: i for i, v in enumerate(labels[d])} for d in CUBE_DIMS}
    measures = sorted({r[1] for r in records})
    dims = {
        m: CUBE_DIMS if _family(m) == "nll" else tuple(d for d in CUBE_DIMS if d != "q") for m in measures
    }
    shape = {m: tuple(len(labels[d]) for d in dims[m]) for m in measures}
    data = {m: np.full(shape[m], np.nan) for m in measures}
    # first appearance in the sorted measures, not set order: the same cube gives the same bytes
    masks = dict.fromkeys(_family(m) for m in measures)
    seen = {m: np.zeros(shape[m], dtype=bool) for m in measures}
    for lab, m, steps, values in records:
        idx = tuple(index[d][_label(d, lab[d])] for d in dims[m][:-1])
        k = np.array([index["step"][int(s)] for s in steps], dtype=np.int64)
        fresh = ~seen[m][idx][k]
        data[m][idx][k[fresh]] = np.asarray(values, dtype=float)[fresh]
        seen[m][idx][k] = True
    ds = xr.Dataset(coords={d: np.asarray(labels[d], dtype=_dtype(d)) for d in CUBE_DIMS})
    for m in measures:
        family = _family(m)
        if masks[family] is None:
            masks[family] = seen[m]
        elif not np.array_equal(masks[family], seen[m]):
            raise ValueError(f"step_cube: measure {m!r} exists in other cells than its family {family!r}")
        ds[m] = (dims[m], data[m], {"ancillary_variables": _MASKS[family]})
    for family, mask in masks.items():
        fam_dims = CUBE_DIMS if family == "nll" else tuple(d for d in CUBE_DIMS if d != "q")
        ds[_MASKS[family]] = (fam_dims, mask, {"long_name": f"cells that exist for the {family} measures"})
    ds.attrs.update(
        content="step cube",
        description="nllbench per-step results: one variable per measure; absent cells are NaN "
        "(_FillValue) and False in the variable named by the measure's ancillary_variables",
    )
    return ds


def _label(dim: str, value):
    return _COORD_TYPES.get(dim, str)(value)


def _dtype(dim: str):
    return (
        {float: np.float64, int: np.int64}.get(_COORD_TYPES.get(dim), object) if dim != "step" else np.int64
    )


def long_table(cube, measures: Iterable[str] | None = None):
    """The long per-step table (columns :data:`LONG_COLUMNS`) of a cube's existing cells.

    Every cell whose mask is True gives one row, with ``q = 0`` for measures
    without a ``q`` dimension; rows are sorted by every column but ``value``.
    ``measures`` restricts the table to those measures (all by default).
    """
    import pandas as pd

    names = [v for v in cube.data_vars if "ancillary_variables" in cube[v].attrs]
    if measures is not None:
        wanted = list(measures)
        unknown = [m for m in wanted if m not in names]
        if unknown:
            raise ValueError(
                f"measures: expected names of the cube's measures {sorted(names)}, got {unknown[0]!r}"
            )
        names = wanted
    frames = []
    for m in names:
        var = cube[m]
        mask = cube[var.attrs["ancillary_variables"]].transpose(*var.dims).values.astype(bool)
        pos = np.nonzero(mask)
        cols = {d: cube[d].values[p] for d, p in zip(var.dims, pos, strict=True)}
        if "q" not in var.dims:
            cols["q"] = np.zeros(pos[0].size, dtype=np.int64)
        cols["measure"] = np.full(pos[0].size, m, dtype=object)
        cols["value"] = var.values[pos]
        frames.append(pd.DataFrame(cols))
    columns = {c: pd.Series(dtype=_dtype(c) if c in CUBE_DIMS else float) for c in LONG_COLUMNS}
    df = pd.concat(frames, ignore_index=True)[LONG_COLUMNS] if frames else pd.DataFrame(columns)
    # labels as pandas' default string type, numbers as in the metrics files
    df = df.astype({c: (str if _dtype(c) is object else _dtype(c)) for c in [*CUBE_DIMS, "measure"]})
    df = df.astype({"value": float})
    return df.sort_values(LONG_COLUMNS[:-1], kind="stable").reset_index(drop=True)


def step_values(cube) -> int:
    """Number of existing (measure, cell) values of a cube: the rows of its long table."""
    return sum(
        int(cube[cube[v].attrs["ancillary_variables"]].values.sum())
        for v in cube.data_vars
        if "ancillary_variables" in cube[v].attrs
    )


def write_step_cube(cube, path: str | Path) -> None:
    """Write a cube to NetCDF (:func:`nllbench.store.write_step_cube`)."""
    from nllbench.store import write_step_cube as write

    write(cube, path)


def read_step_cube(path: str | Path):
    """Read ``tables/steps.nc`` (loaded into memory), checking that it is a step cube."""
    from nllbench.store import read_step_cube as read

    return read(path, CUBE_DIMS)


def read_long_table(tables: str | Path, measures: Iterable[str] | None = None):
    """The long per-step table of an aggregate output directory (from ``steps.nc``)."""
    return long_table(read_step_cube(Path(tables) / "steps.nc"), measures)


def _measure_run_rows(ds, base: dict) -> list[dict]:
    """Rows (q = 0) of the run-level T-GOSPA, HOTA and calibration scores present in ``ds``.

    The T-GOSPA terms are summed over steps (not averaged), so that per run
    ``sum(terms) == tgospa ** p`` (Garcia-Fernandez et al., IEEE TSP 2020, eq. (5)).
    """
    rows = [
        {**base, "q": 0, "measure": name, "value": float(ds[name].values)}
        for name in MEASURE_RUN
        if name in ds.variables
    ]
    rows += [
        {**base, "q": 0, "measure": name, "value": float(np.sum(ds[name].values))}
        for name in TGOSPA_TERMS
        if name in ds.variables
    ]
    return rows


BOOTSTRAP_SEED = 20210916  # fixed: the same runs give the same intervals, whatever the job order
BOOTSTRAP_RESAMPLES = 4000
# the direction in which each measure is better (rankings, paired comparisons)
BETTER_LOW = {
    "nll": True,
    "nll_exact": True,
    "gospa_mean": True,
    "ospa_mean": True,
    "mota": False,
    "motp": True,
    "idf1": False,
    "tgospa": True,
    "hota": False,
    "deta": False,
    "assa": False,
    "loca": False,
    "brier": True,
    "ece": True,
    "cardinality_log_score_mean": True,
}
# scores whose ideal is a value, not an end (ANEES: the state dimension; inside-ellipse share:
# 0.95; interval coverage: 0.90): compared in paired.csv, never ranked
PAIRED_ONLY = ["anees", "nees_inside95_share", "cardinality_coverage90"]
RANKED = ["nll", "gospa_mean", "mota"]  # measures ranked in tables/ranking.csv and the leaderboard


def rank_agreement(summary, q: int, measures: Sequence[str]):
    """Mean Kendall tau between the filter rankings of each pair of ``measures``, over settings.

    Per (scenario, clutter, pd) at covariance scale 1, each measure ranks the
    filters by its summary mean (the NLL at ``q`` by its finite mean, a filter
    with infinite runs last; better-is-higher measures negated), and
    ``scipy.stats.kendalltau`` compares every two rankings. Returns the
    measures present in ``summary`` (in the given order) and the matrix of
    mean tau over settings (NaN where no setting has three filters).
    """
    from scipy.stats import kendalltau

    present = set(summary["measure"])
    measures = [m for m in measures if m in present]  # metrics files before T-GOSPA/HOTA lack them
    taus = {(a, b): [] for a in measures for b in measures}
    base = summary[summary["cov_scale"] == 1.0]
    for _, g in base.groupby(["scenario", "clutter", "pd"], sort=True):
        table = {}
        for m in measures:
            sub = g[(g["measure"] == m) & (g["q"] == (q if m == "nll" else 0))].sort_values("filter")
            vals = sub["finite_mean"].to_numpy() if m == "nll" else sub["mean"].to_numpy()
            if m == "nll":  # a filter with infinite runs ranks last
                vals = np.where(sub["n_infinite"].to_numpy() > 0, np.inf, vals)
            table[m] = vals if BETTER_LOW[m] else -vals
        n = {len(v) for v in table.values()}
        if len(n) != 1 or n.pop() < 3:
            continue
        for a in measures:
            for b in measures:
                tau = kendalltau(table[a], table[b]).statistic
                if np.isfinite(tau):
                    taus[(a, b)].append(tau)
    mat = np.array([[np.mean(taus[(a, b)]) if taus[(a, b)] else np.nan for b in measures] for a in measures])
    return measures, mat


def quantile(values, p: float) -> float:
    """Linear-interpolation quantile (numpy's default) that is exact with infinite values.

    ``numpy.quantile`` interpolates ``inf - inf`` into NaN; here two equal
    neighbours give that value and a finite/infinite pair gives the infinite
    one (or the finite one when the position falls on it exactly).

    Parameters
    ----------
    values : (n,) array_like, n >= 1, no NaN
    p : float in [0, 1]
    """
    v = np.sort(np.asarray(values, dtype=float))
    h = (v.size - 1) * p
    lo, hi = int(math.floor(h)), int(math.ceil(h))
    if v[lo] == v[hi] or h == lo:
        return float(v[lo])
    if np.isinf(v[lo]) or np.isinf(v[hi]):
        return float(v[hi] if np.isinf(v[hi]) else v[lo])
    return float(v[lo] + (h - lo) * (v[hi] - v[lo]))


def bootstrap_mean_interval(values, level: float = 0.95, seed: int = BOOTSTRAP_SEED) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean (Efron & Tibshirani 1993, ch. 13).

    Seeds are resampled with replacement ``BOOTSTRAP_RESAMPLES`` times from a
    generator seeded with ``seed``, so the interval is reproducible. The
    interval lies within [min, max] of the data (never below zero for a
    non-negative quantity); a resample that draws an infinite run has an
    infinite mean, so infinities reach the interval only as often as they
    would reach a rerun.

    Parameters
    ----------
    values : (n,) array_like, no NaN, no mixed signs of infinity
    """
    v = np.asarray(values, dtype=float)
    if v.size == 1:
        return float(v[0]), float(v[0])
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, v.size, size=(BOOTSTRAP_RESAMPLES, v.size))
    means = v[idx].mean(axis=1)  # one sign of infinity at most: an infinite draw gives that infinity
    alpha = (1.0 - level) / 2.0
    return quantile(means, alpha), quantile(means, 1.0 - alpha)


def _stats(v: np.ndarray, where: dict) -> dict:
    """Summary statistics of one group of runs (see :func:`summarise`)."""
    n = v.size
    n_inf = int(np.isinf(v).sum())
    if n_inf and len(set(np.sign(v[np.isinf(v)]).tolist())) > 1:
        raise ValueError(f"runs: both +inf and -inf values for {where}")
    if n_inf:
        mean = std = sem = math.inf * float(np.sign(v[np.isinf(v)][0]))
    else:
        mean = float(v.mean())
        std = float(v.std(ddof=1)) if n > 1 else 0.0
        sem = std / math.sqrt(n) if n > 1 else 0.0
    lo, hi = bootstrap_mean_interval(v)
    finite = v[np.isfinite(v)]
    if finite.size:
        f_lo, f_hi = bootstrap_mean_interval(finite)
        f_stats = dict(
            finite_mean=float(finite.mean()),
            finite_median=quantile(finite, 0.5),
            finite_q25=quantile(finite, 0.25),
            finite_q75=quantile(finite, 0.75),
            finite_ci95_low=f_lo,
            finite_ci95_high=f_hi,
        )
    else:
        f_stats = dict.fromkeys(
            [
                "finite_mean",
                "finite_median",
                "finite_q25",
                "finite_q75",
                "finite_ci95_low",
                "finite_ci95_high",
            ],
            math.nan,
        )
    return dict(
        n=n,
        n_infinite=n_inf,
        mean=mean,
        std=std,
        sem=sem,
        ci95_low=lo,
        ci95_high=hi,
        median=quantile(v, 0.5),
        q25=quantile(v, 0.25),
        q75=quantile(v, 0.75),
        min=float(v.min()),
        max=float(v.max()),
        **f_stats,
    )


def summarise(runs):
    """Summary statistics over seeds, per setting and measure.

    Columns: the keys, ``measure``, ``n`` (runs), ``n_infinite`` (runs whose
    value is infinite), ``mean``, ``std``, ``sem``, ``ci95_low``/``ci95_high``
    (seeded percentile bootstrap interval of the mean, see
    :func:`bootstrap_mean_interval`), ``median``, ``q25``/``q75`` (the
    interquartile range), ``min``, ``max``, and the same over the finite runs
    only (``finite_mean``, ``finite_median``, ``finite_q25``, ``finite_q75``,
    ``finite_ci95_low``, ``finite_ci95_high``; empty when every run is
    infinite). With an infinite run, ``mean``, ``std`` and ``sem`` are that
    infinity; quantiles are exact order statistics (finite while fewer than
    that share of runs is infinite). Nothing is NaN except the finite-only
    columns of an all-infinite group.
    """
    import pandas as pd

    rows = []
    for key, group in runs.groupby(KEYS + ["measure"], sort=True, dropna=False):
        v = group["value"].to_numpy(dtype=float)
        where = dict(zip(KEYS + ["measure"], key, strict=True))
        if np.isnan(v).any():
            raise ValueError(f"runs: NaN value for {where}")
        rows.append({**where, **_stats(v, where)})
    return pd.DataFrame(rows)


PAIR_KEYS = ["scenario", "clutter", "pd", "cov_scale", "temper", "marginal", "q", "measure"]


def _rank_proxy(d: np.ndarray) -> np.ndarray:
    """Infinite differences replaced by finite values beyond every finite one, signs kept.

    The Wilcoxon signed-rank statistic depends only on the signs and the ranks
    of |d|, which this replacement preserves.
    """
    finite = d[np.isfinite(d)]
    big = 2.0 * (float(np.abs(finite).max()) if finite.size else 1.0) + 1.0
    return np.where(np.isinf(d), np.sign(d) * big, d)


def paired_difference(a, b) -> dict:
    """Paired comparison of two filters' runs on the same seeds.

    Parameters
    ----------
    a, b : (n,) array_like
        One value per seed, in the same seed order.

    Returns
    -------
    dict
        ``n_seeds``; ``n_both_infinite`` (seeds where both are infinite with
        the same sign: their difference is undefined and left out);
        ``n_compared`` (the rest); ``mean_difference`` (mean of a - b over the
        compared seeds, +-inf when one side is infinite on some seed),
        ``ci95_low``/``ci95_high`` (seeded percentile bootstrap of that mean),
        ``median_difference``, ``a_lower`` / ``b_lower`` (seeds where a (b) is
        strictly lower) and ``wilcoxon_p`` (two-sided Wilcoxon signed-rank
        test, ``scipy.stats.wilcoxon``, zero differences dropped; 1 when
        every compared difference is zero; NaN only when no seed is compared).
    """
    row, signed = _paired_without_test(a, b)
    return {**row, "wilcoxon_p": _wilcoxon_p([signed])[0]}


def _paired_without_test(a, b) -> tuple[dict, np.ndarray | None]:
    """:func:`paired_difference` but the test: (row without ``wilcoxon_p``, the non-zero
    differences to test, ranks kept by :func:`_rank_proxy`; None when no seed is compared)."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    both = np.isinf(a) & np.isinf(b) & (np.sign(a) == np.sign(b))
    d = a[~both] - b[~both]
    out = dict(n_seeds=int(a.size), n_both_infinite=int(both.sum()), n_compared=int(d.size))
    if d.size == 0:
        return {
            **out,
            **dict.fromkeys(["mean_difference", "ci95_low", "ci95_high", "median_difference"], math.nan),
            "a_lower": 0,
            "b_lower": 0,
        }, None
    stats = _stats(d, {"pair": "difference"})
    row = {
        **out,
        "mean_difference": stats["mean"],
        "ci95_low": stats["ci95_low"],
        "ci95_high": stats["ci95_high"],
        "median_difference": stats["median"],
        "a_lower": int((d < 0).sum()),
        "b_lower": int((d > 0).sum()),
    }
    return row, _rank_proxy(d[d != 0])


def _wilcoxon_p(samples: list) -> list[float]:
    """Two-sided Wilcoxon signed-rank p-values (``scipy.stats.wilcoxon``, zero differences already
    dropped) of each sample: NaN for None, 1 for an empty one.

    Samples of equal length, with or without tied magnitudes, are tested in
    one vectorised call (``axis=1``), which gives the same p-values as one call
    each (checked in the tests) at a fraction of the time: scipy's per-call
    overhead was most of the aggregation's paired table.
    """
    from scipy.stats import wilcoxon

    out = [math.nan if x is None else 1.0 for x in samples]
    groups: dict[tuple[int, bool], list[int]] = {}
    for i, x in enumerate(samples):
        if x is not None and x.size:
            # tied |d| make scipy use a permutation test for the whole call: kept apart
            tied = np.unique(np.abs(x)).size < x.size
            groups.setdefault((x.size, tied), []).append(i)
    for idx in groups.values():
        p = wilcoxon(np.stack([samples[i] for i in idx]), zero_method="wilcox", axis=1).pvalue
        for i, v in zip(idx, np.atleast_1d(p), strict=True):
            out[i] = float(v)
    return out


def paired(runs):
    """Paired differences between every two filters, per setting and measure (tables/paired.csv).

    Runs of different filters with the same seed share the truth and the
    measurements, so their difference removes the scenario's own variation.
    Rows: one per (setting, measure, filter_a < filter_b) over the seeds both
    filters ran; columns as returned by :func:`paired_difference`.
    """
    import pandas as pd

    rows, samples = [], []
    measures = runs[runs["measure"].isin(list(BETTER_LOW) + PAIRED_ONLY)]
    for key, group in measures.groupby(PAIR_KEYS, sort=True, dropna=False):
        wide = group.pivot(index="seed", columns="filter", values="value")
        names = sorted(wide.columns)
        for i, fa in enumerate(names):
            for fb in names[i + 1 :]:
                both = wide[[fa, fb]].dropna()
                if both.empty:
                    continue
                row = dict(zip(PAIR_KEYS, key, strict=True), filter_a=fa, filter_b=fb)
                summary, signed = _paired_without_test(both[fa].to_numpy(), both[fb].to_numpy())
                row.update(summary)
                rows.append(row)
                samples.append(signed)
    for row, p in zip(rows, _wilcoxon_p(samples), strict=True):
        row["wilcoxon_p"] = p
    cols = PAIR_KEYS + ["filter_a", "filter_b", "n_seeds", "n_both_infinite", "n_compared"]
    cols += [
        "mean_difference",
        "ci95_low",
        "ci95_high",
        "median_difference",
        "a_lower",
        "b_lower",
        "wilcoxon_p",
    ]
    return pd.DataFrame(rows, columns=cols)


def ranking(pairs):
    """Rank filters per setting and measure; filters whose paired interval covers 0 tie.

    A filter is beaten by another when the paired bootstrap interval of their
    difference lies entirely on the other's better side (both ends beyond
    zero). Its ``rank`` is 1 + the number of filters that beat it (competition
    ranking), so filters that no interval separates share a rank. Infinite
    differences count as separated. Columns: the setting keys, ``measure``,
    ``filter``, ``rank``, ``beaten_by`` and ``beats`` (space-separated names),
    ``tied_with``.
    """
    import pandas as pd

    rows = []
    ranked = pairs[pairs["measure"].isin(list(BETTER_LOW))]
    for key, group in ranked.groupby(PAIR_KEYS, sort=True, dropna=False):
        low = BETTER_LOW[key[-1]]
        names = sorted(set(group["filter_a"]) | set(group["filter_b"]))
        beaten_by: dict[str, list[str]] = {f: [] for f in names}
        for r in group.itertuples():
            a_better = r.ci95_high < 0 if low else r.ci95_low > 0
            b_better = r.ci95_low > 0 if low else r.ci95_high < 0
            if a_better:
                beaten_by[r.filter_b].append(r.filter_a)
            elif b_better:
                beaten_by[r.filter_a].append(r.filter_b)
        for f in names:
            beats = [g for g in names if f in beaten_by[g]]
            tied = [g for g in names if g != f and g not in beats and g not in beaten_by[f]]
            rows.append(
                {
                    **dict(zip(PAIR_KEYS, key, strict=True)),
                    "filter": f,
                    "rank": 1 + len(beaten_by[f]),
                    "beaten_by": " ".join(sorted(beaten_by[f])),
                    "beats": " ".join(beats),
                    "tied_with": " ".join(tied),
                }
            )
    cols = PAIR_KEYS + ["filter", "rank", "beaten_by", "beats", "tied_with"]
    return pd.DataFrame(rows, columns=cols).sort_values(PAIR_KEYS + ["rank", "filter"], kind="stable")


CALIBRATION_KEYS = [k for k in KEYS if k != "q"]  # the panels do not depend on the Murty budget


def collect_calibration_counts(dirs: Iterable[str | Path]) -> dict[tuple, dict[int, object]]:
    """Each run's :class:`~nllbench.measures.calibration.CalibrationCounts`, per setting and seed.

    Returns ``{setting: {seed: counts}}`` with ``setting`` the values of
    :data:`CALIBRATION_KEYS`. A run evaluated at several Q (one file per Q)
    has the same counts in each file and is taken once; files without the
    panel (written before it existed) are skipped.
    """
    out: dict[tuple, dict[int, object]] = {}
    for f in _files(dirs):
        ds = read_metrics(f)
        _add_calibration_counts(out, ds, _run_labels(ds, f))
    return out


def _add_calibration_counts(out: dict, ds, labels: dict) -> None:
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
    for f in _files(dirs):
        with xr.open_dataset(f, engine="netcdf4") as ds:
            _add_fill_ins(groups, dict(ds.attrs))
    return _fill_ins_frame(groups)


def _add_fill_ins(groups: dict, attrs) -> None:
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


def _fill_ins_frame(groups: dict):
    import pandas as pd

    rows = [(*k[:6], " ".join(map(str, sorted(v))), k[6]) for k, v in sorted(groups.items())]
    return pd.DataFrame(rows, columns=FILL_IN_COLUMNS)


def write_tables(
    dirs: Iterable[str | Path], out_dir: str | Path, provenance: dict | None = None, long_csv: bool = False
) -> dict:
    """Write steps.nc (the per-step cube), runs.csv, runs.nc, summary.csv, paired.csv,
    ranking.csv, fill_ins.csv (:func:`fill_ins_table`), calibration.csv and
    reliability.csv, and provenance.json into ``out_dir``; steps.csv (the long per-step
    table) too when ``long_csv``."""
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
