"""Files that lie: readers refuse what a file does not declare, by file, variable (or tag) and line.

Stone Soup YAML files are checked tag by tag before anything is built from them; NetCDF files
(posterior, scenario, metrics, the per-step cube) variable by variable for the dimensions and
the kind of values (float, integer, text) their schema declares.
"""

from __future__ import annotations

import datetime
import re

import numpy as np
import pytest
from support.paths import DATA

T0 = datetime.datetime(2021, 1, 1)


# ---------------------------------------------------------------------------
# Stone Soup YAML: only tracking types are built
# ---------------------------------------------------------------------------


def _writer_yaml(tmp_path):
    """A YAML file whose second key holds a Stone Soup YAMLWriter aimed at a file of the user's."""
    victim = tmp_path / "precious.csv"
    victim.write_text("frame,id,x,y\n1,1,0.0,0.0\n")
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        f"tracks: []\nwriter: !stonesoup.writer.yaml.YAMLWriter\n- path: {victim}\n- groundtruth_source: 1\n"
    )
    return bad, victim


def test_a_stonesoup_yaml_holding_a_writer_is_refused_by_tag_and_line_and_its_target_is_intact(tmp_path):
    pytest.importorskip("stonesoup")
    from nllbench.trackers.stonesoup_yaml import load_stonesoup_yaml

    bad, victim = _writer_yaml(tmp_path)
    before = victim.read_bytes()
    with pytest.raises(
        ValueError, match=r"bad.yaml', line 2: tag '!stonesoup.writer.yaml.YAMLWriter' is not"
    ):
        load_stonesoup_yaml(bad)
    assert victim.read_bytes() == before


def test_scoring_a_yaml_file_with_a_writer_leaves_the_users_file_and_says_which_tag(tmp_path, capsys):
    pytest.importorskip("stonesoup")
    from nllbench.cli import main

    bad, victim = _writer_yaml(tmp_path)
    before = victim.read_bytes()
    assert main(["score", str(bad), str(victim), "-o", str(tmp_path / "m.nc")]) != 0
    err = capsys.readouterr().err
    assert "!stonesoup.writer.yaml.YAMLWriter" in err and "line 2" in err
    assert victim.read_bytes() == before and not (tmp_path / "m.nc").exists()


@pytest.mark.parametrize(
    "tag",
    [
        "!stonesoup.reader.yaml.YAMLTrackReader",
        "!pathlib.Path",
        "!stonesoup.types.state.np",  # a name an allowed module imported, not a class defined there
        "!stonesoup.types.track.Track.__init__",
        "!!python/object/apply:os.system",
        "!my.own.Thing",
    ],
)
def test_any_tag_but_a_tracking_types_is_refused_by_name(tmp_path, tag):
    pytest.importorskip("stonesoup")
    from nllbench.trackers.stonesoup_yaml import load_stonesoup_yaml

    path = tmp_path / "t.yaml"
    path.write_text(f"# a comment\n- {tag} [1]\n")
    shown = tag.replace("!!", "tag:yaml.org,2002:")
    with pytest.raises(ValueError, match=r"line 2: tag '" + shown.replace(".", r"\.") + "'"):
        load_stonesoup_yaml(path)


def test_a_track_of_updates_hypotheses_detections_and_models_loads_whole(tmp_path):
    """What a Kalman tracker's tracks hold (as Stone Soup 1.9.1 writes them) passes the tag check."""
    pytest.importorskip("stonesoup")
    from stonesoup.models.measurement.linear import LinearGaussian
    from stonesoup.models.transition.linear import CombinedLinearGaussianTransitionModel, ConstantVelocity
    from stonesoup.serialise import YAML
    from stonesoup.types.detection import Detection, MissedDetection
    from stonesoup.types.hypothesis import SingleProbabilityHypothesis
    from stonesoup.types.numeric import Probability
    from stonesoup.types.prediction import GaussianStatePrediction
    from stonesoup.types.track import Track
    from stonesoup.types.update import GaussianStateUpdate

    from nllbench.trackers.stonesoup_yaml import load_stonesoup_yaml

    model = CombinedLinearGaussianTransitionModel([ConstantVelocity(0.1), ConstantVelocity(0.1)])
    sensor = LinearGaussian(4, (0, 2), np.eye(2))
    states = []
    for k in range(3):
        t = T0 + datetime.timedelta(seconds=k)
        pred = GaussianStatePrediction([[k], [1], [0], [0]], np.eye(4), timestamp=t, transition_model=model)
        det = (
            Detection([[k], [0]], timestamp=t, measurement_model=sensor)
            if k != 1
            else MissedDetection(timestamp=t)
        )
        hyp = SingleProbabilityHypothesis(pred, det, Probability(0.5))
        states.append(GaussianStateUpdate(pred.state_vector, pred.covar, hyp, timestamp=t))
    track = Track(states, id="a")
    path = tmp_path / "tracks.yaml"
    with open(path, "w") as fh:
        YAML().dump({track}, fh)
    loaded = load_stonesoup_yaml(path)
    (back,) = loaded.tracks
    assert back.id == "a" and [s.timestamp for s in back.states] == [s.timestamp for s in states]
    np.testing.assert_array_equal(back.states[2].state_vector, states[2].state_vector)


