"""Exact samplers of every multi-object density family, and a compact store of sampled sets.

Each sampler draws ``n`` independent finite sets from the density, exactly
(no truncation, no approximation), and returns them as one
:class:`SetSamples`: all points in one ``(T, d)`` array and the ``n + 1``
offsets where each set starts.

* PPP (paper eq. (3)): the number of points is Poisson(Lambda) and, given
  it, the points are i.i.d. from lambda / Lambda (Daley and Vere-Jones, *An
  Introduction to the Theory of Point Processes*, vol. I, 2nd ed., 2003,
  section 2.4); a point's component (Gaussian j or box b) is drawn with
  probability weight / Lambda, which is the same process as independent
  Poisson counts per component (Poisson splitting).
* i.i.d. cluster (eq. (1)): the cardinality from its pmf, then i.i.d.
  points from the spatial mixture.
* multi-Bernoulli (eq. (5)): Bernoulli k exists with probability r_k,
  independently, and then has one point from p_k. A Gaussian draw is
  ``m + L z`` with ``L`` the component's Cholesky factor; a Gaussian-mixture
  draw picks component c with probability w_c, then draws from it (the
  standard normals z are drawn before the components, so one-component
  mixtures draw exactly the points of their Gaussians); a Laplace draw
  exp(-||x - c|| / s) is ``c + rho u`` with ``u`` uniform on the unit sphere
  and the radius ``rho ~ Gamma(d, s)`` (the radial density of the Laplace
  family is proportional to rho^(d-1) exp(-rho / s)).
* PMBM, PMB, MBM (eq. (2)-(4)): a global hypothesis h with probability w_h,
  then a set from its MB, united with an independent set from the PPP.

The order of the points within one set carries no meaning.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from nllbench.engine import validate as v
from nllbench.engine.densities import (
    PMBM,
    PPP,
    GaussianMixtures,
    Gaussians,
    IIDCluster,
    Laplaces,
    MultiBernoulli,
    as_pmbm,
)

#: The most points one call may draw in expectation (about 3.2 GB of float64 in 4-D).
MAX_EXPECTED_POINTS = 1e8


@dataclass(frozen=True)
class SetSamples:
    """n finite sets of points in R^d, stored flat.

    Set i is ``points[offsets[i]:offsets[i + 1]]`` (``samples[i]``).

    Attributes
    ----------
    offsets : (n + 1,) int64
        Non-decreasing, ``offsets[0] == 0`` and ``offsets[-1] == T``.
    points : (T, d) float64, finite
    """

    offsets: np.ndarray
    points: np.ndarray

    def __post_init__(self) -> None:
        points = v.points(self.points, "points")
        offsets = np.asarray(self.offsets)
        if offsets.ndim != 1 or offsets.size < 1 or not np.issubdtype(offsets.dtype, np.integer):
            raise ValueError(
                f"offsets: expected a 1-D integer array of shape (n + 1,), got shape {offsets.shape} "
                f"of {offsets.dtype}"
            )
        offsets = offsets.astype(np.int64)
        if offsets[0] != 0 or offsets[-1] != points.shape[0] or np.any(np.diff(offsets) < 0):
            raise ValueError(
                f"offsets: expected non-decreasing values from 0 to {points.shape[0]} (the number of "
                f"points), got {offsets[0]} ... {offsets[-1]}"
                + (" with a decrease" if np.any(np.diff(offsets) < 0) else "")
            )
        object.__setattr__(self, "offsets", offsets)
        object.__setattr__(self, "points", points)

    @classmethod
    def _trusted(cls, offsets: np.ndarray, points: np.ndarray) -> SetSamples:
        """No checks: int64 ``offsets`` and float64 ``points`` as the class documents them."""
        out = object.__new__(cls)
        object.__setattr__(out, "offsets", offsets)
        object.__setattr__(out, "points", points)
        return out

    @classmethod
    def from_sets(cls, sets, dim: int | None = None, name: str = "samples") -> SetSamples:
        """The sets of a sequence of ``(k_i, d)`` arrays (an empty set may be any empty array).

        ``dim`` is the state dimension; by default the second axis of the
        first 2-D array with at least one column. Raises ``ValueError``
        naming ``name[i]`` for a set of the wrong shape or with a
        non-finite value.
        """
        if isinstance(sets, SetSamples):
            if dim is not None and sets.dim != dim:
                raise ValueError(f"{name}: expected dimension {dim}, got {sets.dim}")
            return sets
        if isinstance(sets, np.ndarray) and sets.dtype != object and sets.ndim != 3:
            raise ValueError(
                f"{name}: expected a sequence of (k_i, d) arrays (or a 3-D array of equal-size sets), "
                f"got an array of shape {sets.shape}"
            )
        try:
            items = [v.as_float_array(s, f"{name}[{i}]") for i, s in enumerate(sets)]
        except TypeError as exc:
            if "expected an array" in str(exc):
                raise
            raise TypeError(
                f"{name}: expected a sequence of (k_i, d) arrays, got {type(sets).__name__}"
            ) from exc
        if dim is None:
            dim = next((a.shape[1] for a in items if a.ndim == 2 and a.shape[1] > 0), None)
            if dim is None:
                raise ValueError(f"{name}: cannot tell the state dimension: every set is empty")
        parts = []
        for i, a in enumerate(items):
            if a.size == 0 and a.ndim <= 2 and (a.ndim < 2 or a.shape[1] in (0, dim)):
                parts.append(np.empty((0, dim)))
                continue
            parts.append(v.points(a, f"{name}[{i}]", dim=dim))
        counts = np.array([p.shape[0] for p in parts], dtype=np.int64)
        offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        points = np.concatenate(parts) if parts else np.empty((0, dim))
        return cls._trusted(offsets, np.ascontiguousarray(points, dtype=np.float64))

    @property
    def dim(self) -> int:
        return self.points.shape[1]

    @property
    def counts(self) -> np.ndarray:
        """(n,) int64: the number of points of each set."""
        return np.diff(self.offsets)

    def __len__(self) -> int:
        return self.offsets.shape[0] - 1

    def __getitem__(self, i: int) -> np.ndarray:
        n = len(self)
        if not isinstance(i, (int, np.integer)) or not -n <= i < n:
            raise IndexError(f"set index {i!r} out of range for {n} sets")
        i = int(i) % n
        return self.points[self.offsets[i] : self.offsets[i + 1]]

    def as_list(self) -> list[np.ndarray]:
        """The sets as a list of ``(k_i, d)`` views."""
        return [self[i] for i in range(len(self))]


def as_generator(seed, name: str = "seed") -> np.random.Generator:
    """A ``numpy.random.Generator`` from ``seed``: a Generator (used as is), an int >= 0 or None."""
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None or (isinstance(seed, (int, np.integer)) and not isinstance(seed, bool) and seed >= 0):
        return np.random.default_rng(seed)
    raise TypeError(f"{name}: expected a numpy.random.Generator, a non-negative int or None, got {seed!r}")


def sample(density, n: int, seed=None) -> SetSamples:
    """Draw ``n`` independent sets from a multi-object density, exactly.

    Parameters
    ----------
    density : PPP, IIDCluster, MultiBernoulli or PMBM (PMB, MBM, MBM01)
    n : int >= 0
        Number of sets.
    seed : numpy.random.Generator, int or None
        The random source (a Generator is advanced in place).

    Returns
    -------
    SetSamples
        ``n`` sets in R^d, d the density's dimension.

    Examples
    --------
    >>> import numpy as np, nllbench as nb
    >>> mb = nb.MultiBernoulli.gaussian([1.0, 0.0], [[0.0], [5.0]], [[[1.0]], [[1.0]]])
    >>> nb.sample(mb, 3, seed=1).counts  # r = 1 always exists, r = 0 never
    array([1, 1, 1])
    """
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 0:
        raise ValueError(f"n: expected a non-negative integer, got {n!r}")
    n = int(n)
    rng = as_generator(seed)
    density = as_pmbm(density)
    if isinstance(density, PPP):
        return _sample_ppp(density, n, rng)
    if isinstance(density, IIDCluster):
        return _sample_iid(density, n, rng)
    if isinstance(density, PMBM):
        return _sample_pmbm(density, n, rng)
    raise TypeError(
        f"density: expected PPP, IIDCluster, MultiBernoulli or PMBM, got {type(density).__name__}"
    )


def _check_expected(expected: float, n: int, what: str) -> None:
    if not expected <= MAX_EXPECTED_POINTS:
        raise ValueError(
            f"density: {n} sets of {what} hold {expected:.3g} points in expectation, more than "
            f"{MAX_EXPECTED_POINTS:.0e}; draw fewer sets"
        )


def _sample_ppp(ppp: PPP, n: int, rng: np.random.Generator) -> SetSamples:
    """``n`` sets from the Poisson process ``ppp``."""
    total = ppp.total_rate
    _check_expected(n * total, n, f"a PPP of rate {total:.6g}")
    counts = rng.poisson(total, size=n) if total > 0 else np.zeros(n, dtype=np.int64)
    n_points = int(counts.sum())
    J = len(ppp.mixture)
    if n_points:
        comp = _choice(np.concatenate([ppp.weights, ppp.rates]) / total, n_points, rng)
    else:
        comp = np.empty(0, int)
    if not n_points:
        points = np.empty((0, ppp.dim))
    elif not ppp.rates.size:  # Gaussians only
        points = _gaussian_draws(ppp.gaussians, comp, rng)
    elif not J:  # boxes only (e.g. a uniform PPP)
        points = _box_draws(ppp.lows, ppp.highs, comp, rng)
    else:
        points = np.empty((n_points, ppp.dim))
        gauss = comp < J
        if np.any(gauss):
            points[gauss] = _gaussian_draws(ppp.gaussians, comp[gauss], rng)
        if np.any(~gauss):
            points[~gauss] = _box_draws(ppp.lows, ppp.highs, comp[~gauss] - J, rng)
    return SetSamples._trusted(_offsets(counts), points)


def _choice(p: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
    """``rng.choice(p.shape[0], size=size, p=p)`` for valid probabilities ``p`` (K,), number for number.

    numpy's choice with ``p`` draws ``rng.random(size)`` and searches the
    normalised cumulative sum of ``p`` (``side="right"``); this does the same
    without its checks of ``p`` (a fraction of the cost per step), and with one
    component (``p == [1.0]``) only advances the stream by those ``size``
    uniforms, every index being 0. ``tests/unit/engine`` checks it against numpy's
    choice, index for index and in the state the stream is left in.
    """
    if p.shape[0] == 1:
        rng.random(size)
        return np.zeros(size, dtype=np.int64)
    cdf = p.cumsum()
    cdf /= cdf[-1]
    return cdf.searchsorted(rng.random(size), side="right").astype(np.int64, copy=False)


def _sample_iid(c: IIDCluster, n: int, rng: np.random.Generator) -> SetSamples:
    """``n`` sets from the i.i.d. cluster ``c``."""
    counts = rng.choice(c.cardinality.shape[0], size=n, p=c.cardinality)
    n_points = int(counts.sum())
    comp = rng.choice(len(c.spatial), size=n_points, p=c.weights) if n_points else np.empty(0, int)
    return SetSamples._trusted(_offsets(counts), _gaussian_draws(c.gaussians, comp, rng))


def _sample_mb(mb: MultiBernoulli, n: int, rng: np.random.Generator) -> SetSamples:
    """``n`` sets from the multi-Bernoulli ``mb``: Bernoulli k exists when U < r_k (U uniform on [0, 1))."""
    exists = rng.random((n, len(mb))) < mb.r[None, :]  # r = 1: always (U < 1); r = 0: never
    comp = np.flatnonzero(exists) % max(len(mb), 1)  # row-major: the points come out grouped by set
    counts = exists.sum(axis=1).astype(np.int64)
    return SetSamples._trusted(_offsets(counts), _draws(mb.densities, comp, rng))


def _sample_pmbm(pmbm: PMBM, n: int, rng: np.random.Generator) -> SetSamples:
    """``n`` sets from the PMBM: a hypothesis by weight, its MB, and the PPP, independently.

    All sets at once over the PMBM's shared Bernoullis (:attr:`PMBM.pool`): set i
    holds the Bernoullis of its hypothesis h_i (:attr:`PMBM.members`), in order,
    and Bernoulli j of it exists when U < r_j, one uniform U per (set,
    Bernoulli) in set order. With one hypothesis this is the draw of
    :func:`_sample_mb`, number for number, and is made by it (no pool built).
    """
    if pmbm.n_hypotheses == 1:
        mb = pmbm.hypothesis(0)
        expected = float(mb.r.sum()) + (0.0 if pmbm.ppp is None else pmbm.ppp.total_rate)
        _check_expected(n * expected, n, f"a {pmbm.family} of mean cardinality {expected:.6g}")
        parts = [_sample_mb(mb, n, rng)]
        if pmbm.ppp is not None:
            parts.append(_sample_ppp(pmbm.ppp, n, rng))
        return _unite_sets(parts, n)
    try:
        pool = pmbm.pool
    except TypeError:  # hypotheses of different single-object families: no shared pool
        return _sample_pmbm_by_hypothesis(pmbm, n, rng)
    H, members = pmbm.n_hypotheses, pmbm.members
    sizes = np.array([m.shape[0] for m in members], dtype=np.int64)
    index = np.concatenate(members).astype(np.int64, copy=False)
    per_hypothesis = np.bincount(np.repeat(np.arange(H), sizes), weights=pool.r[index], minlength=H)
    expected = float(pmbm.weights @ per_hypothesis)
    if pmbm.ppp is not None:
        expected += pmbm.ppp.total_rate
    _check_expected(n * expected, n, f"a {pmbm.family} of mean cardinality {expected:.6g}")
    h_of = rng.choice(H, size=n, p=pmbm.weights) if H > 1 else np.zeros(n, dtype=np.int64)
    held = sizes[h_of]  # Bernoullis of each set's hypothesis
    first = _offsets(sizes)[h_of]  # where its members start in ``index``
    within = np.arange(int(held.sum())) - np.repeat(_offsets(held)[:-1], held)
    member = index[np.repeat(first, held) + within]  # (set, Bernoulli) pairs, set by set
    exists = rng.random(member.shape[0]) < pool.r[member]  # r = 1: always (U < 1); r = 0: never
    comp = member[exists]
    counts = np.bincount(np.repeat(np.arange(n), held)[exists], minlength=n).astype(np.int64)
    points = _draws(pool.densities, comp, rng)
    parts = [SetSamples._trusted(_offsets(counts), points)]
    if pmbm.ppp is not None:
        parts.append(_sample_ppp(pmbm.ppp, n, rng))
    return _unite_sets(parts, n)


def _sample_pmbm_by_hypothesis(pmbm: PMBM, n: int, rng: np.random.Generator) -> SetSamples:
    """:func:`_sample_pmbm` one hypothesis at a time (for hypotheses of different single-object families)."""
    H = pmbm.n_hypotheses
    expected = float(np.dot(pmbm.weights, [pmbm.existence(h).sum() for h in range(H)]))
    if pmbm.ppp is not None:
        expected += pmbm.ppp.total_rate
    _check_expected(n * expected, n, f"a {pmbm.family} of mean cardinality {expected:.6g}")
    h_of = rng.choice(H, size=n, p=pmbm.weights) if H > 1 else np.zeros(n, dtype=np.int64)
    parts = []
    for h in np.unique(h_of):
        rows = np.flatnonzero(h_of == h)
        parts.append((rows, _sample_mb(pmbm.hypothesis(int(h)), rows.shape[0], rng)))
    if pmbm.ppp is not None:
        parts.append((np.arange(n), _sample_ppp(pmbm.ppp, n, rng)))
    return _unite(parts, n, pmbm.dim)


def _unite(parts: list[tuple[np.ndarray, SetSamples]], n: int, dim: int) -> SetSamples:
    """Set i of the result is the union of set j of every part ``(rows, samples)`` with ``rows[j] == i``."""
    if not parts:
        return SetSamples._trusted(np.zeros(n + 1, dtype=np.int64), np.empty((0, dim)))
    owner = np.concatenate([np.repeat(rows, s.counts) for rows, s in parts])
    points = np.concatenate([s.points for _, s in parts])
    order = np.argsort(owner, kind="stable")
    counts = np.bincount(owner, minlength=n).astype(np.int64)
    return SetSamples._trusted(_offsets(counts), np.take(points, order, axis=0))


def _unite_sets(parts: list[SetSamples], n: int) -> SetSamples:
    """:func:`_unite` of parts of ``n`` sets each (``rows`` = 0..n-1 for every part), point for point.

    Set i holds set i of part 0, then set i of part 1, ...: the order the
    stable sort of :func:`_unite` gives. Each point's place in the result
    follows from the offsets (integer arithmetic, no sort).
    """
    if len(parts) == 1:
        return parts[0]
    counts = [s.offsets[1:] - s.offsets[:-1] for s in parts]
    total = counts[0].copy()
    for c in counts[1:]:
        total += c
    offsets = _offsets(total)
    dest = []  # where each point of each part goes in the result
    before = np.zeros(n, dtype=np.int64)  # points of set i in the parts already placed
    for s, c in zip(parts, counts, strict=True):
        shift = offsets[:-1] + before - s.offsets[:-1]  # how far set i's points move
        dest.append(np.arange(s.points.shape[0]) + np.repeat(shift, c))
        before += c
    order = np.empty(int(offsets[-1]), dtype=np.int64)
    order[np.concatenate(dest)] = np.arange(order.shape[0])
    # np.take, not fancy indexing: the same rows at a tenth of the cost on (T, d) arrays
    points = np.take(np.concatenate([s.points for s in parts]), order, axis=0)
    return SetSamples._trusted(offsets, points)


def _offsets(counts: np.ndarray) -> np.ndarray:
    out = np.zeros(counts.shape[0] + 1, dtype=np.int64)
    np.cumsum(counts, out=out[1:])
    return out


def _draws(densities, comp: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One draw from member ``comp[t]`` of ``densities`` (Gaussians, Gaussian mixtures or Laplaces) per t."""
    if isinstance(densities, Gaussians):
        return _gaussian_draws(densities, comp, rng)
    if isinstance(densities, GaussianMixtures):
        return _mixture_draws(densities, comp, rng)
    return _laplace_draws(densities, comp, rng)


