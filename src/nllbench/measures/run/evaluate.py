"""Evaluation of a run: NLL over time next to GOSPA, OSPA, CLEAR MOT and IDF1, with the Theorem 1 check.

``evaluate_run`` takes one posterior per step and the truth, and returns a
:class:`RunMetrics` of per-step arrays and run-level scores. The paper's
settings are the defaults: Euclidean distance on position, GOSPA/OSPA cut-off
2 and p = 1, CLEAR MOT / identity threshold 2 (inclusive).

Distance of the point measures: Euclidean on the first ``distance_dims``
state columns (2: x, y, which for a 3-D state x, y, z, ... is the bird's-eye
centre distance of the driving benchmarks; 3: x, y, z), or, with
``distance="mahalanobis"``, the Mahalanobis distance under each estimate's
covariance block on those columns for the matching measures (CLEAR MOT,
identity, HOTA). GOSPA, OSPA and trajectory GOSPA stay Euclidean on those
columns: they are metrics, and a distance that depends on which argument
carries the covariance is not one. The NLL's position marginal and the
Theorem 1 check stay on x, y. Named conventions (Argoverse 2, nuScenes, a
chi-square gate) are in :mod:`nllbench.measures.run.presets`.

Conventions
-----------
* NLL: on the position marginal by default (comparable with GOSPA), or on
  the full state; one value per Q (per-hypothesis budget unless asked). An
  impossible truth gives +inf; run means are +inf when any step is, and the
  number of such steps is reported next to the mean over the finite ones.
* Point estimates: :func:`nllbench.filters.estimates.estimate` by the rule in
  ``settings.estimator`` (default per family: PHD weight >= 0.5, CPHD MAP
  cardinality, PMBM family best hypothesis with r > 0.4), or the filter's own
  estimates extracted at update time when given. Steps where the estimator
  returns nothing while the posterior expects at least one object (rounded)
  are counted (``estimator_empty_steps``), never silently passed over.
  Estimates without a label, or whose label an estimate of the same step
  already carries, get a fresh identity at every step.
* Proper scores (``settings.proper_scores``): the set energy score (with its
  Monte Carlo standard error), the intensity score and the cardinality RPS
  per step, on the same density and marginal as the NLL; finite where the
  NLL is infinite (:mod:`nllbench.measures.scores.proper_run`, docs/scores.md).
* P-GOSPA per step and PT-GOSPA of the run, of a multi-Bernoulli posterior at each covariance
  scale, on GOSPA's columns (:mod:`nllbench.measures.run.probabilistic`, docs/pgospa.md).
* Theorem 1: for each step, the PMB of the theorem built from the step's
  estimates (positions) in the scene's field of view; both sides and their
  difference are recorded. Truth objects outside the field of view (where the
  theorem's PPP is zero) are left out of that check and counted.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace

import numpy as np

from nllbench.engine.nll import nll, nll_many
from nllbench.engine.transforms import POSITION, marginal, scale_covariances, temper_existence
from nllbench.filters.estimates import estimate, expected_cardinality
from nllbench.measures.calibration import CalibrationCounts, CardinalityScore, cardinality_score, step_counts
from nllbench.measures.declarations import stepwise_measures
from nllbench.measures.names import NLL_STEP
from nllbench.measures.point.metrics import ClearMOTResult, IdentityResult
from nllbench.measures.run.cpu_clock import DENSITIES, ESTIMATES, CPUClock
from nllbench.measures.run.probabilistic import PGOSPASteps, applies, distance_marginal, run_measures
from nllbench.measures.run.probabilistic import step_bernoullis as pgospa_step
from nllbench.measures.run.run_sequence import fresh_identities, sequence_measures
from nllbench.measures.run.settings import DISTANCES, EvaluationSettings  # noqa: F401 (re-exported)
from nllbench.measures.run.stepwise import StepView, run_arrays, step_values
from nllbench.measures.run.stepwise import run_values as stepwise_run_values
from nllbench.measures.scores.proper_run import PROPER_MEASURES, ProperScores, step_proper_scores
from nllbench.measures.tracks.hota import HOTAResult
from nllbench.measures.tracks.ptgospa import PTGOSPAResult
from nllbench.measures.tracks.tgospa import TGOSPAResult


@dataclass(frozen=True)
class RunMetrics:
    """Per-step arrays (K = steps, Q = len(qs)) and run-level scores.

    nll : dict term -> (K, Q) float, terms "value", "lower", "upper" and
        the decomposition (see :data:`nllbench.measures.names.NLL_TERMS`); nll_exact : (K, Q) bool.
    clear : ClearMOTResult (with per-frame counts); identity : IdentityResult (None: not computed,
        a caller's replacement pending: the box measures of MOTChallenge files)
    seconds : wall time of the evaluation; nll_seconds : of which the Murty NLL for all Q
    stepwise : measure name -> {variable: (K,) array} of every measure computed step by step
        through its declaration (:mod:`nllbench.measures.run.stepwise`; those that apply to the
        run). Each variable is an attribute too: ``gospa``, ``gospa_localization``,
        ``gospa_missed``, ``gospa_false``, ``ospa`` (K,); ``n_truth``, ``n_estimates`` (K,) int;
        ``theorem1_lhs``, ``theorem1_rhs``, ``theorem1_difference`` (K,);
        ``theorem1_excluded`` (K,) int; and those of any measure declared since.
    tgospa : trajectory GOSPA of the estimates (per-frame decomposition inside)
    hota : HOTA of the estimates
    calibration : (K,) tuple of per-step :class:`~nllbench.measures.calibration.CalibrationCounts`
        (of the density the NLL is evaluated on; the Q = max(qs) best association)
    cardinality : (K,) tuple of per-step :class:`~nllbench.measures.calibration.CardinalityScore`
    proper : the set energy, intensity and cardinality scores per step
        (:class:`~nllbench.measures.scores.proper_run.ProperScores`); None unless ``settings.proper_scores``
    trajectory : the run's trajectory NLL
        (:class:`~nllbench.measures.likelihood.trajectory_windows.TrajectoryRun`), or None (not asked,
        or a posterior without labels); attached after the evaluation
    pgospa, ptgospa : P-GOSPA per step and PT-GOSPA of the posterior at its covariance scale
        (:mod:`nllbench.measures.run.probabilistic`); None for a PHD/CPHD posterior
    cpu_seconds : the evaluation's CPU seconds (``time.process_time``) by part: each measure computed
        (by its declared name; one not computed is absent), ``"densities"`` and ``"estimates"``
        (:mod:`nllbench.measures.run.cpu_clock`); shared by every settings of one
        :func:`evaluate_runs` call, like ``seconds``. Measured, so not part of equality or the summary.
    """

    qs: tuple[int, ...]
    nll: dict[str, np.ndarray]
    nll_exact: np.ndarray
    clear: ClearMOTResult
    identity: IdentityResult
    seconds: float
    settings: EvaluationSettings
    stepwise: Mapping[str, Mapping[str, np.ndarray]] = field(default_factory=dict)
    nll_exact_value: np.ndarray | None = None
    nll_exact_available: np.ndarray | None = None
    nll_seconds: float = 0.0
    tgospa: TGOSPAResult | None = None
    hota: HOTAResult | None = None
    calibration: tuple[CalibrationCounts, ...] = ()
    cardinality: tuple[CardinalityScore, ...] = ()
    estimator_empty_steps: int = 0
    proper: ProperScores | None = None
    trajectory: object | None = None
    pgospa: PGOSPASteps | None = None
    ptgospa: PTGOSPAResult | None = None
    cpu_seconds: Mapping[str, float] = field(default_factory=dict, compare=False)

    def __getattr__(self, name: str):
        """A stepwise measure's per-step array by its variable's name (``metrics.gospa``, ...)."""
        for arrays in self.__dict__.get("stepwise", {}).values():
            if name in arrays:
                return arrays[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def run_values(self) -> dict:
        """The run-level values of the stepwise measures that declare a ``run`` function, by variable."""
        row: dict = {}
        for m in stepwise_measures():
            if m.name in self.stepwise:
                row.update(stepwise_run_values(m, self.stepwise[m.name], self.settings))
        return row

    @property
    def steps(self) -> int:
        return self.nll_exact.shape[0]

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
        row.update(gospa=float(np.mean(self.gospa)), ospa=float(np.mean(self.ospa)))
        if self.clear is not None:
            row.update(mota=self.clear.mota, motp=self.clear.motp, switches=self.clear.switches)
        if self.identity is not None:
            row["idf1"] = self.identity.idf1
        row.update(
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
        if self.proper is not None:
            row.update(self.proper.summary())
        if self.trajectory is not None:
            row.update(self.trajectory.summary())
        if self.pgospa is not None:
            row["pgospa"] = self.pgospa.mean
        if self.ptgospa is not None:
            row.update(ptgospa=self.ptgospa.value, ptgospa_switches=self.ptgospa.switches)
        row.update(self.run_values())
        return row


def probed(density, settings: EvaluationSettings):
    """``density`` under the calibration probes of ``settings``: covariances times
    ``cov_scale``, then existence tempered by ``temper`` (identity when both are 1)."""
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
    seed: int = 0,
    skip: frozenset[str] = frozenset(),
) -> RunMetrics:
    """Evaluate one run (one posterior and one truth set per step).

    ``estimates`` (one (states (k, d), labels (k,)) pair per step), if given,
    are the filter's own point estimates and replace the estimator.
    ``seed`` (the run's) seeds the energy score's samples: step k draws from
    ``numpy.random.default_rng([seed, k])``. ``skip``: as for :func:`evaluate_runs`.
    """
    return evaluate_runs(posteriors, truth, truth_ids, fov_low, fov_high, [settings], estimates, seed, skip)[
        0
    ]


def evaluation_grid(qs, cov_scales, probe_q: int) -> list[tuple[int, float]]:
    """The (Q, covariance scale) pairs of a study: every Q at scale 1, ``probe_q`` at every scale (sorted)."""
    pairs = {(int(q), 1.0) for q in qs} | {(int(probe_q), float(s)) for s in cov_scales}
    return sorted(pairs)


def grid_settings(settings: EvaluationSettings, grid) -> list[EvaluationSettings]:
    """One settings per (Q, scale) pair of ``grid``: ``qs = (Q,)``, that scale.

    The exact NLL (if ``settings.exact``) does not depend on Q or the probe:
    it is asked for once, at the smallest Q at scale 1. The proper scores (if
    ``settings.proper_scores``) do not depend on Q: they too are computed
    once, for the unprobed posterior, in the same cell.
    """
    grid = [(int(q), float(s)) for q, s in grid]
    at_one = [q for q, s in grid if s == 1.0]
    first = min(at_one) if at_one else None
    return [
        replace(
            settings,
            qs=(q,),
            cov_scale=s,
            exact=settings.exact and s == 1.0 and q == first,
            proper_scores=settings.proper_scores and s == 1.0 and q == first,
        )
        for q, s in grid
    ]


#: Fields in which the settings of one :func:`evaluate_runs` call may differ.
VARYING = ("qs", "cov_scale", "exact", "proper_scores")


def evaluate_runs(
    posteriors: Sequence,
    truth: Sequence[np.ndarray],
    truth_ids: Sequence[np.ndarray],
    fov_low,
    fov_high,
    settings: Sequence[EvaluationSettings],
    estimates: Sequence | None = None,
    seed: int = 0,
    skip: frozenset[str] = frozenset(),
) -> list[RunMetrics]:
    """``[evaluate_run(..., s, seed=seed) for s in settings]``, computing what they share once.

    The settings may differ only in ``qs``, ``cov_scale``, ``exact`` and
    ``proper_scores`` (:data:`VARYING`). Per step, the posterior is ranked once per covariance
    scale for the union of the Qs asked at that scale (:func:`nllbench.engine.nll.nll_many`:
    the Q best associations are prefixes of one ranking, equal to separate
    calls to the last bit); the exact NLL is computed once per scale; the
    point estimates and every measure of them (GOSPA, OSPA, Theorem 1, CLEAR
    MOT, IDF1, trajectory GOSPA, HOTA) once for all, since a covariance scale
    moves no estimate (the estimators read weights, existence probabilities
    and means only); P-GOSPA and PT-GOSPA once per covariance scale; the
    proper scores once per covariance scale that some settings ask them at
    (their cardinality RPS once for all scales). Each result equals the separate
    evaluation's value for value; ``seconds`` is the whole shared evaluation's
    wall time and ``nll_seconds`` that of the Murty NLL at its scale; ``cpu_seconds`` its CPU
    seconds by measure (:class:`RunMetrics`), shared work charged to the first measure that needs it
    (``docs/score.md``, ``--timing``).

    ``skip``: names of measures not computed (:mod:`nllbench.measures.selection`): their
    results are None (``clear``, ``identity``, ``hota``, ``tgospa``, ``pgospa``, ``ptgospa``;
    a proper score's arrays; ``proper`` when all three are skipped). The others are unchanged.
    """
    settings = list(settings)
    skip = frozenset(skip)
    _check_shared(settings)
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed: expected the run's seed, a non-negative integer, got {seed!r}")
    K, first = len(posteriors), settings[0]
    if estimates is not None and len(estimates) != K:
        raise ValueError(f"estimates: expected {K} steps like the posterior, got {len(estimates)}")
    if len(truth) != K or len(truth_ids) != K:
        raise ValueError(f"truth: expected {K} steps like the posterior, got {len(truth)}")
    t0, clock = time.perf_counter(), CPUClock()
    lo = np.asarray(fov_low, dtype=float)
    hi = np.asarray(fov_high, dtype=float)
    groups = _scale_groups(settings)
    calibrated = {s: {st.qs[-1] for st in settings if st.cov_scale == s} for s in groups}
    proper_skip = skip & set(PROPER_MEASURES)
    proper_at = {s.cov_scale for s in settings if s.proper_scores}
    if proper_skip == set(PROPER_MEASURES):
        proper_at = set()
    steps, propers, proper_seconds = [], {s: [] for s in proper_at}, dict.fromkeys(proper_at, 0.0)
    # None: not a multi-Bernoulli run, or P-GOSPA and PT-GOSPA not asked
    bernoullis = {s: [] for s in groups} if K and not {"pgospa", "ptgospa"} <= skip else None
    unit = replace(first, cov_scale=1.0)  # the probes without a covariance scale, built once per run
    for k, (density, X) in enumerate(zip(posteriors, truth, strict=True)):
        X = _truth_states(X, density, k)
        tempered = probed(density, unit)  # the density every measure below reads (scales apply after)
        base, y = _evaluated_density(tempered, X, first)
        clock.charge(DENSITIES)  # with the iterator's building of step k's density
        nlls, card, rps = {}, None, None
        for s, (qs, exact) in groups.items():
            nlls[s] = _step_nll(base, y, first, s, qs, exact, card, calibrated[s], clock)
            card = nlls[s].cardinality
            if s in proper_at:
                t_proper = time.perf_counter()
                dens_eval = base if s == 1.0 else scale_covariances(base, s)
                if s != 1.0:
                    clock.charge(DENSITIES)
                step = step_proper_scores(
                    dens_eval,
                    y,
                    first.kernel_variance,
                    first.energy_samples,
                    seed,
                    k,
                    rps,
                    proper_skip,
                    clock,
                )
                propers[s].append(step)
                rps = step.rps
                proper_seconds[s] += time.perf_counter() - t_proper
        steps.append((nlls, _step_points(tempered, X, k, estimates, first, lo, hi, clock)))
        bernoullis = bernoullis if applies(density) else None
        if bernoullis is not None:  # P-GOSPA at every covariance scale (docs/pgospa.md)
            e = distance_marginal(tempered, first.distance_dims)
            for s in groups:
                bernoullis[s].append(pgospa_step(e, steps[-1][1].truth_points, s, first.cutoff, first.p))
            clock.charge("pgospa")  # with the best hypotheses PT-GOSPA reads
    proper = {
        s: ProperScores.of_steps(v, first.kernel_variance, first.energy_samples, seed, proper_seconds[s])
        for s, v in propers.items()
    }
    est_pts = [pt.points for _, pt in steps]
    est_ids, fresh = [], -1
    for _, pt in steps:  # fresh identities are numbered across the whole run
        labels, fresh = fresh_identities(pt.labels, fresh)
        est_ids.append(labels)
    truth_pts = [pt.truth_points for _, pt in steps]
    est_covs = [pt.covs for _, pt in steps] if first.distance == "mahalanobis" else None
    clock.charge(ESTIMATES)
    sequence = sequence_measures(truth_pts, truth_ids, est_pts, est_ids, est_covs, first, skip, clock)
    prob = {s: run_measures(b, truth_pts, truth_ids, first) for s, b in (bernoullis or {}).items()}
    if prob:  # PT-GOSPA's run (P-GOSPA's, when PT-GOSPA is left out: the pass runs for P-GOSPA's arrays)
        clock.charge("pgospa" if "ptgospa" in skip else "ptgospa")
    seconds = time.perf_counter() - t0
    return [
        replace(
            _run_metrics(steps, s, sequence, seconds),
            proper=proper.get(s.cov_scale) if s.proper_scores else None,
            pgospa=prob[s.cov_scale][0] if prob and "pgospa" not in skip else None,
            ptgospa=prob[s.cov_scale][1] if prob and "ptgospa" not in skip else None,
            cpu_seconds=dict(clock.seconds),
        )
        for s in settings
    ]


def _check_shared(settings: list[EvaluationSettings]) -> None:
    """Settings of one :func:`evaluate_runs` call: at least one, equal outside :data:`VARYING`."""
    if not settings:
        raise ValueError("settings: expected at least one EvaluationSettings, got none")
    shared = {f.name for f in fields(EvaluationSettings)} - set(VARYING)
    for i, s in enumerate(settings[1:], start=1):
        for name in sorted(shared):
            if getattr(s, name) != getattr(settings[0], name):
                raise ValueError(
                    f"settings[{i}].{name}: expected {getattr(settings[0], name)!r} like settings[0]"
                    f" (only {', '.join(VARYING)} may differ), got {getattr(s, name)!r}"
                )


def _scale_groups(settings: list[EvaluationSettings]) -> dict[float, tuple[tuple[int, ...], bool]]:
    """Covariance scale -> (every Q asked at that scale, sorted; whether any asks the exact NLL)."""
    groups: dict[float, tuple[set, bool]] = {}
    for s in settings:
        qs, exact = groups.get(s.cov_scale, (set(), False))
        groups[s.cov_scale] = (qs | set(s.qs), exact or s.exact)
    return {s: (tuple(sorted(qs)), exact) for s, (qs, exact) in groups.items()}


#: What a run keeps of one step's NLL at each Q, GOSPA and Theorem 1 check: the numbers its arrays take
#: (an NLLResult also holds its best association; a Theorem1Result its NLL and GOSPA results).
_NLL_FIELDS = (*NLL_STEP, "exact")


@dataclass(frozen=True, slots=True)
class _StepNLL:
    """The NLL part of one step at one covariance scale, for every Q asked at that scale (a run keeps
    one per step until its arrays are made: only their numbers)."""

    qs: tuple  # the Qs of the rows of nll
    nll: np.ndarray  # (len(qs), len(_NLL_FIELDS)) float: the NLLResult's fields (exact as 0 / 1)
    cardinality: CardinalityScore
    calibration: dict  # Q -> CalibrationCounts at that Q's best association (the Qs whose counts are kept)
    exact_value: float | None  # None: not asked, or intractable
    seconds: float


@dataclass(frozen=True, slots=True)
class _StepPoints:
    """The point estimates of one step and the single-frame measures of them (labels not yet relabelled)."""

    states: np.ndarray  # (m, d) estimates
    labels: np.ndarray  # (m,) their labels, as given
    estimator_empty: bool
    truth_points: np.ndarray  # (n, e) the truth on the distance columns (e = distance_dims)
    points: np.ndarray  # (m, e) the estimates on them
    covs: np.ndarray | None  # (m, e, e) the estimates' covariance blocks there (None: not Gaussian)
    values: dict  # measure -> {variable: number}: the stepwise measures' values (stepwise.step_values)


def _evaluated_density(tempered, X: np.ndarray, settings: EvaluationSettings):
    """The (tempered) density the NLL is evaluated on, before any covariance scale, and the truth on it.

    The position marginal (or the full state) of the tempered posterior ``tempered``
    (:func:`probed` at ``settings`` without its covariance scale). A
    covariance scale commutes with both (it multiplies covariances only; the
    marginal takes their blocks, tempering touches r only), so each scale is
    applied to this one marginal: the same numbers as scaling first.
    """
    if settings.marginal == "position":
        return marginal(tempered, POSITION), X[:, list(POSITION)]
    return tempered, X


def _step_nll(
    base,
    y,
    settings: EvaluationSettings,
    cov_scale: float,
    qs,
    exact: bool,
    card: CardinalityScore | None,
    calibrated=None,
    clock: CPUClock | None = None,
) -> _StepNLL:
    """One step's NLL for every Q in ``qs`` at ``cov_scale`` of ``base``, with its calibration counts.

    ``card``: the step's cardinality score if already computed at another
    scale (a covariance scale moves no weight or existence probability, so
    the cardinality distribution is the same). ``calibrated``: the Qs whose
    calibration counts a run keeps (the largest Q of each settings); None: every Q. ``clock``: a
    :class:`~nllbench.measures.run.cpu_clock.CPUClock` charged the NLL (the ranking, the exact NLL),
    the cardinality and the calibration counts (each's own work), or None.
    """
    clock = clock or CPUClock()
    dens_eval = base if cov_scale == 1.0 else scale_covariances(base, cov_scale)
    if cov_scale != 1.0:  # a covariance scale is part of building the density
        clock.charge(DENSITIES)
    t_nll = time.perf_counter()
    results = dict(zip(qs, nll_many(dens_eval, y, qs, budget=settings.budget), strict=True))
    seconds = time.perf_counter() - t_nll
    clock.charge("nll")
    if card is None:  # else computed at another scale (and charged there)
        card = cardinality_score(dens_eval, y.shape[0])
        clock.charge("cardinality")
    kept = results if calibrated is None else {q: results[q] for q in sorted(calibrated)}
    calibration = {q: step_counts(dens_eval, y, r, card) for q, r in kept.items()}
    clock.charge("calibration")
    exact_value = _exact_nll(dens_eval, y) if exact else None
    rows = np.array([[getattr(results[q], name) for name in _NLL_FIELDS] for q in qs], dtype=float)
    clock.charge("nll")
    return _StepNLL(qs, rows, card, calibration, exact_value, seconds)


def _step_points(density, X, k, estimates, settings: EvaluationSettings, lo, hi, clock=None) -> _StepPoints:
    """Step ``k``'s estimates and the stepwise measures; ``density``: the tempered posterior
    (:func:`probed` at ``settings`` without its covariance scale). ``clock``: a
    :class:`~nllbench.measures.run.cpu_clock.CPUClock` charged the estimates and each measure, or None."""
    states, labels, covs = _step_estimates(density, k, estimates, settings)
    empty = states.shape[0] == 0 and np.floor(expected_cardinality(density) + 0.5) >= 1
    e = settings.distance_dims
    if e > X.shape[1]:
        raise ValueError(f"distance_dims: expected at most {X.shape[1]} (the state dimension), got {e}")
    pts, truth_pts = states[:, :e], X[:, :e]
    if settings.distance == "mahalanobis" and covs is None:
        source = "the filter's own estimates" if estimates is not None else "the posterior is not Gaussian"
        raise ValueError(
            f"distance: 'mahalanobis' needs the estimates' covariances; step {k} has none ({source})"
        )
    view = StepView(k, density, X, truth_pts, pts, states, labels, lo, hi, settings)
    if clock is not None:
        clock.charge(ESTIMATES)
    return _StepPoints(
        states,
        labels,
        bool(empty),
        truth_pts,
        pts,
        None if covs is None else covs[:, :e, :e],
        step_values(view, clock),
    )


def _run_metrics(steps, settings: EvaluationSettings, sequence, seconds: float) -> RunMetrics:
    """The :class:`RunMetrics` of ``settings`` from the shared per-step parts."""
    clear, identity, tgospa_result, hota_result = sequence
    K, Q = len(steps), len(settings.qs)
    nlls = [nlls[settings.cov_scale] for nlls, _ in steps]
    points = [pt for _, pt in steps]
    last = settings.qs[-1]  # calibration and the exact NLL's fallback: at the largest Q

    def per_step(get, dtype=float):
        return np.array([get(x) for x in nlls], dtype=dtype).reshape(K)

    def per_step_q(name, dtype=float):
        j = _NLL_FIELDS.index(name)
        return np.array([[n.nll[n.qs.index(q), j] for q in settings.qs] for n in nlls], dtype=dtype).reshape(
            K, Q
        )

    def exact(n):
        return n.nll[n.qs.index(last), 0] if n.exact_value is None else n.exact_value  # 0: "value"

    values = [pt.values for pt in points]
    stepwise = {m.name: run_arrays(m, values) for m in stepwise_measures()}
    return RunMetrics(
        qs=settings.qs,
        nll={name: per_step_q(name) for name in NLL_STEP},
        nll_exact=per_step_q("exact", bool),
        clear=clear,
        identity=identity,
        seconds=seconds,
        settings=settings,
        stepwise={name: arrays for name, arrays in stepwise.items() if arrays is not None},
        nll_exact_value=per_step(exact) if settings.exact else None,
        nll_exact_available=per_step(lambda n: n.exact_value is not None, bool) if settings.exact else None,
        nll_seconds=sum(n.seconds for n in nlls),
        tgospa=tgospa_result,
        hota=hota_result,
        calibration=tuple(n.calibration[last] for n in nlls),
        cardinality=tuple(n.cardinality for n in nlls),
        estimator_empty_steps=sum(pt.estimator_empty for pt in points),
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


def _exact_nll(density, y: np.ndarray) -> float | None:
    """The exact NLL, or None where the subset DP is intractable (flagged, not guessed)."""
    try:
        return nll(density, y, method="exact").value
    except ValueError:
        return None


def _step_estimates(density, k: int, estimates: Sequence | None, settings: EvaluationSettings):
    """Step ``k``'s states (m, d), a writable copy of their labels (m,), their covariances (m, d, d) or None.

    The filter's own estimates when given (no covariances), else the estimator's.
    """
    if estimates is None:
        est = estimate(density, settings.existence_threshold, settings.estimator)
        return est.states, est.labels.copy(), est.covs
    states, labels = (np.asarray(a) for a in estimates[k])
    return states.reshape(-1, density.dim), labels.astype(np.int64).copy(), None
