"""The names of nllbench's measures and NLL terms, declared once.

Metrics files, the per-step cube, the tables and the figures all use these
spellings; every other module imports them from here (the engine declares the
NLL's terms, :data:`NLL_TERMS`, beside the NLL).
"""

from __future__ import annotations

#: The NLL decomposition (:meth:`nllbench.engine.nll.NLLResult.terms`): the terms sum to the value
#: (Pinto et al., IEEE SPL 2021, eq. (10) and the discussion after it); declared with the result
#: record in the engine, which stands below the measures.
from nllbench.engine.result import NLL_TERMS

#: The NLL's value, its Murty-budget bounds and its decomposition, per step and Q
#: (metrics-file variables ``nll_<name>``).
NLL_STEP = ("value", "lower", "upper", *NLL_TERMS)
#: The decomposition's terms as table measures and figure series (``nll_<term>``).
NLL_TERM_MEASURES = tuple(f"nll_{t}" for t in NLL_TERMS)
#: The same as table measures: ``nll`` for the value, ``nll_<name>`` for the rest.
NLL_STEP_MEASURES = tuple("nll" if t == "value" else f"nll_{t}" for t in NLL_STEP)

#: Per-step trajectory-GOSPA terms (p-th-power units): their sums over steps add up to tgospa ** p.
TGOSPA_TERMS = ("tgospa_localization", "tgospa_missed", "tgospa_false", "tgospa_switches")

#: Per-step Theorem 1 check of a run: the NLL of the theorem's PMB, the bound, their difference.
THEOREM1_STEP = ("theorem1_lhs", "theorem1_rhs", "theorem1_difference")

#: Per-step trajectory-GOSPA decomposition and calibration counts of a metrics file
#: (part of :data:`METRIC_STEP_VARIABLES`).
MEASURE_STEP_VARIABLES = (
    *TGOSPA_TERMS,
    "calibration_bernoullis",
    "calibration_explained",
    "calibration_r_sum",
    "calibration_brier_sum",
    "calibration_unassociated",
    "nees_pairs",
    "nees_sum",
    "nees_inside95",
    "cardinality_mean",
    "cardinality_low90",
    "cardinality_high90",
    "cardinality_covered90",
    "cardinality_log_score",
)

#: Per-step GOSPA, OSPA, counts and CLEAR MOT frame counts of a metrics file.
POINT_STEP_VARIABLES = (
    "gospa",
    "gospa_localization",
    "gospa_missed",
    "gospa_false",
    "ospa",
    "n_truth",
    "n_estimates",
    "clear_matches",
    "clear_misses",
    "clear_false_positives",
    "clear_switches",
    "clear_distance_sum",
)

#: Per-step variables of a metrics file (dimension ``step``); the last one,
#: ``theorem1_excluded``, is a count, not a measure.
METRIC_STEP_VARIABLES = (
    *POINT_STEP_VARIABLES,
    *MEASURE_STEP_VARIABLES,
    *THEOREM1_STEP,
    "theorem1_excluded",
)

#: Run-level point measures of every metrics file (Q-independent).
POINT_RUN = ("gospa_mean", "ospa_mean", "mota", "motp", "idf1", "theorem1_max_abs_difference")

#: Run-level T-GOSPA, HOTA and calibration scores of a metrics file (Q-independent); each is
#: tabulated when the file has it: brier/ece need some Bernoulli and anees/nees_inside95_share
#: some matched pair, so PHD/CPHD runs have no row for them (absent, never NaN).
MEASURE_RUN = (
    "tgospa",
    "hota",
    "deta",
    "assa",
    "loca",
    "brier",
    "ece",
    "anees",
    "nees_inside95_share",
    "cardinality_coverage90",
    "cardinality_log_score_mean",
)

#: The trajectory NLL's decomposition (``docs/trajectory.md``): the terms sum to the value. The
#: engine declares the same tuple (:data:`nllbench.engine.trajectory.TRAJECTORY_TERMS`; a test keeps
#: them equal); spelled out here so that reading the names does not load the compiled engine.
TRAJECTORY_TERMS = ("localization", "presence", "false", "undetected", "association")
#: The decomposition's terms as table measures (``trajectory_nll_<term>``).
TRAJECTORY_TERM_MEASURES = tuple(f"trajectory_nll_{t}" for t in TRAJECTORY_TERMS)
#: Run-level trajectory NLL of a metrics file and a table (nats per run, the sum over its windows):
#: the value at Q, its certified bounds and its terms. Present only for labelled outputs (absent
#: for PHD/CPHD posteriors, whose metrics file says why in the attribute ``trajectory_nll``).
TRAJECTORY_RUN = ("trajectory_nll", "trajectory_nll_lower", "trajectory_nll_upper", *TRAJECTORY_TERM_MEASURES)
#: Per-window trajectory NLL of a metrics file (dimension ``trajectory_window``; one window: the run).
TRAJECTORY_WINDOW = (
    "trajectory_window_first_frame",
    "trajectory_window_last_frame",
    "trajectory_window_nll",
    "trajectory_window_nll_lower",
)
