"""The tidy-table and MOTChallenge readers: every bad table a named error (file, row, column),
or documented.
"""

from __future__ import annotations

import gzip

import numpy as np
import pandas as pd
import pytest

from nllbench.trackers.adapters import read_motchallenge
from nllbench.trackers.tracks import validate_tracks, validate_truth

HEADER = "frame,id,r,x,y,var_x,var_y\n"


ROW = "0,1,0.9,1.0,2.0,0.5,0.5\n"


HYP = "frame,id,r,x,y,var_x,var_y,hypothesis,weight\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "empty.csv: expected a header line, got an empty file"),
        ("frame,id,r,x\n0,1,0.5,1\n", "column 'y' is missing"),
        (HEADER + "0.5,1,0.5,1,1,1,1\n", "row 1 (line 2), column 'frame': expected an integer, got '0.5'"),
        (HEADER + "a,1,0.5,1,1,1,1\n", "row 1 (line 2), column 'frame': expected a number, got 'a'"),
        (HEADER + "1e30,1,0.5,1,1,1,1\n", "column 'frame': expected an integer of magnitude at most 2**53"),
        (HEADER + ROW + "0,2,0.5,1,1,-1,1\n", "row 2 (line 3), column 'var_x': expected a positive definite"),
        (
            "frame,id,r,x,y,var_x,var_y,cov_x_y\n0,1,0.5,1,1,1,1,2\n",
            "column 'var_x': expected a positive definite covariance",
        ),
        (HEADER + "0,1,0.5,,1,1,1\n", "row 1 (line 2), column 'x': expected a number, got an empty cell"),
        (HEADER + "0,1,1.5,1,1,1,1\n", "column 'r': expected a probability in [0, 1], got 1.5"),
        (HEADER + "0,1,-0.1,1,1,1,1\n", "column 'r': expected a probability in [0, 1], got -0.1"),
        (HEADER + "0,1,0.5,1,1,inf,1\n", "column 'var_x': expected a finite number, got 'inf'"),
        (
            HYP + "0,1,0.5,1,1,1,1,0,0.5\n0,2,0.5,1,1,1,1,1,0.3\n",
            "frame 0: expected weights summing to 1, got 0.8",
        ),
        (HYP + "0,1,0.5,1,1,1,1,0,0.5\n0,2,0.5,1,1,1,1,0,0.4\n", "row 2 (line 3), column 'weight'"),
        (
            HEADER + ROW + "0,1,0.5,3,3,1,1\n",
            "row 2 (line 3), column 'id': expected one row per id and frame",
        ),
        # duplicate header names: pandas would rename the second 'x' to 'x.1' and ignore it
        ("frame,id,r,x,y,var_x,var_y,x\n0,1,0.5,1,1,1,1,2\n", "column 'x' appears twice"),
        # a row longer than the header: pandas would take its first cell as an index and shift the rest
        (HEADER + "0,1,0.5,1,1,1,1,9\n", "line 2: expected at most 7 cells (the header's), got 8"),
        # a blank line keeps the file's line numbers and is reported, never skipped
        (
            HEADER + ROW + "\n" + ROW,
            "row 2 (line 3), column 'frame': expected a finite number, got an empty cell",
        ),
        (HEADER + "0,1,True,1,1,1,1\n", "column 'r': expected numbers, got a column of dtype bool"),
    ],
)
def test_bad_tracks_csv_is_a_named_error(tmp_path, text, message):
    path = tmp_path / "empty.csv"
    path.write_text(text)
    with pytest.raises(ValueError) as err:
        validate_tracks(path)
    assert str(path) in str(err.value) and message in str(err.value)


def test_trailing_blank_lines_are_dropped_interior_ones_reported(tmp_path):
    (tmp_path / "t.csv").write_text(HEADER + ROW + "\n\n")
    assert validate_tracks(tmp_path / "t.csv").frame.tolist() == [0]
    (tmp_path / "h.csv").write_text(HEADER + "\n")
    assert validate_tracks(tmp_path / "h.csv").frame.size == 0
    (tmp_path / "i.csv").write_text(HEADER + "\n" + ROW)
    with pytest.raises(ValueError, match=r"i.csv: row 1 \(line 2\), column 'frame'"):
        validate_tracks(tmp_path / "i.csv")


def test_header_only_tables_are_empty_not_errors(tmp_path):
    (tmp_path / "t.csv").write_text(HEADER)
    (tmp_path / "y.csv").write_text("frame,id,x,y\n")
    assert validate_tracks(tmp_path / "t.csv").frame.size == 0
    assert validate_truth(tmp_path / "y.csv").frame.size == 0


