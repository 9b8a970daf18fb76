"""Fixtures and hooks of every test layer (tests/unit, integration, cli, workflow,
crosscheck, layout).

Each test gets the marker of its layer (its first folder under ``tests/``), so
``pytest -m "unit and not slow"`` selects what ``pytest tests/unit`` runs. Helpers shared by the layers
live in ``tests/support`` (imported as ``support.<module>``).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))

# the random densities once defined here, for tests that still import them from conftest
from support.densities import random_covs, random_mb, random_pmbm, random_ppp, random_r  # noqa: E402, F401
from support.paths import ROOT  # noqa: E402

#: The folders of the layers under tests/, each also a marker (pyproject.toml, [tool.pytest.ini_options]).
LAYERS = ("unit", "integration", "cli", "workflow", "crosscheck", "layout")
HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(config, items):
    """Mark each test with its layer: the first folder of its file under tests/."""
    for item in items:
        parts = Path(str(item.path)).resolve().relative_to(HERE).parts
        if len(parts) > 1 and parts[0] in LAYERS:
            item.add_marker(getattr(pytest.mark, parts[0]))


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@pytest.fixture(scope="session")
def test_run(tmp_path_factory):
    """The .test workflow run locally once per test session (its results directory)."""
    import shutil
    import subprocess

    if shutil.which("snakemake") is None:
        pytest.skip("snakemake not installed")
    results = tmp_path_factory.mktemp("wf") / "results"
    proc = subprocess.run(
        [
            "snakemake",
            "--cores",
            "2",
            "--configfile",
            ".test/config/config.yaml",
            "--config",
            f"results={results}",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stderr[-5000:]
    return results


@pytest.fixture(autouse=True)
def _close_figures():
    """Close every pyplot figure a test left open (matplotlib warns past 20 open figures, and a
    warning attributed to nllbench is an error here). Loads nothing when the test drew nothing."""
    yield
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is not None:
        pyplot.close("all")
