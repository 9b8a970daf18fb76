"""Trajectory GOSPA by exhaustive enumeration of assignment sequences, and random scenes for it."""

from __future__ import annotations

import itertools

import numpy as np


def partial_injections(n: int, m: int) -> list[tuple[int, ...]]:
    """Every map of n truths to estimates 0..m-1 or -1 (none), injective on the estimates."""
    out = []
    for pi in itertools.product(range(-1, m), repeat=n):
        used = [j for j in pi if j >= 0]
        if len(used) == len(set(used)):
            out.append(pi)
    return out


def frame_cost(pi, k, T, TI, E, EI, truth_ids, est_ids, c, p) -> float:
    """sum over counted pairs of d^p + c^p/2 (|X^k| + |Y^k| - 2 #pairs), straight from the definition."""
    pos_t = {int(i): x for i, x in zip(TI[k], T[k], strict=True)}
    pos_e = {int(j): y for j, y in zip(EI[k], E[k], strict=True)}
    loc, pairs = 0.0, 0
    for a, b in enumerate(pi):
        if b < 0:
            continue
        ti, ej = truth_ids[a], est_ids[b]
        if ti in pos_t and ej in pos_e:
            d = float(np.linalg.norm(pos_t[ti] - pos_e[ej]))
            if d < c:
                loc += d**p
                pairs += 1
    return loc + c**p / 2 * (len(T[k]) + len(E[k]) - 2 * pairs)


def switch_cost(a, b, gamma, p) -> float:
    s = 0.0
    for x, y in zip(a, b, strict=True):
        if x != y:
            s += 1.0 if (x >= 0 and y >= 0) else 0.5
    return gamma**p * s


def brute_force(T, TI, E, EI, c, p, gamma, product: bool = False) -> float:
    """Minimum over all assignment sequences: plain product (tiny) or Viterbi over every assignment."""
    truth_ids = sorted({int(i) for f in TI for i in f})
    est_ids = sorted({int(j) for f in EI for j in f})
    states = partial_injections(len(truth_ids), len(est_ids))
    K = len(T)
    fc = np.array(
        [[frame_cost(s, k, T, TI, E, EI, truth_ids, est_ids, c, p) for s in states] for k in range(K)]
    )
    sw = np.array([[switch_cost(a, b, gamma, p) for b in states] for a in states])
    if product:
        best = np.inf
        for seq in itertools.product(range(len(states)), repeat=K):
            total = sum(fc[k, s] for k, s in enumerate(seq)) + sum(
                sw[a, b] for a, b in itertools.pairwise(seq)
            )
            best = min(best, total)
        return best ** (1 / p)
    acc = fc[0].copy()
    for k in range(1, K):
        acc = np.min(acc[:, None] + sw, axis=0) + fc[k]
    return float(acc.min()) ** (1 / p)


def random_case(rng, K, n_truth, n_est, box=3.0):
    """Trajectories that appear, disappear and return; some frames empty."""
    T, TI, E, EI = [], [], [], []
    tpos = rng.uniform(0, box, (n_truth, 2))
    epos = rng.uniform(0, box, (n_est, 2))
    for _ in range(K):
        tpos += rng.normal(0, 0.3, tpos.shape)
        epos += rng.normal(0, 0.3, epos.shape)
        ton = np.flatnonzero(rng.random(n_truth) < 0.7)
        eon = np.flatnonzero(rng.random(n_est) < 0.7)
        T.append(tpos[ton].copy())
        TI.append(10 + ton)
        E.append(epos[eon].copy())
        EI.append(100 + eon)
    return T, TI, E, EI
