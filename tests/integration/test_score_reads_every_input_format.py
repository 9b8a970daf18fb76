"""The library reads every input format of ``nllbench score``: nb.score on MOTChallenge files, Stone Soup
YAML, tables and scenario files; the unknown-format error; the one seed<N> rule; batches; fitted fill-ins;
the former module paths of ``nllbench.trackers``."""

from __future__ import annotations

import datetime
import importlib
import os

import numpy as np
import pandas as pd
import pytest

import nllbench as nb
from nllbench.cli import main
from nllbench.measures.run.evaluate import EvaluationSettings
from nllbench.store import read_scenario, seed_files, seed_number
from nllbench.trackers.formats import FORMATS, ReadOptions, input_format, read_inputs
from nllbench.trackers.formats.batch import batch_runs, seed_tables
from nllbench.trackers.formats.stonesoup import StoneSoupOptions
from nllbench.trackers.motchallenge import read_mot_pair, with_box_measures

SETTINGS = EvaluationSettings(qs=(1, 10), proper_scores=False)
# frame, id, left, top, width, height, conf: 2 x 2 boxes
GT = [(1, 1, 0, 0, 2, 2, 1), (1, 2, 10, 0, 2, 2, 1), (2, 1, 1, 0, 2, 2, 1), (2, 2, 11, 0, 2, 2, 1)]
RUN = [(1, 7, 0.5, 0.2, 2, 2, 0.9), (1, 8, 11.5, 0.0, 2, 2, 0.6), (2, 7, 1.3, 0.1, 2, 2, 0.8)]


def _mot(path, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(",".join(f"{v:g}" for v in r) + ",-1,-1,-1\n" for r in rows))
    return path


def _same(a, b):
    sa, sb = a.summary(), b.summary()
    assert sa.keys() == sb.keys()
    for k in sa:
        assert sa[k] == sb[k] or (sa[k] != sa[k] and sb[k] != sb[k]), k


def test_nb_score_reads_a_motchallenge_result_and_its_ground_truth(tmp_path):
    run, gt = _mot(tmp_path / "run.txt", RUN), _mot(tmp_path / "gt" / "gt.txt", GT)
    read = ReadOptions(mot_conf="r", mot_box_std_fraction=0.25)
    got = nb.score(str(run), str(gt), settings=SETTINGS, read=read)
    pair = read_mot_pair(run, gt, conf="r", box_std_fraction=0.25)
    ref = with_box_measures(nb.score(pair.tracks, pair.truth, settings=SETTINGS), pair)
    _same(got, ref)
    assert got.boxes is not None and got.boxes.fields == ref.boxes.fields
    assert got.fill_ins == ref.fill_ins
    # read one by one (centre matching): no boxes, the tables of read_motchallenge
    centre = nb.score(run, gt, settings=SETTINGS, read=ReadOptions(mot_conf="r", mot_box_std_fraction=0.25,
                                                                   mot_matching="centre"))  # fmt: skip
    assert centre.boxes is None
    with pytest.raises(ValueError, match=r"--state: a MOTChallenge file's state is the box centre x y"):
        nb.score(run, gt, state=("x", "y", "z"))


def test_nb_score_reads_stonesoup_yaml_tracks_against_a_scenario_file(tmp_path):
    from stonesoup.serialise import YAML
    from stonesoup.types.state import GaussianState
    from stonesoup.types.track import Track

    sc = tmp_path / "sc.nc"
    assert main(["simulate", "--scenario", "williams15", "--seed", "2", "--steps", "4", "-o", str(sc)]) == 0
    data = read_scenario(sc)
    start = datetime.datetime(2024, 1, 1)
    tracks, rows = [], []
    for j in range(len(data.truth[0])):
        track = Track(id=f"t{j}")
        for k in range(data.steps):
            if j < len(data.truth[k]):
                x = data.truth[k][j]
                t = start + datetime.timedelta(seconds=k)
                track.append(GaussianState(x.reshape(4, 1) + 0.5, np.eye(4), timestamp=t))
                rows.append(
                    {"frame": k, "id": j, "x": x[0] + 0.5, "y": x[1] + 0.5, "var_x": 1.0, "var_y": 1.0}
                )
        tracks.append(track)
    path = tmp_path / "tracks.yaml"
    with open(path, "w") as fh:
        YAML().dump(tracks, fh)
    ss = StoneSoupOptions(existence="none", mapping=(0, 1), frame_times=(start.isoformat(), "1"))
    fill = nb.FillIns(existence_one=True)
    with pytest.warns(UserWarning, match="r = 1"):
        got = nb.score(str(path), str(sc), fill=fill, settings=SETTINGS, read=ReadOptions(stonesoup=ss))
    with pytest.warns(UserWarning, match="r = 1"):
        ref = nb.score(pd.DataFrame(rows), str(sc), fill=fill, settings=SETTINGS)
    np.testing.assert_allclose(got.metrics.gospa, ref.metrics.gospa, rtol=1e-12)
    np.testing.assert_allclose(got.metrics.nll["value"], ref.metrics.nll["value"], rtol=1e-12)
    assert list(got.frames) == list(range(data.steps))


