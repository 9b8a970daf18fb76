"""One declaration per measure: its variables, its scores, what it needs and where it is written.

A measure (the NLL, GOSPA, trajectory GOSPA, HOTA, ...) is declared once, in
:data:`MEASURES`, as a :class:`MeasureDeclaration`: the metrics-file variables
it owns (:class:`Variable`: name, CF description, dimensions), the per-run
scores the tables carry (:class:`Score`: figure label, direction, whether the
leaderboard ranks it), whether it needs track identities, the posterior
families it applies to and the evaluation settings it owns. Every other table
of names is derived from this registry: the name tuples of
:mod:`nllbench.measures.names` and its :data:`~nllbench.measures.names.METRICS_VARIABLES`
(which :mod:`nllbench.store.metrics` writes and reads by), the directions of
:mod:`nllbench.pipeline.statistics` (``BETTER_LOW``, ``PAIRED_ONLY``, ``RANKED``,
``Q_MEASURES``), the figure and caption labels of :mod:`nllbench.pipeline.plots`,
the leaderboard's labels (:mod:`nllbench.pipeline.report`) and the identity
measures of :mod:`nllbench.trackers.checks`.

This module imports nothing but the NLL's term names (the engine declares them
beside the NLL) and the kinds of declarations (:mod:`nllbench.measures.declaring`),
so the store, the pipeline and the trackers read it without loading a numerical
library beyond numpy. A measure's code (its ``step`` and ``run`` functions, its
settings class) is named by ``"module:name"`` and imported when first used.

Distances are GOSPA-type with cut-off c, order p and the Euclidean base distance on
positions; "^p" marks the p-th-power terms whose sum is the measure to the p-th power.
"""

from __future__ import annotations

from nllbench.engine.result import NLL_TERMS

# the kinds of declarations and of variables, re-exported: declarations.Score, declarations.RUN, ...
from nllbench.measures.declaring import (  # noqa: F401
    DIRECTIONS,
    EVERY_POSTERIOR,
    PER_Q,
    POSTERIORS,
    RUN,
    SECTIONS,
    STEP,
    STEP_Q,
    MeasureDeclaration,
    MetricsVariable,
    Score,
    Variable,
    count,
    flag,
    length,
    nats,
    resolve,
    share,
)

#: The coordinates every metrics file has (the measures' own coordinates are declared with them).
COORDINATES = (
    count("step", "time step, from 0", ("step",)),
    count("q", "Murty budget Q (associations per global hypothesis)", ("q",)),
)

_NLL_TERM_MEANING = {
    "localization": "-sum log(r p(y)) over matched pairs",
    "false": "-sum log(1 - r) over unmatched Bernoullis",
    "missed": "objects left to the Poisson part",
    "cardinality": "-log(n! p(n)) of an i.i.d. cluster",
    "mixture": "-log weight of the best global hypothesis",
    "association": "association uncertainty, <= 0",
}

#: The trajectory NLL's decomposition (``docs/trajectory.md``): the terms sum to the value. The
#: engine declares the same tuple (:data:`nllbench.engine.trajectory_nll.TRAJECTORY_TERMS`; a test keeps
#: them equal); spelled out here so that reading the names does not load the compiled engine.
TRAJECTORY_TERMS = ("localization", "presence", "false", "undetected", "association")

NLL = MeasureDeclaration(
    "nll",
    "the NLL of the true set under the posterior, per step and Murty budget Q (Pinto et al. 2021)",
    "nll",
    (
        nats("nll_value", "NLL of the truth under the posterior", STEP_Q),
        nats("nll_lower", "lower bound on the exact NLL", STEP_Q),
        nats("nll_upper", "upper bound on the exact NLL", STEP_Q),
        *(nats(f"nll_{t}", f"NLL term: {_NLL_TERM_MEANING[t]}", STEP_Q) for t in NLL_TERMS),
        flag("nll_exact", "whether nll_value summed every association", "bounded exact", STEP_Q, False),
        nats("nll_exact_value", "exact NLL, else nll_value at the largest Q", tabulated=False),
        flag("nll_exact_available", "whether the exact NLL was tractable", "fallback exact", tabulated=False),
        nats("nll_mean", "mean NLL over steps, inf if a step is", PER_Q, False),
        nats("nll_finite_mean", "mean NLL over the finite steps", PER_Q, False),
        count("nll_infinite_steps", "steps with an infinite NLL", PER_Q, False),
    ),
    scores=(
        Score(
            "nll",
            "NLL",
            axis="NLL per step (nats)",
            better="lower",
            leaderboard="NLL",
            q_dependent=True,
            source="nll_mean",
        ),
        Score("nll_exact", better="lower", source="nll_exact_value"),
    ),
    settings=("qs", "marginal", "budget", "exact"),
    settings_class="nllbench.measures.run.settings:NLLSettings",
)

