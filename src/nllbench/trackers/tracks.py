"""Tidy tracks and truth tables (CSV or Parquet): reading, validation, densities.

A *tracks* table has one row per (frame, Bernoulli component):

========================  ==================================================
column                    meaning
========================  ==================================================
``frame``                 integer frame (time step) number
``id``                    optional integer track id (for MOTA switches, IDF1)
``r``                     existence probability in [0, 1] ...
``score``                 ... or a confidence mapped to r by a fitted
                          calibration (:mod:`nllbench.trackers.api`)
state columns             the mean, named by the user (default ``x y``)
``var_<a>``               variance of state column ``a``
``cov_<a>_<b>``           covariance of ``a`` and ``b`` (a before b in state
                          order; a missing off-diagonal means 0)
``hypothesis``, ``weight`` optional: global hypothesis number and its weight
                          (one weight per (frame, hypothesis), summing to 1)
``component``,            optional (with ``id``): the track's density is a
``component_weight``      Gaussian mixture; one row per component, numbered
                          by ``component`` (an integer, distinct within the
                          track's rows of a frame and hypothesis), with its
                          weight (summing to 1 per track and frame)
========================  ==================================================

A row of a tracks table whose state cells are all empty, with ``hypothesis``
and ``weight`` set, stands for a global hypothesis without any Bernoulli.

With ``component`` a track's *row group* is its rows of one frame (and
hypothesis): one Bernoulli whose density is sum_c w_c N(x; mean_c, P_c) over
the group's rows, each row giving a component's mean and covariance; ``r``
(or ``score``) is the track's and must be the same on every row of the group.

A *truth* table has ``frame``, ``id`` and the same state columns.

Errors name the file, the row (1-based data row; the CSV line is one more,
for the header) and the column. See ``docs/score.md``.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from nllbench.engine import validate as v
from nllbench.engine.densities import PMBM, PPP, GaussianMixtures, Gaussians, MultiBernoulli, trusted
from nllbench.trackers.cells import (
    TRACK_COLUMNS,
    cell_at,
    check_no_nan,
    check_state_magnitude,
    check_state_names,
    float_column,
    integer_column,
    missing_cell,
    read_table,
    require_columns,
)

DEFAULT_STATE = ("x", "y")


@dataclass(frozen=True)
class TrackTable:
    """A validated tracks table (N rows, d state columns).

    frame : (N,) int; means : (N, d) (NaN rows: empty-hypothesis placeholders);
    ids : (N,) int or None; r, score : (N,) float or None (at most one given);
    covs : (N, d, d) or None (no covariance columns); hypothesis : (N,) int
    or None; weight : (N,) float or None; state : column names; label : source;
    ignored : columns that are not part of the format; component : (N,) int or
    None and component_weight : (N,) float or None (Gaussian-mixture tracks:
    one row per component, weights summing to 1 per track, frame and hypothesis).
    """

    frame: np.ndarray
    means: np.ndarray
    ids: np.ndarray | None
    r: np.ndarray | None
    score: np.ndarray | None
    covs: np.ndarray | None
    hypothesis: np.ndarray | None
    weight: np.ndarray | None
    state: tuple[str, ...]
    label: str
    ignored: tuple[str, ...] = ()
    component: np.ndarray | None = None
    component_weight: np.ndarray | None = None

    @property
    def placeholder(self) -> np.ndarray:
        """(N,) bool: rows that only carry an empty hypothesis' weight."""
        return np.isnan(self.means).all(axis=1)

    def track_groups(self) -> np.ndarray:
        """(N,) int: the row group (track of one frame and hypothesis) of each row, numbered by first row.

        Without ``component`` every row is its own group. Placeholder rows are groups of their own.
        """
        n = self.frame.size
        if self.component is None or n == 0:
            return np.arange(n)
        hyp = self.hypothesis if self.hypothesis is not None else np.zeros(n, dtype=np.int64)
        ids = np.where(self.placeholder, -1 - np.arange(n), self.ids)  # placeholders never share a group
        _, first, inverse = np.unique(
            np.stack([self.frame, hyp, ids], axis=1), axis=0, return_index=True, return_inverse=True
        )
        rank = np.empty(first.size, dtype=np.int64)
        rank[np.argsort(first, kind="stable")] = np.arange(first.size)
        return rank[inverse.reshape(-1)]

    def per_track(self) -> TrackTable:
        """One row per track, frame and hypothesis: a mixture track at its mixture mean.

        The covariance (when given) is the mixture's, moment-matched; ``r``,
        ``score``, ids and hypotheses are the group's (equal on its rows).
        Without ``component``, the table itself.
        """
        if self.component is None:
            return self
        group = self.track_groups()
        G = int(group.max()) + 1 if group.size else 0
        first = np.full(G, group.size, dtype=np.int64)
        np.minimum.at(first, group, np.arange(group.size))
        w = np.where(self.placeholder, 1.0, self.component_weight)
        total = np.bincount(group, weights=w, minlength=G)
        share = w / total[group]
        means = np.zeros((G, self.means.shape[1]))
        np.add.at(means, group, share[:, None] * np.nan_to_num(self.means))
        means[self.placeholder[first]] = np.nan
        covs = None
        if self.covs is not None:
            diff = np.nan_to_num(self.means - means[group])
            covs = np.zeros((G, *self.covs.shape[1:]))
            np.add.at(covs, group, share[:, None, None] * (self.covs + diff[:, :, None] * diff[:, None, :]))

        def pick(a):
            return None if a is None else a[first]

        return TrackTable(
            self.frame[first],
            means,
            pick(self.ids),
            pick(self.r),
            pick(self.score),
            covs,
            pick(self.hypothesis),
            pick(self.weight),
            self.state,
            self.label,
            self.ignored,
        )


