"""A table's rows checked and factorised once give each frame's density bit for bit as built alone,
and a row the constructors refuse is still refused at its frame, named as before."""

from __future__ import annotations

import numpy as np
import pytest
from support.paths import ROOT

import nllbench as nb
from nllbench.trackers.tracks import FrameDensities, checked_rows, densities, validate_tracks

EXAMPLES = ROOT / "docs/examples"
FIELDS = ("means", "covs", "_chol", "_log_diag", "_log_norm")


def plain(dens: FrameDensities) -> FrameDensities:
    """The same frames built through the public constructors, frame by frame."""
    return FrameDensities(
        dens.tracks, dens.r, dens.covs, dens.ppp, dens.order, dens.lo, dens.hi, dens.placeholder, dens.group
    )


def same(a, b) -> bool:
    if a is None or b is None:
        return a is b
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def _table(name):
    table = validate_tracks(EXAMPLES / name)
    frames = np.append(np.unique(table.frame), table.frame.max() + 3)  # and a frame without rows
    r = np.nan_to_num(table.r)
    covs = table.covs if table.covs is not None else np.broadcast_to(4.0 * np.eye(2), (r.size, 2, 2)).copy()
    return table, frames, r, covs


@pytest.mark.parametrize("name", ["tracks.csv", "tracks_mixture.csv"])
def test_checked_frames_equal_frames_built_alone(name):
    table, frames, r, covs = _table(name)
    dens = densities(table, frames, r, covs, nb.PPP.uniform(2.0, [-50, -50], [150, 150]))
    assert dens.checked is not None
    for fast, alone in zip(dens, plain(dens), strict=True):
        assert same(fast.weights, alone.weights) and fast.ppp is alone.ppp
        assert len(fast.hypotheses) == len(alone.hypotheses)
        for a, b in zip(fast.hypotheses, alone.hypotheses, strict=True):
            assert same(a.r, b.r) and same(a.labels, b.labels)
            assert all(same(getattr(a.densities, f), getattr(b.densities, f)) for f in FIELDS)


def test_a_refused_row_is_refused_at_its_frame_as_before():
    table, frames, r, covs = _table("tracks.csv")
    r = r.copy()
    bad = int(np.flatnonzero(table.frame == frames[1])[-1])
    r[bad] = 1.5  # not a probability: the MultiBernoulli of that frame refuses it
    assert checked_rows(table, r, covs, table.placeholder) is None
    dens = densities(table, frames, r, covs, None)
    assert dens.checked is None
    dens[0]  # the other frames build
    with pytest.raises(ValueError, match=r"r: expected values in \[0, 1\], got 1.5") as fast:
        dens[1]
    with pytest.raises(ValueError) as alone:
        plain(dens)[1]
    assert str(fast.value) == str(alone.value)


def test_no_rows_at_all():
    table, frames, r, covs = _table("tracks.csv")
    empty = densities(table, np.array([10_000]), r, covs, None)  # a frame no row is in
    (only,) = list(empty)
    assert len(only.hypotheses) == 1 and len(only.hypotheses[0]) == 0
