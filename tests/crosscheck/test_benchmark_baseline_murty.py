"""The benchmark's baseline Murty is itself correct, so its ratio means something."""

from __future__ import annotations

import sys

import numpy as np
from support.paths import ROOT

from nllbench.engine.assignment import murty

sys.path.insert(0, str(ROOT / "benchmarks"))
from baseline_murty import murty_baseline  # noqa: E402


def test_baseline_agrees_with_murty():
    rng = np.random.default_rng(8)
    for _ in range(50):
        n = int(rng.integers(1, 6))
        M = n + int(rng.integers(0, 6))
        C = rng.normal(size=(n, M))
        C[rng.random((n, M)) < 0.2] = np.inf
        Q = int(rng.integers(1, 60))
        np.testing.assert_allclose(murty_baseline(C, Q), murty(C, Q).costs, atol=1e-9)
