"""``nllbench score --measures`` and ``nb.score(measures=)``: measures selected by their declared names."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import xarray as xr
from support.mot_files import write_mot

import nllbench as nb
from nllbench.cli import main
from nllbench.measures.declarations import MEASURES
from nllbench.measures.evaluate import EvaluationSettings
from nllbench.measures.selection import MEASURE_NAMES, REQUIRED, left_out, parse_measures
from nllbench.trackers.fillins import FillIns

# frame, id, left, top, width, height, conf (as tests/test_score_cli_mot.py)
GT = [(1, 1, 0, 0, 2, 2, 1), (1, 2, 10, 0, 2, 2, 1), (2, 1, 1, 0, 2, 2, 1), (2, 2, 11, 0, 2, 2, 1)]
TRACKS = [
    (1, 7, 0.5, 0.2, 2, 2, 0.9),
    (1, 8, 11.5, 0.0, 2, 2, 0.6),
    (1, 9, 30.0, 30.0, 2, 2, 0.2),
    (2, 7, 1.3, 0.1, 2, 2, 0.8),
    (2, 8, 11.2, 0.4, 2, 2, 0.7),
]
NLL_ARGS = ("--mot-conf", "r", "--mot-box-std-fraction", "0.5", "--q", "1", "10")


@pytest.fixture
def files(tmp_path):
    return write_mot(tmp_path / "tracks.txt", TRACKS), write_mot(tmp_path / "gt.txt", GT)


def _scored(tmp_path, files, name, *extra):
    out = tmp_path / f"{name}.nc"
    assert main(["score", *map(str, files), "-o", str(out), *NLL_ARGS, *extra]) == 0
    with xr.open_dataset(out) as ds:
        return ds.load()


def test_the_names_are_the_declarations_and_unknown_ones_are_refused(tmp_path, files, capsys):
    assert MEASURE_NAMES == tuple(m.name for m in MEASURES)
    assert parse_measures(" nll,hota ") == {"nll", "hota"}
    rc = main(["score", *map(str, files), "-o", str(tmp_path / "x.nc"), "--measures", "hota,clear"])
    err = capsys.readouterr().err
    assert rc != 0 and "--measures: unknown measure 'clear'" in err and ", ".join(MEASURE_NAMES) in err
    assert not (tmp_path / "x.nc").exists()
    with pytest.raises(ValueError, match="measures: expected measure names, got none"):
        parse_measures(",")


def test_a_required_measure_cannot_be_left_out_beside_the_nll():
    with pytest.raises(ValueError, match="--measures: with nll a metrics file always holds gospa"):
        left_out(frozenset(MEASURE_NAMES) - {"gospa"}, option="--measures")
    with pytest.raises(ValueError, match="only MOTChallenge files matched by IoU"):
        left_out(frozenset({"hota", "gospa"}))
    with pytest.raises(ValueError, match="gospa need the NLL's run"):
        left_out(frozenset({"hota", "gospa"}), boxes=True)
    assert left_out(None) == frozenset()
    assert left_out(frozenset(MEASURE_NAMES)) == frozenset()


def test_an_optional_measure_left_out_is_absent_and_the_rest_unchanged(tmp_path, files):
    full = _scored(tmp_path, files, "full")
    names = ",".join(n for n in MEASURE_NAMES if n not in ("energy_score", "pgospa", "ptgospa"))
    some = _scored(tmp_path, files, "some", "--measures", names)
    gone = {"energy_score", "energy_score_se", "energy_score_mean", "energy_score_mean_se"}
    gone |= {v for v in full.variables if str(v).startswith(("pgospa", "ptgospa"))}
    assert {"energy_score", "pgospa", "ptgospa"} <= set(full.variables)
    assert set(full.variables) - set(some.variables) == gone
    for name in some.variables:
        np.testing.assert_array_equal(some[name].values, full[name].values, err_msg=name)
    assert main(["score", *map(str, files), "-o", str(tmp_path / "y.nc"), *NLL_ARGS, "--no-proper-scores",
                 "--measures", ",".join(MEASURE_NAMES)]) != 0  # fmt: skip


def test_the_box_measures_alone_give_trackevals_without_the_nll(tmp_path, files, capsys):
    full = _scored(tmp_path, files, "full")
    boxes = _scored(tmp_path, files, "boxes", "--measures", "hota,clear_mot,identity")
    assert boxes.attrs["content"] == "motchallenge" and "nll_value" not in boxes.variables
    assert float(boxes["MOTA"][0]) == float(full["mota"])
    assert float(boxes["HOTA"][0]) == float(full["hota"])
    assert "NLL not computed" not in capsys.readouterr().out
    rc = main(["score", *map(str, files), "-o", str(tmp_path / "z.nc"), *NLL_ARGS, "--mot-matching",
               "centre", "--measures", "hota"])  # fmt: skip
    assert rc != 0 and "only MOTChallenge files matched by IoU" in capsys.readouterr().err


def test_the_library_takes_a_selection():
    truth = pd.DataFrame({"frame": [0, 0, 1], "id": [0, 1, 0], "x": [0.0, 5.0, 0.1], "y": [0.0, 0.0, 0.0]})
    tracks = truth.assign(r=0.9, var_x=0.25, var_y=0.25, x=truth.x + 0.2)
    settings = EvaluationSettings(qs=(1,))
    full = nb.score(tracks, truth, fill=FillIns(), settings=settings)
    kept = sorted(REQUIRED | {"cardinality_rps"})
    some = nb.score(tracks, truth, fill=FillIns(), settings=settings, measures=kept)
    assert some.metrics.proper.energy is None and some.metrics.proper.intensity is None
    assert some.metrics.pgospa is None and some.metrics.ptgospa is None
    np.testing.assert_array_equal(some.metrics.proper.rps, full.metrics.proper.rps)
    row, ref = some.summary(), full.summary()
    assert "energy_score_mean" not in row and "pgospa" not in row
    assert all(row[k] == ref[k] for k in row if k != "not_applicable")
    with pytest.raises(ValueError, match="measures: with nll a metrics file always holds hota"):
        nb.score(tracks, truth, fill=FillIns(), settings=settings, measures=sorted(REQUIRED - {"hota"}))
