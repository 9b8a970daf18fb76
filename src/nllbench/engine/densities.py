"""Multi-object densities: PPP, multi-Bernoulli, PMBM (and its special cases), i.i.d. cluster.

All densities are frozen dataclasses of arrays with documented shapes,
validated once at construction. Single-object densities are stored as
*families* of k densities evaluated together (``logpdf(y) -> (k, n)``) so
that no Python object exists per Gaussian component.

Notation follows Pinto et al., "An Uncertainty-Aware Performance Measure for
Multi-Object Tracking", IEEE SPL 2021 (eqs. (2)-(6)).

Over 600 lines because the PMBM family's pooled form and its hypotheses view share the
PPP and multi-Bernoulli validation with the other families; a split into PPP/MB and PMBM
modules is the next step if it grows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
from scipy.spatial.distance import cdist
from scipy.special import gammaln, logsumexp

from nllbench.engine import validate as v
from nllbench.engine.gaussian_mixture import (  # noqa: F401 - the log-pdf re-exported for the NLL
    GaussianMixture,
    GaussianMixtures,
    Gaussians,
    batched_logpdf,
    gaussian_logpdf,
)
from nllbench.engine.iid_cluster import IIDCluster  # noqa: F401 - re-exported: one home for the densities

# ---------------------------------------------------------------------------
# single-object density families
# ---------------------------------------------------------------------------


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


SingleObjectDensities = Gaussians | GaussianMixtures | Laplaces
_SINGLE_OBJECT = (Gaussians, GaussianMixtures, Laplaces)


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


def box_volume(lows: np.ndarray, highs: np.ndarray) -> np.ndarray:
    """Volume of boxes [lows[b], highs[b]] (B, d), as a float (B,).

    The plain product of the sides where that is a normal float (bit for
    bit what the filters' clutter intensity kappa = rate / V has always
    used: exp(log V) can differ from it in the last bit); elsewhere, where a
    side or the product overflows or underflows, exp(:func:`log_box_volume`)
    (+inf only when V itself exceeds the float range).
    """
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        volume = np.prod(highs - lows, axis=1)
    off = ~(np.isfinite(volume) & (volume >= np.finfo(float).tiny))
    if np.any(off):
        with np.errstate(over="ignore", under="ignore"):
            volume[off] = np.exp(log_box_volume(lows[off], highs[off]))
    return volume


def trusted(cls, **fields):
    """An instance of the frozen dataclass ``cls`` with ``fields`` set as given, unchecked.

    The engine's route for densities derived from validated ones (marginals,
    scaled or tempered copies, a file that passed its schema check): the
    public constructors keep every check, and whoever calls this one vouches
    that the fields have the types, shapes and ranges the class documents.
    """
    out = object.__new__(cls)
    for name, value in fields.items():
        object.__setattr__(out, name, value)
    return out


# ---------------------------------------------------------------------------
# Poisson point process
# ---------------------------------------------------------------------------


@dataclass(frozen=True, init=False)
class PPP:
    """Poisson point process with intensity lambda(x) (paper eq. (3)).

    lambda(x) = sum_j weights[j] N(x; means[j], covs[j])
              + sum_b rates[b] / vol_b * 1[low_b <= x <= high_b]

    Built as ``PPP(weights, gaussians, rates, lows, highs, labels=None)``
    (the fields of the Gaussian part spelled out), from a mixture with
    :meth:`from_mixture`, or by :meth:`gaussian`, :meth:`uniform`, :meth:`empty`.

    Attributes
    ----------
    mixture : GaussianMixture with J components
        The Gaussian part: ``weights`` (J,) >= 0 (expected number of objects
        per component), ``gaussians`` (its J components) and optional
        ``labels`` (J,) int (e.g. a PHD filter's track labels; they do not
        affect the density), each also readable on the PPP itself.
    rates : (B,) float, >= 0
        Expected number of objects in each uniform box.
    lows, highs : (B, d) float
        Box corners, ``lows < highs``.
    """

    mixture: GaussianMixture
    rates: np.ndarray
    lows: np.ndarray
    highs: np.ndarray

    def __init__(self, weights, gaussians: Gaussians, rates, lows, highs, labels=None) -> None:
        _set_ppp(self, GaussianMixture.from_gaussians(weights, gaussians, labels), rates, lows, highs)

    @classmethod
    def from_mixture(cls, mixture: GaussianMixture, rates=(), lows=None, highs=None) -> PPP:
        """The PPP of Gaussian-mixture intensity ``mixture`` plus uniform boxes (none by default)."""
        if not isinstance(mixture, GaussianMixture):
            raise TypeError(f"mixture: expected GaussianMixture, got {type(mixture).__name__}")
        out = object.__new__(cls)
        _set_ppp(out, mixture, rates, lows, highs)
        return out

    @property
    def weights(self) -> np.ndarray:
        """(J,) weights of the Gaussian components."""
        return self.mixture.weights

    @property
    def gaussians(self) -> Gaussians:
        """The J Gaussian components (unweighted)."""
        return self.mixture.components

    @property
    def labels(self) -> np.ndarray | None:
        """(J,) int tags of the Gaussian components, or None."""
        return self.mixture.labels

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
        return cls.from_mixture(GaussianMixture.empty(d), rate_a, low_a[None, :], high_a[None, :])

    @classmethod
    def empty(cls, dim: int) -> PPP:
        """The PPP with zero intensity (it explains no object)."""
        return cls.from_mixture(GaussianMixture.empty(dim))

    def __add__(self, other: PPP) -> PPP:
        """Superposition: the intensities add."""
        if not isinstance(other, PPP):
            return NotImplemented
        if other.dim != self.dim:
            raise ValueError(f"other: expected dimension {self.dim}, got {other.dim}")
        # both were validated: their union needs no second check
        return trusted(
            PPP,
            mixture=GaussianMixture.concatenate([self.mixture, other.mixture]),
            rates=np.concatenate([self.rates, other.rates]),
            lows=np.concatenate([self.lows, other.lows]),
            highs=np.concatenate([self.highs, other.highs]),
        )

    @property
    def dim(self) -> int:
        return self.mixture.dim

    @cached_property
    def total_rate(self) -> float:
        """The integral of lambda over the whole space (expected number of objects), once per PPP."""
        # an overflow to +inf is the right value: exp(-Lambda) is then 0 and so is every likelihood
        with np.errstate(over="ignore"):
            return float(self.weights.sum() + self.rates.sum())

    @cached_property
    def _box_log_rates(self) -> np.ndarray:
        """(B,) log(rates[b] / vol_b) of the boxes (``-inf`` for a zero rate), once per PPP."""
        with np.errstate(divide="ignore"):
            return np.log(self.rates) - log_box_volume(self.lows, self.highs)

    def log_intensity(self, y: np.ndarray) -> np.ndarray:
        """log lambda(y_l) for y of shape (n, d); ``-inf`` where lambda is 0."""
        n = y.shape[0]
        if self.rates.size == 1 and not len(self.mixture):  # one box (a uniform PPP): the general
            # route's row, without stacking parts (0.0 added as it adds it, so -0.0 becomes 0.0)
            inside = np.all((y >= self.lows[0]) & (y <= self.highs[0]), axis=1)
            return np.where(inside, self._box_log_rates[0], -np.inf) + 0.0
        parts = []
        if len(self.mixture):
            parts.append(self.mixture.log_weighted(y))
        if self.rates.size:
            inside = np.all(
                (y[None, :, :] >= self.lows[:, None, :]) & (y[None, :, :] <= self.highs[:, None, :]), axis=2
            )
            parts.append(np.where(inside, self._box_log_rates[:, None], -np.inf))
        if not parts:
            return np.full(n, -np.inf)
        stacked = np.concatenate(parts, axis=0)
        if stacked.shape[0] == 0 or n == 0:
            return np.full(n, -np.inf)
        if stacked.shape[0] == 1:
            # one part (a single box, e.g. a uniform PPP): scipy's logsumexp of one row
            # is 0 + 0 + a (so -0.0 becomes 0.0, and +-inf, nan pass), at a tenth of its cost
            return stacked[0] + 0.0
        with np.errstate(divide="ignore"):
            return logsumexp(stacked, axis=0)


def _set_ppp(ppp: PPP, mixture: GaussianMixture, rates, lows, highs) -> None:
    """Check the boxes (``rates`` (B,), ``lows``, ``highs`` (B, d)) of a validated mixture; fill ``ppp``."""
    d = mixture.dim
    rates = v.nonnegative(rates, "rate")
    B = rates.shape[0]
    lows = v.points(lows, "low", B, d) if B else np.empty((0, d))
    highs = v.points(highs, "high", B, d) if B else np.empty((0, d))
    if np.any(highs <= lows):
        raise ValueError(
            f"high: expected every upper corner above the lower one, got low={lows}, high={highs}"
        )
    object.__setattr__(ppp, "mixture", mixture)
    object.__setattr__(ppp, "rates", rates)
    object.__setattr__(ppp, "lows", lows)
    object.__setattr__(ppp, "highs", highs)


# ---------------------------------------------------------------------------
# multi-Bernoulli
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class MultiBernoulli:
    """Multi-Bernoulli density: m independent Bernoullis (paper eq. (5)).

    Bernoulli k has existence probability ``r[k]`` and single-object density
    ``densities`` member k. ``r = 0`` (never exists) and ``r = 1`` (surely
    exists) are allowed and handled exactly. A Bernoulli's density may be a
    Gaussian mixture (:class:`GaussianMixtures`, as labelled multi-Bernoulli,
    GLMB and many PMBM implementations keep it); its point estimate
    (:attr:`means`) is then the mixture mean.

    Attributes
    ----------
    r : (m,) float in [0, 1]
    densities : Gaussians, GaussianMixtures or Laplaces with m members
    labels : (m,) int or None
        Optional track labels (a stable id per Bernoulli); they do not affect
        the density.
    """

    r: np.ndarray
    densities: SingleObjectDensities
    labels: np.ndarray | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.densities, _SINGLE_OBJECT):
            raise TypeError(
                "densities: expected Gaussians, GaussianMixtures or Laplaces, "
                f"got {type(self.densities).__name__}"
            )
        r = v.probabilities(self.r, "r", len(self.densities))
        object.__setattr__(self, "r", r)
        object.__setattr__(self, "labels", v.labels(self.labels, len(self.densities)))

    @classmethod
    def gaussian(cls, r, means, covs, labels=None) -> MultiBernoulli:
        """MB with Gaussian densities; shapes (m,), (m, d), (m, d, d)."""
        return cls(r, Gaussians(means, covs), labels)

    @classmethod
    def gaussian_mixture(cls, r, weights, means, covs, offsets, labels=None) -> MultiBernoulli:
        """MB whose Bernoulli k has the Gaussian mixture of components ``offsets[k]:offsets[k + 1]``.

        Shapes (m,), (C,), (C, d), (C, d, d), (m + 1,); see :class:`GaussianMixtures`.
        """
        return cls(r, GaussianMixtures(weights, means, covs, offsets), labels)

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
        return trusted(MultiBernoulli, r=self.r[idx], densities=self.densities.subset(idx), labels=lab)

    @property
    def means(self) -> np.ndarray:
        """(m, d) point estimates: Gaussian means, mixture means (the MMSE point) or Laplace centres."""
        return self.densities.centers if isinstance(self.densities, Laplaces) else self.densities.means


# ---------------------------------------------------------------------------
# PMBM and its special cases
# ---------------------------------------------------------------------------


@dataclass(frozen=True, init=False, eq=False)
class PMBM:
    """Poisson multi-Bernoulli mixture (paper eq. (2)-(4)).

    ``ppp=None`` gives an MBM; one hypothesis gives a PMB; an MB with no PPP
    (one hypothesis, ``ppp=None``) also stands for any set of predictions
    with existence probabilities and state uncertainties. An MBM01 is an
    MBM whose existence probabilities are all 0 or 1.

    Built as ``PMBM(ppp, hypotheses, weights)`` (each hypothesis a
    MultiBernoulli with its own arrays, as filters build them) or as
    ``PMBM.pooled(ppp, pool, members, weights)``: one MultiBernoulli ``pool``
    shared by the hypotheses, hypothesis h being its members ``members[h]``,
    each distinct Bernoulli held once (as posterior files store them and
    :func:`nllbench.store.read_posterior` returns them). The NLL, the
    transforms, the estimators and the calibration counts read pool and
    members without copying a Bernoulli.

    Attributes
    ----------
    ppp : PPP or None
        Undetected objects; None means zero intensity.
    weights : (H,) float, >= 0, summing to 1
    hypotheses : tuple of MultiBernoulli, length H >= 1
        Global hypotheses, of any sizes (pooled: built on each access, so
        prefer :meth:`hypothesis` or :meth:`existence` for one).
    pool : MultiBernoulli
        The shared Bernoullis (unpooled: all hypotheses', concatenated on access).
    members : tuple of (k_h,) int64
        Hypothesis h's Bernoullis, as indices into ``pool``.
    """

    ppp: PPP | None
    weights: np.ndarray

    def __init__(self, ppp: PPP | None, hypotheses, weights) -> None:
        hyps = (hypotheses,) if isinstance(hypotheses, MultiBernoulli) else tuple(hypotheses)
        if len(hyps) == 0:
            raise ValueError("hypotheses: expected at least one MultiBernoulli, got none")
        for h, mb in enumerate(hyps):
            if not isinstance(mb, MultiBernoulli):
                raise TypeError(f"hypotheses[{h}]: expected MultiBernoulli, got {type(mb).__name__}")
        _check_ppp_dims(ppp, {mb.dim for mb in hyps}, "hypotheses")
        weights = v.normalised(weights, "weights", len(hyps))
        _set_pmbm(self, ppp, weights, hyps, None, None, None)

    @classmethod
    def pooled(cls, ppp: PPP | None, pool: MultiBernoulli, members, weights) -> PMBM:
        """The PMBM whose hypothesis h holds the Bernoullis ``members[h]`` of ``pool``.

        Parameters
        ----------
        ppp : PPP or None
        pool : MultiBernoulli with P Bernoullis
            Shared by the hypotheses: each is stored once however many
            hypotheses hold it. Its labels, if any, label the members; a
            hypothesis whose members all have label -1 has none.
        members : sequence of H >= 1 one-dimensional integer arrays
            Indices into ``pool`` (0..P-1); an index may appear in several hypotheses.
        weights : (H,) float, >= 0, summing to 1
        """
        if not isinstance(pool, MultiBernoulli):
            raise TypeError(f"pool: expected MultiBernoulli, got {type(pool).__name__}")
        parts = [np.asarray(m) for m in members]
        if not parts:
            raise ValueError("members: expected at least one hypothesis, got none")
        for h, idx in enumerate(parts):
            if idx.ndim != 1 or (idx.size and not np.issubdtype(idx.dtype, np.integer)):
                raise ValueError(
                    f"members[{h}]: expected a 1-D integer array, got shape {idx.shape} of {idx.dtype}"
                )
        starts = _starts_of([idx.size for idx in parts])
        index = np.concatenate([idx.astype(np.int64, copy=False) for idx in parts])
        bad = np.flatnonzero((index < 0) | (index >= len(pool)))
        if bad.size:
            h = int(np.searchsorted(starts, bad[0], side="right")) - 1
            raise ValueError(
                f"members[{h}]: expected indices into the pool, 0..{len(pool) - 1}, got {int(index[bad[0]])}"
            )
        _check_ppp_dims(ppp, {pool.dim}, "pool")
        return cls._of(
            ppp, v.normalised(weights, "weights", len(parts)), pool=pool, index=index, starts=starts
        )

    @classmethod
    def _of(cls, ppp, weights, given=None, pool=None, index=None, starts=None) -> PMBM:
        """Trusted: hypotheses ``given``, or ``pool`` with ``index`` (M,) and ``starts`` (H + 1,)."""
        out = object.__new__(cls)
        _set_pmbm(out, ppp, weights, given, pool, index, starts)
        return out

    @classmethod
    def pmb(cls, ppp: PPP | None, mb: MultiBernoulli) -> PMBM:
        return cls(ppp, (mb,), np.ones(1))

    @property
    def is_pooled(self) -> bool:
        """True for a PMBM built by :meth:`pooled` (or derived from one)."""
        return self._given is None

    @property
    def n_hypotheses(self) -> int:
        return self.weights.shape[0]

    @property
    def hypotheses(self) -> tuple[MultiBernoulli, ...]:
        """The H global hypotheses (a pooled PMBM builds them on each access: copies)."""
        if self._given is not None:
            return self._given
        return tuple(self.hypothesis(h) for h in range(self.n_hypotheses))

    def hypothesis(self, h: int) -> MultiBernoulli:
        """Global hypothesis ``h`` (of a pooled PMBM: its members, copied out of the pool)."""
        h = range(self.n_hypotheses)[h]
        if self._given is not None:
            return self._given[h]
        idx = self._index[self._starts[h] : self._starts[h + 1]]
        labels = None if self._pool.labels is None else self._pool.labels[idx]
        if labels is not None and labels.size and np.all(labels == -1):
            labels = None
        return trusted(
            MultiBernoulli, r=self._pool.r[idx], densities=self._pool.densities.subset(idx), labels=labels
        )

    def existence(self, h: int) -> np.ndarray:
        """(k_h,) existence probabilities of hypothesis ``h``'s Bernoullis."""
        h = range(self.n_hypotheses)[h]
        if self._given is not None:
            return self._given[h].r
        return self._pool.r[self._index[self._starts[h] : self._starts[h + 1]]]

    @property
    def pool(self) -> MultiBernoulli:
        """The shared Bernoullis (built from hypotheses: all of them concatenated, on each access)."""
        return self._pool if self._pool is not None else _concatenated(self._given)

    @property
    def members(self) -> tuple[np.ndarray, ...]:
        """Each hypothesis' Bernoullis as (k_h,) int64 indices into :attr:`pool` (views)."""
        index, starts = self._index, self._starts
        if self._given is not None:
            starts = _starts_of([len(mb) for mb in self._given])
            index = np.arange(starts[-1])
        return tuple(index[a:b] for a, b in zip(starts[:-1], starts[1:], strict=True))

    def _table(self, hyps: np.ndarray) -> tuple[list, np.ndarray, np.ndarray, np.ndarray]:
        """``(families, r, index, starts)``: rows = the members of ``families`` in turn, with existence
        ``r``; hypothesis ``hyps[i]`` holds rows ``index[starts[i]:starts[i + 1]]`` (pooled: the pool)."""
        hyps = np.asarray(hyps, dtype=np.int64)
        if self._given is not None:
            mbs = [self._given[h] for h in hyps]
            starts = _starts_of([len(mb) for mb in mbs])
            r = np.concatenate([mb.r for mb in mbs]) if mbs else np.empty(0)
            return [mb.densities for mb in mbs], r, np.arange(starts[-1]), starts
        lo, hi = self._starts[hyps], self._starts[hyps + 1]
        if lo.size == self.n_hypotheses and np.array_equal(hyps, np.arange(lo.size)):
            index, starts = self._index, self._starts
        else:
            starts = _starts_of(hi - lo)
            parts = [self._index[a:b] for a, b in zip(lo, hi, strict=True)]
            index = np.concatenate(parts) if parts else np.empty(0, dtype=np.int64)
        return [self._pool.densities], self._pool.r, index, starts

    @property
    def dim(self) -> int:
        return self._given[0].dim if self._given is not None else self._pool.dim

    @property
    def family(self) -> str:
        """'PMB', 'PMBM', 'MB', 'MBM' or 'MBM01' (MBM with every r in {0, 1})."""
        single = self.n_hypotheses == 1
        if self.ppp is not None:
            return "PMB" if single else "PMBM"
        if single:
            return "MB"
        if self._given is not None:
            zero_one = all(np.all((mb.r == 0) | (mb.r == 1)) for mb in self._given)
        else:
            r = self._pool.r[self._index]
            zero_one = bool(np.all((r == 0) | (r == 1)))
        return "MBM01" if zero_one else "MBM"


def _check_ppp_dims(ppp, dims: set, name: str) -> None:
    """``ppp`` is a PPP or None, of the one state dimension in ``dims`` (the Bernoullis')."""
    if ppp is not None and not isinstance(ppp, PPP):
        raise TypeError(f"ppp: expected PPP or None, got {type(ppp).__name__}")
    dims = dims | ({ppp.dim} if ppp is not None else set())
    if len(dims) != 1:
        raise ValueError(
            f"{name}: expected one state dimension for the PPP and every hypothesis, got {sorted(dims)}"
        )


def _set_pmbm(pmbm: PMBM, ppp, weights, given, pool, index, starts) -> None:
    """Fill a PMBM: hypotheses ``given`` as built, or ``pool`` with ``index`` (M,) and ``starts`` (H + 1,)."""
    names = ("ppp", "weights", "_given", "_pool", "_index", "_starts")
    for name, value in zip(names, (ppp, weights, given, pool, index, starts), strict=True):
        object.__setattr__(pmbm, name, value)


def _starts_of(sizes) -> np.ndarray:
    """(H + 1,) int64 offsets of consecutive blocks of ``sizes`` (H,)."""
    starts = np.zeros(len(sizes) + 1, dtype=np.int64)
    starts[1:] = np.cumsum(sizes)
    return starts


def _concatenated(hyps: tuple[MultiBernoulli, ...]) -> MultiBernoulli:
    """All Bernoullis of ``hyps`` in turn, as one MultiBernoulli (labels -1 where a hypothesis has none)."""
    full = [mb for mb in hyps if len(mb)] or [hyps[0]]
    kinds = {type(mb.densities) for mb in full}
    if kinds == {Gaussians, GaussianMixtures} or kinds == {GaussianMixtures}:
        dens = GaussianMixtures.concatenate([mb.densities for mb in full])
        kinds = {GaussianMixtures}
    if len(kinds) != 1:
        raise TypeError(
            f"hypotheses: expected one single-object family to pool, got {sorted(k.__name__ for k in kinds)}"
        )
    if kinds == {GaussianMixtures}:
        pass  # concatenated above (Gaussian members as one-component mixtures)
    elif isinstance(full[0].densities, Gaussians):
        names = ("means", "covs", "_chol", "_log_diag", "_log_norm")
        dens = Gaussians._trusted(*(np.concatenate([getattr(mb.densities, a) for mb in full]) for a in names))
    else:
        dens = trusted(
            Laplaces,
            centers=np.concatenate([mb.densities.centers for mb in full]),
            scales=np.concatenate([mb.densities.scales for mb in full]),
        )
    labels = None
    if any(mb.labels is not None for mb in full):
        labels = np.concatenate([mb.labels if mb.labels is not None else np.full(len(mb), -1) for mb in full])
    return trusted(MultiBernoulli, r=np.concatenate([mb.r for mb in full]), densities=dens, labels=labels)


def as_pmbm(density):
    """``density`` itself, or a MultiBernoulli as the one-hypothesis MBM it stands for.

    Every multi-Bernoulli family is computed as a PMBM (paper eq. (4) with
    zero Poisson intensity and one global hypothesis of weight 1).
    """
    if isinstance(density, MultiBernoulli):
        return PMBM.pmb(None, density)
    return density


def laplace_pmb_unchecked(ppp: PPP | None, r: np.ndarray, centers: np.ndarray, scales: np.ndarray) -> PMBM:
    """The PMB of a PPP and Laplace Bernoullis (existence ``r`` (m,), ``centers`` (m, d), ``scales``
    (m,)) on arrays the caller has validated, built without checks or copies.

    For a hot path that builds many such densities from inputs it checked
    once (Theorem 1's PMB at every step); the caller vouches for what
    :class:`Laplaces`, :class:`MultiBernoulli` and :func:`PMB` check (finite
    centres, r in [0, 1], positive scales, the PPP's dimension d).
    """
    laplaces = trusted(Laplaces, centers=centers, scales=scales)
    mb = trusted(MultiBernoulli, r=r, densities=laplaces, labels=None)
    return PMBM._of(ppp, np.ones(1), (mb,))


def MBM(hypotheses, weights) -> PMBM:  # noqa: N802 - a density name
    """Multi-Bernoulli mixture: a PMBM with zero Poisson intensity."""
    return PMBM(None, hypotheses, weights)


def PMB(ppp: PPP | None, mb: MultiBernoulli) -> PMBM:  # noqa: N802 - a density name
    """Poisson multi-Bernoulli: a PMBM with one hypothesis."""
    return PMBM.pmb(ppp, mb)


Density = PPP | PMBM | MultiBernoulli | IIDCluster
