"""Score any tracker's output table: the NLL and every measure of ``evaluate``, with explicit fill-ins.

Pinto et al. (IEEE SPL 2021, Sec. II) note that any tracker reporting a set
of predictions with state uncertainties and/or existence probabilities is a
PMBM with one hypothesis and zero Poisson intensity. A tracks table
(:mod:`nllbench.trackers.tracks`) is turned into that density per frame, and what the
tracker does not report is filled in, explicitly:

* undetected objects: a uniform Poisson intensity of total rate ``rate``
  over a box (``undetected_rate``, ``fov``), or the rate fitted by maximum
  likelihood on a calibration set (:func:`fit_undetected_rate`);
* missing covariances: ``default_std`` * I;
* missing existence: r from a ``score`` column through a logistic
  calibration fitted on a calibration set (:func:`fit_score_calibration`),
  or r = 1 (``existence_one``; any missed or false object then makes the NLL
  infinite, and a warning says so), or a constant r fitted as the share of a
  calibration set's rows that match a truth (:func:`fit_constant_existence`).

The densities then go through :func:`nllbench.measures.run.evaluate.evaluate_run`, the
same code as ``nllbench evaluate``, so the metrics file has the same layout.

This module gathers the public names of scoring; each job has its own module:
:mod:`~nllbench.trackers.inputs` (reading the tables),
:mod:`~nllbench.trackers.fillins` (what is filled in),
:mod:`~nllbench.trackers.build` (the per-frame densities),
:mod:`~nllbench.trackers.fitting` (fill-ins fitted on a calibration set),
:mod:`~nllbench.trackers.score_tables` (:func:`score` in memory),
:mod:`~nllbench.trackers.metrics_file` (:func:`score_file`, the metrics file) and
:mod:`~nllbench.trackers.score_runs` (:func:`score_pair` and :func:`score_batch`: runs given as
files, scored as ``nllbench score`` does).
"""

from __future__ import annotations

from nllbench.trackers.build import EXISTENCE_ONE_WARNING, build_densities
from nllbench.trackers.fillins import ConstantExistence, FillIns, ScoreCalibration
from nllbench.trackers.fitting import (
    calibration_nll,
    detection_outcomes,
    fit_constant_existence,
    fit_score_calibration,
    fit_undetected_rate,
)
from nllbench.trackers.inputs import truth_from_scenario
from nllbench.trackers.metrics_file import score_file
from nllbench.trackers.score_runs import score_batch, score_pair, score_pair_without_nll
from nllbench.trackers.score_tables import ScoreResult, score, score_attrs

__all__ = [
    "EXISTENCE_ONE_WARNING",
    "ConstantExistence",
    "FillIns",
    "ScoreCalibration",
    "ScoreResult",
    "build_densities",
    "calibration_nll",
    "detection_outcomes",
    "fit_constant_existence",
    "fit_score_calibration",
    "fit_undetected_rate",
    "score",
    "score_attrs",
    "score_batch",
    "score_file",
    "score_pair",
    "score_pair_without_nll",
    "truth_from_scenario",
]
