"""A tracks table and its fill-ins become one PMBM per frame, with the provenance of each fill-in.

Pinto et al. (IEEE SPL 2021, Sec. II): a tracker's predictions with state
uncertainties and existence probabilities are a PMBM with one hypothesis;
what the table lacks comes from :class:`~nllbench.trackers.fillins.FillIns`.
"""

from __future__ import annotations

import warnings

import numpy as np

from nllbench.trackers.fillins import FillIns
from nllbench.trackers.tracks import TrackTable, densities

EXISTENCE_ONE_WARNING = (
    "no existence probability (column 'r') and no score calibration: every track is given r = 1, "
    "so any missed or false object makes that frame's NLL infinite"
)


def check_columns(table: TrackTable, fill: FillIns) -> None:
    """Refuse a tracks table that lacks a column ``fill`` does not make up for, naming the column.

    An existence probability (column ``r``; or ``score`` with a calibration;
    or a constant or r = 1 fill-in) and covariances (columns ``var_`` /
    ``cov_``, or a default standard deviation). Checked as soon as the
    tables are read (:func:`nllbench.trackers.inputs.read_tables`), before
    their frames are compared: the missing column is said first.
    """
    if table.r is None and table.score is not None and fill.calibration is None:
        raise ValueError(
            f"{table.label}: column 'score' needs a calibration to existence probabilities "
            "(--fit-score-on TRACKS TRUTH / calibration=fit_score_calibration(...))"
        )
    if table.r is None and table.score is None and fill.constant_existence is None and not fill.existence_one:
        raise ValueError(
            f"{table.label}: no column 'r' or 'score'; give a score column with a calibration, "
            "or ask for r = 1 explicitly (--existence-one / existence_one=True)"
        )
    if table.covs is None and fill.default_std is None:
        raise ValueError(
            f"{table.label}: no covariance columns (var_<a>, cov_<a>_<b>); "
            "give them or a default standard deviation (--default-std S)"
        )


def table_existence(table: TrackTable, fill: FillIns) -> tuple[np.ndarray, str]:
    """(N,) existence probability of each row (column r, score calibration or fill-in) and its source."""
    check_columns(table, fill)
    if table.r is not None:
        return np.nan_to_num(table.r), "column r"
    if table.score is not None:
        return fill.calibration(np.nan_to_num(table.score)), "score calibration"
    if fill.constant_existence is not None:
        r = fill.constant_existence.r
        return np.full(table.frame.size, r), f"r = {r:.6g} (constant, fitted)"
    warnings.warn(EXISTENCE_ONE_WARNING, UserWarning, stacklevel=3)
    return np.ones(table.frame.size), "r = 1 (assumed)"


def table_covariances(table: TrackTable, fill: FillIns) -> tuple[np.ndarray, str]:
    """(N, d, d) covariance of each row (columns var_/cov_ or the default std) and its source."""
    if table.covs is not None:
        return table.covs, "columns var_/cov_"
    check_columns(table, fill)
    d = len(table.state)
    covs = np.broadcast_to(fill.default_std**2 * np.eye(d), (table.frame.size, d, d)).copy()
    return covs, f"default std {fill.default_std}"


def build_densities(table: TrackTable, frames: np.ndarray, fill: FillIns):
    """(one PMBM per frame, provenance dict) from a validated tracks table and the fill-ins."""
    if fill.calibration is not None and table.score is None:
        raise ValueError(
            f"{table.label}: a score calibration was given but the table has no column 'score' "
            "(it would be silently unused)"
        )
    if fill.constant_existence is not None and (table.r is not None or table.score is not None):
        raise ValueError(
            f"{table.label}: a constant existence was given but the table has a column "
            f"'{'r' if table.r is not None else 'score'}' (it would be silently unused)"
        )
    r, r_source = table_existence(table, fill)
    covs, cov_source = table_covariances(table, fill)
    dens = densities(table, frames, r, covs, fill.ppp(len(table.state)))
    prov = {
        "existence": r_source,
        "covariance": cov_source,
        "undetected": (
            {"kind": "none (zero intensity)"}
            if fill.undetected_rate == 0
            else {
                "kind": "uniform Poisson",
                "rate": fill.undetected_rate,
                "fov_low": list(fill.fov_low),
                "fov_high": list(fill.fov_high),
            }
        ),
    }
    if fill.fitted_rate is not None:
        prov["undetected"]["fitted"] = fill.fitted_rate
    if fill.calibration is not None and table.score is not None:
        prov["score_calibration"] = fill.calibration.provenance()
    if fill.constant_existence is not None:
        prov["constant_existence"] = fill.constant_existence.provenance()
    if table.ignored:
        prov["ignored_columns"] = list(table.ignored)
    return dens, prov
