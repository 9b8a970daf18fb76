"""Calibration of a posterior's stated uncertainty, per step, as counts that add over steps, runs and seeds.

Three panels (all from the posterior the NLL is evaluated on):

* **Existence**: every Bernoulli of the best global hypothesis, with its
  existence probability r, is an event "explains a true object", which
  happens when the NLL's best association (:attr:`nllbench.engine.nll.NLLResult.best_assignment`)
  pairs it with one. Reliability diagram: r binned into
  :data:`RELIABILITY_BINS` equal bins, mean r against the observed frequency;
  Brier score (Brier 1950) mean (r - o)^2; expected calibration error
  ECE = sum_b (N_b / N) |mean r_b - frequency_b| (Naeini, Cooper, Hauskrecht,
  AAAI 2015; Guo et al., ICML 2017).
* **State consistency**: for each (Bernoulli, truth) pair of that association
  with a Gaussian density N(m, P), NEES = (y - m)^T P^-1 (y - m), chi-square
  with d degrees of freedom when the posterior is consistent. The average
  NEES over N pairs, times N, is chi-square with N d degrees of freedom, so its
  95 % interval is [chi2_{0.025}(N d), chi2_{0.975}(N d)] / N (Bar-Shalom,
  Li, Kirubarajan, *Estimation with Applications to Tracking and Navigation*,
  2001, ch. 5). Also the share of pairs inside their 95 % ellipse
  (NEES <= chi2_{0.95}(d)) and a histogram of the probability integral
  transform chi2_cdf(NEES; d), uniform when consistent. A Gaussian-mixture
  density enters with its mean and covariance (moment matching: the NEES
  of a mixture is not chi-square, so only its first two moments are checked).
* **Cardinality**: the posterior's distribution of the number of objects
  (PPP: Poisson; i.i.d. cluster: its pmf; PMBM: the hypothesis-weighted
  convolution of a Poisson with the Poisson-binomial of the r's) against the
  true count n: whether n lies in the central 90 % interval [q_0.05, q_0.95]
  (smallest counts with cdf >= 0.05 and >= 0.95), and the logarithmic score
  -log P(n) (Good 1952; negatively oriented, +inf when P(n) = 0).

PPP and i.i.d.-cluster posteriors (PHD, CPHD) have no Bernoullis and no
association: only their cardinality is scored. A step whose truth is
impossible under the posterior (NLL = +inf) has no best association; it is
counted in ``unassociated`` and adds nothing to the first two panels.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field, fields

import numba as nb
import numpy as np
from scipy.special import chdtr, chdtri, gammaln

from nllbench.engine.densities import PMBM, PPP, GaussianMixtures, Gaussians, IIDCluster, MultiBernoulli

RELIABILITY_BINS = 10
PIT_BINS = 10
NEES_LEVEL = 0.95
CARDINALITY_LEVEL = 0.90


@dataclass(frozen=True)
class CalibrationCounts:
    """Sufficient statistics of the calibration panels; ``a + b`` pools two sets exactly.

    Attributes
    ----------
    bin_count : (B,) int
        Bernoullis with r in bin b = min(floor(B r), B - 1).
    bin_r_sum : (B,) float
        Sum of their r.
    bin_explained : (B,) int
        Those that explain a true object under the best association.
    brier_sum : float
        Sum over Bernoullis of (r - o)^2.
    nees_pairs : int
    nees_sum : float
    nees_dof : int
        Sum of the pairs' degrees of freedom (N d).
    nees_inside : int
        Pairs with NEES <= chi2_{0.95}(d).
    pit_count : (P,) int
        Histogram of chi2_cdf(NEES; d) over P equal bins of [0, 1].
    card_steps, card_covered : int
        Steps scored, and those whose true count is in the central 90 % interval.
    card_log_score_sum : float
        Sum of -log P(true count) (+inf if any step's P is 0).
    unassociated : int
        Steps without a best association (impossible truth).
    """

    bin_count: np.ndarray
    bin_r_sum: np.ndarray
    bin_explained: np.ndarray
    brier_sum: float = 0.0
    nees_pairs: int = 0
    nees_sum: float = 0.0
    nees_dof: int = 0
    nees_inside: int = 0
    pit_count: np.ndarray = field(default_factory=lambda: np.zeros(PIT_BINS, dtype=np.int64))
    card_steps: int = 0
    card_covered: int = 0
    card_log_score_sum: float = 0.0
    unassociated: int = 0

    @classmethod
    def empty(cls) -> CalibrationCounts:
        return cls(
            np.zeros(RELIABILITY_BINS, dtype=np.int64),
            np.zeros(RELIABILITY_BINS),
            np.zeros(RELIABILITY_BINS, dtype=np.int64),
        )

    def __add__(self, other: CalibrationCounts) -> CalibrationCounts:
        if not isinstance(other, CalibrationCounts):
            return NotImplemented
        a, b = self.__dict__, other.__dict__
        # every field the sum of the two (the order of the fields' additions is immaterial); built
        # without the frozen __init__'s per-field setattr: a run pools its steps' counts with this
        out = object.__new__(CalibrationCounts)
        out.__dict__.update({name: a[name] + b[name] for name in _COUNT_FIELDS})
        return out

    @property
    def bernoullis(self) -> int:
        return int(self.bin_count.sum())

    @property
    def brier(self) -> float | None:
        """Mean (r - o)^2; None without Bernoullis."""
        n = self.bernoullis
        return self.brier_sum / n if n else None

    @property
    def ece(self) -> float | None:
        """sum_b |sum r_b - sum o_b| / N (= sum_b N_b / N |mean r_b - freq_b|); None without Bernoullis."""
        n = self.bernoullis
        return float(np.abs(self.bin_r_sum - self.bin_explained).sum() / n) if n else None

    def reliability(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(mean r, observed frequency, count) of the non-empty bins."""
        used = self.bin_count > 0
        return (
            self.bin_r_sum[used] / self.bin_count[used],
            self.bin_explained[used] / self.bin_count[used],
            self.bin_count[used],
        )

    @property
    def anees(self) -> float | None:
        """Average NEES over the pairs (d when consistent); None without pairs."""
        return self.nees_sum / self.nees_pairs if self.nees_pairs else None

    def anees_interval(self, level: float = 0.95) -> tuple[float, float] | None:
        """Central ``level`` interval of the average NEES of a consistent posterior: chi2(N d) / N."""
        if not self.nees_pairs:
            return None
        # chdtri(v, a) is the chi-square(v) quantile of upper-tail probability a
        lo, hi = chdtri(self.nees_dof, [(1 + level) / 2, (1 - level) / 2])
        return float(lo) / self.nees_pairs, float(hi) / self.nees_pairs

    @property
    def nees_inside_share(self) -> float | None:
        """Share of pairs inside their 95 % ellipse (0.95 when consistent); None without pairs."""
        return self.nees_inside / self.nees_pairs if self.nees_pairs else None

    @property
    def cardinality_coverage(self) -> float | None:
        """Share of steps whose true count is in the central 90 % interval; None without steps."""
        return self.card_covered / self.card_steps if self.card_steps else None

    @property
    def cardinality_log_score(self) -> float | None:
        """Mean -log P(true count) over steps; None without steps."""
        return self.card_log_score_sum / self.card_steps if self.card_steps else None


_COUNT_FIELDS = tuple(f.name for f in fields(CalibrationCounts))


@dataclass(frozen=True)
class CardinalityScore:
    """The cardinality panel of one step.

    mean : E[N]; low, high : central 90 % interval; covered : low <= n <= high;
    log_score : -log P(N = n) (+inf when 0).
    """

    mean: float
    low: int
    high: int
    covered: bool
    log_score: float


def cardinality_score(density, n: int, level: float = CARDINALITY_LEVEL) -> CardinalityScore:
    """Score the cardinality distribution of ``density`` at the true count ``n`` (module notes)."""
    if isinstance(density, IIDCluster):
        log_pmf = _log(density.cardinality)
        mean = float(np.arange(log_pmf.size) @ density.cardinality)
    else:
        log_pmf, mean = _log_cardinality_pmbm(density, n)
    cdf = np.cumsum(np.exp(log_pmf))
    # (a cdf that should reach 0.05 exactly may round just below it)
    lo, hi = (int(i) for i in np.searchsorted(cdf, [(1 - level) / 2 - 1e-12, (1 + level) / 2 - 1e-12]))
    log_p = float(log_pmf[n]) if n < log_pmf.size else -math.inf
    return CardinalityScore(mean, lo, hi, bool(lo <= n <= hi), -log_p + 0.0)


def _log(x: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return np.log(x)


def _log_cardinality_pmbm(density, n: int) -> tuple[np.ndarray, float]:
    """log P(N = k) for k = 0..K (K >= n, mass beyond K < 1e-15) and E[N], of a PPP, MB or PMBM."""
    if isinstance(density, MultiBernoulli):
        density = PMBM(None, (density,), np.ones(1))
    if isinstance(density, PPP):
        ppp, rs, log_w = density, [], np.zeros(1)
    elif isinstance(density, PMBM):
        ppp, log_w = density.ppp, _log(density.weights)
        rs = [density.existence(h) for h in range(density.n_hypotheses)]  # r of each hypothesis
    else:
        raise TypeError(
            f"density: expected PPP, IIDCluster, MultiBernoulli or PMBM, got {type(density).__name__}"
        )
    lam = 0.0 if ppp is None else ppp.total_rate
    M = max((rh.size for rh in rs), default=0)
    r = np.zeros((max(len(rs), 1), M))  # padding with r = 0 changes no distribution
    for h, rh in enumerate(rs):
        r[h, : rh.size] = rh
    mean = lam + float(np.exp(log_w) @ r.sum(axis=1))
    # Poisson tail: P(N_ppp > lam + 12 sqrt(lam) + 40) < 1e-15 for every lam
    K = max(n, M + int(lam + 12 * math.sqrt(lam) + 40))
    log_pb = _log_poisson_binomial(r)  # (H, M + 1)
    # the PPP is shared by the hypotheses: mix their Poisson-binomials first, then convolve once
    if log_w.size == 1 and log_w[0] > -np.inf:  # one hypothesis: the one-row logsumexp below (x + 0.0)
        log_pb_mix = log_pb[0] + log_w[0] + 0.0
    else:
        keep = log_w > -np.inf
        log_pb_mix = _logsumexp_rows(log_pb[keep] + log_w[keep, None])  # (M + 1,)
    # log P(N = k) = logsumexp_i log PB(i) + log Pois(k - i)
    return _log_convolution(log_pb_mix, lam, M, K), mean


def _log_convolution(log_pb_mix: np.ndarray, lam: float, M: int, K: int) -> np.ndarray:
    """``_logsumexp_rows(log_pb_mix[:, None] + _shifted_log_poisson(lam, M, K))``, (K + 1,), bit for bit.

    Where every column's largest term is finite (a PPP of positive rate, no r = 1), the kernel
    :func:`_convolution_terms` forms the terms, their column maxima a_max, the counts m of terms equal
    to them and the exponents ``a - a_max`` (-inf for the maxima) in one pass; NumPy then takes
    ``log1p(sum(exp(.)) / m) + log(m) + a_max`` as :func:`_logsumexp_rows` does (the same ``exp``,
    ``log1p`` and ``log`` on the same numbers, column sums over the rows in order; s / m where
    s = 0 is the 0 that ``_logsumexp_rows`` keeps, and nothing is infinite). Otherwise the table route.
    """
    if (M + 1) * (K + 1) <= 1 << 16:  # (the sizes whose table would be kept)
        t, a_max, m, finite = _convolution_terms(log_pb_mix, _kept_log_poisson_row(lam, K))
        if finite:
            return np.log1p(np.sum(np.exp(t), axis=0) / m) + np.log(m) + a_max
    return _logsumexp_rows(log_pb_mix[:, None] + _shifted_log_poisson(lam, M, K))


@nb.njit(cache=True)
def _convolution_terms(log_pb, log_pois):
    """For a[i, k] = log_pb[i] + log_pois[k - i] (-inf for k < i), (M + 1,) and (K + 1,):
    ``(a - a_max)`` with -inf at the maxima (M + 1, K + 1), a_max (K + 1,), m (K + 1,) float, and
    whether every a_max is finite and no term NaN (else the other outputs are not to be used)."""
    M1, K1 = log_pb.shape[0], log_pois.shape[0]
    t = np.empty((M1, K1))
    a_max = np.empty(K1)
    m = np.empty(K1)
    for k in range(K1):
        best = -np.inf
        for i in range(M1):
            x = log_pb[i] + (log_pois[k - i] if i <= k else -np.inf)
            if x != x:
                return t, a_max, m, False
            if x > best:
                best = x
            t[i, k] = x
        if not (best > -np.inf and best < np.inf):
            return t, a_max, m, False
        count = 0.0
        for i in range(M1):
            if t[i, k] == best:
                count += 1.0
                t[i, k] = -np.inf
            else:
                t[i, k] = t[i, k] - best
        a_max[k] = best
        m[k] = count
    return t, a_max, m, True


@functools.lru_cache(maxsize=64)
def _kept_log_poisson_row(lam: float, K: int) -> np.ndarray:
    """log Pois(j; lam) at j = 0..K (row 0 of :func:`_shifted_log_poisson`), read-only, kept."""
    row = _log_poisson_row(lam, K)
    row.setflags(write=False)
    return row


def _shifted_log_poisson(lam: float, M: int, K: int) -> np.ndarray:
    """log Pois(k - i; lam) at row i = 0..M, column k = 0..K (-inf where k < i), read-only.

    Tables of at most 2^16 entries are kept (64 at most) for the steps that follow: a run's PPP of
    undetected objects mostly keeps its rate.
    """
    if (M + 1) * (K + 1) <= 1 << 16:
        return _kept_log_poisson(lam, M, K)
    return _shifted_log_poisson_of(lam, M, K)


@functools.lru_cache(maxsize=64)
def _kept_log_poisson(lam: float, M: int, K: int) -> np.ndarray:
    return _shifted_log_poisson_of(lam, M, K)


def _log_poisson_row(lam: float, K: int) -> np.ndarray:
    """log Pois(j; lam) at j = 0..K (log 1[j = 0] for lam = 0)."""
    j = np.arange(K + 1)
    return j * math.log(lam) - lam - gammaln(j + 1) if lam > 0 else _log((j == 0).astype(float))


def _shifted_log_poisson_of(lam: float, M: int, K: int) -> np.ndarray:
    below, index = _convolution_index(M, K)
    pois = np.where(below, -np.inf, _log_poisson_row(lam, K)[index])
    pois.setflags(write=False)
    return pois


@functools.lru_cache(maxsize=64)
def _convolution_index(M: int, K: int) -> tuple[np.ndarray, np.ndarray]:
    """For the convolution of counts 0..M with 0..K: where k - i < 0, and clip(k - i, 0, K); (M + 1, K + 1).

    Read-only (shared by every call with the same M and K).
    """
    diff = np.arange(K + 1)[None, :] - np.arange(M + 1)[:, None]
    below, index = diff < 0, np.clip(diff, 0, K)
    below.setflags(write=False)
    index.setflags(write=False)
    return below, index


def _logsumexp_rows(a: np.ndarray) -> np.ndarray:
    """``scipy.special.logsumexp(a, axis=0)`` of a real 2-D array, at half its cost.

    The operations of scipy's (1.17) logsumexp, without its array-API layer:
    per column, the largest entry a_max is kept out of the sum,
    ``log1p(s / m) + log(m) + a_max`` with ``s`` the sum of exp(a - a_max)
    over the other entries and ``m`` the number of entries equal to a_max,
    and ``log(sum(exp(a)))`` where that is not finite (infinities, NaN). For
    one row that is ``0 + 0 + a``: the row plus 0.0 (so -0.0 becomes 0.0); for none, -inf.
    Equal to scipy's bit for bit (``tests/unit/measures/test_fast_routes_equal_old_routes.py``).
    """
    if a.shape[0] == 0:
        return np.full(a.shape[1], -np.inf)
    if a.shape[0] == 1:
        return a[0] + 0.0
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        a_max = np.max(a, axis=0, keepdims=True)
        mask = a == a_max
        m = np.sum(mask, axis=0, keepdims=True, dtype=a.dtype)
        s = np.sum(np.exp(np.where(mask, -np.inf, a) - a_max), axis=0, keepdims=True)
        s = np.where(s == 0, s, s / m)
        out = (np.log1p(s) + np.log(m) + a_max)[0]
        bad = ~np.isfinite(out)
        if bad.any():
            out[bad] = np.log(np.sum(np.exp(a), axis=0))[bad]
    return out


def _log_poisson_binomial(r: np.ndarray) -> np.ndarray:
    """log P(sum of independent Bernoulli(r[h, k]) over k = i), (H, M) -> (H, M + 1), in log space.

    The recursion over the Bernoullis, one at a time:
    ``out'[i] = logaddexp(out[i] + log(1 - r_k), out[i - 1] + log r_k)`` (``out[-1] = -inf``),
    compiled (:func:`_poisson_binomial_kernel`); the same operations on the
    same numbers as NumPy's ``logaddexp`` on whole rows, so the same values
    bit for bit (``tests/unit/measures/test_fast_routes_equal_old_routes.py``).
    """
    with np.errstate(divide="ignore"):
        log_r, log_1mr = np.log(r), np.log(1.0 - r)
    return _poisson_binomial_kernel(np.ascontiguousarray(log_r), np.ascontiguousarray(log_1mr))


@nb.njit(cache=True)
def _poisson_binomial_kernel(log_r, log_1mr):
    """The recursion of :func:`_log_poisson_binomial` on (H, M) log r and log(1 - r)."""
    H, M = log_r.shape
    out = np.full((H, M + 1), -np.inf)
    for h in range(H):
        out[h, 0] = 0.0
        for k in range(M):
            a, b = log_1mr[h, k], log_r[h, k]
            # downwards, so that out[h, i - 1] is still the previous step's; entries
            # past k + 1 are -inf and stay so (logaddexp(-inf, -inf) = -inf), as in NumPy
            for i in range(k + 1, 0, -1):
                out[h, i] = np.logaddexp(out[h, i] + a, out[h, i - 1] + b)
            out[h, 0] = np.logaddexp(out[h, 0] + a, -np.inf + b)
    return out


def step_counts(
    density, truth: np.ndarray, result, card: CardinalityScore | None = None
) -> CalibrationCounts:
    """The calibration counts of one step.

    Parameters
    ----------
    density : PPP, IIDCluster, MultiBernoulli or PMBM
        The density the NLL was evaluated on.
    truth : (n, d) array
    result : NLLResult
        ``nll(density, truth, ...)``: its best hypothesis and association.
    card : CardinalityScore, optional
        ``cardinality_score(density, n)`` if already computed.
    """
    if card is None:
        card = cardinality_score(density, truth.shape[0])
    base = {"card_steps": 1, "card_covered": int(card.covered), "card_log_score_sum": card.log_score}
    if isinstance(density, MultiBernoulli):
        density = PMBM(None, (density,), np.ones(1))
    if not isinstance(density, PMBM):
        return _replace(CalibrationCounts.empty(), **base)
    if result.best_assignment is None:
        return _replace(CalibrationCounts.empty(), unassociated=1, **base)
    mb = density.hypothesis(result.best_hypothesis)
    cols = np.asarray(result.best_assignment)
    matched = cols < len(mb)
    ks, ls = cols[matched], np.flatnonzero(matched)
    explained = np.zeros(len(mb), dtype=np.int64)
    explained[ks] = 1
    existence = _existence(mb.r, explained)
    dens = mb.densities.moment_matched() if isinstance(mb.densities, GaussianMixtures) else mb.densities
    nees = _nees(dens, ks, truth[ls]) if isinstance(dens, Gaussians) else {}
    if not nees:  # no NEES panel: its fields stay empty
        return _replace(CalibrationCounts.empty(), **base, **existence)
    return CalibrationCounts(**base, **existence, **nees, unassociated=0)  # every field given


def _replace(counts: CalibrationCounts, **changes) -> CalibrationCounts:
    return CalibrationCounts(**{f.name: changes.get(f.name, getattr(counts, f.name)) for f in fields(counts)})


def _existence(r: np.ndarray, explained: np.ndarray) -> dict:
    b = np.minimum((r * RELIABILITY_BINS).astype(np.int64), RELIABILITY_BINS - 1)
    return {
        "bin_count": np.bincount(b, minlength=RELIABILITY_BINS).astype(np.int64),
        "bin_r_sum": np.bincount(b, weights=r, minlength=RELIABILITY_BINS),
        "bin_explained": np.bincount(b, weights=explained, minlength=RELIABILITY_BINS).astype(np.int64),
        "brier_sum": float(np.sum((r - explained) ** 2)),
    }


def nees(means: np.ndarray, covs: np.ndarray, y: np.ndarray) -> np.ndarray:
    """(y_i - m_i)^T P_i^-1 (y_i - m_i) for (N, d) means, (N, d, d) covariances and (N, d) points."""
    diff = y - means
    return np.einsum("ni,ni->n", diff, np.linalg.solve(covs, diff[:, :, None])[:, :, 0])


def _nees(gaussians: Gaussians, ks: np.ndarray, y: np.ndarray) -> dict:
    d = gaussians.dim
    e = nees(gaussians.means[ks], gaussians.covs[ks], y)
    pit = chdtr(d, e)  # chi-square(d) cdf
    return {
        "nees_pairs": int(e.size),
        "nees_sum": float(e.sum()),
        "nees_dof": int(e.size * d),
        "nees_inside": int(np.sum(e <= _nees_bound(d))),
        "pit_count": np.bincount(
            np.minimum((pit * PIT_BINS).astype(np.int64), PIT_BINS - 1), minlength=PIT_BINS
        ),
    }


@functools.lru_cache(maxsize=8)
def _nees_bound(d: int) -> float:
    """chi2_{NEES_LEVEL}(d): the NEES inside the ellipse of that probability (d degrees of freedom)."""
    return chdtri(d, 1.0 - NEES_LEVEL)
