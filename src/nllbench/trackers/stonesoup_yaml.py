"""Stone Soup's own YAML files (``stonesoup.serialise.YAML``) as tidy tracks and truth tables.

Stone Soup (https://github.com/dstl/Stone-Soup, checked on 1.9.1) serialises
its objects to YAML with ``stonesoup.serialise.YAML`` (ruamel.yaml with a
plug-in: a tag ``!stonesoup.<module>.<Class>`` per object, its declared
properties as a mapping). Two layouts of tracker output are read:

* **a dump**: ``YAML().dump(tracks, fh)``, one or more documents, each a
  ``Track`` / ``GroundTruthPath``, a collection (set, list, tuple) of them, or
  a mapping with the keys ``tracks`` and / or ``groundtruth_paths``;
* **Stone Soup's ``YAMLWriter``** (``stonesoup.writer.yaml``): one document
  per scan, a mapping with ``time`` and the tracker's current ``tracks`` (and
  ``groundtruth_paths``, ``detections``, ... when given those sources). Each
  document holds every live track with its whole history; as Stone Soup's
  ``YAMLTrackReader`` reads it, a track's (or path's) states are those of
  its last document. The documents' ``time`` s are every scan's time: the
  frames.

**Only tracking types are built.** Loading a YAML file with Stone Soup
builds every ``!stonesoup...`` object it names, and some Stone Soup classes
act when built (its ``YAMLWriter`` opens, and truncates, the path it is
given). So the file is first parsed into YAML nodes, nothing built, and
every node's tag checked against :func:`allowed_tag`: the YAML core types,
NumPy arrays, timedeltas, deques and the classes of the Stone Soup modules
a track or a ground truth path is made of (:data:`ALLOWED_MODULES`: states,
tracks, paths, detections, sensor data, hypotheses, predictions, updates,
arrays, numbers, angles, mixtures, particles, and the measurement and
transition models detections and predictions carry). Any other tag (a
writer, a reader, a tracker, a sensor, a path, a tag of another program) is
refused by name and line before anything is built.

:func:`load_stonesoup_yaml` reads a file; :func:`stonesoup_tables` turns a
tracks file and / or a truth file into tidy tables with
:func:`nllbench.trackers.adapters.tracks_from_stonesoup` and
:func:`~nllbench.trackers.adapters.truth_from_stonesoup`, on one set of
frame times (:func:`frame_times`). Stone Soup is an optional dependency
(the ``crosscheck`` extra).
"""

from __future__ import annotations

import datetime
import functools
import importlib
import numbers
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

SUFFIXES = (".yaml", ".yml")
_KEYS = ("time", "tracks", "groundtruth_paths", "detections", "sensor_data")
#: The YAML core tags a Stone Soup file uses (ruamel's safe constructor builds them as plain data).
CORE_TAGS = frozenset(
    f"tag:yaml.org,2002:{name}"
    for name in (
        "null",
        "bool",
        "int",
        "float",
        "str",
        "seq",
        "map",
        "set",
        "omap",
        "pairs",
        "timestamp",
        "merge",
    )
)
#: The other non-Stone Soup tags ``stonesoup.serialise`` writes for values of tracks and paths
#: (not ``!pathlib.Path``: no track holds a path; a writer or reader does).
VALUE_TAGS = frozenset(("!numpy.ndarray", "!datetime.timedelta", "!collections.deque"))
#: The Stone Soup modules whose classes a tracks or truth file may name (``!stonesoup.<module>.<Class>``):
#: what ``stonesoup.serialise`` writes for tracks, ground truth paths and ``YAMLWriter`` documents
#: (Stone Soup 1.9.1: states, updates, predictions, hypotheses, detections, sensor data, arrays,
#: probabilities, and the measurement and transition models that detections and predictions carry).
ALLOWED_MODULES = tuple(
    f"stonesoup.{name}"
    for name in (
        "types.angle",
        "types.array",
        "types.base",
        "types.detection",
        "types.groundtruth",
        "types.hypothesis",
        "types.mixture",
        "types.multihypothesis",
        "types.numeric",
        "types.particle",
        "types.prediction",
        "types.sensordata",
        "types.state",
        "types.time",
        "types.track",
        "types.update",
        "models.measurement.categorical",
        "models.measurement.linear",
        "models.measurement.nonlinear",
        "models.transition.categorical",
        "models.transition.linear",
        "models.transition.nonlinear",
    )
)


@dataclass(frozen=True)
class StoneSoupFile:
    """What a Stone Soup YAML file holds.

    path : the file; tracks : ``Track`` objects (one per Stone Soup id);
    paths : ``GroundTruthPath`` objects (one per id); times : the sorted scan
    times of a ``YAMLWriter`` file (its documents' ``time``), or None for a dump.
    """

    path: str
    tracks: tuple
    paths: tuple
    times: tuple | None


