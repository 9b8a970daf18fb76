"""Metrics files: named, described variables any NetCDF reader understands (schema 3); old ones still read."""

from __future__ import annotations

import json

import numpy as np
import pytest
import xarray as xr
from support.paths import DATA

import nllbench as nb
from nllbench.measures.names import (
    MEASURE_RUN,
    METRIC_STEP_VARIABLES,
    METRICS_VARIABLES,
    NLL_STEP,
    POINT_RUN,
)
from nllbench.store import SchemaError, read_metrics, write_metrics
from nllbench.store import metrics as store_metrics


def _run_metrics(exact: bool = True):
    """A small evaluated run: 4 steps, 2 Q, one step whose truth is impossible (NLL = +inf)."""
    from nllbench.measures.evaluate import EvaluationSettings, evaluate_run

    rng = np.random.default_rng(3)
    truth = [rng.uniform(0, 10, (n, 4)) for n in (1, 2, 0, 2)]
    ids = [np.arange(len(x)) for x in truth]
    posts = [
        nb.MultiBernoulli.gaussian([0.9] * len(x), x + 0.1, np.tile(np.eye(4), (len(x), 1, 1))) for x in truth
    ]
    posts[2] = nb.MultiBernoulli.gaussian([1.0], np.zeros((1, 4)), np.eye(4)[None])  # r = 1, no truth: +inf
    return evaluate_run(
        posts, truth, ids, [0.0, 0.0], [10.0, 10.0], EvaluationSettings(qs=(1, 3), exact=exact)
    )


ATTRS = {"seed": 0, "scenario": "s", "filter": "fixture"}


@pytest.fixture(scope="module")
def metrics():
    return _run_metrics()


@pytest.fixture
def new_file(tmp_path, metrics):
    path = tmp_path / "seed0.nc"
    write_metrics(metrics, path, ATTRS)
    return path


# ---------------------------------------------------------------------------
# schema 2, as main wrote it before schema 3: the fixture builder
# ---------------------------------------------------------------------------


def pack(data: dict) -> dict:
    """Schema 2's packing: the variables of equal dimensions stacked into one float64 ``packed_<dims>``.

    A variable named like its only dimension is a coordinate and stays as it
    is; the attributes ``members`` and ``member_dtypes`` name the stacked
    variables and their dtypes (integers exact in float64 up to 2**53).
    """
    groups: dict[tuple, list[tuple[str, np.ndarray]]] = {}
    out = {}
    for name, (dims, values) in data.items():
        arr = np.asarray(values)
        if tuple(dims) == (name,):
            out[name] = (dims, arr)
            continue
        groups.setdefault(tuple(dims), []).append((name, arr))
    for dims, members in groups.items():
        var = f"packed_{'_'.join(dims) or 'run'}"
        stacked = np.stack([arr.astype(np.float64) for _, arr in members])
        attrs = {
            "members": " ".join(n for n, _ in members),
            "member_dtypes": " ".join(a.dtype.str for _, a in members),
        }
        out[var] = ((f"{var}_member", *dims), stacked, attrs)
    return out


def write_v2(metrics, path, attrs) -> None:
    """A schema-2 metrics file of ``metrics`` (packed NetCDF-4), as nllbench wrote it before schema 3."""
    from nllbench.store._netcdf import attrs_out, write_dataset

    m = store_metrics
    data = {**m._nll_variables(metrics), **m._point_variables(metrics), **m._run_variables(metrics)}
    data.update(m._measure_variables(metrics))
    data.update(m._proper_variables(metrics))  # schema 2 packed every variable of the run alike
    data.update(m._pgospa_variables(metrics))
    meta = {**attrs_out(m._metrics_attrs(metrics, attrs)), "nllbench_schema_version": "2"}
    ds = xr.Dataset(
        pack(data),
        coords={"step": np.arange(metrics.steps), "q": np.array(metrics.qs, dtype=np.int64)},
        attrs=meta,
    )
    big = {"zlib": True, "complevel": 4, "shuffle": True}
    write_dataset(
        ds, path, encoding={v: big if ds[v].size > 500 else {"contiguous": True} for v in ds.data_vars}
    )