def test_duplicate_truth_and_unknown_state_columns(tmp_path):
    (tmp_path / "y.csv").write_text("frame,id,x,y\n0,1,1,1\n0,1,2,2\n")
    with pytest.raises(ValueError, match=r"y.csv: row 2 \(line 3\), column 'id'"):
        validate_truth(tmp_path / "y.csv")
    (tmp_path / "t.csv").write_text(HEADER + ROW)
    with pytest.raises(ValueError, match=r"t.csv: column 'z' is missing"):
        validate_tracks(tmp_path / "t.csv", state=("x", "z"))


def test_parquet_dtypes(tmp_path):
    base = {"frame": [0], "id": [1], "r": [0.5], "x": [1.0], "y": [1.0], "var_x": [1.0], "var_y": [1.0]}
    # a date column is not a frame number (it used to become nanoseconds since 1970)
    pd.DataFrame({**base, "frame": pd.to_datetime(["2020-01-01"])}).to_parquet(tmp_path / "d.parquet")
    with pytest.raises(
        ValueError, match=r"d.parquet: column 'frame': expected numbers, got a column of dtype"
    ):
        validate_tracks(tmp_path / "d.parquet")
    # an int64 frame past 2**53 is kept exactly (it used to be rounded through float)
    pd.DataFrame({**base, "frame": [2**62 + 1]}).to_parquet(tmp_path / "big.parquet")
    assert validate_tracks(tmp_path / "big.parquet").frame.tolist() == [2**62 + 1]
    # nullable integers with a placeholder's empty id
    df = pd.DataFrame(
        {
            "frame": pd.array([0, 0], dtype="Int64"),
            "id": pd.array([1, None], dtype="Int64"),
            "r": [0.5, None],
            "x": [1.0, None],
            "y": [1.0, None],
            "var_x": [1.0, None],
            "var_y": [1.0, None],
            "hypothesis": [0, 1],
            "weight": [0.5, 0.5],
        }
    )
    df.to_parquet(tmp_path / "n.parquet")
    t = validate_tracks(tmp_path / "n.parquet")
    assert t.ids.tolist() == [1, -1] and t.placeholder.tolist() == [False, True]
    (tmp_path / "bad.parquet").write_text("not parquet")
    with pytest.raises(ValueError, match=r"tracks '.*bad.parquet': cannot read it as a table"):
        validate_tracks(tmp_path / "bad.parquet")
    with pytest.raises(ValueError, match=r"tracks '.*none.csv': cannot read it as a table"):
        validate_tracks(tmp_path / "none.csv")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("1,1,10,20,5,6,0.9,-1,-1,-1\n2,1,11,20,5,6,0.8\n", "line 2: expected 10 cells like line 1, got 7"),
        ("1,1,10,20,5,6,0.9\n2,1,11,20,5,6,0.8,-1,-1,-1\n", "line 2: expected 7 cells like line 1, got 10"),
        ("1,1,10,20,5\n", "line 1: expected 6 to 10 cells"),
        ("1,1,10,20,5,6,0.9,-1,-1,-1,7\n", "line 1: expected 6 to 10 cells"),
        ("1,a,10,20,5,6,0.9\n", "line 1, column 'id': expected a number, got 'a'"),
        ("", "expected MOTChallenge lines"),
        # an empty cell used to merge with its neighbour separator and shift every later column
        ("1,1,,20,5,6,0.9\n", "line 1, column 'bb_left': expected a number, got an empty cell"),
        ("1,1,10,20,5,6,0.9\n\n2,1,10,20,-5,6,0.9\n", "line 3, column 'bb_width': expected a positive width"),
    ],
)
def test_bad_motchallenge_is_a_named_error(tmp_path, text, message):
    path = tmp_path / "mot.txt"
    path.write_text(text)
    with pytest.raises(ValueError) as err:
        read_motchallenge(path)
    assert str(path) in str(err.value) and message in str(err.value)


def test_motchallenge_whitespace_separated(tmp_path):
    path = tmp_path / "mot.txt"
    path.write_text("1 1 10 20 4 6 0.9\n2 1 11 20 4 6 0.8\n")
    df = read_motchallenge(path)
    assert df.x.tolist() == [12.0, 13.0] and df.score.tolist() == [0.9, 0.8]


def test_weight_sum_tolerance_is_per_frame():
    # many frames used to widen every frame's tolerance (1e-9 times the table's hypotheses)
    frames = np.arange(200_000)
    df = pd.DataFrame({"frame": frames, "x": 1.0, "y": 1.0, "r": 0.5, "hypothesis": 0, "weight": 1.0})
    df.loc[7, "weight"] = 1.0 - 1e-5
    with pytest.raises(ValueError, match="frame 7: expected weights summing to 1"):
        validate_tracks(df)
    df.loc[7, "weight"] = 1.0 - 1e-12  # rounding-sized: accepted
    assert validate_tracks(df).weight[7] == 1.0 - 1e-12


