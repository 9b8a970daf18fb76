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
beside the NLL), so the store, the pipeline and the trackers read it without
loading a numerical library beyond numpy.

Distances are GOSPA-type with cut-off c, order p and the Euclidean base distance on
positions; "^p" marks the p-th-power terms whose sum is the measure to the p-th power.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from nllbench.engine.result import NLL_TERMS


class MetricsVariable(NamedTuple):
    """How one variable of a metrics file is described and stored.

    :data:`nllbench.measures.names.METRICS_VARIABLES` maps every name to one.

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


@dataclass(frozen=True)
class Variable:
    """One variable of a metrics file, owned by one measure.

    name : str
        The variable's name in a metrics file.
    described : MetricsVariable
        Its CF description and kind.
    dims : tuple of str
        Its dimensions: ``("step",)`` per step, ``("step", "q")`` per step and Murty budget,
        ``()`` per run, or its own (``("alpha",)``, ``("reliability_bin",)``, ...).
    tabulated : bool
        Whether the tables read it under its own name, generically: a per-step variable becomes
        a series of the per-step cube, a per-run scalar a row of the per-run table (the
        section's name tuples in :mod:`nllbench.measures.names`). False for auxiliary counts
        and settings (``theorem1_excluded``, ``tgospa_gamma``, ...) and for variables the
        tables read by hand (``nll_exact_value``, ``trajectory_nll_exact``).
    """

    name: str
    described: MetricsVariable
    dims: tuple[str, ...] = ("step",)
    tabulated: bool = True


#: Where a direction says a measure is better: lower, higher.
DIRECTIONS = ("lower", "higher")


@dataclass(frozen=True)
class Score:
    """One number per run the tables carry (a ``measure`` of the per-run table), with its presentation.

    name : str
        The ``measure`` of the per-run table: a run-level :class:`Variable` of the same name,
        or a per-step one summed over steps (``tgospa_switches``), or a number read from
        ``source``.
    label : str
        Its short name in figures (empty: the figures have none).
    caption : str
        Its name in captions' running text where the figures have no label (empty: the label).
    axis : str
        A figure axis label with the unit (empty: none).
    better : str or None
        ``"lower"`` or ``"higher"`` (:data:`DIRECTIONS`): compared in pairs and ranked
        (tables/paired.csv, tables/ranking.csv). None: not ranked.
    ideal : bool
        A score whose ideal is a value, not an end (ANEES: the state dimension; a coverage:
        its nominal level): compared in pairs, never ranked. Needs ``better`` None.
    leaderboard : str
        Its column heading in the report's leaderboard, which ranks it (empty: not in it).
    q_dependent : bool
        Whether it depends on the Murty budget Q (its rows carry Q; the others have q = 0).
    needs_identities : bool
        Whether it needs track identities: not applicable to a tracks table without ``id``
        (its summary key is :data:`nllbench.trackers.checks.NA` there).
    source : str
        The variable of the same measure it is read from, where its name is none (``nll`` from
        ``nll_mean``, ``switches`` from ``clear_total_switches``); empty: ``name``.
    """

    name: str
    label: str = ""
    caption: str = ""
    axis: str = ""
    better: str | None = None
    ideal: bool = False
    leaderboard: str = ""
    q_dependent: bool = False
    needs_identities: bool = False
    source: str = ""


#: The sections of a metrics file, in order: each section's variables are named by its tuples in
#: :mod:`nllbench.measures.names` (``POINT_STEP_VARIABLES``, ``POINT_RUN``, ``THEOREM1_STEP``,
#: ``MEASURE_RUN``, ``PROPER_STEP``, ``TRAJECTORY_RUN``, ...), which the store and the tables read.
SECTIONS = ("nll", "point", "theorem1", "measure", "proper", "trajectory")

#: The posterior families a measure may apply to: a Poisson point process (the PHD filter's), an
#: i.i.d. cluster process (the CPHD filter's), a Poisson multi-Bernoulli mixture (PMB, PMBM, MBM).
POSTERIORS = ("ppp", "iid_cluster", "pmbm")
#: Point estimates: what every posterior family gives, and what every tracker's table is.
EVERY_POSTERIOR = frozenset(POSTERIORS)


@dataclass(frozen=True)
class MeasureDeclaration:
    """Everything nllbench knows of one measure, in one place.

    name : str
        The measure's name (its module's subject).
    title : str
        What it is, in a few words (docs, reviews).
    section : str
        The section of a metrics file its variables are written in (:data:`SECTIONS`).
    variables : tuple of Variable
        The metrics-file variables it owns, in the order they are written and tabulated.
    scores : tuple of Score
        Its per-run scores that carry a label, a direction or a leaderboard column.
    posteriors : frozenset of str
        The posterior families it applies to (:data:`POSTERIORS`); on the others its
        variables are absent, never NaN.
    needs_identities : bool
        Whether it reads track identities (labels of the estimates or Bernoullis).
    settings : tuple of str
        The fields of :class:`nllbench.measures.run.evaluate.EvaluationSettings` it owns.
    required : bool
        Whether every metrics file has its variables. False for a measure computed only when
        asked (the proper scores, the trajectory NLL) and for one added after metrics files were
        written without it: the reader and the tables skip its variables where a file lacks
        them (absent, never NaN), so older files still read.
    """

    name: str
    title: str
    section: str
    variables: tuple[Variable, ...]
    scores: tuple[Score, ...] = ()
    posteriors: frozenset[str] = EVERY_POSTERIOR
    needs_identities: bool = False
    settings: tuple[str, ...] = ()
    required: bool = True

    def names(self, dims: tuple[str, ...] | None = None, tabulated: bool | None = None) -> tuple[str, ...]:
        """The names of its variables (of dimensions ``dims``, tabulated or not, when given), in order."""
        return tuple(
            v.name
            for v in self.variables
            if (dims is None or v.dims == dims) and (tabulated is None or v.tabulated == tabulated)
        )


# --- the kinds of variables -------------------------------------------------------------------------

STEP, STEP_Q, RUN, PER_Q = ("step",), ("step", "q"), (), ("q",)


def _nats(name: str, long_name: str, dims=STEP, tabulated: bool = True) -> Variable:
    """A negative log-likelihood (or a sum or difference of them): nats, CF units "1"."""
    return Variable(name, MetricsVariable(f"{long_name} (nats)", "1"), dims, tabulated)


def _length(name: str, long_name: str, dims=STEP, tabulated: bool = True, power: bool = False) -> Variable:
    """A distance (``power``: a sum of distances to the p-th power) in the scenario's state units."""
    unit = f"(state units{'^p' if power else ''})"
    return Variable(name, MetricsVariable(f"{long_name} {unit}", None), dims, tabulated)