def assert_same_dataset(a, b, skip_attrs=("nllbench_schema_version",)):
    """Same variables, dimensions, dtypes, values (bit for bit, -0.0 and inf included) and attributes."""
    assert set(a.variables) == set(b.variables)
    assert dict(a.sizes) == dict(b.sizes)
    for name in a.variables:
        x, y = a.variables[name], b.variables[name]
        assert x.dims == y.dims, name
        assert x.dtype == y.dtype, (name, x.dtype, y.dtype)
        np.testing.assert_array_equal(x.values, y.values, err_msg=name)
        assert np.array_equal(np.signbit(x.values), np.signbit(y.values)), name
        assert x.attrs.keys() == y.attrs.keys(), name
        for k in x.attrs:
            np.testing.assert_array_equal(x.attrs[k], y.attrs[k])
    keys = (set(a.attrs) | set(b.attrs)) - set(skip_attrs)
    for k in keys:
        assert k in a.attrs and k in b.attrs, k
        assert type(a.attrs[k]) is type(b.attrs[k]), (k, type(a.attrs[k]), type(b.attrs[k]))
        np.testing.assert_array_equal(a.attrs[k], b.attrs[k])


# ---------------------------------------------------------------------------
# the names table
# ---------------------------------------------------------------------------


def test_every_measure_of_a_metrics_file_is_declared_once_with_a_long_name():
    for name in (*(f"nll_{t}" for t in NLL_STEP), *METRIC_STEP_VARIABLES, *POINT_RUN, *MEASURE_RUN):
        assert name in METRICS_VARIABLES, name
    for name, declared in METRICS_VARIABLES.items():
        assert declared.long_name.strip(), name
        assert declared.kind in ("float", "count", "flag"), name
        assert declared.units in (None, "1"), name  # the only UDUNITS strings a metrics file needs
        assert (declared.kind == "flag") == bool(declared.flag_meanings), name
        if declared.kind == "flag":
            assert len(declared.flag_meanings.split()) == 2, name  # meanings of 0 and 1
        if declared.kind in ("count", "flag"):
            assert declared.units is None, name  # CF: counts and flags are dimensionless; no units
    nats = [n for n, d in METRICS_VARIABLES.items() if "(nats)" in d.long_name]
    assert {"nll_value", "nll_mean", "theorem1_lhs", "cardinality_log_score"} <= set(nats)
    assert all(METRICS_VARIABLES[n].units == "1" for n in nats)
    lengths = [n for n, d in METRICS_VARIABLES.items() if "state units" in d.long_name]
    assert {"gospa", "ospa", "motp", "tgospa", "gospa_localization"} <= set(lengths)
    assert all(METRICS_VARIABLES[n].units is None for n in lengths)


def test_an_undeclared_variable_is_not_written():
    with pytest.raises(ValueError, match="'nll_bogus': not declared in nllbench.measures.names"):
        store_metrics.encode_variables({"nll_bogus": (("step",), np.zeros(3))})


# ---------------------------------------------------------------------------
# a new file, read without nllbench
# ---------------------------------------------------------------------------


def test_plain_xarray_finds_every_measure_as_a_named_variable_with_long_name_and_units(new_file):
    ds_nb = read_metrics(new_file)
    with xr.open_dataset(new_file) as ds:  # xarray's defaults: CF decoding on
        assert ds.attrs["Conventions"] == "CF-1.8"
        assert ds.attrs["nllbench_schema_version"] == "3"
        assert not [v for v in ds.data_vars if str(v).startswith("packed")]
        assert set(ds.variables) == set(ds_nb.variables)
        for name in ds.variables:
            declared = METRICS_VARIABLES[name]
            var = ds[name]
            assert var.attrs["long_name"] == declared.long_name, name
            assert var.attrs.get("units") == declared.units, name
            assert "_FillValue" not in var.encoding or var.encoding["_FillValue"] is None, name
            # CF decoding changes nothing: no fill value, scale or offset; same numbers as nllbench reads
            np.testing.assert_array_equal(var.values, ds_nb[name].values, err_msg=name)
        for name in (*(f"nll_{t}" for t in NLL_STEP), "nll_exact"):
            assert ds[name].dims == ("step", "q")
        assert ds["nll_value"].sel(q=3).values[2] == np.inf
        assert ds["n_truth"].values.tolist() == [1, 2, 0, 2]
        assert ds["nll_exact"].attrs["flag_meanings"] == "bounded exact"
        np.testing.assert_array_equal(ds["nll_exact"].attrs["flag_values"], [0, 1])
        assert ds["q"].values.tolist() == [1, 3] and ds["step"].values.tolist() == [0, 1, 2, 3]


