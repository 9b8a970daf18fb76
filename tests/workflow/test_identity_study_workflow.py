"""The identity study in the workflow and the report: planned only with an ``identity`` section, its
filters listed by name there (unknown keys named), one job per seed, and shown (figure, table) with
captions from the run."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pandas as pd
import pytest
import yaml
from support.paths import ROOT

import nllbench.pipeline.identity_study as study
from nllbench.cli import main
from nllbench.pipeline.config import validated_config
from nllbench.pipeline.identity_page import identity_page
from nllbench.pipeline.identity_workflow import identity_config_json, identity_seeds, identity_targets
from nllbench.pipeline.plots.identity import identity_caption
from nllbench.pipeline.report_items import IDENTITY_ITEMS, identity_category, identity_items, identity_labels

SCHEMA = ROOT / "workflow/schemas/config.schema.yaml"
TINY = {
    "seeds": 1,
    "steps": 4,
    "filters": ["pmb", {"filter": "tpmbm", "name": "tpmbm-20", "max_hypotheses": 20}],
}


@pytest.mark.parametrize(("config", "n"), [({}, 0), ({"identity": None}, 0), ({"identity": TINY}, 2)])
def test_the_report_shows_the_study_only_when_the_config_has_one(config, n):
    assert len(identity_items(config)) == n
    targets = identity_targets("R", config)
    assert len(targets) == n and all(t.startswith("R/identity/") for t in targets)
    assert identity_seeds(config) == ([0] if n else [])
    for i, item in enumerate(IDENTITY_ITEMS):
        assert identity_category(item.figure) == "7 Identity uncertainty"
        assert identity_labels(item.figure)["item"].startswith(f"{i + 1} ")


def test_the_landing_page_names_the_items_in_report_order():
    landing = (ROOT / "workflow/report/workflow.rst").read_text()
    start = landing.index("*7 Identity uncertainty*")
    paragraph = re.sub(r"\s+", " ", landing[start : landing.index("seconds. {% endif %}", start)])
    places = [paragraph.find(item.label.split(" ", 1)[1]) for item in IDENTITY_ITEMS]
    assert -1 not in places and places == sorted(places)
    assert sorted(IDENTITY_ITEMS, key=lambda i: i.label) == list(IDENTITY_ITEMS)
    # the template drops the newline after an endif: a section ending "x.{% endif %}" glues the next
    # section's first word to its last sentence ("seconds.*7 Identity uncertainty*" on the page)
    assert not re.search(r"[^\s]\{% endif %\}\n\{% if", landing)


def test_the_plan_takes_filters_by_name_and_names_every_wrong_key():
    plan = study.plan_from_config(TINY)
    assert plan.seeds == (0,) and plan.steps == 4 and plan.q == 10 and plan.clutter_rate == 5.0
    assert [(f.name, f.filter, f.kind) for f in plan.filters] == [
        ("pmb", "pmb", "labelled"),
        ("tpmbm-20", "tpmbm", "trajectory"),
    ]
    assert plan.filters[1].settings.max_hypotheses == 20 and plan.filters[0].settings.max_hypotheses == 200
    assert study.plan_from_config({}).steps == 81
    bad = [
        ({**TINY, "seed": 3}, r"identity: unknown key\(s\) \['seed'\]"),
        ({**TINY, "filters": [{"filter": "pmb", "hypotheses": 3}]}, r"identity.filters\[0\]: unknown key"),
        ({**TINY, "filters": ["phd"]}, r"identity.filters\[0\].filter: expected one of"),
        ({**TINY, "filters": ["pmb", "pmb"]}, "identity.filters: expected distinct names"),
        ({**TINY, "filters": [{"filter": "pmb", "gate": -1}]}, r"identity.filters\[0\]: gate"),
        ({**TINY, "seeds": 0}, "identity.seeds: expected an integer >= 1"),
        ({**TINY, "seeds": True}, "identity.seeds: expected an integer >= 1"),
        ({**TINY, "clutter_rate": math.inf}, "identity.clutter_rate: expected a finite number"),
        ({**TINY, "filters": []}, "identity.filters: expected a non-empty list"),
    ]
    for section, message in bad:
        with pytest.raises(ValueError, match=message):
            study.plan_from_config(section)
        with pytest.raises(ValueError, match="config key " + message):
            identity_config_json({"identity": section})
    assert json.loads(identity_config_json({"identity": TINY})) == TINY


def test_a_registered_trajectory_filter_the_study_cannot_run_is_named(monkeypatch):
    monkeypatch.setattr(study, "TRAJECTORY_FILTERS", ("tpmbm", "tnew"))
    with pytest.raises(ValueError, match=r"'tnew' is a trajectory filter the identity study does not run"):
        study.plan_from_config({"filters": ["tnew"]})


def test_the_schema_names_an_unknown_key_of_the_section():
    config = yaml.safe_load((ROOT / ".test/config/config.yaml").read_text())
    assert validated_config(config, SCHEMA)["identity"]["seeds"] == 2
    with pytest.raises(ValueError, match=r"config key identity: .*'seed' was unexpected"):
        validated_config({**config, "identity": {"seed": 2}}, SCHEMA)
    assert validated_config({k: v for k, v in config.items() if k != "identity"}, SCHEMA)["identity"] is None


def _rows():
    rows = []
    values = {  # (filter, condition) -> values over seeds 0, 1, 2
        ("a", "separated"): [1.0, 2.0, 3.0],
        ("a", "coalescence"): [11.0, np.inf, 23.0],
        ("t", "separated"): [-5.0, -4.0, -3.0],
        ("t", "coalescence"): [-4.0, -2.0, 0.0],
    }
    for (f, cond), vs in values.items():
        kind = "trajectory" if f == "t" else "labelled"
        measure = study.NLL_MEASURES[kind]
        for seed, v in enumerate(vs):
            rows.append((seed, cond, f, "tpmbm" if f == "t" else "pmb", kind, measure, v, 0.5))
    return pd.DataFrame(rows, columns=list(study.ROW_COLUMNS))


def test_summary_and_extra_cost_are_paired_by_seed_and_count_infinite_runs():
    rows = _rows()
    summary = study.summary_table(rows, ["t", "a"])
    assert list(summary["filter"]) == ["t", "t", "a", "a"]
    assert list(summary["condition"]) == ["separated", "coalescence"] * 2
    a_meet = summary[(summary["filter"] == "a") & (summary["condition"] == "coalescence")].iloc[0]
    assert a_meet["median"] == 17.0 and a_meet["infinite"] == 1 and a_meet["runs"] == 3
    extra = study.extra_cost_table(rows, ["t", "a"])
    assert list(extra["filter"]) == ["t", "a"]
    t, a = extra.iloc[0], extra.iloc[1]
    assert t["median_extra"] == 2.0 and t["q25_extra"] == 1.5 and t["q75_extra"] == 2.5 and t["infinite"] == 0
    assert a["median_extra"] == 15.0 and a["seeds"] == 3 and a["infinite"] == 1  # (10, 20); seed 1 inf
    caption = identity_caption(extra, summary, ["t", "a"], 3, 5.0, 81, 10)
    assert "t 2 nats (trajectory-density NLL)" in caption
    assert "a 15 nats (labelled-output NLL, infinite in 1)" in caption
    page = identity_page(summary, extra, ["t", "a"], "cap")
    assert page.index(">t<") < page.index(">a<") and "inf" not in page.split("<tbody>")[1].split(">a<")[0]


def test_the_commands_write_the_study_and_agree_with_the_benchmark_api(tmp_path, capsys):
    section = {**TINY, "filters": [{"filter": "pmb", "max_hypotheses": 20}, TINY["filters"][1]]}
    config = json.dumps(section)
    rows = tmp_path / "seed0.csv"
    assert main(["identity-run", "--config-json", config, "--seed", "0", "--rows", str(rows), "--quiet"]) == 0
    got = pd.read_csv(rows)
    assert list(got.columns) == list(study.ROW_COLUMNS)
    assert set(got["condition"]) == {"separated", "coalescence"} and set(got["filter"]) == {"pmb", "tpmbm-20"}
    # the same numbers as the benchmark's identity_rows (benchmarks/study_identity.py) for the same runs
    from nllbench.filters import PMBMSettings

    old = pd.DataFrame(study.identity_rows([0], steps=4, settings=PMBMSettings(max_hypotheses=20)))
    for r in got.itertuples():
        name = "tpmbm" if r.filter == "tpmbm-20" else r.filter
        match = old[
            (old["filter"] == name) & (old["condition"] == r.condition) & (old["measure"] == r.measure)
        ]
        assert len(match) == 1 and match["value"].iloc[0] == r.value  # rows.csv keeps every digit
    out = tmp_path / "identity"
    assert main(["identity", "--config-json", config, "--rows", str(rows), "--out-dir", str(out)]) == 0
    assert pd.read_csv(out / "rows.csv").equals(got)
    for name in ("rows.csv", "summary.csv", "extra_cost.csv", "identity.png", "identity.pdf"):
        assert (out / name).stat().st_size > 0
    caption = (out / "identity.caption.txt").read_text()
    assert "1 seed" in caption and "pmb " in caption and "tpmbm-20 " in caption and "4 steps" in caption
    assert "tpmbm-20" in (out / "table.html").read_text()
    wrong = json.dumps({**TINY, "filters": ["pmbm"]})
    assert (
        main(["identity", "--config-json", wrong, "--rows", str(rows), "--out-dir", str(tmp_path / "x")]) != 0
    )
    assert "missing ['pmbm']" in capsys.readouterr().err and not (tmp_path / "x").exists()


def test_the_figure_names_each_line_with_its_filter_and_what_it_scores():
    from nllbench.pipeline.plots.identity import fig_identity

    rows = _rows()
    fig = fig_identity(rows, study.summary_table(rows, ["a", "t"]), ["a", "t"])
    labels = [t.get_text() for legend in fig.legends for t in legend.get_texts()]
    assert labels == [
        "a: per-frame filter, labelled-output trajectory NLL",
        "t: trajectory filter, exact trajectory-density NLL",
    ]
    assert "infinite, not drawn: a 1/3 meet" in fig.axes[0].get_title()
    assert fig.axes[0].get_yscale() == "symlog"


def test_each_seeds_job_declares_the_trajectory_posteriors_and_their_runs():
    from types import SimpleNamespace

    from nllbench.pipeline.identity_workflow import identity_run_files, identity_run_options

    files = identity_run_files("R", {"identity": TINY})
    assert files == {
        "posteriors": [
            "R/identity_runs/posteriors/seed{seed}/separated_tpmbm-20.nc",
            "R/identity_runs/posteriors/seed{seed}/coalescence_tpmbm-20.nc",
        ],
        "scenarios": [
            "R/identity_runs/scenarios/seed{seed}/separated.nc",
            "R/identity_runs/scenarios/seed{seed}/coalescence.nc",
        ],
    }
    job = SimpleNamespace(**{k: [p.format(seed=3) for p in v] for k, v in files.items()})
    assert identity_run_options(job) == (
        "--posterior-dir R/identity_runs/posteriors/seed3 --scenario-dir R/identity_runs/scenarios/seed3"
    )
    none = {"posteriors": [], "scenarios": []}
    assert identity_run_files("R", {"identity": {**TINY, "filters": ["pmb"]}}) == none
    assert identity_run_files("R", {}) == none and identity_run_options(SimpleNamespace(**none)) == ""
