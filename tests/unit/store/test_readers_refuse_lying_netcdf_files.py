"""NetCDF files that lie: readers refuse what a file does not declare, by file and variable."""

from __future__ import annotations

import numpy as np
import pytest
from support.cube_files import cube_file
from support.paths import DATA


def _posterior(tmp_path):
    import nllbench as nb
    from nllbench.store import write_posterior

    steps = [
        nb.MultiBernoulli.gaussian([1.0, 0.0], np.zeros((2, 2)), np.tile(np.eye(2), (2, 1, 1))),
        nb.MultiBernoulli.gaussian([1.0], np.ones((1, 2)), np.eye(2)[None]),
    ]
    path = tmp_path / "post.nc"
    write_posterior(steps, path)
    return path


def _rewritten(path, name, dims, values):
    """A copy of the NetCDF file ``path`` with variable ``name`` stored as (``dims``, ``values``)."""
    import xarray as xr

    with xr.open_dataset(path, decode_cf=False) as ds:
        ds = ds.load()
    ds[name] = (dims, values)
    out = path.with_name("lying.nc")
    ds.to_netcdf(out, engine="netcdf4")
    return out


@pytest.mark.parametrize(
    ("stored", "found"),
    [
        (lambda r: r.astype(np.int8), r"integer values \(int8\)"),
        (lambda r: r.astype(str), r"text values"),
    ],
)
def test_a_posterior_whose_existence_probabilities_are_not_floats_is_refused_by_name(tmp_path, stored, found):
    """bern_r stored as int8 0/1 (or as text) once read as if it were the floats (mean NLL 60 for 11)."""
    from nllbench.store import SchemaError, read_posterior

    path = _posterior(tmp_path)
    read_posterior(path)  # the file as written reads
    r = np.array([1.0, 0.0, 1.0])
    lying = _rewritten(path, "bern_r", ("bern",), stored(r))
    with pytest.raises(
        SchemaError, match=r"lying.nc: variable 'bern_r': expected float values, got " + found
    ):
        read_posterior(lying)


def test_a_posterior_variable_over_other_dimensions_is_refused_by_name(tmp_path):
    from nllbench.store import SchemaError, read_posterior

    path = _posterior(tmp_path)
    lying = _rewritten(path, "bern_mean", ("state", "bern"), np.zeros((2, 3)))
    with pytest.raises(
        SchemaError, match=r"variable 'bern_mean': expected dimensions \(bern, state\), got \(state, bern\)"
    ):
        read_posterior(lying)


def test_a_scenario_whose_truth_ids_are_floats_is_refused_by_name(tmp_path):
    from nllbench.simulation.scenarios import get_scenario, simulate
    from nllbench.store import SchemaError, read_scenario, write_scenario

    sim = simulate(get_scenario("williams15", steps=3, clutter_rate=1), np.random.default_rng(0), seed=0)
    path = tmp_path / "s.nc"
    write_scenario(sim, path)
    read_scenario(path)
    ids = np.concatenate(sim.truth_ids).astype(float)
    lying = _rewritten(path, "truth_id", ("truth",), ids)
    with pytest.raises(SchemaError, match=r"variable 'truth_id': expected integer values, got float values"):
        read_scenario(lying)


def _metrics_file(tmp_path):
    """A small metrics file (schema 3): 2 steps, Q = 1 and 2."""
    import nllbench as nb
    from nllbench.measures.evaluate import EvaluationSettings, evaluate_run
    from nllbench.store import write_metrics

    truth = [np.array([[1.0, 2.0, 0.0, 0.0]]), np.empty((0, 4))]
    posts = [nb.MultiBernoulli.gaussian([0.9], [[1.0, 2.0, 0.0, 0.0]], np.eye(4)[None])] * 2
    run = evaluate_run(
        posts, truth, [np.arange(1), np.arange(0)], [0.0, 0.0], [10.0, 10.0], EvaluationSettings(qs=(1, 2))
    )
    path = tmp_path / "seed0.nc"
    write_metrics(run, path, {"seed": 0})
    return path


