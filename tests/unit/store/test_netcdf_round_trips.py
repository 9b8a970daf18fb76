"""The NetCDF store: exact round trips, validation on read, no partial files."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
import xarray as xr
from support.posterior_files import assert_same, random_steps

import nllbench as nb
from nllbench.simulation.scenarios import get_scenario, simulate
from nllbench.store import (
    MARKER,
    Output,
    SchemaError,
    check_output,
    committed_together,
    read_posterior,
    read_scenario,
    truth_digest,
    write_posterior,
    write_scenario,
)


def test_scenario_round_trip(tmp_path):
    sc = get_scenario("williams15", steps=12, clutter_rate=3)
    sim = simulate(sc, np.random.default_rng(4), seed=4)
    path = tmp_path / "s.nc"
    write_scenario(sim, path)
    back = read_scenario(path)
    assert back.steps == 12 and back.attrs["seed"] == 4 and back.attrs["scenario"] == "williams15"
    for a, b in zip(sim.truth + sim.measurements, back.truth + back.measurements, strict=True):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(sim.origins, back.origins, strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(back.model.F, sc.model.F)
    np.testing.assert_array_equal(back.model.birth.covs, sc.model.birth.covs)
    assert back.model.clutter_rate == 3


@pytest.fixture
def pmbm_file(tmp_path):
    rng = np.random.default_rng(0)
    path = tmp_path / "post.nc"
    write_posterior(random_steps(rng, "PMBM", 2, 3), path)
    return path


def rewrite(path, change):
    ds = xr.open_dataset(path, decode_cf=False).load()
    ds.close()
    ds = change(ds)
    ds.to_netcdf(path)


@pytest.mark.parametrize(
    "change, match",
    [
        (lambda ds: ds.drop_vars("bern_r"), "variable 'bern_r' is missing"),
        (lambda ds: ds.assign(bern_r=ds.bern_r * 0 + 1.5), "r: expected values in \\[0, 1\\]"),
        (lambda ds: ds.assign(hyp_weight=ds.hyp_weight * 2), "weights: expected weights that sum to 1"),
        (lambda ds: ds.assign(bern_count=ds.bern_count + 1), "variable 'bern_r': expected .* rows"),
        (lambda ds: ds.assign(bern_mean=ds.bern_mean * np.nan), "variable 'bern_mean': expected finite"),
        (lambda ds: ds.assign(hyp_member=ds.hyp_member + 100), "hyp_member' at step 0: index out of range"),
        (lambda ds: ds.assign_attrs(content="scenario"), "expected a posterior file"),
        (lambda ds: ds.assign_attrs(nllbench_schema_version="0"), "expected nllbench_schema_version 1"),
        (lambda ds: ds.assign_attrs(family="GLMB"), "attribute 'family': expected PPP, IIDCluster or PMBM"),
    ],
)
def test_read_validates_and_names_the_variable(pmbm_file, change, match):
    rewrite(pmbm_file, change)
    with pytest.raises(SchemaError, match=match):
        read_posterior(pmbm_file)


def test_unreadable_and_missing_files(tmp_path):
    junk = tmp_path / "junk.nc"
    junk.write_text("not netcdf")
    with pytest.raises(SchemaError, match="not a readable NetCDF file"):
        read_posterior(junk)
    with pytest.raises(FileNotFoundError, match="no such file"):
        read_scenario(tmp_path / "missing.nc")


def test_failed_write_leaves_nothing(tmp_path):
    laplace = nb.MultiBernoulli.laplace([0.5], [[0.0, 0.0]], 1.0)
    path = tmp_path / "out.nc"
    with pytest.raises(ValueError, match="only Gaussian Bernoulli densities"):
        write_posterior([laplace], path)
    assert os.listdir(tmp_path) == []
    with pytest.raises(ValueError, match="expected one family"):
        write_posterior([nb.PPP.empty(2), laplace], path)
    assert os.listdir(tmp_path) == []


def test_output_errors_name_the_users_path_and_the_cause(tmp_path):
    (tmp_path / "sc12.nc").write_text("a file")
    with pytest.raises(ValueError, match=r"-o '.*sc12\.nc/out\.nc': .*sc12\.nc' is a file, not a directory"):
        check_output(tmp_path / "sc12.nc" / "out.nc", "-o")
    with pytest.raises(ValueError, match=r"is a directory"):
        check_output(tmp_path, "-o")
    with pytest.raises(ValueError, match=r"expected a directory path, but .* is a file"):
        check_output(tmp_path / "sc12.nc", "--output-dir", directory=True)
    with pytest.raises(
        ValueError, match=r"-o '/proc/x\.nc': cannot write in '/proc': the directory does not"
    ):
        check_output("/proc/x.nc", "-o")
    with pytest.raises(ValueError, match=r"--summary '.*a\.nc': the same path as -o"):
        committed_together(Output(tmp_path / "a.nc", "-o"), Output(tmp_path / "a.nc", "--summary"))
    assert sorted(os.listdir(tmp_path)) == ["sc12.nc"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write into a read-only directory")
def test_output_in_an_unwritable_directory(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    with pytest.raises(ValueError, match=r"cannot write in '.*locked': Permission denied"):
        check_output(locked / "x.csv", "--summary")


@pytest.mark.skipif(not os.path.isdir("/sys/kernel"), reason="needs Linux sysfs")
def test_output_where_even_root_may_not_write():
    with pytest.raises(
        ValueError, match=r"--summary '/sys/x\.csv': cannot write in '/sys': Permission denied"
    ):
        check_output("/sys/x.csv", "--summary")
    with pytest.raises(ValueError, match=r"-o '/sys/kernel/new/x\.nc': cannot create directory"):
        check_output("/sys/kernel/new/x.nc", "-o")


def test_a_failed_command_leaves_none_of_its_outputs(tmp_path):
    a, b = tmp_path / "new" / "a.csv", tmp_path / "b"
    with pytest.raises(RuntimeError, match="boom"):
        with committed_together(Output(a, "-o"), Output(b, "--output-dir", directory=True)) as (ta, tb):
            ta.write_text("x")
            (tb / "f").write_text("y")
            raise RuntimeError("boom")
    assert os.listdir(tmp_path) == []  # no outputs, no temporaries, not even the created parent
    with committed_together(Output(a, "-o"), Output(b, "--output-dir", directory=True)) as (ta, tb):
        ta.write_text("x")
        (tb / "f").write_text("y")
    assert a.read_text() == "x" and sorted(os.listdir(b)) == [MARKER, "f"]
    with committed_together(Output(b, "--output-dir", directory=True)) as (tb,):
        (tb / "g").write_text("z")
    assert sorted(os.listdir(b)) == [MARKER, "g"] and sorted(os.listdir(tmp_path)) == ["b", "new"]


def test_truth_digest_identifies_the_truth(tmp_path):
    sc = get_scenario("williams15", steps=4)
    sim = simulate(sc, np.random.default_rng(3), seed=3)
    write_scenario(sim, tmp_path / "s.nc")
    data = read_scenario(tmp_path / "s.nc")
    digest = truth_digest(sim.truth, sim.truth_ids)
    assert data.attrs["truth_sha256"] == digest == truth_digest(data.truth, data.truth_ids)
    moved = [x.copy() for x in sim.truth]
    moved[2][0, 0] = np.nextafter(moved[2][0, 0], np.inf)
    assert truth_digest(moved, sim.truth_ids) != digest
    relabelled = [i.copy() for i in sim.truth_ids]
    relabelled[0][0] += 100
    assert truth_digest(sim.truth, relabelled) != digest
    assert truth_digest(sim.truth[:3], sim.truth_ids[:3]) != digest


def test_save_figure_and_write_text_leave_nothing_on_failure(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from nllbench.store import save_figure, write_text

    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    written = save_figure(fig, tmp_path / "fig" / "a.png")
    assert [p.name for p in written] == ["a.png", "a.pdf"]
    assert (tmp_path / "fig" / "a.png").read_bytes()[:4] == b"\x89PNG"
    assert (tmp_path / "fig" / "a.pdf").read_bytes()[:4] == b"%PDF"
    assert sorted(os.listdir(tmp_path / "fig")) == ["a.pdf", "a.png"]
    with pytest.raises(ValueError, match="is a file"):
        save_figure(fig, tmp_path / "fig" / "a.png" / "b.png")
    plt.close(fig)
    write_text(tmp_path / "t.txt", "one\n")
    with pytest.raises(TypeError):
        write_text(tmp_path / "t.txt", b"bytes are not text")
    assert (tmp_path / "t.txt").read_text() == "one\n"
    assert sorted(os.listdir(tmp_path)) == ["fig", "t.txt"]


def test_bernoulli_pool_dedup_equals_numpy_unique_rows():
    # the posterior writer's pool: same distinct rows, order and indices as np.unique(axis=0)
    from nllbench.store.posterior import _unique_rows

    rng = np.random.default_rng(3)
    for n, w in [(0, 3), (1, 1), (7, 4), (300, 22)]:
        base = rng.integers(-2, 3, (max(n // 3, 1), w)).astype(float) * rng.choice([1.0, 1e-300, 1e300])
        rows = base[rng.integers(0, len(base), n)]
        pool, inverse = _unique_rows(rows)
        if n == 0:
            assert pool.shape == (0, w) and inverse.size == 0
            continue
        want_pool, want_inverse = np.unique(rows, axis=0, return_inverse=True)
        assert np.array_equal(pool, want_pool) and np.array_equal(inverse, want_inverse.ravel())
        assert np.array_equal(pool[inverse], rows)


def _shared_covariance_pmbm(cov):
    """Two steps of a PMBM whose Bernoullis share covariances (as a Kalman filter's do)."""
    means = np.array([[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]])
    mb = nb.MultiBernoulli([0.9, 0.5, 1.0], nb.Gaussians(means, np.stack([cov, cov, 2 * cov])))
    return [nb.PMBM(None, (mb, mb.subset([0, 2])), [0.7, 0.3]), nb.PMBM(None, (mb,), [1.0])]


def test_posterior_covariances_are_pooled_and_read_back_bit_for_bit(tmp_path):
    import xarray as xr

    cov = np.array([[2.0, 0.1 + 0.2], [0.1 + 0.2, 1.0 / 3.0]])  # symmetric bit for bit
    steps = _shared_covariance_pmbm(cov)
    path = tmp_path / "p.nc"
    write_posterior(steps, path)
    raw = xr.open_dataset(path, decode_cf=False)
    assert "bern_cov" not in raw and raw["bern_cov_pool"].shape == (2, 3)  # 2 distinct of 6 rows
    assert raw.attrs["nllbench_schema_version"] == "2"  # no mixture Bernoullis: still version 2
    for a, b in zip(steps, read_posterior(path), strict=True):
        assert_same(a, b)


def test_covariances_not_symmetric_bit_for_bit_are_stored_whole():
    # the densities symmetrise their covariances, so this is checked on the dataset itself
    import xarray as xr

    from nllbench.store._netcdf import pool_covariances, unpool_covariances

    covs = np.stack([np.eye(2), np.array([[2.0, 0.3], [np.nextafter(0.3, 1.0), 1.0]])])
    dims = ("state", "state2")
    ds = xr.Dataset({"a_cov": (("a", *dims), covs), "b_cov": (("b", *dims), covs[:1])})
    pooled = pool_covariances(ds)
    assert "a_cov" in pooled and "a_cov_pool" not in pooled  # one matrix is 1 ulp off: kept whole
    assert "b_cov" not in pooled and pooled["b_cov_pool"].shape == (1, 3)
    back = unpool_covariances(pooled, "x.nc")
    for name in ("a_cov", "b_cov"):
        assert np.array_equal(back[name].values, ds[name].values)


def test_version_1_posterior_files_read_the_same(tmp_path):
    import xarray as xr

    from nllbench.store._netcdf import unpool_covariances

    steps = _shared_covariance_pmbm(np.eye(2))
    new = tmp_path / "new.nc"
    write_posterior(steps, new)
    old = tmp_path / "old.nc"
    ds = unpool_covariances(xr.open_dataset(new, decode_cf=False).load(), new)
    ds.assign_attrs(nllbench_schema_version="1").to_netcdf(old, engine="netcdf4")
    for a, b in zip(read_posterior(new), read_posterior(old), strict=True):
        assert_same(a, b)


def test_a_pooled_covariance_index_out_of_range_is_refused(tmp_path):
    import xarray as xr

    path = tmp_path / "p.nc"
    write_posterior(_shared_covariance_pmbm(np.eye(2)), path)
    ds = xr.open_dataset(path, decode_cf=False).load()
    ds["bern_cov_index"].values[0] = 7
    bad = tmp_path / "bad.nc"
    ds.to_netcdf(bad, engine="netcdf4")
    with pytest.raises(SchemaError, match="bern_cov_index"):
        read_posterior(bad)


# ---------------------------------------------------------------------------
# owned outputs: nllbench replaces only what it wrote, never an input
# ---------------------------------------------------------------------------


def test_a_directory_nllbench_did_not_write_is_refused_and_untouched(tmp_path):
    thesis = tmp_path / "thesis"
    thesis.mkdir()
    (thesis / "thesis.tex").write_text("two years of work")
    with pytest.raises(
        ValueError, match=r"--out-dir '.*thesis': refusing to replace a directory .*thesis\.tex"
    ):
        with committed_together(Output(thesis, "--out-dir", directory=True)):
            pytest.fail("the body must not run")
    assert os.listdir(thesis) == ["thesis.tex"] and sorted(os.listdir(tmp_path)) == ["thesis"]
    # an empty directory, or one nllbench wrote (it carries the marker), is replaced
    empty = tmp_path / "empty"
    empty.mkdir()
    for target in (empty, empty):
        with committed_together(Output(target, "--out-dir", directory=True)) as (tmp,):
            (tmp / "a.csv").write_text("x")
        assert sorted(os.listdir(target)) == [MARKER, "a.csv"]
    assert json.loads((empty / MARKER).read_text())["written_by"] == "nllbench"


def test_a_symlinked_output_directory_is_refused(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    with pytest.raises(ValueError, match="symbolic link"):
        check_output(tmp_path / "link", "--out-dir", directory=True)


@pytest.mark.parametrize(
    ("output", "inputs", "why"),
    [
        ("met", ["met"], "is the same path as the input"),
        ("parent", ["parent/sub/met"], "contains the input"),
        ("met/out", ["met"], "lies inside the input directory"),
        ("s.nc", ["s.nc"], "is the same path as the input"),
        ("hard.nc", ["s.nc"], "is the same path as the input"),
        ("alias/s.nc", ["s.nc"], "is the same path as the input"),
    ],
)
def test_an_output_that_is_contains_or_lies_inside_an_input_is_refused(tmp_path, output, inputs, why):
    (tmp_path / "parent/sub/met").mkdir(parents=True)
    (tmp_path / "met").mkdir()
    (tmp_path / "met" / "seed0.nc").write_text("input")
    (tmp_path / "s.nc").write_text("input")
    os.link(tmp_path / "s.nc", tmp_path / "hard.nc")
    (tmp_path / "alias").symlink_to(tmp_path)
    before = sorted(str(p) for p in tmp_path.rglob("*"))
    directory = not output.endswith(".nc")
    with pytest.raises(ValueError, match=f"-o '.*{output}': {why} --in '.*{inputs[0]}'"):
        committed_together(
            Output(tmp_path / output, "-o", directory), inputs=[("--in", tmp_path / i) for i in inputs]
        )
    assert sorted(str(p) for p in tmp_path.rglob("*")) == before


def test_temporaries_never_nest(tmp_path):
    # a writer handed a command's temporary (write_posterior(tmp) inside `-o post.nc`) writes it directly
    from nllbench.store import atomic_file, is_temporary, partial_name

    out = tmp_path / "post.nc"
    with committed_together(Output(out, "-o")) as (tmp,):
        assert is_temporary(tmp) and partial_name(tmp) == tmp
        with atomic_file(tmp) as inner:
            assert inner == tmp
            inner.write_text("whole")
        assert sorted(os.listdir(tmp_path)) == [".post.nc.nllbench-lock", tmp.name]
    assert sorted(os.listdir(tmp_path)) == ["post.nc"] and out.read_text() == "whole"
    # and a directory written inside a command's temporary directory
    with committed_together(Output(tmp_path / "tables", "--out-dir", directory=True)) as (tmp,):
        with committed_together(Output(tmp, "--out-dir", directory=True)) as (inner,):
            assert inner == tmp
            (inner / "a.csv").write_text("x")
    assert sorted(os.listdir(tmp_path / "tables")) == [MARKER, "a.csv"]
    assert sorted(os.listdir(tmp_path)) == ["post.nc", "tables"]


def test_a_killed_runs_temporaries_are_removed_by_the_next_write_into_the_directory(tmp_path):
    # left by a run killed while writing other targets; no live writer holds the directory
    (tmp_path / ".other.nc.nllbench-partial.123-0a1b2c3d").write_text("half")
    (tmp_path / ".other.nc.nllbench-lock").write_text("")
    (tmp_path / ".batch0.nllbench-partial.123-0a1b2c3d").mkdir()
    (tmp_path / ".tables.nllbench-old.4567-99aabbcc").mkdir()  # replaced: tables/ is in place
    (tmp_path / "tables").mkdir()
    (tmp_path / "keep.txt").write_text("not ours")
    # a finished directory moved aside by a run killed before it renamed the new one into place
    (tmp_path / ".met.nllbench-old.4567-99aabbcc").mkdir()
    (tmp_path / ".met.nllbench-old.4567-99aabbcc" / "seed0.nc").write_text("finished")
    (tmp_path / ".met.nllbench-partial.4567-99aabbcc").mkdir()
    with committed_together(Output(tmp_path / "new.csv", "-o")) as (tmp,):
        tmp.write_text("x")
    assert sorted(os.listdir(tmp_path)) == ["keep.txt", "met", "new.csv", "tables"]
    assert (tmp_path / "met" / "seed0.nc").read_text() == "finished"


def test_a_live_writers_temporaries_are_left_alone(tmp_path):
    # while one command writes into a directory, another one writing there does not touch its temporary
    with committed_together(Output(tmp_path / "slow.nc", "-o")) as (slow,):
        slow.write_text("half")
        with committed_together(Output(tmp_path / "fast.csv", "-o")) as (fast,):
            fast.write_text("x")
        assert slow.read_text() == "half"
        slow.write_text("whole")
    assert sorted(os.listdir(tmp_path)) == ["fast.csv", "slow.nc"]


def test_a_directory_holding_an_old_copy_whose_output_is_missing_is_not_counted_empty(tmp_path):
    from nllbench.store import check_replaceable

    out = tmp_path / "out"
    (out / ".met.nllbench-partial.4567-99aabbcc").mkdir(parents=True)  # a killed run's leftover
    check_replaceable(out, "--out-dir")  # counts as empty
    (out / ".met.nllbench-old.4567-99aabbcc").mkdir()  # met's previous finished copy, met missing
    with pytest.raises(ValueError, match="refusing to replace a directory that nllbench did not write"):
        check_replaceable(out, "--out-dir")