def test_seed_tables_take_every_reader_suffix_and_refuse_two_spellings(tmp_path):
    from nllbench.trackers.formats.batch import seed_tables as _seed_tables

    for name in ("seed2.pq", "seed1.CSV", "seed10.parquet", "notes.txt", "seedx.csv"):
        (tmp_path / name).write_text("")
    assert [p.name for p in _seed_tables(str(tmp_path))] == ["seed1.CSV", "seed2.pq", "seed10.parquet"]
    (tmp_path / "seed01.csv").write_text("")
    with pytest.raises(
        ValueError, match="expected one table per seed, got seed01.csv and seed1.CSV for seed 1"
    ):
        _seed_tables(str(tmp_path))
    with pytest.raises(ValueError, match="--tracks-dir .*: expected a directory"):
        _seed_tables(str(tmp_path / "none"))


def test_ignored_columns_of_both_tables_are_recorded():
    from nllbench.trackers.scoring import FillIns, score

    tracks = pd.DataFrame({"frame": [0], "x": [1.0], "y": [1.0], "r": [0.5], "note": ["a"]})
    truth = pd.DataFrame({"frame": [0], "id": [1], "x": [1.0], "y": [1.0], "z": [3.0], "var_x": [1.0]})
    with pytest.warns(UserWarning) as caught:
        res = score(tracks, truth, fill=FillIns(default_std=1.0))
    messages = [str(w.message) for w in caught]
    assert any("no column 'id'" in m for m in messages), messages
    # a truth column that only a tracks table has is named: the files may have been swapped
    assert any("tracks-table column(s) var_x: is it a tracks file" in m for m in messages), messages
    assert res.fill_ins["ignored_columns"] == ["note"]
    assert res.fill_ins["ignored_truth_columns"] == ["z", "var_x"]


@pytest.mark.parametrize(
    ("data", "kind"),
    [
        (gzip.compress((HEADER + ROW).encode()), "gzip-compressed data"),
        (b"\x89HDF\r\n\x1a\n" + b"\x00" * 40, "an HDF5 / NetCDF-4 file"),
        (b"PAR1" + b"\x00" * 40, "a Parquet file"),
        (b"frame,x\n\x00\x01\x02", "binary data (a NUL byte)"),
        (b"frame,id,x,y\n0,1,\xff\xfe,1\n", "bytes that are not UTF-8 text (byte 17: 0xff)"),
    ],
)
def test_a_csv_that_is_not_text_is_named(tmp_path, data, kind):
    path = tmp_path / "t.csv"
    path.write_bytes(data)
    for validate in (validate_tracks, validate_truth):
        with pytest.raises(ValueError) as err:
            validate(path)
        assert f"'{path}': expected a CSV text file, got {kind} (it is not text)" in str(err.value)


def test_a_bom_and_utf8_text_are_text(tmp_path):
    path = tmp_path / "t.csv"
    path.write_bytes("\ufeffframe,id,r,x,y,var_x,var_y,note\n0,1,0.9,1,2,1,1,é\n".encode())
    assert validate_tracks(path).ignored == ("note",)


@pytest.mark.parametrize(
    ("cell", "got"),
    [
        ("nan", "got NaN ('nan': not a number)"),
        ("NaN", "got NaN ('NaN': not a number)"),
        ("", "got an empty cell"),
        ("NA", "got 'NA' (read as a missing value)"),
    ],
)
def test_a_nan_cell_is_named_nan_not_empty(tmp_path, cell, got):
    (tmp_path / "t.csv").write_text(HEADER + f"0,1,0.9,{cell},2.0,0.5,0.5\n")
    with pytest.raises(ValueError, match="row 1 \\(line 2\\), column 'x': expected a number, ") as err:
        validate_tracks(tmp_path / "t.csv")
    assert got in str(err.value)
    (tmp_path / "y.csv").write_text(f"frame,id,x,y\n0,1,1.0,{cell}\n")
    with pytest.raises(ValueError, match="column 'y': expected a finite number, ") as err:
        validate_truth(tmp_path / "y.csv")
    assert got in str(err.value)


def test_a_nan_in_a_dataframe_is_named_nan():
    with pytest.raises(ValueError, match="column 'x': expected a finite number, got NaN"):
        validate_truth(pd.DataFrame({"frame": [0], "id": [1], "x": [np.nan], "y": [1.0]}))
    df = pd.DataFrame({"frame": [0], "id": [1], "x": pd.array([None], dtype=object), "y": [1.0]})
    with pytest.raises(ValueError, match="column 'x': expected a finite number, got an empty cell"):
        validate_truth(df)


def test_a_motchallenge_file_that_is_not_text_is_named(tmp_path):
    from nllbench.trackers.adapters import read_motchallenge

    path = tmp_path / "mot.txt"
    path.write_bytes(gzip.compress(b"1,1,10,20,5,6,-1,-1,-1,-1\n"))
    with pytest.raises(ValueError, match="mot.txt': expected a MOTChallenge text file, got gzip-compressed"):
        read_motchallenge(path)
