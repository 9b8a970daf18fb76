"""Transforms of multi-object densities: marginals and uncertainty-calibration probes.

* :func:`marginal` keeps some state components (e.g. position), so that the
  NLL is comparable with position-based measures such as GOSPA.
* :func:`scale_covariances` and :func:`temper_existence` change a posterior's
  *uncertainty* but not its point estimates: the NLL moves while GOSPA, OSPA,
  MOTA and MOTP cannot (the paper's argument, made measurable).

All functions are pure: they return new densities, built without
re-validation (the input was validated when it was constructed, and each
transform keeps what was checked).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from nllbench.engine.densities import PMBM, PPP, IIDCluster, MultiBernoulli, trusted
from nllbench.engine.gaussian_mixture import GaussianMixture, GaussianMixtures, Gaussians

POSITION = (0, 1)


def _map(density, fn, box_fn=None):
    """Apply ``fn(Gaussians) -> Gaussians`` to every Gaussian family of ``density``
    and ``box_fn(lows, highs) -> (lows, highs)`` to every uniform PPP box.

    A Gaussian-mixture Bernoulli density has ``fn`` applied to its
    components (weights kept): the marginal of a mixture is the mixture of
    the components' marginals, and scaling every component's covariance is
    the mixture's covariance probe.

    The result is built through the densities' private trusted constructor:
    ``density`` was validated when it was built, and ``fn``/``box_fn`` keep
    what was checked (finite values, symmetric positive-definite covariances,
    lows < highs), so nothing is checked or factorised twice.
    """
    if isinstance(density, PPP):
        lows, highs = (density.lows, density.highs) if box_fn is None else box_fn(density.lows, density.highs)
        return trusted(
            PPP, mixture=_map_mixture(density.mixture, fn), rates=density.rates, lows=lows, highs=highs
        )
    if isinstance(density, IIDCluster):
        spatial = _map_mixture(density.spatial, fn)
        return trusted(IIDCluster, cardinality=density.cardinality, spatial=spatial)
    if isinstance(density, MultiBernoulli):
        dens = density.densities
        if isinstance(dens, GaussianMixtures):
            return trusted(MultiBernoulli, r=density.r, densities=dens.map(fn), labels=density.labels)
        if not isinstance(dens, Gaussians):
            raise TypeError(f"density: expected Gaussian Bernoulli densities, got {type(dens).__name__}")
        return trusted(MultiBernoulli, r=density.r, densities=fn(dens), labels=density.labels)
    if isinstance(density, PMBM):
        ppp = None if density.ppp is None else _map(density.ppp, fn, box_fn)
        if density.is_pooled:  # the shared Bernoullis once; the members stay
            return _with_bernoullis(density, ppp, _map(density.pool, fn))
        return PMBM._of(ppp, density.weights, _map_hypotheses(density.hypotheses, fn))
    raise TypeError(
        f"density: expected PPP, IIDCluster, MultiBernoulli or PMBM, got {type(density).__name__}"
    )


def _with_bernoullis(density: PMBM, ppp, pool: MultiBernoulli) -> PMBM:
    """Pooled ``density`` with ``ppp`` and ``pool`` (a transform of its pool, same size); members kept."""
    return PMBM._of(ppp, density.weights, pool=pool, index=density._index, starts=density._starts)


def _map_mixture(mixture: GaussianMixture, fn) -> GaussianMixture:
    """``mixture`` with ``fn`` applied to its components; weights and labels kept."""
    return GaussianMixture._of_components(mixture.weights, fn(mixture.components), mixture.labels)


def _map_hypotheses(hypotheses: tuple, fn) -> tuple:
    """``fn`` applied to the Gaussians of all hypotheses at once, then sliced back (views, no copies)."""
    if not all(isinstance(mb.densities, Gaussians) for mb in hypotheses):
        return tuple(_map(mb, fn) for mb in hypotheses)
    fields = ("means", "covs", "_chol", "_log_diag", "_log_norm")
    g = fn(
        Gaussians._trusted(*(np.concatenate([getattr(mb.densities, a) for mb in hypotheses]) for a in fields))
    )
    arrays = [getattr(g, a) for a in fields]
    out = []
    start = 0
    for mb in hypotheses:
        stop = start + mb.r.shape[0]
        part = Gaussians._trusted(*(a[start:stop] for a in arrays))
        out.append(trusted(MultiBernoulli, r=mb.r, densities=part, labels=mb.labels))
        start = stop
    return tuple(out)


def _marginal_gaussians(g: Gaussians, idx: np.ndarray) -> Gaussians:
    """Mean entries ``idx`` and the covariance block ``idx x idx`` of every member.

    For leading components (0, ..., p - 1) the Cholesky factor of the block is
    the leading block of the factor, bit for bit (column j of the
    factorisation only uses columns < j), so it is reused.
    """
    means = np.ascontiguousarray(g.means[:, idx])
    covs = np.ascontiguousarray(g.covs[:, idx[:, None], idx[None, :]])
    p = idx.size
    if np.array_equal(idx, np.arange(p)):
        chol = np.ascontiguousarray(g._chol[:, :p, :p])
        return Gaussians._trusted(means, covs, chol, np.ascontiguousarray(g._log_diag[:, :p]))
    return Gaussians._trusted(means, covs)


def _gaussian(density) -> bool:
    """Whether every single-object density of ``density`` is Gaussian (one that :func:`_map` maps)."""
    if isinstance(density, (PPP, IIDCluster)):
        return True
    if isinstance(density, MultiBernoulli):
        return isinstance(density.densities, (Gaussians, GaussianMixtures))
    if isinstance(density, PMBM):
        if density.is_pooled:
            return _gaussian(density.pool)
        return all(_gaussian(mb) for mb in density.hypotheses)
    return False


def marginal(density, dims: Sequence[int] = POSITION):
    """The density of the state components ``dims`` (default: position x, y).

    Gaussian marginals keep the selected mean entries and covariance block;
    a uniform box keeps its rate and the selected sides. Existence
    probabilities, weights and cardinalities are unchanged.
    """
    idx = np.asarray(dims, dtype=int)
    if idx.ndim != 1 or idx.size == 0 or len(set(idx.tolist())) != idx.size:
        raise ValueError(f"dims: expected distinct state indices, got {dims!r}")
    if np.any(idx < 0) or np.any(idx >= density.dim):
        raise ValueError(f"dims: expected indices in 0..{density.dim - 1}, got {dims!r}")
    if idx.size == density.dim and np.array_equal(idx, np.arange(idx.size)) and _gaussian(density):
        return density  # every component in order: the marginal is the density, array for array
    return _map(
        density,
        lambda g: _marginal_gaussians(g, idx),
        lambda lo, hi: (np.ascontiguousarray(lo[:, idx]), np.ascontiguousarray(hi[:, idx])),
    )


def scale_covariances(density, s: float):
    """Multiply every covariance by ``s`` > 0 (means, weights and r unchanged)."""
    s = float(s)
    if not np.isfinite(s) or s <= 0:
        raise ValueError(f"s: expected a positive covariance scale, got {s!r}")
    # s P is symmetric positive definite whenever P is: no re-validation, a new factor
    return _map(density, lambda g: Gaussians._trusted(g.means, s * g.covs))


def temper_existence(density, tau: float, about: float = 0.4):
    """Sharpen (tau > 1) or flatten (tau < 1) existence probabilities about ``about``.

    logit(r') - logit(about) = tau (logit(r) - logit(about)), so r = 0 and
    r = 1 stay, and no r crosses ``about``: with ``about`` equal to the
    estimator's existence threshold (0.4) the point estimates do not change.
    Only MB / PMBM densities have existence probabilities; others are returned as they are.
    """
    tau = float(tau)
    if not np.isfinite(tau) or tau <= 0:
        raise ValueError(f"tau: expected a positive tempering exponent, got {tau!r}")
    if not 0 < about < 1:
        raise ValueError(f"about: expected a probability strictly between 0 and 1, got {about!r}")
    if isinstance(density, MultiBernoulli):
        # _temper keeps r in [0, 1]: the tempered copy needs no re-validation
        r = _temper(density.r, tau, about)
        return trusted(MultiBernoulli, r=r, densities=density.densities, labels=density.labels)
    if isinstance(density, PMBM):
        if density.is_pooled:
            return _with_bernoullis(density, density.ppp, temper_existence(density.pool, tau, about))
        hyps = tuple(temper_existence(mb, tau, about) for mb in density.hypotheses)
        return PMBM._of(density.ppp, density.weights, hyps)
    if isinstance(density, (PPP, IIDCluster)):
        return density
    raise TypeError(
        f"density: expected PPP, IIDCluster, MultiBernoulli or PMBM, got {type(density).__name__}"
    )


def temper_probabilities(r: np.ndarray, tau: float, about: float = 0.4) -> np.ndarray:
    """Existence probabilities ``r`` (any shape) tempered as :func:`temper_existence` tempers a density's.

    ``logit(r') - logit(about) = tau (logit(r) - logit(about))``; r = 0 and r = 1 stay.
    """
    return _temper(np.asarray(r, dtype=float), float(tau), float(about))


def _temper(r: np.ndarray, tau: float, about: float) -> np.ndarray:
    inner = (r > 0) & (r < 1)
    out = r.copy()
    x = r[inner]
    logit = np.log(x) - np.log1p(-x)
    c = np.log(about) - np.log1p(-about)
    z = c + tau * (logit - c)
    out[inner] = 1.0 / (1.0 + np.exp(-z))
    # keep strictly inside (0, 1): rounding must not turn a possible object into a sure one
    out[inner] = np.clip(out[inner], np.nextafter(0.0, 1.0), np.nextafter(1.0, 0.0))
    return out


def shift_means(density, delta):
    """Add ``delta`` (d,) to every Gaussian mean (covariances, weights and r unchanged).

    A uniform PPP box is shifted with it. This is the audit's "means shifted"
    probe (``docs/audit.md``): the shape of the density is kept, its location moved.
    """
    shift = np.asarray(delta, dtype=float)
    if shift.shape != (density.dim,) or not np.all(np.isfinite(shift)):
        raise ValueError(f"delta: expected {density.dim} finite numbers, got {delta!r}")
    # a translated Gaussian keeps its covariance and factor: no re-validation
    return _map(
        density,
        lambda g: Gaussians._trusted(g.means + shift, g.covs, g._chol, g._log_diag, g._log_norm),
        lambda lo, hi: (lo + shift, hi + shift),
    )


def _hypotheses(density) -> tuple[PPP | None, tuple, np.ndarray]:
    """(ppp, hypotheses, weights) of an MB (one hypothesis, no PPP) or PMBM of Gaussian Bernoullis."""
    if isinstance(density, MultiBernoulli):
        return None, (density,), np.ones(1)
    if isinstance(density, PMBM):
        return density.ppp, tuple(density.hypothesis(h) for h in range(density.n_hypotheses)), density.weights
    raise TypeError(f"density: expected MultiBernoulli or PMBM, got {type(density).__name__}")


def _rebuilt(density, ppp, hypotheses: tuple, weights: np.ndarray):
    """``density``'s family (MB or PMBM) from hypotheses (validated: new Bernoullis enter)."""
    if isinstance(density, MultiBernoulli):
        return hypotheses[0]
    return PMBM(ppp, hypotheses, weights)


def _gaussian_mb(mb: MultiBernoulli) -> Gaussians:
    if not isinstance(mb.densities, Gaussians):
        raise TypeError(f"density: expected Gaussian Bernoulli densities, got {type(mb.densities).__name__}")
    return mb.densities


def add_bernoulli(density, r: float, mean, cov, label: int | None = None):
    """``density`` with one more Bernoulli (r, N(mean, cov)) in every global hypothesis.

    Parameters
    ----------
    density : MultiBernoulli or PMBM with Gaussian Bernoullis
    r : float in (0, 1]
    mean : (d,) array_like
    cov : (d, d) array_like, symmetric positive definite
    label : int, optional
        The new Bernoulli's label where the density's Bernoullis carry labels
        (default: one more than the largest).
    """
    r = float(r)
    if not 0 < r <= 1:
        raise ValueError(f"r: expected an existence probability in (0, 1], got {r!r}")
    ppp, hyps, weights = _hypotheses(density)
    new = Gaussians(np.asarray(mean, dtype=float)[None], np.asarray(cov, dtype=float)[None])
    if new.dim != density.dim:
        raise ValueError(f"mean: expected dimension {density.dim} like the density, got {new.dim}")
    labelled = all(mb.labels is not None for mb in hyps)
    if labelled and label is None:
        label = 1 + max((int(mb.labels.max()) for mb in hyps if len(mb)), default=-1)
    out = []
    for mb in hyps:
        g = _gaussian_mb(mb)
        labels = np.append(mb.labels, label) if labelled else None
        out.append(
            MultiBernoulli(
                np.append(mb.r, r),
                Gaussians(np.concatenate([g.means, new.means]), np.concatenate([g.covs, new.covs])),
                labels,
            )
        )
    return _rebuilt(density, ppp, tuple(out), weights)


def drop_bernoulli(density):
    """``density`` without the least likely possible Bernoulli (smallest r > 0) of every global hypothesis.

    Bernoullis with r = 0 (an MBM's placeholders) are passed over: dropping
    one changes nothing. A hypothesis without a possible Bernoulli stays as
    it is. Weights, the PPP and the other Bernoullis are unchanged.
    """
    ppp, hyps, weights = _hypotheses(density)
    out = []
    for mb in hyps:
        possible = np.flatnonzero(mb.r > 0)
        if possible.size == 0:
            out.append(mb)
            continue
        keep = np.delete(np.arange(len(mb)), int(possible[np.argmin(mb.r[possible])]))
        out.append(mb.subset(keep))
    return _rebuilt(density, ppp, tuple(out), weights)