def _count(name: str, long_name: str, dims=STEP, tabulated: bool = True) -> Variable:
    return Variable(name, MetricsVariable(long_name, None, "count"), dims, tabulated)


def _share(name: str, long_name: str, dims=STEP, tabulated: bool = True) -> Variable:
    return Variable(name, MetricsVariable(long_name, "1"), dims, tabulated)


def _flag(name: str, long_name: str, meanings: str, dims=STEP, tabulated: bool = True) -> Variable:
    return Variable(name, MetricsVariable(long_name, None, "flag", meanings), dims, tabulated)


#: The coordinates every metrics file has (the measures' own coordinates are declared with them).
COORDINATES = (
    _count("step", "time step, from 0", ("step",)),
    _count("q", "Murty budget Q (associations per global hypothesis)", ("q",)),
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
        _nats("nll_value", "NLL of the truth under the posterior", STEP_Q),
        _nats("nll_lower", "lower bound on the exact NLL", STEP_Q),
        _nats("nll_upper", "upper bound on the exact NLL", STEP_Q),
        *(_nats(f"nll_{t}", f"NLL term: {_NLL_TERM_MEANING[t]}", STEP_Q) for t in NLL_TERMS),
        _flag("nll_exact", "whether nll_value summed every association", "bounded exact", STEP_Q, False),
        _nats("nll_exact_value", "exact NLL, else nll_value at the largest Q", tabulated=False),
        _flag(
            "nll_exact_available", "whether the exact NLL was tractable", "fallback exact", tabulated=False
        ),
        _nats("nll_mean", "mean NLL over steps, inf if a step is", PER_Q, False),
        _nats("nll_finite_mean", "mean NLL over the finite steps", PER_Q, False),
        _count("nll_infinite_steps", "steps with an infinite NLL", PER_Q, False),
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
)

GOSPA = MeasureDeclaration(
    "gospa",
    "GOSPA of the point estimates (Rahmathullah et al. 2017)",
    "point",
    (
        _length("gospa", "GOSPA of the point estimates"),
        _length("gospa_localization", "GOSPA localization term", power=True),
        _length("gospa_missed", "GOSPA missed-object term", power=True),
        _length("gospa_false", "GOSPA false-estimate term", power=True),
        _length("gospa_mean", "mean GOSPA over steps", RUN),
    ),
    scores=(
        Score(
            "gospa_mean",
            "GOSPA",
            axis="GOSPA per step (position units)",
            better="lower",
            leaderboard="GOSPA",
        ),
    ),
    settings=("cutoff", "p"),
)