@dataclass(frozen=True)
class TruthTable:
    """A validated truth table: frame (N,), ids (N,), states (N, d), state names, label, ignored columns."""

    frame: np.ndarray
    ids: np.ndarray
    states: np.ndarray
    state: tuple[str, ...]
    label: str
    ignored: tuple[str, ...] = ()


def _covariance_columns(df, names, label: str, placeholder: np.ndarray) -> np.ndarray | None:
    """(N, d, d) covariances from var_/cov_ columns, or None if there are none."""
    d = len(names)
    pos = {s: i for i, s in enumerate(names)}
    var_cols = [c for c in df.columns if str(c).startswith("var_")]
    cov_cols = [c for c in df.columns if str(c).startswith("cov_")]
    if not var_cols and not cov_cols:
        return None
    for c in var_cols:
        if c[4:] not in pos:
            raise ValueError(f"{label}: column {c!r}: expected var_<a> for a state column in {list(names)}")
    require_columns(df, [f"var_{s}" for s in names], label)
    n = len(df)
    covs = np.zeros((n, d, d))
    live = ~placeholder
    for i, s in enumerate(names):
        col = f"var_{s}"
        vals = float_column(df, col, label, allow_nan=True)
        check_no_nan(vals, live, df, col, label)
        covs[:, i, i] = np.where(live, vals, 1.0)
    for c in cov_cols:
        pair = _cov_pair(c, names)
        if pair is None:
            raise ValueError(
                f"{label}: column {c!r}: expected cov_<a>_<b> with a before b "
                f"in the state order {list(names)}"
            )
        i, j = pair
        vals = np.where(live, np.nan_to_num(float_column(df, c, label, allow_nan=True)), 0.0)
        check_no_nan(float_column(df, c, label, allow_nan=True), live, df, c, label)
        covs[:, i, j] = covs[:, j, i] = vals
    eig = np.linalg.eigvalsh(covs) if n else np.empty((0, d))
    bad = eig.min(axis=1, initial=np.inf) <= 0 if d else np.zeros(n, dtype=bool)
    if np.any(bad):
        k = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"{cell_at(label, k, 'var_' + names[0])}: expected a positive definite covariance, "
            f"got eigenvalues {eig[k].tolist()}"
        )
    return covs


def _cov_pair(column: str, names) -> tuple[int, int] | None:
    """State indices (i, j), i < j, of a cov_<a>_<b> column (names may contain '_')."""
    rest = column[4:]
    for i, a in enumerate(names):
        for j in range(i + 1, len(names)):
            if rest == f"{a}_{names[j]}":
                return i, j
    return None


