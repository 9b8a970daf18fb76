"""The names of nllbench's measures and NLL terms, derived from their declarations.

Metrics files, the per-step cube, the tables and the figures all use these
spellings; each measure declares its variables once, in
:mod:`nllbench.measures.declarations` (the engine declares the NLL's terms,
:data:`NLL_TERMS`, beside the NLL), and the tuples here are read from there.
"""

from __future__ import annotations

#: The NLL decomposition (:meth:`nllbench.engine.nll.NLLResult.terms`): the terms sum to the value
#: (Pinto et al., IEEE SPL 2021, eq. (10) and the discussion after it); declared with the result
#: record in the engine, which stands below the measures.
from nllbench.engine.result import NLL_TERMS
from nllbench.measures.declarations import (
    COORDINATES,
    MEASURES,
    PGOSPA,
    PTGOSPA,
    RUN,
    STEP,
    TGOSPA,
    TRAJECTORY_TERMS,
    MetricsVariable,
    measures_of,
    variables_of,
)

#: The NLL's value, its Murty-budget bounds and its decomposition, per step and Q
#: (metrics-file variables ``nll_<name>``).
NLL_STEP = ("value", "lower", "upper", *NLL_TERMS)
#: The decomposition's terms as table measures and figure series (``nll_<term>``).
NLL_TERM_MEASURES = tuple(f"nll_{t}" for t in NLL_TERMS)
#: The same as table measures: ``nll`` for the value, ``nll_<name>`` for the rest.
NLL_STEP_MEASURES = tuple("nll" if t == "value" else f"nll_{t}" for t in NLL_STEP)

#: Per-step trajectory-GOSPA terms (p-th-power units): their sums over steps add up to tgospa ** p.
TGOSPA_TERMS = TGOSPA.names(STEP)
#: Per-step PT-GOSPA terms (p-th-power units): their sums over steps add up to ptgospa ** p.
PTGOSPA_TERMS = PTGOSPA.names(STEP)
#: Per-step P-GOSPA and PT-GOSPA variables: present for multi-Bernoulli posteriors only (docs/pgospa.md).
PGOSPA_STEP = (*PGOSPA.names(STEP), *PTGOSPA_TERMS)

#: Per-step Theorem 1 check of a run: the NLL of the theorem's PMB, the bound, their difference.
THEOREM1_STEP = variables_of(("theorem1",), STEP, tabulated=True)

#: Per-step trajectory-GOSPA decomposition and calibration counts of a metrics file
#: (part of :data:`METRIC_STEP_VARIABLES`).
MEASURE_STEP_VARIABLES = variables_of(("measure",), STEP)

#: Per-step GOSPA, OSPA, counts and CLEAR MOT frame counts of a metrics file.
POINT_STEP_VARIABLES = variables_of(("point",), STEP)

#: Per-step variables of a metrics file (dimension ``step``); the last one,
#: ``theorem1_excluded``, is a count, not a measure.
METRIC_STEP_VARIABLES = (
    *POINT_STEP_VARIABLES,
    *MEASURE_STEP_VARIABLES,
    *THEOREM1_STEP,
    *variables_of(("theorem1",), STEP, tabulated=False),
)

#: Run-level point measures of every metrics file (Q-independent).
POINT_RUN = variables_of(("point", "theorem1"), RUN, tabulated=True)

#: Run-level T-GOSPA, HOTA and calibration scores of a metrics file (Q-independent); each is
#: tabulated when the file has it: brier/ece need some Bernoulli and anees/nees_inside95_share
#: some matched pair, so PHD/CPHD runs have no row for them (absent, never NaN).
MEASURE_RUN = variables_of(("measure",), RUN, tabulated=True)

#: Per-step proper scores beyond the NLL of a metrics file (``step``; present when the evaluation
#: computed them, ``proper_scores``): the set energy score and its Monte Carlo standard error, the
#: quadratic intensity score (absent where it has no closed form) and the cardinality RPS
#: (:mod:`nllbench.measures.scores.proper_run`, docs/scores.md).
PROPER_STEP = variables_of(("proper",), STEP)
#: Their run means (metrics-file scalars and per-run table measures, q = 0) and the standard error
#: of the energy score's run mean.
PROPER_RUN = variables_of(("proper",), RUN)
#: The three proper scores' run means: summarised, compared in pairs and ranked; lower is better.
PROPER_SCORES = tuple(s.name for m in measures_of("proper") for s in m.scores if s.better is not None)
#: The decomposition's terms as table measures (``trajectory_nll_<term>``).
TRAJECTORY_TERM_MEASURES = tuple(f"trajectory_nll_{t}" for t in TRAJECTORY_TERMS)
#: Run-level trajectory NLL of a metrics file and a table (nats per run, the sum over its windows):
#: the value at Q, its certified bounds and its terms. Present only for labelled outputs (absent
#: for PHD/CPHD posteriors, whose metrics file says why in the attribute ``trajectory_nll``).
TRAJECTORY_RUN = variables_of(("trajectory",), RUN, tabulated=True)
#: Per-window trajectory NLL of a metrics file (dimension ``trajectory_window``; one window: the run).
TRAJECTORY_WINDOW = variables_of(("trajectory",), ("trajectory_window",))

#: Every variable of a metrics file (schema version 3), with its CF long name, units and kind: the
#: one table :mod:`nllbench.store.metrics` writes the attributes from and reads the types by, and
#: docs/store.md lists. Derived from the measures' declarations (:data:`MEASURES`): the
#: coordinates, then each measure's variables in order.
METRICS_VARIABLES: dict[str, MetricsVariable] = {
    v.name: v.described for v in (*COORDINATES, *(v for m in MEASURES for v in m.variables))
}

#: The variables of the measures a metrics file may lack (declared ``required=False``): the
#: reader does not ask for them and the tables skip them where a file has none.
OPTIONAL_VARIABLES = frozenset(n for m in MEASURES if not m.required for n in m.names())
