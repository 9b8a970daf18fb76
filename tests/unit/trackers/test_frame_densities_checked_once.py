"""A plain table's rows checked and factorised by blocks of frames give each frame's density bit for
bit as built alone, and a row the constructors refuse is still refused at its frame, named as before."""

from __future__ import annotations

import numpy as np
import pytest
from support.paths import ROOT

import nllbench as nb
from nllbench.engine.gaussian_mixture import Gaussians
from nllbench.trackers import tracks
from nllbench.trackers.tracks import checked_rows, densities, validate_tracks

EXAMPLES = ROOT / "docs/examples"
FIELDS = ("means", "covs", "_chol", "_log_diag", "_log_norm")


def alone(dens, frame):
    """The density of ``frame`` built through the public constructors from its rows (table order)."""
    table = dens.tracks
    rows = np.flatnonzero(table.frame == frame)
    mb = nb.MultiBernoulli(dens.r[rows], Gaussians(table.means[rows], dens.covs[rows]), table.ids[rows])
    return nb.PMBM(dens.ppp, (mb,), np.ones(1))


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


@pytest.mark.parametrize("block", [1, 3, 10_000])
def test_checked_frames_equal_frames_built_alone(block, monkeypatch):
    monkeypatch.setattr(tracks, "BLOCK_ROWS", block)  # a block of one frame, of a few, of all
    table, frames, r, covs = _table("tracks.csv")
    frames = np.concatenate([frames[:2], [-5], frames[2:]])  # and a frame before the others: a new block
    dens = densities(table, frames, r, covs, nb.PPP.uniform(2.0, [-50, -50], [150, 150]))
    built = list(dens)
    assert len(built) == len(frames)
    for k, fast in enumerate(built):
        for got in (fast, dens[k]):  # iterated, and indexed
            want = alone(dens, frames[k])
            assert same(got.weights, want.weights) and got.ppp is want.ppp
            ((a,), (b,)) = (got.hypotheses, want.hypotheses)
            assert same(a.r, b.r) and same(a.labels, b.labels)
            assert all(same(getattr(a.densities, f), getattr(b.densities, f)) for f in FIELDS)


def test_a_refused_row_is_refused_at_its_frame_as_before():
    table, frames, r, covs = _table("tracks.csv")
    r = r.copy()
    bad = int(np.flatnonzero(table.frame == frames[1])[-1])
    r[bad] = 1.5  # not a probability: the MultiBernoulli of that frame refuses it
    assert checked_rows(table, np.arange(r.size), r, covs) is None
    dens = densities(table, frames, r, covs, None)
    it = iter(dens)
    next(it)  # the frame before builds
    with pytest.raises(ValueError, match=r"r: expected values in \[0, 1\], got 1.5") as fast:
        next(it)
    with pytest.raises(ValueError) as plain:
        alone(dens, frames[1])
    assert str(fast.value) == str(plain.value)
    with pytest.raises(ValueError, match="got 1.5"):
        dens[1]
    assert len(dens[2].hypotheses[0]) == np.count_nonzero(table.frame == frames[2])
