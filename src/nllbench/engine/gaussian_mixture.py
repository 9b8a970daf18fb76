"""Gaussian components: the single-object family and the weighted Gaussian mixture.

:class:`Gaussians` holds k Gaussian densities N(x; m_j, P_j) evaluated
together (``logpdf(y) -> (k, n)``), with their Cholesky factors computed once;
:class:`GaussianMixture` is the weighted sum sum_k w_k N(x; m_k, P_k) that
every Gaussian intensity and spatial density of the package is made of: a
PPP's Gaussian part, a PHD/CPHD filter's intensity, the PPP of undetected
objects of the PMBM filters, a model's birth and initial intensities, and the
spatial density of an i.i.d. cluster. Both evaluate through one log-pdf
kernel (:func:`batched_logpdf` runs it once over many families).

No Python object exists per component: a mixture is a frozen dataclass of
arrays with documented shapes, validated once by its public constructor;
mixtures derived from validated ones (predicted, scaled, concatenated,
subsets) are built by the private, trusted :meth:`GaussianMixture._trusted`.

Over 600 lines because the three Gaussian families (components, the weighted mixture,
per-Bernoulli mixtures) share one log-pdf kernel and one validation; apart, each would
copy the kernel's calling convention.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property

import numba as nb
import numpy as np
from scipy.special import logsumexp

from nllbench.engine import validate as v

_LOG_2PI = math.log(2.0 * math.pi)


def gaussian_logpdf(means, chol, log_norm, y):
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
        allp = gaussian_logpdf(
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
        return gaussian_logpdf(self.means, self._chol, self._log_norm, y)

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
class GaussianMixture:
    """A weighted Gaussian mixture sum_k weights[k] N(x; means[k], covs[k]).

    The weights need not sum to one: as a Poisson intensity (paper eq. (3);
    Vo & Ma, "The Gaussian mixture probability hypothesis density filter",
    IEEE TSP 2006, eq. (21)) their sum is the expected number of objects; as
    the spatial density of an i.i.d. cluster they sum to one.

    Attributes
    ----------
    weights : (K,) float, >= 0
    means : (K, d) float
    covs : (K, d, d) float, symmetric positive definite
        Symmetrised by the public constructor. A filter's intermediate
        mixtures (built by :meth:`_trusted`) may hold a predicted F P F^T + Q
        that is symmetric only up to rounding; they are symmetrised when a
        filter exports its posterior through the public constructor.
    labels : (K,) int or None
        Optional tags of the components (e.g. a filter's track labels); they
        do not affect the mixture.

    Examples
    --------
    >>> gm = GaussianMixture([0.5, 2.0], [[0.0], [3.0]], [[[1.0]], [[4.0]]])
    >>> gm.logpdf(np.array([[0.0]])).round(4)
    array([-1.1117])
    """

    weights: np.ndarray
    means: np.ndarray
    covs: np.ndarray
    labels: np.ndarray | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        # empty means of any shape (0, ..., d) give an empty mixture of dimension d
        means = (
            v.points(self.means, "means") if np.size(self.means) else np.empty((0, np.shape(self.means)[-1]))
        )
        K, d = means.shape
        weights = v.nonnegative(self.weights, "weights", K)
        covs, _ = v.covariances(self.covs, "covs", K, d) if K else (np.empty((0, d, d)), None)
        object.__setattr__(self, "weights", weights)
        object.__setattr__(self, "means", means)
        object.__setattr__(self, "covs", covs)
        object.__setattr__(self, "labels", v.labels(self.labels, K))

    @classmethod
    def _trusted(
        cls, weights: np.ndarray, means: np.ndarray, covs: np.ndarray, labels: np.ndarray | None = None
    ) -> GaussianMixture:
        """Private constructor for mixtures derived from validated ones (no checks, no copies).

        The caller vouches for the documented types, shapes and ranges:
        float64 ``weights`` (K,) >= 0, finite ``means`` (K, d), symmetric
        positive-definite ``covs`` (K, d, d) (e.g. Kalman-predicted or
        -updated covariances of validated ones), int64 ``labels`` (K,) or None.
        """
        out = object.__new__(cls)
        object.__setattr__(out, "weights", weights)
        object.__setattr__(out, "means", means)
        object.__setattr__(out, "covs", covs)
        object.__setattr__(out, "labels", labels)
        return out

    @classmethod
    def from_gaussians(cls, weights, gaussians: Gaussians, labels=None) -> GaussianMixture:
        """The mixture of a validated :class:`Gaussians` family with ``weights`` (K,) and ``labels`` (K,).

        Checks the weights and labels; the family's factors are reused, not recomputed.
        """
        if not isinstance(gaussians, Gaussians):
            raise TypeError(f"gaussians: expected Gaussians, got {type(gaussians).__name__}")
        K = len(gaussians)
        return cls._of_components(v.nonnegative(weights, "weights", K), gaussians, v.labels(labels, K))

    @classmethod
    def _of_components(
        cls, weights: np.ndarray, gaussians: Gaussians, labels: np.ndarray | None = None
    ) -> GaussianMixture:
        """Trusted :meth:`from_gaussians`: ``weights`` and ``labels`` as :meth:`_trusted` requires them."""
        out = cls._trusted(weights, gaussians.means, gaussians.covs, labels)
        out.__dict__["components"] = gaussians  # the cached_property's slot: no second factorisation
        return out

    @classmethod
    def empty(cls, dim: int) -> GaussianMixture:
        """The mixture with no component (zero everywhere) in dimension ``dim``."""
        return cls._trusted(np.empty(0), np.empty((0, dim)), np.empty((0, dim, dim)))

    @classmethod
    def concatenate(cls, parts: list[GaussianMixture]) -> GaussianMixture:
        """All components of ``parts`` (at least one, same dimension); labels kept if every part has them."""
        labels = None if any(p.labels is None for p in parts) else np.concatenate([p.labels for p in parts])
        return cls._trusted(
            np.concatenate([p.weights for p in parts]),
            np.concatenate([p.means for p in parts]),
            np.concatenate([p.covs for p in parts]),
            labels,
        )

    @property
    def dim(self) -> int:
        return self.means.shape[1]

    def __len__(self) -> int:
        return self.weights.shape[0]

    @cached_property
    def components(self) -> Gaussians:
        """The K unweighted component densities, factorised on first use only."""
        return Gaussians._trusted(self.means, self.covs)

    def scaled(self, factor: float) -> GaussianMixture:
        """Every weight times ``factor`` >= 0 (e.g. P_S or 1 - P_D thinning); components kept."""
        return GaussianMixture._trusted(factor * self.weights, self.means, self.covs, self.labels)

    def subset(self, idx: np.ndarray) -> GaussianMixture:
        """Components ``idx`` (integer indices or a boolean mask)."""
        labels = None if self.labels is None else self.labels[idx]
        return GaussianMixture._trusted(self.weights[idx], self.means[idx], self.covs[idx], labels)

    def log_weighted(self, y: np.ndarray) -> np.ndarray:
        """log(w_k N(y_l; m_k, P_k)) as a ``(K, n)`` array for ``y`` of shape (n, d); -inf where w_k = 0."""
        with np.errstate(divide="ignore"):
            log_w = np.log(self.weights)
        return log_w[:, None] + self.components.logpdf(y)

    def logpdf(self, y: np.ndarray) -> np.ndarray:
        """log sum_k w_k N(y_l; m_k, P_k), shape (n,); -inf where the mixture is 0 (e.g. K = 0)."""
        if len(self) == 0:
            return np.full(y.shape[0], -np.inf)
        with np.errstate(divide="ignore"):
            return logsumexp(self.log_weighted(y), axis=0)


@dataclass(frozen=True, init=False, eq=False)
class GaussianMixtures:
    """m single-object densities, each a normalised Gaussian mixture p_k(x) = sum_c w_c N(x; m_c, P_c).

    The single-object density of a labelled multi-Bernoulli, GLMB or PMBM
    track that keeps a Gaussian *mixture* (e.g. Reuter et al., "The labeled
    multi-Bernoulli filter", IEEE TSP 2014, eq. (21); Garcia-Fernandez et
    al., "Poisson multi-Bernoulli mixture filter: direct derivation and
    implementation", IEEE TAES 2018, Section V). Member k owns the
    components ``offsets[k]:offsets[k + 1]`` of one flat component array, so
    that no Python object exists per member or component.

    Built as ``GaussianMixtures(weights, means, covs, offsets)`` with the
    components' ``means`` (C, d) and ``covs`` (C, d, d) (symmetric positive
    definite), or by :meth:`single` from a :class:`Gaussians` family.

    Attributes
    ----------
    weights : (C,) float, >= 0
        Component weights; each member's sum to 1 (within 1e-9 per component).
    components : Gaussians with C members
        The component densities N(x; m_c, P_c), factorised once.
    offsets : (m + 1,) int64
        ``offsets[0] = 0``, strictly increasing (every member has at least
        one component), ``offsets[m] = C``.
    means : (m, d), a property
        The members' mixture means (not the components'; those are ``components.means``).

    Notes
    -----
    ``log p_k(y) = logsumexp_c(log w_c + log N(y; m_c, P_c))`` over member
    k's components. A member with one component of weight 1 gives exactly
    (bit for bit) the log-density of that Gaussian, its mean and its
    covariance, so one-component mixtures compute what :class:`Gaussians` does.

    Examples
    --------
    >>> g = GaussianMixtures([0.5, 0.5, 1.0], [[-1.0], [1.0], [4.0]], [[[1.0]]] * 3, [0, 2, 3])
    >>> g.means.ravel().tolist()  # the mixture means (the MMSE point of each member)
    [0.0, 4.0]
    """

    weights: np.ndarray
    components: Gaussians
    offsets: np.ndarray

    def __init__(self, weights, means, covs, offsets) -> None:
        offsets = _mixture_offsets(offsets)
        C = int(offsets[-1])
        weights = v.nonnegative(weights, "weights", C)
        means = v.points(means, "means", C) if C else np.empty((0, np.shape(means)[-1]))
        components = Gaussians(means, covs)
        counts = np.diff(offsets)
        totals = np.add.reduceat(weights, offsets[:-1]) if counts.size else np.empty(0)
        bad = np.abs(totals - 1.0) > v.SUM_TOL * counts
        if np.any(bad):
            k = int(np.flatnonzero(bad)[0])
            raise ValueError(
                f"weights: expected each member's component weights to sum to 1, got {float(totals[k])!r} "
                f"for member {k} (components {offsets[k]}..{offsets[k + 1] - 1})"
            )
        _set_mixtures(self, weights, components, offsets)

    @classmethod
    def _of(cls, weights: np.ndarray, components: Gaussians, offsets: np.ndarray) -> GaussianMixtures:
        """Trusted: float64 ``weights`` (C,) summing to 1 per member, validated ``components``,
        int64 ``offsets`` (m + 1,) as the class documents them (e.g. a subset or transform of one)."""
        out = object.__new__(cls)
        _set_mixtures(out, weights, components, offsets)
        return out

    @classmethod
    def single(cls, gaussians: Gaussians) -> GaussianMixtures:
        """Each member of ``gaussians`` as a one-component mixture of weight 1 (its factors reused)."""
        if not isinstance(gaussians, Gaussians):
            raise TypeError(f"gaussians: expected Gaussians, got {type(gaussians).__name__}")
        k = len(gaussians)
        return cls._of(np.ones(k), gaussians, np.arange(k + 1, dtype=np.int64))

    @classmethod
    def concatenate(cls, parts: list) -> GaussianMixtures:
        """All members of ``parts`` (GaussianMixtures or Gaussians, one dimension, at least one) in turn."""
        parts = [cls.single(p) if isinstance(p, Gaussians) else p for p in parts]
        names = ("means", "covs", "_chol", "_log_diag", "_log_norm")
        comps = Gaussians._trusted(
            *(np.concatenate([getattr(p.components, a) for p in parts]) for a in names)
        )
        counts = np.concatenate([p.counts for p in parts])
        offsets = np.zeros(counts.size + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        return cls._of(np.concatenate([p.weights for p in parts]), comps, offsets)

    @property
    def dim(self) -> int:
        return self.components.dim

    def __len__(self) -> int:
        return self.offsets.shape[0] - 1

    @property
    def counts(self) -> np.ndarray:
        """(m,) number of components of each member."""
        return np.diff(self.offsets)

    @property
    def owner(self) -> np.ndarray:
        """(C,) the member each component belongs to."""
        return np.repeat(np.arange(len(self)), self.counts)

    @property
    def is_single(self) -> bool:
        """True when every member has exactly one component (then of weight 1)."""
        return self.offsets[-1] == len(self)

    @property
    def means(self) -> np.ndarray:
        """(m, d) mixture means sum_c w_c m_c / sum_c w_c: each member's MMSE point estimate."""
        if self.is_single:
            return self.components.means
        w = self.weights
        starts = self.offsets[:-1]
        total = np.add.reduceat(w, starts)
        return np.add.reduceat(w[:, None] * self.components.means, starts, axis=0) / total[:, None]

    def moment_matched(self) -> Gaussians:
        """(m) Gaussians of each member's mean and covariance sum_c w_c (P_c + (m_c - mu)(m_c - mu)^T).

        One-component members give their own Gaussian back, bit for bit.
        """
        if self.is_single:
            return self.components
        mu = self.means
        owner = self.owner
        starts = self.offsets[:-1]
        w = self.weights / np.add.reduceat(self.weights, starts)[owner]
        diff = self.components.means - mu[owner]
        spread = self.components.covs + diff[:, :, None] * diff[:, None, :]
        covs = np.add.reduceat(w[:, None, None] * spread, starts, axis=0)
        covs = 0.5 * (covs + np.swapaxes(covs, 1, 2))
        single = self.counts == 1
        covs[single] = self.components.covs[starts[single]]
        mu[single] = self.components.means[starts[single]]
        return Gaussians._trusted(mu, covs)

    def logpdf(self, y: np.ndarray) -> np.ndarray:
        """log p_k(y_l) as an ``(m, n)`` array for ``y`` of shape (n, d) (segmented log-sum-exp)."""
        parts = self.components.logpdf(y)
        if self.is_single:
            return parts
        if parts.shape[1] == 0:
            return np.zeros((len(self), 0))
        return segment_logsumexp(parts + self._log_w[:, None], self.offsets)

    def subset(self, idx) -> GaussianMixtures:
        """Members ``idx`` (integer indices or a boolean mask) with their components; no re-factorisation."""
        idx = np.arange(len(self))[idx]
        counts = self.counts[idx]
        offsets = np.zeros(idx.size + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        comp = np.repeat(self.offsets[idx] - offsets[:-1], counts) + np.arange(offsets[-1])
        return GaussianMixtures._of(self.weights[comp], self.components.subset(comp), offsets)

    def map(self, fn) -> GaussianMixtures:
        """``fn(Gaussians) -> Gaussians`` applied to the components (a marginal, a covariance scale)."""
        return GaussianMixtures._of(self.weights, fn(self.components), self.offsets)


def _set_mixtures(g: GaussianMixtures, weights, components: Gaussians, offsets) -> None:
    object.__setattr__(g, "weights", weights)
    object.__setattr__(g, "components", components)
    object.__setattr__(g, "offsets", offsets)
    with np.errstate(divide="ignore"):
        object.__setattr__(g, "_log_w", np.log(weights))


def _mixture_offsets(value) -> np.ndarray:
    """(m + 1,) int64 offsets: 0 first, strictly increasing (no member without a component)."""
    arr = np.asarray(value)
    if arr.ndim != 1 or arr.size < 1 or (arr.size and not np.issubdtype(arr.dtype, np.integer)):
        raise ValueError(
            f"offsets: expected a 1-D integer array of shape (m + 1,), got shape {arr.shape} of {arr.dtype}"
        )
    arr = arr.astype(np.int64)
    if arr[0] != 0:
        raise ValueError(f"offsets: expected 0 first, got {int(arr[0])}")
    empty = np.flatnonzero(np.diff(arr) <= 0)
    if empty.size:
        k = int(empty[0])
        raise ValueError(
            f"offsets: expected strictly increasing values (every member has a component), "
            f"got offsets[{k}] = {int(arr[k])} and offsets[{k + 1}] = {int(arr[k + 1])} (member {k})"
        )
    return arr


def segment_logsumexp(a: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """log sum exp of the rows ``offsets[k]:offsets[k + 1]`` of ``a`` (C, n), for each k: (m, n).

    Every segment must be non-empty. A segment of one row is that row, bit
    for bit; an all ``-inf`` segment gives ``-inf``.
    """
    starts = offsets[:-1]
    counts = np.diff(offsets)
    top = np.maximum.reduceat(a, starts, axis=0)
    shift = np.where(np.isfinite(top), top, 0.0)
    owner = np.repeat(np.arange(counts.size), counts)
    with np.errstate(divide="ignore", under="ignore"):
        out = shift + np.log(np.add.reduceat(np.exp(a - shift[owner]), starts, axis=0))
    single = counts == 1
    out[single] = a[starts[single]]
    return out
