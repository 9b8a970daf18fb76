"""What every nllbench NetCDF file shares: schema version, header attributes, ragged arrays,
atomic compressed writes and validating reads (the per-kind modules build on these)."""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
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
SCHEMA_VERSIONS = {"scenario": "1", "posterior": "2", "metrics": "3", "trajectory_posterior": "1"}
POSTERIOR_MIXTURE_VERSION = "3"
#: The versions each kind is read from: older metrics and posterior files read as before.
READABLE_VERSIONS = {
    "scenario": ("1",),
    "posterior": ("1", "2", "3"),
    "metrics": ("1", "2", "3"),
    "trajectory_posterior": ("1",),
}
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


#: NetCDF-3 type names a variable or attribute may not be named (the NetCDF users guide, "Names").
_RESERVED_NC3 = {"byte", "char", "short", "ushort", "int", "uint", "int64", "uint64", "float", "real"}
_RESERVED_NC3 |= {"double", "bool", "string"}
_NC3_SPECIAL = set('_.@+- !"#$%&\\()*,:;<=>?[]^`{|}~')
#: The classic types of the integer types classic NetCDF lacks (values checked to be equal).
_NC3_COERCED = {"int64": "int32", "uint64": "int32", "uint32": "int32", "uint16": "int16", "uint8": "int8"}
_NC3_COERCED["bool"] = "int8"


def _nc3_name(name: str, what: str) -> str:
    """``name`` if classic NetCDF can hold it (the NetCDF users guide's rule for names), else a ValueError."""

    def ok(c: str) -> bool:
        return c.isalnum() or len(c.encode("utf-8")) > 1

    good = (
        isinstance(name, str)
        and name != ""
        and unicodedata.normalize("NFC", name) == name
        and name not in _RESERVED_NC3
        and "/" not in name
        and name[-1] != " "
        and (ok(name[0]) or name[0] == "_")
        and all(ok(c) or c in _NC3_SPECIAL for c in name)
    )
    if not good:
        raise ValueError(f"{what} {name!r}: expected a name classic NetCDF can hold")
    return name


def _nc3_values(values) -> np.ndarray:
    """``values`` in a classic NetCDF type: 64-bit and unsigned integers and bools narrowed, if exact."""
    arr = np.asarray(values)
    to = _NC3_COERCED.get(str(arr.dtype))
    if to is not None:
        cast = arr.astype(to)
        if not (cast == arr).all():
            raise ValueError(f"expected values that {to} holds, got {arr.dtype} values beyond it")
        arr = cast
    return arr


def _nc3_attribute(value):
    """An attribute value as classic NetCDF stores it: text as UTF-8 bytes, numbers as 1-D arrays."""
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8")
    arr = _nc3_values(np.atleast_1d(value))
    if arr.ndim > 1:
        raise ValueError(f"expected a number or a 1-D array, got shape {arr.shape}")
    return arr


def write_classic(variables: dict, attrs: dict, path: str | os.PathLike) -> None:
    """Write numeric ``variables`` (name -> (dims, values, attrs)) and global ``attrs`` as classic
    NetCDF with 64-bit offsets (CDF-2), through a temporary file in the same directory, with scipy.

    Byte for byte the file ``xarray.Dataset(variables, attrs=attrs).to_netcdf(path,
    engine="scipy", format="NETCDF3_64BIT")`` writes with no fill values (what
    :func:`write_dataset` did for metrics files), without importing xarray
    and pandas: dimensions in the order the variables first use them, then
    the global attributes, the variables in the given order with their
    attributes; 64-bit and unsigned integers and bools stored in the classic
    type that holds them (int64 -> int32, ...), text attributes as UTF-8,
    numeric attributes as 1-D arrays (tested against xarray in tests/cli/test_lean_imports_and_memory.py).
    """
    from scipy.io import netcdf_file

    encoded, dims = {}, {}
    for name, (var_dims, values, var_attrs) in variables.items():
        try:
            arr = _nc3_values(values)
        except ValueError as exc:
            raise ValueError(f"variable {name!r}: {exc}") from None
        if arr.dtype.kind not in "fi":
            raise TypeError(f"variable {name!r}: expected numbers, got dtype {arr.dtype}")
        if len(var_dims) != arr.ndim:
            raise ValueError(f"variable {name!r}: expected {arr.ndim} dimension names, got {var_dims!r}")
        for dim, n in zip(var_dims, arr.shape, strict=True):
            if dims.setdefault(_nc3_name(dim, "dimension"), n) != n:
                raise ValueError(f"variable {name!r}: dimension {dim!r} of length {n}, elsewhere {dims[dim]}")
        encoded[_nc3_name(name, "variable")] = (tuple(var_dims), arr, _nc3_attributes(var_attrs))
    global_attrs = _nc3_attributes(attrs)
    with atomic_file(Path(path)) as tmp:
        f = netcdf_file(tmp, mode="w", version=2)
        try:
            for dim, n in dims.items():
                f.createDimension(dim, n)
            for key, value in global_attrs.items():
                setattr(f, key, value)
            for name, (var_dims, arr, var_attrs) in encoded.items():
                var = f.createVariable(name, arr.dtype, list(var_dims))
                for key, value in var_attrs.items():
                    setattr(var, key, value)
                var[...] = arr
        finally:
            f.close()


