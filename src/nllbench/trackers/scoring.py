"""Score any tracker's output table: the NLL and every measure of ``evaluate``, with explicit fill-ins.

Pinto et al. (IEEE SPL 2021, Sec. II) note that any tracker reporting a set
of predictions with state uncertainties and/or existence probabilities is a
PMBM with one hypothesis and zero Poisson intensity. A tracks table
(:mod:`nllbench.trackers.tracks`) is turned into that density per frame, and what the
tracker does not report is filled in, explicitly:

* undetected objects: a uniform Poisson intensity of total rate ``rate``
  over a box (``undetected_rate``, ``fov``), or the rate fitted by maximum
  likelihood on a calibration set (:func:`fit_undetected_rate`);
* missing covariances: ``default_std`` * I;
* missing existence: r from a ``score`` column through a logistic
  calibration fitted on a calibration set (:func:`fit_score_calibration`),
  or r = 1 (``existence_one``; any missed or false object then makes the NLL
  infinite, and a warning says so).

The densities then go through :func:`nllbench.measures.evaluate.evaluate_run`, the
same code as ``nllbench evaluate``, so the metrics file has the same layout.
"""

from __future__ import annotations

import json
import math
import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from scipy.optimize import minimize, minimize_scalar
from scipy.special import expit

from nllbench.engine.densities import PPP
from nllbench.engine.nll import nll_many
from nllbench.engine.transforms import POSITION, marginal
from nllbench.measures.evaluate import EvaluationSettings, RunMetrics, evaluate_run, probed
from nllbench.measures.metrics import gated_matching
from nllbench.measures.names import NLL_TERMS
from nllbench.trackers.tracks import (
    DEFAULT_STATE,
    TrackTable,
    TruthTable,
    densities,
    frame_list,
    truth_sets,
    validate_tracks,
    validate_truth,
)

EXISTENCE_ONE_WARNING = (
    "no existence probability (column 'r') and no score calibration: every track is given r = 1, "
    "so any missed or false object makes that frame's NLL infinite"
)


@dataclass(frozen=True)
class ScoreCalibration:
    """r = expit(intercept + slope * score), fitted by :func:`fit_score_calibration`."""

    intercept: float
    slope: float
    n_rows: int = 0
    n_detections: int = 0

    def __call__(self, score: np.ndarray) -> np.ndarray:
        return expit(self.intercept + self.slope * np.asarray(score, dtype=float))

    def provenance(self) -> dict:
        return {
            "kind": "logistic",
            "fitted_by": "maximum likelihood of detection outcomes",
            "intercept": self.intercept,
            "slope": self.slope,
            "n_rows": self.n_rows,
            "n_detections": self.n_detections,
        }


@dataclass(frozen=True)
class FillIns:
    """What is filled in for what the tracker does not report.

    undetected_rate : total rate of the uniform undetected-object PPP (0: none).
    fov_low, fov_high : (d,) box of that PPP in the state columns (None if rate is 0).
    default_std : std of the isotropic covariance used when the table has none.
    calibration : score -> r map, used when the table has a score column.
    existence_one : r = 1 when the table has neither r nor score.
    fitted_rate : how the rate was obtained (a dict from :func:`fit_undetected_rate`) or None.
    """

    undetected_rate: float = 0.0
    fov_low: tuple[float, ...] | None = None
    fov_high: tuple[float, ...] | None = None
    default_std: float | None = None
    calibration: ScoreCalibration | None = None
    existence_one: bool = False
    fitted_rate: dict | None = None

    def __post_init__(self) -> None:
        rate = float(self.undetected_rate)
        if not math.isfinite(rate) or rate < 0:
            raise ValueError(f"undetected_rate: expected a non-negative number, got {self.undetected_rate!r}")
        object.__setattr__(self, "undetected_rate", rate)
        if rate > 0 and (self.fov_low is None or self.fov_high is None):
            raise ValueError("fov: expected the box (low..., high...) of the undetected-object intensity")
        if self.fov_low is not None or self.fov_high is not None:
            _check_box(self.fov_low, self.fov_high)
        if self.default_std is not None:
            s = float(self.default_std)
            if not math.isfinite(s) or s <= 0:
                raise ValueError(f"default_std: expected a positive number, got {self.default_std!r}")

    def ppp(self, dim: int) -> PPP | None:
        if self.undetected_rate == 0:
            return None
        low, high = np.asarray(self.fov_low, dtype=float), np.asarray(self.fov_high, dtype=float)
        if low.shape != (dim,) or high.shape != (dim,):
            raise ValueError(
                f"fov: expected {dim} lower and {dim} upper bounds (one per state column), "
                f"got {low.size} and {high.size}"
            )
        return PPP.uniform(self.undetected_rate, low, high)