def _stonesoup(what: str):
    """(YAML class, Track, GroundTruthPath) of Stone Soup, or a ValueError saying how to install it."""
    try:
        from stonesoup.serialise import YAML
        from stonesoup.types.groundtruth import GroundTruthPath
        from stonesoup.types.track import Track
    except ImportError:
        raise ValueError(
            f"{what}: reading a Stone Soup YAML file needs Stone Soup (pip install stonesoup, or "
            "nllbench's crosscheck extra: pip install -e '.[crosscheck]')"
        ) from None
    return YAML, Track, GroundTruthPath


def load_stonesoup_yaml(path: str | os.PathLike, what: str = "tracks") -> StoneSoupFile:
    """Read a Stone Soup YAML file (a dump or a ``YAMLWriter`` file; see the module docstring).

    The file is read once, parsed into YAML nodes and every tag checked
    (:func:`refuse_unsafe_tags`) before any object is built from those
    nodes. ``what`` names the file in errors (e.g. the command-line
    argument). Refused, by name: a tag other than a tracking type's (with
    its line), a file that is not text or not YAML Stone Soup can load, a
    document that is neither a track, a path, a collection of them nor a
    ``YAMLWriter`` mapping, the two layouts mixed, an id twice in a dump, and
    a scan time twice.
    """
    from nllbench.trackers.cells import file_kind

    YAML, Track, GroundTruthPath = _stonesoup(what)
    where = f"{what} {str(path)!r}"
    kind = file_kind(path)
    if kind is not None:
        raise ValueError(f"{where}: expected a Stone Soup YAML text file, got {kind} (it is not text)")
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as exc:
        raise ValueError(f"{where}: cannot read it: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"{where}: expected UTF-8 text (YAML), got {exc.reason} at byte {exc.start}"
        ) from None
    yaml = YAML(typ="safe")
    try:
        nodes = list(yaml.compose_all(text))  # parsed, nothing built
    except Exception as exc:  # ruamel's parser and composer errors (no common base class)
        detail = " ".join(str(exc).split())
        raise ValueError(f"{where}: not a YAML file: {type(exc).__name__}: {detail}") from None
    refuse_unsafe_tags(nodes, where)
    try:
        docs = [yaml.constructor.construct_document(node) for node in nodes]
    except Exception as exc:  # ruamel's constructor errors and Stone Soup's constructors' errors alike
        detail = " ".join(str(exc).split())
        raise ValueError(
            f"{where}: not a YAML file Stone Soup can load: {type(exc).__name__}: {detail}"
        ) from None
    tracks: dict[str, object] = {}
    paths: dict[str, object] = {}
    times: list = []
    layouts = set()
    for number, doc in enumerate(docs, start=1):
        if doc is None:
            continue
        here = f"{where}, document {number}"
        writer = isinstance(doc, Mapping) and "time" in doc
        layouts.add("YAMLWriter" if writer else "dump")
        if len(layouts) > 1:
            raise ValueError(
                f"{here}: expected every document in one layout, got YAMLWriter documents (with 'time') "
                "and dumped objects together"
            )
        if isinstance(doc, Mapping):
            unknown = [str(k) for k in doc if k not in _KEYS]
            if unknown or not ({"tracks", "groundtruth_paths"} & set(doc) or writer):
                raise ValueError(
                    f"{here}: expected a mapping with keys among {list(_KEYS)} (Stone Soup's YAMLWriter), "
                    f"got keys {[str(k) for k in doc]}"
                )
            if writer:
                times.append(doc["time"])
            items = [(x, "tracks") for x in _members(doc.get("tracks"), here, "tracks")]
            items += [(x, "groundtruth_paths") for x in _members(doc.get("groundtruth_paths"), here, "paths")]
        else:
            items = [(x, None) for x in _members(doc, here, "document")]
        for item, key in items:
            if isinstance(item, Track) and key in ("tracks", None):
                store, name = tracks, "track"
            elif isinstance(item, GroundTruthPath) and key in ("groundtruth_paths", None):
                store, name = paths, "ground truth path"
            else:
                expected = {"tracks": "Track", "groundtruth_paths": "GroundTruthPath"}.get(
                    key, "Track or GroundTruthPath"
                )
                raise ValueError(
                    f"{here}{'' if key is None else f', {key!r}'}: expected {expected} objects, "
                    f"got a {type(item).__module__}.{type(item).__qualname__}"
                )
            ident = str(item.id)
            if not writer and ident in store:
                raise ValueError(f"{here}: {name} id {ident} appears twice in the file")
            store[ident] = item  # a YAMLWriter file: its last document's states (as YAMLTrackReader)
    if not layouts:
        raise ValueError(f"{where}: expected Stone Soup tracks or ground truth paths, got an empty file")
    scan_times = None
    if "YAMLWriter" in layouts:
        _distinct(times, f"{where}: the documents' 'time'")
        scan_times = tuple(_sorted_times(times, f"{where}: the documents' 'time'"))
    return StoneSoupFile(str(path), tuple(tracks.values()), tuple(paths.values()), scan_times)


