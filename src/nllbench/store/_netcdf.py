"""What every nllbench NetCDF file shares: schema version, header attributes, ragged arrays,
atomic compressed writes and validating reads (the per-kind modules build on these)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from nllbench.store.atomic import atomic_file
from nllbench.store.provenance import nllbench_version, provenance_attrs

#: The schema version each file kind is written with (attribute ``nllbench_schema_version``).
#: Metrics files are at 3 since they are classic NetCDF with one named, described variable per
#: measure (2: NetCDF-4, variables packed; 1: NetCDF-4, one variable each; :mod:`nllbench.store.metrics`).
#: Posterior files are at 2 since their covariances are pooled (:func:`pool_covariances`); a
#: posterior file whose Bernoullis have Gaussian-mixture densities is written as version 3
#: (:data:`POSTERIOR_MIXTURE_VERSION`, component variables), every other one still as 2.
SCHEMA_VERSIONS = {"scenario": "1", "posterior": "2", "metrics": "3"}
POSTERIOR_MIXTURE_VERSION = "3"
#: The versions each kind is read from: older metrics and posterior files read as before.
READABLE_VERSIONS = {"scenario": ("1",), "posterior": ("1", "2", "3"), "metrics": ("1", "2", "3")}
SCHEMA_VERSION = SCHEMA_VERSIONS["scenario"]
STATE_NAMES_4D = ["x", "y", "vx", "vy"]
_COMPRESS = {"zlib": True, "complevel": 4}


class SchemaError(ValueError):
    """A file does not follow the nllbench NetCDF schema."""


def header(content: str) -> dict:
    """The attributes every nllbench file starts with: content, schema and software versions."""
    return {
        "content": content,
        "nllbench_schema_version": SCHEMA_VERSIONS[content],
        "nllbench_version": nllbench_version(),
        **provenance_attrs(),
        "Conventions": "CF-1.8",
    }


def ragged(blocks: Sequence[np.ndarray], tail: tuple[int, ...], dtype=float) -> tuple[np.ndarray, np.ndarray]:
    """Concatenate per-step blocks of shape (n_k, *tail); return (counts, data)."""
    counts = np.array([b.shape[0] for b in blocks], dtype=np.int64)
    if len(blocks) and counts.sum():
        data = np.concatenate([np.asarray(b, dtype=dtype).reshape((-1, *tail)) for b in blocks])
    else:
        data = np.empty((0, *tail), dtype=dtype)
    return counts, data


def split(counts: np.ndarray, data: np.ndarray) -> list[np.ndarray]:
    return np.split(data, np.cumsum(counts)[:-1]) if counts.size else []


def write_dataset(
    ds, path: str | os.PathLike, encoding: dict[str, dict] | None = None, file_format: str = "NETCDF4"
) -> None:
    """Write ``ds`` to ``path`` through a temporary file in the same directory.

    Numeric variables are stored as ``encoding[name]`` says (NetCDF-4: zlib
    level 4 by default) and have no fill value: nllbench files have no
    missing data. Classic formats (``NETCDF3_*``: no compression) are
    written by scipy's NetCDF writer, which takes a fraction of netCDF4's
    time on small files (a metrics file: docs/store.md).
    """
    path = Path(path)
    classic = file_format.startswith("NETCDF3")
    default = {} if classic else _COMPRESS
    encoding = {
        name: {**(encoding or {}).get(name, default), "_FillValue": None}
        for name, var in ds.variables.items()
        if var.dtype.kind in "fiu" and (name in ds.data_vars or classic)
    }
    with atomic_file(path) as tmp:
        ds.to_netcdf(tmp, engine="scipy" if classic else "netcdf4", format=file_format, encoding=encoding)


def pool_covariances(ds):
    """``ds`` with each (N, d, d) covariance variable ``X`` stored as a pool of distinct upper triangles.

    Covariances repeat: a Kalman covariance depends on the detection history,
    not on the measurements, so the Bernoullis of a PMBM posterior share few
    distinct ones (Williams-2015, clutter 50: 6,670 distinct of 17,947).
    ``X`` (dims (dim0, "state", "state2")) becomes ``X_pool`` (X_pooled,
    "triangle"): the distinct matrices' upper triangles row by row, in
    ``np.unique`` order, and ``X_index`` (dim0,): each row's place in the pool.
    Lossless: only variables whose every matrix is bitwise symmetric are
    pooled (the others are kept whole); :func:`unpool_covariances` restores them.
    """
    out = ds
    for name in [v for v in ds.data_vars if ds[v].dims[1:] == ("state", "state2")]:
        covs = np.asarray(ds[name].values)
        if covs.shape[0] == 0 or not np.array_equal(covs, np.swapaxes(covs, 1, 2)):
            continue
        d = covs.shape[-1]
        rows, cols = np.triu_indices(d)
        pool, index = np.unique(covs[:, rows, cols], axis=0, return_inverse=True)
        attrs = {**ds[name].attrs, "pooled_from": f"({ds[name].dims[0]}, state, state2), upper triangle"}
        out = out.drop_vars(name).assign(
            {
                f"{name}_pool": ((f"{name}_pooled", "triangle"), pool, attrs),
                f"{name}_index": ((ds[name].dims[0],), index.ravel().astype(np.int64)),
            }
        )
    return out


def unpool_covariances(ds, path):
    """The inverse of :func:`pool_covariances`: every ``X_pool`` / ``X_index`` pair back as ``X``."""
    for pool_name in [v for v in ds.data_vars if str(v).endswith("_pool")]:
        name = str(pool_name)[: -len("_pool")]
        pool = get(ds, path, pool_name, 2)
        index = get(ds, path, f"{name}_index", 1)
        if index.dtype.kind not in "iu" or (index.size and (index.min() < 0 or index.max() >= pool.shape[0])):
            raise SchemaError(f"{path}: variable '{name}_index': expected indices into {pool_name!r}")
        d = int(round((np.sqrt(8 * pool.shape[1] + 1) - 1) / 2))
        if d * (d + 1) // 2 != pool.shape[1]:
            raise SchemaError(f"{path}: variable {pool_name!r}: {pool.shape[1]} columns are no triangle")
        rows, cols = np.triu_indices(d)
        full = np.empty((pool.shape[0], d, d))
        full[:, rows, cols] = pool
        full[:, cols, rows] = pool
        dim0 = ds[f"{name}_index"].dims[0]
        ds = ds.drop_vars([pool_name, f"{name}_index"]).assign(
            {name: ((dim0, "state", "state2"), full[index.astype(np.int64)])}
        )
    return ds


#: The first four bytes of classic NetCDF files: CDF-1 (classic) and CDF-2 (64-bit offset).
CLASSIC_MAGIC = (b"CDF\x01", b"CDF\x02")


def open_dataset(path: str | os.PathLike, content: str):
    """The whole file at ``path`` as an undecoded ``xarray.Dataset``, its header checked.

    Classic NetCDF files (:data:`CLASSIC_MAGIC`) are read by :func:`load_classic`,
    the others (NetCDF-4, CDF-5) by xarray's netCDF4 engine; both as
    ``decode_cf=False`` gives them: stored values, no masking or scaling.
    Raises :class:`SchemaError` for an unreadable file, another ``content``
    or a schema version this nllbench cannot read.
    """
    import xarray as xr

    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file")
    try:
        with open(path, "rb") as fh:
            magic = fh.read(4)
        if magic in CLASSIC_MAGIC:
            ds = load_classic(path)
        else:
            with xr.open_dataset(path, engine="netcdf4", decode_cf=False) as handle:
                ds = handle.load()
    except (OSError, ValueError, RuntimeError, TypeError, KeyError, IndexError) as exc:
        raise SchemaError(f"{path}: not a readable NetCDF file ({exc})") from None
    found = ds.attrs.get("content")
    if found != content:
        raise SchemaError(f"{path}: expected a {content} file (attribute content={content!r}), got {found!r}")
    version = str(ds.attrs.get("nllbench_schema_version", ""))
    readable = READABLE_VERSIONS[content]
    if version not in readable:
        raise SchemaError(
            f"{path}: expected nllbench_schema_version {' or '.join(readable)}, got {version!r}"
        )
    return ds


def load_classic(path: str | os.PathLike):
    """A classic NetCDF file as an undecoded ``xarray.Dataset``, read with scipy's NetCDF reader.

    The same dataset as ``xarray.open_dataset(path, engine="netcdf4",
    decode_cf=False).load()``: native-endian, writable arrays; text
    attributes as ``str`` (UTF-8, as netCDF4 writes them); a variable named
    like its only dimension as that dimension's coordinate. scipy's
    pure-Python reader takes a few milliseconds for a metrics file of about
    a hundred variables; netCDF4 through xarray several times that (docs/store.md).
    """
    import xarray as xr
    from scipy.io import netcdf_file

    with netcdf_file(path, "r", mmap=False) as f:
        variables = {
            name: xr.Variable(var.dimensions, _native(var.data), _text_attrs(var._attributes))
            for name, var in f.variables.items()
        }
        attrs = _text_attrs(f._attributes)
    coords = {name: variables.pop(name) for name in list(variables) if variables[name].dims == (name,)}
    return xr.Dataset(variables, coords=coords, attrs=attrs)


def _native(values):
    """A writable native-endian copy of a stored array (classic NetCDF is big-endian)."""
    values = np.asarray(values)
    if values.dtype.kind == "S":
        return values.copy()
    return np.array(values, dtype=values.dtype.newbyteorder("="))


def _text_attrs(attrs: dict) -> dict:
    """Attributes with text decoded (UTF-8) and numeric arrays native-endian."""
    out = {}
    for key, value in attrs.items():
        if isinstance(value, bytes):
            out[key] = value.decode("utf-8", "replace")
        elif isinstance(value, np.ndarray):
            out[key] = _native(value)
        else:
            out[key] = value
    return out


def get(ds, path, name: str, ndim: int | None = None) -> np.ndarray:
    if name not in ds.variables:
        raise SchemaError(f"{path}: variable {name!r} is missing")
    arr = np.asarray(ds[name].values)
    if ndim is not None and arr.ndim != ndim:
        raise SchemaError(f"{path}: variable {name!r}: expected {ndim} dimensions, got shape {arr.shape}")
    if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
        raise SchemaError(f"{path}: variable {name!r}: expected finite values, found NaN or inf")
    return arr


def get_ragged(
    ds, path, count_name: str, data_name: str, steps: int, ndim: int, integer: bool = False
) -> list[np.ndarray]:
    counts = get(ds, path, count_name, 1)
    if counts.dtype.kind not in "iu":
        raise SchemaError(f"{path}: variable {count_name!r}: expected integers, got {counts.dtype}")
    if counts.shape[0] != steps:
        raise SchemaError(f"{path}: variable {count_name!r}: expected {steps} steps, got {counts.shape[0]}")
    if np.any(counts < 0):
        raise SchemaError(f"{path}: variable {count_name!r}: expected non-negative counts")
    data = get(ds, path, data_name, ndim)
    if integer and data.dtype.kind not in "iu":
        raise SchemaError(f"{path}: variable {data_name!r}: expected integers, got {data.dtype}")
    if int(counts.sum()) != data.shape[0]:
        raise SchemaError(
            f"{path}: variable {data_name!r}: expected {int(counts.sum())} rows (sum of {count_name}), "
            f"got {data.shape[0]}"
        )
    return split(counts.astype(np.int64), data)


def jsonable(value):
    if isinstance(value, (list, tuple, np.ndarray)):
        return np.asarray(value).tolist()
    return value


def attrs_out(attrs: dict) -> dict:
    """NetCDF attributes: numbers, strings and numeric lists; None becomes ''."""
    out = {}
    for k, v in attrs.items():
        if v is None:
            out[k] = ""
        elif isinstance(v, (list, tuple, np.ndarray)):
            out[k] = np.asarray(v, dtype=float)
        elif isinstance(v, bool):
            out[k] = int(v)
        else:
            out[k] = v
    return out