def _nc3_attributes(attrs: dict) -> dict:
    out = {}
    for key, value in attrs.items():
        try:
            out[_nc3_name(key, "attribute")] = _nc3_attribute(value)
        except ValueError as exc:
            raise ValueError(f"attribute {key!r}: {exc}") from None
    return out


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


@dataclass(frozen=True)
class Variable:
    """One variable of a :class:`Loaded` file: dimension names, stored values, attributes."""

    dims: tuple[str, ...]
    values: np.ndarray
    attrs: dict = field(default_factory=dict)

    @property
    def dtype(self) -> np.dtype:
        return np.asarray(self.values).dtype


#: The kinds of values a schema declares, and the numpy dtype kinds each one is stored as. An
#: integer is no float: a file holding integers where floats are declared is refused, not cast.
KINDS = {"float": "f", "integer": "iu", "text": "OSU", "boolean": "b"}


@dataclass(frozen=True)
class Declared:
    """What a schema declares for one variable: its dimensions (names, in order) and kind of values.

    dims : tuple of str, the dimension names in order; kind : a key of :data:`KINDS`.
    """

    dims: tuple[str, ...]
    kind: str


def with_pooled(declared: dict[str, Declared]) -> dict[str, Declared]:
    """``declared`` and, for each covariance over (dim0, "state", "state2"), the variables that
    :func:`pool_covariances` stores it as: ``X_pool`` (X_pooled, triangle) floats and ``X_index``
    (dim0,) integers."""
    out = dict(declared)
    for name, var in declared.items():
        if var.dims[1:] == ("state", "state2"):
            out[f"{name}_pool"] = Declared((f"{name}_pooled", "triangle"), "float")
            out[f"{name}_index"] = Declared(var.dims[:1], "integer")
    return out


def describe_kind(dtype: np.dtype) -> str:
    """The declared kind a stored dtype is, e.g. "integer values (int8)", for an error message."""
    kind = next((k for k, codes in KINDS.items() if dtype.kind in codes), None)
    return f"{kind} values ({dtype})" if kind is not None else f"values of dtype {dtype}"


def check_declared(ds, path, declared: dict[str, Declared]) -> None:
    """Refuse a variable of ``ds`` whose kind of values or dimensions are not those ``declared``.

    ``ds`` is a :class:`Loaded` or an ``xarray.Dataset``; only the variables'
    dtypes and dimension names are looked at (no value is read or copied).
    Variables the schema does not declare are left alone (no reader uses
    them). Raises :class:`SchemaError` naming the file, the variable, what
    is declared and what was found, e.g. ``post.nc: variable 'bern_r':
    expected float values, got integer values (int8)``.
    """
    for name, var in ds.variables.items():
        want = declared.get(str(name))
        if want is None:
            continue
        if var.dtype.kind not in KINDS[want.kind]:
            raise SchemaError(
                f"{path}: variable {name!r}: expected {want.kind} values, got {describe_kind(var.dtype)}"
            )
        dims = tuple(str(d) for d in var.dims)
        if dims != want.dims:
            raise SchemaError(
                f"{path}: variable {name!r}: expected dimensions ({', '.join(want.dims)}), "
                f"got ({', '.join(dims)})"
            )


class Loaded:
    """A NetCDF file's variables and global attributes in memory, read without xarray.

    The part of ``xarray.Dataset`` the readers of posterior and scenario files
    use, with the same values as ``xarray.open_dataset(path, decode_cf=False).load()``
    (stored values, no masking or scaling): ``variables`` (name -> :class:`Variable`),
    ``ds[name]``, ``attrs``, ``sizes``, ``data_vars`` (the variables that are no
    dimension's coordinate), ``drop_vars`` and ``assign``. Reading a file this
    way keeps xarray and pandas (about 80 MiB of libraries) out of
    ``nllbench evaluate`` (docs/store.md, "Memory of the commands").
    """

    def __init__(self, variables: dict[str, Variable], attrs: dict):
        self.variables, self.attrs = dict(variables), dict(attrs)

    def __getitem__(self, name: str) -> Variable:
        return self.variables[name]

    def __contains__(self, name: str) -> bool:
        return name in self.variables

    @property
    def sizes(self) -> dict[str, int]:
        """Each dimension's length, over the variables (in the order they first use it)."""
        out: dict[str, int] = {}
        for var in self.variables.values():
            out.update(zip(var.dims, np.shape(var.values), strict=True))
        return out

    @property
    def coords(self) -> list[str]:
        """The dimension coordinates: variables named like their only dimension."""
        return [name for name, var in self.variables.items() if var.dims == (name,)]

    @property
    def data_vars(self) -> list[str]:
        coords = set(self.coords)
        return [name for name in self.variables if name not in coords]

    def drop_vars(self, names) -> Loaded:
        names = {names} if isinstance(names, str) else set(names)
        return Loaded({k: v for k, v in self.variables.items() if k not in names}, self.attrs)

    def assign(self, new: dict) -> Loaded:
        """With the variables ``new`` (name -> (dims, values[, attrs])) added at the end, or replaced."""
        out = dict(self.variables)
        for name, (dims, values, *attrs) in new.items():
            out[name] = Variable(tuple(dims), np.asarray(values), dict(attrs[0]) if attrs else {})
        return Loaded(out, self.attrs)

    def to_xarray(self):
        """The same content as an ``xarray.Dataset`` (dimension coordinates as coordinates)."""
        import xarray as xr

        variables = {name: xr.Variable(v.dims, v.values, v.attrs) for name, v in self.variables.items()}
        coords = {name: variables.pop(name) for name in self.coords}
        return xr.Dataset(variables, coords=coords, attrs=self.attrs)