@functools.cache
def allowed_tag(tag: str) -> bool:
    """Whether a YAML node tagged ``tag`` may be built: a tracking type's tag, nothing that acts when built.

    :data:`CORE_TAGS`, :data:`VALUE_TAGS`, and ``!stonesoup.<module>.<Class>``
    where ``<module>`` is one of :data:`ALLOWED_MODULES` and ``<Class>`` is a
    class defined there (a Stone Soup declarative class, array or number;
    not a function or a name the module imported) whose Stone Soup tag is
    exactly ``tag``. Only allowed modules are imported; nothing is built.
    """
    if tag in CORE_TAGS or tag in VALUE_TAGS:
        return True
    if not tag.startswith("!stonesoup."):
        return False
    module_name, _, name = tag[1:].rpartition(".")
    if module_name not in ALLOWED_MODULES:
        return False
    from stonesoup.base import Base
    from stonesoup.serialise import yaml_tag

    cls = getattr(importlib.import_module(module_name), name, None)
    return (
        isinstance(cls, type) and issubclass(cls, (Base, np.ndarray, numbers.Real)) and yaml_tag(cls) == tag
    )


def refuse_unsafe_tags(nodes: Sequence, where: str) -> None:
    """Raise a ValueError naming the first node (in file order) whose tag :func:`allowed_tag` refuses.

    ``nodes`` are a file's composed YAML documents (``YAML.compose_all``):
    nothing has been built from them. An alias is its anchor's node, checked once.
    """
    stack, seen = list(reversed(nodes)), set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        tag = str(node.tag)
        if not allowed_tag(tag):
            raise ValueError(
                f"{where}, line {node.start_mark.line + 1}: tag {tag!r} is not a tracking type a Stone Soup "
                "tracks or truth file holds (tracks, ground truth paths, their states, detections, "
                "hypotheses, arrays, numbers, times); refused before anything was built from the file"
            )
        if isinstance(node.value, list):
            children = [c for item in node.value for c in (item if isinstance(item, tuple) else (item,))]
            stack.extend(reversed(children))


def _members(value, where: str, what: str) -> list:
    """A document's (or key's) objects: the value itself, or the members of a set, list or tuple."""
    if value is None:
        return []
    if isinstance(value, (set, frozenset, list, tuple)):
        return list(value)
    if isinstance(value, (Mapping, str, bytes)) or not hasattr(value, "states"):
        raise ValueError(
            f"{where}: expected Stone Soup tracks or ground truth paths (one, or a set or list of them) "
            f"in the {what}, got a {type(value).__name__}"
        )
    return [value]


def _distinct(times: Sequence, what: str) -> None:
    seen = set()
    for t in times:
        if t in seen:
            raise ValueError(f"{what}: expected distinct scan times, got {t} twice")
        seen.add(t)


def _sorted_times(times, what: str) -> list:
    try:
        return sorted(times)
    except TypeError as exc:  # None among datetimes, or naive and aware datetimes mixed
        raise ValueError(f"{what}: expected comparable datetimes, got {exc}") from None


