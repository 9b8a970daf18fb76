"""Command-line values are checked before anything is written, and the option at fault named."""

from __future__ import annotations

import os
import re

import pytest


@pytest.mark.parametrize(
    "argv, message",
    [
        (
            ["evaluate", "p.nc", "s.nc", "-o", "m.nc", "--existence-threshold", "2"],
            "--existence-threshold: .* \\[0, 1\\)",
        ),
        (["evaluate", "p.nc", "s.nc", "-o", "m.nc", "--existence-threshold", "nan"], "--existence-threshold"),
        (
            ["evaluate", "p.nc", "s.nc", "-o", "m.nc", "--q", "0"],
            "--q: expected an integer in \\[1, 1000000\\], got '0'",
        ),
        (["evaluate", "p.nc", "s.nc", "-o", "m.nc", "--cutoff", "inf"], "--cutoff: expected a finite number"),
        (
            ["evaluate", "p.nc", "s.nc", "-o", "m.nc", "--p", "0.5"],
            "--p: expected a finite number in \\[1, inf\\)",
        ),
        (
            ["simulate", "--scenario", "chalmers", "--seed", "-1", "-o", "s.nc"],
            "--seed: expected an integer in \\[0, 9223372036854775807\\]",
        ),
        (
            ["simulate", "--scenario", "chalmers", "--seeds", "1", "x", "--output-dir", "d"],
            "--seeds: expected an integer",
        ),
        (
            ["simulate", "--scenario", "chalmers", "--clutter-rate", "nan", "-o", "s.nc"],
            "--clutter-rate: .*got 'nan'",
        ),
        (
            ["simulate", "--scenario", "chalmers", "--pd", "0", "-o", "s.nc"],
            "--pd: expected a finite number in \\(0, 1\\]",
        ),
        (
            ["simulate", "--scenario", "chalmers", "--truth-seed", "-2", "-o", "s.nc"],
            "--truth-seed: .*in \\[-1, ",
        ),
        (["filter", "s.nc", "--filter", "pmbm", "-o", "p.nc", "--max-hypotheses", "1.5"], "--max-hypotheses"),
        (["filter", "s.nc", "--filter", "pmbm", "-o", "p.nc", "--gate", "-1"], "--gate: .*\\(0, inf\\)"),
        (["filter", "s.nc", "--filter", "pmbm", "-o", "p.nc", "--recycle", "1.5"], "--recycle: .*\\[0, 1\\]"),
        (["theorem1", "--rho", "1"], "--rho: expected a finite number in \\(0, 1\\)"),
    ],
)
def test_command_line_values_are_checked_and_the_option_named(argv, message, capsys, tmp_path, monkeypatch):
    from nllbench.cli import main

    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert re.search("argument " + message, err), err
    assert os.listdir(tmp_path) == []  # refused before anything is written
