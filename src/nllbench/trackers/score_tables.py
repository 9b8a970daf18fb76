"""Score a tracker's tables in memory: the NLL and every measure of ``evaluate`` (:func:`score`).

The per-frame densities (:mod:`nllbench.trackers.build`) go through
:func:`nllbench.measures.run.evaluate.evaluate_run`, the same code as ``nllbench
evaluate``; :class:`ScoreResult` holds its metrics, the frames and the
provenance of every fill-in.
"""

from __future__ import annotations

import json
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from nllbench.engine.transforms import POSITION
from nllbench.measures.names import NLL_TERMS, PROPER_STEP
from nllbench.measures.run.evaluate import EvaluationSettings, RunMetrics, evaluate_run
from nllbench.measures.run.presets import preset_settings
from nllbench.measures.scores.proper_run import PROPER_MEASURES
from nllbench.measures.selection import BOX_MEASURES, left_out, parse_measures
from nllbench.trackers.build import build_densities
from nllbench.trackers.checks import (
    IDENTITY_FRAME_COLUMNS,
    NA,
    fov_check,
    not_applicable,
    unit_check,
    unit_values,
)
from nllbench.trackers.fillins import FillIns
from nllbench.trackers.formats import ReadOptions, read_inputs
from nllbench.trackers.inputs import read_tables
from nllbench.trackers.tracks import DEFAULT_STATE, TrackTable, TruthTable, truth_sets

#: The warning of ``trajectory`` asked of a table without track ids: the trajectory NLL is n/a.
TRAJECTORY_NO_ID_WARNING = (
    "{label}: no column 'id': the trajectory NLL scores one trajectory per track id; it is not "
    "applicable and reported as n/a"
)


