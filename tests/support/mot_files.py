"""MOTChallenge text files for the score tests, written from rows of numbers."""

from __future__ import annotations

from pathlib import Path


def write_mot(path: Path, rows) -> Path:
    """``path`` holding one line per row (``frame, id, left, top, width, height, conf/flag``, printed
    with ``:g``) followed by ``,-1,-1,-1``; its parent folders are created. Returns ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(",".join(f"{v:g}" for v in r) + ",-1,-1,-1\n" for r in rows))
    return path
