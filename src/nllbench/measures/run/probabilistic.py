"""P-GOSPA per step and PT-GOSPA over the run, of a run's posteriors (``docs/pgospa.md``).

Used by :func:`nllbench.measures.run.evaluate.evaluate_runs`, so that ``nllbench
evaluate`` and ``nllbench score`` compute them alike:

* **Density.** The posterior after the existence probe (``temper``) and at each
  covariance scale of the evaluation (the probe ``cov_scale``: P-GOSPA depends
  on the covariances, as the NLL does), marginalised on the distance columns of
  GOSPA (the first ``distance_dims`` state components; x, y by default), so
  that P-GOSPA and GOSPA see the same components with the same c and p.
* **P-GOSPA** (alpha = 2, the paper's): :func:`~nllbench.measures.point.pgospa.pgospa`
  of the truth (points: r = 1, zero covariance; the truth plays x, so its
  unassigned existence is *missed*) against that density: for a mixture, the
  hypothesis-weighted mean of the authors' ``computePGOSPAStepPMBM.m``; the
  Poisson part is ignored, as they do.
* **PT-GOSPA** (alpha = 2): :func:`~nllbench.measures.tracks.ptgospa.ptgospa` of
  the truth trajectories against the Bernoullis of each step's best global
  hypothesis (the one the point estimator reads), with their existence
  probabilities, means and covariances (a Gaussian mixture moment-matched) and
  their labels as identities (an unlabelled or repeated label a fresh identity
  at every step, as for the point estimates), with trajectory GOSPA's c, p and
  gamma.
* **Families.** Both apply to multi-Bernoulli posteriors (MB, MBM, PMB, PMBM):
  a PHD's Poisson intensity or a CPHD's i.i.d. cluster process has no
  Bernoulli, and P-GOSPA is not defined for it (the authors define it between
  multi-Bernoulli densities). For such a run both are None (absent from the
  metrics file, never NaN).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from nllbench.engine.densities import PMBM, MultiBernoulli
from nllbench.engine.transforms import marginal, scale_covariances
from nllbench.measures.point.pgospa import pgospa, single_object_moments
from nllbench.measures.run.run_sequence import fresh_identities
from nllbench.measures.tracks.ptgospa import PTGOSPAResult, ptgospa

#: The order P-GOSPA's per-step arrays are listed in (:class:`PGOSPASteps`).
PGOSPA_FIELDS = ("value", "localization", "existence_mismatch", "missed", "false")


@dataclass(frozen=True)
class PGOSPASteps:
    """P-GOSPA (alpha = 2) of every step of a run.

    value : (K,) float
        P-GOSPA per step (for a mixture: the hypothesis-weighted mean of the values).
    localization, existence_mismatch, missed, false : (K,) float
        Its terms, p-th-power units; per step they sum to the weighted mean of value^p
        (``value ** p`` for p = 1 or one hypothesis).
    """

    value: np.ndarray
    localization: np.ndarray
    existence_mismatch: np.ndarray
    missed: np.ndarray
    false: np.ndarray

    @property
    def mean(self) -> float:
        """The run's mean P-GOSPA over steps (0 for a run without steps)."""
        return float(np.mean(self.value)) if self.value.size else 0.0


@dataclass(frozen=True)
class StepBernoullis:
    """One step's P-GOSPA terms and the Bernoullis of its best hypothesis on the distance columns.

    terms : (5,) float, in the order of :data:`PGOSPA_FIELDS`
    r : (m,) existence probabilities; means : (m, e); covs : (m, e, e); labels : (m,) int (-1: none)
    """

    terms: np.ndarray
    r: np.ndarray
    means: np.ndarray
    covs: np.ndarray
    labels: np.ndarray


def applies(density) -> bool:
    """Whether P-GOSPA and PT-GOSPA apply to ``density``: a multi-Bernoulli density (not a PHD or CPHD's)."""
    return isinstance(density, (MultiBernoulli, PMBM))


def distance_marginal(density, dims: int):
    """``density`` on its first ``dims`` state components (itself when that is all of them)."""
    return density if dims == density.dim else marginal(density, tuple(range(dims)))


def step_bernoullis(base, truth_pts: np.ndarray, cov_scale: float, c: float, p: float) -> StepBernoullis:
    """P-GOSPA of ``truth_pts`` against ``base`` (a distance marginal) at ``cov_scale``, best hypothesis."""
    dens = base if cov_scale == 1.0 else scale_covariances(base, cov_scale)
    r = pgospa(truth_pts, dens, c=c, p=p)
    terms = np.array([r.value, r.localization, r.existence_mismatch, r.missed, r.false])
    best = dens if isinstance(dens, MultiBernoulli) else dens.hypothesis(int(dens.weights.argmax()))
    e = truth_pts.shape[1]
    if len(best) == 0:
        empty = np.empty(0)
        return StepBernoullis(terms, empty, np.empty((0, e)), np.empty((0, e, e)), empty.astype(np.int64))
    means, covs = single_object_moments(best.densities)
    labels = best.labels.astype(np.int64) if best.labels is not None else np.full(len(best), -1)
    return StepBernoullis(terms, best.r.copy(), means, covs, labels)


def run_measures(steps, truth_pts, truth_ids, settings) -> tuple[PGOSPASteps, PTGOSPAResult]:
    """The run's P-GOSPA per step and PT-GOSPA from its :class:`StepBernoullis` (one per step).

    ``truth_pts``, ``truth_ids``: the truth per step on the distance columns and its identities;
    ``settings``: the run's :class:`~nllbench.measures.run.evaluate.EvaluationSettings`
    (``cutoff``, ``p``, ``tgospa_gamma``).
    """
    terms = np.array([s.terms for s in steps], dtype=float).reshape(len(steps), len(PGOSPA_FIELDS))
    per_step = PGOSPASteps(*(np.ascontiguousarray(terms[:, j]) for j in range(len(PGOSPA_FIELDS))))
    ids, fresh = [], -1
    for s in steps:  # fresh identities numbered across the run, as for the point estimates
        labels, fresh = fresh_identities(s.labels.copy(), fresh)
        ids.append(labels)
    result = ptgospa(
        truth_pts,
        truth_ids,
        [s.means for s in steps],
        ids,
        settings.cutoff,
        settings.p,
        settings.tgospa_gamma,
        estimate_existence=[s.r for s in steps],
        estimate_covariances=[s.covs for s in steps],
    )
    return per_step, result
