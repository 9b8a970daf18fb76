"""The names of nllbench's measures and NLL terms, declared once.

Metrics files, the per-step cube, the tables and the figures all use these
spellings; every other module imports them from here (the engine declares the
NLL's terms, :data:`NLL_TERMS`, beside the NLL).
"""

from __future__ import annotations

from typing import NamedTuple

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

#: Per-step proper scores beyond the NLL of a metrics file (``step``; present when the evaluation
#: computed them, ``proper_scores``): the set energy score and its Monte Carlo standard error, the
#: quadratic intensity score (absent where it has no closed form) and the cardinality RPS
#: (:mod:`nllbench.measures.proper_run`, docs/scores.md).
PROPER_STEP = ("energy_score", "energy_score_se", "intensity_score", "cardinality_rps")
#: Their run means (metrics-file scalars and per-run table measures, q = 0) and the standard error
#: of the energy score's run mean.
PROPER_RUN = ("energy_score_mean", "energy_score_mean_se", "intensity_score_mean", "cardinality_rps_mean")
#: The three proper scores' run means: summarised, compared in pairs and ranked; lower is better.
PROPER_SCORES = ("energy_score_mean", "intensity_score_mean", "cardinality_rps_mean")
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


class MetricsVariable(NamedTuple):
    """How one variable of a metrics file is described and stored (:data:`METRICS_VARIABLES`).

    long_name : str
        CF ``long_name``. It names the unit where the ``units`` attribute cannot: "nats" for
        negative log-likelihoods, "state units" for distances.
    units : str or None
        CF ``units`` (a UDUNITS string): ``"1"`` for dimensionless numbers (shares, scores, and
        negative log-likelihoods, whose unit, the nat, has no UDUNITS symbol: UDUNITS reads
        ``"nat"`` as nano-atmospheres). None: no ``units`` attribute, for counts and flags
        (dimensionless, CF 3.1) and for distances, which are in the unit of the scenario's
        state (not recorded by nllbench).
    kind : str
        ``"float"`` (float64), ``"count"`` (integers; int64 in memory) or ``"flag"`` (0/1,
        int8 in memory, with CF ``flag_values`` and ``flag_meanings``).
    flag_meanings : str
        For a flag: the CF ``flag_meanings`` of 0 and 1, space separated.
    """

    long_name: str
    units: str | None
    kind: str = "float"
    flag_meanings: str = ""


def _nats(long_name: str) -> MetricsVariable:
    """A negative log-likelihood (or a sum or difference of them): nats, CF units "1"."""
    return MetricsVariable(f"{long_name} (nats)", "1")


def _length(long_name: str, power: bool = False) -> MetricsVariable:
    """A distance (``power``: a sum of distances to the p-th power) in the scenario's state units."""
    return MetricsVariable(f"{long_name} (state units{'^p' if power else ''})", None)


def _count(long_name: str) -> MetricsVariable:
    return MetricsVariable(long_name, None, "count")


def _share(long_name: str) -> MetricsVariable:
    return MetricsVariable(long_name, "1")