def test_netcdf4_dataset_finds_every_measure_unmasked(new_file):
    import netCDF4

    ds_nb = read_metrics(new_file)
    with netCDF4.Dataset(new_file) as nc:
        assert nc.data_model == "NETCDF3_64BIT_OFFSET"
        assert nc.getncattr("content") == "metrics"
        assert set(nc.variables) == set(ds_nb.variables)
        for name, var in nc.variables.items():
            declared = METRICS_VARIABLES[name]
            assert var.getncattr("long_name") == declared.long_name, name
            if declared.units is None:
                assert "units" not in var.ncattrs(), name
            else:
                assert var.getncattr("units") == declared.units, name
            values = var[...]  # auto-masking on: nothing may equal a default fill value
            assert not np.ma.is_masked(values), name
            np.testing.assert_array_equal(np.ma.getdata(values), ds_nb[name].values, err_msg=name)


# ---------------------------------------------------------------------------
# the same numbers as before
# ---------------------------------------------------------------------------


def test_a_new_file_reads_exactly_as_a_schema_2_file_of_the_same_run(tmp_path, metrics, new_file):
    old = tmp_path / "old.nc"
    write_v2(metrics, old, ATTRS)
    with xr.open_dataset(old, engine="netcdf4", decode_cf=False) as raw:
        assert raw.attrs["nllbench_schema_version"] == "2" and "packed_step" in raw.data_vars
    assert_same_dataset(read_metrics(new_file), read_metrics(old))


def test_the_schema_2_fixture_made_by_the_old_writer_reads_to_its_recorded_values():
    """tests/support/data/metrics_v2.nc was written by nllbench's schema-2 writer; metrics_v2.json holds
    what its reader returned then (dims, dtype, values as repr of floats)."""
    expected = json.loads((DATA / "metrics_v2.json").read_text())
    ds = read_metrics(DATA / "metrics_v2.nc")
    assert ds.attrs["nllbench_schema_version"] == "2"
    assert set(ds.variables) == set(expected["variables"])
    for name, want in expected["variables"].items():
        var = ds.variables[name]
        assert list(var.dims) == want["dims"], name
        assert var.dtype.str == want["dtype"], name
        got = [repr(float(x)) if var.dtype.kind == "f" else int(x) for x in np.ravel(var.values)]
        assert got == want["values"], name
    for key, value in expected["attrs"].items():
        assert ds.attrs[key] == value, key
    assert ds["nll_value"].values[2].tolist() == [np.inf, np.inf]


def test_version_1_metrics_files_read_the_same(tmp_path, new_file):
    """A file written before the packing (NetCDF-4, one variable per measure) reads as a new one does."""
    new = read_metrics(new_file)
    old = tmp_path / "old.nc"
    new.assign_attrs(nllbench_schema_version="1").to_netcdf(old, engine="netcdf4")
    assert_same_dataset(read_metrics(old), new)


def test_a_schema_3_file_written_as_netcdf4_by_another_tool_reads_the_same(tmp_path, new_file):
    """Schema 3 is the named variables; the container may be NetCDF-4 (e.g. xarray's default)."""
    new = read_metrics(new_file)
    other = tmp_path / "other.nc"
    new.to_netcdf(other, engine="netcdf4", format="NETCDF4")
    assert_same_dataset(read_metrics(other), new)


def test_a_packed_variable_with_a_wrong_member_list_is_refused(tmp_path, metrics):
    path = tmp_path / "old.nc"
    write_v2(metrics, path, ATTRS)
    with xr.open_dataset(path, engine="netcdf4", decode_cf=False) as handle:
        ds = handle.load()
    ds["packed_step"].attrs["members"] = "gospa"
    ds.to_netcdf(path, engine="netcdf4")
    with pytest.raises(SchemaError, match="variable 'packed_step': expected one row per name"):
        read_metrics(path)


# ---------------------------------------------------------------------------
# exact round trips of the stored types
# ---------------------------------------------------------------------------

DIM_SIZES = {"step": 5, "q": 2, "alpha": 3}
_SHAPES = {"nll_value": ("step", "q"), "gospa": ("step",), "n_truth": ("step",), "hota_tp": ("alpha",)}


@pytest.mark.parametrize(
    ("values", "stored"),
    [
        ([0, 1], np.int32),  # never byte or short: two counts added by a reader would wrap
        ([0, 32768], np.int32),
        ([-(2**24), 2**24], np.int32),  # a sum of 128 such files stays within int
        ([0, 2**24 + 1], np.float64),
        ([-(2**24) - 1, 0], np.float64),
        ([0, 2**31], np.float64),
        ([0, 2**53], np.float64),
    ],
)
def test_a_count_is_stored_as_int_or_as_double_beyond_summable_ints(values, stored):
    assert store_metrics._stored_count("n_truth", np.array(values)).dtype == stored


