"""Multi-object densities: PPP, multi-Bernoulli, PMBM (and its special cases), i.i.d. cluster.

All densities are frozen dataclasses of arrays with documented shapes,
validated once at construction. Single-object densities are stored as
*families* of k densities evaluated together (``logpdf(y) -> (k, n)``) so
that no Python object exists per Gaussian component.

Notation follows Pinto et al., "An Uncertainty-Aware Performance Measure for
Multi-Object Tracking", IEEE SPL 2021 (eqs. (2)-(6)).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numba as nb
import numpy as np
from scipy.spatial.distance import cdist
from scipy.special import gammaln, logsumexp

from nllbench import _validate as v

_LOG_2PI = math.log(2.0 * math.pi)


# ---------------------------------------------------------------------------
# single-object density families
# ---------------------------------------------------------------------------


def _gaussian_logpdf(means, chol, log_norm, y):
    """log N(y_l; means[j], L_j L_j^T) for (k, d) means, (k, d, d) lower factors L, (k,) log-normalisers.

    The Mahalanobis term is ||z||^2 with z solving L z = y - m by forward
    substitution (a triangular solve, backward stable), not z = L^-1 (y - m)
    with an explicit inverse, whose rounding grows with the condition
    number (Higham, "Accuracy and Stability of Numerical Algorithms", 2nd ed.,
    sections 8.1 and 14.1). Returns (k, n).
    """
    k, n = means.shape[0], y.shape[0]
    if k == 0 or n == 0:
        return np.zeros((k, n)) + log_norm[:, None]
    return _gaussian_logpdf_kernel(
        np.ascontiguousarray(means),
        np.ascontiguousarray(chol),
        np.ascontiguousarray(log_norm),
        np.ascontiguousarray(y, dtype=np.float64),
    )


@nb.njit(cache=True)
def _gaussian_logpdf_kernel(means, chol, log_norm, y):
    k, d = means.shape
    n = y.shape[0]
    out = np.empty((k, n))
    z = np.empty(d)
    for j in range(k):
        for l in range(n):
            quad = 0.0
            for i in range(d):
                acc = y[l, i] - means[j, i]
                for t in range(i):
                    acc = acc - chol[j, i, t] * z[t]
                z[i] = acc / chol[j, i, i]
                quad = z[i] * z[i] if i == 0 else quad + z[i] * z[i]
            # Overflow (a point ~1e154 standard deviations away) only happens
            # when the quadratic form exceeds ~1e308: its density is then 0
            # (log -inf), and an inf - inf met on the way (NaN) stands for the same.
            if quad != quad:
                quad = np.inf
            out[j, l] = log_norm[j] - 0.5 * quad
    return out


def batched_logpdf(families: list, y: np.ndarray) -> list[np.ndarray]:
    """``[f.logpdf(y) for f in families]``, with all Gaussian families evaluated in one pass."""
    gauss = [i for i, f in enumerate(families) if isinstance(f, Gaussians) and len(f)]
    out: list = [None] * len(families)
    if len(gauss) > 1:
        fams = [families[i] for i in gauss]
        allp = _gaussian_logpdf(
            np.concatenate([f.means for f in fams]),
            np.concatenate([f._chol for f in fams]),
            np.concatenate([f._log_norm for f in fams]),
            y,
        )
        splits = np.cumsum([len(f) for f in fams])[:-1]
        for i, part in zip(gauss, np.split(allp, splits), strict=True):
            out[i] = part
    for i, f in enumerate(families):
        if out[i] is None:
            out[i] = f.logpdf(y)
    return out


@nb.njit(cache=True)
def _two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


@nb.njit(cache=True)
def _split(a):
    c = 134217729.0 * a  # 2^27 + 1 (Dekker); |a| <= 4 after scaling, so no overflow
    hi = c - (c - a)
    return hi, a - hi


@nb.njit(cache=True)
def _two_prod(a, b):
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


@nb.njit(cache=True)
def _dd_sub_mul(sh, sl, ah, al, bh, bl):
    """(sh, sl) - (ah, al) * (bh, bl) in double-double arithmetic."""
    p, e = _two_prod(ah, bh)
    e += ah * bl + al * bh
    s, f = _two_sum(sh, -p)
    f += sl - e
    hi = s + f
    return hi, f - (hi - s)


@nb.njit(cache=True)
def _dd_div(ah, al, bh, bl):
    q1 = ah / bh
    p, e = _two_prod(q1, bh)
    e += q1 * bl
    r = ((ah - p) - e) + al
    q2 = r / bh
    hi = q1 + q2
    return hi, q2 - (hi - q1)


@nb.njit(cache=True)
def _dd_sqrt(ah, al):
    x = math.sqrt(ah)
    p, e = _two_prod(x, x)
    r = ((ah - p) - e) + al
    y = r / (2.0 * x)
    hi = x + y
    return hi, y - (hi - x)


@nb.njit(cache=True)
def _cholesky_dd(covs):
    """Lower Cholesky factors of (k, d, d) matrices in double-double arithmetic (about 106 bits).

    Each matrix is first scaled by an exact power of 4 (so that Dekker's
    splitting cannot overflow and the factor's scale is an exact power of 2).
    Returns the factors rounded to float64, log of their diagonals, and a flag
    per matrix that is False where the extended factorisation met a
    non-positive pivot (the caller then falls back to float64).
    """
    k, d, _ = covs.shape
    L = np.zeros((k, d, d))
    log_diag = np.zeros((k, d))
    ok = np.ones(k, dtype=np.bool_)
    hi = np.zeros((d, d))
    lo = np.zeros((d, d))
    for m in range(k):
        top = 0.0
        for i in range(d):
            for j in range(d):
                top = max(top, abs(covs[m, i, j]))
        e = math.floor(math.log2(top) / 2.0) if top > 0 else 0
        scale = math.ldexp(1.0, -2 * e)  # 4^-e: exact
        for j in range(d):
            sh, sl = covs[m, j, j] * scale, 0.0
            for t in range(j):
                sh, sl = _dd_sub_mul(sh, sl, hi[j, t], lo[j, t], hi[j, t], lo[j, t])
            if not sh > 0.0:
                ok[m] = False
                break
            hi[j, j], lo[j, j] = _dd_sqrt(sh, sl)
            for i in range(j + 1, d):
                th, tl = covs[m, i, j] * scale, 0.0
                for t in range(j):
                    th, tl = _dd_sub_mul(th, tl, hi[i, t], lo[i, t], hi[j, t], lo[j, t])
                hi[i, j], lo[i, j] = _dd_div(th, tl, hi[j, j], lo[j, j])
        if not ok[m]:
            continue
        back = math.ldexp(1.0, e)  # sqrt(4^e): exact
        for i in range(d):
            for j in range(i + 1):
                L[m, i, j] = hi[i, j] * back
            log_diag[m, i] = math.log(L[m, i, i]) + math.log1p(lo[i, i] / hi[i, i])
    return L, log_diag, ok


def _extended_cholesky(covs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Lower Cholesky factors of symmetric positive-definite (k, d, d) matrices, in extended precision.

    Returns ``(L, log_diag)``: the factors rounded to float64 and ``log L_ii``
    (k, d) taken before rounding. The factor's error grows like the
    condition number times the unit roundoff (Higham, "Accuracy and
    Stability of Numerical Algorithms", 2nd ed., Theorem 10.3); computing it
    in double-double arithmetic (Dekker 1971; about 106 bits) keeps the
    log-density of a covariance of condition 1e11 within ~1e-14 relative of
    exact rational arithmetic, where float64 alone gives ~1e-5. Column j
    depends only on columns < j, and the arithmetic is exactly equivariant
    under the power-of-4 scaling applied first, so the leading p x p block of
    L is the factor of the leading p x p block of the matrix, bit for bit.
    """
    covs = np.ascontiguousarray(covs, dtype=np.float64)
    L, log_diag, ok = _cholesky_dd(covs)
    if not ok.all():  # a pivot lost to rounding in a barely positive-definite matrix: float64
        plain = np.linalg.cholesky(covs[~ok])
        L[~ok] = plain
        log_diag[~ok] = np.log(np.diagonal(plain, axis1=1, axis2=2))
    return L, log_diag


def _set_gaussians(g, means, covs, chol=None, log_diag=None, log_norm=None) -> None:
    """Fill a Gaussians' fields; the factor and normaliser are computed unless given."""
    k, d = means.shape
    if chol is None:
        chol, log_diag = _extended_cholesky(covs) if k else (np.empty((0, d, d)), np.empty((0, d)))
    object.__setattr__(g, "means", means)
    object.__setattr__(g, "covs", covs)
    object.__setattr__(g, "_chol", chol)
    object.__setattr__(g, "_log_diag", log_diag)
    object.__setattr__(g, "_log_norm", _log_normaliser(log_diag) if log_norm is None else log_norm)


def _log_normaliser(log_diag: np.ndarray) -> np.ndarray:
    """-log sqrt((2 pi)^d det P) from log L_ii (k, d): log det P = 2 sum log L_ii."""
    d = log_diag.shape[1]
    return -0.5 * (d * _LOG_2PI + 2.0 * log_diag.sum(axis=1))


@dataclass(frozen=True)
class Gaussians:
    """k Gaussian densities N(x; means[j], covs[j]).

    Attributes
    ----------
    means : (k, d) float
    covs : (k, d, d) float, symmetric positive definite
    """

    means: np.ndarray
    covs: np.ndarray
    _chol: np.ndarray = field(init=False, repr=False, compare=False)
    _log_diag: np.ndarray = field(init=False, repr=False, compare=False)
    _log_norm: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        means = v.points(self.means, "means")
        k, d = means.shape
        covs, _ = v.covariances(self.covs, "covs", k, d)
        _set_gaussians(self, means, covs)

    @classmethod
    def _trusted(
        cls, means: np.ndarray, covs: np.ndarray, chol=None, log_diag=None, log_norm=None
    ) -> Gaussians:
        """Private constructor for members derived from validated ones (no checks).

        ``means`` (k, d) and ``covs`` (k, d, d) must already be finite float64
        arrays with symmetric positive-definite covariances (e.g. blocks or
        positive multiples of validated ones, or a file that passed its schema
        check). ``chol`` and ``log_diag``, if given, are their factors as
        :func:`_extended_cholesky` returns them, and ``log_norm`` the
        normalisers :func:`_log_normaliser` computes from ``log_diag``.
        """
        out = object.__new__(cls)
        _set_gaussians(out, means, covs, chol, log_diag, log_norm)
        return out

    @property
    def dim(self) -> int:
        return self.means.shape[1]

    def __len__(self) -> int:
        return self.means.shape[0]

    def logpdf(self, y: np.ndarray) -> np.ndarray:
        """log N(y_l; means[j], covs[j]) as a ``(k, n)`` array for ``y`` of shape (n, d)."""
        return _gaussian_logpdf(self.means, self._chol, self._log_norm, y)

    def subset(self, idx: np.ndarray) -> Gaussians:
        """Members ``idx`` (already validated: no re-factorisation)."""
        out = object.__new__(Gaussians)
        object.__setattr__(out, "means", self.means[idx])
        object.__setattr__(out, "covs", self.covs[idx])
        object.__setattr__(out, "_chol", self._chol[idx])
        object.__setattr__(out, "_log_diag", self._log_diag[idx])
        object.__setattr__(out, "_log_norm", self._log_norm[idx])
        return out


@dataclass(frozen=True)
class Laplaces:
    """k densities p_j(x) = exp(-||x - centers[j]|| / scales[j]) / k_j (Theorem 1, condition (iii)).

    ``||.||`` is the Euclidean norm, so ``D(x, c) = ||x - c|| / scale`` is a
    translation-invariant metric and the normaliser
    ``k_j = scale_j^d * Gamma(d) * 2 pi^(d/2) / Gamma(d/2)`` does not depend
    on the centre.

    Attributes
    ----------
    centers : (k, d) float
    scales : (k,) float, positive
    """

    centers: np.ndarray
    scales: np.ndarray

    def __post_init__(self) -> None:
        centers = v.points(self.centers, "centers")
        k = centers.shape[0]
        scales = v.as_float_array(self.scales, "scale")
        if scales.ndim == 0:
            scales = np.full(k, float(scales))
        scales = v.vector(scales, "scale", k)
        if np.any(scales <= 0):
            raise ValueError(f"scale: expected positive values, got {float(scales[scales <= 0][0])}")
        object.__setattr__(self, "centers", centers)
        object.__setattr__(self, "scales", scales)

    @property
    def dim(self) -> int:
        return self.centers.shape[1]

    def __len__(self) -> int:
        return self.centers.shape[0]

    def log_normaliser(self) -> np.ndarray:
        """log k_j, shape (k,)."""
        return laplace_log_normaliser(self.scales, self.dim)

    def logpdf(self, y: np.ndarray) -> np.ndarray:
        dist = cdist(self.centers, y)  # (k, n)
        return -dist / self.scales[:, None] - self.log_normaliser()[:, None]

    def subset(self, idx: np.ndarray) -> Laplaces:
        return Laplaces(self.centers[idx], self.scales[idx])


def laplace_log_normaliser(scale, dim: int) -> np.ndarray:
    """log of the integral of exp(-||x|| / scale) over R^dim."""
    scale = np.asarray(scale, dtype=float)
    return (
        dim * np.log(scale)
        + gammaln(dim)
        + math.log(2.0)
        + 0.5 * dim * math.log(math.pi)
        - gammaln(0.5 * dim)
    )


SingleObjectDensities = Gaussians | Laplaces


def log_box_volume(lows: np.ndarray, highs: np.ndarray) -> np.ndarray:
    """log of the volume of boxes [lows[b], highs[b]] (B, d), computed in log space.

    A side ``high - low`` may overflow (e.g. [-1.7e308, 1.7e308]); such sides
    are taken as ``2 (high / 2 - low / 2)``, which is exact in binary floating
    point up to the final rounding. Other sides are as before, bit for bit.
    """
    with np.errstate(over="ignore"):
        width = highs - lows
    huge = ~np.isfinite(width)
    log_width = np.log(np.where(huge, 1.0, width))
    if np.any(huge):
        half = np.log(0.5 * highs[huge] - 0.5 * lows[huge]) + math.log(2.0)
        log_width[huge] = half
    return log_width.sum(axis=1)


def _trusted(cls, **fields):
    """An instance of the frozen dataclass ``cls`` with ``fields`` set as given, unchecked.

    The private route for densities derived from validated ones (marginals,
    scaled or tempered copies, a file that passed its schema check): the
    public constructors keep every check, and whoever calls this one vouches
    that the fields have the types, shapes and ranges the class documents.
    """
    out = object.__new__(cls)
    for name, value in fields.items():
        object.__setattr__(out, name, value)
    return out


def _labels(labels, count: int) -> np.ndarray | None:
    """Validate optional integer labels of shape (count,)."""
    if labels is None:
        return None
    arr = np.asarray(labels)
    if arr.shape != (count,) or (arr.size and not np.issubdtype(arr.dtype, np.integer)):
        raise ValueError(f"labels: expected {count} integers, got shape {arr.shape} of {arr.dtype}")
    return arr.astype(np.int64)


# ---------------------------------------------------------------------------
# Poisson point process
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class PPP:
    """Poisson point process with intensity lambda(x) (paper eq. (3)).

    lambda(x) = sum_j weights[j] N(x; means[j], covs[j])
              + sum_b rates[b] / vol_b * 1[low_b <= x <= high_b]

    Attributes
    ----------
    weights : (J,) float, >= 0
        Gaussian-mixture weights (expected number of objects per component).
    gaussians : Gaussians with J components
    rates : (B,) float, >= 0
        Expected number of objects in each uniform box.
    lows, highs : (B, d) float
        Box corners, ``lows < highs``.
    labels : (J,) int or None
        Optional tags of the Gaussian components (e.g. a PHD filter's track
        labels); they do not affect the density.
    """

    weights: np.ndarray
    gaussians: Gaussians
    rates: np.ndarray
    lows: np.ndarray
    highs: np.ndarray
    labels: np.ndarray | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        d = self.gaussians.dim
        J = len(self.gaussians)
        weights = v.nonnegative(self.weights, "weights", J)
        rates = v.nonnegative(self.rates, "rate")
        B = rates.shape[0]
        lows = v.points(self.lows, "low", B, d) if B else np.empty((0, d))
        highs = v.points(self.highs, "high", B, d) if B else np.empty((0, d))
        if np.any(highs <= lows):
            raise ValueError(
                f"high: expected every upper corner above the lower one, got low={lows}, high={highs}"
            )
        object.__setattr__(self, "labels", _labels(self.labels, J))
        object.__setattr__(self, "weights", weights)
        object.__setattr__(self, "rates", rates)
        object.__setattr__(self, "lows", lows)
        object.__setattr__(self, "highs", highs)

    @classmethod
    def gaussian(cls, weights, means, covs) -> PPP:
        """PPP with Gaussian-mixture intensity sum_j w_j N(x; m_j, P_j); shapes (J,), (J, d), (J, d, d)."""
        g = Gaussians(means, covs)
        return cls(weights, g, np.empty(0), np.empty((0, g.dim)), np.empty((0, g.dim)))

    @classmethod
    def uniform(cls, rate, low, high, dim: int | None = None) -> PPP:
        """PPP of total rate ``rate`` uniform on the box [low, high] (0 outside).

        ``low`` and ``high`` are (d,) arrays; scalars give the cube
        [low, high]^dim (``dim`` defaults to 1).
        """
        low_a = v.as_float_array(low, "low")
        high_a = v.as_float_array(high, "high")
        if dim is not None:
            if not isinstance(dim, (int, np.integer)) or dim < 1:
                raise ValueError(f"dim: expected a positive integer, got {dim!r}")
            low_a = np.broadcast_to(low_a, (dim,)) if low_a.ndim == 0 else low_a
            high_a = np.broadcast_to(high_a, (dim,)) if high_a.ndim == 0 else high_a
        low_a, high_a = np.atleast_1d(low_a), np.atleast_1d(high_a)
        if low_a.ndim != 1:
            raise ValueError(f"low: expected shape (d,), got shape {low_a.shape}")
        if high_a.shape != low_a.shape:
            raise ValueError(f"high: expected shape {low_a.shape} like low, got shape {high_a.shape}")
        if dim is not None and low_a.shape != (dim,):
            raise ValueError(f"low: expected shape ({dim},) for dim={dim}, got shape {low_a.shape}")
        d = low_a.shape[0]
        rate_a = np.atleast_1d(v.as_float_array(rate, "rate"))
        if rate_a.shape != (1,):
            raise ValueError(f"rate: expected a scalar, got shape {np.shape(rate)}")
        return cls(
            np.empty(0),
            Gaussians(np.empty((0, d)), np.empty((0, d, d))),
            rate_a,
            low_a[None, :],
            high_a[None, :],
        )

    @classmethod
    def empty(cls, dim: int) -> PPP:
        """The PPP with zero intensity (it explains no object)."""
        return cls(
            np.empty(0),
            Gaussians(np.empty((0, dim)), np.empty((0, dim, dim))),
            np.empty(0),
            np.empty((0, dim)),
            np.empty((0, dim)),
        )

    def __add__(self, other: PPP) -> PPP:
        """Superposition: the intensities add."""
        if not isinstance(other, PPP):
            return NotImplemented
        if other.dim != self.dim:
            raise ValueError(f"other: expected dimension {self.dim}, got {other.dim}")
        return PPP(
            np.concatenate([self.weights, other.weights]),
            Gaussians(
                np.concatenate([self.gaussians.means, other.gaussians.means]),
                np.concatenate([self.gaussians.covs, other.gaussians.covs]),
            ),
            np.concatenate([self.rates, other.rates]),
            np.concatenate([self.lows, other.lows]),
            np.concatenate([self.highs, other.highs]),
            labels=None
            if self.labels is None or other.labels is None
            else np.concatenate([self.labels, other.labels]),
        )

    @property
    def dim(self) -> int:
        return self.gaussians.dim

    @property
    def total_rate(self) -> float:
        """The integral of lambda over the whole space (expected number of objects)."""
        # an overflow to +inf is the right value: exp(-Lambda) is then 0 and so is every likelihood
        with np.errstate(over="ignore"):
            return float(self.weights.sum() + self.rates.sum())

    def log_intensity(self, y: np.ndarray) -> np.ndarray:
        """log lambda(y_l) for y of shape (n, d); ``-inf`` where lambda is 0."""
        n = y.shape[0]
        parts = []
        if len(self.gaussians):
            with np.errstate(divide="ignore"):
                logw = np.log(self.weights)
            parts.append(logw[:, None] + self.gaussians.logpdf(y))
        if self.rates.size:
            inside = np.all(
                (y[None, :, :] >= self.lows[:, None, :]) & (y[None, :, :] <= self.highs[:, None, :]), axis=2
            )
            log_vol = log_box_volume(self.lows, self.highs)
            with np.errstate(divide="ignore"):
                logr = np.log(self.rates) - log_vol
            parts.append(np.where(inside, logr[:, None], -np.inf))
        if not parts:
            return np.full(n, -np.inf)
        stacked = np.concatenate(parts, axis=0)
        if stacked.shape[0] == 0 or n == 0:
            return np.full(n, -np.inf)
        with np.errstate(divide="ignore"):
            return logsumexp(stacked, axis=0)


# ---------------------------------------------------------------------------
# multi-Bernoulli
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class MultiBernoulli:
    """Multi-Bernoulli density: m independent Bernoullis (paper eq. (5)).

    Bernoulli k has existence probability ``r[k]`` and single-object density
    ``densities`` member k. ``r = 0`` (never exists) and ``r = 1`` (surely
    exists) are allowed and handled exactly.

    Attributes
    ----------
    r : (m,) float in [0, 1]
    densities : Gaussians or Laplaces with m members
    labels : (m,) int or None
        Optional track labels (a stable id per Bernoulli); they do not affect
        the density.
    """

    r: np.ndarray
    densities: SingleObjectDensities
    labels: np.ndarray | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.densities, (Gaussians, Laplaces)):
            raise TypeError(f"densities: expected Gaussians or Laplaces, got {type(self.densities).__name__}")
        r = v.probabilities(self.r, "r", len(self.densities))
        object.__setattr__(self, "r", r)
        object.__setattr__(self, "labels", _labels(self.labels, len(self.densities)))

    @classmethod
    def gaussian(cls, r, means, covs, labels=None) -> MultiBernoulli:
        """MB with Gaussian densities; shapes (m,), (m, d), (m, d, d)."""
        return cls(r, Gaussians(means, covs), labels)

    @classmethod
    def laplace(cls, r, centers, scale) -> MultiBernoulli:
        """MB with densities exp(-||x - c_k|| / scale_k) / k; shapes (m,), (m, d), scalar or (m,)."""
        return cls(r, Laplaces(centers, scale))

    @classmethod
    def empty(cls, dim: int) -> MultiBernoulli:
        return cls(np.empty(0), Gaussians(np.empty((0, dim)), np.empty((0, dim, dim))))

    @property
    def dim(self) -> int:
        return self.densities.dim

    def __len__(self) -> int:
        return self.r.shape[0]

    def subset(self, idx: np.ndarray, labels: np.ndarray | None = None) -> MultiBernoulli:
        """Bernoullis ``idx`` (integer indices), with ``labels`` (len(idx),) if given.

        Trusted: members of a validated MB need no new checks; ``labels``, when
        given, must already be validated integers of the right length.
        """
        lab = labels if labels is not None else (None if self.labels is None else self.labels[idx])
        return _trusted(MultiBernoulli, r=self.r[idx], densities=self.densities.subset(idx), labels=lab)

    @property
    def means(self) -> np.ndarray:
        """(m, d) locations (Gaussian means or Laplace centres)."""
        return self.densities.means if isinstance(self.densities, Gaussians) else self.densities.centers