def time_grid(start: datetime.datetime, step: datetime.timedelta, files: Sequence[StoneSoupFile]) -> list:
    """Frame k at ``start + k * step``: the times 0..K of every state and scan time of ``files``.

    Every state (and scan) time must lie on the grid, at or after ``start``:
    a time off it is refused, naming the file, the track or path and the
    time (never rounded to a frame).
    """
    if not step > datetime.timedelta(0):
        raise ValueError(f"--stonesoup-frame-times: expected a positive step, got {step}")
    last = 0
    for f in files:
        labelled = [(f"scan time {t}", t) for t in f.times or ()]
        labelled += [
            (f"{kind} {obj.id}: timestamp {s.timestamp}", s.timestamp)
            for kind, objs in (("track", f.tracks), ("path", f.paths))
            for obj in objs
            for s in obj.states
        ]
        for text, t in labelled:
            try:
                offset = t - start
            except TypeError:
                raise ValueError(
                    f"{f.path}: {text}: expected a datetime comparable with the first frame time {start} "
                    "(both naive, or both with a time zone)"
                ) from None
            if offset < datetime.timedelta(0) or offset % step:
                raise ValueError(
                    f"{f.path}: {text} is not a frame time {start} + k * {step} (k = 0, 1, ...): the "
                    "frames are not shifted or rounded to fit; give the first scan's time and the period"
                )
            last = max(last, offset // step)
    return [start + k * step for k in range(last + 1)]


def frame_times(
    tracks: StoneSoupFile | None,
    truth: StoneSoupFile | None,
    grid: tuple[datetime.datetime, datetime.timedelta] | None = None,
) -> tuple[list | None, str]:
    """The frame times (frame k is element k) of a Stone Soup tracks and / or truth file, and their source.

    In this order: ``grid`` (start, step) when given (:func:`time_grid`); the
    scan times of a ``YAMLWriter`` file (both files' must then be the same,
    else refused naming the first time in one file only); None when the
    truth file has paths (the frames are then their distinct timestamps, as
    ``tracks_from_stonesoup(truth=paths)``). A tracks dump with neither is
    refused: numbering frames from the tracks' own timestamps would shift
    them against the truth.
    """
    files = [f for f in (tracks, truth) if f is not None]
    if grid is not None:
        return time_grid(*grid, files), "--stonesoup-frame-times grid"
    scans = [f for f in files if f.times is not None]
    if len(scans) == 2 and scans[0].times != scans[1].times:
        a, b = (set(f.times) for f in scans)
        only = sorted(a - b) or sorted(b - a)
        holder, other = (scans[0], scans[1]) if a - b else (scans[1], scans[0])
        raise ValueError(
            f"{holder.path}, {other.path}: the YAMLWriter scan times do not line up: {only[0]} is a scan "
            f"of {holder.path} only ({len(a)} and {len(b)} scans); frames are not shifted to fit"
        )
    if scans:
        return list(scans[0].times), f"scan times of {scans[0].path}"
    if truth is not None and truth.paths:
        return None, "the truth paths' timestamps"
    raise ValueError(
        f"{tracks.path if tracks is not None else truth.path}: the frames' times are unknown: give "
        "--stonesoup-frame-times FIRST_TIME PERIOD_SECONDS, the truth as Stone Soup ground truth paths, or "
        "a file written by Stone Soup's YAMLWriter (its documents carry every scan's time); frames numbered "
        "from the tracks' own first timestamp would shift a tracker whose first tracks come later"
    )


def stonesoup_tables(
    tracks: StoneSoupFile | None,
    truth: StoneSoupFile | None,
    *,
    grid: tuple[datetime.datetime, datetime.timedelta] | None = None,
    mapping: Sequence[int] = (0, 2),
    truth_mapping: Sequence[int] | None = None,
    state: Sequence[str] = ("x", "y"),
    existence: str = "auto",
    metadata_key: str | None = "existence_probability",
    window: int = 1,
):
    """(tracks table or None, truth table or None) of Stone Soup files, on the frames of :func:`frame_times`.

    The tables are :func:`~nllbench.trackers.adapters.tracks_from_stonesoup`'s
    (``mapping``, ``state``, ``existence``, ``metadata_key``, ``window`` as
    there) and :func:`~nllbench.trackers.adapters.truth_from_stonesoup`'s
    (``truth_mapping``, default ``mapping``). Refused: a tracks file with no
    track, a truth file with no path (each named).
    """
    from nllbench.trackers.adapters import tracks_from_stonesoup, truth_from_stonesoup

    if tracks is not None and not tracks.tracks:
        held = f" (it holds {len(tracks.paths)} ground truth paths)" if tracks.paths else ""
        raise ValueError(f"{tracks.path}: expected Stone Soup tracks (Track objects), got none{held}")
    if truth is not None and not truth.paths:
        held = f" (it holds {len(truth.tracks)} tracks)" if truth.tracks else ""
        raise ValueError(
            f"{truth.path}: expected Stone Soup ground truth paths (GroundTruthPath objects), got none{held}"
        )
    times, source = frame_times(tracks, truth, grid)
    out_tracks = out_truth = None
    if tracks is not None:
        on = dict(timestamps=times) if times is not None else dict(truth=truth.paths)
        try:
            out_tracks = tracks_from_stonesoup(
                tracks.tracks,
                **on,
                mapping=mapping,
                state=state,
                existence=existence,
                metadata_key=metadata_key,
                window=window,
            )
        except ValueError as exc:
            raise ValueError(f"{tracks.path} (frames: {source}): {exc}") from None
        out_tracks.attrs["file"] = tracks.path
    if truth is not None:
        try:
            out_truth = truth_from_stonesoup(
                truth.paths, times, mapping=mapping if truth_mapping is None else truth_mapping, state=state
            )
        except ValueError as exc:
            raise ValueError(f"{truth.path} (frames: {source}): {exc}") from None
        out_truth.attrs["file"] = truth.path
    return out_tracks, out_truth
