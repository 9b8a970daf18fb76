"""Metrics files round-trip any float (signed zeros, infinities, subnormals) and any count exactly,
whatever width each is stored at, for nllbench's reader and a plain xarray one (a property test
writing 40 files)."""

from __future__ import annotations

import numpy as np
import xarray as xr
from hypothesis import given, settings
from hypothesis import strategies as st

from nllbench.store import metrics as store_metrics


def _write_variables(path, data: dict, attrs: dict | None = None) -> None:
    from nllbench.store._netcdf import header, write_dataset

    coords = {
        "step": (("step",), np.arange(5)),
        "q": (("q",), np.array([1, 3])),
        "alpha": (("alpha",), np.ones(3)),
    }
    ds = xr.Dataset(
        store_metrics.encode_variables({**data, **coords}),
        attrs=store_metrics.classic_attrs(
            {**header("metrics"), "evaluation_settings": "{}", **(attrs or {})}
        ),
    )
    write_dataset(ds, path, file_format=store_metrics.METRICS_FORMAT)


def _raw(path):
    from nllbench.store._netcdf import open_dataset

    return store_metrics._decode(open_dataset(path, "metrics"), path)


_FLOATS = st.floats(allow_nan=False, width=64) | st.sampled_from([np.inf, -np.inf, -0.0, 5e-324, 2.0**53 + 2])


_COUNTS = st.sampled_from(
    [0, 1, 126, 127, -126, 32767, -32766, 2**31 - 1, 2**31, -(2**31), 2**53]
) | st.integers(-(2**53), 2**53)


@settings(max_examples=40, deadline=None)
@given(
    floats=st.lists(_FLOATS, min_size=10, max_size=10),
    counts=st.lists(_COUNTS, min_size=5, max_size=5),
    alpha_counts=st.lists(st.integers(0, 300), min_size=3, max_size=3),
)
def test_floats_and_counts_round_trip_exactly_whatever_their_stored_width(
    tmp_path_factory, floats, counts, alpha_counts
):
    path = tmp_path_factory.mktemp("rt") / "m.nc"
    data = {
        "nll_value": (("step", "q"), np.array(floats).reshape(5, 2)),
        "n_truth": (("step",), np.array(counts, dtype=np.int64)),
        "hota_tp": (("alpha",), np.array(alpha_counts, dtype=np.int64)),
    }
    _write_variables(path, data)
    back = _raw(path)
    for name, (dims, values) in data.items():
        assert back[name].dims == dims
        assert back[name].dtype == values.dtype
        np.testing.assert_array_equal(back[name].values, values)
        assert np.array_equal(np.signbit(back[name].values), np.signbit(values))
    with xr.open_dataset(path) as plain:  # a plain reader sees the same numbers (no fill-value masking)
        np.testing.assert_array_equal(plain["n_truth"].values, counts)