def _check_box(low, high) -> None:
    """The fov box: finite bounds, as many upper as lower, every upper above its lower."""
    lo = np.atleast_1d(np.asarray(low if low is not None else (), dtype=float))
    hi = np.atleast_1d(np.asarray(high if high is not None else (), dtype=float))
    if lo.ndim != 1 or lo.shape != hi.shape or lo.size == 0:
        raise ValueError(f"fov: expected as many lower as upper bounds, got {list(lo)} and {list(hi)}")
    if not (np.isfinite(lo).all() and np.isfinite(hi).all()) or np.any(hi <= lo):
        raise ValueError(
            f"fov: expected finite bounds with every upper above its lower, got low={lo.tolist()}, "
            f"high={hi.tolist()}"
        )


def _existence(table: TrackTable, fill: FillIns) -> tuple[np.ndarray, str]:
    if table.r is not None:
        return np.nan_to_num(table.r), "column r"
    if table.score is not None:
        if fill.calibration is None:
            raise ValueError(
                f"{table.label}: column 'score' needs a calibration to existence probabilities "
                "(--fit-score-on TRACKS TRUTH / calibration=fit_score_calibration(...))"
            )
        return fill.calibration(np.nan_to_num(table.score)), "score calibration"
    if not fill.existence_one:
        raise ValueError(
            f"{table.label}: no column 'r' or 'score'; give a score column with a calibration, "
            "or ask for r = 1 explicitly (--existence-one / existence_one=True)"
        )
    warnings.warn(EXISTENCE_ONE_WARNING, UserWarning, stacklevel=3)
    return np.ones(table.frame.size), "r = 1 (assumed)"


def _covariances(table: TrackTable, fill: FillIns) -> tuple[np.ndarray, str]:
    if table.covs is not None:
        return table.covs, "columns var_/cov_"
    if fill.default_std is None:
        raise ValueError(
            f"{table.label}: no covariance columns (var_<a>, cov_<a>_<b>); "
            "give them or a default standard deviation (--default-std S)"
        )
    d = len(table.state)
    covs = np.broadcast_to(fill.default_std**2 * np.eye(d), (table.frame.size, d, d)).copy()
    return covs, f"default std {fill.default_std}"


def build_densities(table: TrackTable, frames: np.ndarray, fill: FillIns):
    """(one PMBM per frame, provenance dict) from a validated tracks table and the fill-ins."""
    if fill.calibration is not None and table.score is None:
        raise ValueError(
            f"{table.label}: a score calibration was given but the table has no column 'score' "
            "(it would be silently unused)"
        )
    r, r_source = _existence(table, fill)
    covs, cov_source = _covariances(table, fill)
    dens = densities(table, frames, r, covs, fill.ppp(len(table.state)))
    prov = {
        "existence": r_source,
        "covariance": cov_source,
        "undetected": (
            {"kind": "none (zero intensity)"}
            if fill.undetected_rate == 0
            else {
                "kind": "uniform Poisson",
                "rate": fill.undetected_rate,
                "fov_low": list(fill.fov_low),
                "fov_high": list(fill.fov_high),
            }
        ),
    }
    if fill.fitted_rate is not None:
        prov["undetected"]["fitted"] = fill.fitted_rate
    if fill.calibration is not None and table.score is not None:
        prov["score_calibration"] = fill.calibration.provenance()
    if table.ignored:
        prov["ignored_columns"] = list(table.ignored)
    return dens, prov


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