GOSPA = MeasureDeclaration(
    "gospa",
    "GOSPA of the point estimates (Rahmathullah et al. 2017)",
    "point",
    (
        length("gospa", "GOSPA of the point estimates"),
        length("gospa_localization", "GOSPA localization term", power=True),
        length("gospa_missed", "GOSPA missed-object term", power=True),
        length("gospa_false", "GOSPA false-estimate term", power=True),
        length("gospa_mean", "mean GOSPA over steps", RUN),
    ),
    scores=(
        Score(
            "gospa_mean",
            "GOSPA",
            axis="GOSPA per step (position units)",
            better="lower",
            leaderboard="GOSPA",
            column=True,
        ),
    ),
    settings=("cutoff", "p"),
    settings_class="nllbench.measures.run.settings:GOSPASettings",
    step="nllbench.measures.run.stepwise:gospa_step",
)

OSPA = MeasureDeclaration(
    "ospa",
    "OSPA of the point estimates (Schuhmacher et al. 2008)",
    "point",
    (length("ospa", "OSPA of the point estimates"), length("ospa_mean", "mean OSPA over steps", RUN)),
    scores=(Score("ospa_mean", "OSPA", better="lower"),),
    step="nllbench.measures.run.stepwise:ospa_step",
)

COUNTS = MeasureDeclaration(
    "counts",
    "the numbers of true objects and point estimates per step",
    "point",
    (count("n_truth", "true objects"), count("n_estimates", "point estimates")),
    step="nllbench.measures.run.stepwise:counts_step",
)

CLEAR_MOT = MeasureDeclaration(
    "clear_mot",
    "CLEAR MOT: MOTA and MOTP (Bernardin and Stiefelhagen 2008)",
    "point",
    (
        count("clear_matches", "CLEAR MOT matches"),
        count("clear_misses", "CLEAR MOT misses"),
        count("clear_false_positives", "CLEAR MOT false positives"),
        count("clear_switches", "CLEAR MOT identity switches"),
        length("clear_distance_sum", "CLEAR MOT sum of match distances"),
        share("mota", "MOTA", RUN),
        length("motp", "MOTP, mean match distance", RUN),
        count("clear_total_switches", "CLEAR MOT identity switches, run total", RUN, False),
        count("clear_total_matches", "CLEAR MOT matches, run total", RUN, False),
        count("clear_total_misses", "CLEAR MOT misses, run total", RUN, False),
        count("clear_total_false_positives", "CLEAR MOT false positives, run total", RUN, False),
        count("clear_total_num_objects", "CLEAR MOT true objects, run total", RUN, False),
    ),
    scores=(
        Score(
            "mota",
            "MOTA",
            axis="MOTA (fraction)",
            better="higher",
            leaderboard="MOTA",
            column=True,
            needs_identities=True,
        ),
        Score("motp", "MOTP", better="lower"),
        Score("switches", needs_identities=True, source="clear_total_switches"),
    ),
    needs_identities=True,
    settings=("threshold", "strict_threshold", "clear_rule", "distance", "distance_dims"),
    settings_class="nllbench.measures.run.settings:MatchingSettings",
)

IDENTITY = MeasureDeclaration(
    "identity",
    "identity measures: IDF1, IDP, IDR (Ristani et al. 2016)",
    "point",
    (
        share("idf1", "IDF1", RUN),
        share("idp", "identity precision IDP", RUN, False),
        share("idr", "identity recall IDR", RUN, False),
        count("idtp", "identity true positives IDTP", RUN, False),
        count("idfp", "identity false positives IDFP", RUN, False),
        count("idfn", "identity false negatives IDFN", RUN, False),
    ),
    scores=(
        Score("idf1", "IDF1", caption="IDF1", axis="IDF1 (fraction)", better="higher", needs_identities=True),
    ),
    needs_identities=True,
)

THEOREM1 = MeasureDeclaration(
    "theorem1",
    "the check of Theorem 1 (Pinto et al. 2021) on the point estimates' PMB",
    "theorem1",
    (
        nats("theorem1_lhs", "Theorem 1 left side: NLL of the estimates' PMB"),
        nats("theorem1_rhs", "Theorem 1 right side"),
        nats("theorem1_difference", "Theorem 1 left side minus right side"),
        count("theorem1_excluded", "true objects outside the field of view", tabulated=False),
        nats("theorem1_max_abs_difference", "Theorem 1 largest absolute difference of the sides", RUN),
    ),
    settings=("theorem_rho", "theorem_scale"),
    settings_class="nllbench.measures.run.settings:Theorem1Settings",
    step="nllbench.measures.run.stepwise:theorem1_step",
)

