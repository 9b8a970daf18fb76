"""A small step cube file (``steps.nc``) for the readers' refusal tests."""

from __future__ import annotations

import numpy as np


def cube_file(tmp_path):
    """A three-step cube of NLL and GOSPA records, written to ``tmp_path / "steps.nc"``."""
    from nllbench.pipeline.cube import step_cube, write_step_cube

    base = dict(
        scenario="s", filter="pmbm", clutter=5.0, pd=0.9, cov_scale=1.0, temper=1.0, marginal="a", seed=0
    )
    steps = np.arange(3, dtype=np.int64)
    records = [
        ({**base, "q": 1}, "nll", steps, np.array([1.0, 2.0, 3.0])),
        ({**base, "q": 0}, "gospa", steps, np.array([0.5, 0.25, 0.0])),
    ]
    path = tmp_path / "steps.nc"
    write_step_cube(step_cube(records), path)
    return path
