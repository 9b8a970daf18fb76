"""The modules a piece of code imports, run in a fresh interpreter on this tree's sources."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from support.paths import ROOT


def modules_after(code: str, top_level: bool = False) -> set[str]:
    """The names in ``sys.modules`` after ``code`` runs in a fresh interpreter (``PYTHONPATH``: this
    tree's ``src``); ``top_level``: only their first part (``numpy``, ``nllbench``, ...)."""
    names = "{m.split('.')[0] for m in sys.modules}" if top_level else "sys.modules"
    probe = code + f"\nimport sys, json\nprint(json.dumps(sorted({names})))\n"
    out = subprocess.run(
        [sys.executable, "-c", probe],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
    )
    return set(json.loads(out.stdout.strip().splitlines()[-1]))