def _gaussian_draws(g: Gaussians, comp: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One draw from member ``comp[t]`` of ``g`` per t: ``m + L z``, z standard normal. Shape (T, d)."""
    z = rng.standard_normal((comp.shape[0], g.dim))
    return _affine(g.means, g._chol, comp, z)


def _affine(means: np.ndarray, chol: np.ndarray, which: np.ndarray, z: np.ndarray) -> np.ndarray:
    """``means[which[t]] + chol[which[t]] @ z[t]`` per t, shape (T, d), as ``numpy.einsum`` rounds it.

    In 1-D and 2-D the product is spelled out, ``(0 + L_i0 z_0) + L_i1 z_1``,
    each product rounded and then summed in that order: what einsum's
    ``"tij,tj->ti"`` computes there, bit for bit (``tests/unit/engine``
    checks it), at a fraction of its cost on a few thousand small matrices.
    In more dimensions einsum itself (its sums are ordered differently).
    """
    d = z.shape[1]
    if d > 2:
        return np.take(means, which, axis=0) + np.einsum("tij,tj->ti", np.take(chol, which, axis=0), z)
    lc = np.take(chol, which, axis=0)  # np.take: fancy indexing costs ten times more on (T, d, d)
    acc = 0.0 + lc[:, :, 0] * z[:, 0:1]
    if d == 2:
        acc += lc[:, :, 1] * z[:, 1:2]
    return np.take(means, which, axis=0) + acc


def _mixture_draws(gm: GaussianMixtures, comp: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One draw from mixture member ``comp[t]`` of ``gm`` per t: a component by weight, then ``m + L z``.

    z is drawn first, as :func:`_gaussian_draws` draws it; then, if some
    member has several components, one uniform u per draw picks the
    component by the inverse of the member's cumulative weights. Shape (T, d).
    """
    z = rng.standard_normal((comp.shape[0], gm.dim))
    which = gm.offsets[comp]
    if not gm.is_single and comp.size:
        u = rng.random(comp.shape[0])
        cum = np.cumsum(gm.weights)  # the running sum; a member's own part is cum - (its start's base)
        base = np.concatenate([[0.0], cum])[gm.offsets[:-1]][comp]
        total = cum[gm.offsets[1:] - 1][comp] - base
        target = base + u * total
        last = gm.offsets[comp + 1] - 1
        which = np.minimum(np.searchsorted(cum, target, side="right"), last)
        which = np.maximum(which, gm.offsets[comp])
    g = gm.components
    return _affine(g.means, g._chol, which, z)


def _laplace_draws(lap: Laplaces, comp: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One draw from member ``comp[t]`` of ``lap`` per t: ``c + rho u`` (module docstring). Shape (T, d)."""
    T, d = comp.shape[0], lap.dim
    direction = rng.standard_normal((T, d))
    norm = np.linalg.norm(direction, axis=1)
    while np.any(norm == 0):  # probability 0, but a zero vector has no direction
        zero = norm == 0
        direction[zero] = rng.standard_normal((int(zero.sum()), d))
        norm = np.linalg.norm(direction, axis=1)
    radius = rng.gamma(d, lap.scales[comp])
    return lap.centers[comp] + (radius / norm)[:, None] * direction


def _box_draws(lows: np.ndarray, highs: np.ndarray, box: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniform draw from box ``box[t]`` per t, shape (T, d).

    ``(1 - u) low + u high`` with u uniform on [0, 1): no ``high - low`` that
    could overflow (a box as wide as the float range is allowed). Rounding
    may put a coordinate one ulp outside the box; it is put back on the face
    (a point of the closed box, which the PPP's intensity covers).
    """
    u = rng.random((box.shape[0], lows.shape[1]))
    lo, hi = np.take(lows, box, axis=0), np.take(highs, box, axis=0)
    return np.minimum(np.maximum((1.0 - u) * lo + u * hi, lo), hi)
