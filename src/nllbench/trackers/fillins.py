"""What is filled in for what a tracker does not report: :class:`FillIns` and :class:`ScoreCalibration`.

The undetected-object intensity (a uniform Poisson box), the default
covariance and the score -> existence map, each checked when it is made;
:mod:`nllbench.trackers.build` applies them and :mod:`nllbench.trackers.fitting`
fits them on a calibration set.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import expit

from nllbench.engine.densities import PPP


@dataclass(frozen=True)
class ScoreCalibration:
    """r = expit(intercept + slope * score).

    Fitted by :func:`nllbench.trackers.fitting.fit_score_calibration`.
    """

    intercept: float
    slope: float
    n_rows: int = 0
    n_detections: int = 0
    threshold: float | None = None  # the matching distance of the detection outcomes it was fitted on

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
            **({} if self.threshold is None else {"threshold": self.threshold}),
        }


@dataclass(frozen=True)
class ConstantExistence:
    """r = ``r`` for every track: the share of a calibration set's rows that match a truth.

    Fitted by :func:`nllbench.trackers.fitting.fit_constant_existence` (the
    maximum-likelihood constant: the matched share ``n_matched / n_rows``).
    """

    r: float
    n_rows: int = 0
    n_matched: int = 0
    threshold: float | None = None  # the matching distance of the detection outcomes it was fitted on
    matching: str = "distance"  # or "iou": MOTChallenge boxes, CLEAR's matching at IoU >= threshold

    def __post_init__(self) -> None:
        r = float(self.r)
        if not 0.0 <= r <= 1.0:
            raise ValueError(f"r: expected a probability in [0, 1], got {self.r!r}")
        if self.matching not in ("distance", "iou"):
            raise ValueError(f"matching: expected 'distance' or 'iou', got {self.matching!r}")
        object.__setattr__(self, "r", r)

    def provenance(self) -> dict:
        return {
            "kind": "constant",
            "fitted_by": "share of calibration rows matched to a truth",
            "r": self.r,
            "n_rows": self.n_rows,
            "n_matched": self.n_matched,
            **({} if self.threshold is None else {"threshold": self.threshold}),
            **({} if self.matching == "distance" else {"matching": self.matching}),
        }


@dataclass(frozen=True)
class FillIns:
    """What is filled in for what the tracker does not report.

    undetected_rate : total rate of the uniform undetected-object PPP (0: none).
    fov_low, fov_high : (d,) box of that PPP in the state columns (None if rate is 0).
    default_std : std of the isotropic covariance used when the table has none.
    calibration : score -> r map, used when the table has a score column.
    existence_one : r = 1 when the table has neither r nor score.
    fitted_rate : how the rate was obtained (a dict from
        :func:`nllbench.trackers.fitting.fit_undetected_rate`) or None.
    constant_existence : r of every track when the table has neither r nor
        score (:class:`ConstantExistence`; not with ``existence_one``).
    """

    undetected_rate: float = 0.0
    fov_low: tuple[float, ...] | None = None
    fov_high: tuple[float, ...] | None = None
    default_std: float | None = None
    calibration: ScoreCalibration | None = None
    existence_one: bool = False
    fitted_rate: dict | None = None
    constant_existence: ConstantExistence | None = None

    def __post_init__(self) -> None:
        rate = float(self.undetected_rate)
        if not math.isfinite(rate) or rate < 0:
            raise ValueError(f"undetected_rate: expected a non-negative number, got {self.undetected_rate!r}")
        object.__setattr__(self, "undetected_rate", rate)
        if self.constant_existence is not None:
            if not isinstance(self.constant_existence, ConstantExistence):
                raise TypeError(
                    "constant_existence: expected a ConstantExistence, "
                    f"got {type(self.constant_existence).__name__}"
                )
            if self.existence_one:
                raise ValueError("existence_one, constant_existence: expected one of them, got both")
        if rate > 0 and (self.fov_low is None or self.fov_high is None):
            raise ValueError("fov: expected the box (low..., high...) of the undetected-object intensity")
        if self.fov_low is not None or self.fov_high is not None:
            check_box(self.fov_low, self.fov_high)
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


def check_box(low, high) -> None:
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
