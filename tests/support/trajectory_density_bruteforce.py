"""Brute force of the trajectory-density NLL: each Bernoulli's end-time law by stepping the filter's
recursion, its states' density from the full stacked joint Gaussian, every assignment summed
(shared by the trajectory PMBM and PMB filter tests)."""

from __future__ import annotations

import itertools
import math

import numpy as np
from scipy.special import logsumexp
from scipy.stats import multivariate_normal

D = 4


def prefix_law(density, g):
    """{end: probability} of ended-prefix segment ``g`` given an end before its t1, oldest segment first."""
    chain = []
    while g >= 0:
        chain.append(g)
        g = int(density.seg_parent[g])
    q = density.p_survival * (1 - density.p_detection)
    law: dict = {}
    for g in chain[::-1]:
        t0, t1, beta = int(density.seg_t0[g]), int(density.seg_t1[g]), float(density.seg_beta[g])
        geo = {e: q ** (e - t0) for e in range(t0, t1)}
        tot = sum(geo.values())
        law = {e: beta * v for e, v in law.items()}
        law.update({e: (1 - beta) * v / tot for e, v in geo.items()})
    return law


def end_distribution(r, t_last, cut, time, updated, p_s, p_d, prefix=None):
    """(r now, {end: probability}) by stepping the recursion from the last detection.

    ``prefix`` (probability of having ended before t_last given existence, {end: probability}) starts
    the recursion with those ended masses (the trajectory PMB's projected Bernoullis).
    """
    ended, alive = {}, 1.0
    if prefix is not None:
        ended = {e: prefix[0] * v for e, v in prefix[1].items()}
        alive = 1.0 - prefix[0]

    def miss(r, alive):
        tot = alive + sum(ended.values())
        a = alive / tot
        return r * (1 - p_d * a) / (1 - r * p_d * a), alive * (1 - p_d)

    for t in range(t_last, time + 1):
        if t > t_last:
            ended[t - 1] = alive * (1 - p_s)
            alive *= p_s
            if t < time or updated:
                r, alive = miss(r, alive)
        if t == cut:
            tot = alive + sum(ended.values())
            a = alive / tot
            r, alive = (r * (1 - a) / (1 - r * a) if r * a < 1 else 0.0), 0.0
            break
    tot = alive + sum(ended.values())
    probs = {e: v / tot for e, v in ended.items()} if tot > 0 else {}
    if tot > 0:
        probs[time] = alive / tot
    return (r if tot > 0 else 0.0), probs


def stacked_logpdf(density, last, states):
    """The full stacked joint Gaussian of the chain ending at node ``last`` (first len(states) nodes)."""
    nodes = []
    while last >= 0:
        nodes.append(last)
        last = int(density.node_parent[last])
    nodes = nodes[::-1][: len(states)]
    L = len(nodes)
    m = [None] * L
    C = [[None] * L for _ in range(L)]
    m[-1], C[-1][-1] = density.node_mean[nodes[-1]], density.node_cov[nodes[-1]]
    F, Q = density.F, density.Q
    for s in range(L - 2, -1, -1):
        P = density.node_cov[nodes[s]]
        ms = density.node_mean[nodes[s]]
        G = P @ F.T @ np.linalg.inv(F @ P @ F.T + Q)
        m[s] = G @ m[s + 1] + ms - G @ F @ ms
        for t in range(s + 1, L):
            C[s][t] = G @ C[s + 1][t]
            C[t][s] = C[s][t].T
        C[s][s] = G @ C[s + 1][s + 1] @ G.T + (P - G @ F @ P)
    cov = np.block(C)
    return multivariate_normal(np.concatenate(m), 0.5 * (cov + cov.T)).logpdf(np.ravel(states))


def prior_logpdf(density, root, states):
    F, Q = density.F, density.Q
    L = len(states)
    m = [density.node_mean[root]]
    C = [[density.node_cov[root]]]
    for t in range(1, L):
        m.append(F @ m[-1])
        row = [F @ C[t - 1][s] for s in range(t)]
        C.append(row + [F @ C[t - 1][t - 1] @ F.T + Q])
    full = [[C[max(a, b)][min(a, b)] if a >= b else C[b][a].T for b in range(L)] for a in range(L)]
    return multivariate_normal(np.concatenate(m), np.block(full)).logpdf(np.ravel(states))


def brute_force(density, truths):
    k, p_s, p_d = density.time, density.p_survival, density.p_detection
    S = density.start.shape[0]
    log_r1, log_1mr, ends = np.zeros(S), np.zeros(S), []
    for s in range(S):
        r, probs = end_distribution(
            float(density.r_last[s]),
            int(density.t_last[s]),
            int(density.cut[s]),
            k,
            density.updated,
            p_s,
            p_d,
            None if density.prefix[s] < 0 else (float(density.seg_ended[density.prefix[s]]),
                                                 prefix_law(density, int(density.prefix[s]))),
        )  # fmt: skip
        log_r1[s] = math.log(r) if r > 0 else -math.inf
        log_1mr[s] = math.log1p(-r) if r < 1 else -math.inf
        ends.append(probs)

    def bern(s, y):
        p = ends[s].get(y.end, 0.0)
        if y.start != density.start[s] or p == 0 or log_r1[s] == -math.inf:
            return -math.inf
        return log_r1[s] + math.log(p) + stacked_logpdf(density, int(density.node[s]), y.states)

    # undetected: each component's end masses by the same stepping, from its birth
    rate, lam = 0.0, np.full(len(truths), -math.inf)
    for c in range(density.ppp_start.shape[0]):
        b, cut = int(density.ppp_start[c]), int(density.ppp_cut[c])
        w, masses = float(density.ppp_weight[c]), {}
        for t in range(b, k + 1):
            if t > b:
                masses[t - 1] = w * (1 - p_s)
                w *= p_s
            if t < k or density.updated:
                w *= 1 - p_d
            if t == cut:
                w = 0.0
                break
        for e in [e for e in masses if cut >= 0 and e >= cut]:
            del masses[e]
        masses[k] = w
        rate += sum(masses.values())
        node = int(density.ppp_node[c])
        while density.node_parent[node] >= 0:
            node = int(density.node_parent[node])
        root = node
        for j, y in enumerate(truths):
            if y.start == b and masses.get(y.end, 0.0) > 0:
                lam[j] = np.logaddexp(lam[j], math.log(masses[y.end]) + prior_logpdf(density, root, y.states))
    total = -math.inf
    n = len(truths)
    for h in range(density.assoc.shape[0]):
        members = density.assoc[h][density.assoc[h] >= 0].tolist()
        W = np.array([[bern(s, y) for y in truths] for s in members]).reshape(len(members), n)
        terms = []
        for choice in itertools.product(range(-1, len(members)), repeat=n):
            used = [c for c in choice if c >= 0]
            if len(used) != len(set(used)):
                continue
            v = sum(W[c, j] if c >= 0 else lam[j] for j, c in enumerate(choice))
            v += sum(log_1mr[members[i]] for i in range(len(members)) if i not in used)
            terms.append(v)
        total = np.logaddexp(total, density.log_weights[h] + logsumexp(terms))
    return rate - total
