"""Paths the tests read: the repository root, its ``src`` tree and the tests' data files."""

from __future__ import annotations

from pathlib import Path

#: The repository root (the folder of ``pyproject.toml``).
ROOT = Path(__file__).resolve().parents[2]
#: The package sources.
SRC = ROOT / "src"
#: Data files the tests read (``tests/support/data``).
DATA = Path(__file__).resolve().parent / "data"
