"""One reader per input format of scoring, behind one interface (``docs/score.md``, "Input formats").

A scoring run reads a (tracks, truth) pair. Each format is a :class:`Format`
of :data:`FORMATS`: its name, its file suffixes and its reader, which reads
the pair's files of that format (a format that needs both files at once, such
as a MOTChallenge result and its ground truth, or Stone Soup files on one set
of frame times, gets both). The formats:

* ``table``: a tidy CSV / Parquet table (``.csv``, ``.parquet``, ``.pq``;
  :mod:`nllbench.trackers.tracks`), read and checked row by row when scored;
* ``scenario``: an nllbench scenario file (``.nc``) as the truth
  (:func:`nllbench.trackers.inputs.truth_from_scenario`), its steps the frames;
* ``mot``: MOTChallenge text files (``.txt``; :mod:`~nllbench.trackers.formats.mot`):
  a result and its ground truth read as TrackEval reads them;
* ``stonesoup``: Stone Soup YAML (``.yaml``, ``.yml``;
  :mod:`~nllbench.trackers.formats.stonesoup`).

:func:`input_format` says which reader takes a file (by suffix, or as
``ReadOptions.format`` forces); :func:`read_inputs` reads a pair. A file
whose suffix no reader claims is refused, naming the file and the suffixes
that are read. Batches of files are found by
:mod:`~nllbench.trackers.formats.batch`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from nllbench.trackers.formats.mot import read_mot_inputs
from nllbench.trackers.formats.stonesoup import STONESOUP_SUFFIXES, StoneSoupOptions, read_stonesoup_inputs

#: The values of ``ReadOptions.format`` (``nllbench score --format``).
FORMAT_CHOICES = ("auto", "table", "mot", "stonesoup")

TABLE_SUFFIXES = (".csv", ".parquet", ".pq")


@dataclass(frozen=True)
class ReadOptions:
    """How the inputs of a scoring run are read (``nllbench score``'s reading options).

    format : ``"auto"`` (by suffix), or ``"table"``, ``"mot"``, ``"stonesoup"``:
        every input but a scenario file (``.nc``) read so (``"stonesoup"``
        keeps a CSV / Parquet truth a table; ``--format``)
    state : the state columns (a MOTChallenge file's are ``("x", "y")``, the box centre)
    mot_conf : a MOTChallenge result's 7th column: ``"score"``, ``"r"`` or ``"ignore"`` (``--mot-conf``)
    mot_box_std_fraction : F of the box-centre covariance diag((F w)^2, (F h)^2), or None
    mot_matching : ``"iou"`` (a result and ground truth read as a pair, TrackEval's
        preprocessing and the boxes' IoU) or ``"centre"`` (each file alone; ``--mot-matching``)
    stonesoup : :class:`StoneSoupOptions` (the ``--stonesoup-*`` options)
    """

    format: str = "auto"
    state: tuple[str, ...] = ("x", "y")
    mot_conf: str = "score"
    mot_box_std_fraction: float | None = None
    mot_matching: str = "iou"
    stonesoup: StoneSoupOptions = field(default_factory=StoneSoupOptions)

    def __post_init__(self):
        if self.format not in FORMAT_CHOICES:
            raise ValueError(f"format: expected one of {', '.join(FORMAT_CHOICES)}, got {self.format!r}")


def _read_paths(tracks, truth, options: ReadOptions):
    """A table or scenario file is read when scored (its rows checked and named there): kept as the path."""
    return tracks, truth, None


@dataclass(frozen=True)
class Format:
    """One input format: ``name``, the ``suffixes`` that select it under ``format="auto"``, and ``read``:
    ``read(tracks, truth, options) -> (tracks, truth, MOTPair or None)`` where ``tracks`` / ``truth``
    are the pair's paths of this format (None for a path of another format), and so is what it returns
    for them (a table, or the path when it is read later)."""

    name: str
    suffixes: tuple[str, ...]
    read: Callable
    description: str


#: Every input format, by name.
FORMATS = {
    f.name: f
    for f in (
        Format("table", TABLE_SUFFIXES, _read_paths, "tidy CSV / Parquet table"),
        Format("scenario", (".nc",), _read_paths, "nllbench scenario file (truth)"),
        Format("mot", (".txt",), read_mot_inputs, "MOTChallenge text file"),
        Format("stonesoup", STONESOUP_SUFFIXES, read_stonesoup_inputs, "Stone Soup YAML"),
    )
}


def known_suffixes() -> str:
    """The suffixes read, in words: ``.csv .parquet .pq (tidy CSV / Parquet table), ...``."""
    return ", ".join(f"{' '.join(f.suffixes)} ({f.description})" for f in FORMATS.values())


def input_format(path, fmt: str = "auto", label: str = "tracks") -> str:
    """The name of the format (:data:`FORMATS`) that reads ``path``.

    ``fmt="auto"``: by suffix (any case); a suffix no format claims is refused,
    naming ``label`` and the file. ``"table"``: every file a table (a
    scenario ``.nc`` stays one); ``"mot"``: every file but a scenario file
    MOTChallenge; ``"stonesoup"``: every file but a scenario file and a
    CSV / Parquet table (a truth table next to Stone Soup tracks) Stone Soup YAML.
    """
    suffix = Path(str(path)).suffix.lower()
    if suffix == ".nc":
        return "scenario"
    if fmt == "table":
        return "table"
    if fmt == "mot":
        return "mot"
    if fmt == "stonesoup":
        return "table" if suffix in TABLE_SUFFIXES else "stonesoup"
    for f in FORMATS.values():
        if suffix in f.suffixes:
            return f.name
    raise ValueError(
        f"{label}: expected a .csv or .parquet file, got {str(path)!r}: no reader for the suffix "
        f"{suffix or '(none)'!r}; the readers: {known_suffixes()}"
    )


def _is_path(value) -> bool:
    return isinstance(value, (str, os.PathLike))


def read_inputs(tracks, truth, options: ReadOptions | None = None):
    """((tracks, truth), MOTPair or None): a scoring run's pair, each path read by its format's reader.

    ``tracks`` / ``truth``: paths (or None, or tables, kept as they are). A
    MOTChallenge result with a MOTChallenge ground truth (``mot_matching="iou"``)
    is read as a pair (:func:`nllbench.trackers.motchallenge.read_mot_pair`), returned as the
    MOTPair too; Stone Soup files are read together, on one set of frame times.
    A table or scenario path is returned as it is (read and checked when scored).
    Each table read from a file carries the file's name (``attrs["file"]``).
    """
    options = options or ReadOptions()
    paths = [tracks, truth]
    formats = [
        input_format(p, options.format, label) if _is_path(p) else None
        for p, label in zip(paths, ("tracks", "truth"), strict=True)
    ]
    out, pair = list(paths), None
    for name in (f for f in FORMATS if f in formats):  # in the order of FORMATS
        mine = [p if f == name else None for p, f in zip(paths, formats, strict=True)]
        *read, read_pair = FORMATS[name].read(*mine, options)
        pair = read_pair or pair
        out = [r if f == name else o for r, o, f in zip(read, out, formats, strict=True)]
    return tuple(out), pair
