"""Fill-ins fitted on a held-out calibration set: the score -> r map, a constant r and the undetected rate.

All are maximum-likelihood fits: a logistic regression of detection
outcomes on the score (:func:`fit_score_calibration`), the share of matched
rows as a constant r (:func:`fit_constant_existence`) and the rate of the
uniform undetected-object PPP that minimises the calibration NLL
(:func:`fit_undetected_rate`), with the probes of the scoring run.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from scipy.optimize import minimize, minimize_scalar
from scipy.special import expit

from nllbench.engine.nll import nll_many
from nllbench.engine.transforms import POSITION, marginal
from nllbench.measures.point.metrics import gated_matching
from nllbench.measures.run.evaluate import EvaluationSettings, probed
from nllbench.trackers.build import build_densities
from nllbench.trackers.checks import outside_box, unit_check
from nllbench.trackers.fillins import ConstantExistence, FillIns, ScoreCalibration
from nllbench.trackers.inputs import read_tables
from nllbench.trackers.tracks import DEFAULT_STATE, TrackTable, TruthTable, truth_sets


def detection_outcomes(tracks: TrackTable, truth: TruthTable, threshold: float) -> np.ndarray:
    """(N,) 0/1: whether each row is matched to a truth of its frame (and hypothesis).

    The CLEAR MOT matching of ``evaluate`` on Euclidean position distance:
    the most pairs with distance <= ``threshold``, then the least summed
    distance (:func:`nllbench.measures.point.metrics.gated_matching`). (A capped-cost
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


def fit_score_calibration(
    tracks, truth, *, state=DEFAULT_STATE, threshold: float = 2.0, frames=None
) -> ScoreCalibration:
    """Logistic map score -> r fitted by maximum likelihood of detection outcomes.

    Each row of a calibration tracks table is labelled 1 if matched to a truth
    (:func:`detection_outcomes`) and 0 otherwise; (a, b) maximise
    ``sum_i o_i log s(a + b x_i) + (1 - o_i) log(1 - s(a + b x_i))``,
    ``s`` the logistic function (logistic regression; Platt, 1999). The
    maximum exists iff the outcomes overlap in score both ways; otherwise
    (perfect separation) this refuses rather than return r = 0 or 1.
    ``frames`` as for :func:`nllbench.score` (tables covering different frames are refused without it).
    """
    t, y, fr, _ = read_tables(tracks, truth, state, frames)
    t = t.per_track()  # a Gaussian-mixture track is one detection, at its mixture mean
    if t.score is None:
        raise ValueError(f"{t.label}: expected a column 'score' to calibrate, got none")
    unit_check(t, y, fr, {"threshold": float(threshold)})
    live = ~t.placeholder
    x = t.score[live]
    if x.size and np.all(x == x[0]):
        raise ValueError(
            f"{t.label}: column 'score' is constant ({float(x[0])!r} on every row): it carries no "
            "information to calibrate and is no score at all (MOTChallenge result files often hold "
            "conf = -1 throughout); leave it out and give r, or existence_one"
        )
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
    return ScoreCalibration(
        float(a - b * centre / spread), float(b / spread), int(x.size), int(o.sum()), float(threshold)
    )


def fit_constant_existence(
    tracks, truth, *, state=DEFAULT_STATE, threshold: float = 2.0, frames=None
) -> ConstantExistence:
    """The constant r that best explains a calibration set: the share of its rows matched to a truth.

    Each live row is labelled 1 if matched to a truth of its frame by CLEAR
    MOT's matching (:func:`detection_outcomes`, distance <= ``threshold``) and
    0 otherwise; the r maximising ``sum_i o_i log r + (1 - o_i) log(1 - r)``
    is the mean of the outcomes (the Bernoulli maximum-likelihood estimate).
    For a tracks table with neither r nor score (``--existence-one``'s
    case), an r < 1 that leaves a false track possible. ``frames`` as for
    :func:`nllbench.score`.
    """
    t, y, fr, _ = read_tables(tracks, truth, state, frames)
    t = t.per_track()  # a Gaussian-mixture track is one detection, at its mixture mean
    unit_check(t, y, fr, {"threshold": float(threshold)})
    live = ~t.placeholder
    o = detection_outcomes(t, y, threshold)[live]
    if o.size == 0:
        raise ValueError(f"{t.label}: expected tracks rows to fit a constant existence on, got none")
    return ConstantExistence(float(o.mean()), int(o.size), int(o.sum()), float(threshold))


def calibration_nll(
    tracks, truth, rate: float, *, state=DEFAULT_STATE, frames=None, fill: FillIns, settings
) -> float:
    """Total NLL over a calibration set's frames at the largest Q, for undetected rate ``rate``."""
    t, y, fr, _ = read_tables(tracks, truth, state, frames)
    return _rate_objective(t, y, fr, fill, settings)(rate)


def _rate_objective(t: TrackTable, y: TruthTable, fr, fill: FillIns, settings: EvaluationSettings):
    base = FillIns(
        0.0,
        None,
        None,
        fill.default_std,
        fill.calibration,
        fill.existence_one,
        constant_existence=fill.constant_existence,
    )
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
    t, y, fr, _ = read_tables(tracks, truth, state, frames)
    if fill.fov_low is None or fill.fov_high is None:
        raise ValueError("fov: fitting the undetected rate needs the box (--fov LOW... HIGH...)")
    outside_box(y, fill.fov_low, fill.fov_high, fr)
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