@dataclass(frozen=True)
class ScoreResult:
    """Metrics of a scored tracks table.

    metrics : the :class:`RunMetrics` of ``evaluate`` (step k is ``frames[k]``);
    frames : (K,) int; fill_ins : provenance of every fill-in;
    theorem_fov : (low, high) position box of the Theorem 1 check;
    not_applicable : summary keys of the measures that do not apply to the input
        (identity measures of a table without ``id``; MOTP when nothing is matched):
        :data:`~nllbench.trackers.checks.NA` in :meth:`summary`, never a number;
    units : the distance settings used (cutoff, threshold, hota_threshold,
        tgospa_gamma), which of them are defaults, and the data's scale
        (:func:`~nllbench.trackers.checks.unit_check`);
    outside_fov : truth objects outside the undetected-object fill-in's box
        (``{"truth_outside": n, "frames": k}``; None without that fill-in);
    boxes : MOTChallenge box measures (:class:`~nllbench.measures.boxes.BoxMeasures`,
        TrackEval's fields on IoU) that replace HOTA, CLEAR and Identity, or None.
    """

    metrics: RunMetrics
    frames: np.ndarray
    fill_ins: dict
    theorem_fov: tuple[list[float], list[float]] = field(default=((), ()))
    not_applicable: tuple[str, ...] = ()
    units: dict = field(default_factory=dict)
    outside_fov: dict | None = None
    boxes: object | None = None

    def summary(self) -> dict:
        """The run-level row of ``evaluate`` with the measures that do not apply as ``n/a``.

        Also ``not_applicable`` (their keys, space-separated; empty when every
        measure applies) and the distance settings used: ``cutoff``,
        ``threshold``, ``hota_threshold``, ``tgospa_gamma``.
        """
        row = self.metrics.summary()
        if self.boxes is not None:  # HOTA, CLEAR and Identity as TrackEval (MOTChallenge files)
            from nllbench.trackers.motchallenge import box_summary

            row.update(box_summary(self.boxes))
        for key in self.not_applicable:
            if key in row or key == "trajectory_nll":  # no trajectory NLL was computed without ids
                row[key] = NA
        run = self.metrics.trajectory
        if run is not None and run.exact is None and run.exact_note:  # asked, intractable: never guessed
            row["trajectory_nll_exact"] = NA
        row["not_applicable"] = " ".join(self.not_applicable)
        row.update({k: self.units[k] for k in unit_values(self.metrics.settings) if k in self.units})
        return row

    def per_frame(self):
        """One row per frame: frame, nll, nll_lower (largest Q), per-Q values, terms and measures.

        Without track ids the identity column ``clear_switches`` is left out.
        """
        import pandas as pd

        m = self.metrics
        cols: dict = {"frame": self.frames}
        j = len(m.qs) - 1
        cols["nll"] = m.nll["value"][:, j]
        cols["nll_lower"] = m.nll["lower"][:, j]
        cols["nll_upper"] = m.nll["upper"][:, j]
        for term in NLL_TERMS:
            cols[f"nll_{term}"] = m.nll[term][:, j]
        for i, q in enumerate(m.qs):
            cols[f"nll_q{q}"] = m.nll["value"][:, i]
            cols[f"nll_lower_q{q}"] = m.nll["lower"][:, i]
        cols.update(
            gospa=m.gospa,
            gospa_localization=m.gospa_localization,
            gospa_missed=m.gospa_missed,
            gospa_false=m.gospa_false,
            ospa=m.ospa,
            n_truth=m.n_truth,
            n_estimates=m.n_estimates,
            clear_matches=m.clear.frame_matches,
            clear_misses=m.clear.frame_misses,
            clear_false_positives=m.clear.frame_false_positives,
            clear_switches=m.clear.frame_switches,
        )
        if m.proper is not None:  # the proper scores per frame (docs/scores.md)
            values = (m.proper.energy, m.proper.energy_se, m.proper.intensity, m.proper.rps)
            cols.update({k: v for k, v in zip(PROPER_STEP, values, strict=True) if v is not None})
        if m.pgospa is not None:  # P-GOSPA per frame (docs/pgospa.md)
            cols.update(pgospa=m.pgospa.value, pgospa_localization=m.pgospa.localization)
            cols.update(pgospa_existence_mismatch=m.pgospa.existence_mismatch)
            cols.update(pgospa_missed=m.pgospa.missed, pgospa_false=m.pgospa.false)
        if "switches" in self.not_applicable:
            for name in IDENTITY_FRAME_COLUMNS:
                del cols[name]
        return pd.DataFrame(cols)


@dataclass(frozen=True, eq=False)
class ReportedFrames(Sequence):
    """The per-frame densities of a run, calling ``report(done, total, seconds)`` as they are consumed.

    Iterating yields ``frames[k]`` and, when the next one is asked for (the
    previous frame evaluated), reports ``k + 1`` frames done of ``len(frames)``
    and the seconds since the iteration began; the last call reports every frame.
    Indexing is the wrapped sequence's, without reports.
    """

    frames: Sequence
    report: Callable[[int, int, float], None]

    def __len__(self) -> int:
        return len(self.frames)

    def __getitem__(self, k):
        return self.frames[k]

    def __iter__(self):
        total, start = len(self.frames), time.perf_counter()
        for k, density in enumerate(self.frames):
            yield density
            self.report(k + 1, total, time.perf_counter() - start)


def _theorem_fov(tracks: TrackTable, truth: TruthTable, fill: FillIns):
    """Position box of the Theorem 1 check: the ``fov`` box, else the data's bounding box.

    (:func:`score` uses a scenario-file truth's field of view when no ``fov`` is given.)
    """
    if fill.fov_low is not None and fill.fov_high is not None:
        return [float(x) for x in np.asarray(fill.fov_low)[list(POSITION)]], [
            float(x) for x in np.asarray(fill.fov_high)[list(POSITION)]
        ]
    pts = np.concatenate(
        [tracks.means[~tracks.placeholder][:, list(POSITION)], truth.states[:, list(POSITION)]]
    )
    if pts.shape[0] == 0:
        return [0.0, 0.0], [1.0, 1.0]
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    hi = np.where(hi > lo, hi, lo + 1.0)  # a degenerate box would have no volume
    return lo.tolist(), hi.tolist()


