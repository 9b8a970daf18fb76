"""The pruned, component-wise ranking (nllbench.engine._pruned) against brute force and the plain kernel."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from support.ranking_cases import canonical_brute_force, sparse_problem

from nllbench.engine._murty import murty_kernel as _murty_kernel
from nllbench.engine._murty import solution_cost as _solution_cost
from nllbench.engine._murty import solve_root as _solve_root
from nllbench.engine._pruned import (
    _k_best_choices,
    _prune,
    _ranked_pruned,
    _upper_bound,
)
from nllbench.engine._pruned import ranked as _ranked


def root_state(C, mandatory):
    n, M = C.shape
    col = np.empty(n, dtype=np.int64)
    row4col = np.empty(M, dtype=np.int64)
    u, v = np.empty(n), np.empty(M)
    scratch = (
        np.zeros((n, M), dtype=bool),
        np.zeros(M, dtype=bool),
        np.empty(M),
        np.empty(M, dtype=np.int64),
        np.empty(M, dtype=bool),
        np.empty(M, dtype=np.int64),
    )
    ok = _solve_root(C, ~mandatory, M - n, col, row4col, u, v, *scratch)
    return ok, col, row4col, u, v


def test_ranking_a_separated_scene_equals_the_plain_kernel():
    """Pruning and components on bench-like scenes: the same costs as the kernel on the whole matrix."""
    rng = np.random.default_rng(5)
    pruned_somewhere = False
    for _ in range(40):
        n = int(rng.integers(8, 22))
        m = n + int(rng.integers(0, 20))
        C = sparse_problem(rng, n, m)
        mand = np.zeros(C.shape[1], dtype=bool)
        mand[rng.integers(0, m)] = rng.random() < 0.3
        for Q in (2, 10, 101, 300):
            costs, cols, rest = _ranked(C, mand, Q, math.inf)
            plain, plain_cols, _ = _murty_kernel(C, mand, Q + 1, math.inf)
            order = np.argsort(plain, kind="stable")
            assert np.array_equal(costs, plain[order][:Q])
            for t in range(costs.size):
                assert _solution_cost(C, cols[t]) == costs[t]
                assert len(set(cols[t].tolist())) == n
                assert all(j in cols[t] for j in np.flatnonzero(mand))
            if plain.size > Q:
                assert rest <= plain[order][Q]
            ok, col, row4col, u, v = root_state(C, mand)
            ub, _ = _upper_bound(C, col, row4col, ~mand, _solution_cost(C, col), Q + 1)
            if ub < math.inf:
                keep = _prune(C, mand, col, row4col, u, v, _solution_cost(C, col), ub, 0.0)[0]
                pruned_somewhere |= bool(keep.sum() < np.isfinite(C).sum() // 2)
    assert pruned_somewhere, "the scenes never exercised the pruning"


def test_ranking_respects_a_bound_like_the_kernel():
    rng = np.random.default_rng(6)
    for _ in range(30):
        C = sparse_problem(rng, 10, 12)
        mand = np.zeros(C.shape[1], dtype=bool)
        full, _, _ = _ranked(C, mand, 60, math.inf)
        cut = float(full[25])
        part, _, rest = _ranked(C, mand, 60, cut)
        assert np.array_equal(part, full[full <= cut])
        assert rest > cut


def test_upper_bound_is_at_least_the_qth_best_cost():
    rng = np.random.default_rng(8)
    found_finite = 0
    for _ in range(200):
        n = int(rng.integers(1, 6))
        M = n + int(rng.integers(0, 4))
        C = rng.normal(size=(n, M))
        C[rng.random((n, M)) < 0.2] = np.inf
        mand = rng.random(M) < 0.15
        if mand.sum() > n:
            continue  # the callers rule this out before solving the root
        ok, col, row4col, u, v = root_state(C, mand)
        ref = canonical_brute_force(C, mand)
        assert ok == bool(ref)
        if not ok:
            continue
        for Q in (1, 2, 5, 12):
            ub, _ = _upper_bound(C, col, row4col, ~mand, _solution_cost(C, col), Q)
            if len(ref) < Q:
                assert ub == math.inf
            elif ub < math.inf:
                found_finite += 1
                assert ub >= ref[Q - 1][0] - 1e-12
    assert found_finite > 100


def test_k_best_choices_against_the_full_product():
    rng = np.random.default_rng(10)
    for _ in range(200):
        sizes = rng.integers(1, 5, int(rng.integers(1, 6)))
        options = [np.sort(np.round(rng.exponential(1.0, k), 1)) for k in sizes]
        start = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        cost = np.concatenate(options)
        every = sorted(
            sum(options[c][p] - options[c][0] for c, p in enumerate(pick))
            for pick in itertools.product(*[range(k) for k in sizes])
        )
        for Q in (1, 3, 10, 50):
            extra, parent, changed, pick, op, order, nxt = _k_best_choices(start, cost, Q)
            assert extra.size == min(Q, len(every))
            np.testing.assert_allclose(np.sort(extra), every[: extra.size], atol=1e-12)
            assert np.all(np.diff(extra) >= -1e-12)  # popped in increasing order
            if extra.size < len(every):
                assert nxt <= every[extra.size] + 1e-12
            else:
                assert nxt == math.inf


@pytest.mark.parametrize(
    "scale, offset",
    [(1e-300, 0.0), (1e-6, 0.0), (1e6, 0.0), (1e200, 0.0), (1.0, 1e12), (1e-3, 1e6), (1.0, -1e6)],
)
def test_extreme_magnitudes_rank_exactly(scale, offset):
    """Separated scenes scaled and shifted: the canonical prefix of brute force, never NaN, rest valid."""
    rng = np.random.default_rng(11)
    for _ in range(25):
        n = int(rng.integers(3, 6))
        C = sparse_problem(rng, n, int(rng.integers(1, 4))) * scale + offset
        mand = np.zeros(C.shape[1], dtype=bool)
        ref = canonical_brute_force(C, mand)
        for Q in (4, 9, 30):
            costs, cols, rest = _ranked(C, mand, Q, math.inf)
            assert costs.tolist() == [c for c, _ in ref[:Q]]
            assert [tuple(r) for r in cols] == [c for _, c in ref[:Q]]
            assert not math.isnan(rest)
            if len(ref) > Q:
                assert rest <= ref[Q][0] + 1e-9 * abs(ref[Q][0])


def test_a_huge_common_cost_does_not_blow_up_the_ranking():
    """One row forced onto a far mandatory column (cost 1e12): the others still rank quickly and exactly."""
    rng = np.random.default_rng(12)
    n, m = 14, 20
    C = sparse_problem(rng, n, m)
    C[0, :] = np.inf
    C[0, m - 1] = 1e12  # the only cell of row 0: a far Bernoulli with r = 1
    mand = np.zeros(C.shape[1], dtype=bool)
    mand[m - 1] = True
    for Q in (10, 200):
        costs, cols, rest = _ranked(C, mand, Q, math.inf)
        plain, _, _ = _murty_kernel(C, mand, Q + 1, math.inf)
        assert np.array_equal(costs, np.sort(plain, kind="stable")[:Q])
        assert costs.size == Q and rest < math.inf
        # the rounding tolerance follows the unit roundoff of the sums (about 0.1 here), so the
        # pruned ranking's own bound stays near the next cost (a 1e-10 tolerance, about 300 here,
        # hid every gap and made the canonical check re-rank until everything was listed: 5 s
        # instead of 0.2 ms)
        assert _ranked_pruned(C, mand, Q + 1, math.inf)[2] > costs[-1] - 1.0


def test_edges_on_the_pruned_path_match_the_kernel():
    """Bounds at and below the root, mandatory columns, a row with one cell: as the plain kernel."""
    rng = np.random.default_rng(13)
    for _ in range(60):
        n = int(rng.integers(4, 12))
        m = n + int(rng.integers(0, 6))
        C = sparse_problem(rng, n, m)
        mand = np.zeros(C.shape[1], dtype=bool)
        mand[rng.choice(m, int(rng.integers(0, 3)), replace=False)] = True
        if rng.random() < 0.3:
            i = int(rng.integers(n))
            C[i, :] = np.inf
            C[i, m + i] = 5.0  # a row with one cell
        ref, ref_cols, ref_rest = _murty_kernel(C, mand, 200, math.inf)
        if ref.size == 0:
            costs, _, rest = _ranked(C, mand, 10, math.inf)
            assert costs.size == 0 and rest == math.inf
            continue
        ref = np.sort(ref, kind="stable")
        for bound in (-math.inf, ref[0] - 1.0, ref[0], ref[min(5, ref.size - 1)], math.inf):
            costs, cols, rest = _ranked(C, mand, 30, bound)
            want = ref[ref <= bound + 1e-12 * (1 + abs(bound))][:30] if bound > -math.inf else ref[:0]
            assert np.array_equal(costs, want), bound
            assert -math.inf < rest  # a finite problem: the bound on the rest is a cost, not -inf or NaN
            later = ref[costs.size :]
            if later.size:
                assert rest <= later[0]
            for t in range(costs.size):
                assert all(j in cols[t] for j in np.flatnonzero(mand))


def test_nll_on_separated_scenes_bounds_the_exact_value_and_nll_many_agrees():
    """PMBMs whose association problems take the pruned path: lower <= exact <= upper, nll_many == nll."""
    import nllbench as nb

    rng = np.random.default_rng(14)
    I2 = np.eye(2)
    for _ in range(12):
        n = int(rng.integers(4, 7))
        truth = rng.uniform(0, 200, (n, 2))
        hyps = []
        for _ in range(int(rng.integers(1, 5))):
            near = truth + rng.normal(0, 1.0, truth.shape)
            far = rng.uniform(0, 200, (int(rng.integers(0, 6)), 2))
            means = np.concatenate([near, far])
            r = rng.uniform(0.2, 0.95, len(means))
            hyps.append(nb.MultiBernoulli.gaussian(r, means, np.stack([I2 * 2.0] * len(means))))
        ppp = nb.PPP.uniform(2.0, [0, 0], [200, 200])
        f = nb.PMBM(ppp, hyps, rng.dirichlet(np.ones(len(hyps))))
        exact = nb.nll(f, truth, method="exact").value
        qs = [4, 9, 25, 60]
        many = nb.nll_many(f, truth, qs)
        for q, res in zip(qs, many, strict=True):
            one = nb.nll(f, truth, q=q)
            assert res == one
            assert one.lower - 1e-9 <= exact <= one.upper + 1e-9
