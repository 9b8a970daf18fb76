"""Stone Soup YAML files as scoring reads them (``docs/score.md``, "Stone Soup YAML files").

The files of a (tracks, truth) pair are loaded with their tags checked before
anything is built (:func:`nllbench.trackers.stonesoup_yaml.load_stonesoup_yaml`)
and turned into tables together, on one set of frame times
(:func:`nllbench.trackers.stonesoup_yaml.stonesoup_tables`).
"""

from __future__ import annotations

from dataclasses import dataclass

STONESOUP_SUFFIXES = (".yaml", ".yml")


@dataclass(frozen=True)
class StoneSoupOptions:
    """How Stone Soup YAML files are read (``nllbench score``'s ``--stonesoup-*`` options).

    existence : ``"auto"`` (existence_probability, metadata, weight), ``"missed_detection"``
        (JPDA / GNN: a score to calibrate) or ``"none"``
    metadata_key : the track-metadata key read as r by ``existence="auto"``
    no_metadata : do not read r from the tracks' metadata
    window : states averaged by ``existence="missed_detection"``
    mapping : the state-vector index of each state column, or None (``(0, 2)`` for x, y)
    truth_mapping : the same for the ground truth paths, or None (``mapping``)
    frame_times : (first time, period): frame k at first + k * period (ISO 8601 text or a datetime;
        seconds as text or a number, or a timedelta), or None (:func:`frame_grid`)
    """

    existence: str = "auto"
    metadata_key: str = "existence_probability"
    no_metadata: bool = False
    window: int = 1
    mapping: tuple[int, ...] | None = None
    truth_mapping: tuple[int, ...] | None = None
    frame_times: tuple | None = None


def frame_grid(tokens):
    """``--stonesoup-frame-times FIRST PERIOD`` as (datetime, timedelta), or None."""
    if tokens is None:
        return None
    import datetime
    import math

    first, period = tokens
    if isinstance(first, datetime.datetime) and isinstance(period, datetime.timedelta):
        return first, period
    try:
        start = first if isinstance(first, datetime.datetime) else datetime.datetime.fromisoformat(first)
    except (TypeError, ValueError):
        raise ValueError(
            "--stonesoup-frame-times: expected FIRST_TIME as ISO 8601 (e.g. 2024-01-01T00:00:00), "
            f"got {first!r}"
        ) from None
    try:
        seconds = float(period)
    except (TypeError, ValueError):
        seconds = math.nan
    if not (math.isfinite(seconds) and seconds > 0):
        raise ValueError(f"--stonesoup-frame-times: expected PERIOD_SECONDS > 0, got {period!r}")
    try:
        step = datetime.timedelta(seconds=seconds)
    except OverflowError:
        raise ValueError(
            "--stonesoup-frame-times: expected PERIOD_SECONDS below "
            f"{datetime.timedelta.max.total_seconds():.0f} (timedelta's range), got {period!r}"
        ) from None
    if step.total_seconds() != seconds:
        raise ValueError(
            f"--stonesoup-frame-times: expected a period in whole microseconds, got {period!r} seconds"
        )
    return start, step


def read_stonesoup_inputs(tracks, truth, options):
    """The reader of the ``stonesoup`` format (:class:`~nllbench.trackers.formats.Format`):
    (tracks table or None, truth table or None, None) of the pair's Stone Soup YAML files."""
    from nllbench.trackers.stonesoup_yaml import load_stonesoup_yaml, stonesoup_tables

    ss = options.stonesoup
    files = [
        None if path is None else load_stonesoup_yaml(path, label)
        for path, label in ((tracks, "TRACKS"), (truth, "TRUTH"))
    ]
    state = list(options.state)
    n = len(state)
    for option, mapping in (
        ("--stonesoup-mapping", ss.mapping),
        ("--stonesoup-truth-mapping", ss.truth_mapping),
    ):
        if mapping is not None and len(mapping) != n:
            raise ValueError(
                f"{option}: expected one state-vector index per --state column ({' '.join(state)}), "
                f"got {len(mapping)}: {' '.join(map(str, mapping))}"
            )
    mapping = ss.mapping or ([0, 2] if n == 2 else None)
    if mapping is None:
        raise ValueError(
            f"--stonesoup-mapping: expected the state-vector index of each --state column "
            f"({' '.join(state)}); the default 0 2 is for x y only"
        )
    return (
        *stonesoup_tables(
            *files,
            grid=frame_grid(ss.frame_times),
            mapping=list(mapping),
            truth_mapping=None if ss.truth_mapping is None else list(ss.truth_mapping),
            state=tuple(state),
            existence=ss.existence,
            metadata_key=None if ss.no_metadata else ss.metadata_key,
            window=ss.window,
        ),
        None,
    )
