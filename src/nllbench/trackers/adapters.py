"""Adapters from real tracker outputs to the tidy tracks / truth tables of :mod:`nllbench.trackers.tracks`.

* :func:`tracks_from_stonesoup`: Stone Soup ``Track`` objects (of Gaussian
  states: ``GaussianState``, ``GaussianStatePrediction``, ``GaussianStateUpdate``,
  ``TaggedWeightedGaussianState``; particle states by mean and covariance), in
  memory, on the frames of given timestamps or of the ground truth, with the
  existence the tracker keeps or a missed-detection score
  (:mod:`nllbench.trackers.stonesoup_existence`); :func:`truth_from_stonesoup`:
  its ``GroundTruthPath`` objects, on the same frames.
* :func:`read_motchallenge`: MOTChallenge text files (``frame, id, bb_left,
  bb_top, bb_width, bb_height, conf, x, y, z``; Milan et al., "MOT16: A
  Benchmark for Multi-Object Tracking", arXiv:1603.00831, Sec. 3.3).

Each returns a pandas DataFrame in the tidy format, ready for
:func:`nllbench.trackers.api.score` or ``to_csv`` / ``to_parquet``.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable, Sequence
from importlib.metadata import version

import numpy as np

_PANDAS_MAJOR = int(version("pandas").split(".")[0])

MOT_COLUMNS = ("frame", "id", "bb_left", "bb_top", "bb_width", "bb_height", "conf", "x", "y", "z")


def tracks_from_stonesoup(
    tracks: Iterable,
    timestamps: Sequence | None = None,
    *,
    truth: Iterable | None = None,
    mapping: Sequence[int] = (0, 2),
    state: Sequence[str] = ("x", "y"),
    existence: str = "auto",
    metadata_key: str | None = "existence_probability",
    window: int = 1,
):
    """Tidy tracks table from Stone Soup tracks.

    Parameters
    ----------
    tracks : iterable of ``stonesoup.types.track.Track``
        Every state must carry ``mean``, ``covar`` and ``timestamp`` (Gaussian
        states; also particle states, summarised by their mean and covariance).
    timestamps : sequence of datetimes
        Frame k is ``timestamps[k]``; a state at any other time is an error.
    truth : iterable of ``stonesoup.types.groundtruth.GroundTruthPath``
        Instead of ``timestamps``: the frames are the sorted distinct
        timestamps of the ground truth's states, as in
        :func:`truth_from_stonesoup` (a track state at a time without truth
        is then an error: give ``timestamps``). One of the two is required:
        numbering the frames from the tracks' own timestamps would shift a
        tracker whose first tracks come later than the first scan.
    mapping : indices of ``state`` in Stone Soup's state vector (default
        (0, 2): x and y of a [x, vx, y, vy] constant-velocity state).
    state : column names for those components.
    existence : "auto", "missed_detection" or "none"
        Where each row's existence comes from (see
        :mod:`nllbench.trackers.stonesoup_existence`). ``"auto"``, in this
        order of precedence: ``r`` = the state's ``existence_probability``
        (Bernoulli particle states), else ``r`` =
        ``track.metadatas[i][metadata_key]`` (both present and different:
        refused as ambiguous), else ``score`` = the state's scalar ``weight``
        (GM-PHD's ``TaggedWeightedGaussianState``, to be calibrated), else no
        column. ``"missed_detection"``: ``score`` = one minus the posterior
        missed-detection probability of the state's hypotheses, averaged over
        the track's last ``window`` states (JPDA / GNN trackers, which keep no
        existence; to be calibrated with ``--fit-score-on``). ``"none"``: no
        column (score with ``existence_one`` or a constant fill-in).
    metadata_key : the track-metadata key read as r by ``"auto"`` (None: not read).
    window : states averaged by ``"missed_detection"``.

    Returns
    -------
    pandas.DataFrame
        ``frame, id, [r | score], <state>, var_<a>, cov_<a>_<b>``. ``id`` numbers
        the tracks in the order of their Stone Soup ``id`` strings (track
        ``df.attrs["stonesoup_ids"][i]`` is id i). Rows of
        one table must all carry the same kind (all r, all score, or neither);
        a mix is refused.
    """
    from nllbench.trackers.stonesoup_existence import detection_scores, scalar_weight, state_existence

    if existence not in ("auto", "missed_detection", "none"):
        raise ValueError(f"existence: expected 'auto', 'missed_detection' or 'none', got {existence!r}")
    import pandas as pd

    mapping = [int(i) for i in mapping]
    names = [str(s) for s in state]
    if len(mapping) != len(names):
        raise ValueError(f"state: expected {len(mapping)} names for mapping {mapping}, got {names}")
    timestamps, source = _frame_times(timestamps, truth)
    tracks = sorted(tracks, key=lambda t: str(t.id))
    states = [(k, i, s) for k, t in enumerate(tracks) for i, s in enumerate(t.states)]
    scores = [detection_scores(t, window) for t in tracks] if existence == "missed_detection" else None
    frame_of = {t: k for k, t in enumerate(timestamps)}
    rows = []
    kinds = set()
    seen = set()
    for track_no, index, s in states:
        if s.timestamp not in frame_of:
            raise ValueError(
                f"tracks: track {tracks[track_no].id}: timestamp {s.timestamp} is not a frame (not among "
                f"the {source})" + ("; give timestamps= (every scan's time)" if truth is not None else "")
            )
        if (track_no, s.timestamp) in seen:
            raise ValueError(
                f"tracks: track {tracks[track_no].id}: expected one state per time, got two at {s.timestamp}"
            )
        seen.add((track_no, s.timestamp))
        # ``mean`` is the state vector of a Gaussian state and the weighted mean of a particle state
        x = _components(s.mean, mapping, f"tracks: track {tracks[track_no].id}")
        P = np.asarray(s.covar, dtype=float)[np.ix_(mapping, mapping)]
        row = {"frame": frame_of[s.timestamp], "id": track_no}
        if existence == "missed_detection":
            row["score"] = float(scores[track_no][index])
        elif existence == "auto":
            r = state_existence(tracks[track_no], index, metadata_key)
            w = scalar_weight(s) if r is None else None
            if r is not None:
                row["r"] = r
            elif w is not None:
                row["score"] = w
        kinds.add(tuple(k for k in ("r", "score") if k in row))
        row.update(zip(names, x.tolist(), strict=True))
        for i, a in enumerate(names):
            row[f"var_{a}"] = P[i, i]
            for j in range(i + 1, len(names)):
                row[f"cov_{a}_{names[j]}"] = P[i, j]
        rows.append(row)
    if len(kinds) > 1:
        raise ValueError(
            "tracks: expected every state to carry the same kind of existence (r from existence_probability "
            f"or metadata, score from a weight), got {sorted(kinds)} (() = none); give existence= to choose"
        )
    cols = ["frame", "id", *sorted(kinds.pop() if kinds else ()), *names]
    cols += [f"var_{a}" for a in names]
    cols += [f"cov_{a}_{b}" for i, a in enumerate(names) for b in names[i + 1 :]]
    df = pd.DataFrame(rows, columns=cols)
    df = df.sort_values(["frame", "id"], kind="stable").reset_index(drop=True)
    df.attrs["stonesoup_ids"] = [str(t.id) for t in tracks]
    return df


def _frame_times(timestamps, truth) -> tuple[list, str]:
    """The frame times (frame k is element k) from ``timestamps`` or the truth paths, and their source."""
    if timestamps is not None and truth is not None:
        raise ValueError("timestamps, truth: expected one of them (the frame times), got both")
    if timestamps is None and truth is None:
        raise ValueError(
            "timestamps: expected the frame times (timestamps=[every scan's time] or truth=the ground "
            "truth paths); frames numbered from the tracks' own first timestamp would shift a tracker "
            "whose first tracks come later against the truth"
        )
    if truth is not None:
        times = sorted({s.timestamp for path in truth for s in path.states})
        if not times:
            raise ValueError("truth: expected ground truth paths with states, got none")
        return times, "ground truth's timestamps"
    times = list(timestamps)
    if len(set(times)) != len(times):
        raise ValueError("timestamps: expected distinct times, got a time twice")
    return times, "timestamps"


def truth_from_stonesoup(
    paths: Iterable,
    timestamps: Sequence | None = None,
    *,
    mapping: Sequence[int] = (0, 2),
    state: Sequence[str] = ("x", "y"),
):
    """Tidy truth table from Stone Soup ground truth paths.

    Parameters
    ----------
    paths : iterable of ``stonesoup.types.groundtruth.GroundTruthPath``
    timestamps : sequence of datetimes, optional
        Frame k is ``timestamps[k]`` (a state at any other time is an error).
        Default: the sorted distinct timestamps of the paths' states, the
        frames :func:`tracks_from_stonesoup` gives with ``truth=paths``.
    mapping, state : as for :func:`tracks_from_stonesoup`.

    Returns
    -------
    pandas.DataFrame
        ``frame, id, <state>``; ``id`` numbers the paths in the order of their
        Stone Soup ``id`` strings (path ``df.attrs["stonesoup_ids"][i]`` is id
        i). A path with two states at one time is refused.
    """
    import pandas as pd

    paths = sorted(paths, key=lambda p: str(p.id))
    mapping = [int(i) for i in mapping]
    names = [str(s) for s in state]
    if len(mapping) != len(names):
        raise ValueError(f"state: expected {len(mapping)} names for mapping {mapping}, got {names}")
    times, source = _frame_times(timestamps, None if timestamps is not None else paths)
    frame_of = {t: k for k, t in enumerate(times)}
    rows = []
    for number, path in enumerate(paths):
        seen = set()
        for s in path.states:
            if s.timestamp not in frame_of:
                raise ValueError(f"truth: path {path.id}: timestamp {s.timestamp} is not among the {source}")
            if s.timestamp in seen:
                raise ValueError(
                    f"truth: path {path.id}: expected one state per time, got two at {s.timestamp}"
                )
            seen.add(s.timestamp)
            x = _components(s.state_vector, mapping, f"truth: path {path.id}")
            rows.append(
                {"frame": frame_of[s.timestamp], "id": number, **dict(zip(names, x.tolist(), strict=True))}
            )
    df = pd.DataFrame(rows, columns=["frame", "id", *names])
    df = df.sort_values(["frame", "id"], kind="stable").reset_index(drop=True)
    df.attrs["stonesoup_ids"] = [str(p.id) for p in paths]
    return df


def _components(vector, mapping: list[int], where: str) -> np.ndarray:
    """The ``mapping`` components of a state vector (a ValueError naming ``where`` if it has too few)."""
    v = np.asarray(vector, dtype=float).reshape(-1)
    if max(mapping, default=-1) >= v.size or min(mapping, default=0) < -v.size:
        raise ValueError(f"{where}: mapping {mapping} needs more than the state's {v.size} components")
    return v[mapping]


def read_motchallenge(
    path: str | os.PathLike,
    *,
    kind: str = "tracks",
    box_std_fraction: float | None = None,
    conf: str = "score",
):
    """Tidy table from a MOTChallenge text file (tracker results or ground truth).

    Box-to-state rule: the state is the box centre,
    ``x = bb_left + bb_width / 2``, ``y = bb_top + bb_height / 2`` (pixels).
    With ``box_std_fraction`` f, the covariance is
    ``diag((f * bb_width)^2, (f * bb_height)^2)``; without it the table has
    no covariance columns (score it with a default std). Frames keep their
    MOTChallenge numbers (1-based).

    Parameters
    ----------
    kind : "tracks" or "truth"
        For ``"truth"`` the 7th column is the ground truth's "consider" flag
        (MOT16): rows with flag 0 are left out, and their number is kept in
        ``df.attrs["ignored_rows"]``.
    conf : "score", "r" or "ignore" (tracks only)
        The 7th column as a score to calibrate, as an existence probability
        (it must then lie in [0, 1]), or not at all. A constant 7th column
        (result files usually hold ``conf = -1`` throughout) is no score: with
        ``"score"`` it is left out, with a warning, and its value kept in
        ``df.attrs["constant_conf"]``.
    """
    if kind not in ("tracks", "truth"):
        raise ValueError(f"kind: expected 'tracks' or 'truth', got {kind!r}")
    if conf not in ("score", "r", "ignore"):
        raise ValueError(f"conf: expected 'score', 'r' or 'ignore', got {conf!r}")
    return mot_table(read_mot_rows(path), path, kind=kind, box_std_fraction=box_std_fraction, conf=conf)


def read_mot_rows(path: str | os.PathLike, *, allow_empty: bool = False):
    """The rows of a MOTChallenge text file as they are: a DataFrame of :data:`MOT_COLUMNS` (6 to 10 of
    them), in file order, checked (frame and id integers, boxes finite, width and height positive);
    ``attrs["lines"]`` holds each row's line number ((n,) int). With ``allow_empty`` a file without
    lines (a tracker that reported nothing) gives no rows of the 10 columns instead of an error."""
    import pandas as pd

    if allow_empty and not _has_lines(path):
        raw = pd.DataFrame(np.empty((0, len(MOT_COLUMNS))), columns=list(MOT_COLUMNS))
        raw.attrs["lines"] = np.empty(0, dtype=np.int64)
        return raw
    values, lines = _mot_values(path)
    raw = pd.DataFrame(values, columns=list(MOT_COLUMNS[: values.shape[1]]))
    _check_mot(raw, path, lines)
    raw.attrs["lines"] = np.asarray(lines, dtype=np.int64)  # an array: pandas deep-copies attrs often
    return raw


def _has_lines(path) -> bool:
    """Whether a readable text file has a non-blank line (else :func:`_mot_values` names the fault)."""
    try:
        with open(path, encoding="utf-8") as fh:
            return any(line.strip() for line in fh)
    except (OSError, UnicodeDecodeError):
        return True


def mot_table(raw, path, *, kind: str = "tracks", box_std_fraction: float | None = None, conf: str = "score"):
    """The tidy table of MOTChallenge rows ``raw`` (:func:`read_mot_rows`) read from ``path``:
    :func:`read_motchallenge` on rows already read (and perhaps selected)."""
    import pandas as pd

    keep = np.ones(len(raw), dtype=bool)
    if kind == "truth" and "conf" in raw.columns:
        keep = raw["conf"].to_numpy() != 0
    df = pd.DataFrame(
        {
            "frame": raw["frame"].astype(np.int64),
            "id": raw["id"].astype(np.int64),
            "x": raw["bb_left"] + raw["bb_width"] / 2.0,
            "y": raw["bb_top"] + raw["bb_height"] / 2.0,
        }
    )
    if kind == "tracks":
        if conf != "ignore":
            if "conf" not in raw.columns:
                raise ValueError(f"{path}: conf={conf!r} needs the 7th column (conf), got 6 columns")
            values = raw["conf"].to_numpy(dtype=float)
            if conf == "score" and values.size > 1 and np.all(values == values[0]):
                warnings.warn(
                    f"{path}: column 'conf' is {values[0]:g} on every line: a constant is no score, so "
                    "the table has none (give r or existence_one to score it)",
                    UserWarning,
                    stacklevel=2,
                )
                df.attrs["constant_conf"] = float(values[0])
            else:
                df.insert(2, conf, values)
        if box_std_fraction is not None:
            f = float(box_std_fraction)
            if not np.isfinite(f) or f <= 0:
                raise ValueError(f"box_std_fraction: expected a positive number, got {box_std_fraction!r}")
            df["var_x"] = (f * raw["bb_width"]) ** 2
            df["var_y"] = (f * raw["bb_height"]) ** 2
    attrs = dict(df.attrs)
    df = df[keep].reset_index(drop=True)
    df.attrs.update(attrs, ignored_rows=int((~keep).sum()))
    return df


def _mot_values(path) -> tuple[np.ndarray, list[int]]:
    """(n, k) floats of a MOTChallenge file (6 <= k <= 10 cells on every line), and their line numbers.

    Cells are separated by commas (MOT16, Sec. 3.3), or by white space on a
    line without commas; an empty cell (``1,1,,20``) is an error, never a
    shift of the columns after it. Blank lines are skipped. Errors name the
    file, line and column.
    """
    from nllbench.trackers.cells import file_kind

    rows, lines = [], []
    kind = file_kind(path)
    if kind is not None:
        raise ValueError(
            f"{str(path)!r}: expected a MOTChallenge text file, got {kind} (it is not text); "
            "decompress or convert it first"
        )
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read().splitlines()
    except OSError as exc:
        raise ValueError(f"{str(path)!r}: cannot read it: {exc.strerror or exc}") from None
    fast = _mot_values_fast(path, text)
    if fast is not None:
        return fast
    for number, line in enumerate(text, start=1):
        if not line.strip():
            continue
        cells = [c.strip() for c in line.split(",")] if "," in line else line.split()
        if not 6 <= len(cells) <= 10:
            raise ValueError(f"{path}: line {number}: expected 6 to 10 cells {MOT_COLUMNS}, got {len(cells)}")
        if rows and len(cells) != len(rows[0]):
            raise ValueError(
                f"{path}: line {number}: expected {len(rows[0])} cells like line {lines[0]}, got {len(cells)}"
            )
        rows.append(cells)
        lines.append(number)
    if not rows:
        raise ValueError(f"{path}: expected MOTChallenge lines (frame, id, bb_left, ...), got an empty file")
    out = np.empty((len(rows), len(rows[0])))
    for i, cells in enumerate(rows):
        for j, cell in enumerate(cells):
            try:
                out[i, j] = float(cell)
            except ValueError:
                got = "an empty cell" if not cell else repr(cell)
                raise ValueError(
                    f"{path}: line {lines[i]}, column {MOT_COLUMNS[j]!r}: expected a number, got {got}"
                ) from None
    return out, lines


#: pandas' C parser reads floats as Python's float() does: by default from pandas 3, on request before.
_EXACT_FLOATS = {"float_precision": "round_trip"} if _PANDAS_MAJOR < 3 else {}


def _mot_values_fast(path, text: list[str]):
    """:func:`_mot_values` by pandas' C parser for a well-formed comma-separated file, else None (then the
    line-by-line reader finds and names the fault). Same numbers: both parse each cell as a float."""
    import pandas as pd

    lines = [number for number, line in enumerate(text, start=1) if line.strip()]
    if not lines or "," not in text[lines[0] - 1]:
        return None
    try:
        df = pd.read_csv(path, header=None, sep=",", skip_blank_lines=True, dtype=float, **_EXACT_FLOATS)
    except (ValueError, pd.errors.ParserError, UnicodeDecodeError):
        return None
    values = df.to_numpy(dtype=float)
    if values.shape[0] != len(lines) or not 6 <= values.shape[1] <= 10 or np.isnan(values).any():
        return None
    return values, lines


def _check_mot(raw, path, lines: list[int]) -> None:
    """Frame and id integers, box numbers finite, width and height positive; errors name the line."""
    for col in raw.columns:
        vals = raw[col].to_numpy(dtype=float)
        bad = ~np.isfinite(vals)
        if col in ("frame", "id"):
            bad |= vals != np.round(vals)
        if col in ("bb_width", "bb_height"):
            bad |= vals <= 0
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            what = {"frame": "an integer", "id": "an integer", "bb_width": "a positive width"}.get(
                col, "a number"
            )
            what = "a positive height" if col == "bb_height" else what
            raise ValueError(
                f"{path}: line {lines[i]}, column {col!r}: expected {what}, got {float(raw[col].iloc[i])!r}"
            )
