"""Linear-Gaussian multi-object models: motion, sensor, clutter, survival and birth.

State (x, y, vx, vy), position measurements (x, y). Everything is a frozen
dataclass of arrays with documented shapes, validated at construction.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from nllbench.engine import validate as v
from nllbench.engine.densities import box_volume

# the birth and initial intensities are Gaussian mixtures; the name is re-exported here for
# the readers of a model (a scenario file's model is built from models.GaussianMixture)
from nllbench.engine.gaussian_mixture import GaussianMixture  # noqa: F401


def cv_matrices(T: float, q: float) -> tuple[np.ndarray, np.ndarray]:
    """Constant-velocity transition F and process noise Q for state (x, y, vx, vy).

    Q = q * [[T^3/3, T^2/2], [T^2/2, T]] per axis (continuous white-noise
    acceleration with spectral density q).
    """
    F = np.eye(4)
    F[0, 2] = F[1, 3] = T
    Q = np.zeros((4, 4))
    block = q * np.array([[T**3 / 3, T**2 / 2], [T**2 / 2, T]])
    for axis in range(2):
        idx = [axis, axis + 2]
        Q[np.ix_(idx, idx)] = block
    return F, Q


POSITION_H = np.array([[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]])


@dataclass(frozen=True)
class Model:
    """A linear-Gaussian multi-object model.

    Attributes
    ----------
    F, Q : (4, 4)
        Transition matrix and process-noise covariance (one step).
    H, R : (2, 4), (2, 2)
        Measurement matrix and noise covariance.
    p_survival, p_detection : float in [0, 1]
    clutter_rate : float >= 0
        Expected clutter measurements per scan, uniform over the field of view.
    fov_low, fov_high : (2,)
        Field of view (measurement space and clutter region).
    birth : GaussianMixture
        Poisson birth intensity per step (PHD, CPHD, PMBM, PMB filters).
    birth_r : (B,) float
        Existence probabilities of the multi-Bernoulli birth (MBM, MBM01
        filters): one Bernoulli per birth component, density N(means, covs)
        of ``birth``.
    initial : GaussianMixture
        Intensity of the objects present before the first step (Poisson).
    initial_r : (I,) float or None
        If set, the MBM and MBM01 filters start from a multi-Bernoulli with
        these existence probabilities and the densities N(means, covs) of
        ``initial`` (one Bernoulli per component) instead of a PPP; the
        other filters still read ``initial`` as a Poisson intensity.
    """

    F: np.ndarray
    Q: np.ndarray
    H: np.ndarray
    R: np.ndarray
    p_survival: float
    p_detection: float
    clutter_rate: float
    fov_low: np.ndarray
    fov_high: np.ndarray
    birth: GaussianMixture
    birth_r: np.ndarray
    initial: GaussianMixture
    initial_r: np.ndarray | None = None

    def __post_init__(self) -> None:
        F = v.as_float_array(self.F, "F")
        if F.shape != (4, 4):
            raise ValueError(f"F: expected shape (4, 4), got {F.shape}")
        Q, _ = v.covariances(np.asarray(self.Q, dtype=float)[None], "Q", 1, 4)
        H = v.as_float_array(self.H, "H")
        if H.shape != (2, 4):
            raise ValueError(f"H: expected shape (2, 4), got {H.shape}")
        R, _ = v.covariances(np.asarray(self.R, dtype=float)[None], "R", 1, 2)
        for name in ("p_survival", "p_detection"):
            p = float(getattr(self, name))
            if not 0.0 <= p <= 1.0:
                raise ValueError(f"{name}: expected a probability in [0, 1], got {p!r}")
            object.__setattr__(self, name, p)
        rate = float(self.clutter_rate)
        if not (np.isfinite(rate) and rate >= 0):
            raise ValueError(f"clutter_rate: expected a finite number >= 0, got {self.clutter_rate!r}")
        lo = v.vector(self.fov_low, "fov_low", 2)
        hi = v.vector(self.fov_high, "fov_high", 2)
        if np.any(hi <= lo):
            raise ValueError(f"fov_high: expected every upper corner above fov_low, got {lo}, {hi}")
        for name in ("birth", "initial"):
            gm = getattr(self, name)
            if not isinstance(gm, GaussianMixture) or gm.dim != 4:
                raise ValueError(f"{name}: expected a 4-D GaussianMixture")
        birth_r = v.probabilities(self.birth_r, "birth_r", len(self.birth))
        object.__setattr__(self, "F", F)
        object.__setattr__(self, "Q", Q[0])
        object.__setattr__(self, "H", H)
        object.__setattr__(self, "R", R[0])
        object.__setattr__(self, "clutter_rate", rate)
        object.__setattr__(self, "fov_low", lo)
        object.__setattr__(self, "fov_high", hi)
        object.__setattr__(self, "birth_r", birth_r)
        if self.initial_r is not None:
            initial_r = v.probabilities(self.initial_r, "initial_r", len(self.initial))
            object.__setattr__(self, "initial_r", initial_r)

    @property
    def fov_volume(self) -> float:
        """Volume of the field of view (:func:`nllbench.engine.densities.box_volume`)."""
        return float(box_volume(self.fov_low[None, :], self.fov_high[None, :])[0])

    @property
    def clutter_intensity(self) -> float:
        """kappa(z) inside the field of view: clutter_rate / volume."""
        return self.clutter_rate / self.fov_volume

    def replace(self, **changes) -> Model:
        return dataclasses.replace(self, **changes)