TGOSPA = MeasureDeclaration(
    "tgospa",
    "trajectory GOSPA of the estimated trajectories (Garcia-Fernandez et al. 2020)",
    "measure",
    (
        length("tgospa_localization", "trajectory GOSPA localization term", power=True),
        length("tgospa_missed", "trajectory GOSPA missed-object term", power=True),
        length("tgospa_false", "trajectory GOSPA false-estimate term", power=True),
        length("tgospa_switches", "trajectory GOSPA switch term", power=True),
        length("tgospa", "trajectory GOSPA", RUN),
        length("tgospa_gamma", "trajectory GOSPA switch cost gamma", RUN, False),
        count("tgospa_n_switches", "trajectory GOSPA full switches", RUN, False),
        count("tgospa_n_half_switches", "trajectory GOSPA half switches", RUN, False),
    ),
    scores=(
        Score("tgospa", "T-GOSPA", better="lower", column=True, needs_identities=True),
        Score("tgospa_switches", needs_identities=True),
        Score("tgospa_localization", caption="T-GOSPA localisation"),
    ),
    needs_identities=True,
    settings=("tgospa_gamma",),
    settings_class="nllbench.measures.run.settings:TGOSPASettings",
)

HOTA = MeasureDeclaration(
    "hota",
    "HOTA and its DetA, AssA and LocA, means over alpha (Luiten et al. 2021)",
    "measure",
    (
        share("hota", "HOTA, mean over alpha", RUN),
        share("deta", "DetA, mean over alpha", RUN),
        share("assa", "AssA, mean over alpha", RUN),
        share("loca", "LocA, mean over alpha", RUN),
        share("alpha", "HOTA localization threshold alpha", ("alpha",), False),
        share("hota_alpha", "HOTA at alpha", ("alpha",), False),
        share("deta_alpha", "DetA at alpha", ("alpha",), False),
        share("assa_alpha", "AssA at alpha", ("alpha",), False),
        share("loca_alpha", "LocA at alpha", ("alpha",), False),
        count("hota_tp", "HOTA true positives at alpha", ("alpha",), False),
        count("hota_fn", "HOTA false negatives at alpha", ("alpha",), False),
        count("hota_fp", "HOTA false positives at alpha", ("alpha",), False),
    ),
    scores=(
        Score("hota", "HOTA", axis="HOTA (fraction)", better="higher", column=True, needs_identities=True),
        Score("deta", caption="DetA", better="higher"),
        Score("assa", caption="AssA", better="higher", needs_identities=True),
        Score("loca", better="higher"),
    ),
    needs_identities=True,
    settings=("hota_threshold",),
    settings_class="nllbench.measures.run.settings:HOTASettings",
)

CALIBRATION = MeasureDeclaration(
    "calibration",
    "calibration of the existence probabilities (Brier, ECE) and of the covariances (NEES)",
    "measure",
    (
        count("calibration_bernoullis", "Bernoullis of the best global hypothesis"),
        count("calibration_explained", "Bernoullis matched to a true object"),
        share("calibration_r_sum", "sum of the Bernoullis' existence probabilities"),
        share("calibration_brier_sum", "sum of (r - o)^2 over the Bernoullis"),
        count("calibration_unassociated", "1 if the truth has no association (NLL = inf)"),
        count("nees_pairs", "matched Gaussian Bernoulli-truth pairs"),
        share("nees_sum", "sum of the pairs' NEES"),
        count("nees_inside95", "pairs with NEES inside their 95 % ellipse"),
        share("calibration_brier_sum_total", "sum of (r - o)^2 over the run's Bernoullis", RUN, False),
        count("nees_dof", "sum of the pairs' NEES degrees of freedom", RUN, False),
        share("brier", "Brier score of the existence probabilities", RUN),
        share("ece", "expected calibration error of the existence probabilities", RUN),
        share("anees", "average NEES", RUN),
        share("nees_inside95_share", "share of pairs inside their 95 % ellipse", RUN),
        share("anees_ci95_low", "average NEES of a consistent posterior: 2.5 % quantile", RUN, False),
        share("anees_ci95_high", "average NEES of a consistent posterior: 97.5 % quantile", RUN, False),
        share("reliability_bin", "lower edge of the existence-probability bin", ("reliability_bin",), False),
        count("reliability_count", "Bernoullis with r in the bin", ("reliability_bin",), False),
        share("reliability_r_sum", "sum of r of the Bernoullis in the bin", ("reliability_bin",), False),
        count(
            "reliability_explained",
            "Bernoullis in the bin matched to a true object",
            ("reliability_bin",),
            False,
        ),
        share("nees_pit_bin", "lower edge of the NEES PIT bin", ("nees_pit_bin",), False),
        count("nees_pit_count", "pairs with chi2_cdf(NEES; d) in the bin", ("nees_pit_bin",), False),
    ),
    scores=(
        Score("brier", better="lower"),
        Score("ece", better="lower"),
        Score("anees", ideal=True),
        Score("nees_inside95_share", ideal=True),
    ),
    posteriors=frozenset({"pmbm"}),
)

