"""``nllbench audit``: its outputs, its refusal of foreign files, the probe values each measure prefers."""

from __future__ import annotations

import pandas as pd
import pytest
import yaml
from support.audit_study import TINY

from nllbench.cli import main


def test_command_writes_its_outputs_and_refuses_foreign_files(tmp_path, capsys):
    cfg = tmp_path / "audit.yaml"
    cfg.write_text(yaml.safe_dump(TINY))
    out = tmp_path / "audit"
    assert main(["audit", "--config", str(cfg), "--out-dir", str(out), "--quiet"]) == 0
    names = {p.name for p in out.iterdir()}
    assert {"rows.csv", "verdicts.csv", "summary.csv", "audit.png", "audit.pdf", "run.json"} <= names
    rows = pd.read_csv(out / "rows.csv")
    assert set(rows["measure"]) >= {"nll", "pgospa", "1-hota", "nees", "trajectory_nll", "ptgospa", "tgospa"}
    honest = rows[rows["side"] == "honest"]
    assert (honest["delta"] == 0).all() and (honest["delta_se"] == 0).all()
    summary = pd.read_csv(out / "summary.csv")
    assert (
        summary.set_index("measure").loc["gospa", "verdict"].startswith("proper (insensitive to covariance")
    )
    # a second run replaces what nllbench wrote; a directory of someone else's files is refused
    assert main(["audit", "--config", str(cfg), "--out-dir", str(out), "--quiet"]) == 0
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("two years of work\n")
    assert main(["audit", "--config", str(cfg), "--out-dir", str(foreign), "--quiet"]) == 2
    assert "refusing to replace a directory that nllbench did not write" in capsys.readouterr().err
    assert (foreign / "notes.txt").read_text() == "two years of work\n"


@pytest.mark.slow
def test_command_writes_the_probe_values_each_measure_prefers_on_a_filter_run(tmp_path):
    config = {
        "settings": TINY["settings"],
        "filters": [{"name": "PMB run", "filter": "pmb", "scenario": "williams15", "steps": 3, "seed": 1}],
    }
    cfg = tmp_path / "audit.yaml"
    cfg.write_text(yaml.safe_dump(config))
    out = tmp_path / "audit"
    assert main(["audit", "--config", str(cfg), "--out-dir", str(out), "--quiet"]) == 0
    prefs = pd.read_csv(out / "filter_preferences.csv").set_index(["measure", "family"])
    assert set(prefs.index.get_level_values("family")) == {"covariance", "existence"}
    assert prefs.loc[("gospa", "covariance"), "insensitive"]  # the estimates do not see covariances
    assert not prefs.loc[("nll", "covariance"), "insensitive"]
    assert (out / "filters.png").is_file() and not (out / "audit.png").exists()