def validate_tracks(source, state=DEFAULT_STATE, name: str = "tracks") -> TrackTable:
    """Read and validate a tracks table (path or DataFrame); see the module docstring."""
    df, label = read_table(source, name)
    names = check_state_names(state)
    require_columns(df, ["frame", *names], label)
    has_h, has_w = "hypothesis" in df.columns, "weight" in df.columns
    if has_h != has_w:
        raise ValueError(f"{label}: columns 'hypothesis' and 'weight' go together; got only one of them")
    frame = integer_column(df, "frame", label)
    means = np.stack([float_column(df, s, label, allow_nan=True) for s in names], axis=1)
    check_state_magnitude(means, names, label)
    empty = np.isnan(means).all(axis=1)
    partial = np.isnan(means).any(axis=1) & ~empty
    if partial.any() or (empty.any() and not has_h):
        i = int(np.flatnonzero(partial | empty)[0])
        col = names[int(np.flatnonzero(np.isnan(means[i]))[0])]
        raise ValueError(
            f"{cell_at(label, i, col)}: expected a number, got {missing_cell(df, col, label, i)} "
            "(only a row with 'hypothesis' and 'weight' may leave every state cell empty: "
            "a hypothesis with no Bernoulli)"
        )
    if "r" in df.columns and "score" in df.columns:
        raise ValueError(f"{label}: expected column 'r' or column 'score', got both")
    r = score = None
    if "r" in df.columns:
        r = float_column(df, "r", label, allow_nan=True)
        check_no_nan(r, ~empty, df, "r", label)
        bad = (r < 0) | (r > 1)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"{cell_at(label, i, 'r')}: expected a probability in [0, 1], got {float(r[i])!r}"
            )
    if "score" in df.columns:
        score = float_column(df, "score", label, allow_nan=True)
        check_no_nan(score, ~empty, df, "score", label)
    ids = integer_column(df, "id", label, empty) if "id" in df.columns else None
    hyp = integer_column(df, "hypothesis", label) if has_h else None
    weight = _hypothesis_weights(df, frame, hyp, label) if has_h else None
    covs = _covariance_columns(df, names, label, empty)
    comp = comp_w = None
    if "component" in df.columns or "component_weight" in df.columns:
        comp, comp_w = _components(df, frame, ids, hyp, empty, label)
    if ids is not None:
        _unique_ids(frame, ids, hyp, label, comp)
    known = set(TRACK_COLUMNS) | set(names)
    ignored = tuple(str(c) for c in df.columns if c not in known and not str(c).startswith(("var_", "cov_")))
    table = TrackTable(frame, means, ids, r, score, covs, hyp, weight, names, label, ignored, comp, comp_w)
    if comp is not None:
        _component_groups(table, df)
    return table


def _components(df, frame, ids, hyp, empty, label: str) -> tuple[np.ndarray, np.ndarray]:
    """(component (N,) int, component_weight (N,) float) of a Gaussian-mixture tracks table.

    Both columns together, with ``id`` (it names the track a component
    belongs to); every row but a placeholder has both, the weight in [0, 1].
    """
    if "component" not in df.columns or "component_weight" not in df.columns:
        raise ValueError(
            f"{label}: columns 'component' and 'component_weight' go together; got only one of them"
        )
    if ids is None:
        raise ValueError(
            f"{label}: columns 'component' and 'component_weight' need column 'id' (a track's components "
            "are its rows of one frame with one id)"
        )
    comp = integer_column(df, "component", label, empty)
    w = float_column(df, "component_weight", label, allow_nan=True)
    check_no_nan(w, ~empty, df, "component_weight", label)
    bad = ((w < 0) | (w > 1)) & ~empty
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"{cell_at(label, i, 'component_weight')}: expected a weight in [0, 1], got {float(w[i])!r}"
        )
    return comp, np.where(empty, np.nan, w)


