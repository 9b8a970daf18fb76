"""The pruned ranking (nllbench.engine._pruned) is the canonical prefix of every assignment by
enumeration, on 150 random problems of each kind (normal, ties, sparse, large costs)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from support.ranking_cases import canonical_brute_force, sparse_problem

from nllbench.engine._pruned import ranked as _ranked


@pytest.mark.parametrize("kind", ["normal", "ties", "sparse", "large"])
def test_ranked_is_the_canonical_prefix_of_brute_force(kind):
    rng = np.random.default_rng({"normal": 1, "ties": 2, "sparse": 3, "large": 4}[kind])
    for _ in range(150):
        n = int(rng.integers(1, 6))
        M = n + int(rng.integers(0, 4))
        if kind == "sparse":
            m = max(M - n, 1)
            C, M = sparse_problem(rng, n, m), n + m
        else:
            C = rng.normal(size=(n, M))
            if kind == "ties":
                C = np.round(C * 2) / 2
            if kind == "large":
                C = C * 1e6 + 1e9
            C[rng.random((n, M)) < 0.2] = np.inf
        mand = rng.random(M) < (0.0 if kind == "sparse" else 0.15)
        ref = canonical_brute_force(C, mand)
        for Q in (1, 2, 3, 7, 20, 40):
            costs, cols, rest = _ranked(C, mand, Q, math.inf)
            want = ref[:Q]
            assert costs.tolist() == [c for c, _ in want], (kind, Q)
            assert [tuple(r) for r in cols] == [c for _, c in want], (kind, Q)
            if len(ref) > Q:
                assert rest <= ref[Q][0] + 1e-9 * (1 + abs(ref[Q][0]))
            else:
                assert rest == math.inf
