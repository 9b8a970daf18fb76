"""Assignment problems for the ranking tests: every assignment by enumeration, and sparse problems
shaped like a separated scene."""

from __future__ import annotations

import itertools
import math

import numpy as np


def canonical_brute_force(C, mandatory):
    """Every assignment as (cost summed in row order, columns), in (cost, columns) order."""
    n, M = C.shape
    out = []
    for cols in itertools.permutations(range(M), n):
        if any(mandatory[j] and j not in cols for j in range(M)):
            continue
        cost = 0.0
        for i in range(n):
            cost += C[i, cols[i]]
        if cost < math.inf:
            out.append((cost, cols))
    out.sort()
    return out


def sparse_problem(rng, n, m, spread=1.0):
    """Rows near their own column and their private PPP column, as in a separated scene."""
    C = rng.uniform(20, 60, (n, m + n)) * spread
    for i in range(n):
        C[i, i % m] = rng.uniform(0, 4)
        C[i, m + i] = rng.uniform(3, 9)
        if rng.random() < 0.3:  # a second nearby Bernoulli, shared with the next row
            C[i, (i + 1) % m] = rng.uniform(1, 6)
    C[:, m:][~np.eye(n, dtype=bool)] = np.inf
    return C
