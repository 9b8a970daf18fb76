"""Evaluation of a run: NLL over time next to GOSPA, OSPA, CLEAR MOT and IDF1, with the Theorem 1 check.

``evaluate_run`` takes one posterior per step and the truth, and returns a
:class:`RunMetrics` of per-step arrays and run-level scores. The paper's
settings are the defaults: Euclidean distance on position, GOSPA/OSPA cut-off
2 and p = 1, CLEAR MOT / identity threshold 2 (inclusive).

Conventions
-----------
* NLL: on the position marginal by default (comparable with GOSPA), or on
  the full state; one value per Q (per-hypothesis budget unless asked). An
  impossible truth gives +inf; run means are +inf when any step is, and the
  number of such steps is reported next to the mean over the finite ones.
* Point estimates: :func:`nllbench.estimates.estimate` by the rule in
  ``settings.estimator`` (default per family: PHD weight >= 0.5, CPHD MAP
  cardinality, PMBM family best hypothesis with r > 0.4), or the filter's own
  estimates extracted at update time when given. Steps where the estimator
  returns nothing while the posterior expects at least one object (rounded)
  are counted (``estimator_empty_steps``), never silently passed over.
  Estimates without a label, or whose label an estimate of the same step
  already carries, get a fresh identity at every step.
* Theorem 1: for each step, the PMB of the theorem built from the step's
  estimates (positions) in the scene's field of view; both sides and their
  difference are recorded. Truth objects outside the field of view (where the
  theorem's PPP is zero) are left out of that check and counted.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from nllbench.calibration import CalibrationCounts, CardinalityScore, cardinality_score, step_counts
from nllbench.estimates import DEFAULT_EXISTENCE_THRESHOLD, RULES, estimate, expected_cardinality
from nllbench.hota import HOTAResult, hota
from nllbench.metrics import (
    ClearMOTResult,
    GOSPAResult,
    IdentityResult,
    clear_mot,
    gospa,
    identity_scores,
    ospa,
)
from nllbench.names import NLL_STEP
from nllbench.nll import nll, nll_many
from nllbench.tgospa import TGOSPAResult, tgospa
from nllbench.theorem1 import Theorem1Result, scale_for_k_equal_rho, theorem1
from nllbench.transforms import POSITION, marginal, scale_covariances, temper_existence


@dataclass(frozen=True)
class EvaluationSettings:
    """What to compute and how (defaults: the paper's settings).

    qs : Murty budgets for the NLL.
    marginal : "position" (x, y) or "full" (the whole state) for the NLL.
    cutoff, p : GOSPA / OSPA cut-off and order.
    threshold : CLEAR MOT / identity matching threshold (inclusive).
    existence_threshold : estimator threshold on r (PMBM family).
    cov_scale, temper : calibration probes applied to every posterior first
        (1 = none): covariances times ``cov_scale``; existence probabilities
        tempered about ``existence_threshold`` (estimates do not move).
    theorem_rho : rho of the Theorem 1 check (c = -2 log(1 - rho)).
    theorem_scale : its metric scale (None: the scale at which k = rho).
    budget : "hypothesis" (the paper) or "global" Murty budget.
    exact : also compute the exact NLL (every association) where the subset
        DP is tractable; steps where it is not are flagged, not guessed.
    tgospa_gamma : trajectory-GOSPA switch cost (None: ``cutoff``); its
        cut-off and order are ``cutoff`` and ``p``.
    hota_threshold : distance at which the HOTA similarity reaches 0 (None: ``threshold``).
    estimator : point-estimation rule (:data:`nllbench.estimates.RULES`;
        None: the family's default).
    estimate_at : "posterior" (estimates from the stored posterior) or
        "update" (the filter's own, extracted before pruning and merging).
    """

    qs: tuple[int, ...] = (1, 10, 100)
    marginal: str = "position"
    cutoff: float = 2.0
    p: float = 1.0
    threshold: float = 2.0
    existence_threshold: float = DEFAULT_EXISTENCE_THRESHOLD
    cov_scale: float = 1.0
    temper: float = 1.0
    theorem_rho: float = 0.9
    theorem_scale: float | None = None
    budget: str = "hypothesis"
    exact: bool = False
    tgospa_gamma: float | None = None
    hota_threshold: float | None = None
    estimator: str | None = None
    estimate_at: str = "posterior"

    def __post_init__(self) -> None:
        if self.estimator is not None and self.estimator not in RULES:
            raise ValueError(f"estimator: expected one of {RULES} or None, got {self.estimator!r}")
        if self.estimate_at not in ("posterior", "update"):
            raise ValueError(f"estimate_at: expected 'posterior' or 'update', got {self.estimate_at!r}")
        qs = tuple(int(q) for q in self.qs)
        if not qs or any(q < 1 for q in qs) or len(set(qs)) != len(qs):
            raise ValueError(f"qs: expected distinct positive integers, got {self.qs!r}")
        object.__setattr__(self, "qs", tuple(sorted(qs)))
        if self.marginal not in ("position", "full"):
            raise ValueError(f"marginal: expected 'position' or 'full', got {self.marginal!r}")


@dataclass(frozen=True)
class RunMetrics:
    """Per-step arrays (K = steps, Q = len(qs)) and run-level scores.

    nll : dict term -> (K, Q) float, terms "value", "lower", "upper" and
        the decomposition (see :data:`nllbench.names.NLL_TERMS`); nll_exact : (K, Q) bool.
    gospa, gospa_localization, gospa_missed, gospa_false, ospa : (K,)
    n_truth, n_estimates : (K,) int
    clear : ClearMOTResult (with per-frame counts); identity : IdentityResult
    theorem1_lhs, theorem1_rhs, theorem1_difference : (K,); theorem1_excluded : (K,) int
    seconds : wall time of the evaluation; nll_seconds : of which the Murty NLL for all Q
    tgospa : trajectory GOSPA of the estimates (per-frame decomposition inside)
    hota : HOTA of the estimates
    calibration : (K,) tuple of per-step :class:`~nllbench.calibration.CalibrationCounts`
        (of the density the NLL is evaluated on; the Q = max(qs) best association)
    cardinality : (K,) tuple of per-step :class:`~nllbench.calibration.CardinalityScore`
    """

    qs: tuple[int, ...]
    nll: dict[str, np.ndarray]
    nll_exact: np.ndarray
    gospa: np.ndarray
    gospa_localization: np.ndarray
    gospa_missed: np.ndarray
    gospa_false: np.ndarray
    ospa: np.ndarray
    n_truth: np.ndarray
    n_estimates: np.ndarray
    clear: ClearMOTResult
    identity: IdentityResult
    theorem1_lhs: np.ndarray
    theorem1_rhs: np.ndarray
    theorem1_difference: np.ndarray
    theorem1_excluded: np.ndarray
    seconds: float
    settings: EvaluationSettings
    nll_exact_value: np.ndarray | None = None
    nll_exact_available: np.ndarray | None = None
    nll_seconds: float = 0.0
    tgospa: TGOSPAResult | None = None
    hota: HOTAResult | None = None
    calibration: tuple[CalibrationCounts, ...] = ()
    cardinality: tuple[CardinalityScore, ...] = ()
    estimator_empty_steps: int = 0

    @property
    def steps(self) -> int:
        return self.gospa.shape[0]

    def calibration_total(self) -> CalibrationCounts:
        """The run's calibration counts: the per-step counts pooled."""
        return sum(self.calibration, CalibrationCounts.empty())

    def summary(self) -> dict:
        """One row of run-level numbers (means over steps; NLL per Q).

        Deterministic: wall times are not part of it (see ``seconds``).
        """
        row: dict = {"steps": self.steps}
        for j, q in enumerate(self.qs):
            values = self.nll["value"][:, j]
            finite = np.isfinite(values)
            row[f"nll_q{q}"] = float(np.mean(values)) if finite.all() else math.inf
            row[f"nll_finite_mean_q{q}"] = float(np.mean(values[finite])) if finite.any() else math.inf
            row[f"nll_infinite_steps_q{q}"] = int((~finite).sum())
            row[f"nll_exact_steps_q{q}"] = int(self.nll_exact[:, j].sum())
        row.update(
            gospa=float(np.mean(self.gospa)),
            ospa=float(np.mean(self.ospa)),
            mota=self.clear.mota,
            motp=self.clear.motp,
            switches=self.clear.switches,
            idf1=self.identity.idf1,
            theorem1_max_abs_difference=float(np.max(np.abs(self.theorem1_difference), initial=0.0)),
            estimator_empty_steps=self.estimator_empty_steps,
        )
        if self.tgospa is not None:
            row.update(tgospa=self.tgospa.value, tgospa_switches=self.tgospa.switches)
        if self.hota is not None:
            row.update(hota=self.hota.hota, deta=self.hota.deta, assa=self.hota.assa, loca=self.hota.loca)
        if self.calibration:
            pooled = self.calibration_total()
            row.update(
                cardinality_coverage90=pooled.cardinality_coverage,
                cardinality_log_score=pooled.cardinality_log_score,
            )
        if self.nll_exact_available is not None:
            row["nll_exact_steps_available"] = int(self.nll_exact_available.sum())
            if self.nll_exact_available.all():
                values = self.nll_exact_value
                row["nll_exact"] = float(np.mean(values)) if np.isfinite(values).all() else math.inf
        return row


def _prepare(density, settings: EvaluationSettings):
    if settings.cov_scale != 1.0:
        density = scale_covariances(density, settings.cov_scale)
    if settings.temper != 1.0:
        density = temper_existence(density, settings.temper, settings.existence_threshold)
    return density


@dataclass(frozen=True)
class _Step:
    """Everything :func:`evaluate_run` measures at one step (estimates not yet relabelled)."""

    nll: list  # one NLLResult per Q
    cardinality: CardinalityScore
    calibration: CalibrationCounts
    exact_value: float
    exact_available: bool
    states: np.ndarray  # (m, d) estimates
    labels: np.ndarray  # (m,) their labels, as given
    estimator_empty: bool
    truth_pos: np.ndarray  # (n, 2)
    gospa: GOSPAResult  # of the positions
    ospa: float
    theorem1: Theorem1Result  # on the truth inside the field of view
    theorem1_excluded: int
    nll_seconds: float


def evaluate_run(
    posteriors: Sequence,
    truth: Sequence[np.ndarray],
    truth_ids: Sequence[np.ndarray],
    fov_low,
    fov_high,
    settings: EvaluationSettings = EvaluationSettings(),
    estimates: Sequence | None = None,
) -> RunMetrics:
    """Evaluate one run (one posterior and one truth set per step).

    ``estimates`` (one (states (k, d), labels (k,)) pair per step), if given,
    are the filter's own point estimates and replace the estimator.
    """
    K = len(posteriors)
    if estimates is not None and len(estimates) != K:
        raise ValueError(f"estimates: expected {K} steps like the posterior, got {len(estimates)}")
    if len(truth) != K or len(truth_ids) != K:
        raise ValueError(f"truth: expected {K} steps like the posterior, got {len(truth)}")
    t0 = time.perf_counter()
    lo = np.asarray(fov_low, dtype=float)
    hi = np.asarray(fov_high, dtype=float)
    scale = settings.theorem_scale or scale_for_k_equal_rho(settings.theorem_rho, lo.size)
    steps = [
        _evaluate_step(k, density, X, estimates, settings, lo, hi, scale)
        for k, (density, X) in enumerate(zip(posteriors, truth, strict=True))
    ]
    est_pos = [st.states[:, list(POSITION)] for st in steps]
    est_ids, fresh = [], -1
    for st in steps:  # fresh identities are numbered across the whole run
        labels, fresh = _fresh_identities(st.labels, fresh)
        est_ids.append(labels)
    truth_pos = [st.truth_pos for st in steps]
    clear, identity, tgospa_result, hota_result = _sequence_measures(
        truth_pos, truth_ids, est_pos, est_ids, settings
    )
    Q = len(settings.qs)

    def per_step(get, dtype=float):
        return np.array([get(st) for st in steps], dtype=dtype).reshape(K)

    def per_step_q(name, dtype=float):
        return np.array([[getattr(r, name) for r in st.nll] for st in steps], dtype=dtype).reshape(K, Q)

    return RunMetrics(
        settings.qs,
        {name: per_step_q(name) for name in NLL_STEP},
        per_step_q("exact", bool),
        per_step(lambda st: st.gospa.value),
        per_step(lambda st: st.gospa.localization),
        per_step(lambda st: st.gospa.missed),
        per_step(lambda st: st.gospa.false),
        per_step(lambda st: st.ospa),
        per_step(lambda st: st.truth_pos.shape[0], np.int64),
        per_step(lambda st: st.states.shape[0], np.int64),
        clear,
        identity,
        per_step(lambda st: st.theorem1.lhs),
        per_step(lambda st: st.theorem1.rhs),
        per_step(lambda st: st.theorem1.difference),
        per_step(lambda st: st.theorem1_excluded, np.int64),
        time.perf_counter() - t0,
        settings,
        per_step(lambda st: st.exact_value) if settings.exact else None,
        per_step(lambda st: st.exact_available, bool) if settings.exact else None,
        sum(st.nll_seconds for st in steps),
        tgospa_result,
        hota_result,
        tuple(st.calibration for st in steps),
        tuple(st.cardinality for st in steps),
        sum(st.estimator_empty for st in steps),
    )


def _evaluate_step(k, density, X, estimates, settings: EvaluationSettings, lo, hi, scale) -> _Step:
    """Step ``k``: the NLL for every Q, calibration, estimates and the single-frame measures."""
    density = _prepare(density, settings)
    X = _truth_states(X, density, k)
    if settings.marginal == "position":
        dens_eval, y = marginal(density, POSITION), X[:, list(POSITION)]
    else:
        dens_eval, y = density, X
    t_nll = time.perf_counter()
    results = nll_many(dens_eval, y, settings.qs, budget=settings.budget)
    nll_seconds = time.perf_counter() - t_nll
    card = cardinality_score(dens_eval, y.shape[0])
    exact_value, exact_ok = results[-1].value, False
    if settings.exact:
        exact_value, exact_ok = _exact_nll(dens_eval, y, fallback=results[-1].value)
    states, labels = _step_estimates(density, k, estimates, settings)
    empty = states.shape[0] == 0 and np.floor(expected_cardinality(density) + 0.5) >= 1
    pos, truth_pos = states[:, list(POSITION)], X[:, list(POSITION)]
    inside = np.all((truth_pos >= lo) & (truth_pos <= hi), axis=1)
    return _Step(
        results,
        card,
        step_counts(dens_eval, y, results[-1], card),
        exact_value,
        exact_ok,
        states,
        labels,
        bool(empty),
        truth_pos,
        gospa(pos, truth_pos, c=settings.cutoff, p=settings.p),
        ospa(pos, truth_pos, c=settings.cutoff, p=settings.p).value,
        theorem1(pos, truth_pos[inside], lo, hi, settings.theorem_rho, scale),
        int((~inside).sum()),
        nll_seconds,
    )


def _truth_states(X, density, k: int) -> np.ndarray:
    """Step ``k``'s truth as a (n, d) float array of the posterior's dimension."""
    X = np.asarray(X, dtype=float)
    if X.size == 0:
        X = np.empty((0, density.dim))
    if X.ndim != 2 or X.shape[1] != density.dim:
        raise ValueError(
            f"truth: step {k}: expected states of dimension {density.dim} like the posterior, "
            f"got shape {X.shape}"
        )
    return X


def _exact_nll(density, y: np.ndarray, fallback: float) -> tuple[float, bool]:
    """(exact NLL, True), or (``fallback``, False) where the subset DP is intractable.

    Intractable steps are flagged, not guessed.
    """
    try:
        return nll(density, y, method="exact").value, True
    except ValueError:
        return fallback, False


def _step_estimates(density, k: int, estimates: Sequence | None, settings: EvaluationSettings):
    """Step ``k``'s states (m, d) and a writable copy of their labels (m,).

    The filter's own estimates when given, else the estimator's.
    """
    if estimates is None:
        est = estimate(density, settings.existence_threshold, settings.estimator)
        return est.states, est.labels.copy()
    states, labels = (np.asarray(a) for a in estimates[k])
    return states.reshape(-1, density.dim), labels.astype(np.int64).copy()


def _fresh_identities(labels: np.ndarray, fresh: int) -> tuple[np.ndarray, int]:
    """Give a fresh negative identity to every estimate with no label (< 0) or a repeated one.

    A label that an earlier estimate of the same step already carries (a PHD
    component split over measurements) cannot name two tracks. ``labels`` is
    changed in place; returns it and the next unused fresh identity.
    """
    _, first = np.unique(labels, return_index=True)
    repeated = np.ones(labels.size, dtype=bool)
    repeated[first] = False
    for i in np.flatnonzero((labels < 0) | repeated):
        labels[i] = fresh
        fresh -= 1
    return labels, fresh


def _sequence_measures(truth_pos, truth_ids, est_pos, est_ids, settings: EvaluationSettings):
    """The whole-run measures on positions: CLEAR MOT, identity scores, trajectory GOSPA, HOTA."""
    cm = clear_mot(truth_pos, truth_ids, est_pos, est_ids, settings.threshold)
    ids = identity_scores(truth_pos, truth_ids, est_pos, est_ids, settings.threshold)
    tg = tgospa(truth_pos, truth_ids, est_pos, est_ids, settings.cutoff, settings.p, settings.tgospa_gamma)
    ho = hota(truth_pos, truth_ids, est_pos, est_ids, settings.hota_threshold or settings.threshold)
    return cm, ids, tg, ho
