"""Posterior files of every family (PPP, IIDCluster, PMBM, MBM), dimension and length round-trip
exactly and give the same NLL (a property test writing 30 files)."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.posterior_files import assert_same, random_steps

import nllbench as nb
from nllbench.store import read_posterior, write_posterior


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.integers(0, 2**32 - 1),
    st.sampled_from(["PPP", "IIDCluster", "PMBM", "MBM"]),
    st.integers(1, 4),
    st.integers(1, 4),
)
def test_posterior_round_trip(tmp_path, seed, family, d, K):
    rng = np.random.default_rng(seed)
    steps = random_steps(rng, family, d, K)
    path = tmp_path / f"p{seed}.nc"
    write_posterior(steps, path, {"filter": "test", "filter_parameters": {"a": 1}, "seed": seed})
    back = read_posterior(path)
    assert len(back) == K and back.attrs["filter"] == "test" and back.attrs["seed"] == seed
    for a, b in zip(steps, back, strict=True):
        assert_same(a, b)
    # and the NLL is the same number
    y = rng.normal(size=(1, d))
    for a, b in zip(steps, back, strict=True):
        assert nb.nll(a, y, q=3).value == nb.nll(b, y, q=3).value