OSPA = MeasureDeclaration(
    "ospa",
    "OSPA of the point estimates (Schuhmacher et al. 2008)",
    "point",
    (_length("ospa", "OSPA of the point estimates"), _length("ospa_mean", "mean OSPA over steps", RUN)),
    scores=(Score("ospa_mean", "OSPA", better="lower"),),
)

COUNTS = MeasureDeclaration(
    "counts",
    "the numbers of true objects and point estimates per step",
    "point",
    (_count("n_truth", "true objects"), _count("n_estimates", "point estimates")),
)

CLEAR_MOT = MeasureDeclaration(
    "clear_mot",
    "CLEAR MOT: MOTA and MOTP (Bernardin and Stiefelhagen 2008)",
    "point",
    (
        _count("clear_matches", "CLEAR MOT matches"),
        _count("clear_misses", "CLEAR MOT misses"),
        _count("clear_false_positives", "CLEAR MOT false positives"),
        _count("clear_switches", "CLEAR MOT identity switches"),
        _length("clear_distance_sum", "CLEAR MOT sum of match distances"),
        _share("mota", "MOTA", RUN),
        _length("motp", "MOTP, mean match distance", RUN),
        _count("clear_total_switches", "CLEAR MOT identity switches, run total", RUN, False),
        _count("clear_total_matches", "CLEAR MOT matches, run total", RUN, False),
        _count("clear_total_misses", "CLEAR MOT misses, run total", RUN, False),
        _count("clear_total_false_positives", "CLEAR MOT false positives, run total", RUN, False),
        _count("clear_total_num_objects", "CLEAR MOT true objects, run total", RUN, False),
    ),
    scores=(
        Score(
            "mota",
            "MOTA",
            axis="MOTA (fraction)",
            better="higher",
            leaderboard="MOTA",
            needs_identities=True,
        ),
        Score("motp", "MOTP", better="lower"),
        Score("switches", needs_identities=True, source="clear_total_switches"),
    ),
    needs_identities=True,
    settings=("threshold", "strict_threshold", "clear_rule", "distance", "distance_dims"),
)

IDENTITY = MeasureDeclaration(
    "identity",
    "identity measures: IDF1, IDP, IDR (Ristani et al. 2016)",
    "point",
    (
        _share("idf1", "IDF1", RUN),
        _share("idp", "identity precision IDP", RUN, False),
        _share("idr", "identity recall IDR", RUN, False),
        _count("idtp", "identity true positives IDTP", RUN, False),
        _count("idfp", "identity false positives IDFP", RUN, False),
        _count("idfn", "identity false negatives IDFN", RUN, False),
    ),
    scores=(Score("idf1", "IDF1", caption="IDF1", better="higher", needs_identities=True),),
    needs_identities=True,
)

THEOREM1 = MeasureDeclaration(
    "theorem1",
    "the check of Theorem 1 (Pinto et al. 2021) on the point estimates' PMB",
    "theorem1",
    (
        _nats("theorem1_lhs", "Theorem 1 left side: NLL of the estimates' PMB"),
        _nats("theorem1_rhs", "Theorem 1 right side"),
        _nats("theorem1_difference", "Theorem 1 left side minus right side"),
        _count("theorem1_excluded", "true objects outside the field of view", tabulated=False),
        _nats("theorem1_max_abs_difference", "Theorem 1 largest absolute difference of the sides", RUN),
    ),
    settings=("theorem_rho", "theorem_scale"),
)

TGOSPA = MeasureDeclaration(
    "tgospa",
    "trajectory GOSPA of the estimated trajectories (Garcia-Fernandez et al. 2020)",
    "measure",
    (
        _length("tgospa_localization", "trajectory GOSPA localization term", power=True),
        _length("tgospa_missed", "trajectory GOSPA missed-object term", power=True),
        _length("tgospa_false", "trajectory GOSPA false-estimate term", power=True),
        _length("tgospa_switches", "trajectory GOSPA switch term", power=True),
        _length("tgospa", "trajectory GOSPA", RUN),
        _length("tgospa_gamma", "trajectory GOSPA switch cost gamma", RUN, False),
        _count("tgospa_n_switches", "trajectory GOSPA full switches", RUN, False),
        _count("tgospa_n_half_switches", "trajectory GOSPA half switches", RUN, False),
    ),
    scores=(
        Score("tgospa", "T-GOSPA", better="lower", needs_identities=True),
        Score("tgospa_switches", needs_identities=True),
        Score("tgospa_localization", caption="T-GOSPA localisation"),
    ),
    needs_identities=True,
    settings=("tgospa_gamma",),
)

