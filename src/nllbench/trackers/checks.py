"""What a scoring run checks about its inputs before it reports numbers, and how it says so.

* Measures that do not apply (:func:`not_applicable`): the identity measures
  of a tracks table without ``id`` (MOTA, ID switches, IDF1, trajectory
  GOSPA, HOTA and its AssA), and MOTP when nothing is matched. Their summary
  value is :data:`NA` (prints ``n/a``), never a number.
* Unit-dependent settings (:func:`unit_check`): the GOSPA / OSPA / T-GOSPA
  cut-off, the CLEAR MOT / IDF1 matching threshold, HOTA's threshold and the
  T-GOSPA switch cost are distances in the data's units; their defaults (2)
  are in the reference scenarios' units. The values used are recorded, and a
  default far from the data's scale is warned of (the rule is in
  ``docs/score.md``).
* Truth outside the box of the undetected-object fill-in (:func:`fov_check`).

(Frames present in only one table are refused by
:func:`nllbench.trackers.tracks.frame_list`.)
"""

from __future__ import annotations

import warnings

import numpy as np

from nllbench.engine.transforms import POSITION
from nllbench.measures.declarations import declared_scores
from nllbench.trackers.tracks import TrackTable, TruthTable

#: Summary keys of the identity measures: not applicable to a tracks table without ``id``.
IDENTITY_MEASURES = tuple(s.name for s in declared_scores() if s.needs_identities)
#: Per-frame columns of the identity measures (left out of the per-frame table without ``id``).
IDENTITY_FRAME_COLUMNS = ("clear_switches",)


class NotApplicable(str):
    """The summary value of a measure that does not apply to the input: the text ``n/a``.

    A string, so that arithmetic on it fails loudly and a CSV cell reads
    ``n/a`` (which pandas reads back as missing); formatted with any numeric
    format specification (``f"{x:.4f}"``) it is still ``n/a``.
    """

    def __new__(cls):
        return super().__new__(cls, "n/a")

    def __format__(self, spec: str) -> str:
        try:
            return format(str(self), spec)
        except ValueError:  # a numeric spec such as ".4f"
            return str(self)

    def __repr__(self) -> str:
        return "NA"

    def __reduce__(self):
        return (NotApplicable, ())  # pickled and copied as itself


#: The one :class:`NotApplicable` value.
NA = NotApplicable()

NO_ID_WARNING = (
    "{label}: no column 'id': the identity measures (MOTA, ID switches, IDF1, trajectory GOSPA, HOTA and "
    "its AssA, PT-GOSPA) are not applicable and reported as n/a; give track ids to have them"
)


def not_applicable(tracks: TrackTable, metrics) -> tuple[str, ...]:
    """Summary keys of the measures that do not apply: identity measures without ``id``, MOTP with no match.

    Warns once when the table has no ``id``.
    """
    out: list[str] = []
    if tracks.ids is None:
        warnings.warn(NO_ID_WARNING.format(label=tracks.label), UserWarning, stacklevel=2)
        out += IDENTITY_MEASURES
    if metrics.clear is not None and metrics.clear.matches == 0:  # (None: replaced by the caller)
        out.append("motp")  # the mean distance of no matched pair is undefined
    return tuple(out)


#: The default of every unit-dependent setting, in the reference scenarios' units.
DEFAULT_DISTANCE = 2.0


def unit_values(settings) -> dict[str, float]:
    """The distance settings used: cut-off, threshold, HOTA threshold and T-GOSPA switch cost (resolved)."""
    return {
        "cutoff": float(settings.cutoff),
        "threshold": float(settings.threshold),
        "hota_threshold": float(settings.hota_threshold or settings.threshold),
        "tgospa_gamma": float(settings.tgospa_gamma or settings.cutoff),
    }


def data_scale(tracks: TrackTable, truth: TruthTable, frames: np.ndarray) -> dict:
    """The data's distance scales on position (``None`` where there is nothing to measure).

    ``truth_spread``: the standard deviation of the truth positions over the
    scored frames, the larger of the two axes (None with fewer than two truth
    objects, whose motion alone is no scale of the scene, or all at one
    point). ``track_distance_q25``: the lower quartile, over truth objects in
    frames with a track, of the distance to the nearest track mean of the
    frame (the localisation error of the better-tracked objects; misses do
    not move it until three quarters of the objects are missed).
    """
    pos = list(POSITION)
    live = ~tracks.placeholder
    scored = np.isin(truth.frame, frames)
    Y_all = truth.states[scored][:, pos]
    several = np.unique(truth.ids[scored]).size > 1
    spread = float(Y_all.std(axis=0).max()) if several else 0.0
    nearest = []
    t_order = np.argsort(tracks.frame, kind="stable")
    y_order = np.argsort(truth.frame, kind="stable")
    t_frames, y_frames = tracks.frame[t_order], truth.frame[y_order]
    for f in frames.tolist():
        yi = y_order[np.searchsorted(y_frames, f, "left") : np.searchsorted(y_frames, f, "right")]
        ti = t_order[np.searchsorted(t_frames, f, "left") : np.searchsorted(t_frames, f, "right")]
        ti = ti[live[ti]]
        if yi.size and ti.size:
            Y, M = truth.states[yi][:, pos], tracks.means[ti][:, pos]
            nearest.append(np.linalg.norm(Y[:, None, :] - M[None, :, :], axis=2).min(axis=1))
    return {
        "truth_spread": spread if spread > 0 else None,
        "track_distance_q25": float(np.quantile(np.concatenate(nearest), 0.25)) if nearest else None,
    }