def test_two_files_counts_added_by_a_plain_reader_do_not_wrap(tmp_path):
    """The issue's case: two MOT17-sized hota_tp counts summed in plain xarray (int16 gave -11,915)."""
    from scipy.io import netcdf_file

    a, b = np.full(19, 26_768), np.full(19, 26_853)
    for name, values in (("a", a), ("b", b)):
        enc = store_metrics.encode_variables({"hota_tp": (("alpha",), values)})
        assert enc["hota_tp"][1].dtype == np.int32
        with netcdf_file(tmp_path / f"{name}.nc", "w") as nc:
            nc.createDimension("alpha", 19)
            var = nc.createVariable("hota_tp", enc["hota_tp"][1].dtype, ("alpha",))
            var[:] = enc["hota_tp"][1]
    with xr.open_dataset(tmp_path / "a.nc") as x, xr.open_dataset(tmp_path / "b.nc") as y:
        assert int((x["hota_tp"] + y["hota_tp"])[0]) == 53_621


def test_counts_beyond_float64_precision_are_refused():
    with pytest.raises(
        ValueError, match="'n_truth': expected integers within \\+-2\\*\\*53, got 9007199254740993"
    ):
        store_metrics.encode_variables({"n_truth": (("step",), np.array([2**53 + 1], dtype=np.int64))})


@pytest.mark.parametrize(
    ("name", "values", "match"),
    [
        ("n_truth", np.array([0.5]), "expected integer counts"),
        ("gospa", np.array([1]), "expected floats"),
        ("nll_exact", np.array([[2]]), "expected 0/1 flags"),
    ],
)
def test_a_variable_of_the_wrong_kind_is_not_written(name, values, match):
    dims = ("step", "q")[: values.ndim]
    with pytest.raises((TypeError, ValueError), match=match):
        store_metrics.encode_variables({name: (dims, values)})


@pytest.mark.parametrize(
    ("name", "stored", "match"),
    [
        ("n_truth", lambda shape: np.full(shape, 0.5), "'n_truth': expected integers"),
        ("n_truth", lambda shape: np.full(shape, np.inf), "'n_truth': expected integers within"),
        ("nll_exact", lambda shape: np.full(shape, 2, dtype=np.int8), "'nll_exact': expected 0/1 flags"),
        (
            "gospa",
            lambda shape: np.ones(shape, dtype=np.int32),
            r"'gospa': expected float values, got integer values \(int32\)",
        ),
    ],
)
def test_a_stored_variable_of_the_wrong_kind_is_refused_on_read(tmp_path, new_file, name, stored, match):
    path = tmp_path / "edited.nc"
    with xr.open_dataset(new_file, decode_cf=False) as ds:
        edited = ds.load()
    edited[name] = (edited[name].dims, stored(edited[name].shape))
    edited.to_netcdf(path, engine="scipy", format="NETCDF3_64BIT")
    with pytest.raises(SchemaError, match=match):
        read_metrics(path)


def test_integer_attributes_beyond_int32_round_trip_through_text(tmp_path, metrics):
    path = tmp_path / "m.nc"
    write_metrics(
        metrics,
        path,
        {**ATTRS, "seed": 2**40, "truth_seed": -(2**31) - 1, "steps": 4, "scenario": "Göteborg π"},
    )
    with xr.open_dataset(path) as plain:
        assert plain.attrs["seed"] == str(2**40)
        assert plain.attrs["scenario"] == "Göteborg π"
        assert plain.attrs["integer_attributes_as_text"] == "seed truth_seed"
    ds = read_metrics(path)
    assert ds.attrs["seed"] == 2**40 and type(ds.attrs["seed"]) is np.int64
    assert ds.attrs["truth_seed"] == -(2**31) - 1 and type(ds.attrs["truth_seed"]) is np.int64
    assert ds.attrs["steps"] == 4 and type(ds.attrs["steps"]) is np.int64
    assert "integer_attributes_as_text" not in ds.attrs
    assert ds.attrs["scenario"] == "Göteborg π"
    with pytest.raises(ValueError, match="attribute 'seed': expected an integer within int64"):
        write_metrics(metrics, tmp_path / "n.nc", {**ATTRS, "seed": 2**64})
