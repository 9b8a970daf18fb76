"""The tables a scoring run reads: a tracks table and a truth table, validated together.

The truth may be a tidy table (:mod:`nllbench.trackers.tracks`) or an nllbench
scenario file (.nc), whose steps are then the frames and whose field of view
is kept for the Theorem 1 check.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from nllbench.engine.transforms import POSITION
from nllbench.trackers.build import check_columns
from nllbench.trackers.tracks import (
    DEFAULT_STATE,
    TrackTable,
    TruthTable,
    frame_list,
    validate_tracks,
    validate_truth,
)

_SCENARIO_STATE = ("x", "y", "vx", "vy")  # the state order of nllbench scenario files


def read_tables(tracks, truth, state, frames=None, fill=None):
    """Validated (tracks, truth, frames, scenario field of view or None).

    A scenario-file truth (.nc) gives all its steps as frames, and its field
    of view. With ``fill`` (:class:`~nllbench.trackers.fillins.FillIns`), a
    column the tracks lack and ``fill`` does not make up for (``r`` /
    ``score``, covariances) is named before the frames are compared
    (:func:`~nllbench.trackers.build.check_columns`).
    """
    truth_name = "truth"
    if isinstance(truth, (str, os.PathLike)) and Path(truth).suffix == ".nc":
        truth_name = str(truth)  # the label recorded in fill-ins and errors: the file, not "truth"
        truth, steps = truth_from_scenario(truth, state)
        frames = list(range(steps)) if frames is None else frames
    t, y = _validated(tracks, truth, state, truth_name)
    if fill is not None:
        check_columns(t, fill)
    return t, y, frame_list(t, y, frames), getattr(truth, "attrs", {}).get("fov")


def _validated(tracks, truth, state, truth_name: str = "truth"):
    t = tracks if isinstance(tracks, TrackTable) else validate_tracks(tracks, state, "tracks")
    y = truth if isinstance(truth, TruthTable) else validate_truth(truth, state, truth_name)
    if t.state != y.state:
        raise ValueError(
            f"truth: expected state columns {list(t.state)} like the tracks, got {list(y.state)}"
        )
    if len(t.state) < len(POSITION):
        raise ValueError(
            f"state: expected at least {len(POSITION)} columns (the first two are the position), "
            f"got {list(t.state)}"
        )
    return t, y


def truth_from_scenario(path, state=DEFAULT_STATE):
    """(truth DataFrame, number of steps) from an nllbench scenario file; frame k is step k.

    The DataFrame's ``attrs["fov"]`` is the scenario's field of view (low, high).
    """
    import pandas as pd

    from nllbench.store import read_scenario

    missing = [s for s in state if s not in _SCENARIO_STATE]
    if missing:
        raise ValueError(
            f"state: a scenario file's truth has columns {list(_SCENARIO_STATE)}, not {missing[0]!r}"
        )
    data = read_scenario(path)
    cols = [_SCENARIO_STATE.index(s) for s in state]
    frames = [np.full(len(i), k, dtype=np.int64) for k, i in enumerate(data.truth_ids)]
    X = np.concatenate([x[:, cols] for x in data.truth]) if data.steps else np.empty((0, len(cols)))
    df = pd.DataFrame(X.reshape(-1, len(cols)), columns=list(state))
    df.insert(0, "id", np.concatenate(data.truth_ids) if data.steps else np.empty(0, dtype=np.int64))
    df.insert(0, "frame", np.concatenate(frames) if data.steps else np.empty(0, dtype=np.int64))
    if "fov_low" in data.attrs and "fov_high" in data.attrs:
        df.attrs["fov"] = (
            list(np.atleast_1d(data.attrs["fov_low"])),
            list(np.atleast_1d(data.attrs["fov_high"])),
        )
    return df, data.steps
