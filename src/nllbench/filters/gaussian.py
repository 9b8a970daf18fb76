"""Vectorised Kalman and Gaussian-mixture operations shared by the filters.

Arrays hold many components at once: means (J, 4), covs (J, 4, 4); there is
no Python object per component. Textbook symbols: F, Q, H, R, S, K.
Intensities are :class:`nllbench.engine.gaussian_mixture.GaussianMixture` objects;
:class:`LabelledIntensity` adds the label counter the filters need.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from nllbench.engine.densities import PPP
from nllbench.engine.gaussian_mixture import GaussianMixture, Gaussians
from nllbench.simulation.models import Model


def kf_predict(
    means: np.ndarray, covs: np.ndarray, F: np.ndarray, Q: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """x = F x, P = F P F^T + Q for every component."""
    return means @ F.T, F @ covs @ F.T + Q


@dataclass(frozen=True)
class LabelledIntensity:
    """A filter's Gaussian-mixture intensity whose components carry labels, and the first unused label.

    mixture : GaussianMixture with labels (J,) int (a birth component gets a
        new label; an updated component keeps its parent's)
    next_label : int
    """

    mixture: GaussianMixture
    next_label: int

    @classmethod
    def start(cls, gm: GaussianMixture, first_label: int = 0) -> LabelledIntensity:
        """``gm``'s components (copied) labelled first_label, first_label + 1, ..."""
        J = len(gm)
        labels = np.arange(first_label, first_label + J)
        return cls(
            GaussianMixture._trusted(gm.weights.copy(), gm.means.copy(), gm.covs.copy(), labels),
            first_label + J,
        )

    @classmethod
    def empty(cls, dim: int, next_label: int = 0) -> LabelledIntensity:
        """No component; labels continue from ``next_label``."""
        none = GaussianMixture._trusted(
            np.empty(0), np.empty((0, dim)), np.empty((0, dim, dim)), np.empty(0, dtype=np.int64)
        )
        return cls(none, next_label)

    def with_mixture(self, mixture: GaussianMixture) -> LabelledIntensity:
        """Another labelled mixture (derived from this one) with the same label counter."""
        return LabelledIntensity(mixture, self.next_label)

    def to_ppp(self) -> PPP:
        """The intensity as an ``nb.PPP`` with its component labels.

        Through the validating constructor: the exported covariances are
        symmetrised there (the predicted F P F^T + Q may be off by rounding).
        """
        m = self.mixture
        return PPP.from_mixture(GaussianMixture(m.weights, m.means, m.covs, m.labels))


def predict_intensity(intensity: LabelledIntensity, model: Model) -> LabelledIntensity:
    """Survival (weights times P_S) and motion of every component, plus the birth intensity.

    The PHD predictor of Vo & Ma (2006), Table I, steps 1-2 (spawning omitted);
    also the prediction of the PMBM filter's PPP of undetected objects
    (Garcia-Fernandez et al. 2018, Section III-A). Birth components get new labels.
    """
    gm, birth = intensity.mixture, model.birth
    m, P = kf_predict(gm.means, gm.covs, model.F, model.Q)
    B = len(birth)
    new_labels = np.arange(intensity.next_label, intensity.next_label + B)
    predicted = GaussianMixture._trusted(
        np.concatenate([model.p_survival * gm.weights, birth.weights]),
        np.concatenate([m, birth.means]),
        np.concatenate([P, birth.covs]),
        np.concatenate([gm.labels, new_labels]),
    )
    return LabelledIntensity(predicted, intensity.next_label + B)


@dataclass(frozen=True)
class Innovation:
    """Per-component quantities of the Kalman update with a linear sensor.

    z_pred (J, 2), S (J, 2, 2), S_inv (J, 2, 2) (for gating distances),
    K (J, 4, 2) gain, P_upd (J, 4, 4) updated covariance (Joseph form);
    ``predicted`` holds the J predicted-measurement densities N(z; H m, S).
    """

    z_pred: np.ndarray
    S: np.ndarray
    S_inv: np.ndarray
    K: np.ndarray
    P_upd: np.ndarray
    predicted: Gaussians


def innovation(means: np.ndarray, covs: np.ndarray, H: np.ndarray, R: np.ndarray) -> Innovation:
    J, d = means.shape
    z_pred = means @ H.T
    PHt = covs @ H.T  # (J, 4, 2)
    S = H @ PHt + R
    S = 0.5 * (S + np.swapaxes(S, 1, 2))
    S_inv = np.linalg.inv(S) if J else np.empty((0, 2, 2))
    K = PHt @ S_inv
    IKH = np.eye(d) - K @ H
    P_upd = IKH @ covs @ np.swapaxes(IKH, 1, 2) + K @ R @ np.swapaxes(K, 1, 2)
    P_upd = 0.5 * (P_upd + np.swapaxes(P_upd, 1, 2))
    # S is symmetric positive definite (H P H^T + R with R > 0): no checks needed
    predicted = Gaussians._trusted(z_pred, S)
    return Innovation(z_pred, S, S_inv, K, P_upd, predicted)


def mahalanobis2(inn: Innovation, Z: np.ndarray) -> np.ndarray:
    """(J, n_z) squared Mahalanobis distances of measurements Z (n_z, 2)."""
    diff = Z[None, :, :] - inn.z_pred[:, None, :]
    return np.einsum("jni,jik,jnk->jn", diff, inn.S_inv, diff)


def log_likelihood(inn: Innovation, Z: np.ndarray) -> np.ndarray:
    """(J, n_z) log N(z; H m, S), by the densities' one Gaussian log-pdf (see Gaussians.logpdf)."""
    return inn.predicted.logpdf(Z)


def detection_terms(
    gm: GaussianMixture, Z: np.ndarray, model: Model
) -> tuple[Innovation, np.ndarray, np.ndarray]:
    """The detection part of a Gaussian-mixture intensity's update with measurements Z (n_z, 2).

    Returns the innovation of every component, log(P_D w_j N(z_l; H m_j, S_j))
    (J, n_z) (-inf where w_j = 0) and the updated means (J, n_z, 4): the terms of
    the GM-PHD corrector (Vo & Ma 2006, Table I, step 3), of the GM-CPHD's, and
    of the PMBM filter's new tracks (Garcia-Fernandez et al. 2018, Section IV-B).
    """
    inn = innovation(gm.means, gm.covs, model.H, model.R)
    with np.errstate(divide="ignore"):
        log_q = np.log(model.p_detection * gm.weights)[:, None] + log_likelihood(inn, Z)
    return inn, log_q, updated_means(gm.means, inn, Z)


def updated_means(means: np.ndarray, inn: Innovation, Z: np.ndarray) -> np.ndarray:
    """(J, n_z, 4): m + K (z - H m) for every component-measurement pair."""
    diff = Z[None, :, :] - inn.z_pred[:, None, :]
    return means[:, None, :] + np.einsum("jik,jnk->jni", inn.K, diff)


def moment_match(weights: np.ndarray, means: np.ndarray, covs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Single Gaussian with the mixture's mean and covariance (weights need not sum to 1)."""
    w = weights / weights.sum()
    m = w @ means
    diff = means - m
    P = np.einsum("j,jik->ik", w, covs) + np.einsum("j,ji,jk->ik", w, diff, diff)
    return m, 0.5 * (P + P.T)


def prune_and_merge(gm: GaussianMixture, prune: float, merge: float, cap: int) -> GaussianMixture:
    """Gaussian-mixture reduction of Vo & Ma (2006), Table II, of a labelled mixture ``gm``.

    Drop components with weight <= ``prune``; greedily merge every component
    within squared Mahalanobis distance ``merge`` (in its own covariance) of
    the heaviest remaining one (the merged component keeps the heaviest's
    label); keep the ``cap`` heaviest.
    """
    keep = gm.weights > prune
    w, m, P, lab = gm.weights[keep], gm.means[keep], gm.covs[keep], gm.labels[keep]
    if merge > 0 and w.size > 1:
        P_inv = np.linalg.inv(P)
        left = np.ones(w.size, dtype=bool)
        out_w, out_m, out_P, out_l = [], [], [], []
        while left.any():
            idx = np.flatnonzero(left)
            j = idx[np.argmax(w[idx])]
            diff = m[idx] - m[j]
            d2 = np.einsum("ni,nik,nk->n", diff, P_inv[idx], diff)
            group = idx[d2 <= merge]
            mm, PP = moment_match(w[group], m[group], P[group])
            out_w.append(w[group].sum())
            out_m.append(mm)
            out_P.append(PP)
            out_l.append(lab[j])
            left[group] = False
        w, m, P, lab = np.array(out_w), np.array(out_m), np.array(out_P), np.array(out_l, dtype=np.int64)
    if w.size > cap:
        top = np.argsort(-w, kind="stable")[:cap]
        w, m, P, lab = w[top], m[top], P[top], lab[top]
    d = gm.dim
    # moment matching keeps weights >= 0 and covariances symmetric positive definite
    return GaussianMixture._trusted(w, m.reshape(-1, d), P.reshape(-1, d, d), lab)