CARDINALITY = MeasureDeclaration(
    "cardinality",
    "the posterior's cardinality distribution at the true count: 90 % interval and log score",
    "measure",
    (
        share("cardinality_mean", "mean number of objects under the posterior"),
        count("cardinality_low90", "lower end of the central 90 % cardinality interval"),
        count("cardinality_high90", "upper end of the central 90 % cardinality interval"),
        count("cardinality_covered90", "1 if the true count is in that interval"),
        nats("cardinality_log_score", "-log P(true number of objects)"),
        share("cardinality_coverage90", "share of steps with the true count in the 90 % interval", RUN),
        nats("cardinality_log_score_mean", "mean -log P(true number of objects)", RUN),
    ),
    scores=(Score("cardinality_coverage90", ideal=True), Score("cardinality_log_score_mean", better="lower")),
)

ENERGY_SCORE = MeasureDeclaration(
    "energy_score",
    "the set energy score of the posterior at the truth, by Monte Carlo (docs/scores.md)",
    "proper",
    (
        share("energy_score", "set energy score of the posterior at the truth"),
        share("energy_score_se", "Monte Carlo standard error of energy_score"),
        share("energy_score_mean", "mean set energy score over steps", RUN),
        share("energy_score_mean_se", "Monte Carlo standard error of energy_score_mean", RUN),
    ),
    scores=(Score("energy_score_mean", "energy score", axis="energy score per step", better="lower"),),
    settings=("proper_scores", "kernel_cov", "energy_samples"),
    settings_class="nllbench.measures.run.settings:ProperScoreSettings",
    required=False,
)

INTENSITY_SCORE = MeasureDeclaration(
    "intensity_score",
    "the quadratic intensity score of the posterior at the truth (docs/scores.md)",
    "proper",
    (
        share("intensity_score", "quadratic intensity score of the posterior at the truth"),
        share("intensity_score_mean", "mean quadratic intensity score over steps", RUN),
    ),
    scores=(
        Score("intensity_score_mean", "intensity score", axis="intensity score per step", better="lower"),
    ),
    required=False,
)

CARDINALITY_RPS = MeasureDeclaration(
    "cardinality_rps",
    "the ranked probability score of the cardinality at the true count (docs/scores.md)",
    "proper",
    (
        share("cardinality_rps", "ranked probability score of the cardinality at the true count"),
        share("cardinality_rps_mean", "mean cardinality ranked probability score over steps", RUN),
    ),
    scores=(
        Score(
            "cardinality_rps_mean",
            "card. RPS",
            caption="cardinality RPS",
            axis="cardinality RPS per step",
            better="lower",
        ),
    ),
    required=False,
)

PGOSPA = MeasureDeclaration(
    "pgospa",
    "P-GOSPA of the posterior's multi-Bernoulli density, alpha = 2 (Xia et al. 2024; docs/pgospa.md)",
    "measure",
    (
        length("pgospa", "P-GOSPA of the posterior (hypothesis-weighted mean)"),
        length("pgospa_localization", "P-GOSPA localization term", power=True),
        length("pgospa_existence_mismatch", "P-GOSPA existence-mismatch term", power=True),
        length("pgospa_missed", "P-GOSPA missed-object term", power=True),
        length("pgospa_false", "P-GOSPA false-object term", power=True),
        length("pgospa_mean", "mean P-GOSPA over steps", RUN),
    ),
    scores=(
        Score(
            "pgospa_mean",
            "P-GOSPA",
            axis="P-GOSPA per step (position units)",
            better="lower",
            leaderboard="P-GOSPA",
            column=True,
            not_applicable="not applicable: P-GOSPA scores multi-Bernoulli posteriors; a PHD/CPHD"
            " posterior has none (docs/pgospa.md)",
        ),
    ),
    posteriors=frozenset({"pmbm"}),
    required=False,
)