def score(
    tracks,
    truth,
    *,
    state=DEFAULT_STATE,
    frames=None,
    fill: FillIns = FillIns(),
    settings: EvaluationSettings = EvaluationSettings(),
    preset: str | None = None,
    trajectory=None,
    seed: int = 0,
    progress: Callable[[int, int, float], None] | None = None,
    read=None,
    measures=None,
    replaced=frozenset(),
) -> ScoreResult:
    """The NLL (per frame and Q, with bounds and terms) and every measure of ``evaluate``.

    Parameters
    ----------
    tracks, truth : path, pandas DataFrame, or a validated table; a path in any input format
        (:mod:`nllbench.trackers.formats`): a table (.csv / .parquet), for the truth a scenario
        file (.nc; its steps are then the frames), MOTChallenge text (.txt: a result with its
        ground truth is scored with HOTA, CLEAR and Identity on the boxes' IoU, as TrackEval),
        Stone Soup YAML (.yaml / .yml)
    state : state column names; the first two are the position (GOSPA, ...)
    frames : frames to score: a list of integers (a row in another frame is an error), ``"union"``
        (every frame of either table), or None: both tables' frames, which must then be the same
        (a frame present in only one table is refused, named; see ``docs/score.md``)
    fill : the fill-ins (:class:`FillIns`)
    settings : as for ``nllbench evaluate`` (Q list, marginal, cut-offs, proper scores, ...)
    preset : "av2", "nuscenes" or "mahalanobis": ``settings`` with that convention's
        distance and thresholds (:func:`nllbench.measures.run.presets.preset_settings`)
    trajectory : :class:`~nllbench.trackers.trajectory_options.TrajectoryOptions` or None: also the
        trajectory NLL on the same frames (``metrics.trajectory``; ``docs/trajectory.md``)
    seed : the run's seed: frame k's energy-score samples come from ``numpy.random.default_rng([seed, k])``
        (k counts the scored frames from 0)
    progress : None, or ``progress(done, total, seconds)`` called after each frame's evaluation
        (:class:`ReportedFrames`; ``nllbench score`` prints a line from it now and then)
    read : :class:`~nllbench.trackers.formats.ReadOptions` of the paths, or None (the defaults,
        with ``state``)
    measures : None (the default set), or the names of the measures to compute (comma-separated text
        or an iterable; :mod:`nllbench.measures.selection`): the required measures and any optional
        ones (``energy_score``, ``intensity_score``, ``cardinality_rps``, ``pgospa``, ``ptgospa``,
        ``trajectory_nll``); an optional measure left out is not computed. Unknown names are refused,
        listing the known ones.
    replaced : names of measures the caller replaces (not computed here; their results are None):
        :func:`~nllbench.trackers.metrics_file.score_file` replaces ``hota``, ``clear_mot`` and ``identity``
        by TrackEval's on MOTChallenge boxes

    Notes
    -----
    Memory: the tables' columns (a few hundred bytes per row), the per-frame
    densities built one at a time as they are evaluated
    (:class:`~nllbench.trackers.tracks.FrameDensities`), and what the run
    keeps per frame for its per-frame values and the identity measures over
    the whole run (``docs/score.md``, "Large tables" gives the measured peak).

    Returns
    -------
    ScoreResult
    """
    if preset is not None:
        settings = preset_settings(preset, settings)
    (tracks, truth), boxes = read_inputs(tracks, truth, read or ReadOptions(state=tuple(state)))
    # MOTChallenge files: TrackEval's HOTA, CLEAR and Identity on the boxes replace the point estimates'
    replaced = frozenset(replaced) | (BOX_MEASURES if boxes is not None else frozenset())
    skip = measures_left_out(measures, settings, trajectory) | frozenset(replaced)
    t, y, fr, scene_fov = read_tables(tracks, truth, state, frames, fill)
    if fr.size == 0:
        raise ValueError(f"{t.label}, {y.label}: no frames to score (both tables are empty); give frames")
    dens, prov = build_densities(t, fr, fill)
    if y.ignored:
        prov["ignored_truth_columns"] = list(y.ignored)
    outside = fov_check(y, fill, fr)
    units = unit_check(t, y, fr, settings)
    X, ids = truth_sets(y, fr)
    lo, hi = _theorem_fov(t, y, fill) if scene_fov is None or fill.fov_low is not None else scene_fov
    if progress is not None:
        dens = ReportedFrames(dens, progress)
    metrics = evaluate_run(dens, X, ids, lo, hi, settings, seed=seed, skip=skip)
    na = not_applicable(t, metrics)
    if trajectory is not None and t.ids is None:
        warnings.warn(TRAJECTORY_NO_ID_WARNING.format(label=t.label), UserWarning, stacklevel=2)
        na += ("trajectory_nll",)
    elif trajectory is not None:
        cpu0 = time.process_time()
        run = trajectory.run(t, y, frames=fr.tolist(), state=state, fill=fill, settings=settings)
        cpu = {**metrics.cpu_seconds, "trajectory_nll": time.process_time() - cpu0}
        metrics = replace(metrics, trajectory=run, cpu_seconds=cpu)
        keys = ("undetected_trajectories", "unlisted_presence", "mixture", "window", "fitted")
        prov["trajectory"] = {k: run.fill_ins[k] for k in keys if k in run.fill_ins}
    prov["theorem1_fov"] = {"low": lo, "high": hi}
    result = ScoreResult(metrics, fr, prov, (lo, hi), na, units, outside)
    if boxes is None:
        return result
    from nllbench.trackers.motchallenge import with_box_measures

    return with_box_measures(result, boxes)