#: Every variable of a metrics file (schema version 3), with its CF long name, units and kind: the
#: one table :mod:`nllbench.store.metrics` writes the attributes from and reads the types by, and
#: docs/store.md lists. Distances are GOSPA-type with cut-off c, order p and the Euclidean base
#: distance on positions; "^p" marks the p-th-power terms whose sum is the measure to the p-th power.
METRICS_VARIABLES: dict[str, MetricsVariable] = {
    # coordinates
    "step": _count("time step, from 0"),
    "q": _count("Murty budget Q (associations per global hypothesis)"),
    "alpha": _share("HOTA localization threshold alpha"),
    "reliability_bin": _share("lower edge of the existence-probability bin"),
    "nees_pit_bin": _share("lower edge of the NEES PIT bin"),
    # the NLL per step and Q
    "nll_value": _nats("NLL of the truth under the posterior"),
    "nll_lower": _nats("lower bound on the exact NLL"),
    "nll_upper": _nats("upper bound on the exact NLL"),
    "nll_localization": _nats("NLL term: -sum log(r p(y)) over matched pairs"),
    "nll_false": _nats("NLL term: -sum log(1 - r) over unmatched Bernoullis"),
    "nll_missed": _nats("NLL term: objects left to the Poisson part"),
    "nll_cardinality": _nats("NLL term: -log(n! p(n)) of an i.i.d. cluster"),
    "nll_mixture": _nats("NLL term: -log weight of the best global hypothesis"),
    "nll_association": _nats("NLL term: association uncertainty, <= 0"),
    "nll_exact": MetricsVariable("whether nll_value summed every association", None, "flag", "bounded exact"),
    "nll_exact_value": _nats("exact NLL, else nll_value at the largest Q"),
    "nll_exact_available": MetricsVariable(
        "whether the exact NLL was tractable", None, "flag", "fallback exact"
    ),
    # per step: point estimates
    "gospa": _length("GOSPA of the point estimates"),
    "gospa_localization": _length("GOSPA localization term", power=True),
    "gospa_missed": _length("GOSPA missed-object term", power=True),
    "gospa_false": _length("GOSPA false-estimate term", power=True),
    "ospa": _length("OSPA of the point estimates"),
    "n_truth": _count("true objects"),
    "n_estimates": _count("point estimates"),
    "clear_matches": _count("CLEAR MOT matches"),
    "clear_misses": _count("CLEAR MOT misses"),
    "clear_false_positives": _count("CLEAR MOT false positives"),
    "clear_switches": _count("CLEAR MOT identity switches"),
    "clear_distance_sum": _length("CLEAR MOT sum of match distances"),
    "theorem1_lhs": _nats("Theorem 1 left side: NLL of the estimates' PMB"),
    "theorem1_rhs": _nats("Theorem 1 right side"),
    "theorem1_difference": _nats("Theorem 1 left side minus right side"),
    "theorem1_excluded": _count("true objects outside the field of view"),
    # per step: trajectory GOSPA and calibration
    "tgospa_localization": _length("trajectory GOSPA localization term", power=True),
    "tgospa_missed": _length("trajectory GOSPA missed-object term", power=True),
    "tgospa_false": _length("trajectory GOSPA false-estimate term", power=True),
    "tgospa_switches": _length("trajectory GOSPA switch term", power=True),
    "calibration_bernoullis": _count("Bernoullis of the best global hypothesis"),
    "calibration_explained": _count("Bernoullis matched to a true object"),
    "calibration_r_sum": _share("sum of the Bernoullis' existence probabilities"),
    "calibration_brier_sum": _share("sum of (r - o)^2 over the Bernoullis"),
    "calibration_unassociated": _count("1 if the truth has no association (NLL = inf)"),
    "nees_pairs": _count("matched Gaussian Bernoulli-truth pairs"),
    "nees_sum": _share("sum of the pairs' NEES"),
    "nees_inside95": _count("pairs with NEES inside their 95 % ellipse"),
    "cardinality_mean": _share("mean number of objects under the posterior"),
    "cardinality_low90": _count("lower end of the central 90 % cardinality interval"),
    "cardinality_high90": _count("upper end of the central 90 % cardinality interval"),
    "cardinality_covered90": _count("1 if the true count is in that interval"),
    "cardinality_log_score": _nats("-log P(true number of objects)"),
    # per Q
    "nll_mean": _nats("mean NLL over steps, inf if a step is"),
    "nll_finite_mean": _nats("mean NLL over the finite steps"),
    "nll_infinite_steps": _count("steps with an infinite NLL"),
    # per run
    "gospa_mean": _length("mean GOSPA over steps"),
    "ospa_mean": _length("mean OSPA over steps"),
    "mota": _share("MOTA"),
    "motp": _length("MOTP, mean match distance"),
    "idf1": _share("IDF1"),
    "theorem1_max_abs_difference": _nats("Theorem 1 largest absolute difference of the sides"),
    "clear_total_switches": _count("CLEAR MOT identity switches, run total"),
    "clear_total_matches": _count("CLEAR MOT matches, run total"),
    "clear_total_misses": _count("CLEAR MOT misses, run total"),
    "clear_total_false_positives": _count("CLEAR MOT false positives, run total"),
    "clear_total_num_objects": _count("CLEAR MOT true objects, run total"),
    "idp": _share("identity precision IDP"),
    "idr": _share("identity recall IDR"),
    "idtp": _count("identity true positives IDTP"),
    "idfp": _count("identity false positives IDFP"),
    "idfn": _count("identity false negatives IDFN"),
    "tgospa": _length("trajectory GOSPA"),
    "tgospa_gamma": _length("trajectory GOSPA switch cost gamma"),
    "tgospa_n_switches": _count("trajectory GOSPA full switches"),
    "tgospa_n_half_switches": _count("trajectory GOSPA half switches"),
    "hota": _share("HOTA, mean over alpha"),
    "deta": _share("DetA, mean over alpha"),
    "assa": _share("AssA, mean over alpha"),
    "loca": _share("LocA, mean over alpha"),
    "calibration_brier_sum_total": _share("sum of (r - o)^2 over the run's Bernoullis"),
    "nees_dof": _count("sum of the pairs' NEES degrees of freedom"),
    "cardinality_coverage90": _share("share of steps with the true count in the 90 % interval"),
    "cardinality_log_score_mean": _nats("mean -log P(true number of objects)"),
    "brier": _share("Brier score of the existence probabilities"),
    "ece": _share("expected calibration error of the existence probabilities"),
    "anees": _share("average NEES"),
    "nees_inside95_share": _share("share of pairs inside their 95 % ellipse"),
    "anees_ci95_low": _share("average NEES of a consistent posterior: 2.5 % quantile"),
    "anees_ci95_high": _share("average NEES of a consistent posterior: 97.5 % quantile"),
    # per alpha, per bin
    "hota_alpha": _share("HOTA at alpha"),
    "deta_alpha": _share("DetA at alpha"),
    "assa_alpha": _share("AssA at alpha"),
    "loca_alpha": _share("LocA at alpha"),
    "hota_tp": _count("HOTA true positives at alpha"),
    "hota_fn": _count("HOTA false negatives at alpha"),
    "hota_fp": _count("HOTA false positives at alpha"),
    "reliability_count": _count("Bernoullis with r in the bin"),
    "reliability_r_sum": _share("sum of r of the Bernoullis in the bin"),
    "reliability_explained": _count("Bernoullis in the bin matched to a true object"),
    "nees_pit_count": _count("pairs with chi2_cdf(NEES; d) in the bin"),
    # per step and per run: proper scores beyond the NLL (dimensionless, kernel-embedding units)
    "energy_score": _share("set energy score of the posterior at the truth"),
    "energy_score_se": _share("Monte Carlo standard error of energy_score"),
    "intensity_score": _share("quadratic intensity score of the posterior at the truth"),
    "cardinality_rps": _share("ranked probability score of the cardinality at the true count"),
    "energy_score_mean": _share("mean set energy score over steps"),
    "energy_score_mean_se": _share("Monte Carlo standard error of energy_score_mean"),
    "intensity_score_mean": _share("mean quadratic intensity score over steps"),
    "cardinality_rps_mean": _share("mean cardinality ranked probability score over steps"),
}

# The run's trajectory NLL (labelled outputs only; docs/trajectory.md), declared with the rest.
METRICS_VARIABLES.update(
    {
        "trajectory_nll": _nats("trajectory NLL of the true set of trajectories, at Q"),
        "trajectory_nll_lower": _nats("lower bound on the exact trajectory NLL"),
        "trajectory_nll_upper": _nats("upper bound on the exact trajectory NLL"),
        **{
            f"trajectory_nll_{t}": _nats(f"trajectory NLL term: {t}")
            for t in ("localization", "presence", "false", "undetected", "association")
        },
        "trajectory_nll_exact": _nats("exact trajectory NLL"),
        "trajectory_nll_q": _count("Murty budget Q of the trajectory NLL"),
        "trajectory_nll_complete": MetricsVariable(
            "every association of the trajectory NLL listed", None, "flag", "incomplete complete"
        ),
        "trajectory_window_first_frame": _count("first frame of the trajectory-NLL window"),
        "trajectory_window_last_frame": _count("last frame of the trajectory-NLL window"),
        "trajectory_window_nll": _nats("trajectory NLL of the window, at Q"),
        "trajectory_window_nll_lower": _nats("lower bound on the window's exact trajectory NLL"),
    }
)
