"""``nllbench example`` and ``nllbench theorem1`` print the paper's numbers; a bad argument is one line."""

from __future__ import annotations

import subprocess
import sys

from nllbench.cli import main


def test_cli_example(capsys):
    assert main(["example", "1"]) == 0
    out = capsys.readouterr().out
    assert "4.6" in out and "16.3" in out and "reconstructed" in out
    assert main(["example", "2"]) == 0
    assert "inf" in capsys.readouterr().out


def test_cli_theorem1(capsys):
    assert main(["theorem1", "--trials", "3"]) == 0
    assert "max |difference|" in capsys.readouterr().out


def test_cli_bad_argument_is_one_line():
    proc = subprocess.run(
        [sys.executable, "-m", "nllbench.cli", "example", "3"], capture_output=True, text=True
    )
    assert proc.returncode == 2
    assert "invalid choice" in proc.stderr and "Traceback" not in proc.stderr