def test_a_metrics_file_with_the_nll_over_q_then_step_is_refused_by_name(tmp_path):
    """nll_value stored with dimensions (q, step) ended in an IndexError; now one line names it."""
    import xarray as xr

    from nllbench.store import SchemaError, read_metrics

    path = _metrics_file(tmp_path)
    read_metrics(path)
    with xr.open_dataset(path, decode_cf=False) as ds:
        ds = ds.load()
    ds["nll_value"] = (("q", "step"), ds["nll_value"].values.T)
    lying = tmp_path / "lying.nc"
    ds.to_netcdf(lying, engine="scipy", format="NETCDF3_64BIT")
    with pytest.raises(
        SchemaError, match=r"lying.nc: variable 'nll_value': expected dimensions \(step, q\), got \(q, step\)"
    ):
        read_metrics(lying)


def test_an_old_metrics_file_whose_packed_types_or_dimensions_lie_is_refused_by_name(tmp_path):
    """Schema 2 (tests/support/data/metrics_v2.nc) reads; its packed members are checked like any variable."""
    import xarray as xr

    from nllbench.store import SchemaError, read_metrics

    fixture = DATA / "metrics_v2.nc"
    read_metrics(fixture)
    with xr.open_dataset(fixture, decode_cf=False) as ds:
        ds = ds.load()
    names = str(ds["packed_step"].attrs["members"]).split()
    dtypes = str(ds["packed_step"].attrs["member_dtypes"]).split()
    dtypes[names.index("gospa")] = "int64"  # a float measure said to be an integer count
    ds["packed_step"].values[names.index("gospa")] = np.round(ds["packed_step"].values[names.index("gospa")])
    ints = ds.copy(deep=True)
    ints["packed_step"].attrs["member_dtypes"] = " ".join(dtypes)
    ints.to_netcdf(tmp_path / "ints.nc", engine="netcdf4")
    with pytest.raises(
        SchemaError, match=r"variable 'gospa': expected float values, got integer values \(int64\)"
    ):
        read_metrics(tmp_path / "ints.nc")
    swapped = ds.copy(deep=True)
    packed = swapped["packed_step_q"]
    swapped["packed_step_q"] = (
        ("packed_step_q_member", "q", "step"),
        packed.values.swapaxes(1, 2),
        packed.attrs,
    )
    swapped.to_netcdf(tmp_path / "swapped.nc", engine="netcdf4")
    with pytest.raises(
        SchemaError, match=r"variable 'nll_value': expected dimensions \(step, q\), got \(q, step\)"
    ):
        read_metrics(tmp_path / "swapped.nc")


def test_a_step_cube_whose_measure_is_integer_or_transposed_is_refused_by_name(tmp_path):
    from nllbench.pipeline.cube import read_step_cube
    from nllbench.store import SchemaError

    path = cube_file(tmp_path)
    cube = read_step_cube(path)
    assert float(cube["nll"].values.ravel()[1]) == 2.0
    lying = cube.copy(deep=True)
    lying["gospa"] = (cube["gospa"].dims, (cube["gospa"].values * 4).astype(np.int64), cube["gospa"].attrs)
    lying.to_netcdf(tmp_path / "ints.nc", engine="netcdf4")
    with pytest.raises(SchemaError, match=r"ints.nc: variable 'gospa': expected float values, got integer"):
        read_step_cube(tmp_path / "ints.nc")
    swapped = cube.copy(deep=True)
    swapped["nll"] = swapped["nll"].transpose("step", ...)
    swapped.to_netcdf(tmp_path / "swapped.nc", engine="netcdf4")
    with pytest.raises(SchemaError, match=r"swapped.nc: variable 'nll': expected dimensions \(scenario, "):
        read_step_cube(tmp_path / "swapped.nc")