PTGOSPA = MeasureDeclaration(
    "ptgospa",
    "PT-GOSPA of the best hypothesis's labelled Bernoullis, alpha = 2 (Xia et al. 2025; docs/pgospa.md)",
    "measure",
    (
        length("ptgospa_localization", "PT-GOSPA localization term", power=True),
        length("ptgospa_existence_mismatch", "PT-GOSPA existence-mismatch term", power=True),
        length("ptgospa_missed", "PT-GOSPA missed-object term", power=True),
        length("ptgospa_false", "PT-GOSPA false-object term", power=True),
        length("ptgospa_switches", "PT-GOSPA switch term", power=True),
        length("ptgospa", "PT-GOSPA", RUN),
        count("ptgospa_n_switches", "PT-GOSPA full switches", RUN, False),
        count("ptgospa_n_half_switches", "PT-GOSPA half switches", RUN, False),
    ),
    scores=(
        Score("ptgospa", "PT-GOSPA", better="lower", needs_identities=True),
        Score("ptgospa_switches", needs_identities=True),
    ),
    posteriors=frozenset({"pmbm"}),
    needs_identities=True,
    required=False,
)

_WINDOW = ("trajectory_window",)

TRAJECTORY_NLL = MeasureDeclaration(
    "trajectory_nll",
    "the NLL of the true set of trajectories under the labelled posterior (docs/trajectory.md)",
    "trajectory",
    (
        nats("trajectory_nll", "trajectory NLL of the true set of trajectories, at Q", RUN),
        nats("trajectory_nll_lower", "lower bound on the exact trajectory NLL", RUN),
        nats("trajectory_nll_upper", "upper bound on the exact trajectory NLL", RUN),
        *(nats(f"trajectory_nll_{t}", f"trajectory NLL term: {t}", RUN) for t in TRAJECTORY_TERMS),
        nats("trajectory_nll_exact", "exact trajectory NLL", RUN, False),
        count("trajectory_nll_q", "Murty budget Q of the trajectory NLL", RUN, False),
        flag(
            "trajectory_nll_complete",
            "every association of the trajectory NLL listed",
            "incomplete complete",
            RUN,
            False,
        ),
        count("trajectory_window_first_frame", "first frame of the trajectory-NLL window", _WINDOW),
        count("trajectory_window_last_frame", "last frame of the trajectory-NLL window", _WINDOW),
        nats("trajectory_window_nll", "trajectory NLL of the window, at Q", _WINDOW),
        nats("trajectory_window_nll_lower", "lower bound on the window's exact trajectory NLL", _WINDOW),
    ),
    scores=(
        Score(
            "trajectory_nll",
            axis="trajectory NLL per run (nats)",
            better="lower",
            leaderboard="trajectory NLL",
            column=True,
            rank_heading="traj. NLL",
            not_applicable="not applicable: the posterior has no track labels (PHD/CPHD),"
            " or the tracker was scored without --trajectory",
            na_everywhere=True,
            q_dependent=True,
        ),
        Score("trajectory_nll_exact", better="lower"),
    ),
    posteriors=frozenset({"pmbm"}),
    needs_identities=True,
    required=False,
)

#: Every measure of nllbench, in the order their variables are written and their scores listed.
MEASURES: tuple[MeasureDeclaration, ...] = (
    NLL,
    GOSPA,
    OSPA,
    COUNTS,
    CLEAR_MOT,
    IDENTITY,
    THEOREM1,
    TGOSPA,
    HOTA,
    CALIBRATION,
    CARDINALITY,
    ENERGY_SCORE,
    INTENSITY_SCORE,
    CARDINALITY_RPS,
    TRAJECTORY_NLL,
    PGOSPA,
    PTGOSPA,
)


def stepwise_measures() -> tuple[MeasureDeclaration, ...]:
    """The measures computed step by step through their declaration's ``step`` function, in order."""
    return tuple(m for m in MEASURES if m.step)


def measures_of(section: str) -> tuple[MeasureDeclaration, ...]:
    """The measures written in ``section`` of a metrics file (:data:`SECTIONS`), in order."""
    if section not in SECTIONS:
        raise ValueError(f"section: expected one of {SECTIONS}, got {section!r}")
    return tuple(m for m in MEASURES if m.section == section)


def variables_of(
    sections, dims: tuple[str, ...] | None = None, tabulated: bool | None = None
) -> tuple[str, ...]:
    """The names of the variables of the measures in ``sections`` (of ``dims``, tabulated or not)."""
    return tuple(n for s in sections for m in measures_of(s) for n in m.names(dims, tabulated))


def declared_scores() -> tuple[Score, ...]:
    """Every declared score, in the order of :data:`MEASURES`."""
    return tuple(s for m in MEASURES for s in m.scores)
