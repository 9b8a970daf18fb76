"""``score`` on large tables: the per-frame densities are built as they are evaluated (memory of the
table, not of one density object per frame), with the same densities as before, and a long run
prints a progress line on standard error."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from support.paths import ROOT

from nllbench.cli.progress import ProgressLine
from nllbench.trackers.run import ReportedFrames
from nllbench.trackers.tracks import FrameDensities, densities, validate_tracks

EXAMPLES = ROOT / "docs/examples"


def frame_rows(df: pd.DataFrame, frame: int) -> pd.DataFrame:
    return df[df["frame"] == frame]


@pytest.mark.parametrize("name", ["tracks.csv", "tracks_mixture.csv", "tracks_gm.csv"])
def test_each_frame_density_holds_that_frames_rows(name):
    """Independent route: the rows of frame f, read with pandas, are frame f's Bernoullis (by hypothesis)."""
    df = pd.read_csv(EXAMPLES / name)
    table = validate_tracks(EXAMPLES / name)
    frames = np.array(sorted(set(df["frame"])) + [max(df["frame"]) + 5])  # and a frame without rows
    r = np.nan_to_num(table.r)
    covs = table.covs if table.covs is not None else np.broadcast_to(np.eye(2), (r.size, 2, 2))
    dens = densities(table, frames, r, covs, None)
    assert isinstance(dens, FrameDensities) and len(dens) == frames.size
    built = list(dens)
    for k, f in enumerate(frames):
        rows = frame_rows(df, f)
        if "hypothesis" in rows:
            rows = rows.dropna(subset=["x"])
        if "component" in df:  # one Bernoulli per track
            rows = rows.drop_duplicates(subset=[c for c in ("hypothesis", "id") if c in rows])
        got = built[k]
        assert sum(len(mb) for mb in got.hypotheses) == len(rows), (name, f)
        assert sorted(np.concatenate([mb.r for mb in got.hypotheses]).tolist()) == sorted(rows["r"].tolist())
        again = dens[k]  # indexing builds the same density again
        for a, b in zip(got.hypotheses, again.hypotheses, strict=True):
            np.testing.assert_array_equal(a.r, b.r)
            np.testing.assert_array_equal(a.means, b.means)
        np.testing.assert_array_equal(got.weights, again.weights)
    assert len(dens[-1].hypotheses[0]) == 0 and len(dens[1:3]) == 2
    with pytest.raises(IndexError, match="out of range"):
        dens[len(dens)]


def test_reported_frames_report_each_evaluated_frame_in_order():
    calls = []
    wrapped = ReportedFrames(["a", "b", "c"], lambda done, total, s: calls.append((done, total)))
    assert len(wrapped) == 3 and wrapped[1] == "b" and not calls
    assert list(wrapped) == ["a", "b", "c"]
    assert calls == [(1, 3), (2, 3), (3, 3)]


def test_progress_line_is_printed_only_on_long_runs(capsys):
    line = ProgressLine("score", every=10.0)
    for done in range(1, 101):
        line(done, 100, done * 0.05)  # a 5-second run: no line
    assert capsys.readouterr().err == ""
    line = ProgressLine("score", every=10.0)
    for done in range(1, 101):
        line(done, 100, done * 0.5)  # 50 s: at 10, 20, 30, 40 s and the end
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "score: 20/100 frames (20.0 %), 2 frames/s, 10 s so far, about 40 s left"
    assert len(err) == 5 and err[-1] == "score: 100/100 frames (100.0 %), 2 frames/s, 50 s in all"
    ProgressLine("score", every=0)(1, 1, 1e6)
    assert capsys.readouterr().err == ""
