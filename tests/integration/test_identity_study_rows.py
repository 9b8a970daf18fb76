"""The identity study's rows: every filter (PMBM, PMB, trajectory PMBM) and measure on both
conditions, from whole runs; the offsets move positions only."""

from __future__ import annotations

import numpy as np
import pytest


def test_identity_study_rows():
    """The study's rows: every filter and measure on both conditions; the offsets move positions only."""
    import pandas as pd

    from nllbench.pipeline.identity_study import SEPARATING_OFFSETS, identity_rows, separated

    x = [np.arange(8.0).reshape(2, 4)]
    moved = separated(x, [np.array([0, 5])])[0]
    assert moved[:, :2] == pytest.approx(x[0][:, :2] + SEPARATING_OFFSETS[[0, 1]])
    assert moved[:, 2:] == pytest.approx(x[0][:, 2:])
    table = pd.DataFrame(identity_rows([0], steps=6))
    assert set(table["condition"]) == {"coalescence", "separated"}
    assert set(table["filter"]) == {"pmbm", "pmb", "tpmbm"}
    assert len(table) == 2 * (2 * 4 + 3)
    assert np.all(np.isfinite(table["value"]))