# ---------------------------------------------------------------------------
# PMBM and its special cases
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class PMBM:
    """Poisson multi-Bernoulli mixture (paper eq. (2)-(4)).

    ``ppp=None`` gives an MBM; one hypothesis gives a PMB; an MB with no PPP
    (one hypothesis, ``ppp=None``) also stands for any set of predictions
    with existence probabilities and state uncertainties. An MBM01 is an
    MBM whose existence probabilities are all 0 or 1.

    Attributes
    ----------
    ppp : PPP or None
        Undetected objects; None means zero intensity.
    hypotheses : tuple of MultiBernoulli, length H >= 1
        Global hypotheses; they may hold different numbers of Bernoullis.
    weights : (H,) float, >= 0, summing to 1
    """

    ppp: PPP | None
    hypotheses: tuple[MultiBernoulli, ...]
    weights: np.ndarray

    def __post_init__(self) -> None:
        hyps = self.hypotheses
        if isinstance(hyps, MultiBernoulli):
            hyps = (hyps,)
        hyps = tuple(hyps)
        if len(hyps) == 0:
            raise ValueError("hypotheses: expected at least one MultiBernoulli, got none")
        for h, mb in enumerate(hyps):
            if not isinstance(mb, MultiBernoulli):
                raise TypeError(f"hypotheses[{h}]: expected MultiBernoulli, got {type(mb).__name__}")
        if self.ppp is not None and not isinstance(self.ppp, PPP):
            raise TypeError(f"ppp: expected PPP or None, got {type(self.ppp).__name__}")
        dims = {mb.dim for mb in hyps} | ({self.ppp.dim} if self.ppp is not None else set())
        if len(dims) != 1:
            raise ValueError(
                "hypotheses: expected one state dimension for the PPP and every hypothesis, "
                f"got {sorted(dims)}"
            )
        weights = v.normalised(self.weights, "weights", len(hyps))
        object.__setattr__(self, "hypotheses", hyps)
        object.__setattr__(self, "weights", weights)

    @classmethod
    def pmb(cls, ppp: PPP | None, mb: MultiBernoulli) -> PMBM:
        return cls(ppp, (mb,), np.ones(1))

    @property
    def dim(self) -> int:
        return self.hypotheses[0].dim

    @property
    def family(self) -> str:
        """'PMB', 'PMBM', 'MB', 'MBM' or 'MBM01' (MBM with every r in {0, 1})."""
        single = len(self.hypotheses) == 1
        if self.ppp is not None:
            return "PMB" if single else "PMBM"
        if single:
            return "MB"
        zero_one = all(np.all((mb.r == 0) | (mb.r == 1)) for mb in self.hypotheses)
        return "MBM01" if zero_one else "MBM"


