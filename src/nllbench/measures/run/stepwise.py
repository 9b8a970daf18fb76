"""The measures computed one step at a time through their declarations (``MeasureDeclaration.step``).

:func:`nllbench.measures.run.evaluate.evaluate_runs` builds one :class:`StepView` per step and
calls the ``step`` function of every declaration that names one
(:func:`~nllbench.measures.declarations.stepwise_measures`); the values become per-step arrays
of :class:`~nllbench.measures.run.evaluate.RunMetrics`, the metrics file's variables and the
tables' series without further wiring. A new per-step measure is its module (a ``step``
function, and a ``run`` function for its run-level values) and its declaration.

The step functions of GOSPA, OSPA, the counts and the Theorem 1 check are here.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from nllbench.engine.transforms import POSITION
from nllbench.measures.declarations import STEP, MeasureDeclaration, resolve, stepwise_measures
from nllbench.measures.likelihood.theorem1 import scale_for_k_equal_rho, theorem1_sides
from nllbench.measures.point.metrics import GOSPAResult, OSPAResult, gospa_and_ospa


@dataclass(frozen=True)
class StepView:
    """What a per-step measure sees of one step (n true objects, m point estimates, state dimension d).

    k : int
        The step, from 0.
    density : object
        The posterior, under the calibration probes' tempering (no covariance scale: the point
        estimates do not move with it).
    truth : (n, d) float
        The true states.
    truth_points, points : (n, e), (m, e) float
        The truth and the estimates on the distance columns (e = ``settings.distance_dims``).
    states : (m, d) float
        The point estimates.
    labels : (m,) int
        Their labels, as given (not yet made unique over the run).
    fov_low, fov_high : (2,) float
        The field of view on the position columns.
    settings : EvaluationSettings
        The evaluation's settings (those shared by every Q and probe of the run).
    """

    k: int
    density: object
    truth: np.ndarray
    truth_points: np.ndarray
    points: np.ndarray
    states: np.ndarray
    labels: np.ndarray
    fov_low: np.ndarray
    fov_high: np.ndarray
    settings: object

    @cached_property
    def gospa_ospa(self) -> tuple[GOSPAResult, OSPAResult]:
        """GOSPA and OSPA of the estimates at the truth on the distance columns (cut-off and order of
        the settings), computed on first use from one assignment (:func:`gospa_and_ospa`)."""
        return gospa_and_ospa(self.points, self.truth_points, c=self.settings.cutoff, p=self.settings.p)


def step_values(view: StepView, clock=None) -> dict[str, dict[str, float]]:
    """Measure name -> its values at ``view``'s step, for every stepwise measure that applies.

    ``clock``: a :class:`~nllbench.measures.run.cpu_clock.CPUClock` charged each measure that applies
    (its CPU seconds from the clock's previous lap), or None.
    """
    out = {}
    for m in stepwise_measures():
        values = resolve(m.step)(view)
        if values is not None:
            out[m.name] = _checked(m, values, view.k)
        if clock is not None and values is not None:
            clock.charge(m.name)
        elif clock is not None:  # not applicable: the check is no measure's
            clock.lap()
    return out


def _checked(m: MeasureDeclaration, values, k: int) -> dict:
    """``values`` of measure ``m`` at step ``k``: one per variable of dimension ``step``, no other."""
    want = m.names(STEP)
    if not isinstance(values, dict) or set(values) != set(want):
        got = sorted(values) if isinstance(values, dict) else type(values).__name__
        raise ValueError(f"{m.name}: step {k}: expected values of {list(want)}, got {got}")
    return values


def run_arrays(m: MeasureDeclaration, steps: list[dict]) -> dict[str, np.ndarray] | None:
    """Measure ``m``'s per-step arrays ((K,), of its variables' kinds) from every step's values;
    None where it did not apply to some step (a measure applies to a whole run or is absent)."""
    if not all(m.name in s for s in steps):
        return None
    dtypes = {v.name: _DTYPES[v.described.kind] for v in m.variables}
    return {
        name: np.array([s[m.name][name] for s in steps], dtype=dtypes[name]).reshape(len(steps))
        for name in m.names(STEP)
    }


#: The in-memory type of each kind of variable.
_DTYPES = {"float": float, "count": np.int64, "flag": np.int8}


def run_values(m: MeasureDeclaration, arrays: dict[str, np.ndarray], settings) -> dict[str, object]:
    """Measure ``m``'s run-level values (its declaration's ``run`` function of its arrays; none without)."""
    return dict(resolve(m.run)(arrays, settings)) if m.run else {}


# --- the step functions of the measures of the first release ------------------------------------------


def gospa_step(view: StepView) -> dict:
    """GOSPA (alpha = 2) of the estimates at the truth, with its terms, on the distance columns."""
    g = view.gospa_ospa[0]
    return {
        "gospa": g.value,
        "gospa_localization": g.localization,
        "gospa_missed": g.missed,
        "gospa_false": g.false,
    }


def ospa_step(view: StepView) -> dict:
    """OSPA of the estimates at the truth on the distance columns."""
    return {"ospa": view.gospa_ospa[1].value}


def counts_step(view: StepView) -> dict:
    """The numbers of true objects and of point estimates."""
    return {"n_truth": view.truth_points.shape[0], "n_estimates": view.states.shape[0]}


def theorem1_step(view: StepView) -> dict:
    """Theorem 1's sides on the estimates' positions and the truth inside the field of view
    (the truth outside it, where the theorem's PPP is zero, is left out and counted)."""
    s, lo, hi = view.settings, view.fov_low, view.fov_high
    scale = s.theorem_scale or scale_for_k_equal_rho(s.theorem_rho, lo.size)
    pos, truth_pos = view.states[:, _POSITION_COLUMNS], view.truth[:, _POSITION_COLUMNS]
    inside = ((truth_pos >= lo) & (truth_pos <= hi)).all(axis=1)
    n_inside = int(np.count_nonzero(inside))
    if n_inside < truth_pos.shape[0]:
        truth_pos = truth_pos[inside]
    lhs, rhs = theorem1_sides(pos, truth_pos, lo, hi, s.theorem_rho, scale)
    return {
        "theorem1_lhs": lhs,
        "theorem1_rhs": rhs,
        "theorem1_difference": lhs - rhs,
        "theorem1_excluded": inside.size - n_inside,
    }


#: The position columns as a slice where they are consecutive (a view: no copy at every step), else a list.
_POSITION_COLUMNS = (
    slice(POSITION[0], POSITION[-1] + 1)
    if list(POSITION) == list(range(POSITION[0], POSITION[-1] + 1))
    else list(POSITION)
)
