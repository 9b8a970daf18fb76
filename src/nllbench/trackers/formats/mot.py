"""MOTChallenge text files as scoring reads them: a tracker result and its ground truth.

A result with its ground truth is read as a pair, as TrackEval reads it
(:func:`nllbench.trackers.motchallenge.read_mot_pair`: the preprocessing, the
boxes for HOTA, CLEAR and Identity on IoU); with ``mot_matching="centre"``, or
beside a file of another format, each file alone
(:func:`nllbench.trackers.adapters.read_motchallenge`: the box centre as x, y).
"""

from __future__ import annotations

from pathlib import Path

#: Said after an error in a .txt file read as MOTChallenge by its suffix (a CSV table named .txt).
MOT_BY_SUFFIX_NOTE = (
    "read as MOTChallenge text because of its .txt suffix; a CSV table must be named .csv or .parquet "
    "to be read as a table, also with --format table"
)


def _check_state(options) -> None:
    if tuple(options.state) != ("x", "y"):
        raise ValueError(
            f"--state: a MOTChallenge file's state is the box centre x y, got {list(options.state)}"
        )


def _by_suffix(exc: ValueError, options) -> ValueError:
    """``exc`` with :data:`MOT_BY_SUFFIX_NOTE` when the file was read as MOTChallenge by its suffix."""
    return exc if options.format != "auto" else ValueError(f"{exc} ({MOT_BY_SUFFIX_NOTE})")


def read_pair(tracks, truth, options):
    """The :class:`~nllbench.trackers.motchallenge.MOTPair` of a MOTChallenge result and ground truth."""
    from nllbench.trackers.motchallenge import read_mot_pair

    _check_state(options)
    try:
        return read_mot_pair(
            tracks, truth, conf=options.mot_conf, box_std_fraction=options.mot_box_std_fraction
        )
    except ValueError as exc:
        raise _by_suffix(exc, options) from None


def read_mot_inputs(tracks, truth, options):
    """The reader of the ``mot`` format (:class:`~nllbench.trackers.formats.Format`): (tracks, truth,
    MOTPair or None); both files given and ``mot_matching="iou"``: the pair."""
    from nllbench.trackers.adapters import read_motchallenge

    if tracks is not None and truth is not None and options.mot_matching == "iou":
        pair = read_pair(tracks, truth, options)
        return pair.tracks, pair.truth, pair
    out = [tracks, truth]
    for i, (path, kind) in enumerate(((tracks, "tracks"), (truth, "truth"))):
        if path is None:
            continue
        _check_state(options)
        extra = (
            dict(conf=options.mot_conf, box_std_fraction=options.mot_box_std_fraction)
            if kind == "tracks"
            else {}
        )
        try:
            table = read_motchallenge(path, kind=kind, **extra)
        except ValueError as exc:
            raise _by_suffix(exc, options) from None
        table.attrs["file"] = str(path)
        out[i] = table
    return out[0], out[1], None


def mot_truth(directory, sequence: str) -> Path:
    """The ground truth of a MOTChallenge sequence: ``<dir>/<SEQ>.txt`` or ``<dir>/<SEQ>/gt/gt.txt``."""
    candidates = [Path(directory) / f"{sequence}.txt", Path(directory) / sequence / "gt" / "gt.txt"]
    found = [p for p in candidates if p.is_file()]
    if len(found) == 2:
        raise ValueError(
            f"--scenario-dir {directory!r}: sequence {sequence}: expected one ground truth, got both "
            f"{found[0]} and {found[1]}"
        )
    if not found:
        raise ValueError(
            f"--scenario-dir {directory!r}: sequence {sequence}: no ground truth, looked for "
            f"{candidates[0]} and {candidates[1]}"
        )
    return found[0]