HOTA = MeasureDeclaration(
    "hota",
    "HOTA and its DetA, AssA and LocA, means over alpha (Luiten et al. 2021)",
    "measure",
    (
        _share("hota", "HOTA, mean over alpha", RUN),
        _share("deta", "DetA, mean over alpha", RUN),
        _share("assa", "AssA, mean over alpha", RUN),
        _share("loca", "LocA, mean over alpha", RUN),
        _share("alpha", "HOTA localization threshold alpha", ("alpha",), False),
        _share("hota_alpha", "HOTA at alpha", ("alpha",), False),
        _share("deta_alpha", "DetA at alpha", ("alpha",), False),
        _share("assa_alpha", "AssA at alpha", ("alpha",), False),
        _share("loca_alpha", "LocA at alpha", ("alpha",), False),
        _count("hota_tp", "HOTA true positives at alpha", ("alpha",), False),
        _count("hota_fn", "HOTA false negatives at alpha", ("alpha",), False),
        _count("hota_fp", "HOTA false positives at alpha", ("alpha",), False),
    ),
    scores=(
        Score("hota", "HOTA", better="higher", needs_identities=True),
        Score("deta", caption="DetA", better="higher"),
        Score("assa", caption="AssA", better="higher", needs_identities=True),
        Score("loca", better="higher"),
    ),
    needs_identities=True,
    settings=("hota_threshold",),
)

CALIBRATION = MeasureDeclaration(
    "calibration",
    "calibration of the existence probabilities (Brier, ECE) and of the covariances (NEES)",
    "measure",
    (
        _count("calibration_bernoullis", "Bernoullis of the best global hypothesis"),
        _count("calibration_explained", "Bernoullis matched to a true object"),
        _share("calibration_r_sum", "sum of the Bernoullis' existence probabilities"),
        _share("calibration_brier_sum", "sum of (r - o)^2 over the Bernoullis"),
        _count("calibration_unassociated", "1 if the truth has no association (NLL = inf)"),
        _count("nees_pairs", "matched Gaussian Bernoulli-truth pairs"),
        _share("nees_sum", "sum of the pairs' NEES"),
        _count("nees_inside95", "pairs with NEES inside their 95 % ellipse"),
        _share("calibration_brier_sum_total", "sum of (r - o)^2 over the run's Bernoullis", RUN, False),
        _count("nees_dof", "sum of the pairs' NEES degrees of freedom", RUN, False),
        _share("brier", "Brier score of the existence probabilities", RUN),
        _share("ece", "expected calibration error of the existence probabilities", RUN),
        _share("anees", "average NEES", RUN),
        _share("nees_inside95_share", "share of pairs inside their 95 % ellipse", RUN),
        _share("anees_ci95_low", "average NEES of a consistent posterior: 2.5 % quantile", RUN, False),
        _share("anees_ci95_high", "average NEES of a consistent posterior: 97.5 % quantile", RUN, False),
        _share("reliability_bin", "lower edge of the existence-probability bin", ("reliability_bin",), False),
        _count("reliability_count", "Bernoullis with r in the bin", ("reliability_bin",), False),
        _share("reliability_r_sum", "sum of r of the Bernoullis in the bin", ("reliability_bin",), False),
        _count(
            "reliability_explained",
            "Bernoullis in the bin matched to a true object",
            ("reliability_bin",),
            False,
        ),
        _share("nees_pit_bin", "lower edge of the NEES PIT bin", ("nees_pit_bin",), False),
        _count("nees_pit_count", "pairs with chi2_cdf(NEES; d) in the bin", ("nees_pit_bin",), False),
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
        _share("cardinality_mean", "mean number of objects under the posterior"),
        _count("cardinality_low90", "lower end of the central 90 % cardinality interval"),
        _count("cardinality_high90", "upper end of the central 90 % cardinality interval"),
        _count("cardinality_covered90", "1 if the true count is in that interval"),
        _nats("cardinality_log_score", "-log P(true number of objects)"),
        _share("cardinality_coverage90", "share of steps with the true count in the 90 % interval", RUN),
        _nats("cardinality_log_score_mean", "mean -log P(true number of objects)", RUN),
    ),
    scores=(Score("cardinality_coverage90", ideal=True), Score("cardinality_log_score_mean", better="lower")),
)

