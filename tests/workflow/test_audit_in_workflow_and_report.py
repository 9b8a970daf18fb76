"""The propriety audit in the workflow and the report: planned only with an ``audit`` section, handed
that section as JSON, and shown (figure, verdict table, filters' figure) with captions from the run."""

from __future__ import annotations

import json
import shutil
import subprocess

import pandas as pd
import pytest
import yaml
from support.audit_study import TINY as AUDIT_TINY
from support.paths import ROOT

from nllbench.cli import main
from nllbench.pipeline.audit_page import VERDICT_LETTERS, verdicts_page
from nllbench.pipeline.audit_workflow import audit_config_json, audit_targets
from nllbench.pipeline.plots.audit import MEASURE_LABELS, in_this_run
from nllbench.pipeline.report_items import AUDIT_ITEMS, audit_category, audit_items, audit_labels

#: test_audit's tiny study without its trajectory density.
TINY = {key: value for key, value in AUDIT_TINY.items() if key != "trajectories"}
FILTERS = [{"name": "PMB run", "filter": "pmb", "scenario": "williams15", "steps": 3, "seed": 1}]


@pytest.mark.parametrize(
    ("config", "items"),
    [
        ({}, []),
        ({"audit": None}, []),
        ({"audit": TINY}, ["audit", "verdicts"]),
        ({"audit": {**TINY, "filters": FILTERS}}, ["audit", "verdicts", "filters"]),
    ],
)
def test_the_report_shows_the_audit_only_when_the_config_has_one(config, items):
    assert [item.figure for item in audit_items(config)] == items
    targets = audit_targets("R", config)
    assert len(targets) == len(items) and all(t.startswith("R/audit/") for t in targets)
    for name in items:
        assert audit_category(name) == "6 Honest uncertainty"
        assert audit_labels(name)["item"][0] == str(1 + [i.figure for i in AUDIT_ITEMS].index(name))


def test_the_section_is_checked_and_passed_as_json():
    assert json.loads(audit_config_json({"audit": TINY})) == TINY
    with pytest.raises(ValueError, match="config key audit: settings: unknown key 'n_draw'"):
        audit_config_json({"audit": {**TINY, "settings": {"n_draw": 10}}})
    with pytest.raises(ValueError, match="config key audit: expected at least one entry in densities"):
        audit_config_json({"audit": {"settings": TINY["settings"], "filters": FILTERS}})
    with pytest.raises(ValueError, match="config key audit: expected a mapping, got none"):
        audit_config_json({"audit": None})


def test_verdict_page_letters_colours_and_caption_come_from_the_tables():
    verdicts = pd.DataFrame(
        {
            "level": ["frame"] * 4,
            "density": ["A"] * 4,
            "measure": ["nll", "nll", "pgospa", "pgospa"],
            "family": ["covariance", "existence", "covariance", "existence"],
            "verdict": ["strictly proper", "proper", "improper (rewards over-confidence)", "insensitive"],
            "argmin": [1.0, 1.0, 0.5, 1.0],
            "better": ["", "", "0.5", ""],
        }
    )
    summary = pd.DataFrame(
        {"measure": ["nll", "pgospa"], "verdict": ["proper", "improper (rewards over-confidence)"]}
    )
    record = {"settings": {"n_draws": 8, "seed": 3, "z": 2.0, "cov_scales": [0.5, 1.0]}}
    page, caption = verdicts_page(verdicts, summary, None, record)
    assert "In this run (8 truths per density, seed 3, z = 2 paired standard errors)" in caption
    assert "proper: NLL; improper: P-GOSPA (density vs truth)." in caption
    for letter in ("S", "P", "O", "="):
        assert f">{letter}</td>" in page
    assert "background:#d73027" in page and "better than honest: 0.5" in page
    assert "cov_scales = 0.5 1" in page and "Reference filters" not in page
    assert in_this_run(summary) == "In this run: proper: NLL; improper: P-GOSPA (density vs truth)."


def test_command_reads_its_config_as_json_and_writes_the_verdict_page(tmp_path, capsys):
    out = tmp_path / "audit"
    assert main(["audit", "--config-json", json.dumps(TINY), "--out-dir", str(out), "--quiet"]) == 0
    summary = pd.read_csv(out / "summary.csv")
    page = (out / "verdicts.html").read_text(encoding="utf-8")
    caption = (out / "verdicts.caption.txt").read_text(encoding="utf-8")
    assert caption.startswith("Propriety audit, verdict table") and "8 truths per density, seed 0" in caption
    for m, v in zip(summary["measure"], summary["verdict"], strict=True):
        assert MEASURE_LABELS[m] in page and v in page
    letters = set(VERDICT_LETTERS.values())
    cells = pd.read_csv(out / "verdicts.csv")["verdict"]
    assert {VERDICT_LETTERS[v] for v in cells} <= letters
    assert (out / "audit.caption.txt").read_text(encoding="utf-8").endswith(in_this_run(summary))
    assert json.loads((out / "run.json").read_text())["config"] == "--config-json"
    # one source only; malformed JSON names the option
    assert main(["audit", "--config-json", "{", "--out-dir", str(tmp_path / "x"), "--quiet"]) == 2
    assert "--config-json: expected JSON" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["audit", "--config", "a.yaml", "--config-json", "{}", "--out-dir", str(tmp_path / "y")])


@pytest.mark.slow  # a dry run: about 5 CPU s, 10 to 30 s wall on a busy 2-core machine
@pytest.mark.skipif(shutil.which("snakemake") is None, reason="snakemake not installed")
def test_the_audit_job_is_planned_with_its_section_and_its_files_in_the_report(tmp_path):
    config = yaml.safe_load((ROOT / ".test/config/config.yaml").read_text())
    config["results"] = str(tmp_path / "results")
    config["audit"] = {**TINY, "filters": FILTERS}
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    proc = subprocess.run(
        ["snakemake", "-n", "--cores", "2", "--configfile", str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    text = proc.stdout + proc.stderr
    assert "rule audit:" in text
    assert (
        f"{tmp_path}/results/audit/filters.png" in text and f"{tmp_path}/results/audit/verdicts.html" in text
    )
