"""Summary statistics on many random samples: the cube's long table round trip, batched Wilcoxon tests."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import wilcoxon
from support.statistics_samples import _base, values

from nllbench.pipeline.cube import (
    LONG_COLUMNS,
    long_table,
    read_step_cube,
    step_cube,
    step_values,
    write_step_cube,
)


def test_batched_wilcoxon_equals_one_call_per_sample():
    """The paired table tests equal-length samples in one vectorised call: same p-values, bit for bit."""
    from nllbench.pipeline.statistics import wilcoxon_p

    rng = np.random.default_rng(5)
    samples = [None, np.empty(0)]
    for n in (1, 3, 6, 6, 6, 12, 60):
        for _ in range(4):
            x = rng.normal(size=n)
            if rng.random() < 0.5:
                x = np.round(x * 2) / 2  # tied magnitudes
                x[x == 0] = 0.5
            samples.append(x)
    got = wilcoxon_p(samples)
    assert math.isnan(got[0]) and got[1] == 1.0
    for x, p in zip(samples[2:], got[2:], strict=True):
        assert p == float(wilcoxon(x, zero_method="wilcox").pvalue)


@st.composite
def step_records(draw):
    """Records as metrics files give them: runs of different lengths, probes at one Q only,
    Q-independent measures repeated in each Q's file, an exact NLL in some runs only."""
    records = []
    for scenario, length in (("chalmers", draw(st.integers(1, 4))), ("williams15", draw(st.integers(0, 3)))):
        steps = np.arange(length, dtype=np.int64)
        for filt in draw(
            st.lists(st.sampled_from(["pmbm", "phd", "mbm01"]), min_size=1, max_size=2, unique=True)
        ):
            for clutter, seed in ((5.0, 0), (20.0, 3)):
                exact = draw(st.booleans())
                for cov, qs in ((1.0, (1, 10)), (0.25, (10,))):
                    base = _base(scenario, filt, clutter, cov, seed)
                    point = {
                        m: draw(st.lists(values, min_size=length, max_size=length)) for m in ("gospa", "mota")
                    }
                    exact_values = draw(st.lists(values, min_size=length, max_size=length))
                    for q in qs:
                        for m in ("nll", "nll_missed"):
                            v = draw(st.lists(values, min_size=length, max_size=length))
                            records.append(({**base, "q": q}, m, steps, np.array(v)))
                        # the same Q-independent values in every Q's file
                        for m, v in point.items():
                            records.append(({**base, "q": 0}, m, steps, np.array(v)))
                        if exact:
                            records.append(({**base, "q": 0}, "nll_exact", steps, np.array(exact_values)))
    return records


def _long_by_rows(records):
    """The long table built row by row (how aggregate built it before the cube)."""
    rows = [
        {**lab, "step": int(k), "measure": m, "value": float(x)}
        for lab, m, steps, vals in records
        for k, x in zip(steps, vals, strict=True)
    ]
    df = pd.DataFrame(rows, columns=LONG_COLUMNS)
    df = df.drop_duplicates(subset=LONG_COLUMNS[:-1]).sort_values(LONG_COLUMNS[:-1], kind="stable")
    return df.reset_index(drop=True)


@settings(max_examples=25, deadline=None)
@given(step_records())
def test_cube_round_trips_to_the_long_table_exactly(tmp_path_factory, records):
    cube = step_cube(records)
    path = tmp_path_factory.mktemp("cube") / "steps.nc"
    write_step_cube(cube, path)
    back = read_step_cube(path)
    expected = _long_by_rows(records)
    for c in ("scenario", "filter", "marginal", "measure"):
        expected[c] = expected[c].astype(str)
    got = long_table(back)
    pd.testing.assert_frame_equal(got, expected)
    # to the bit: -0.0, subnormals and infinities survive
    assert np.array_equal(np.signbit(got["value"]), np.signbit(expected["value"]))
    assert step_values(back) == len(expected)
    # present cells are never NaN; absent cells are exactly the masked ones
    for m in ("nll", "gospa"):
        mask = back[back[m].attrs["ancillary_variables"]].values
        assert not np.isnan(back[m].values[mask]).any() and np.isnan(back[m].values[~mask]).all()
