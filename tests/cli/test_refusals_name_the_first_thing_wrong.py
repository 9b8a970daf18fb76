"""Refusals on the command line: a Stone Soup YAML file holding a writer, a table off by a frame or
named .txt, an output that is a directory; each says the first thing wrong and leaves the user's
files alone. (The readers' own checks: tests/unit/store/test_readers_refuse_lying_netcdf_files.py,
tests/unit/trackers/test_stonesoup_yaml_builds_only_tracking_types.py.)
"""

from __future__ import annotations

import re

import pytest
from support.cube_files import cube_file

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


def test_scoring_a_yaml_file_with_a_writer_leaves_the_users_file_and_says_which_tag(tmp_path, capsys):
    pytest.importorskip("stonesoup")
    from nllbench.cli import main

    bad, victim = _writer_yaml(tmp_path)
    before = victim.read_bytes()
    assert main(["score", str(bad), str(victim), "-o", str(tmp_path / "m.nc")]) != 0
    err = capsys.readouterr().err
    assert "!stonesoup.writer.yaml.YAMLWriter" in err and "line 2" in err
    assert victim.read_bytes() == before and not (tmp_path / "m.nc").exists()


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

    tab = cube_file(tmp_path).parent
    for out in (tab, tmp_path / "elsewhere"):
        out.mkdir(exist_ok=True)
        assert main(["tables", "long", "--tables", str(tab), "-o", str(out)]) != 0
        err = capsys.readouterr().err.strip()
        assert err.endswith(f"-o {str(out)!r}: expected a file path, but {str(out)!r} is a directory"), err
        assert len(err.splitlines()) == 1
    assert main(["tables", "long", "--tables", str(tab), "-o", str(tmp_path / "long.csv")]) == 0
