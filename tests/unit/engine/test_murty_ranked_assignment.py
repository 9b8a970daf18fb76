"""Murty's ranked assignment against brute-force enumeration."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nllbench.engine.assignment import count_assignments_log, murty


def brute_force(C, mandatory):
    n, M = C.shape
    out = []
    for cols in itertools.permutations(range(M), n):
        if any(mandatory[j] and j not in cols for j in range(M)):
            continue
        cost = sum(C[i, cols[i]] for i in range(n))
        if np.isfinite(cost):
            out.append((cost, cols))
    out.sort(key=lambda t: t[0])
    return out


def check(C, mandatory, Q):
    ref = brute_force(C, mandatory)
    res = murty(C, Q, mandatory)
    want = [c for c, _ in ref[:Q]]
    np.testing.assert_allclose(res.costs, want, rtol=0, atol=1e-9)
    assert np.all(np.diff(res.costs) >= -1e-12)
    seen = {tuple(c) for c in res.columns}
    assert len(seen) == len(res.columns), "an assignment was listed twice"
    for cols, cost in zip(res.columns, res.costs, strict=True):
        assert len(set(cols)) == len(cols)
        assert math.isclose(sum(C[i, cols[i]] for i in range(len(cols))), cost, abs_tol=1e-9)
        assert all(j in cols for j in np.flatnonzero(mandatory))
    if len(ref) > Q:
        assert res.rest <= ref[Q][0] + 1e-9
    if len(ref) < Q:
        assert res.complete


@pytest.mark.parametrize("mand_prob", [0.0, 0.3])
def test_murty_matches_brute_force(mand_prob):
    rng = np.random.default_rng(7)
    for _ in range(400):
        n = int(rng.integers(1, 5))
        M = n + int(rng.integers(0, 4))
        C = rng.normal(size=(n, M))
        if rng.random() < 0.4:
            C = np.round(C)  # many ties
        C[rng.random((n, M)) < 0.2] = np.inf
        check(C, rng.random(M) < mand_prob, int(rng.integers(1, 40)))


@settings(max_examples=60, deadline=None)
@given(
    st.integers(1, 4).flatmap(
        lambda n: st.tuples(
            st.just(n),
            st.integers(n, n + 3).flatmap(
                lambda M: st.tuples(
                    st.lists(st.sampled_from([0.0, 1.0, -1.0, 2.5, np.inf]), min_size=n * M, max_size=n * M),
                    st.lists(st.booleans(), min_size=M, max_size=M),
                    st.just(M),
                )
            ),
        )
    ),
    st.integers(1, 30),
)
def test_murty_property(nm, Q):
    n, (vals, mand, M) = nm
    C = np.array(vals).reshape(n, M)
    check(C, np.array(mand), Q)


def test_square_problem_lists_all_permutations():
    C = np.arange(16, dtype=float).reshape(4, 4) % 5
    res = murty(C, 100)
    assert res.costs.size == 24 and res.complete


def test_infeasible_returns_nothing():
    C = np.array([[np.inf, 1.0], [np.inf, 2.0]])
    res = murty(C, 5)
    assert res.costs.size == 0 and res.complete
    res = murty(np.array([[1.0, 2.0, 3.0]]), 3, mandatory=np.array([True, True, False]))
    assert res.costs.size == 0


def test_empty_rows():
    assert murty(np.empty((0, 3)), 4).costs.tolist() == [0.0]
    assert murty(np.empty((0, 2)), 4, mandatory=np.array([True, False])).costs.size == 0


def test_bound_prunes_but_keeps_cheaper():
    rng = np.random.default_rng(3)
    C = rng.normal(size=(4, 7))
    full = murty(C, 50)
    cut = float(full.costs[10])
    part = murty(C, 50, bound=cut)
    np.testing.assert_allclose(part.costs, full.costs[full.costs <= cut])
    assert part.rest > cut


def test_count_assignments():
    for n in range(5):
        for m in range(5):
            M = m + n
            C = np.full((n, M), np.inf)
            C[:, :m] = 1.0
            C[np.arange(n), m + np.arange(n)] = 1.0
            assert len(brute_force(C, np.zeros(M, bool))) == round(math.exp(count_assignments_log(n, m)))


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(cost=np.ones(3), q=1), "cost: expected a 2-D"),
        (dict(cost=np.ones((3, 2)), q=1), "at most as many rows"),
        (dict(cost=np.array([[np.nan]]), q=1), "NaN"),
        (dict(cost=np.array([[-np.inf]]), q=1), "-inf"),
        (dict(cost=np.ones((1, 1)), q=0), "q: expected a positive integer"),
        (dict(cost=np.ones((1, 2)), q=1, mandatory=np.ones(3, bool)), "mandatory: expected shape"),
    ],
)
def test_murty_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        murty(**kwargs)


def test_count_assignments_with_forced_objects():
    for n in range(4):
        for m in range(4):
            for forced in range(n + 1):
                M = m + n
                C = np.full((n, M), np.inf)
                C[:, :m] = 1.0
                C[np.arange(forced, n), m + np.arange(forced, n)] = 1.0  # first `forced` have no PPP
                got = count_assignments_log(n, m, forced)
                want = len(brute_force(C, np.zeros(M, bool)))
                assert (got == -math.inf and want == 0) or round(math.exp(got)) == want


def test_bound_edge_values():
    C = np.array([[0.1, 0.7], [0.2, 0.1]])
    assert murty(C, 5, bound=-np.inf).costs.size == 0
    tie = murty(C, 10, bound=0.7 + 0.2)  # equal to the second cost up to rounding: kept
    assert tie.costs.size == 2
    with pytest.raises(ValueError, match="bound: expected a number"):
        murty(C, 2, bound=np.nan)
    with pytest.raises(ValueError, match="q: expected a positive integer"):
        murty(C, True)
    with pytest.raises(ValueError, match="cost: expected finite magnitudes"):
        murty(np.array([[1e300, 0.0]]), 1)


def test_huge_q_allocates_only_what_exists():
    res = murty(np.zeros((1, 2)), 10**9)
    assert res.costs.size == 2 and res.complete