def test_tables_and_the_format_option(tmp_path):
    truth = pd.DataFrame({"frame": [0, 1], "id": [0, 0], "x": [0.0, 1.0], "y": [0.0, 0.0]})
    tracks = truth.assign(r=0.9, var_x=1.0, var_y=1.0)
    tracks.to_csv(tmp_path / "t.txt", index=False)  # a CSV table named .txt
    truth.to_parquet(tmp_path / "y.pq")
    ref = nb.score(tracks, truth, settings=SETTINGS)
    tracks.to_csv(tmp_path / "t.csv", index=False)
    _same(nb.score(tmp_path / "t.csv", tmp_path / "y.pq", settings=SETTINGS), ref)
    with pytest.raises(ValueError, match=r"tracks: expected a .csv or .parquet file, got '.*t.txt'$"):
        nb.score(tmp_path / "t.txt", tmp_path / "y.pq", settings=SETTINGS, read=ReadOptions(format="table"))
    with pytest.raises(ValueError, match=r"read as MOTChallenge text because of its .txt suffix"):
        nb.score(tmp_path / "t.txt", tmp_path / "y.pq", settings=SETTINGS)
    assert [input_format(p) for p in ("a.CSV", "a.parquet", "a.pq", "a.nc", "a.TXT", "a.yml", "a.yaml")] == [
        "table", "table", "table", "scenario", "mot", "stonesoup", "stonesoup"]  # fmt: skip
    assert input_format("a.txt", "table") == "table" and input_format("a.csv", "stonesoup") == "table"
    assert input_format("a.nc", "mot") == "scenario"
    assert read_inputs(tracks, None) == ((tracks, None), None)  # tables are kept as they are
    assert set(FORMATS) == {"table", "scenario", "mot", "stonesoup"}
    with pytest.raises(ValueError, match="format: expected one of auto, table, mot, stonesoup, got 'csv'"):
        ReadOptions(format="csv")


def test_a_file_no_reader_claims_is_refused_naming_it(tmp_path):
    truth = pd.DataFrame({"frame": [0], "id": [0], "x": [0.0], "y": [0.0]})
    bad = tmp_path / "tracks.json"
    bad.write_text("{}")
    with pytest.raises(ValueError) as exc:
        nb.score(bad, truth)
    text = str(exc.value)
    assert text.startswith(f"tracks: expected a .csv or .parquet file, got {str(bad)!r}: no reader for")
    assert "'.json'" in text and ".txt (MOTChallenge text file)" in text and ".yaml .yml" in text
    with pytest.raises(ValueError, match=r"truth: expected a .csv or .parquet file, got '.*truth': no reader "
                       r"for the suffix '\(none\)'"):  # fmt: skip
        nb.score(truth, tmp_path / "truth")


def test_one_seed_rule_for_every_batch(tmp_path):
    names = ["seed2.pq", "seed1.CSV", "seed10.parquet", "seed007.csv", "notes.txt", "seedx.csv",
             "seedling.nc", "seed1.csv.bak", "seed\u00b2.csv", "seed-3.csv", "Seed4.csv"]  # fmt: skip
    for name in names:
        (tmp_path / name).write_text("")
    (tmp_path / "seed5.csv").mkdir()  # a directory is no seed file
    suffixes = (".csv", ".parquet", ".pq")
    found = seed_files(tmp_path, suffixes, "here", "table")
    assert [p.name for p in found] == ["seed1.CSV", "seed2.pq", "seed007.csv", "seed10.parquet"]
    assert [seed_number(p, suffixes) for p in found] == [1, 2, 7, 10]
    assert seed_number("seed\u00b2.csv", suffixes) is None and seed_number("seed1.nc", suffixes) is None
    assert seed_tables(str(tmp_path)) == found  # score's batches
    assert seed_files(tmp_path / "none", suffixes, "here", "table") == []
    (tmp_path / "seed01.parquet").write_text("")
    with pytest.raises(
        ValueError, match="here: expected one table per seed, got seed01.parquet and seed1.CSV"
    ):
        seed_files(tmp_path, suffixes, "here", "table")
    # evaluate's and filter's batches: the same rule on .nc files
    from nllbench.cli.common import seed_files as batch_seed_files

    for name in ("seed3.nc", "seed1.NC", "seedling.nc"):
        (tmp_path / name).write_text("")
    assert [p.name for p in batch_seed_files(str(tmp_path))] == ["seed1.NC", "seed3.nc"]
    (tmp_path / "seed03.nc").write_text("")
    with pytest.raises(ValueError, match="expected one file per seed, got seed03.nc and seed3.nc for seed 3"):
        batch_seed_files(str(tmp_path))
    (tmp_path / "seed01.parquet").unlink()
    if hasattr(os, "mkfifo"):
        os.mkfifo(tmp_path / "seed8.pq")
        with pytest.raises(ValueError, match=r"seed8\.pq': expected a regular file, got a FIFO"):
            seed_tables(str(tmp_path))


