"""The per-step cube (``tables/steps.nc``): built from the metrics files' records, its long form,
read and written.

The cube is an ``xarray.Dataset`` with dimensions :data:`CUBE_DIMS` and one
variable per measure; absent cells are masked, never a value
(:func:`step_cube`). Its long form (columns :data:`LONG_COLUMNS`, one row per
existing cell and measure) is derived on demand (:func:`long_table`,
``nllbench tables long``). The records come from
:func:`nllbench.pipeline.collect.step_records`.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import numpy as np

from nllbench.measures.names import NLL_STEP_MEASURES, PGOSPA_STEP, PROPER_STEP

#: The setting keys of a row of the per-run and summary tables (``q = 0`` for
#: the measures that do not depend on the Murty budget).
KEYS = ["scenario", "filter", "clutter", "pd", "cov_scale", "temper", "marginal", "q"]
#: Columns of the long per-step table, in order (the run's seed second); rows sort by all but ``value``.
LONG_COLUMNS = ["scenario", "seed", *KEYS[1:], "step", "measure", "value"]
#: Dimensions of the per-step cube, in order. Measures that do not depend on
#: the Murty budget (``q = 0`` in the long table) have every dimension but ``q``.
CUBE_DIMS = (*KEYS, "seed", "step")
#: mask variable of each family of measures (the measures of a family are written together)
_MASKS = {
    "nll": "nll_present",
    "nll_exact": "nll_exact_present",
    "point": "present",
    # the proper scores exist where the evaluation computed them (scale 1, one Q per run); the
    # intensity score only where it has a closed form: a mask of its own
    "proper": "proper_present",
    "intensity": "intensity_present",
    # P-GOSPA and PT-GOSPA exist for multi-Bernoulli posteriors only (not PHD/CPHD): a mask of their own
    "pgospa": "pgospa_present",
}
_COORD_TYPES = {"clutter": float, "pd": float, "cov_scale": float, "temper": float, "q": int, "seed": int}


def _family(measure: str) -> str:
    if measure in NLL_STEP_MEASURES:
        return "nll"
    if measure in PROPER_STEP:
        return "intensity" if measure == "intensity_score" else "proper"
    if measure in PGOSPA_STEP:
        return "pgospa"
    return "nll_exact" if measure == "nll_exact" else "point"


def step_cube(records: Iterable[tuple[dict, str, np.ndarray, np.ndarray]]):
    """The per-step results as a labelled cube (an ``xarray.Dataset``).

    Dimensions :data:`CUBE_DIMS`, each coordinate sorted. One float64 variable
    per measure: the NLL and its terms (``nll``, ``nll_lower``, ...) over
    every dimension; ``nll_exact`` and the point measures (GOSPA, OSPA, CLEAR
    MOT counts, Theorem 1, ...) over every dimension but ``q`` (they do not
    depend on the Murty budget). A cell exists when a metrics file gave it a
    value: the boolean variable named by a measure's ``ancillary_variables``
    attribute (``nll_present``, ``nll_exact_present``, ``present``, and for the
    proper scores ``proper_present`` and ``intensity_present``, for P-GOSPA and
    PT-GOSPA ``pgospa_present``) is True
    there. Absent cells (a probe not evaluated at that Q, steps past a shorter
    scenario's end, an exact NLL that was not tractable) hold NaN, the
    variable's NetCDF ``_FillValue``: read them only through the mask
    (:func:`long_table` does). A measure given twice for one cell (a
    Q-independent measure from each Q's file) keeps its first value, as the
    long table did.

    Parameters
    ----------
    records : iterable of (labels, measure, steps, values)
        As made by :func:`nllbench.pipeline.collect.step_records`: ``labels`` maps every dimension but
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


def cube_variables(names: Iterable[str]) -> dict:
    """The declared dimensions and kind of values (:class:`nllbench.store.Declared`) of a cube's variables.

    The coordinates :data:`CUBE_DIMS` (floats, integers or text, as
    :func:`step_cube` labels them); each mask of :data:`_MASKS` boolean, each
    other variable ``names`` holds a measure: floats, over every dimension
    (the NLL family) or every one but ``q``.
    """
    from nllbench.store import Declared

    kinds = {np.dtype(np.float64): "float", np.dtype(np.int64): "integer", np.dtype(object): "text"}
    out = {d: Declared((d,), kinds[np.dtype(_dtype(d))]) for d in CUBE_DIMS}
    masks = {mask: family for family, mask in _MASKS.items()}
    for name in names:
        if name in out:
            continue
        family = masks.get(name) or _family(name)
        dims = CUBE_DIMS if family == "nll" else tuple(d for d in CUBE_DIMS if d != "q")
        out[name] = Declared(dims, "boolean" if name in masks else "float")
    return out


def read_step_cube(path: str | Path):
    """Read ``tables/steps.nc`` (loaded into memory), checking that it is a step cube.

    Beyond its content, coordinates and masks (:func:`nllbench.store.read_step_cube`),
    every variable's dimensions and kind of values (:func:`cube_variables`).
    """
    from nllbench.store import check_declared
    from nllbench.store import read_step_cube as read

    cube = read(path, CUBE_DIMS)
    check_declared(cube, path, cube_variables([str(v) for v in cube.variables]))
    return cube


def read_long_table(tables: str | Path, measures: Iterable[str] | None = None):
    """The long per-step table of an aggregate output directory (from ``steps.nc``)."""
    return long_table(read_step_cube(Path(tables) / "steps.nc"), measures)


def empty_estimate_steps(cube):
    """Per run, the steps at which the point estimator reported no object while the posterior expects one.

    The condition of ``nllbench evaluate``'s warning (``estimator_empty_steps``,
    docs/estimators.md): no estimate (``n_estimates == 0``) and an expected
    number of objects that rounds to at least one (``floor(cardinality_mean +
    0.5) >= 1``), at the filters' own covariances and existence probabilities
    (covariance scale 1, no tempering: a run's estimates do not depend on the
    probes, nor on the marginal, so the largest count over marginals is the
    count). Returns a DataFrame with columns scenario, filter, clutter, pd,
    seed, ``empty_steps`` and ``steps`` (the run's evaluated steps), one row
    per evaluated run; a cube without these measures or cells gives no rows.
    """
    import pandas as pd

    columns = ["scenario", "filter", "clutter", "pd", "seed", "empty_steps", "steps"]
    needed = ("n_estimates", "cardinality_mean", "present")
    own = {"cov_scale": 1.0, "temper": 1.0}
    if any(v not in cube.data_vars for v in needed) or any(v not in cube[k].values for k, v in own.items()):
        return pd.DataFrame(
            {c: pd.Series(dtype=float if c in ("clutter", "pd") else object) for c in columns}
        )
    present = cube["present"].sel(own).astype(bool)
    expected = np.floor(cube["cardinality_mean"].sel(own) + 0.5)
    empty = present & (cube["n_estimates"].sel(own) == 0) & (expected >= 1)
    runs = [
        a.sum("step").max("marginal").drop_vars(list(own)).rename(name).to_dataframe()
        for a, name in ((empty, "empty_steps"), (present, "steps"))
    ]
    df = runs[0].join(runs[1]).reset_index()
    df = df[df["steps"] > 0].astype({"empty_steps": np.int64, "steps": np.int64})
    return df[columns].sort_values(columns[:5], kind="stable").reset_index(drop=True)
