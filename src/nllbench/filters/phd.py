"""Gaussian-mixture PHD (Vo & Ma 2006) and CPHD (Vo, Vo & Cantoni 2007) filters.

Pure steps on frozen states: ``*_predict(state, model) -> state`` and
``*_update(state, Z, model, settings) -> state``; ``run_*`` loops over the
measurement sets and returns the posterior after every update. Components
carry integer labels (tags): a birth component gets a new label, an updated
component keeps its predicted parent's label, a merged component the label
of its heaviest member.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.special import gammaln, logsumexp

from nllbench.engine.densities import IIDCluster
from nllbench.engine.gaussian_mixture import GaussianMixture, Gaussians
from nllbench.filters.gaussian import (
    LabelledIntensity,
    detection_terms,
    predict_intensity,
    prune_and_merge,
)
from nllbench.filters.loop import FilterSteps, run_steps
from nllbench.options import MAX_CAP, option
from nllbench.simulation.models import Model


@dataclass(frozen=True)
class PHDSettings:
    """Mixture reduction: prune weights <= prune, merge within squared Mahalanobis merge, keep cap."""

    # options --phd-prune, --phd-merge, --phd-cap; config keys filter.phd_* (nllbench.options)
    prune: float = option(1e-5, "(C)PHD pruning threshold", "number", low=0)
    merge: float = option(4.0, "(C)PHD merging distance", "number", low=0)
    cap: int = option(100, "(C)PHD maximum components", "integer", low=1, high=MAX_CAP)

    def __post_init__(self) -> None:
        if not self.prune >= 0:
            raise ValueError(f"phd_prune: expected a weight >= 0, got {self.prune!r}")
        if not self.merge >= 0:
            raise ValueError(f"phd_merge: expected a distance >= 0, got {self.merge!r}")
        if int(self.cap) != self.cap or self.cap < 1:
            raise ValueError(f"phd_cap: expected a positive integer, got {self.cap!r}")


def phd_predict(state: LabelledIntensity, model: Model) -> LabelledIntensity:
    """Survival (P_S) and motion of every component, plus the birth intensity (:func:`predict_intensity`)."""
    return predict_intensity(state, model)


def phd_correct(state: LabelledIntensity, Z: np.ndarray, model: Model) -> LabelledIntensity:
    """GM-PHD corrector (Vo & Ma 2006, Table I, step 3), without mixture reduction."""
    gm = state.mixture
    J, nz = len(gm), Z.shape[0]
    missed = gm.scaled(1.0 - model.p_detection)
    if not (J and nz):
        return state.with_mixture(missed)
    inn, log_q, m_det = detection_terms(gm, Z, model)
    log_kappa = math.log(model.clutter_intensity) if model.clutter_intensity > 0 else -math.inf
    log_den = np.logaddexp(log_kappa, logsumexp(log_q, axis=0))  # (nz,)
    w_det = np.exp(log_q - log_den[None, :])  # (J, nz)
    detected = GaussianMixture._trusted(
        w_det.T.ravel(),
        np.swapaxes(m_det, 0, 1).reshape(-1, 4),
        np.tile(inn.P_upd, (nz, 1, 1)),
        np.tile(gm.labels, nz),
    )
    return state.with_mixture(GaussianMixture.concatenate([missed, detected]))


def reduce_intensity(state: LabelledIntensity, settings: PHDSettings = PHDSettings()) -> LabelledIntensity:
    """Prune, merge and cap the mixture (:func:`prune_and_merge`)."""
    return state.with_mixture(prune_and_merge(state.mixture, settings.prune, settings.merge, settings.cap))


def phd_update(
    state: LabelledIntensity, Z: np.ndarray, model: Model, settings: PHDSettings = PHDSettings()
) -> LabelledIntensity:
    """GM-PHD corrector (Vo & Ma 2006, Table I, step 3) then mixture reduction."""
    return reduce_intensity(phd_correct(state, Z, model), settings)


def run_phd(
    measurements: Sequence[np.ndarray],
    model: Model,
    settings: PHDSettings = PHDSettings(),
    progress: Callable[[int], None] | None = None,
    extract: Callable[[LabelledIntensity], object] | None = None,
) -> FilterSteps:
    """Posterior intensity after each update (step 0 starts from ``model.initial``).

    ``extract``, if given, is applied to each corrected intensity before reduction.
    """
    return run_steps(
        LabelledIntensity.start(model.initial),
        lambda s: phd_predict(s, model),
        lambda s, Z: phd_correct(s, Z, model),
        lambda s: reduce_intensity(s, settings),
        measurements,
        progress,
        extract,
    )


# ---------------------------------------------------------------------------
# CPHD
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class CPHDState:
    """CPHD state: cardinality pmf over 0..N_max (N_max + 1,) and the labelled intensity."""

    cardinality: np.ndarray
    intensity: LabelledIntensity

    def to_iid_cluster(self) -> IIDCluster:
        """The posterior as an ``nb.IIDCluster``: spatial density = intensity / its mass."""
        gm = self.intensity.mixture
        total = gm.weights.sum()
        if total <= 0:
            card = np.zeros_like(self.cardinality)
            card[0] = 1.0
            return IIDCluster(card, np.empty(0), gaussians=Gaussians(np.empty((0, 4)), np.empty((0, 4, 4))))
        # the validating constructor: exported covariances are symmetrised there
        return IIDCluster(self.cardinality, gm.weights / total, gaussians=Gaussians(gm.means, gm.covs))


def _log_poisson(n: np.ndarray, rate: float) -> np.ndarray:
    if rate == 0:
        return np.where(n == 0, 0.0, -np.inf)
    return n * math.log(rate) - rate - gammaln(n + 1)


def _normalise_log(logp: np.ndarray) -> np.ndarray:
    p = np.exp(logp - logsumexp(logp))
    return p / p.sum()


def cphd_initial(model: Model, max_cardinality: int) -> CPHDState:
    n = np.arange(max_cardinality + 1)
    card = _normalise_log(_log_poisson(n, float(model.initial.weights.sum())))
    return CPHDState(card, LabelledIntensity.start(model.initial))


def cphd_predict(state: CPHDState, model: Model) -> CPHDState:
    """Cardinality: binomial thinning by P_S convolved with the Poisson birth; intensity as the PHD."""
    N = state.cardinality.shape[0] - 1
    n = np.arange(N + 1)
    ps = model.p_survival
    with np.errstate(divide="ignore"):
        logp = np.log(state.cardinality)
        log_ps, log_qs = math.log(ps) if ps > 0 else -np.inf, math.log1p(-ps) if ps < 1 else -np.inf
    l_, n_ = np.meshgrid(n, n, indexing="ij")  # l: before, n: survivors
    valid = n_ <= l_
    with np.errstate(invalid="ignore"):
        log_binom = gammaln(l_ + 1) - gammaln(n_ + 1) - gammaln(np.maximum(l_ - n_, 0) + 1)
        term = log_binom + np.where(n_ > 0, n_ * log_ps, 0.0) + np.where(l_ > n_, (l_ - n_) * log_qs, 0.0)
    term = np.where(valid, term + logp[:, None], -np.inf)
    log_surv = logsumexp(term, axis=0)
    log_birth = _log_poisson(n, float(model.birth.weights.sum()))
    # convolution in log space: p(n) = sum_j birth(j) surv(n - j)
    conv = np.full(N + 1, -np.inf)
    for j in range(N + 1):
        conv[j:] = np.logaddexp(conv[j:], log_birth[j] + log_surv[: N + 1 - j])
    return CPHDState(_normalise_log(conv), phd_predict(state.intensity, model))


def _log_esf(log_values: np.ndarray) -> np.ndarray:
    """log of the elementary symmetric functions e_0..e_m of exp(log_values)."""
    m = log_values.shape[0]
    if m == 0:
        return np.zeros(1)
    scale = float(np.max(log_values))
    if scale == -math.inf:
        out = np.full(m + 1, -np.inf)
        out[0] = 0.0
        return out
    vals = np.exp(log_values - scale)
    e = np.zeros(m + 1)
    e[0] = 1.0
    for x in vals:
        e[1:] = e[1:] + x * e[:-1]
    with np.errstate(divide="ignore"):
        return np.log(e) + np.arange(m + 1) * scale


def _log_upsilon(
    log_esf: np.ndarray, u: int, n_max: int, m: int, clutter_rate: float, p_d: float, log_mass: float
) -> np.ndarray:
    """log Upsilon^u[v, Z](n) for n = 0..n_max (Vo, Vo & Cantoni 2007, eq. (14)) with |Z| = m."""
    n = np.arange(n_max + 1)[:, None]
    j = np.arange(m + 1)[None, :]
    k = n - j - u
    valid = (k >= 0) & (j <= m)
    log_clutter = _log_poisson(m - j, clutter_rate) + gammaln(m - j + 1)
    log_miss = math.log1p(-p_d) if p_d < 1 else -np.inf
    with np.errstate(invalid="ignore"):
        miss = np.where(k > 0, k * log_miss, 0.0)
        term = (
            log_clutter
            + gammaln(n + 1)
            - gammaln(np.maximum(k, 0) + 1)
            + miss
            - (j + u) * log_mass
            + log_esf[None, :]
        )
    return logsumexp(np.where(valid, term, -np.inf), axis=1)


def cphd_correct(state: CPHDState, Z: np.ndarray, model: Model) -> CPHDState:
    """GM-CPHD corrector (Vo, Vo & Cantoni 2007, Section IV), in log space, without reduction."""
    I = state.intensity.mixture
    N = state.cardinality.shape[0] - 1
    m = Z.shape[0]
    J = len(I)
    mass = float(I.weights.sum())
    p_d = model.p_detection
    with np.errstate(divide="ignore"):
        log_card = np.log(state.cardinality)
    if J == 0 or mass <= 0:
        # no intensity: every measurement is clutter, the cardinality is unchanged
        return state
    log_mass = math.log(mass)
    if m:
        inn, log_q, m_det = detection_terms(I, Z, model)
        # Lambda_z = <v, psi_z> <1, kappa> / kappa(z) = V * sum_i P_D w_i N_i(z)
        log_lambda = logsumexp(log_q, axis=0) + math.log(model.fov_volume)
    else:
        log_lambda = np.empty(0)
    e_all = _log_esf(log_lambda)
    ups0 = _log_upsilon(e_all, 0, N, m, model.clutter_rate, p_d, log_mass)
    ups1 = _log_upsilon(e_all, 1, N, m, model.clutter_rate, p_d, log_mass)
    log_den = logsumexp(ups0 + log_card)
    new_card = _normalise_log(ups0 + log_card)
    w_miss = I.weights * (1 - p_d) * math.exp(logsumexp(ups1 + log_card) - log_den)
    ws, ms, Ps, labs = [w_miss], [I.means], [I.covs], [I.labels]
    for z in range(m):
        e_minus = _log_esf(np.delete(log_lambda, z))
        ups1_z = _log_upsilon(e_minus, 1, N, m - 1, model.clutter_rate, p_d, log_mass)
        factor = logsumexp(ups1_z + log_card) - log_den + math.log(model.fov_volume)
        ws.append(np.exp(log_q[:, z] + factor))
        ms.append(m_det[:, z, :])
        Ps.append(inn.P_upd)
        labs.append(I.labels)
    lab = np.concatenate(labs)
    mixture = GaussianMixture._trusted(np.concatenate(ws), np.concatenate(ms), np.concatenate(Ps), lab)
    return CPHDState(new_card, state.intensity.with_mixture(mixture))


def reduce_cphd(state: CPHDState, settings: PHDSettings = PHDSettings()) -> CPHDState:
    """Mixture reduction of the CPHD intensity; the cardinality pmf is unchanged."""
    return CPHDState(state.cardinality, reduce_intensity(state.intensity, settings))


def cphd_update(
    state: CPHDState, Z: np.ndarray, model: Model, settings: PHDSettings = PHDSettings()
) -> CPHDState:
    """GM-CPHD corrector (Vo, Vo & Cantoni 2007, Section IV) then mixture reduction."""
    return reduce_cphd(cphd_correct(state, Z, model), settings)


def run_cphd(
    measurements: Sequence[np.ndarray],
    model: Model,
    max_cardinality: int,
    settings: PHDSettings = PHDSettings(),
    progress: Callable[[int], None] | None = None,
    extract: Callable[[CPHDState], object] | None = None,
) -> FilterSteps:
    """Posterior (cardinality pmf over 0..max_cardinality, intensity) after each update."""
    if max_cardinality < 0:
        raise ValueError(f"max_cardinality: expected a non-negative integer, got {max_cardinality!r}")
    return run_steps(
        cphd_initial(model, max_cardinality),
        lambda s: cphd_predict(s, model),
        lambda s, Z: cphd_correct(s, Z, model),
        lambda s: reduce_cphd(s, settings),
        measurements,
        progress,
        extract,
    )
