"""Hostile configurations are refused before any job, with one line naming the file, line and key:
a key given twice, an alias bomb, a huge file, a results path with '~' or braces, and an existing
results directory that nllbench did not write (whose files Snakemake would delete)."""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import pytest
import yaml
from support.paths import ROOT

from nllbench.pipeline.config_file import (
    MAX_CONFIG_BYTES,
    MAX_CONFIG_VALUES,
    check_path_value,
    check_results,
    check_results_directory,
    config_origin,
    mark_results_directory,
    read_config_file,
)
from nllbench.store import MARKER
from nllbench.store.atomic import partial_name

TEST_CONFIG = ROOT / ".test/config/config.yaml"


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def bomb(depth: int, mapping: bool) -> str:
    """A YAML alias bomb under the valid key sweep.clutter_rates: 4**depth values once expanded."""
    lines = ["results: out", "sweep:", "  clutter_rates:", "    - &a0 [1.0]"]
    for i in range(1, depth + 1):
        if mapping:
            body = "{" + ", ".join(f"k{j}: *a{i - 1}" for j in range(4)) + "}"
        else:
            body = "[" + ", ".join(f"*a{i - 1}" for _ in range(4)) + "]"
        lines.append(f"    - &a{i} {body}")
    return "\n".join(lines) + "\n"


def test_a_key_given_twice_is_refused_naming_the_key_and_both_lines(tmp_path):
    path = write(tmp_path / "c.yaml", "results: out\nsweep:\n  seeds: 2\n  steps: 3\n  seeds: 50\n")
    with pytest.raises(
        ValueError, match=r"c\.yaml:5: config key sweep\.seeds: given twice, at lines 3 and 5"
    ):
        read_config_file(path)
    write(path, "results: a\nresults: b\n")
    with pytest.raises(ValueError, match=r":2: config key results: given twice, at lines 1 and 2"):
        read_config_file(path)
    # the same key in two different mappings is no duplicate
    assert read_config_file(write(path, "a: {x: 1}\nb: {x: 2}\n")).data == {"a": {"x": 1}, "b": {"x": 2}}


@pytest.mark.parametrize("mapping", [False, True])
def test_an_alias_bomb_is_refused_without_being_expanded(tmp_path, mapping):
    path = write(tmp_path / "bomb.yaml", bomb(40, mapping))  # 4**40 values once expanded
    start = time.perf_counter()
    with pytest.raises(
        ValueError, match=r"bomb\.yaml:\d+: config key sweep\.clutter_rates\[\d+\]: expands to"
    ):
        read_config_file(path)
    assert time.perf_counter() - start < 2.0


def test_a_few_aliases_are_still_read(tmp_path):
    path = write(tmp_path / "ok.yaml", "a: &x [1, 2]\nb: *x\nc: {<<: {p: 1}, q: 2}\n")
    config = read_config_file(path)
    assert config.data == {"a": [1, 2], "b": [1, 2], "c": {"p": 1, "q": 2}}
    assert config.lines["b"] == 2 and config.lines["c.q"] == 3
    assert MAX_CONFIG_VALUES >= 1000  # the bound leaves room for any real configuration


def test_a_recursive_alias_a_huge_file_and_non_configurations_are_refused(tmp_path):
    with pytest.raises(ValueError, match=r"r\.yaml:2: config key b\[0\]: a YAML alias refers to the value"):
        read_config_file(write(tmp_path / "r.yaml", "a: 1\nb: &b [*b]\n"))
    huge = write(tmp_path / "huge.yaml", "results: out\n# " + "x" * MAX_CONFIG_BYTES + "\n")
    with pytest.raises(
        ValueError, match=rf"huge\.yaml: expected a configuration file of at most {MAX_CONFIG_BYTES}"
    ):
        read_config_file(huge)
    with pytest.raises(ValueError, match=r"list\.yaml:1: expected a mapping of config keys at top level"):
        read_config_file(write(tmp_path / "list.yaml", "- 1\n- 2\n"))
    with pytest.raises(ValueError, match=r"bad\.yaml:2: not valid YAML"):
        read_config_file(write(tmp_path / "bad.yaml", "a: [1\nb: 2\n"))
    with pytest.raises(ValueError, match=r"missing\.yaml: cannot read"):
        read_config_file(tmp_path / "missing.yaml")


def test_every_shipped_config_is_read_strictly_to_what_yaml_reads():
    for path in [*sorted((ROOT / "config").glob("*.yaml")), TEST_CONFIG]:
        assert read_config_file(path).data == yaml.safe_load(path.read_text()), path


