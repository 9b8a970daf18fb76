"""The trajectory NLL against brute-force enumeration: values, terms and bounds on random cases, and
the density summed over a discrete state space (seconds: every case enumerated)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from scipy.special import logsumexp
from support import trajectory_bruteforce as bf
from support.trajectory_cases import BOX, random_case

import nllbench as nb
from nllbench.engine.trajectory import (
    assignment_sum,
    association_problem_from_weights,
    log_undetected,
)


def _cases(count, seed):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        m, n, K = int(rng.integers(0, 4)), int(rng.integers(0, 4)), int(rng.integers(1, 5))
        tracks, truth = random_case(rng, m, n, K, special=rng.random() < 0.5)
        rate = float(rng.choice([0.0, 0.3, 2.0]))
        rho = float(rng.choice([0.2, 0.7, 1.0]))
        R = float(rng.choice([0.0, 0.0, 0.25]))
        yield tracks, truth, list(range(K)), rate, rho, R


def _close(a, b, rtol=1e-9):
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= rtol * max(1.0, abs(a), abs(b))


def test_value_exact_and_terms_equal_brute_force():
    checked = 0
    for tracks, truth, frames, rate, rho, R in _cases(80, 1):
        kw = dict(rate=rate, presence=rho, box=BOX, R=R)
        terms, labels, truths = bf.trajectory_terms(tracks, truth, frames, **kw)
        lls = np.array([t[1] for t in terms])
        want = math.inf if np.all(lls == -np.inf) else -float(logsumexp(lls))
        res = nb.trajectory_nll(
            tracks,
            truth,
            q=10**6,
            exact=True,
            undetected=(rate, rho),
            fov=BOX,
            unlisted_presence=R,
            frames=frames,
        )
        assert _close(res.value, want), (res.value, want)
        assert _close(res.exact, want)
        assert res.complete and res.lower == res.value == res.upper
        total = sum(res.terms.values())
        assert _close(total, res.value) if math.isfinite(res.value) else total == math.inf
        if math.isfinite(want):
            checked += 1
            order = np.argsort(-lls)
            if lls.size > 1 and lls[order[1]] > lls[order[0]] - 1e-9:
                continue  # tied best associations: the decomposition may take either
            assoc, _, parts = terms[order[0]]
            got = [res.terms[k] for k in ("localization", "presence", "false", "undetected")]
            assert all(_close(a, b, 1e-8) for a, b in zip(got, parts, strict=True)), (got, parts)
            best = [labels[a] if a >= 0 else None for a in assoc]
            table = res.per_trajectory()
            assert [None if pd.isna(b) else int(b) for b in table["best_label"]] == best
            # posterior marginals equal the brute-force ones (every association listed)
            probs = np.exp(lls - logsumexp(lls))
            for j in range(len(truths)):
                for a in range(-1, len(labels)):
                    p = sum(pr for (asc, _, _), pr in zip(terms, probs, strict=True) if asc[j] == a)
                    col = a if a >= 0 else len(labels)
                    assert abs(res.posterior[j, col] - p) < 1e-9
        else:
            assert res.impossible or res.impossible_labels
            assert res.message
    assert checked > 30


def test_bounds_bracket_brute_force_at_small_q():
    n_inexact = 0
    for tracks, truth, frames, rate, rho, R in _cases(60, 2):
        want = bf.trajectory_nll(tracks, truth, frames, rate=rate, presence=rho, box=BOX, R=R)
        for q in (1, 2, 3):
            res = nb.trajectory_nll(
                tracks,
                truth,
                q=q,
                exact=True,
                undetected=(rate, rho),
                fov=BOX,
                unlisted_presence=R,
                frames=frames,
            )
            assert _close(res.exact, want)  # the subset DP when the Q best are not all
            if math.isinf(want):
                assert res.value == math.inf
                continue
            slack = 1e-9 * max(1.0, abs(want))
            assert res.lower - slack <= want <= res.upper + slack
            assert res.upper == res.value
            assert sum(res.terms.values()) == pytest.approx(res.value, rel=1e-12, abs=1e-12)
            n_inexact += not res.complete
            if res.complete:
                assert _close(res.value, want)
    assert n_inexact > 20


def test_density_sums_to_one_on_a_discrete_state_space():
    """With C cells per frame (counting measure, uniform 1/C), sum_n 1/n! sum_tuples f = 1.

    Summed over multisets with 1 / prod(multiplicity!) each; truncated at N trajectories
    (the Poisson tail beyond is below 1e-6).
    """
    K, C = 2, 2
    r = np.array([[0.6, 0.3], [0.9, 0.0]])  # two labels, (m, K)
    pmf = np.array([[[0.7, 0.3], [0.2, 0.8]], [[0.5, 0.5], [0.1, 0.9]]])  # (m, K, C)
    rate, rho = 0.4, 0.6
    singles = [
        (S, ys)
        for k in range(1, K + 1)
        for S in itertools.combinations(range(K), k)
        for ys in itertools.product(range(C), repeat=k)
    ]
    m = r.shape[0]
    total = 0.0
    for N in range(0, 8):
        for combo in itertools.combinations_with_replacement(range(len(singles)), N):
            traj = [singles[i] for i in combo]
            loc = np.zeros((m, N))
            pres = np.zeros((m, N))
            with np.errstate(divide="ignore"):
                for j, (S, ys) in enumerate(traj):
                    for t in range(K):
                        if t in S:
                            loc[:, j] += np.log(r[:, t] * pmf[:, t, ys[S.index(t)]])
                        else:
                            pres[:, j] += np.log1p(-r[:, t])
                alone = np.log1p(-r).sum(axis=1)
            n_present = np.array([len(S) for S, _ in traj], dtype=np.int64)
            lam = log_undetected(n_present, np.ones(N, dtype=bool), K, rate, rho, math.log(C))
            prob = association_problem_from_weights(loc + pres, alone, lam, rate)
            s = assignment_sum(prob, 10**6)
            assert s.complete
            mult = np.unique(combo, return_counts=True)[1] if N else np.array([])
            total += math.exp(-s.value) / math.prod(math.factorial(int(c)) for c in mult)
    assert total == pytest.approx(1.0, abs=1e-5)
