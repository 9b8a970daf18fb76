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
from nllbench.metrics import ClearMOTResult, IdentityResult, clear_mot, gospa, identity_scores, ospa
from nllbench.nll import nll, nll_many
from nllbench.tgospa import TGOSPAResult, tgospa
from nllbench.theorem1 import scale_for_k_equal_rho, theorem1
from nllbench.transforms import POSITION, marginal, scale_covariances, temper_existence

NLL_TERMS = ("localization", "false", "missed", "cardinality", "mixture", "association")


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
        the decomposition (see :data:`NLL_TERMS`); nll_exact : (K, Q) bool.
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
    Q = len(settings.qs)
    nll_arrays = {name: np.zeros((K, Q)) for name in ("value", "lower", "upper", *NLL_TERMS)}
    exact = np.zeros((K, Q), dtype=bool)
    g, gl, gm, gf, o = (np.zeros(K) for _ in range(5))
    n_truth, n_est = np.zeros(K, dtype=np.int64), np.zeros(K, dtype=np.int64)
    t_lhs, t_rhs, t_diff = np.zeros(K), np.zeros(K), np.zeros(K)
    t_excl = np.zeros(K, dtype=np.int64)
    lo = np.asarray(fov_low, dtype=float)
    hi = np.asarray(fov_high, dtype=float)
    rho = settings.theorem_rho
    scale = settings.theorem_scale or scale_for_k_equal_rho(rho, lo.size)
    ex_val = np.zeros(K) if settings.exact else None
    ex_ok = np.zeros(K, dtype=bool) if settings.exact else None
    est_pos, est_ids, truth_pos_all = [], [], []
    fresh = -1
    nll_seconds = 0.0
    calibration, cardinality = [], []
    empty_steps = 0
    for k, (density, X) in enumerate(zip(posteriors, truth, strict=True)):
        density = _prepare(density, settings)
        X = np.asarray(X, dtype=float)
        if X.size == 0:
            X = np.empty((0, density.dim))
        if X.ndim != 2 or X.shape[1] != density.dim:
            raise ValueError(
                f"truth: step {k}: expected states of dimension {density.dim} like the posterior, "
                f"got shape {X.shape}"
            )
        if settings.marginal == "position":
            dens_eval, y = marginal(density, POSITION), X[:, list(POSITION)]
        else:
            dens_eval, y = density, X
        t_nll = time.perf_counter()
        results = nll_many(dens_eval, y, settings.qs, budget=settings.budget)
        nll_seconds += time.perf_counter() - t_nll
        for j, res in enumerate(results):
            nll_arrays["value"][k, j] = res.value
            nll_arrays["lower"][k, j] = res.lower
            nll_arrays["upper"][k, j] = res.upper
            for term in NLL_TERMS:
                nll_arrays[term][k, j] = getattr(res, term)
            exact[k, j] = res.exact
        card = cardinality_score(dens_eval, y.shape[0])
        cardinality.append(card)
        calibration.append(step_counts(dens_eval, y, results[-1], card))
        if settings.exact:
            ex_val[k] = nll_arrays["value"][k, -1]
            try:
                ex_val[k] = nll(dens_eval, y, method="exact").value
                ex_ok[k] = True
            except ValueError:  # intractable for the subset DP: flagged, not guessed
                ex_ok[k] = False
        if estimates is None:
            est = estimate(density, settings.existence_threshold, settings.estimator)
            states, labels = est.states, est.labels.copy()
        else:
            states, labels = (np.asarray(a) for a in estimates[k])
            states, labels = states.reshape(-1, density.dim), labels.astype(np.int64).copy()
        if states.shape[0] == 0 and np.floor(expected_cardinality(density) + 0.5) >= 1:
            empty_steps += 1
        pos = states[:, list(POSITION)]
        # no label, or a label an earlier estimate of this step already carries
        # (a PHD component split over measurements): a fresh identity
        _, first = np.unique(labels, return_index=True)
        repeated = np.ones(labels.size, dtype=bool)
        repeated[first] = False
        for i in np.flatnonzero((labels < 0) | repeated):
            labels[i] = fresh
            fresh -= 1
        est_pos.append(pos)
        est_ids.append(labels)
        truth_pos = X[:, list(POSITION)]
        truth_pos_all.append(truth_pos)
        gr = gospa(pos, truth_pos, c=settings.cutoff, p=settings.p)
        g[k], gl[k], gm[k], gf[k] = gr.value, gr.localization, gr.missed, gr.false
        o[k] = ospa(pos, truth_pos, c=settings.cutoff, p=settings.p).value
        n_truth[k], n_est[k] = truth_pos.shape[0], pos.shape[0]
        inside = np.all((truth_pos >= lo) & (truth_pos <= hi), axis=1)
        t_excl[k] = int((~inside).sum())
        th = theorem1(pos, truth_pos[inside], lo, hi, rho, scale)
        t_lhs[k], t_rhs[k], t_diff[k] = th.lhs, th.rhs, th.difference
    cm = clear_mot(truth_pos_all, truth_ids, est_pos, est_ids, settings.threshold)
    ids = identity_scores(truth_pos_all, truth_ids, est_pos, est_ids, settings.threshold)
    tg = tgospa(
        truth_pos_all, truth_ids, est_pos, est_ids, settings.cutoff, settings.p, settings.tgospa_gamma
    )
    ho = hota(truth_pos_all, truth_ids, est_pos, est_ids, settings.hota_threshold or settings.threshold)
    return RunMetrics(
        settings.qs,
        nll_arrays,
        exact,
        g,
        gl,
        gm,
        gf,
        o,
        n_truth,
        n_est,
        cm,
        ids,
        t_lhs,
        t_rhs,
        t_diff,
        t_excl,
        time.perf_counter() - t0,
        settings,
        ex_val,
        ex_ok,
        nll_seconds,
        tg,
        ho,
        tuple(calibration),
        tuple(cardinality),
        empty_steps,
    )