def _tables(tracks, truth, state, frames=None):
    """Validated (tracks, truth, frames, scenario field of view or None).

    A scenario-file truth (.nc) gives all its steps as frames, and its field of view.
    """
    truth_name = "truth"
    if isinstance(truth, (str, os.PathLike)) and Path(truth).suffix == ".nc":
        truth_name = str(truth)  # the label recorded in fill-ins and errors: the file, not "truth"
        truth, steps = truth_from_scenario(truth, state)
        frames = list(range(steps)) if frames is None else frames
    t, y = _validated(tracks, truth, state, truth_name)
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
    t, y, fr, scene_fov = _tables(tracks, truth, state, frames)
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


# ---------------------------------------------------------------------------
# calibration on a held-out set
# ---------------------------------------------------------------------------


def detection_outcomes(tracks: TrackTable, truth: TruthTable, threshold: float) -> np.ndarray:
    """(N,) 0/1: whether each row is matched to a truth of its frame (and hypothesis).

    The CLEAR MOT matching of ``evaluate`` on Euclidean position distance:
    the most pairs with distance <= ``threshold``, then the least summed
    distance (:func:`nllbench.measures.metrics.gated_matching`). (A capped-cost
    assignment is not that rule: it can trade a third match for two exact ones.)
    """
    out = np.zeros(tracks.frame.size)
    pos = list(POSITION)
    frames = np.union1d(tracks.frame, truth.frame)
    X, _ = truth_sets(truth, frames)
    hyp = tracks.hypothesis if tracks.hypothesis is not None else np.zeros(tracks.frame.size, dtype=np.int64)
    live = ~tracks.placeholder
    for k, f in enumerate(frames.tolist()):
        for h in np.unique(hyp[tracks.frame == f]):
            rows = np.flatnonzero((tracks.frame == f) & (hyp == h) & live)
            if rows.size == 0 or X[k].shape[0] == 0:
                continue
            dist = np.linalg.norm(tracks.means[rows][:, None, pos] - X[k][None, :, pos], axis=2)
            a, _ = gated_matching(dist, threshold)  # CLEAR MOT's: most pairs within it, then least distance
            out[rows[a]] = 1.0
    return out


def fit_score_calibration(tracks, truth, *, state=DEFAULT_STATE, threshold: float = 2.0) -> ScoreCalibration:
    """Logistic map score -> r fitted by maximum likelihood of detection outcomes.

    Each row of a calibration tracks table is labelled 1 if matched to a truth
    (:func:`detection_outcomes`) and 0 otherwise; (a, b) maximise
    ``sum_i o_i log s(a + b x_i) + (1 - o_i) log(1 - s(a + b x_i))``,
    ``s`` the logistic function (logistic regression; Platt, 1999). The
    maximum exists iff the outcomes overlap in score both ways; otherwise
    (perfect separation) this refuses rather than return r = 0 or 1.
    """
    t, y, _, _ = _tables(tracks, truth, state)
    if t.score is None:
        raise ValueError(f"{t.label}: expected a column 'score' to calibrate, got none")
    live = ~t.placeholder
    x = t.score[live]
    o = detection_outcomes(t, y, threshold)[live]
    pos, neg = x[o == 1], x[o == 0]
    if pos.size == 0 or neg.size == 0:
        raise ValueError(
            f"{t.label}: calibration needs matched and unmatched rows; "
            f"got {pos.size} matched, {neg.size} unmatched"
        )
    if not (pos.min() < neg.max() and neg.min() < pos.max()):
        raise ValueError(
            f"{t.label}: scores separate matched from unmatched rows perfectly; the logistic maximum-"
            "likelihood fit does not exist (it would give r = 0 or 1); use a larger calibration set"
        )
    centre, spread = float(np.mean(x)), float(np.std(x)) or 1.0
    z = (x - centre) / spread

    def loss(p):
        eta = p[0] + p[1] * z
        return float(np.sum(np.logaddexp(0.0, eta) - o * eta))

    def grad(p):
        g = expit(p[0] + p[1] * z) - o
        return np.array([g.sum(), (g * z).sum()])

    res = minimize(loss, np.zeros(2), jac=grad, method="BFGS", options={"gtol": 1e-10})
    a, b = res.x
    return ScoreCalibration(float(a - b * centre / spread), float(b / spread), int(x.size), int(o.sum()))


