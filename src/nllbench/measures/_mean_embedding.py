"""Closed-form inner products of kernel mean embeddings of intensities (Gaussian components and boxes).

For the Gaussian kernel k_R(x, y) = exp(-(x - y)^T R^-1 (x - y) / 2)
= c_R N(x; y, R), c_R = (2 pi)^(d/2) |R|^(1/2), an intensity D embeds as
m_D = int k_R(., x) D(x) dx and (the Gaussian product rule)

    <N(.; mu_i, P_i), N(.; mu_j, P_j)>_k = c_R N(mu_i; mu_j, P_i + P_j + R)
    <N(.; mu_i, P_i), delta_y>_k         = c_R N(y; mu_i, P_i + R).

c_R N(a; b, C) = sqrt(|R| / |C|) exp(-(a - b)^T C^-1 (a - b) / 2) is computed
in that form (no (2 pi)^(d/2) factors that cancel).

A uniform box [lo, hi] of rate rho has density rho / V on the box. With a
diagonal R = diag(s_t^2) the kernel factorises over coordinates, and with a
diagonal P_i + R so does the Gaussian, so each inner product with a box is a
product over coordinates of one-dimensional integrals, with Phi the standard
normal cdf and phi its density:

* box and point y:     int_lo^hi exp(-(x - y)^2 / 2 s^2) dx = sqrt(2 pi) s [Phi((hi - y)/s) - Phi((lo - y)/s)]
* box and Gaussian:    c_R int_box N(x; mu, P + R) dx, the same with sd sqrt(P_tt + s_t^2)
* box a and box b:     sqrt(2 pi) s (|[lo_a, hi_a] ^ [lo_b, hi_b]| + s [K(z1) - K(z2) - K(z3) + K(z4)])

where z1..z4 = (hi_a - lo_b, hi_a - hi_b, lo_a - lo_b, lo_a - hi_b) / s and
K(z) = phi(z) - |z| Phi(-|z|) (from the antiderivative z Phi(z) + phi(z) of
Phi, split into max(z, 0) + K(z) so that the large linear parts cancel
exactly into the overlap length). Without diagonal matrices the box
integrals are multivariate normal rectangle probabilities, which have no
closed form: they are refused by the caller.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np
from scipy.special import ndtr

_SQRT_2PI = math.sqrt(2.0 * math.pi)


def gaussian_gram(w: np.ndarray, means: np.ndarray, covs: np.ndarray, R: np.ndarray) -> float:
    """sum_ij w_i w_j c_R N(mu_i; mu_j, P_i + P_j + R); ``w`` (K,), ``means`` (K, d), ``covs`` (K, d, d)."""
    if w.shape[0] == 0:
        return 0.0
    logdet_r = float(np.linalg.slogdet(R)[1])
    return _gaussian_gram_kernel(
        np.ascontiguousarray(w), np.ascontiguousarray(means), np.ascontiguousarray(covs), R, logdet_r
    )


@nb.njit(cache=True)
def _gaussian_gram_kernel(w, means, covs, R, logdet_r):
    K, d = means.shape
    C = np.empty((d, d))
    L = np.empty((d, d))
    z = np.empty(d)
    total = 0.0
    for i in range(K):
        for j in range(i, K):
            for a in range(d):
                for b in range(d):
                    C[a, b] = covs[i, a, b] + covs[j, a, b] + R[a, b]
            # Cholesky C = L L^T, then z = L^-1 (mu_i - mu_j)
            logdet = 0.0
            for a in range(d):
                for b in range(a + 1):
                    acc = C[a, b]
                    for t in range(b):
                        acc -= L[a, t] * L[b, t]
                    if a == b:
                        L[a, a] = math.sqrt(acc)
                        logdet += 2.0 * math.log(L[a, a])
                    else:
                        L[a, b] = acc / L[b, b]
            quad = 0.0
            for a in range(d):
                acc = means[i, a] - means[j, a]
                for t in range(a):
                    acc -= L[a, t] * z[t]
                z[a] = acc / L[a, a]
                quad += z[a] * z[a]
            term = w[i] * w[j] * math.exp(0.5 * (logdet_r - logdet) - 0.5 * quad)
            total += term if i == j else 2.0 * term
    return total


def gaussian_cross(
    w: np.ndarray, means: np.ndarray, chol_sum: np.ndarray, logdet_sum: np.ndarray, logdet_r: float, y
) -> float:
    """sum_l sum_i w_i c_R N(y_l; mu_i, P_i + R).

    ``chol_sum`` (K, d, d) are the factors of P_i + R and ``logdet_sum`` (K,) their log-determinants.
    """
    if w.shape[0] == 0 or y.shape[0] == 0:
        return 0.0
    from nllbench.engine.gaussian_mixture import gaussian_logpdf

    d = means.shape[1]
    log_norm = -0.5 * (d * math.log(2.0 * math.pi) + logdet_sum)
    log_c = 0.5 * d * math.log(2.0 * math.pi) + 0.5 * logdet_r
    vals = np.exp(gaussian_logpdf(means, chol_sum, log_norm, y) + log_c)  # (K, n)
    return float(w @ vals.sum(axis=1))


def _phi(z):
    return np.exp(-0.5 * z * z) / _SQRT_2PI


def _cdf_diff(lo_z, hi_z):
    """Phi(hi_z) - Phi(lo_z) for lo_z <= hi_z, from the tail that keeps it accurate."""
    upper = lo_z > 0  # both in the upper tail: Phi(-lo) - Phi(-hi) has no cancellation
    return np.where(upper, ndtr(-lo_z) - ndtr(-hi_z), ndtr(hi_z) - ndtr(lo_z))


def _half_widths(lows, highs):
    """(hi - lo) / 2 without overflow, for boxes as wide as the float range."""
    return 0.5 * highs - 0.5 * lows


def box_point(rates, lows, highs, s, y) -> float:
    """sum_l sum_b <rho_b / V_b 1_box_b, k(., y_l)>; boxes (B,), (B, d), kernel sds (d,), y (n, d)."""
    if rates.shape[0] == 0 or y.shape[0] == 0:
        return 0.0
    # per box b, point l, coordinate t: sqrt(2 pi) s_t dPhi / w_t
    lo = (lows[:, None, :] - y[None, :, :]) / s
    hi = (highs[:, None, :] - y[None, :, :]) / s
    factor = 0.5 * _SQRT_2PI * s * _cdf_diff(lo, hi) / _half_widths(lows, highs)[:, None, :]
    return float(rates @ np.prod(factor, axis=2).sum(axis=1))


def box_gaussian(rates, lows, highs, s, w, means, var_diag) -> float:
    """sum_b sum_i rho_b w_i <1_box_b / V_b, k-embedding of N(mu_i, P_i)>; ``var_diag`` (K, d) diag of P_i.

    The caller checks that every P_i is diagonal.
    """
    if rates.shape[0] == 0 or w.shape[0] == 0:
        return 0.0
    sd = np.sqrt(var_diag + s**2)  # (K, d): sd of P_i + R
    lo = (lows[:, None, :] - means[None, :, :]) / sd[None]
    hi = (highs[:, None, :] - means[None, :, :]) / sd[None]
    factor = 0.5 * _SQRT_2PI * s * _cdf_diff(lo, hi) / _half_widths(lows, highs)[:, None, :]
    return float(rates @ np.prod(factor, axis=2) @ w)


def _k_part(z):
    """K(z) = phi(z) - |z| Phi(-|z|) (even, positive, 0 beyond |z| = 40 where both terms underflow)."""
    a = np.abs(z)
    far = a > 40.0
    a = np.where(far, 0.0, a)
    return np.where(far, 0.0, _phi(a) - a * ndtr(-a))


def box_box(rates, lows, highs, s) -> float:
    """sum_ab rho_a rho_b <1_box_a / V_a, 1_box_b / V_b>_k with a diagonal kernel of sds ``s`` (d,)."""
    if rates.shape[0] == 0:
        return 0.0
    la, ha = lows[:, None, :], highs[:, None, :]
    lb, hb = lows[None, :, :], highs[None, :, :]
    # overlap / (w_a w_b) with half-widths: (overlap/2) / (2 h_a h_b)
    overlap_half = np.maximum(np.minimum(ha, hb) * 0.5 - np.maximum(la, lb) * 0.5, 0.0)
    h_a, h_b = _half_widths(la, ha), _half_widths(lb, hb)
    with np.errstate(over="ignore"):
        z1, z2, z3, z4 = (ha - lb) / s, (ha - hb) / s, (la - lb) / s, (la - hb) / s
    bracket = _k_part(z1) - _k_part(z2) - _k_part(z3) + _k_part(z4)
    # divided one half-width at a time: h_a h_b may overflow while each ratio is <= 1
    factor = _SQRT_2PI * s * (0.5 * (overlap_half / h_a / h_b) + 0.25 * (s * bracket / h_a / h_b))
    return float(rates @ np.prod(factor, axis=2) @ rates)
