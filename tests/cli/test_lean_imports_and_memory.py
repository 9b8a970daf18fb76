"""What keeps ``nllbench evaluate`` lean, and that it changes no value.

* ``import nllbench`` imports no numerical library (the public names are
  imported on first use), and ``nllbench evaluate`` imports neither xarray
  nor pandas (pyarrow) nor matplotlib: the posterior and scenario files are
  read with netCDF4 (:func:`nllbench.store._netcdf.load`), the metrics file
  is written with scipy (:func:`nllbench.store._netcdf.write_classic`). Both
  checked in a fresh interpreter (``sys.modules``), not by time or size.
* The values: ``load`` gives what ``xarray.open_dataset(decode_cf=False)``
  gives; ``write_classic`` writes the bytes xarray's scipy engine wrote; the
  trajectory NLL's rows read from the Bernoulli pool equal those built from
  one row per member, to the bit.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys

import numpy as np
import pytest
from support.fresh_imports import modules_after
from support.paths import ROOT

import nllbench as nb
from nllbench.measures.evaluate import EvaluationSettings

SRC = ROOT / "src"


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """A short Williams-2015 scenario (clutter 10, 12 steps) and its PMBM and PHD posteriors."""
    from nllbench.pipeline.runs import filter_file, simulate_file

    d = tmp_path_factory.mktemp("lean")
    scenario = d / "scenario.nc"
    simulate_file("williams15", 3, scenario, {"clutter_rate": 10.0, "steps": 12})
    filter_file(scenario, "pmbm", d / "pmbm.nc")
    filter_file(scenario, "phd", d / "phd.nc")
    return d


def test_import_nllbench_loads_no_numerical_library():
    loaded = modules_after("import nllbench", top_level=True)
    assert not loaded & {"numpy", "scipy", "numba", "xarray", "pandas", "pyarrow", "matplotlib", "torch"}


def test_public_names_import_on_first_use():

    assert set(nb.__all__) <= set(dir(nb))
    assert (
        nb.PMBM.__module__ == "nllbench.engine.densities" and nb.read_posterior.__name__ == "read_posterior"
    )
    with pytest.raises(AttributeError, match="no attribute 'not_a_name'"):
        nb.not_a_name  # noqa: B018


def test_evaluate_imports_neither_xarray_nor_pandas(run):
    args = [str(run / "pmbm.nc"), str(run / "scenario.nc"), "-o", str(run / "lean_m.nc")]
    loaded = modules_after(
        f"from nllbench.cli import main\nassert main(['evaluate', *{args!r}]) == 0", top_level=True
    )
    assert "netCDF4" in loaded and "numba" in loaded  # it did read and evaluate
    assert not loaded & {"xarray", "pandas", "pyarrow", "matplotlib", "seaborn", "snakemake", "scipy.stats"}


@pytest.mark.parametrize("name", ["pmbm.nc", "phd.nc", "scenario.nc"])
def test_load_gives_what_xarray_reads(run, name):
    import xarray as xr

    from nllbench.store._netcdf import load

    content = "scenario" if name == "scenario.nc" else "posterior"
    lean = load(run / name, content)
    with xr.open_dataset(run / name, engine="netcdf4", decode_cf=False) as handle:
        ref = handle.load()
    assert sorted(lean.variables) == sorted(ref.variables)
    assert set(lean.data_vars) == set(ref.data_vars) and dict(lean.sizes) == dict(ref.sizes)
    for k, var in lean.variables.items():
        want = ref.variables[k]
        assert var.dims == want.dims, k
        if var.values.dtype.kind == "O":  # text (the state names): str objects, where xarray's index has <U
            assert want.values.dtype.kind in "OU" and var.values.tolist() == want.values.tolist(), k
        else:
            assert var.values.dtype == want.values.dtype, k
            assert var.values.tobytes() == want.values.tobytes(), k
        assert var.attrs.keys() == want.attrs.keys()
    assert lean.attrs.keys() == ref.attrs.keys()
    for k, v in lean.attrs.items():
        assert np.array_equal(v, ref.attrs[k]) and type(v) is type(ref.attrs[k]), k


def test_read_posterior_refuses_other_content_without_xarray(run):
    from nllbench.store import SchemaError, read_posterior

    with pytest.raises(SchemaError, match="expected a posterior file"):
        read_posterior(run / "scenario.nc")
    with pytest.raises(FileNotFoundError, match="no such file"):
        read_posterior(run / "missing.nc")


def metrics_of(run, posterior: str):
    """The RunMetrics of ``posterior`` (with its trajectory NLL where it has one), and the file attrs."""

    from nllbench.measures.evaluate import evaluate_runs
    from nllbench.measures.likelihood.filter_trajectory_nll import posterior_trajectory_runs
    from nllbench.store import read_posterior, read_scenario

    post, data = read_posterior(run / posterior), read_scenario(run / "scenario.nc")
    lo, hi = data.attrs["fov_low"], data.attrs["fov_high"]
    s = EvaluationSettings(qs=(1, 10))
    (m,) = evaluate_runs(post, data.truth, data.truth_ids, lo, hi, [s], post.estimates)
    traj = posterior_trajectory_runs(post, data.truth, data.truth_ids, lo, hi, [s])
    if not isinstance(traj, str):
        m = dataclasses.replace(m, trajectory=traj[0])
    attrs = {**post.attrs, "seed": 2**40, "fov": [0.0, 1.5], "flag": True, "none": None, "x": {"a": 1}}
    return m, attrs


@pytest.mark.parametrize("posterior", ["pmbm.nc", "phd.nc"])
def test_write_classic_writes_the_bytes_xarray_wrote(run, tmp_path, posterior):
    """A metrics file written without xarray equals, byte for byte, the one written through it."""
    import xarray as xr

    from nllbench.store import metrics as sm
    from nllbench.store._netcdf import attrs_out, write_dataset

    m, attrs = metrics_of(run, posterior)
    sm.write_metrics(m, tmp_path / "lean.nc", attrs)
    data = {**sm._nll_variables(m), **sm._point_variables(m), **sm._run_variables(m)}
    data.update(sm._measure_variables(m))
    data.update(sm._proper_variables(m))
    data.update(sm._trajectory_variables(m))
    data.update(sm._pgospa_variables(m))
    data["step"] = (("step",), np.arange(m.steps))
    data["q"] = (("q",), np.array(m.qs, dtype=np.int64))
    ds = xr.Dataset(sm.encode_variables(data), attrs=sm.classic_attrs(attrs_out(sm._metrics_attrs(m, attrs))))
    write_dataset(ds, tmp_path / "xarray.nc", file_format=sm.METRICS_FORMAT)
    assert (tmp_path / "lean.nc").read_bytes() == (tmp_path / "xarray.nc").read_bytes()
    assert ("trajectory_nll" in ds) == (posterior == "pmbm.nc")
    assert ("pgospa" in ds) == ("ptgospa" in ds) == (posterior == "pmbm.nc")  # not for a PHD
    assert "energy_score" in ds  # the proper scores (on by default) are written the same way


def test_write_classic_refuses_what_classic_netcdf_cannot_hold(tmp_path):
    from nllbench.store._netcdf import write_classic

    ok = {"v": (("n",), np.arange(3.0), {})}
    with pytest.raises(ValueError, match="attribute 'a/b'"):
        write_classic(ok, {"a/b": 1}, tmp_path / "x.nc")
    with pytest.raises(ValueError, match="variable 'v': expected values that int32 holds"):
        write_classic({"v": (("n",), np.array([2**40]), {})}, {}, tmp_path / "x.nc")
    with pytest.raises(TypeError, match="variable 'v': expected numbers"):
        write_classic({"v": (("n",), np.array(["a"]), {})}, {}, tmp_path / "x.nc")
    with pytest.raises(ValueError, match="dimension 'n' of length 2"):
        write_classic({**ok, "w": (("n",), np.zeros(2), {})}, {}, tmp_path / "x.nc")
    assert not (tmp_path / "x.nc").exists()


def rows_per_member(posteriors, dims):
    """The trajectory NLL's merged rows as built before the pool: one row per member, then merged."""
    from nllbench.measures.likelihood.filter_trajectory_nll import _step_rows

    rows = np.concatenate([_step_rows(k, d, dims) for k, d in enumerate(posteriors)])
    keys = np.ascontiguousarray(rows[:, :-1])
    view = keys.view(np.dtype((np.void, keys.dtype.itemsize * keys.shape[1]))).ravel()
    _, first, inverse = np.unique(view, return_index=True, return_inverse=True)
    return keys[first], np.bincount(inverse.ravel(), weights=rows[:, -1])