def _component_groups(table: TrackTable, df) -> None:
    """Per track, frame and hypothesis: component weights summing to 1, one r (or score) on every row."""
    group = table.track_groups()
    live = ~table.placeholder
    G = int(group.max()) + 1 if group.size else 0
    first = np.full(G, group.size, dtype=np.int64)
    np.minimum.at(first, group, np.arange(group.size))
    for name in ("r", "score"):
        values = getattr(table, name)
        if values is None:
            continue
        differs = live & (values != values[first][group])
        if differs.any():
            i = int(np.flatnonzero(differs)[0])
            raise ValueError(
                f"{cell_at(table.label, i, name)}: expected the {name} {float(values[first[group[i]]])!r} of "
                f"track id {table.ids[i]} in frame {table.frame[i]} as on its first row "
                f"(row {first[group[i]] + 1}): a track's components share its {name}, "
                f"got {float(values[i])!r}"
            )
    w = np.where(live, table.component_weight, 0.0)
    totals = np.bincount(group, weights=w, minlength=G)
    counts = np.bincount(group, minlength=G)
    bad = live[first] & (np.abs(totals - 1.0) > 1e-9 * counts)
    if bad.any():
        g = int(np.flatnonzero(bad)[0])
        i = int(first[g])
        rows = np.flatnonzero(group == g) + 1
        raise ValueError(
            f"{cell_at(table.label, i, 'component_weight')}: track id {table.ids[i]} in frame "
            f"{table.frame[i]}{'' if table.hypothesis is None else f', hypothesis {table.hypothesis[i]}'}: "
            f"expected component weights summing to 1, got {float(totals[g])!r} (rows {rows.tolist()})"
        )


def _hypothesis_weights(df, frame, hyp, label: str) -> np.ndarray:
    """Per-row weights, checked: one value per (frame, hypothesis), summing to 1 per frame."""
    w = float_column(df, "weight", label)
    bad = w < 0
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"{cell_at(label, i, 'weight')}: expected a non-negative weight, got {float(w[i])!r}"
        )
    keys = np.stack([frame, hyp], axis=1)
    _, first, inverse = np.unique(keys, axis=0, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    differs = w != w[first][inverse]
    if differs.any():
        i = int(np.flatnonzero(differs)[0])
        raise ValueError(
            f"{cell_at(label, i, 'weight')}: expected the weight {float(w[first][inverse][i])!r} of frame "
            f"{frame[i]}, hypothesis {hyp[i]} as on its first row, got {float(w[i])!r}"
        )
    ukeys = keys[first]
    frames, per_frame = np.unique(ukeys[:, 0], return_inverse=True)
    totals = np.bincount(per_frame.reshape(-1), weights=w[first], minlength=frames.size)
    counts = np.bincount(per_frame.reshape(-1), minlength=frames.size)
    # rounding of a sum grows with its own number of terms (this frame's hypotheses), not the table's
    bad = np.abs(totals - 1.0) > 1e-9 * counts
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"{label}: column 'weight': frame {frames[k]}: expected weights summing to 1, "
            f"got {float(totals[k])!r}"
        )
    return w


def _unique_ids(frame, ids, hyp, label: str, component=None) -> None:
    cols = [frame, ids] if hyp is None else [frame, hyp, ids]
    keys = np.stack(cols if component is None else [*cols, component], axis=1)
    _, first, counts = np.unique(keys, axis=0, return_index=True, return_counts=True)
    if np.any(counts > 1):
        key = keys[first[np.flatnonzero(counts > 1)[0]]]
        rows = np.flatnonzero((keys == key).all(axis=1))
        if component is not None:
            raise ValueError(
                f"{cell_at(label, int(rows[1]), 'component')}: expected one row per component of a track, "
                f"frame{'' if hyp is None else ' and hypothesis'}, got component {key[-1]} of id {key[-2]} "
                f"again (also on row {rows[0] + 1})"
            )
        raise ValueError(
            f"{cell_at(label, int(rows[1]), 'id')}: expected one row per id and frame"
            f"{'' if hyp is None else ' and hypothesis'}, got id {key[-1]} again (also on row {rows[0] + 1})"
        )


def validate_truth(source, state=DEFAULT_STATE, name: str = "truth") -> TruthTable:
    """Read and validate a truth table (path or DataFrame): frame, id, state columns."""
    df, label = read_table(source, name)
    names = check_state_names(state)
    require_columns(df, ["frame", "id", *names], label)
    frame = integer_column(df, "frame", label)
    ids = integer_column(df, "id", label)
    states = np.stack([float_column(df, s, label) for s in names], axis=1)
    check_state_magnitude(states, names, label)
    _unique_ids(frame, ids, None, label)
    ignored = tuple(str(c) for c in df.columns if c not in ("frame", "id", *names))
    track_only = [c for c in ignored if c in TRACK_ONLY_COLUMNS or c.startswith(("var_", "cov_"))]
    if track_only:
        warnings.warn(
            f"{label}: the truth has the tracks-table column(s) {', '.join(track_only)}: is it a tracks file "
            "given as the truth? They are ignored (a truth is frame, id and the state columns)",
            UserWarning,
            stacklevel=2,
        )
    return TruthTable(frame, ids, states, names, label, ignored)


