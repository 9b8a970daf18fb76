"""A measure is wired by its declaration: step values, run values and settings, nothing by hand."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest
from support.paths import ROOT

import nllbench as nb
from nllbench.measures import declarations as d
from nllbench.measures.evaluate import EvaluationSettings, RunMetrics, evaluate_run
from nllbench.measures.names import METRICS_VARIABLES
from nllbench.measures.run import settings as settings_module
from nllbench.measures.run.stepwise import StepView
from nllbench.pipeline import report

DOCS = ROOT / "docs" / "store.md"


def _run(steps=(1, 2, 0, 2)):
    """A small evaluated run of a multi-Bernoulli posterior near the truth."""
    rng = np.random.default_rng(5)
    truth = [rng.uniform(0, 10, (n, 4)) for n in steps]
    posts = [
        nb.MultiBernoulli.gaussian([0.9] * len(x), x + 0.1, np.tile(np.eye(4), (len(x), 1, 1))) for x in truth
    ]
    ids = [np.arange(len(x)) for x in truth]
    return evaluate_run(posts, truth, ids, [0, 0], [10, 10], EvaluationSettings(qs=(1,)))


# --- a throwaway measure, declared only ---------------------------------------------------------------


def excess_step(view: StepView) -> dict:
    """Estimates beyond the truth at the step (a test measure)."""
    return {"excess": max(view.states.shape[0] - view.truth_points.shape[0], 0), "excess_share": 0.5}


def excess_run(arrays, settings) -> dict:
    return {"excess_total": int(arrays["excess"].sum())}


EXCESS = d.MeasureDeclaration(
    "excess",
    "estimates beyond the truth (test)",
    "point",
    (
        d.Variable("excess", d.MetricsVariable("estimates beyond the truth", None, "count")),
        d.Variable("excess_share", d.MetricsVariable("a share", "1")),
        d.Variable("excess_total", d.MetricsVariable("its run total", None, "count"), d.RUN),
    ),
    step=f"{__name__}:excess_step",
    run=f"{__name__}:excess_run",
    required=False,
)


def test_a_declared_step_function_reaches_the_run_metrics_and_its_summary(monkeypatch):
    plain = _run()
    monkeypatch.setattr(d, "MEASURES", (*d.MEASURES, EXCESS))
    m = _run()
    assert m.excess.dtype == np.int64 and m.excess_share.dtype == np.float64
    np.testing.assert_array_equal(m.excess, np.maximum(m.n_estimates - m.n_truth, 0))
    assert m.stepwise["excess"]["excess"] is m.excess
    assert m.summary()["excess_total"] == int(m.excess.sum())
    assert {k: v for k, v in m.run_values().items() if k not in plain.run_values()} == {
        "excess_total": int(m.excess.sum())
    }
    # nothing else moves
    assert {k: v for k, v in m.summary().items() if k != "excess_total"} == plain.summary()
    np.testing.assert_array_equal(m.gospa, plain.gospa)


def short_step(view: StepView) -> dict:
    return {"excess": 0}


def test_a_step_function_that_returns_the_wrong_variables_is_refused_by_name(monkeypatch):
    bad = dataclasses.replace(EXCESS, step=f"{__name__}:short_step")
    monkeypatch.setattr(d, "MEASURES", (*d.MEASURES, bad))
    with pytest.raises(ValueError, match=r"excess: step 0: expected values of \['excess', 'excess_share'\]"):
        _run()


def test_a_step_function_may_say_the_measure_does_not_apply(monkeypatch):
    monkeypatch.setattr(d, "MEASURES", (*d.MEASURES, dataclasses.replace(EXCESS, step=f"{__name__}:never")))
    m = _run()
    assert "excess" not in m.stepwise and "excess_total" not in m.summary()
    with pytest.raises(AttributeError, match="'excess'"):
        _ = m.excess


def never(view):
    return None


def test_the_first_release_measures_are_stepwise_and_keep_their_attributes():
    m = _run()
    assert {x.name for x in d.stepwise_measures()} >= {"gospa", "ospa", "counts", "theorem1"}
    for name in ("gospa", "gospa_localization", "ospa", "theorem1_lhs", "theorem1_difference"):
        assert getattr(m, name).shape == (4,) and getattr(m, name).dtype == np.float64
    for name in ("n_truth", "n_estimates", "theorem1_excluded"):
        assert getattr(m, name).dtype == np.int64
    np.testing.assert_array_equal(m.n_truth, [1, 2, 0, 2])
    assert m.steps == 4
    assert dataclasses.replace(m, trajectory="x").trajectory == "x"  # callers attach results so
    assert isinstance(dataclasses.replace(m, hota=None), RunMetrics)


def test_resolve_names_a_module_and_an_object():
    assert d.resolve("nllbench.measures.run.stepwise:gospa_step").__name__ == "gospa_step"
    with pytest.raises(ValueError, match="expected 'module:name'"):
        d.resolve("gospa_step")


# --- settings owned by their measures ----------------------------------------------------------------


def test_each_declared_settings_class_holds_exactly_the_settings_its_measure_owns():
    for m in d.MEASURES:
        if m.settings_class:
            own = {f.name for f in dataclasses.fields(d.resolve(m.settings_class))}
            assert own == set(m.settings), m.name


def test_evaluation_settings_are_the_parts_fields_flat_in_the_released_order():
    names = [f.name for f in dataclasses.fields(EvaluationSettings)]
    parts = [f.name for p in EvaluationSettings.parts for f in dataclasses.fields(p)]
    assert sorted(names) == sorted(parts) and len(set(names)) == len(names)
    assert names[: len(settings_module._RELEASED_ORDER)] == list(settings_module._RELEASED_ORDER)
    for part in EvaluationSettings.parts:  # the defaults are the parts' own
        assert EvaluationSettings().of(part) == part()


def test_each_part_checks_and_normalises_its_own_fields_through_the_whole():
    s = EvaluationSettings(qs=(10, 1), distance_dims=np.int64(3), strict_threshold=np.bool_(True))
    assert s.qs == (1, 10) and type(s.distance_dims) is int and s.strict_threshold is True
    assert s.of(settings_module.NLLSettings).qs == (1, 10)
    assert s.of(settings_module.GOSPASettings) == settings_module.GOSPASettings(2.0, 1.0)
    for bad, match in (
        ({"qs": (1, 1)}, "qs: expected distinct"),
        ({"marginal": "x"}, "marginal: expected"),
        ({"energy_samples": 1}, "energy_samples: expected"),
        ({"kernel_cov": -1.0}, "kernel_cov: expected"),
        ({"estimator": "nope"}, "estimator: expected"),
        ({"distance": "manhattan"}, "distance: expected"),
    ):
        with pytest.raises(ValueError, match=match):
            EvaluationSettings(**bad)
    with pytest.raises(TypeError, match="strict_threshold"):
        EvaluationSettings(strict_threshold="yes")
    with pytest.raises(TypeError, match="'bogus'"):
        EvaluationSettings(bogus=1)
    with pytest.raises(ValueError, match="part: expected one of"):
        s.of(int)


def test_evaluation_settings_replace_compare_and_kernel_variance_as_before():
    s = EvaluationSettings()
    t = dataclasses.replace(s, cutoff=4.0)
    assert t != s and t.kernel_variance == 4.0 and s.kernel_variance == 1.0
    assert dataclasses.replace(t, cutoff=2.0) == s and hash(dataclasses.replace(t, cutoff=2.0)) == hash(s)
    assert EvaluationSettings.__module__ == "nllbench.measures.run.settings"


# --- the report and the docs read the declarations --------------------------------------------------


def test_the_leaderboard_columns_are_the_declared_ones_in_order():
    cols = [s.name for s in report.COLUMNS]
    assert cols[:6] == ["gospa_mean", "mota", "tgospa", "hota", "trajectory_nll", "pgospa_mean"]
    assert cols == [s.name for s in d.declared_scores() if s.column]
    assert {"trajectory_nll", "pgospa_mean"} <= set(report.NOT_APPLICABLE)
    assert report.RANK_HEADING == {"trajectory_nll": "traj. NLL"}


def _documented_rows() -> dict[str, str]:
    text = DOCS.read_text()
    section = text[text.index("### Metrics files") :]
    section = section[: section.index("\n## ")]
    return {m.group(1): m.group(0) for m in re.finditer(r"^\| `([^`]+)` \|.*$", section, re.MULTILINE)}


def test_every_variable_the_docs_list_is_declared_with_that_long_name():
    for name, row in _documented_rows().items():
        assert name in METRICS_VARIABLES, f"docs/store.md lists {name!r}, which no measure declares"
        assert METRICS_VARIABLES[name].long_name in row, f"docs/store.md: {name!r}: long name differs"


def test_the_docs_list_every_variable_of_each_measure_they_document():
    """A measure is on the page in full, or not at all (then its declaration describes it)."""
    rows = _documented_rows()
    for v in d.COORDINATES:
        assert v.name in rows, v.name
    for m in d.MEASURES:
        listed = [v.name for v in m.variables if v.name in rows]
        missing = [v.name for v in m.variables if v.name not in rows]
        assert not listed or not missing, f"docs/store.md: {m.name}: lists {listed}, not {missing}"
