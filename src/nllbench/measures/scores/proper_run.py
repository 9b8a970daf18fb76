"""The proper scores of one evaluated run, step by step: what ``evaluate`` and ``score`` add beside the NLL.

At step k of a run with seed s, on the density the NLL is evaluated on (the
position marginal by default, after the calibration probes) and its truth Y_k,
with the kernel covariance R = kernel_cov * I (:mod:`nllbench.measures.scores.proper`,
``docs/scores.md``):

* the set energy score ``energy_score(density, Y_k, R, n_samples=N,
  seed=numpy.random.default_rng([s, k]))`` and its Monte Carlo standard
  error: each step draws its own samples from a generator seeded by the
  run's seed and the step, so a step's value does not depend on which other
  steps, probes or measures were evaluated, and a rerun gives the same bits;
* the quadratic intensity score ``intensity_score(density, Y_k, R)``; where
  it has no closed form at some step (a uniform box next to a correlated
  Gaussian, Laplace densities) it is left out for the whole run, with the
  reason, never a made-up number;
* the cardinality ranked probability score ``cardinality_rps(density, |Y_k|)``.

All three are finite wherever the density is defined, also where the NLL is
+inf (an MBM01 that misses an object). Lower is better for each.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from nllbench.measures.scores.proper import EnergyScoreResult, cardinality_rps, energy_score, intensity_score

#: The declared names of the three proper scores (:mod:`nllbench.measures.declarations`).
PROPER_MEASURES = ("energy_score", "intensity_score", "cardinality_rps")


def step_generator(seed: int, step: int) -> np.random.Generator:
    """The generator of step ``step``'s energy-score samples in a run of seed ``seed``.

    ``numpy.random.default_rng([seed, step])``: independent streams per step, reproducible.
    """
    return np.random.default_rng([int(seed), int(step)])


@dataclass(frozen=True)
class StepProperScores:
    """The proper scores of one step (see the module docstring).

    energy : the energy score's estimate, standard error and terms (None: not asked)
    intensity : the intensity score, or None where it has no closed form (``intensity_error`` says why)
        or where it was not asked (``intensity_error`` empty)
    rps : the cardinality RPS (None: not asked)
    """

    energy: EnergyScoreResult | None
    intensity: float | None
    intensity_error: str
    rps: float | None


def step_proper_scores(
    density,
    y: np.ndarray,
    kernel_cov: float,
    n_samples: int,
    seed: int,
    step: int,
    rps: float | None = None,
    skip=frozenset(),
    clock=None,
) -> StepProperScores:
    """The three scores of ``density`` at the truth ``y`` (n, d) of step ``step`` (module docstring).

    ``rps``: the step's cardinality RPS if already computed (a covariance
    scale changes no cardinality distribution). ``skip``: names of
    :data:`PROPER_MEASURES` not computed (None in their place). ``clock``: a
    :class:`~nllbench.measures.run.cpu_clock.CPUClock` charged each score computed, or None.
    """
    charge = clock.charge if clock is not None else lambda name: None
    es = intensity = None
    error = ""
    if "energy_score" not in skip:
        es = energy_score(density, y, kernel_cov, n_samples=n_samples, seed=step_generator(seed, step))
        charge("energy_score")
    if "intensity_score" not in skip:
        try:
            intensity = intensity_score(density, y, kernel_cov).value
        except ValueError as exc:  # no closed form for this density (a documented refusal, not a failure)
            error = f"step {step}: {exc}"
        charge("intensity_score")
    if "cardinality_rps" not in skip and rps is None:
        rps = cardinality_rps(density, y.shape[0])
        charge("cardinality_rps")
    return StepProperScores(es, intensity, error, rps)


@dataclass(frozen=True)
class ProperScores:
    """The proper scores of a run: (K,) arrays over its steps and how they were computed.

    Attributes
    ----------
    energy, energy_se : (K,) float or None
        Set energy score per step and its Monte Carlo (jackknife) standard error (None: not asked).
    intensity : (K,) float or None
        Quadratic intensity score per step; None when some step has no closed
        form (``intensity_unavailable`` gives the first such step and why) or when not asked.
    rps : (K,) float or None
        Cardinality ranked probability score per step (None: not asked).
    kernel_cov : float
        s of the kernel covariance R = s I (in the evaluated marginal's units squared).
    n_samples : int
        Samples per step of the energy score.
    seed : int
        The run's seed; step k's samples come from :func:`step_generator` (seed, k).
    intensity_unavailable : str
        Empty when ``intensity`` is given.
    seconds : float
        Wall time of the three scores over the run.
    """

    energy: np.ndarray
    energy_se: np.ndarray
    intensity: np.ndarray | None
    rps: np.ndarray
    kernel_cov: float
    n_samples: int
    seed: int
    intensity_unavailable: str = ""
    seconds: float = 0.0

    @classmethod
    def of_steps(cls, steps, kernel_cov: float, n_samples: int, seed: int, seconds: float) -> ProperScores:
        """The run's record from its :class:`StepProperScores`, in step order."""
        K = len(steps)
        errors = [s.intensity_error for s in steps if s.intensity is None]
        asked = not steps or steps[0].intensity is not None or steps[0].intensity_error
        intensity = None if errors else np.array([s.intensity for s in steps], dtype=float).reshape(K)
        energy = not steps or steps[0].energy is not None
        return cls(
            energy=np.array([s.energy.value for s in steps], dtype=float).reshape(K) if energy else None,
            energy_se=(
                np.array([s.energy.standard_error for s in steps], dtype=float).reshape(K) if energy else None
            ),
            intensity=intensity if asked else None,
            rps=np.array([s.rps for s in steps], dtype=float).reshape(K)
            if not steps or steps[0].rps is not None
            else None,
            kernel_cov=float(kernel_cov),
            n_samples=int(n_samples),
            seed=int(seed),
            intensity_unavailable=errors[0] if errors and asked else "",
            seconds=float(seconds),
        )

    def summary(self) -> dict:
        """Run means over steps (none for a run of no steps) and the standard error of the energy mean.

        The steps' samples are independent, so the standard error of the mean
        of K steps is sqrt(sum_k SE_k^2) / K.
        """
        arrays = [a for a in (self.energy, self.intensity, self.rps) if a is not None]
        K = arrays[0].shape[0] if arrays else 0
        if K == 0:
            return {}
        row = {}
        if self.energy is not None:
            row["energy_score_mean"] = float(np.mean(self.energy))
            row["energy_score_mean_se"] = math.sqrt(float(np.sum(self.energy_se**2))) / K
        if self.intensity is not None:
            row["intensity_score_mean"] = float(np.mean(self.intensity))
        if self.rps is not None:
            row["cardinality_rps_mean"] = float(np.mean(self.rps))
        return row

    def settings(self) -> dict:
        """How the scores were computed (a metrics file's ``proper_scores`` attribute, as JSON)."""
        return {
            "kernel_cov": self.kernel_cov,
            "energy_samples": self.n_samples,
            "seed": self.seed,
            "step_generator": "numpy.random.default_rng([seed, step])",
            "intensity_unavailable": self.intensity_unavailable,
        }