#: Columns of a tracks table that a truth table never needs (with every ``var_*`` and ``cov_*``).
TRACK_ONLY_COLUMNS = frozenset({"r", "score", "hypothesis", "weight", "component", "component_weight"})


def frame_runs(frames, limit: int = 6) -> str:
    """Sorted distinct frames as runs, e.g. ``"0..11, 15, 20..22"`` (at most ``limit`` runs, then ``...``)."""
    f = np.unique(np.asarray(frames, dtype=np.int64))
    if f.size == 0:
        return "none"
    cut = np.flatnonzero(np.diff(f) != 1) + 1
    runs = [(int(a[0]), int(a[-1])) for a in np.split(f, cut)]
    text = [f"{a}..{b}" if b > a else f"{a}" for a, b in runs[:limit]]
    return ", ".join(text) + (
        f", ... ({len(runs) - limit} more run{'' if len(runs) - limit == 1 else 's'})"
        if len(runs) > limit
        else ""
    )


def frame_mismatch(tracks: TrackTable, truth: TruthTable) -> str | None:
    """What differs between the frames of the two tables (counts and ranges), or None if they are the same."""
    only_tracks = np.setdiff1d(tracks.frame, truth.frame)
    only_truth = np.setdiff1d(truth.frame, tracks.frame)
    if only_tracks.size == 0 and only_truth.size == 0:
        return None
    parts = []
    for only, what in ((only_tracks, "tracks but no truth"), (only_truth, "truth but no tracks")):
        if only.size:
            s = "" if only.size == 1 else "s"
            parts.append(
                f"{only.size} frame{s} {'has' if only.size == 1 else 'have'} {what} ({frame_runs(only)})"
            )
    return "; ".join(parts)


def frame_list(tracks: TrackTable, truth: TruthTable, frames=None) -> np.ndarray:
    """The frames to score: a list (every row's frame must be in it), ``"union"``, or None.

    With None both tables must have rows in the same frames (then those are
    scored): a frame present in only one table is refused, named with the
    counts and ranges, since an off-by-one frame numbering (tracks 0..59,
    truth 1..60) would otherwise be scored without a word. Frames that are
    meant (a tracker silent at first, a scene without objects) are said
    with ``frames``: the list, or ``"union"`` for every frame of either table.
    """
    if isinstance(frames, str):
        if frames != "union":
            raise ValueError(f"frames: expected a list of integers, 'union' or None, got {frames!r}")
        return np.union1d(tracks.frame, truth.frame)
    if frames is None:
        mismatch = frame_mismatch(tracks, truth)
        if mismatch is not None:
            union = np.union1d(tracks.frame, truth.frame)
            raise ValueError(
                f"{tracks.label}, {truth.label}: the tables cover different frames: {mismatch}. An "
                "off-by-one frame numbering would be scored silently; if these frames are meant (a "
                "tracker silent at first, a scene without objects), say which frames count: "
                f"frames='union' or a list (--frames), e.g. all of them: {frame_runs(union)}"
            )
        return np.union1d(tracks.frame, truth.frame)
    out = np.asarray(frames)
    if out.ndim != 1 or (out.size and not np.issubdtype(out.dtype, np.integer)):
        raise ValueError(f"frames: expected a list of integers, got {frames!r}")
    if np.unique(out).size != out.size:
        raise ValueError(f"frames: expected distinct frames, got {frames!r}")
    for table in (tracks, truth):
        outside = ~np.isin(table.frame, out)
        if outside.any():
            i = int(np.flatnonzero(outside)[0])
            raise ValueError(
                f"{cell_at(table.label, i, 'frame')}: frame {table.frame[i]} is not among --frames; "
                "a row outside the scored frames would be dropped"
            )
    return np.sort(out.astype(np.int64))


def _split(frame: np.ndarray, frames: np.ndarray) -> list[np.ndarray]:
    """Row indices of each frame in ``frames`` (stable order)."""
    order, lo, hi = _frame_bounds(frame, frames)
    return [order[a:b] for a, b in zip(lo, hi, strict=True)]


