"""Tables: CSV files, the long-form NetCDF tables and the per-step cube (``tables/steps.nc``).

Every CSV and table file nllbench writes goes through here, atomically
(:mod:`nllbench.store.atomic`); what the tables contain is
:mod:`nllbench.pipeline.aggregate`'s business.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from nllbench.store._netcdf import jsonable
from nllbench.store.atomic import atomic_file

#: ``content`` attribute of the per-step cube.
CUBE_CONTENT = "step cube"


def write_csv(df, path: str | os.PathLike) -> Path:
    """Write a pandas DataFrame to ``path`` as CSV (no index column), atomically."""
    with atomic_file(path) as tmp:
        df.to_csv(tmp, index=False)
    return Path(path)


def write_summary_csv(rows: dict | Sequence[dict], path: str | os.PathLike) -> None:
    """Write summary rows (header + one line per dict) to a CSV file, atomically."""
    import csv

    rows = [rows] if isinstance(rows, dict) else list(rows)
    with atomic_file(path) as tmp, open(tmp, "w", newline="") as fh:
        fields = list(rows[0]) if rows else []
        writer = csv.DictWriter(fh, fieldnames=fields)
        writer.writeheader()
        for row in rows:
            writer.writerow({k: jsonable(v) for k, v in row.items()})


def write_rows_csv(header: Sequence[str], rows, path: str | os.PathLike) -> None:
    """Write a header and rows (sequences of values) with :mod:`csv`, atomically."""
    import csv

    with atomic_file(path) as tmp, open(tmp, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(list(header))
        writer.writerows(rows)


def write_json(obj, path: str | os.PathLike) -> None:
    """Write ``obj`` as indented JSON with sorted keys and a final newline, atomically."""
    with atomic_file(path) as tmp:
        Path(tmp).write_text(json.dumps(obj, indent=2, sort_keys=True) + "\n")


def write_long_table_nc(df, path: str | os.PathLike, description: str) -> None:
    """Write a long-form table (one row per value) as NetCDF: one variable per column over ``row``."""
    import xarray as xr

    ds = xr.Dataset.from_dataframe(df.reset_index(drop=True).rename_axis("row"))
    ds.attrs.update(content="table", description=description)
    encoding = {c: {"zlib": True, "complevel": 4} for c in ds.data_vars if ds[c].dtype.kind in "fiu"}
    with atomic_file(path) as tmp:
        ds.to_netcdf(tmp, engine="netcdf4", encoding=encoding)


def write_step_cube(cube, path: str | os.PathLike) -> None:
    """Write a cube to NetCDF: zlib-compressed measures with NaN as ``_FillValue``, masks as bytes."""
    encoding = {}
    for v in cube.data_vars:
        if cube[v].dtype.kind == "f":
            encoding[v] = {"zlib": True, "complevel": 4, "shuffle": True, "_FillValue": np.nan}
        else:
            encoding[v] = {"zlib": True, "complevel": 4}
    for d in cube.dims:
        if d in cube.coords and cube[d].dtype.kind != "O":
            encoding[d] = {"_FillValue": None}
    with atomic_file(path) as tmp:
        cube.to_netcdf(tmp, engine="netcdf4", encoding=encoding)


def read_step_cube(path: str | os.PathLike, dims: Sequence[str]):
    """Read a per-step cube (loaded into memory), checking its content, coordinates ``dims`` and masks."""
    import xarray as xr

    if not Path(path).is_file():
        raise FileNotFoundError(f"{path}: no such file (the per-step cube written by nllbench aggregate)")
    with xr.open_dataset(path, engine="netcdf4") as ds:
        cube = ds.load()
    if cube.attrs.get("content") != CUBE_CONTENT:
        raise ValueError(
            f"{path}: attribute 'content': expected {CUBE_CONTENT!r} (written by nllbench aggregate), "
            f"got {cube.attrs.get('content')!r}"
        )
    missing = [d for d in dims if d not in cube.coords]
    if missing:
        raise ValueError(f"{path}: expected a coordinate {missing[0]!r}")
    for v in cube.data_vars:
        mask = cube[v].attrs.get("ancillary_variables")
        if mask is not None and (mask not in cube or cube[mask].dtype != bool):
            raise ValueError(f"{path}: variable {v!r}: expected its mask {mask!r} as a boolean variable")
    return cube