#: A default is "far" below the data's scale when the whole truth's spread is this many times smaller.
SPREAD_FACTOR = 10.0


def unit_check(tracks: TrackTable, truth: TruthTable, frames: np.ndarray, settings) -> dict:
    """The distance settings used, which are defaults, the data's scale; warns when they disagree.

    ``settings``: an :class:`~nllbench.measures.run.evaluate.EvaluationSettings`, or a dict of the
    distance settings used (``{"threshold": 2.0}`` for the score calibration's matching).

    A setting equal to :data:`DEFAULT_DISTANCE` (or left None and resolved to
    one that is) counts as a default. Rule (``docs/score.md``): warn when a
    default is used and either three quarters of the truth objects have no
    track within it (``track_distance_q25`` above it: positions in larger
    units, e.g. pixels) or the truth's whole spread is :data:`SPREAD_FACTOR`
    times smaller (``truth_spread`` below 0.2: smaller units, e.g.
    kilometres, where one threshold covers the scene).
    """
    values = dict(settings) if isinstance(settings, dict) else unit_values(settings)
    defaults = [k for k, v in values.items() if v == DEFAULT_DISTANCE]  # (None resolved to its source)
    scale = data_scale(tracks, truth, frames)
    out = {**values, "defaults": defaults, **scale, "warned": None}
    if not defaults:
        return out
    near, spread = scale["track_distance_q25"], scale["truth_spread"]
    why = None
    if near is not None and near > DEFAULT_DISTANCE:
        why = (
            f"three quarters of the truth objects have no track within {DEFAULT_DISTANCE:g} (the lower "
            f"quartile of truth-to-nearest-track distances is {near:.3g})"
        )
    elif spread is not None and spread * SPREAD_FACTOR < DEFAULT_DISTANCE:
        why = (
            f"the truth positions spread over a standard deviation of {spread:.3g} only, "
            f"{SPREAD_FACTOR:g} times less than {DEFAULT_DISTANCE:g}"
        )
    if why is not None:
        names = ", ".join(f"{k}={values[k]:g}" for k in defaults)
        hint = (
            " and ".join(f"{k}=" for k in defaults)
            if isinstance(settings, dict)
            else "cutoff=, threshold= and hota_threshold= (--cutoff, --threshold)"
        )
        warnings.warn(
            f"{tracks.label}, {truth.label}: unit-dependent settings left at their default "
            f"{DEFAULT_DISTANCE:g} (the reference scenarios' units): {names}; but {why}. If the "
            f"positions are in other units (pixels, metres, ...), give {hint} in those units",
            UserWarning,
            stacklevel=2,
        )
        out["warned"] = why
    return out


def fov_check(truth: TruthTable, fill, frames: np.ndarray) -> dict | None:
    """Truth objects outside the box of the undetected-object fill-in: counted, and warned of.

    The uniform undetected-object intensity is zero outside its box, so such
    an object is explained by a track only: the frame's NLL is finite but
    enormous when the nearest track is far, and infinite when there is none.
    None when there is no such fill-in.
    """
    if fill.undetected_rate == 0:
        return None
    return outside_box(truth, fill.fov_low, fill.fov_high, frames)


def outside_box(truth: TruthTable, low, high, frames: np.ndarray) -> dict | None:
    """:func:`fov_check` for the box (low, high) of an undetected-object intensity (warns the same)."""
    lo, hi = np.asarray(low, dtype=float), np.asarray(high, dtype=float)
    if lo.shape != (truth.states.shape[1],):
        return None  # the box's dimension is refused when the densities are built
    scored = np.isin(truth.frame, frames)
    outside = scored & ~np.all((truth.states >= lo) & (truth.states <= hi), axis=1)
    n = int(outside.sum())
    record = {"truth_outside": n, "frames": int(np.unique(truth.frame[outside]).size)}
    if n:
        warnings.warn(
            f"{truth.label}: {n} truth object{'s' if n != 1 else ''} in {record['frames']} "
            f"frame{'s' if record['frames'] != 1 else ''} lie outside the fov box {lo.tolist()} .. "
            f"{hi.tolist()} of the undetected-object fill-in, where its intensity is 0: each is "
            "explained by a track only, so its frame's NLL is enormous (or infinite) when no track is "
            "near; widen the box to the scene",
            UserWarning,
            stacklevel=2,
        )
    return record