@pytest.mark.parametrize("dims", [[0, 1], [0, 1, 2, 3]])
def test_pooled_trajectory_rows_equal_rows_per_member(run, dims):
    from nllbench.engine.densities import PMBM
    from nllbench.measures.likelihood.filter_trajectory_nll import _pooled_rows
    from nllbench.store import read_posterior

    post = list(read_posterior(run / "pmbm.nc"))
    assert all(d.is_pooled for d in post) and sum(d.n_hypotheses for d in post) > len(post)
    keys, weight = rows_per_member(post, dims)
    copies = [PMBM(d.ppp, d.hypotheses, d.weights) for d in post]  # the filter's layout: no pool
    for densities in (post, copies):
        frame, label, w, r, means, covs = _pooled_rows(densities, dims)
        dd = len(dims)
        got = np.column_stack([frame, label, r, means, covs.reshape(-1, dd * dd)])
        assert got.tobytes() == keys.tobytes() and w.tobytes() == weight.tobytes()


def run_python(code: str, **env) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(SRC), **env},
    )


def test_import_nllbench_does_not_import_torch_and_a_missing_torch_names_the_extra():
    out = run_python("import nllbench, sys, json; nllbench.nll; print(json.dumps('torch' in sys.modules))")
    assert json.loads(out.stdout.strip().splitlines()[-1]) is False
    out = run_python("import sys; sys.modules['torch'] = None\nimport nllbench.torch")
    assert out.returncode != 0 and 'pip install "nllbench[torch]"' in out.stderr


def test_reading_the_declarations_loads_no_numerical_library_beyond_numpy():
    probe = (
        "import sys, json\nimport nllbench.measures.names\n"
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(SRC)},
    )
    loaded = set(json.loads(out.stdout.strip().splitlines()[-1]))
    assert not loaded & {"scipy", "numba", "xarray", "pandas", "matplotlib"}
