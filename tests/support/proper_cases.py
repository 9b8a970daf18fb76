"""The true PMB, its alternatives, the exact energy score of one Gaussian and paired z-scores."""

from __future__ import annotations

import itertools
import math

import numpy as np
from scipy import integrate, stats

import nllbench as nb

Z_MIN = 3.0


def _exact_single_gaussian_es(mu, sigma, y, s):
    """ES of the set {X}, X ~ N(mu, sigma^2) in 1-D, at Y = {y}, kernel variance s^2, by quadrature."""

    def dist(u):  # ||Phi({x}) - Phi({x'})|| at x - x' = u
        return math.sqrt(max(2.0 - 2.0 * math.exp(-(u**2) / (2 * s**2)), 0.0))

    first = integrate.quad(lambda x: dist(x - y) * stats.norm.pdf(x, mu, sigma), -np.inf, np.inf)[0]
    second = integrate.quad(
        lambda u: dist(u) * stats.norm.pdf(u, 0.0, sigma * math.sqrt(2)), -np.inf, np.inf
    )[0]
    return first - second / 2


def _true_pmb(r=(0.9, 0.6), shift=0.0, cov_scale=1.0, ppp_weight=0.3):
    means = np.array([[0.0, 0.0], [3.0, 1.0]]) + shift
    mb = nb.MultiBernoulli.gaussian(list(r), means, cov_scale * np.tile(np.eye(2), (2, 1, 1)))
    ppp = nb.PPP.gaussian([ppp_weight], [[1.0, -2.0]], [4.0 * cov_scale * np.eye(2)])
    return nb.PMB(ppp, mb)


ALTERNATIVES = {
    "shifted means": _true_pmb(shift=1.0),
    "scaled covariances": _true_pmb(cov_scale=4.0),
    "wrong existence": _true_pmb(r=(0.5, 0.2)),
    "wrong cardinality": _true_pmb(ppp_weight=1.5),
}


def _paired_z(diffs):
    diffs = np.asarray(diffs)
    return diffs.mean() / (diffs.std(ddof=1) / math.sqrt(diffs.size))


def gl_nodes(breaks, piece=0.25, order=16):
    """Gauss-Legendre nodes and weights over [breaks[0], breaks[-1]], pieces of at most ``piece``."""
    x0, w0 = np.polynomial.legendre.leggauss(order)
    xs, ws = [], []
    for a, b in itertools.pairwise(breaks):
        m = max(int(math.ceil((b - a) / piece)), 1)
        for lo in np.linspace(a, b, m + 1)[:-1]:
            hi = lo + (b - a) / m
            xs.append(0.5 * (hi - lo) * x0 + 0.5 * (hi + lo))
            ws.append(0.5 * (hi - lo) * w0)
    return np.concatenate(xs), np.concatenate(ws)