def calibration_nll(
    tracks, truth, rate: float, *, state=DEFAULT_STATE, frames=None, fill: FillIns, settings
) -> float:
    """Total NLL over a calibration set's frames at the largest Q, for undetected rate ``rate``."""
    t, y, fr, _ = _tables(tracks, truth, state, frames)
    return _rate_objective(t, y, fr, fill, settings)(rate)


def _rate_objective(t: TrackTable, y: TruthTable, fr, fill: FillIns, settings: EvaluationSettings):
    base = FillIns(0.0, None, None, fill.default_std, fill.calibration, fill.existence_one)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the r = 1 warning is given by the scoring run
        dens, _ = build_densities(t, fr, base)
    X, _ = truth_sets(y, fr)
    q = max(settings.qs)
    d = len(t.state)
    # the probes of evaluate_run, in its order, so that the rate is fitted for the density that is scored
    dens = [probed(density, settings) for density in dens]

    def total(rate: float) -> float:
        ppp = FillIns(rate, fill.fov_low, fill.fov_high).ppp(d)
        out = 0.0
        for density, x in zip(dens, X, strict=True):
            density = type(density)(ppp, density.hypotheses, density.weights)
            if settings.marginal == "position":
                density, x = marginal(density, POSITION), x[:, list(POSITION)]
            out += nll_many(density, x, [q], budget=settings.budget)[0].value
        return out

    return total


def fit_undetected_rate(
    tracks,
    truth,
    *,
    state=DEFAULT_STATE,
    frames=None,
    fill: FillIns,
    settings: EvaluationSettings = EvaluationSettings(),
) -> dict:
    """Maximum-likelihood rate of the uniform undetected-object PPP on a calibration set.

    Minimises L(rate) = sum_k NLL_k(rate) over the calibration frames (the
    largest Q, marginal, budget and the ``cov_scale`` / ``temper`` probes of
    ``settings``, as scoring applies them), with ``fill``'s box, covariances
    and existence. Every association term is c * exp(-rate) * rate^j with j
    objects left to the PPP (j <= n_k), so dL/drate >= K - N / rate > 0 for
    rate > N / K (N truths in K frames): the minimum lies in [0, N / K],
    searched by bounded Brent. The frames are ``frames``, else all steps of a
    scenario-file truth, else the union of both tables' frames (a frame with
    no row in either table is then not part of the set). Returns rate, the
    minimum L and the bracket.
    """
    t, y, fr, _ = _tables(tracks, truth, state, frames)
    if fill.fov_low is None or fill.fov_high is None:
        raise ValueError("fov: fitting the undetected rate needs the box (--fov LOW... HIGH...)")
    objective = _rate_objective(t, y, fr, fill, settings)
    frames = fr.size
    bound = y.frame.size / max(frames, 1)
    if bound == 0:
        rate, value = 0.0, objective(0.0)
    else:
        res = minimize_scalar(
            objective, bounds=(0.0, bound), method="bounded", options={"xatol": 1e-9 * bound}
        )
        rate, value = float(res.x), float(res.fun)
        edge = objective(0.0)
        if edge <= value:  # the boundary (no undetected objects) can be the minimum
            rate, value = 0.0, edge
    if not math.isfinite(value):
        raise ValueError(
            f"{t.label}, {y.label}: the calibration NLL is infinite at every rate (a truth no Bernoulli "
            "or box explains, or an r = 1 Bernoulli with no object); the rate cannot be fitted"
        )
    return {
        "rate": rate,
        "calibration_nll": value,
        "bracket": [0.0, bound],
        "frames": frames,
        "tracks": t.label,
        "truth": y.label,
        "q": max(settings.qs),
    }