def test_batch_runs_of_motchallenge_sequences_and_of_seeds(tmp_path):
    res, gt = tmp_path / "res", tmp_path / "gt"
    _mot(res / "SEQ-A.txt", RUN)
    _mot(res / "SEQ-B.txt", RUN)
    _mot(gt / "SEQ-A.txt", GT)
    _mot(gt / "SEQ-B" / "gt" / "gt.txt", GT)
    runs, mot = batch_runs(res, gt)
    assert mot and runs == [("SEQ-A", res / "SEQ-A.txt", gt / "SEQ-A.txt"),
                            ("SEQ-B", res / "SEQ-B.txt", gt / "SEQ-B" / "gt" / "gt.txt")]  # fmt: skip
    tables = tmp_path / "tables"
    tables.mkdir()
    (tables / "seed2.csv").write_text("")
    (tables / "seed1.yaml").write_text("")
    runs, mot = batch_runs(tables, "sc")
    assert not mot and [(n, p.name, str(t)) for n, p, t in runs] == [
        ("seed1", "seed1.yaml", os.path.join("sc", "seed1.nc")),
        ("seed2", "seed2.csv", os.path.join("sc", "seed2.nc")),
    ]
    assert [n for n, _, _ in batch_runs(tables, "sc", "table")[0]] == ["seed2"]
    with pytest.raises(ValueError, match="--tracks-dir .*: expected a directory of seed<N> tracks tables"):
        batch_runs(tmp_path / "none", gt)


def test_fitted_fill_ins_read_their_pairs_in_any_format_and_say_each_fit(tmp_path):
    from nllbench.trackers.fillin_fits import fitted_fill_ins
    from nllbench.trackers.fitting import fit_constant_existence
    from nllbench.trackers.formats import ReadOptions
    from nllbench.trackers.motchallenge import fit_constant_existence_boxes

    run, gt = _mot(tmp_path / "run.txt", RUN), _mot(tmp_path / "gt.txt", GT)
    said = []
    fill = fitted_fill_ins(fit_constant_existence_on=(run, gt), threshold=1.0, say=said.append)
    pair = read_mot_pair(run, gt)
    # a MOTChallenge pair is fitted by the scoring's own matching (IoU), centre distance on asking
    fit = fit_constant_existence_boxes(pair)
    assert fill.constant_existence == fit and fit.matching == "iou"
    assert said == [f"constant existence: r = {fit.r:.6g} ({fit.n_matched} of {fit.n_rows} rows matched)"]
    centre = fitted_fill_ins(
        fit_constant_existence_on=(run, gt),
        threshold=1.0,
        read=ReadOptions(mot_matching="centre"),
        say=said.append,
    )
    assert centre.constant_existence == fit_constant_existence(pair.tracks, pair.truth, threshold=1.0)
    assert said[-1] == "constant existence: r = 0.666667 (2 of 3 rows matched)"
    with pytest.raises(ValueError, match="score: the undetected-object intensity needs its box"):
        fitted_fill_ins(undetected_rate=0.1)
    with pytest.raises(ValueError, match=r"--fov: expected LOW... HIGH... \(an even count\), got 3 numbers"):
        fitted_fill_ins(undetected_rate=0.1, fov=(0, 0, 1))
    assert fitted_fill_ins(undetected_rate=0.1, fov=(0, 0, 1, 1)) == nb.FillIns(0.1, (0, 0), (1, 1))


def test_the_former_module_paths_are_the_moved_modules():
    import nllbench.trackers as trackers

    for old, new in trackers.MOVED.items():
        moved = importlib.import_module(new if new.startswith("nllbench.") else f"nllbench.trackers.{new}")
        assert importlib.import_module(f"nllbench.trackers.{old}") is moved
    from nllbench.trackers.scoring import score
    from nllbench.trackers.stonesoup_tracker import clutter_density

    assert score is nb.score and clutter_density.__module__ == "nllbench.example_trackers.stonesoup"
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("nllbench.trackers.no_such_module")
