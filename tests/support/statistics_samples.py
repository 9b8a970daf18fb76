"""Samples for the summary-statistics tests: special values, hypothesis strategies, a base record."""

from __future__ import annotations

import math

from hypothesis import strategies as st

special = st.sampled_from([math.inf, -math.inf, 0.0, -0.0, 5e-324, 1.7976931348623157e308])


values = st.one_of(st.floats(-1e9, 1e9, allow_nan=False), special)


def _base(scenario, filt, clutter, cov, seed):
    return dict(
        scenario=scenario,
        seed=seed,
        filter=filt,
        clutter=clutter,
        pd=0.9,
        cov_scale=cov,
        temper=1.0,
        marginal="position",
    )
