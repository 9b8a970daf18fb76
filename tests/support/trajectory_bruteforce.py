"""The trajectory likelihood by listing every association, from its definition, independent of the package.

Gaussian densities come from ``scipy.stats.multivariate_normal``; every
frame's factor is multiplied in turn, every one-to-one map of truth
trajectories to labels is listed (``itertools.permutations``), and the
terms are summed in log space. Nothing here calls nllbench.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from scipy.special import logsumexp
from scipy.stats import multivariate_normal


def _log(x: float) -> float:
    return math.log(x) if x > 0 else -math.inf


def _label_frame(tracks, label, frame, state, dims):
    """[(w r, mean, cov)] of the label's rows at the frame (one per hypothesis)."""
    rows = tracks[(tracks["id"] == label) & (tracks["frame"] == frame)]
    out = []
    for _, row in rows.iterrows():
        w = float(row["weight"]) if "weight" in rows.columns else 1.0
        mean = np.array([row[s] for s in state], dtype=float)[dims]
        cov = np.diag([row[f"var_{s}"] for s in state]).astype(float)
        for a, sa in enumerate(state):
            for b, sb in enumerate(state):
                if f"cov_{sa}_{sb}" in rows.columns:
                    cov[a, b] = cov[b, a] = row[f"cov_{sa}_{sb}"]
        out.append((w * float(row["r"]), mean, cov[np.ix_(dims, dims)]))
    return out


def trajectory_terms(
    tracks, truth, frames, *, rate=0.0, presence=1.0, box=None, R=0.0, state=("x", "y"), dims=(0, 1)
):
    """(list of (association, log-likelihood, parts)) over every association theta.

    ``association[j]`` is the label index of truth j (sorted ids) or -1 (undetected);
    ``parts`` are (localization, presence, false, undetected) as NLL terms.
    """
    dims = list(dims)
    labels = sorted(set(tracks["id"].tolist()))
    truths = sorted(set(truth["id"].tolist()))
    K = len(frames)
    V = float(np.prod((np.asarray(box[1]) - np.asarray(box[0]))[dims])) if box is not None else None
    lf = {(lab, t): _label_frame(tracks, lab, t, state, dims) for lab in labels for t in frames}

    def r_of(lab, t):
        rows = lf[(lab, t)]
        return min(sum(wr for wr, _, _ in rows), 1.0) if rows else R

    def inside(y):
        return bool(np.all(y >= np.asarray(box[0])[dims]) and np.all(y <= np.asarray(box[1])[dims]))

    def states_of(j):
        sub = truth[truth["id"] == j]
        return {
            int(f): np.array([row[s] for s in state], dtype=float)[dims]
            for f, row in sub.set_index("frame").iterrows()
        }

    ys = {j: states_of(j) for j in truths}

    def pair(lab, j):
        loc = pres = 0.0
        for t in frames:
            if t in ys[j]:
                y = ys[j][t]
                rows = lf[(lab, t)]
                if rows:
                    like = sum(wr * multivariate_normal(mean, cov).pdf(y) for wr, mean, cov in rows)
                else:
                    like = R * (1.0 / V if inside(y) else 0.0) if R > 0 else 0.0
                loc += _log(like)
            else:
                pres += _log(1.0 - r_of(lab, t))
        return loc, pres

    def alone(lab):
        return sum(_log(1.0 - r_of(lab, t)) for t in frames)

    def lam(j):
        if rate == 0:
            return -math.inf
        s = len(ys[j])
        if not all(inside(y) for y in ys[j].values()):
            return -math.inf
        norm = rate / (1.0 - (1.0 - presence) ** K)
        return _log(norm * (presence / V) ** s * (1.0 - presence) ** (K - s))

    pairs = {(a, b): pair(lab, j) for a, lab in enumerate(labels) for b, j in enumerate(truths)}
    alones = [alone(lab) for lab in labels]
    lams = [lam(j) for j in truths]
    n, m = len(truths), len(labels)
    out = []
    for k in range(min(n, m) + 1):
        for who in itertools.combinations(range(n), k):
            for to in itertools.permutations(range(m), k):
                assoc = [-1] * n
                for j, lab in zip(who, to, strict=True):
                    assoc[j] = lab
                loc = -sum(pairs[(lab, j)][0] for j, lab in zip(who, to, strict=True))
                pres = -sum(pairs[(lab, j)][1] for j, lab in zip(who, to, strict=True))
                false = -sum(alones[a] for a in range(m) if a not in to)
                und = rate - sum(lams[j] for j in range(n) if assoc[j] < 0)
                total = loc + pres + false + und
                out.append((tuple(assoc), -total, (loc, pres, false, und)))
    return out, labels, truths


def trajectory_nll(tracks, truth, frames, **kw) -> float:
    """-log f(Y) by enumeration."""
    terms, _, _ = trajectory_terms(tracks, truth, frames, **kw)
    lls = np.array([t[1] for t in terms])
    if np.all(lls == -np.inf):
        return math.inf
    return -float(logsumexp(lls))
