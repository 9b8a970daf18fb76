"""Score a tracker's tables in memory: the NLL and every measure of ``evaluate`` (:func:`score`).

The per-frame densities (:mod:`nllbench.trackers.build`) go through
:func:`nllbench.measures.evaluate.evaluate_run`, the same code as ``nllbench
evaluate``; :class:`ScoreResult` holds its metrics, the frames and the
provenance of every fill-in.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np

from nllbench.engine.transforms import POSITION
from nllbench.measures.evaluate import EvaluationSettings, RunMetrics, evaluate_run
from nllbench.measures.names import NLL_TERMS
from nllbench.trackers.build import build_densities
from nllbench.trackers.fillins import FillIns
from nllbench.trackers.inputs import read_tables
from nllbench.trackers.tracks import DEFAULT_STATE, TrackTable, TruthTable, truth_sets


@dataclass(frozen=True)
class ScoreResult:
    """Metrics of a scored tracks table.

    metrics : the :class:`RunMetrics` of ``evaluate`` (step k is ``frames[k]``);
    frames : (K,) int; fill_ins : provenance of every fill-in;
    theorem_fov : (low, high) position box of the Theorem 1 check.
    """

    metrics: RunMetrics
    frames: np.ndarray
    fill_ins: dict
    theorem_fov: tuple[list[float], list[float]] = field(default=((), ()))

    def summary(self) -> dict:
        return self.metrics.summary()

    def per_frame(self):
        """One row per frame: frame, nll, nll_lower (largest Q), per-Q values, terms and measures."""
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
        return pd.DataFrame(cols)


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
) -> ScoreResult:
    """The NLL (per frame and Q, with bounds and terms) and every measure of ``evaluate``.

    Parameters
    ----------
    tracks, truth : path (.csv / .parquet), pandas DataFrame, or a validated table;
        the truth may also be a scenario file (.nc; its steps are then the frames)
    state : state column names; the first two are the position (GOSPA, ...)
    frames : frames to score (default: the union of both tables' frames)
    fill : the fill-ins (:class:`FillIns`)
    settings : as for ``nllbench evaluate`` (Q list, marginal, cut-offs, ...)

    Returns
    -------
    ScoreResult
    """
    t, y, fr, scene_fov = read_tables(tracks, truth, state, frames)
    if fr.size == 0:
        raise ValueError(f"{t.label}, {y.label}: no frames to score (both tables are empty); give frames")
    dens, prov = build_densities(t, fr, fill)
    if y.ignored:
        prov["ignored_truth_columns"] = list(y.ignored)
    X, ids = truth_sets(y, fr)
    lo, hi = _theorem_fov(t, y, fill) if scene_fov is None or fill.fov_low is not None else scene_fov
    metrics = evaluate_run(dens, X, ids, lo, hi, settings)
    prov["theorem1_fov"] = {"low": lo, "high": hi}
    return ScoreResult(metrics, fr, prov, (lo, hi))


def score_attrs(result: ScoreResult, tracker: str = "", extra: dict | None = None) -> dict:
    """Metrics-file attributes: tracker name as ``filter``, frames and fill-ins (JSON)."""
    attrs = {"filter": tracker, "frames": json.dumps(result.frames.tolist()), "fill_ins": result.fill_ins}
    attrs.update(extra or {})
    return attrs