def open_dataset(path: str | os.PathLike, content: str):
    """The whole file at ``path`` as an undecoded ``xarray.Dataset``, its header checked.

    Classic NetCDF files (:data:`CLASSIC_MAGIC`) are read by :func:`load_classic`,
    the others (NetCDF-4, CDF-5) by xarray's netCDF4 engine; both as
    ``decode_cf=False`` gives them: stored values, no masking or scaling.
    Raises :class:`SchemaError` for an unreadable file, another ``content``
    or a schema version this nllbench cannot read. :func:`load` reads the
    same without xarray.
    """
    import xarray as xr

    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file")
    try:
        if _is_classic(path):
            ds = load_classic(path).to_xarray()
        else:
            with xr.open_dataset(path, engine="netcdf4", decode_cf=False) as handle:
                ds = handle.load()
    except (OSError, ValueError, RuntimeError, TypeError, KeyError, IndexError) as exc:
        raise SchemaError(f"{path}: not a readable NetCDF file ({exc})") from None
    check_header(ds.attrs, path, content)
    return ds


def load(path: str | os.PathLike, content: str) -> Loaded:
    """:func:`open_dataset` without xarray: the file as a :class:`Loaded`, its header checked.

    NetCDF-4 files are read with netCDF4 (auto mask and scale off, as
    xarray's ``decode_cf=False`` reads them), classic ones with scipy
    (:func:`load_classic`): the same values and attributes (a text
    coordinate, such as the state names, as an object array of ``str``,
    where xarray's index gives ``<U``; no reader uses its values).
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file")
    try:
        ds = load_classic(path) if _is_classic(path) else _load_netcdf4(path)
    except (OSError, ValueError, RuntimeError, TypeError, KeyError, IndexError) as exc:
        raise SchemaError(f"{path}: not a readable NetCDF file ({exc})") from None
    check_header(ds.attrs, path, content)
    return ds


def _is_classic(path: Path) -> bool:
    with open(path, "rb") as fh:
        return fh.read(4) in CLASSIC_MAGIC


def _load_netcdf4(path: Path) -> Loaded:
    """A NetCDF-4 (or CDF-5) file through netCDF4, as xarray's netCDF4 engine reads it undecoded."""
    import netCDF4

    with netCDF4.Dataset(path, "r") as f:
        variables = {}
        for name, var in f.variables.items():
            var.set_auto_maskandscale(False)
            var.set_auto_chartostring(False)
            attrs = {k: var.getncattr(k) for k in var.ncattrs()}
            variables[name] = Variable(tuple(var.dimensions), np.asarray(var[...]), attrs)
        attrs = {k: f.getncattr(k) for k in f.ncattrs()}
    return Loaded(variables, attrs)


def check_header(attrs, path, content: str) -> None:
    """Refuse a file of another ``content`` or of a schema version this nllbench cannot read."""
    found = attrs.get("content")
    if found != content:
        raise SchemaError(f"{path}: expected a {content} file (attribute content={content!r}), got {found!r}")
    version = str(attrs.get("nllbench_schema_version", ""))
    readable = READABLE_VERSIONS[content]
    if version not in readable:
        raise SchemaError(
            f"{path}: expected nllbench_schema_version {' or '.join(readable)}, got {version!r}"
        )


def load_classic(path: str | os.PathLike) -> Loaded:
    """A classic NetCDF file as a :class:`Loaded`, read with scipy's NetCDF reader.

    The same content as ``xarray.open_dataset(path, engine="netcdf4",
    decode_cf=False).load()``: native-endian, writable arrays; text
    attributes as ``str`` (UTF-8, as netCDF4 writes them); a variable named
    like its only dimension that dimension's coordinate. scipy's
    pure-Python reader takes a few milliseconds for a metrics file of about
    a hundred variables; netCDF4 through xarray several times that (docs/store.md).
    """
    from scipy.io import netcdf_file

    with netcdf_file(path, "r", mmap=False) as f:
        variables = {
            name: Variable(tuple(var.dimensions), _native(var.data), _text_attrs(var._attributes))
            for name, var in f.variables.items()
        }
        attrs = _text_attrs(f._attributes)
    return Loaded(variables, attrs)


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
