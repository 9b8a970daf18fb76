"""Brute-force likelihoods by explicit enumeration, independent of the package's algorithms.

Only the single-object densities (``logpdf``) and the PPP intensity
(``log_intensity``) are taken from the package; the set likelihood is
computed from its definition by listing every association.
"""

from __future__ import annotations

import itertools
import math

import numpy as np


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