# ---------------------------------------------------------------------------
# files (the command line and the workflow call these)
# ---------------------------------------------------------------------------

_SCENARIO_STATE = ("x", "y", "vx", "vy")  # the state order of nllbench scenario files
_SCENARIO_KEYS = ("scenario", "seed", "clutter_rate", "p_detection", "p_survival", "steps")


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


def _same_scenario(truth, scenario_file) -> None:
    """A scenario-file truth and a --scenario-file that labels the run must be the same scenario."""
    from nllbench.pipeline.runs import scenario_mismatches
    from nllbench.store import read_scenario, scenario_identity

    diffs = scenario_mismatches(scenario_identity(read_scenario(truth)), read_scenario(scenario_file))
    if diffs:
        text = "; ".join(f"{k}: truth {a!r}, scenario file {b!r}" for k, (a, b) in diffs.items())
        raise ValueError(
            f"scenario_file {str(scenario_file)!r}: expected the scenario of the truth {str(truth)!r} "
            f"(it labels the run), but they differ in {text}"
        )


def score_file(
    tracks,
    truth,
    output,
    *,
    state=DEFAULT_STATE,
    frames=None,
    fill: FillIns = FillIns(),
    settings: EvaluationSettings = EvaluationSettings(),
    tracker: str = "external",
    scenario_file=None,
    seed: int | None = None,
    config: dict | None = None,
    per_frame=None,
):
    """Score a tracks file against a truth file (CSV / Parquet, or a scenario .nc); write a metrics file.

    A truth given as a scenario file (``.nc``) is that scenario's truth, and
    labels the run like ``scenario_file``; with a scenario, the frames default
    to its steps 0..K-1, so that step k is the scenario's step k as for the
    reference filters. Returns (one-row summary, :class:`ScoreResult`).
    """
    from nllbench.store import Output, committed_together, read_scenario, write_metrics

    extra: dict = {"tracks_file": Path(tracks).name, "truth_file": Path(truth).name}
    if Path(truth).suffix == ".nc":
        if scenario_file is not None:
            _same_scenario(truth, scenario_file)
        scenario_file = scenario_file or truth
    if scenario_file is not None:
        attrs = read_scenario(scenario_file).attrs
        extra.update(
            {k: attrs[k] for k in _SCENARIO_KEYS if k in attrs}, scenario_file=Path(scenario_file).name
        )
        if frames is None:
            frames = list(range(int(attrs.get("steps", 0)))) or None
    if seed is not None:
        extra["seed"] = seed
    if config is not None:
        extra["config"] = json.dumps(config, sort_keys=True)
    targets = [Output(Path(output), "output")]
    if per_frame is not None:
        targets.append(Output(Path(per_frame), "per_frame"))
    # both files checked before scoring and committed together: a failure leaves neither
    with committed_together(*targets) as tmps:
        result = score(tracks, truth, state=state, frames=frames, fill=fill, settings=settings)
        write_metrics(result.metrics, tmps[0], score_attrs(result, tracker, extra))
        if per_frame is not None:
            result.per_frame().to_csv(tmps[1], index=False)
    row = {
        **{k: extra.get(k, "") for k in ("scenario", "seed", "clutter_rate", "p_detection")},
        "filter": tracker,
        "marginal": settings.marginal,
        "cov_scale": settings.cov_scale,
        "temper": settings.temper,
        **result.summary(),
    }
    return row, result
