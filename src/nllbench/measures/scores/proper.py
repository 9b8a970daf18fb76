"""Proper scores of multi-object densities beyond the NLL: set energy, intensity and cardinality scores.

All three embed a finite set X in the reproducing-kernel Hilbert space of
the Gaussian kernel k_R(x, y) = exp(-(x - y)^T R^-1 (x - y) / 2) as
Phi(X) = sum_{x in X} k_R(., x), so that
||Phi(X) - Phi(Y)||^2 = sum k(x, x') + sum k(y, y') - 2 sum k(x, y). Lower is
better for each. Definitions, propriety and sources: ``docs/scores.md``.

* :func:`energy_score`: ES(P, Y) = E||Phi(X) - Phi(Y)|| - E||Phi(X) - Phi(X')|| / 2,
  strictly proper; estimated from samples of P with its Monte Carlo
  standard error.
* :func:`intensity_score`: ||m_P - Phi(Y)||^2 with m_P = E Phi(X), the kernel
  mean embedding of P's intensity; closed form; proper, not strictly (it
  sees the intensity only).
* :func:`cardinality_rps`: the ranked probability score of |X| at n = |Y|;
  closed form; proper (strictly, for the cardinality distribution).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numba as nb
import numpy as np
from scipy.special import pdtr, pdtrc, pdtrik

from nllbench.engine import validate as v
from nllbench.engine.densities import (
    PMBM,
    PPP,
    Gaussians,
    IIDCluster,
    MultiBernoulli,
    as_pmbm,
)
from nllbench.engine.sampling import SetSamples, sample
from nllbench.measures.scores import _mean_embedding as me
from nllbench.measures.scores._intensity import (
    cached_box_box,
    check_separable,
    diagonal,
    intensity_parts,
    kernel_constants,
)
from nllbench.measures.scores._set_kernel import cross_sums, energy_parts

#: Samples drawn from a density by :func:`energy_score` unless told otherwise.
DEFAULT_SAMPLES = 1000
#: Kernel values below this are skipped in the sample-pair sums (a bound on the effect is reported).
DEFAULT_KERNEL_TOL = 1e-16
#: Squared whitened distance beyond which exp(-s / 2) is exactly 0 in float64 (exp(-746) underflows).
UNDERFLOW_CUT2 = 1492.0
#: The Poisson tail left out of the cardinality RPS is below this (module docstring of cardinality_rps).
RPS_TAIL = 1e-16
#: The most samples energy_score takes: it holds a few N x N float64 arrays (0.8 GB each at this N).
MAX_SAMPLES = 10_000
#: Largest cardinality table cardinality_rps builds (a Poisson rate of about 1e7).
MAX_RPS_TABLE = 10**7

_DENSITIES = (PPP, IIDCluster, MultiBernoulli, PMBM)


# ---------------------------------------------------------------------------
# kernel covariance
# ---------------------------------------------------------------------------


def kernel_matrix(kernel_cov, dim: int | None) -> np.ndarray:
    """The (d, d) symmetric positive-definite kernel covariance R from a matrix or a scalar s (R = s I).

    ``dim`` is the state dimension the matrix must match (None: taken from
    the matrix; a scalar then needs it).
    """
    arr = v.as_float_array(kernel_cov, "kernel_cov")
    if arr.ndim == 0:
        s = v.positive_scalar(arr, "kernel_cov")
        if dim is None:
            raise ValueError("kernel_cov: a scalar needs the state dimension, which the input does not give")
        return s * np.eye(dim)
    if arr.ndim != 2 or arr.shape[0] != arr.shape[1] or (dim is not None and arr.shape[0] != dim):
        want = "(d, d)" if dim is None else f"({dim}, {dim})"
        raise ValueError(f"kernel_cov: expected a positive number or a {want} matrix, got shape {arr.shape}")
    sym, _ = v.covariances(arr[None], "kernel_cov", 1, arr.shape[0])
    return sym[0]


# ---------------------------------------------------------------------------
# energy score
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class EnergyScoreResult:
    """The set energy score estimated from N samples of the density.

    Attributes
    ----------
    value : float
        (1/N) sum_i ||Phi(X_i) - Phi(Y)|| - 1/(2 N (N - 1)) sum_{i != j} ||Phi(X_i) - Phi(X_j)||,
        an unbiased estimate of ES(P, Y).
    standard_error : float
        Jackknife standard error of ``value`` (``docs/scores.md``); ``+inf``
        for N = 2, where it cannot be estimated.
    n_samples : int
        N.
    to_truth : float
        The first term, (1/N) sum_i ||Phi(X_i) - Phi(Y)||.
    spread : float
        The mean over i != j of ||Phi(X_i) - Phi(X_j)|| (so
        ``value = to_truth - spread / 2``).
    truncation_bound : float
        A bound on |value - the value with no kernel term skipped|: kernel
        values below ``kernel_tol`` are left out of the sample-pair sums. 0
        when ``kernel_tol=0``.
    """

    value: float
    standard_error: float
    n_samples: int
    to_truth: float
    spread: float
    truncation_bound: float


def energy_score(
    density_or_samples,
    truth,
    kernel_cov,
    n_samples: int | None = None,
    seed=0,
    kernel_tol: float = DEFAULT_KERNEL_TOL,
) -> EnergyScoreResult:
    """The set energy score of a multi-object density (or of samples from one) at the truth ``truth``.

    ES(P, Y) = E||Phi(X) - Phi(Y)|| - E||Phi(X) - Phi(X')|| / 2 with X, X'
    independent draws from P and Phi(X) = sum_{x in X} k_R(., x); strictly
    proper (``docs/scores.md``). Lower is better.

    Parameters
    ----------
    density_or_samples : PPP, IIDCluster, MultiBernoulli, PMBM, or a sequence of (k_i, d) arrays
        A density is sampled exactly (:func:`nllbench.engine.sampling.sample`);
        a sequence (or :class:`~nllbench.engine.sampling.SetSamples`) is
        taken as N independent draws from the forecast, e.g. a particle
        filter's particles.
    truth : (n, d) array_like
        Ground-truth set; n = 0 is allowed.
    kernel_cov : float or (d, d) array_like
        R, symmetric positive definite; a scalar s stands for s I.
    n_samples : int in [2, MAX_SAMPLES], optional
        Samples drawn from a density (default :data:`DEFAULT_SAMPLES`); not
        allowed with samples. Memory grows as N^2 (a few N x N arrays).
    seed : numpy.random.Generator, int or None
        Random source for sampling a density (default 0: reproducible).
    kernel_tol : float in [0, 1)
        Kernel values k < ``kernel_tol`` are skipped in the sample-pair sums
        (pairs farther apart than sqrt(2 log(1 / kernel_tol)) kernel
        standard deviations); the effect is bounded by
        ``truncation_bound``. 0 keeps every term that is not exactly 0 in
        float64.

    Returns
    -------
    EnergyScoreResult

    Raises
    ------
    ValueError
        Fewer than 2 samples: the second term needs two independent draws,
        and one sample gives no unbiased estimate of it.

    Examples
    --------
    >>> import numpy as np, nllbench as nb
    >>> mb = nb.MultiBernoulli.gaussian([1.0], [[0.0, 0.0]], [np.eye(2)])
    >>> nb.energy_score(mb, [[0.0, 0.0]], 1.0, n_samples=200).value < 1.0
    True
    """
    tol = _kernel_tol(kernel_tol)
    if isinstance(density_or_samples, _DENSITIES):
        n = DEFAULT_SAMPLES if n_samples is None else n_samples
        if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or not 2 <= n <= MAX_SAMPLES:
            raise ValueError(f"n_samples: expected an integer in [2, {MAX_SAMPLES}], got {n!r}")
        dim = density_or_samples.dim
        R = kernel_matrix(kernel_cov, dim)
        y = v.truth_set(truth, dim)
        samples = sample(density_or_samples, int(n), seed)
    else:
        if n_samples is not None:
            raise ValueError(
                "n_samples: only for a density; with samples their number is that of the sets given"
            )
        dim = _samples_dim(density_or_samples, truth, kernel_cov)
        R = kernel_matrix(kernel_cov, dim)
        y = v.truth_set(truth, dim)
        samples = SetSamples.from_sets(density_or_samples, dim, name="density_or_samples")
        if len(samples) < 2:
            raise ValueError(
                f"density_or_samples: expected at least 2 sets, got {len(samples)}: the term "
                "E||Phi(X) - Phi(X')|| needs two independent draws"
            )
        if len(samples) > MAX_SAMPLES:
            raise ValueError(
                f"density_or_samples: expected at most {MAX_SAMPLES} sets (the estimator holds N x N "
                f"arrays), got {len(samples)}"
            )
    return energy_score_of_samples(samples, y, R, tol)


def _kernel_tol(value) -> float:
    try:
        tol = float(value)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"kernel_tol: expected a number in [0, 1), got {value!r}") from exc
    if not 0.0 <= tol < 1.0:
        raise ValueError(f"kernel_tol: expected a number in [0, 1), got {value!r}")
    return tol


def _samples_dim(samples, truth, kernel_cov) -> int | None:
    """The state dimension given by the samples, else the truth, else the kernel matrix."""
    if isinstance(samples, SetSamples):
        return samples.dim
    if isinstance(samples, (str, bytes)) or not hasattr(samples, "__iter__"):
        raise TypeError(
            "density_or_samples: expected a density or a sequence of (k_i, d) arrays, "
            f"got {type(samples).__name__}"
        )
    for s in samples:
        a = np.asarray(s)
        if a.ndim == 2 and a.shape[1] > 0:
            return int(a.shape[1])
    t = np.asarray(truth, dtype=object)
    if t.ndim == 2 and t.shape[1] > 0:
        return int(t.shape[1])
    k = np.asarray(kernel_cov, dtype=object)
    if k.ndim == 2:
        return int(k.shape[0])
    raise ValueError(
        "density_or_samples: every set and the truth are empty and kernel_cov is a scalar: "
        "the state dimension is unknown (pass kernel_cov as a (d, d) matrix)"
    )


def energy_score_of_samples(samples: SetSamples, y: np.ndarray, R: np.ndarray, kernel_tol: float):
    """The estimator of :func:`energy_score` on validated input: N >= 2 sets, truth (n, d), R (d, d) SPD.

    The kernel sums, the distances and the bounds come from one compiled call
    (:func:`~nllbench.measures.scores._set_kernel.energy_parts`). ``truncation_bound`` bounds
    the effect of the kernel terms below ``kernel_tol`` left out: a set pair
    (i, j) loses at most k_i (k_i - 1) such terms of S_ii, k_j (k_j - 1) of
    S_jj and k_i k_j of S_ij, so its squared distance moves by at most
    e = tol (k_i^2 + k_j^2); the distance then moves by at most
    min(sqrt(e), e / d) with d the computed distance, since
    |sqrt(a) - sqrt(b)| = |a - b| / (sqrt(a) + sqrt(b)). The squared distance
    to the truth (n objects) loses at most k_i (k_i - 1) terms of S_ii and
    gains at most 2 k_i n from its cross sum: e = tol (k_i^2 + 2 k_i n). The
    bound is the estimator applied to these moves.
    """
    N = len(samples)
    L_inv = _kernel_inverse(R)
    u, w = _whiten_checked(samples.points, R, L_inv), _whiten_checked(y, R, L_inv)
    cut2 = UNDERFLOW_CUT2 if kernel_tol == 0 else min(2.0 * math.log(1.0 / kernel_tol), UNDERFLOW_CUT2)
    # S: the set-pair sums (block_gram), to_y (N,): the sums with the truth, yy: the truth's self-sum;
    # a (N,): distances to the truth, D (N, N): between the samples; the moves of each (docstring)
    S, to_y, yy, a, D, pair, to_truth_bound = energy_parts(
        u, samples.offsets, w, cut2, y.shape[0], kernel_tol
    )
    to_truth = float(a.mean())
    spread = float(D.sum() / (N * (N - 1)))
    value = to_truth - 0.5 * spread
    bound = float(to_truth_bound.mean() + 0.5 * pair.sum() / (N * (N - 1))) if kernel_tol > 0 else 0.0
    return EnergyScoreResult(
        value=value,
        standard_error=_jackknife_se(a, D),
        n_samples=N,
        to_truth=to_truth,
        spread=spread,
        truncation_bound=bound,
    )


def whiten(points: np.ndarray, R: np.ndarray, L_inv: np.ndarray | None = None) -> np.ndarray:
    """L^-1 x for each row x of ``points`` (T, d), R = L L^T: k_R becomes exp(-||u - v||^2 / 2).

    ``L_inv``: L^-1 if already computed (:func:`_kernel_inverse`).
    """
    if L_inv is None:
        L_inv = _kernel_inverse(R)
    with np.errstate(over="ignore", invalid="ignore"):  # the callers refuse non-finite results
        return np.ascontiguousarray(points @ L_inv.T, dtype=np.float64)


def _whiten_checked(points: np.ndarray, R: np.ndarray, L_inv: np.ndarray | None = None) -> np.ndarray:
    """:func:`whiten`, refusing coordinates that overflow (a ValueError naming kernel_cov)."""
    u = whiten(points, R, L_inv)
    if not np.all(np.isfinite(u)):
        raise ValueError(
            "kernel_cov: the points in units of the kernel (L^-1 x, R = L L^T) overflow the float range; "
            "use a wider kernel_cov or rescale the states"
        )
    return u


def _kernel_inverse(R: np.ndarray) -> np.ndarray:
    """L^-1 of R = L L^T: for float64 R once per distinct R (:func:`_inverse_factor`)."""
    return _inverse_factor(R.tobytes(), R.shape[0]) if R.dtype == np.float64 else _inverse_factor_of(R)


@functools.lru_cache(maxsize=16)
def _inverse_factor(key: bytes, d: int) -> np.ndarray:
    """:func:`_inverse_factor_of` the float64 (d, d) R of bytes ``key``, once per distinct R (read-only)."""
    L_inv = _inverse_factor_of(np.frombuffer(key, dtype=np.float64).reshape(d, d))
    L_inv.setflags(write=False)
    return L_inv


def _inverse_factor_of(R: np.ndarray) -> np.ndarray:
    """L^-1 for R = L L^T (Cholesky)."""
    return _lower_inverse(np.linalg.cholesky(R))


def _lower_inverse(L: np.ndarray) -> np.ndarray:
    """L^-1 of a lower-triangular (d, d) factor, by forward substitution on the columns of I."""
    d = L.shape[0]
    out = np.zeros((d, d))
    for i in range(d):
        out[i, :] = (np.eye(d)[i] - L[i, :i] @ out[:i, :]) / L[i, i]
    return out


def _self_sum(w: np.ndarray) -> float:
    """||Phi(Y)||^2 = sum_{y, y'} k(y, y') for whitened ``w`` (n, d), every term kept."""
    return float(cross_sums(w, np.array([0, w.shape[0]], dtype=np.int64), w)[0])


def _jackknife_se(a: np.ndarray, D: np.ndarray) -> float:
    """Jackknife standard error of the U-statistic with kernel g_ij = (a_i + a_j) / 2 - D_ij / 2.

    Leaving sample i out removes g_ij and g_ji for every j:
    U_(-i) = (G - 2 r_i) / ((N - 1)(N - 2)) with G = sum_{i != j} g_ij and
    r_i = sum_{j != i} g_ij = (N - 2) a_i / 2 + sum(a) / 2 - sum_j D_ij / 2; the
    variance is (N - 1)/N sum_i (U_(-i) - mean)^2 (Efron and Stein, Ann.
    Statist. 9, 1981), computed from the deviations of r_i (so that equal
    samples give exactly 0). N = 2 leaves no pair: +inf.
    """
    N = a.shape[0]
    if N < 3:
        return math.inf
    row = 0.5 * (N - 2) * (a - a[0]) - 0.5 * (D.sum(axis=1) - D[0].sum())  # r_i - r_0
    dev = row - row.mean()  # r_i - mean(r), shifted first so that equal rows give exact zeros
    loo_dev = -2.0 * dev / ((N - 1) * (N - 2))
    return float(math.sqrt((N - 1) / N * np.sum(loo_dev**2)))


# ---------------------------------------------------------------------------
# intensity score
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class IntensityScoreResult:
    """The quadratic intensity score ||m_P - Phi(Y)||^2 and its three terms.

    Attributes
    ----------
    value : float
        ``intensity_norm2 - 2 cross + truth_norm2`` (>= 0 up to rounding).
    intensity_norm2 : float
        ||m_P||^2 = int int k(x, x') D(x) D(x') dx dx' for P's intensity D.
    cross : float
        <m_P, Phi(Y)> = sum_{y in Y} int k(x, y) D(x) dx.
    truth_norm2 : float
        ||Phi(Y)||^2 = sum_{y, y' in Y} k(y, y').
    """

    value: float
    intensity_norm2: float
    cross: float
    truth_norm2: float


def intensity_score(density, truth, kernel_cov) -> IntensityScoreResult:
    """The quadratic intensity score ||m_P - Phi(Y)||^2 of a density at the truth ``truth``, in closed form.

    m_P = E Phi(X) = int k_R(., x) D(x) dx is the kernel mean embedding of
    P's intensity D (first-moment density): proper, not strictly (two
    densities with the same intensity score alike). Lower is better.

    Parameters
    ----------
    density : PPP, IIDCluster, MultiBernoulli or PMBM (Gaussian single-object densities)
        Its intensity is a Gaussian mixture (plus uniform boxes for a PPP):
        IIDCluster E[n] s(x); MB sum_k r_k p_k(x); PMBM the PPP's plus
        sum_h w_h sum_k r_hk p_hk(x).
    truth : (n, d) array_like
    kernel_cov : float or (d, d) array_like
        R, symmetric positive definite; a scalar s stands for s I. A PPP
        with uniform boxes needs a diagonal R, and beyond 2-D diagonal
        covariances for its Gaussian components (the box integrals are
        products of one-dimensional ones then; in 2-D a correlated
        component's is a bivariate normal rectangle probability, by Owen's
        T function).

    Returns
    -------
    IntensityScoreResult

    Examples
    --------
    >>> import numpy as np, nllbench as nb
    >>> ppp = nb.PPP.gaussian([1.0], [[0.0]], [[[1.0]]])
    >>> round(nb.intensity_score(ppp, [[0.0]], 1.0).value, 6)  # 1/sqrt(3) - 2/sqrt(2) + 1
    0.163137
    """
    if not isinstance(density, _DENSITIES):
        raise TypeError(
            f"density: expected PPP, IIDCluster, MultiBernoulli or PMBM, got {type(density).__name__}"
        )
    dim = density.dim
    R = kernel_matrix(kernel_cov, dim)
    y = v.truth_set(truth, dim)
    w, means, covs, rates, lows, highs = intensity_parts(density)
    s, logdet_r = kernel_constants(R)
    diag = diagonal(covs) if rates.size else None
    if rates.size:
        check_separable(R, diag)
    # Gaussian part: factors of P_i + R once for the cross term
    gram = me.gaussian_gram(w, means, covs, R, logdet_r)
    cross = 0.0
    if w.size and y.shape[0]:
        summed = Gaussians._trusted(means, covs + R[None])
        logdet = 2.0 * summed._log_diag.sum(axis=1)
        cross = me.gaussian_cross(w, means, summed._chol, logdet, logdet_r, y)
    if rates.size:
        var_diag = np.diagonal(covs, axis1=1, axis2=2)
        # correlated components (2-D only, check_separable): bivariate normal rectangles
        if diag.all():  # no copies; no correlated part, which added 2 * 0.0 (as here)
            gram += 2.0 * me.box_gaussian(rates, lows, highs, s, w, means, var_diag)
            gram += 2.0 * 0.0
        else:
            gram += 2.0 * me.box_gaussian(rates, lows, highs, s, w[diag], means[diag], var_diag[diag])
            gram += 2.0 * me.box_gaussian_2d(rates, lows, highs, s, w[~diag], means[~diag], covs[~diag])
        gram += cached_box_box(rates, lows, highs, s)
        cross += me.box_point(rates, lows, highs, s, y)
    yy = _self_sum(_whiten_checked(y, R))
    return IntensityScoreResult(
        value=gram - 2.0 * cross + yy, intensity_norm2=gram, cross=cross, truth_norm2=yy
    )


# ---------------------------------------------------------------------------
# cardinality ranked probability score
# ---------------------------------------------------------------------------


def cardinality_rps(density, n) -> float:
    """The ranked probability score of the density's cardinality distribution at ``n`` objects.

    RPS(F, n) = sum_{k >= 0} (F(k) - 1[n <= k])^2 with F the cdf of |X|; it
    equals E|N - n| - E|N - N'| / 2 (the CRPS of an integer-valued
    forecast). Proper; lower is better.

    Closed forms: Poisson(Lambda) for a PPP, the explicit pmf of an
    i.i.d. cluster, the Poisson-binomial of an MB and, for a PMBM, the
    mixture over hypotheses of Poisson(Lambda) convolved with each
    Poisson-binomial. The sum over k is exact up to where the remaining
    tail P(N > k) is below :data:`RPS_TAIL` (1e-16) and k >= n; the terms
    left out are then (1 - F(k))^2 < 1e-32 each and below 1e-16 E[N] in
    total. Finite-support families (i.i.d. cluster, MB, MBM) are summed
    over their whole support.

    Parameters
    ----------
    density : PPP, IIDCluster, MultiBernoulli or PMBM
    n : int >= 0
        The true number of objects.

    Examples
    --------
    >>> import nllbench as nb
    >>> mb = nb.MultiBernoulli.gaussian([0.5], [[0.0]], [[[1.0]]])
    >>> nb.cardinality_rps(mb, 1)  # F(0) = 0.5, F(1) = 1: (0.5 - 0)^2 + (1 - 1)^2
    0.25
    """
    if not isinstance(density, _DENSITIES):
        raise TypeError(
            f"density: expected PPP, IIDCluster, MultiBernoulli or PMBM, got {type(density).__name__}"
        )
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 0:
        raise ValueError(f"n: expected a non-negative integer (the true number of objects), got {n!r}")
    cdf, sf = cardinality_cdf_sf(density, int(n))
    n = int(n)
    return float(np.sum(cdf[:n] ** 2) + np.sum(sf[n:] ** 2))


def cardinality_cdf_sf(density, n: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """F(k) = P(|X| <= k) and P(|X| > k) for k = 0..K, K >= n, each computed without 1 - F cancellation.

    K covers the whole support of finite families, and for families with a
    PPP reaches the first k >= m_max + k_P with P(Poisson > k_P) < RPS_TAIL.
    """
    density = as_pmbm(density)
    if isinstance(density, IIDCluster):
        pmf = density.cardinality
        K = max(pmf.shape[0] - 1, n)
        p = np.zeros(K + 1)
        p[: pmf.shape[0]] = pmf
        return np.minimum(np.cumsum(p), 1.0), _upper_tail(p)
    if isinstance(density, PPP):
        q, rate = np.ones(1), density.total_rate
    else:
        q = _poisson_binomial_mixture(density)
        rate = 0.0 if density.ppp is None else density.ppp.total_rate
    if not math.isfinite(rate):
        raise ValueError("density: the PPP's total rate is infinite: no cardinality distribution")
    kp = _poisson_tail_index(rate)
    K = max(q.shape[0] - 1 + kp, n)
    if K > MAX_RPS_TABLE:
        raise ValueError(
            f"density: a cardinality table of {K} entries exceeds {MAX_RPS_TABLE} (rate {rate:.3g})"
        )
    cdf_p, sf_p = _poisson_cdf_sf(rate, K)
    # N = B + M with B ~ q and M ~ Poisson: F(k) = sum_b q_b F_P(k - b), S(k) = sum_b q_b S_P(k - b),
    # where F_P(j) = 0 and S_P(j) = 1 for j < 0
    cdf = np.convolve(q, cdf_p)[: K + 1]
    sf = np.convolve(q, sf_p)[: K + 1]
    # + P(B > k), 0 from k = len(q) - 1 on (q has len(q) <= K + 1 entries: K >= len(q) - 1 + kp)
    sf[: q.shape[0]] += _upper_tail(q)
    return np.minimum(cdf, 1.0, out=cdf), np.minimum(sf, 1.0, out=sf)


def _poisson_cdf_sf(rate: float, K: int) -> tuple[np.ndarray, np.ndarray]:
    """The Poisson(rate) cdf and sf at k = 0..K, read-only.

    Tables of at most 4096 entries are kept (64 at most) for the steps that follow: a run's PPP of
    undetected objects mostly keeps its rate.
    """
    return _kept_poisson_cdf_sf(rate, K) if K < 4096 else _poisson_cdf_sf_of(rate, K)


@functools.lru_cache(maxsize=64)
def _kept_poisson_cdf_sf(rate: float, K: int) -> tuple[np.ndarray, np.ndarray]:
    return _poisson_cdf_sf_of(rate, K)


def _poisson_cdf_sf_of(rate: float, K: int) -> tuple[np.ndarray, np.ndarray]:
    k = np.arange(K + 1)
    if rate > 0:
        cdf_p, sf_p = pdtr(k, rate), pdtrc(k, rate)  # Poisson cdf and sf (what scipy.stats.poisson calls)
    else:
        cdf_p, sf_p = np.ones(K + 1), np.zeros(K + 1)
    cdf_p.setflags(write=False)
    sf_p.setflags(write=False)
    return cdf_p, sf_p


def _upper_tail(p: np.ndarray) -> np.ndarray:
    """P(N > k) = sum_{j > k} p_j for k = 0..len(p) - 1, summed from the top (no cancellation)."""
    out = np.zeros_like(p)
    out[:-1] = np.cumsum(p[::-1])[::-1][1:]
    return out


def _poisson_binomial_mixture(pmbm: PMBM) -> np.ndarray:
    """sum_h w_h PB(r_h): the pmf of the number of Bernoullis that exist, over 0..max_h m_h."""
    rs = [pmbm.existence(h) for h in range(pmbm.n_hypotheses)]  # no hypothesis built: r only
    m_max = max(r.shape[0] for r in rs)
    # every hypothesis at once, padded with r = 0 Bernoullis (which leave a pmf unchanged, exactly)
    r = np.zeros((len(rs), m_max))
    for h, rh in enumerate(rs):
        r[h, : rh.shape[0]] = rh
    return pmbm.weights @ poisson_binomial(r)


def poisson_binomial(r: np.ndarray) -> np.ndarray:
    """pmf over 0..m of the number of successes of independent Bernoullis ``r`` (m,), by convolution.

    ``r`` of shape (H, m) gives the H pmfs (H, m + 1) of its rows at once.
    Adding Bernoulli k takes ``pmf'[i] = pmf[i] (1 - r_k) + pmf[i - 1] r_k``
    for i = 1..k + 1 and ``pmf'[0] = pmf[0] (1 - r_k)``, compiled
    (:func:`_poisson_binomial_rows`): the same operations on the same numbers
    as the whole-row NumPy recursion, so the same values bit for bit.
    """
    r = np.asarray(r, dtype=float)
    rows = np.ascontiguousarray(r.reshape(math.prod(r.shape[:-1]), r.shape[-1]))
    return _poisson_binomial_rows(rows).reshape(*r.shape[:-1], r.shape[-1] + 1)


@nb.njit(cache=True)
def _poisson_binomial_rows(r):
    """The recursion of :func:`poisson_binomial` on each row of ``r`` (H, m): (H, m + 1)."""
    H, m = r.shape
    pmf = np.zeros((H, m + 1))
    for h in range(H):
        pmf[h, 0] = 1.0
        for k in range(m):
            rk = r[h, k]
            q = 1.0 - rk
            # downwards, so that pmf[h, i - 1] is still the previous step's
            for i in range(k + 1, 0, -1):
                pmf[h, i] = pmf[h, i] * q + pmf[h, i - 1] * rk
            pmf[h, 0] *= q
    return pmf


@functools.lru_cache(maxsize=64)
def _poisson_tail_index(rate: float) -> int:
    """The smallest k with P(Poisson(rate) > k) < RPS_TAIL (0 for rate 0)."""
    if rate == 0:
        return 0
    start = pdtrik(1.0 - RPS_TAIL, rate)  # near the answer; the two walks below make it exact
    k = int(start) if math.isfinite(start) and start >= 0 else int(rate + 20.0 * math.sqrt(rate) + 50.0)
    while k > 0 and pdtrc(k - 1, rate) < RPS_TAIL:
        k -= 1
    while pdtrc(k, rate) >= RPS_TAIL:
        k += 1
    return k