def measures_left_out(measures, settings: EvaluationSettings, trajectory=None) -> frozenset[str]:
    """The measures :func:`score` leaves out under the selection ``measures`` (None: none).

    Refuses a selection that leaves out a required measure or the NLL, one that names a proper score
    when ``settings.proper_scores`` is off, and one without ``trajectory_nll`` when ``trajectory``
    options ask for it (each naming ``measures``).
    """
    if measures is None:
        return frozenset()
    selected = parse_measures(measures)
    skip = left_out(selected)
    asked = sorted(selected & set(PROPER_MEASURES))
    if asked and not settings.proper_scores:
        raise ValueError(
            f"measures: {', '.join(asked)} selected, but the proper scores are off (proper_scores=False, "
            "--no-proper-scores)"
        )
    if trajectory is not None and "trajectory_nll" in skip:
        raise ValueError("measures: trajectory_nll left out, but the trajectory NLL's options ask for it")
    return skip


def score_attrs(result: ScoreResult, tracker: str = "", extra: dict | None = None) -> dict:
    """Metrics-file attributes: tracker name as ``filter``, frames and fill-ins (JSON).

    Also ``not_applicable``: a JSON list of the run-level measures that do not
    apply (their variables still hold what was computed, which is no measure
    of the tracker: read them as n/a), and ``units``: the distance settings
    used and the data's scale (JSON); ``truth_outside_fov``: the number of truth
    objects outside the undetected-object fill-in's box (with that fill-in).
    """
    attrs = {
        "filter": tracker,
        "frames": json.dumps(result.frames.tolist()),
        "fill_ins": result.fill_ins,
        "not_applicable": json.dumps(list(result.not_applicable)),
        "units": result.units,
    }
    if result.outside_fov is not None:
        attrs["truth_outside_fov"] = result.outside_fov["truth_outside"]
    attrs.update(extra or {})
    return attrs
