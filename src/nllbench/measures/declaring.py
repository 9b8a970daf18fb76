"""The kinds of declarations of :mod:`nllbench.measures.declarations`: of a measure, a variable, a score.

:class:`MeasureDeclaration` says everything nllbench knows of one measure; :class:`Variable` one
variable of a metrics file (:class:`MetricsVariable`: its CF description), :class:`Score` one
number per run the tables carry. The declarations themselves, and their registry
:data:`~nllbench.measures.declarations.MEASURES`, are in :mod:`nllbench.measures.declarations`,
which re-exports every name here. This module imports nothing of nllbench (nor numpy).
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from typing import NamedTuple


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
    column : bool
        Whether the leaderboard shows its mean [95 % CI] in a column of its own, headed by its
        ``leaderboard`` heading or its ``label`` (the NLL's median and mean lead the table).
    rank_heading : str
        The heading of its rank column where its ``leaderboard`` heading is too long (empty: that).
    not_applicable : str
        Why a run has none of it (the title of its leaderboard's "n/a" cell, shown where some
        filter has it); empty: "–", as for metrics files that predate it.
    na_everywhere : bool
        Whether that "n/a" stands also where no filter has it (its value and rank cells).
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
    column: bool = False
    rank_heading: str = ""
    not_applicable: str = ""
    na_everywhere: bool = False
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
    settings_class : str
        ``"module:Class"``: the frozen dataclass of its settings (their fields, with their
        :func:`~nllbench.options.option` declarations), which
        :class:`~nllbench.measures.run.settings.EvaluationSettings` is composed of; empty: it owns none,
        or a measure it is computed with declares them (``settings`` still names them).
    step : str
        ``"module:function"``: its values at one step, ``function(view) -> {variable: number}`` for
        a :class:`~nllbench.measures.run.stepwise.StepView` (the step's posterior, truth and point
        estimates, the settings), or None where it does not apply to the run. Every variable of
        dimension ``("step",)`` has a value; :func:`~nllbench.measures.run.evaluate.evaluate_run`
        computes it at every step, :class:`~nllbench.measures.run.evaluate.RunMetrics` gives its
        arrays by variable name and :mod:`nllbench.store.metrics` writes them. Empty: computed by
        evaluate's own route (the NLL, the sequence measures, the scores of the posterior).
    run : str
        ``"module:function"``: its run-level values from its per-step arrays,
        ``function(arrays, settings) -> {variable: number}``: the summary row and the metrics file
        have them. Empty: none, or (the measures of the first release) written by their own route.
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
    settings_class: str = ""
    step: str = ""
    run: str = ""
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


def nats(name: str, long_name: str, dims=STEP, tabulated: bool = True) -> Variable:
    """A negative log-likelihood (or a sum or difference of them): nats, CF units "1"."""
    return Variable(name, MetricsVariable(f"{long_name} (nats)", "1"), dims, tabulated)


def length(name: str, long_name: str, dims=STEP, tabulated: bool = True, power: bool = False) -> Variable:
    """A distance (``power``: a sum of distances to the p-th power) in the scenario's state units."""
    unit = f"(state units{'^p' if power else ''})"
    return Variable(name, MetricsVariable(f"{long_name} {unit}", None), dims, tabulated)


def count(name: str, long_name: str, dims=STEP, tabulated: bool = True) -> Variable:
    return Variable(name, MetricsVariable(long_name, None, "count"), dims, tabulated)


def share(name: str, long_name: str, dims=STEP, tabulated: bool = True) -> Variable:
    return Variable(name, MetricsVariable(long_name, "1"), dims, tabulated)


def flag(name: str, long_name: str, meanings: str, dims=STEP, tabulated: bool = True) -> Variable:
    return Variable(name, MetricsVariable(long_name, None, "flag", meanings), dims, tabulated)


def resolve(reference: str):
    """The object a declaration names by ``"module:name"`` (imported when asked, so that reading the
    declarations loads no measure's code)."""
    module, sep, name = reference.partition(":")
    if not sep or not module or not name:
        raise ValueError(f"reference: expected 'module:name', got {reference!r}")
    return getattr(import_module(module), name)
