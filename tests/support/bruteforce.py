"""Brute-force likelihoods by explicit enumeration, independent of the package's algorithms.

Only the single-object densities (``logpdf``) and the PPP intensity
(``log_intensity``) are taken from the package; the set likelihood is
computed from its definition by listing every association.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
from scipy.special import logsumexp
from scipy.stats import multivariate_normal


def bernoulli_set_likelihoods(r, logp, n):
    """Yield (assignment tuple, log-likelihood without the PPP) for one MB.

    ``assignment[l]`` is the Bernoulli index of object l, or -1 for the PPP.
    """
    m = len(r)
    for targets in itertools.product(range(-1, m), repeat=n):
        used = [k for k in targets if k >= 0]
        if len(used) != len(set(used)):
            continue
        ll = 0.0
        for k in range(m):
            if k in used:
                pass
            elif r[k] == 1.0:
                ll = -math.inf
            else:
                ll += math.log1p(-r[k])
        for l, k in enumerate(targets):
            if k >= 0:
                ll += (math.log(r[k]) if r[k] > 0 else -math.inf) + logp[k, l]
        yield targets, ll


def pmbm_log_likelihood(pmbm, y, logpdf=None):
    """log f_PMBM(Y) by listing every (hypothesis, association) pair.

    ``logpdf(mb, y) -> (m, n)``, if given, computes the Bernoullis'
    log-densities (e.g. a Gaussian mixture's, independently of the package);
    by default ``mb.densities.logpdf``.
    """
    y = np.asarray(y, dtype=float).reshape(-1, pmbm.dim)
    n = y.shape[0]
    if pmbm.ppp is not None:
        lam = pmbm.ppp.log_intensity(y)
        total = pmbm.ppp.total_rate
    else:
        lam = np.full(n, -np.inf)
        total = 0.0
    terms = []
    for w, mb in zip(pmbm.weights, pmbm.hypotheses, strict=False):
        if w == 0:
            continue
        own = logpdf if logpdf is not None else (lambda mb, y: mb.densities.logpdf(y))
        logp = own(mb, y) if len(mb) and n else np.zeros((len(mb), n))
        for targets, ll in bernoulli_set_likelihoods(mb.r, logp, n):
            ppp = sum(lam[l] for l, k in enumerate(targets) if k < 0)
            terms.append(math.log(w) + ll + ppp - total)
    terms = [t for t in terms if t > -math.inf]
    if not terms:
        return -math.inf, []
    top = max(terms)
    return top + math.log(sum(math.exp(t - top) for t in terms)), sorted(terms, reverse=True)


def table_brute_force(df: pd.DataFrame, truth: pd.DataFrame, rate: float, low, high) -> list[float]:
    """Per frame: -log f(Y) of the table's MB (one Bernoulli per id) plus a uniform PPP, enumerated."""
    out = []
    log_lam = math.log(rate) - math.log(np.prod(np.subtract(high, low)))
    for frame in sorted(set(df.frame) | set(truth.frame)):
        y = truth[truth.frame == frame][["x", "y"]].to_numpy(float)
        rows = df[df.frame == frame]
        ids = list(dict.fromkeys(rows.id))
        r = np.array([rows[rows.id == i].r.iloc[0] for i in ids])
        logp = np.zeros((len(ids), y.shape[0]))
        for k, i in enumerate(ids):
            comps = []
            for _, row in rows[rows.id == i].iterrows():
                cov = [[row.var_x, row.get("cov_x_y", 0.0)], [row.get("cov_x_y", 0.0), row.var_y]]
                comps.append(
                    math.log(row.component_weight)
                    + multivariate_normal([row.x, row.y], cov).logpdf(y).reshape(-1)
                )
            logp[k] = logsumexp(np.stack(comps), axis=0) if y.shape[0] else 0.0
        terms = []
        for targets, ll in bernoulli_set_likelihoods(r, logp, y.shape[0]):
            terms.append(ll + sum(log_lam for k in targets if k < 0) - rate)
        out.append(-float(logsumexp(terms)))
    return out