@pytest.mark.parametrize(
    ("value", "what"),
    [
        ("~/nllbench-out", "expected the full path, got '~/nllbench-out'"),
        ("~alice/out", "expected the full path"),
        ("out/{date}", "expected a path without braces, got 'out/{date}'"),
        ("out/}", "expected a path without braces"),
    ],
)
def test_results_paths_the_workflow_would_misread_are_refused_with_file_and_line(tmp_path, value, what):
    path = write(tmp_path / "c.yaml", f"sweep: {{seeds: 2}}\nresults: '{value}'\n")
    files = [read_config_file(path)]
    with pytest.raises(ValueError, match=r"c\.yaml:2: config key results: ") as info:
        check_results(files[0].data, files)
    assert what in str(info.value) and "\n" not in str(info.value)
    assert not (tmp_path / "~").exists()


def test_a_path_given_on_the_command_line_is_named_as_such(tmp_path):
    files = [read_config_file(write(tmp_path / "c.yaml", "results: out\n"))]
    assert config_origin("results", files) == f"{files[0].path}:1"
    assert config_origin("results", files, {"results": "~/x"}) == "--config"
    with pytest.raises(ValueError, match=r"^--config: config key results: expected the full path"):
        check_results({"results": "~/x"}, files, {"results": "~/x"})
    with pytest.raises(ValueError, match=r"config key sweep\.truth: expected a path without braces"):
        check_path_value("sweep.truth", "truth/{x}.csv", "c.yaml:3")


def test_an_existing_directory_that_nllbench_did_not_write_is_refused_and_kept(tmp_path):
    mine = tmp_path / "mine"
    (mine / "tables").mkdir(parents=True)
    (mine / "tables/summary.csv").write_text("my numbers\n")
    with pytest.raises(ValueError, match=r"c\.yaml:1: config key results: refusing .*did not write") as info:
        check_results_directory(mine, "c.yaml:1")
    assert f"touch {str(mine / MARKER)!r}" in str(info.value)
    assert (mine / "tables/summary.csv").read_text() == "my numbers\n"
    (tmp_path / "file").write_text("x")
    with pytest.raises(ValueError, match="expected a directory, got the file"):
        check_results_directory(tmp_path / "file")


def test_new_empty_and_nllbench_results_directories_are_accepted(tmp_path):
    check_results_directory(tmp_path / "new")
    (tmp_path / "empty").mkdir()
    check_results_directory(tmp_path / "empty")
    partial_name(tmp_path / "empty/summary.csv").write_text("")  # a killed run's temporary
    check_results_directory(tmp_path / "empty")
    run = tmp_path / "run"
    marker = mark_results_directory(run)  # what a run does when it starts
    assert marker == run / MARKER and '"holds": "workflow results"' in marker.read_text()
    (run / "tables").mkdir()
    (run / "tables/summary.csv").write_text("written by an earlier run\n")
    check_results_directory(run)  # a re-run
    before = marker.read_text()
    mark_results_directory(run)
    assert marker.read_text() == before
    check_results_directory(ROOT / "results")  # the repository's results/ (README.md) ships its marker


snakemake_missing = pytest.mark.skipif(shutil.which("snakemake") is None, reason="snakemake not installed")


def dry_run(configfile: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["snakemake", "-n", "--cores", "1", "--configfile", str(configfile)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )


@snakemake_missing
def test_a_dry_run_refuses_a_key_given_twice(tmp_path):
    text = TEST_CONFIG.read_text()
    assert text.count("\n  seeds:") == 1
    twice = write(tmp_path / "twice.yaml", text.replace("\n  seeds:", "\n  seeds: 50\n  seeds:", 1))
    proc = dry_run(twice)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "config key sweep.seeds: given twice, at lines" in out, out[-2000:]


@snakemake_missing
def test_a_dry_run_refuses_a_foreign_results_directory_and_touches_nothing(tmp_path):
    mine = tmp_path / "mine"
    (mine / "tables").mkdir(parents=True)
    (mine / "tables/summary.csv").write_text("my numbers\n")
    config = yaml.safe_load(TEST_CONFIG.read_text())
    config["results"] = str(mine)
    foreign = write(tmp_path / "foreign.yaml", yaml.safe_dump(config, sort_keys=False))
    proc = dry_run(foreign)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "config key results: refusing" in out, out[-2000:]
    assert "foreign.yaml:" in out
    assert sorted(p.name for p in mine.rglob("*")) == ["summary.csv", "tables"]
    assert (mine / "tables/summary.csv").read_text() == "my numbers\n"


@snakemake_missing
def test_a_dry_run_refuses_an_alias_bomb_quickly(tmp_path):
    proc = dry_run(write(tmp_path / "bomb.yaml", bomb(40, mapping=False)))
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "expands to more than" in out, out[-2000:]