# ---------------------------------------------------------------------------
# NetCDF files: every declared variable's kind of values and dimensions
# ---------------------------------------------------------------------------


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
    """Schema 2 (tests/data/metrics_v2.nc) reads; its packed members are checked like any variable."""
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


def _cube_file(tmp_path):
    from nllbench.pipeline.cube import step_cube, write_step_cube

    base = dict(
        scenario="s", filter="pmbm", clutter=5.0, pd=0.9, cov_scale=1.0, temper=1.0, marginal="a", seed=0
    )
    steps = np.arange(3, dtype=np.int64)
    records = [
        ({**base, "q": 1}, "nll", steps, np.array([1.0, 2.0, 3.0])),
        ({**base, "q": 0}, "gospa", steps, np.array([0.5, 0.25, 0.0])),
    ]
    path = tmp_path / "steps.nc"
    write_step_cube(step_cube(records), path)
    return path


def test_a_step_cube_whose_measure_is_integer_or_transposed_is_refused_by_name(tmp_path):
    from nllbench.pipeline.cube import read_step_cube
    from nllbench.store import SchemaError

    path = _cube_file(tmp_path)
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


# ---------------------------------------------------------------------------
# messages that say the first thing wrong
# ---------------------------------------------------------------------------


def _tables(tmp_path, tracks_frames=(0, 1, 2), truth_frames=(1, 2, 3), suffix=".csv"):
    tracks = tmp_path / f"tracks{suffix}"
    tracks.write_text("frame,id,x,y\n" + "".join(f"{k},1,{k}.0,0.0\n" for k in tracks_frames))
    truth = tmp_path / "truth.csv"
    truth.write_text("frame,id,x,y\n" + "".join(f"{k},1,{k}.0,0.0\n" for k in truth_frames))
    return str(tracks), str(truth)


@pytest.mark.parametrize(
    ("options", "missing"),
    [
        ((), r"no column 'r' or 'score'"),
        (("--existence-one",), r"no covariance columns \(var_<a>, cov_<a>_<b>\)"),
    ],
)
def test_a_tracks_table_lacking_a_column_and_off_by_a_frame_names_the_column_first(
    tmp_path, capsys, options, missing
):
    from nllbench.cli import main

    tracks, truth = _tables(tmp_path)
    assert main(["score", tracks, truth, "-o", str(tmp_path / "m.nc"), *options]) != 0
    err = capsys.readouterr().err
    assert re.search(r"tracks.csv: " + missing, err) and "different frames" not in err
    # with the column made up for, the frame mismatch is what is said
    full = ["--existence-one", "--default-std", "1"]
    assert main(["score", tracks, truth, "-o", str(tmp_path / "m.nc"), *full]) != 0
    assert "the tables cover different frames" in capsys.readouterr().err


def test_a_csv_table_named_txt_is_said_to_be_read_as_motchallenge_and_how_to_read_it_as_a_table(
    tmp_path, capsys
):
    from nllbench.cli import main

    tracks, truth = _tables(tmp_path, suffix=".txt")
    assert main(["score", tracks, truth, "-o", str(tmp_path / "m.nc")]) != 0
    err = capsys.readouterr().err.strip()
    assert "tracks.txt: line 1: expected 6 to 10 cells" in err and len(err.splitlines()) == 1
    assert "read as MOTChallenge text because of its .txt suffix" in err and "named .csv" in err
    # the same table named .csv is read as a table (then its missing r is what is said)
    csv = tmp_path / "tracks.csv"
    csv.write_bytes((tmp_path / "tracks.txt").read_bytes())
    assert main(["score", str(csv), truth, "-o", str(tmp_path / "m.nc")]) != 0
    assert "no column 'r' or 'score'" in capsys.readouterr().err


def test_tables_long_into_an_existing_directory_says_it_is_a_directory(tmp_path, capsys):
    """Even a directory that holds the input (the tables directory itself) is named as a directory first."""
    from nllbench.cli import main

    tab = _cube_file(tmp_path).parent
    for out in (tab, tmp_path / "elsewhere"):
        out.mkdir(exist_ok=True)
        assert main(["tables", "long", "--tables", str(tab), "-o", str(out)]) != 0
        err = capsys.readouterr().err.strip()
        assert err.endswith(f"-o {str(out)!r}: expected a file path, but {str(out)!r} is a directory"), err
        assert len(err.splitlines()) == 1
    assert main(["tables", "long", "--tables", str(tab), "-o", str(tmp_path / "long.csv")]) == 0