def truth_sets(truth: TruthTable, frames: np.ndarray) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Per frame: truth states (n_k, d) and ids (n_k,); empty frames give (0, d) and (0,)."""
    rows = _split(truth.frame, frames)
    return [truth.states[i] for i in rows], [truth.ids[i] for i in rows]


def _frame_bounds(frame: np.ndarray, frames: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(order (N,), lo (K,), hi (K,)): the rows of ``frames[k]`` are ``order[lo[k]:hi[k]]``, stably."""
    order = np.argsort(frame, kind="stable")
    ordered = frame[order]
    return (
        order,
        np.searchsorted(ordered, frames, side="left"),
        np.searchsorted(ordered, frames, side="right"),
    )


#: Rows checked and factorised together while iterating a plain table (:meth:`FrameDensities.__iter__`):
#: a few MB of temporary arrays at most, whatever the table's size.
BLOCK_ROWS = 1 << 14


@dataclass(frozen=True, eq=False)
class FrameDensities(Sequence):
    """One PMBM per frame of a validated tracks table, each built when it is asked for.

    A sequence of K densities (``len``, indexing, iteration) that holds only
    the table, its r (N,) and covariances (N, d, d) and the row bounds of
    each frame (``order`` (N,), ``lo`` (K,), ``hi`` (K,)): the memory of
    the table, not of K density objects (about 2.5 kB each, so 2.5 GB for a
    million frames). Iterating builds each frame's density once; indexing
    builds it again each time.

    A plain table (no ``hypothesis``, no ``component``) has the rows of
    consecutive frames, up to :data:`BLOCK_ROWS` at a time, checked and
    factorised together (:func:`checked_rows`); each frame takes its slice,
    equal bit for bit to the frame built alone through the public
    constructors. A block some row of which the checks refuse is built frame
    by frame through the constructors, which name the row at its frame.
    """

    tracks: TrackTable
    r: np.ndarray
    covs: np.ndarray
    ppp: PPP | None
    order: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    placeholder: np.ndarray
    group: np.ndarray

    def __len__(self) -> int:
        return int(self.lo.size)

    def __getitem__(self, k):
        if isinstance(k, slice):
            return [self[i] for i in range(*k.indices(len(self)))]
        k = int(k)
        if k < 0:
            k += len(self)
        if not 0 <= k < len(self):
            raise IndexError(f"frame index {k} out of range for {len(self)} frames")
        if self._plain:
            (density,) = self._block(k, k + 1, int(self.lo[k]), int(self.hi[k]))
            return density
        return self._density(self.order[self.lo[k] : self.hi[k]])

    def __iter__(self):
        if not self._plain:
            for a, b in zip(self.lo, self.hi, strict=True):
                yield self._density(self.order[a:b])
            return
        for k0, k1, a, b in _blocks(self.lo, self.hi, BLOCK_ROWS):
            yield from self._block(k0, k1, a, b)

    @property
    def _plain(self) -> bool:
        """One hypothesis per frame and one Gaussian per row: frames can share their rows' checks."""
        return self.tracks.hypothesis is None and self.tracks.component is None

    def _block(self, k0: int, k1: int, a: int, b: int):
        """Frames k0..k1-1 of a plain table, whose rows all lie in ``order[a:b]``, in turn."""
        checked = checked_rows(self.tracks, self.order[a:b], self.r, self.covs)
        for k in range(k0, k1):
            if checked is None:  # some row is refused: each frame through the constructors
                yield self._density(self.order[self.lo[k] : self.hi[k]])
                continue
            at = np.arange(self.lo[k] - a, self.hi[k] - a)
            labels = None if checked.labels is None else checked.labels[at]
            mb = trusted(
                MultiBernoulli, r=checked.r[at], densities=checked.gaussians.subset(at), labels=labels
            )
            yield PMBM(self.ppp, (mb,), np.ones(1))

    def _density(self, rows: np.ndarray) -> PMBM:
        tracks, r, covs = self.tracks, self.r, self.covs
        d = len(tracks.state)
        hyps, weights = _frame_hypotheses(tracks, rows, self.placeholder)
        mbs = []
        for hrows in hyps:
            if tracks.component is not None:
                mbs.append(_mixture_bernoullis(tracks, hrows, self.group, r, covs))
                continue
            mbs.append(
                MultiBernoulli(
                    r[hrows],
                    Gaussians(tracks.means[hrows], covs[hrows])
                    if hrows.size
                    else Gaussians(np.empty((0, d)), np.empty((0, d, d))),
                    None if tracks.ids is None else tracks.ids[hrows],
                )
            )
        return PMBM(self.ppp, tuple(mbs), weights)


