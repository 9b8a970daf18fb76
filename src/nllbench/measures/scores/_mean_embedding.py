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
exactly into the overlap length). With a correlated P_i in 2-D
(and a diagonal R), the box and Gaussian term is c_R / V times the
probability that N(mu_i, P_i + R) puts on the box, a bivariate normal
rectangle probability, computed from Owen's T function
(:func:`bivariate_normal_cdf`). Beyond 2-D, or with a correlated R, the box
integrals are multivariate normal rectangle probabilities, which have no
closed form: they are refused by the caller.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np
from scipy.special import ndtr, owens_t

_SQRT_2PI = math.sqrt(2.0 * math.pi)


def gaussian_gram(
    w: np.ndarray, means: np.ndarray, covs: np.ndarray, R: np.ndarray, logdet_r: float | None = None
) -> float:
    """sum_ij w_i w_j c_R N(mu_i; mu_j, P_i + P_j + R); ``w`` (K,), ``means`` (K, d), ``covs`` (K, d, d).

    ``logdet_r``: log det R if already computed.
    """
    if w.shape[0] == 0:
        return 0.0
    if logdet_r is None:
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
    return ndtr(np.where(upper, -lo_z, hi_z)) - ndtr(np.where(upper, -hi_z, lo_z))


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


def bivariate_normal_cdf(h, k, rho, c):
    """P(Z_1 <= h, Z_2 <= k) for a standard bivariate normal of correlation ``rho``, elementwise.

    ``c`` = sqrt(1 - rho^2) > 0, passed in so that the caller can form it
    without cancellation (sqrt(det C / (C_11 C_22)) for a covariance C). By
    Owen's T function (Owen, "Tables for computing bivariate normal
    probabilities", Ann. Math. Statist. 27, 1956, eq. (2.1); ``scipy.special.owens_t``,
    the algorithm of Patefield and Tandy, J. Stat. Softw. 5(5), 2000):

        Phi_2(h, k; rho) = (Phi(h) + Phi(k)) / 2 - T(h, a_h) - T(k, a_k) - beta,
        a_h = (k - rho h) / (h c),  a_k = (h - rho k) / (k c),

    beta = 1/2 when h k < 0 or (h k = 0 and h + k < 0), else 0; T(0, a_h) is
    its limit sign(k) / 4, and Phi_2(0, 0; rho) = 1/4 + arcsin(rho) / (2 pi)
    (Sheppard). Infinite limits: Phi_2 = 0 when h or k is -inf, Phi(k) when
    h = +inf, Phi(h) when k = +inf.
    """
    h, k, rho, c = np.broadcast_arrays(*(np.asarray(x, dtype=float) for x in (h, k, rho, c)))
    finite = np.isfinite(h) & np.isfinite(k)
    hf, kf = np.where(finite, h, 1.0), np.where(finite, k, 1.0)  # placeholders where a limit is infinite
    with np.errstate(divide="ignore", invalid="ignore"):
        a_h = (kf - rho * hf) / (hf * c)
        a_k = (hf - rho * kf) / (kf * c)
    t_h = np.where(hf == 0, 0.25 * np.sign(kf), owens_t(hf, np.where(hf == 0, 0.0, a_h)))
    t_k = np.where(kf == 0, 0.25 * np.sign(hf), owens_t(kf, np.where(kf == 0, 0.0, a_k)))
    prod = hf * kf
    beta = np.where((prod < 0) | ((prod == 0) & (hf + kf < 0)), 0.5, 0.0)
    out = 0.5 * (ndtr(hf) + ndtr(kf)) - t_h - t_k - beta
    out = np.where((hf == 0) & (kf == 0), 0.25 + np.arcsin(rho) / (2.0 * math.pi), out)
    limits = np.where((h == -np.inf) | (k == -np.inf), 0.0, np.where(h == np.inf, ndtr(k), ndtr(h)))
    return np.where(finite, out, limits)


def _rectangle_2d(lo, hi, rho, c):
    """P(lo < Z < hi) for a standard bivariate normal Z of correlation ``rho``; ``lo``, ``hi`` (..., 2).

    A coordinate whose interval lies above 0 is reflected (Z_t -> -Z_t, which
    negates rho once per reflected coordinate), so that each interval reaches
    into the lower half and the four cdf values are small where the
    rectangle is far in a tail: no difference of numbers near 1.
    """
    flip = lo > 0
    lo, hi = np.where(flip, -hi, lo), np.where(flip, -lo, hi)
    rho = np.where(flip[..., 0] ^ flip[..., 1], -rho, rho)
    l1, l2, h1, h2 = lo[..., 0], lo[..., 1], hi[..., 0], hi[..., 1]
    cdf = bivariate_normal_cdf
    return cdf(h1, h2, rho, c) - cdf(l1, h2, rho, c) - cdf(h1, l2, rho, c) + cdf(l1, l2, rho, c)


def box_gaussian_2d(rates, lows, highs, s, w, means, covs) -> float:
    """:func:`box_gaussian` in 2-D for any covariances ``covs`` (K, 2, 2); kernel sds ``s`` (2,).

    <1_box / V, k-embedding of N(mu, P)> = (c_R / V) P(X in box) for X ~ N(mu, P + R),
    c_R = 2 pi s_1 s_2, with the rectangle probability of a bivariate normal
    (:func:`_rectangle_2d`).
    """
    if rates.shape[0] == 0 or w.shape[0] == 0:
        return 0.0
    C = covs + np.diag(s**2)[None]  # (K, 2, 2): P_i + R
    sd = np.sqrt(np.stack([C[:, 0, 0], C[:, 1, 1]], axis=1))  # (K, 2)
    rho = C[:, 0, 1] / (sd[:, 0] * sd[:, 1])
    c = np.sqrt((C[:, 0, 0] * C[:, 1, 1] - C[:, 0, 1] * C[:, 1, 0]) / (C[:, 0, 0] * C[:, 1, 1]))
    with np.errstate(over="ignore"):  # a box as wide as the float range: +-inf, handled as limits
        lo = (lows[:, None, :] - means[None, :, :]) / sd[None]  # (B, K, 2)
        hi = (highs[:, None, :] - means[None, :, :]) / sd[None]
    prob = _rectangle_2d(lo, hi, rho[None, :], c[None, :])  # (B, K)
    scale = np.prod(0.5 * _SQRT_2PI * s / _half_widths(lows, highs), axis=1)  # (B,): c_R / V_b
    return float((rates * scale) @ prob @ w)


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