def as_pmbm(density):
    """``density`` itself, or a MultiBernoulli as the one-hypothesis MBM it stands for.

    Every multi-Bernoulli family is computed as a PMBM (paper eq. (4) with
    zero Poisson intensity and one global hypothesis of weight 1).
    """
    if isinstance(density, MultiBernoulli):
        return PMBM.pmb(None, density)
    return density


def MBM(hypotheses, weights) -> PMBM:  # noqa: N802 - a density name
    """Multi-Bernoulli mixture: a PMBM with zero Poisson intensity."""
    return PMBM(None, hypotheses, weights)


def PMB(ppp: PPP | None, mb: MultiBernoulli) -> PMBM:  # noqa: N802 - a density name
    """Poisson multi-Bernoulli: a PMBM with one hypothesis."""
    return PMBM.pmb(ppp, mb)


# ---------------------------------------------------------------------------
# i.i.d. cluster (CPHD)
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class IIDCluster:
    """i.i.d. cluster process (CPHD posterior, paper eq. (1)).

    f(X) = |X|! p(|X|) prod_{x in X} s(x), with s(x) = sum_j w_j N(x; m_j, P_j).

    Attributes
    ----------
    cardinality : (N + 1,) float
        pmf of the number of objects over n = 0..N (sums to 1); zero beyond N.
    weights : (J,) float
        Spatial mixture weights (sum to 1).
    gaussians : Gaussians with J components
    """

    cardinality: np.ndarray
    weights: np.ndarray
    gaussians: Gaussians

    def __init__(self, cardinality, weights, means=None, covs=None, *, gaussians: Gaussians | None = None):
        if gaussians is None:
            gaussians = Gaussians(means, covs)
        card = v.normalised(cardinality, "cardinality")
        if card.size == 0:
            raise ValueError("cardinality: expected a pmf over n = 0..N with N >= 0, got an empty array")
        if len(gaussians) == 0 and np.all(card[1:] == 0):
            w = np.empty(0)  # surely empty: no spatial density needed
        else:
            w = v.normalised(weights, "weights", len(gaussians))
        object.__setattr__(self, "cardinality", card)
        object.__setattr__(self, "weights", w)
        object.__setattr__(self, "gaussians", gaussians)

    @property
    def dim(self) -> int:
        return self.gaussians.dim

    @property
    def max_cardinality(self) -> int:
        return self.cardinality.shape[0] - 1

    def log_spatial(self, y: np.ndarray) -> np.ndarray:
        """log s(y_l), shape (n,)."""
        with np.errstate(divide="ignore"):
            logw = np.log(self.weights)
        return logsumexp(logw[:, None] + self.gaussians.logpdf(y), axis=0)


Density = PPP | PMBM | MultiBernoulli | IIDCluster