def _blocks(lo: np.ndarray, hi: np.ndarray, limit: int):
    """``(k0, k1, a, b)`` in turn: frames k0..k1-1 (their rows ``order[lo[k]:hi[k]]``) all within
    ``order[a:b]``, at most ``limit`` rows (or one frame), each frame in exactly one block."""
    lo, hi = lo.tolist(), hi.tolist()
    k, K = 0, len(lo)
    while k < K:
        a, b, j = lo[k], hi[k], k + 1
        while j < K and lo[j] >= b and hi[j] - a <= limit:
            b, j = hi[j], j + 1
        yield k, j, a, b
        k = j


def densities(
    tracks: TrackTable,
    frames: np.ndarray,
    r: np.ndarray,
    covs: np.ndarray,
    ppp: PPP | None,
) -> FrameDensities:
    """One PMBM per frame from a validated table, its r (N,) and covariances (N, d, d).

    Rows of one frame and hypothesis form one multi-Bernoulli (its labels the
    ids); ``ppp`` (undetected objects) is shared by every frame; a frame
    with no row is a single hypothesis with no Bernoulli. The densities are
    built as they are read (:class:`FrameDensities`), so that scoring a
    table of millions of rows holds one frame's density at a time.
    """
    order, lo, hi = _frame_bounds(tracks.frame, np.asarray(frames))
    return FrameDensities(tracks, r, covs, ppp, order, lo, hi, tracks.placeholder, tracks.track_groups())


@dataclass(frozen=True, eq=False)
class CheckedRows:
    """Rows of a tracks table, validated and factorised together.

    Attributes
    ----------
    gaussians : Gaussians with B members
        Row i's Gaussian (the symmetrised covariance and its factor, as the
        public :class:`Gaussians` constructor makes them).
    r : (B,) float in [0, 1]
    labels : (B,) int64 or None
        The ids, as :class:`MultiBernoulli` stores its labels.
    """

    gaussians: Gaussians
    r: np.ndarray
    labels: np.ndarray | None


def checked_rows(tracks: TrackTable, rows: np.ndarray, r: np.ndarray, covs: np.ndarray) -> CheckedRows | None:
    """Rows ``rows`` (B,) of a table with existence ``r`` and covariances ``covs`` (N, d, d), checked as
    the public constructors check a frame's rows (:class:`Gaussians`, :class:`MultiBernoulli`).

    None when some row would fail those checks. Each row's numbers are
    computed on their own (the factorisation is per matrix), so any subset
    of the result equals those rows checked and built alone, bit for bit.
    """
    d = len(tracks.state)
    try:
        means = v.points(tracks.means[rows], "means", dim=d) if rows.size else np.empty((0, d))
        sym, _ = v.covariances(covs[rows], "covs", rows.size, d)
        r_rows = v.probabilities(r[rows], "r")
        labels = None if tracks.ids is None else v.labels(tracks.ids[rows], rows.size)
    except (TypeError, ValueError):
        return None
    return CheckedRows(Gaussians._trusted(means, sym), r_rows, labels)


def _mixture_bernoullis(tracks: TrackTable, hrows: np.ndarray, group: np.ndarray, r, covs) -> MultiBernoulli:
    """The Bernoullis of one frame and hypothesis of a mixture table: one per track (row group), in
    the order of their first rows, each with its rows as components in ``component`` order."""
    key = group[hrows]
    order = np.lexsort((tracks.component[hrows], key))
    rows = hrows[order]
    _, first, counts = np.unique(key[order], return_index=True, return_counts=True)
    offsets = np.zeros(counts.size + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    dens = GaussianMixtures(tracks.component_weight[rows], tracks.means[rows], covs[rows], offsets)
    return MultiBernoulli(r[rows[first]], dens, tracks.ids[rows[first]])


def _frame_hypotheses(tracks: TrackTable, rows: np.ndarray, placeholder: np.ndarray):
    """(row indices per hypothesis, hypothesis weights) of one frame."""
    if tracks.hypothesis is None or rows.size == 0:
        return [rows], np.ones(1)
    hs, first = np.unique(tracks.hypothesis[rows], return_index=True)
    groups = [rows[(tracks.hypothesis[rows] == h) & ~placeholder[rows]] for h in hs]
    return groups, tracks.weight[rows[first]]
