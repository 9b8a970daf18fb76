"""The registry of measure declarations is consistent, and every table of names is read from it."""

from __future__ import annotations

import dataclasses

import pytest

from nllbench.measures import declarations as d
from nllbench.measures import names
from nllbench.measures.evaluate import EvaluationSettings
from nllbench.pipeline import report, statistics
from nllbench.pipeline.plots import captions, style
from nllbench.trackers import checks


def all_variables() -> list[d.Variable]:
    return [*d.COORDINATES, *(v for m in d.MEASURES for v in m.variables)]


def test_every_metrics_variable_is_owned_by_exactly_one_declaration():
    declared = [v.name for v in all_variables()]
    twice = sorted({n for n in declared if declared.count(n) > 1})
    assert not twice, f"declared more than once: {twice}"
    assert list(names.METRICS_VARIABLES) == declared
    assert all(names.METRICS_VARIABLES[v.name] is v.described for v in all_variables())


def test_every_variable_has_a_kind_dimensions_and_a_long_name():
    for v in all_variables():
        assert v.described.long_name.strip(), v.name
        assert v.described.kind in ("float", "count", "flag"), v.name
        assert isinstance(v.dims, tuple) and all(isinstance(x, str) and x for x in v.dims), v.name
        assert (v.described.kind == "flag") == bool(v.described.flag_meanings), v.name


def test_every_measure_has_a_unique_name_a_section_and_posteriors():
    measure_names = [m.name for m in d.MEASURES]
    assert len(set(measure_names)) == len(measure_names)
    for m in d.MEASURES:
        assert m.section in d.SECTIONS, m.name
        assert m.title.strip(), m.name
        assert m.variables, m.name
        assert m.posteriors and m.posteriors <= set(d.POSTERIORS), m.name
        # a measure whose scores need identities needs them itself
        assert m.needs_identities or not any(s.needs_identities for s in m.scores), m.name


def test_every_score_is_read_from_a_variable_of_its_own_measure():
    for m in d.MEASURES:
        own = {v.name: v for v in m.variables}
        for s in m.scores:
            source = own.get(s.source or s.name)
            assert source is not None, f"{m.name}: score {s.name!r} reads no variable of its measure"
            assert source.dims in (d.RUN, d.STEP, d.PER_Q), (m.name, s.name, source.dims)


def test_scores_are_unique_directions_valid_and_ranked_ones_directed():
    scores = d.declared_scores()
    score_names = [s.name for s in scores]
    assert len(set(score_names)) == len(score_names)
    for s in scores:
        assert s.better in (*d.DIRECTIONS, None), s.name
        assert not (s.ideal and s.better is not None), f"{s.name}: an ideal-valued score is not ranked"
        if s.leaderboard:
            assert s.better is not None, f"{s.name}: a leaderboard column needs a direction"
        if s.q_dependent:
            assert s.better is not None, s.name
    labels = [s.label for s in scores if s.label]
    assert len(set(labels)) == len(labels), "two measures share a figure label"


def test_declared_settings_are_fields_of_the_evaluation_settings_each_owned_once():
    fields = {f.name for f in dataclasses.fields(EvaluationSettings)}
    owned = [name for m in d.MEASURES for name in m.settings]
    assert set(owned) <= fields, sorted(set(owned) - fields)
    assert len(set(owned)) == len(owned), "a setting owned by two measures"


def test_consumers_read_their_tables_from_the_declarations():
    scores = d.declared_scores()
    assert statistics.BETTER_LOW == {s.name: s.better == "lower" for s in scores if s.better}
    assert set(statistics.PAIRED_ONLY) == {s.name for s in scores if s.ideal}
    assert statistics.RANKED == list(report.LABEL)
    assert set(statistics.Q_MEASURES) <= set(statistics.RANKED)
    assert set(style.MEASURE_LABEL) <= set(statistics.BETTER_LOW)  # a figure ranks what it labels
    assert set(style.AXIS_LABEL) <= {s.name for s in scores}
    assert {s.name for s in scores if s.needs_identities} == set(checks.IDENTITY_MEASURES)
    assert set(captions.LABELS) <= {s.name for s in scores}
    assert set(names.PROPER_SCORES) <= set(statistics.BETTER_LOW)


def test_the_name_tuples_are_metrics_variables_of_their_sections():
    for sections, t in (
        (("point",), names.POINT_STEP_VARIABLES),
        (("point", "theorem1"), names.POINT_RUN),
        (("measure",), names.MEASURE_STEP_VARIABLES),
        (("measure",), names.MEASURE_RUN),
        (("theorem1",), names.THEOREM1_STEP),
        (("proper",), names.PROPER_STEP),
        (("proper",), names.PROPER_RUN),
        (("trajectory",), names.TRAJECTORY_RUN),
        (("trajectory",), names.TRAJECTORY_WINDOW),
    ):
        owned = {n for s in sections for m in d.measures_of(s) for n in m.names()}
        assert t and set(t) <= owned, (sections, t)
    assert names.METRIC_STEP_VARIABLES[-1] == "theorem1_excluded"
    with pytest.raises(ValueError, match="section: expected one of"):
        d.measures_of("bogus")


def test_a_file_without_an_optional_measure_still_reads_and_tabulates(tmp_path, monkeypatch):
    """A measure declared ``required=False`` (one added later, say) may be absent from a metrics file."""
    import numpy as np
    import xarray as xr

    import nllbench as nb
    from nllbench.measures.evaluate import evaluate_run
    from nllbench.pipeline import collect
    from nllbench.store import SchemaError, read_metrics, write_metrics
    from nllbench.store import metrics as store_metrics

    truth = [np.array([[1.0, 2.0, 0.0, 0.0]]), np.array([[1.5, 2.5, 0.0, 0.0]])]
    posts = [nb.MultiBernoulli.gaussian([0.9], x + 0.1, np.eye(4)[None]) for x in truth]
    run = evaluate_run(
        posts, truth, [np.array([0]), np.array([0])], [0.0, 0.0], [10.0, 10.0], EvaluationSettings(qs=(1,))
    )
    full, path = tmp_path / "seed0.nc", tmp_path / "seed1.nc"
    write_metrics(run, full, {"seed": 0, "scenario": "s", "filter": "f"})
    with xr.open_dataset(full, decode_cf=False) as ds:
        ds.load().drop_vars(list(d.OSPA.names())).to_netcdf(path, engine="scipy", format="NETCDF3_64BIT")
    with pytest.raises(SchemaError, match="variable 'ospa' is missing"):
        read_metrics(path)  # OSPA is required: every metrics file has it
    optional = frozenset(d.OSPA.names())  # as if OSPA had been added after this file was written
    monkeypatch.setattr(store_metrics, "OPTIONAL_VARIABLES", optional)
    monkeypatch.setattr(collect, "OPTIONAL_VARIABLES", optional)
    ds = read_metrics(path)
    base = collect.run_labels(ds, path)
    assert {r[1] for r in collect.step_records(ds, base)} & optional == set()
    assert "gospa" in {r[1] for r in collect.step_records(ds, base)}
    rows = {r["measure"] for r in collect.run_rows(ds, base)}
    assert "ospa_mean" not in rows and {"gospa_mean", "mota", "nll"} <= rows
    with_ospa = {r["measure"] for r in collect.run_rows(read_metrics(full), base)}
    assert with_ospa - rows == {"ospa_mean"}


def test_the_optional_variables_are_those_of_measures_not_required():
    assert names.OPTIONAL_VARIABLES == {n for m in d.MEASURES if not m.required for n in m.names()}
    assert {"energy_score", "trajectory_nll"} <= names.OPTIONAL_VARIABLES