ENERGY_SCORE = MeasureDeclaration(
    "energy_score",
    "the set energy score of the posterior at the truth, by Monte Carlo (docs/scores.md)",
    "proper",
    (
        _share("energy_score", "set energy score of the posterior at the truth"),
        _share("energy_score_se", "Monte Carlo standard error of energy_score"),
        _share("energy_score_mean", "mean set energy score over steps", RUN),
        _share("energy_score_mean_se", "Monte Carlo standard error of energy_score_mean", RUN),
    ),
    scores=(Score("energy_score_mean", "energy score", better="lower"),),
    settings=("proper_scores", "kernel_cov", "energy_samples"),
    required=False,
)

INTENSITY_SCORE = MeasureDeclaration(
    "intensity_score",
    "the quadratic intensity score of the posterior at the truth (docs/scores.md)",
    "proper",
    (
        _share("intensity_score", "quadratic intensity score of the posterior at the truth"),
        _share("intensity_score_mean", "mean quadratic intensity score over steps", RUN),
    ),
    scores=(Score("intensity_score_mean", "intensity score", better="lower"),),
    required=False,
)

CARDINALITY_RPS = MeasureDeclaration(
    "cardinality_rps",
    "the ranked probability score of the cardinality at the true count (docs/scores.md)",
    "proper",
    (
        _share("cardinality_rps", "ranked probability score of the cardinality at the true count"),
        _share("cardinality_rps_mean", "mean cardinality ranked probability score over steps", RUN),
    ),
    scores=(Score("cardinality_rps_mean", "card. RPS", better="lower"),),
    required=False,
)

PGOSPA = MeasureDeclaration(
    "pgospa",
    "P-GOSPA of the posterior's multi-Bernoulli density, alpha = 2 (Xia et al. 2024; docs/pgospa.md)",
    "measure",
    (
        _length("pgospa", "P-GOSPA of the posterior (hypothesis-weighted mean)"),
        _length("pgospa_localization", "P-GOSPA localization term", power=True),
        _length("pgospa_existence_mismatch", "P-GOSPA existence-mismatch term", power=True),
        _length("pgospa_missed", "P-GOSPA missed-object term", power=True),
        _length("pgospa_false", "P-GOSPA false-object term", power=True),
        _length("pgospa_mean", "mean P-GOSPA over steps", RUN),
    ),
    scores=(
        Score(
            "pgospa_mean",
            "P-GOSPA",
            axis="P-GOSPA per step (position units)",
            better="lower",
            leaderboard="P-GOSPA",
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
        _length("ptgospa_localization", "PT-GOSPA localization term", power=True),
        _length("ptgospa_existence_mismatch", "PT-GOSPA existence-mismatch term", power=True),
        _length("ptgospa_missed", "PT-GOSPA missed-object term", power=True),
        _length("ptgospa_false", "PT-GOSPA false-object term", power=True),
        _length("ptgospa_switches", "PT-GOSPA switch term", power=True),
        _length("ptgospa", "PT-GOSPA", RUN),
        _count("ptgospa_n_switches", "PT-GOSPA full switches", RUN, False),
        _count("ptgospa_n_half_switches", "PT-GOSPA half switches", RUN, False),
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
        _nats("trajectory_nll", "trajectory NLL of the true set of trajectories, at Q", RUN),
        _nats("trajectory_nll_lower", "lower bound on the exact trajectory NLL", RUN),
        _nats("trajectory_nll_upper", "upper bound on the exact trajectory NLL", RUN),
        *(_nats(f"trajectory_nll_{t}", f"trajectory NLL term: {t}", RUN) for t in TRAJECTORY_TERMS),
        _nats("trajectory_nll_exact", "exact trajectory NLL", RUN, False),
        _count("trajectory_nll_q", "Murty budget Q of the trajectory NLL", RUN, False),
        _flag(
            "trajectory_nll_complete",
            "every association of the trajectory NLL listed",
            "incomplete complete",
            RUN,
            False,
        ),
        _count("trajectory_window_first_frame", "first frame of the trajectory-NLL window", _WINDOW),
        _count("trajectory_window_last_frame", "last frame of the trajectory-NLL window", _WINDOW),
        _nats("trajectory_window_nll", "trajectory NLL of the window, at Q", _WINDOW),
        _nats("trajectory_window_nll_lower", "lower bound on the window's exact trajectory NLL", _WINDOW),
    ),
    scores=(
        Score("trajectory_nll", better="lower", leaderboard="trajectory NLL", q_dependent=True),
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
