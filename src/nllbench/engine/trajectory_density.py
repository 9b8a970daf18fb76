"""A trajectory PMBM density for the set of all trajectories, and the exact NLL of a true set under it.

The density is the posterior of the trajectory PMBM filter for the set of all
trajectories (Granstrom, Svensson, Xia, Williams, Garcia-Fernandez, "Poisson
multi-Bernoulli mixtures for sets of trajectories", IEEE TAES 61(2), 2025,
arXiv:1912.08718) with a linear-Gaussian model of constant survival P_S and
detection P_D. docs/trajectory_filters.md derives every formula used here.

Representation (no Python object per Bernoulli or component):

* **Nodes** ``(N,)``: a forest of Gaussians ``N(mean, cov)`` at integer times,
  each with a parent at the previous time (-1: a root). A node is the filtered
  density of the state at its time given the measurements of its branch; the
  chain of a node's ancestors defines the joint Gaussian of the stacked states
  ``p(x_b, ..., x_t) = N(x_t; m_t, P_t) prod_{s<t} N(x_s; G_s x_{s+1} + o_s, C_s)``
  with the Rauch-Tung-Striebel backward kernel of the parent (``G_s = P_s F^T
  (F P_s F^T + Q)^{-1}``, ``o_s = m_s - G_s F m_s``, ``C_s = P_s - G_s F P_s``),
  which never changes once the parent is written.
* **Trajectory Bernoullis** ``(S,)``: start time b, the existence ``r_last``
  and time ``t_last`` of the last detection (or creation), ``cut`` (-1 while
  the alive branch is kept; else the time it was dropped) and ``node`` (the
  alive branch's node now, or its last one). The end time and the existence now
  follow in closed form (:func:`bernoulli_end_terms`): after ``t_last`` only
  survival and missed detections act, which leave the Gaussians unchanged.
* **Ended prefixes** (trajectory PMB, ``nllbench.filters.tpmb``): a Bernoulli
  may carry ``prefix`` >= 0, a segment of an append-only store: given that it
  exists, it ended before ``t_last`` with probability ``seg_ended[prefix]``,
  at an end time of the segment's distribution (:func:`log_prefix_end`), and
  the closed form above acts on its alive part only. ``prefix`` -1 (every
  Bernoulli of the PMBM filter) means alive at ``t_last`` given existence.
* **Global hypotheses**: ``assoc (H, T)`` (a Bernoulli of each track, -1 if
  none) with ``log_weights (H,)``.
* **Undetected trajectories**: a Poisson process whose components (birth time,
  birth weight, current node, cut) follow the prior chain; their intensity at a
  trajectory is a closed form (:func:`log_undetected_intensity`), ended ones
  included.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy.special import logsumexp

from nllbench.engine.trajectory_nll import (
    TrajectoryWeights,
    assignment_sum,
    association_problem_from_weights,
    decompose,
)

#: The terms of the trajectory-density NLL; they sum to the value.
TRAJECTORY_DENSITY_TERMS = ("localization", "presence", "false", "undetected", "mixture", "association")


def _times(count, log_value: float):
    """``count * log_value`` with 0 where the count is 0 (never 0 * -inf = NaN)."""
    count = np.asarray(count)
    if log_value == -math.inf:
        return np.where(count > 0, -math.inf, 0.0)
    return count * log_value


def _log(p: float) -> float:
    return math.log(p) if p > 0 else -math.inf


def _log1m(p: float) -> float:
    return math.log1p(-p) if p < 1 else -math.inf


_INTEGER_FIELDS = (
    "node_time", "node_parent", "start", "t_last", "cut", "node", "track", "track_labels", "assoc",
    "ppp_start", "ppp_node", "ppp_cut", "prefix", "seg_t0", "seg_t1", "seg_parent",
)  # fmt: skip

_EMPTY_INT = np.empty(0, dtype=np.int64)


@dataclass(frozen=True)
class TrajectoryPMBM:
    """The posterior of the trajectory PMBM filter over the set of all trajectories up to ``time``.

    Attributes
    ----------
    time : int
        The last step k (steps 0..k).
    updated : bool
        True after the update at ``time`` (the alive branches carry that step's missed detection).
    F, Q : (d, d)
        Transition and process noise (the RTS kernels and the undetected trajectories' prior chain).
    p_survival, p_detection : float
    node_time, node_parent : (N,) int
    node_mean : (N, d)
    node_cov : (N, d, d)
    start, t_last, cut, node, track : (S,) int
        Each Bernoulli's start time, time of its last detection, alive-branch cut
        (-1: none), node, and track (index into ``track_labels``).
    r_last : (S,) float
        Existence at ``t_last``.
    track_labels : (T,) int
    assoc : (H, T) int
        Bernoulli of each track in each hypothesis, -1 for none.
    log_weights : (H,) float
        Normalised log weights of the global hypotheses.
    ppp_start, ppp_node, ppp_cut : (J,) int
    ppp_weight : (J,) float
        The undetected trajectories' components: birth time, node now (or
        when cut), cut time (-1: alive), birth weight.
    prefix : (S,) int or None
        Each Bernoulli's ended-prefix segment (-1: none; None: -1 for all).
    seg_t0, seg_t1, seg_parent : (G,) int; seg_beta, seg_ended : (G,) float
        Prefix segments: given an end before ``seg_t1``, the end lies before
        ``seg_t0`` (in the parent segment's distribution) with probability
        ``seg_beta``, else in ``seg_t0..seg_t1 - 1`` with the geometric weights
        ``(P_S (1 - P_D))^(e - seg_t0)``; ``seg_ended``: the probability of an
        end before ``seg_t1`` given existence, in (0, 1).
    """

    time: int
    updated: bool
    F: np.ndarray
    Q: np.ndarray
    p_survival: float
    p_detection: float
    node_time: np.ndarray
    node_parent: np.ndarray
    node_mean: np.ndarray
    node_cov: np.ndarray
    start: np.ndarray
    r_last: np.ndarray
    t_last: np.ndarray
    cut: np.ndarray
    node: np.ndarray
    track: np.ndarray
    track_labels: np.ndarray
    assoc: np.ndarray
    log_weights: np.ndarray
    ppp_start: np.ndarray
    ppp_weight: np.ndarray
    ppp_node: np.ndarray
    ppp_cut: np.ndarray
    prefix: np.ndarray | None = None
    seg_t0: np.ndarray = field(default_factory=lambda: _EMPTY_INT)
    seg_t1: np.ndarray = field(default_factory=lambda: _EMPTY_INT)
    seg_parent: np.ndarray = field(default_factory=lambda: _EMPTY_INT)
    seg_beta: np.ndarray = field(default_factory=lambda: np.empty(0))
    seg_ended: np.ndarray = field(default_factory=lambda: np.empty(0))

    def __post_init__(self) -> None:
        if self.prefix is None:
            object.__setattr__(self, "prefix", np.full(np.asarray(self.start).shape[0], -1, dtype=np.int64))
        for name in _INTEGER_FIELDS:
            arr = np.asarray(getattr(self, name))
            if arr.size == 0:
                arr = arr.astype(np.int64)  # an empty list reads as float
            elif arr.dtype.kind not in "iu":
                raise TypeError(f"{name}: expected integers, got {arr.dtype}")
            object.__setattr__(self, name, arr.astype(np.int64, copy=False))
        N = self.node_time.shape[0]
        d = self.F.shape[0]
        if self.node_mean.shape != (N, d) or self.node_cov.shape != (N, d, d):
            raise ValueError(
                f"node_mean, node_cov: expected shapes ({N}, {d}), ({N}, {d}, {d}), "
                f"got {self.node_mean.shape}, {self.node_cov.shape}"
            )
        S = self.start.shape[0]
        for name in ("r_last", "t_last", "cut", "node", "track", "prefix"):
            if getattr(self, name).shape != (S,):
                raise ValueError(f"{name}: expected shape ({S},), got {getattr(self, name).shape}")
        T = self.track_labels.shape[0]
        if self.assoc.ndim != 2 or self.assoc.shape[1] != T or self.assoc.shape[0] < 1:
            raise ValueError(f"assoc: expected shape (H >= 1, {T}), got {self.assoc.shape}")
        if self.log_weights.shape != (self.assoc.shape[0],):
            raise ValueError(
                f"log_weights: expected shape ({self.assoc.shape[0]},), got {self.log_weights.shape}"
            )
        if np.any((self.assoc < -1) | (self.assoc >= S)):
            raise ValueError(f"assoc: expected Bernoulli indices in -1..{S - 1}")
        if np.any((self.node < 0) | (self.node >= N)) or np.any((self.ppp_node < 0) | (self.ppp_node >= N)):
            raise ValueError(f"node, ppp_node: expected node indices in 0..{N - 1}")
        J = self.ppp_start.shape[0]
        for name in ("ppp_weight", "ppp_node", "ppp_cut"):
            if getattr(self, name).shape != (J,):
                raise ValueError(f"{name}: expected shape ({J},), got {getattr(self, name).shape}")
        parent = self.node_parent
        if np.any((parent < -1) | (parent >= N)):
            raise ValueError(f"node_parent: expected node indices in -1..{N - 1}")
        has = parent >= 0
        if np.any(self.node_time[parent[has]] != self.node_time[has] - 1):
            raise ValueError("node_parent: expected each parent one step before its node")
        if not np.all((self.r_last > 0) & (self.r_last <= 1)):
            raise ValueError("r_last: expected existence probabilities in (0, 1]")
        if not np.all(self.ppp_weight >= 0) or not np.all(np.isfinite(self.ppp_weight)):
            raise ValueError("ppp_weight: expected finite weights >= 0")
        for p in ("p_survival", "p_detection"):
            if not 0 <= getattr(self, p) <= 1:
                raise ValueError(f"{p}: expected a probability in [0, 1], got {getattr(self, p)!r}")
        self._check_segments()

    def _check_segments(self) -> None:
        G = self.seg_t0.shape[0]
        for name in ("seg_t1", "seg_parent", "seg_beta", "seg_ended"):
            object.__setattr__(self, name, np.asarray(getattr(self, name)))
            if getattr(self, name).shape != (G,):
                raise ValueError(f"{name}: expected shape ({G},), got {getattr(self, name).shape}")
        object.__setattr__(self, "seg_beta", self.seg_beta.astype(float))
        object.__setattr__(self, "seg_ended", self.seg_ended.astype(float))
        if np.any((self.prefix < -1) | (self.prefix >= G)):
            raise ValueError(f"prefix: expected segment indices in -1..{G - 1}")
        has = self.prefix >= 0
        if np.any(self.seg_t1[self.prefix[has]] != self.t_last[has]):
            raise ValueError("prefix: expected each Bernoulli's segment to end at its t_last")
        if np.any((self.seg_parent < -1) | (self.seg_parent >= np.arange(G))):
            raise ValueError("seg_parent: expected an earlier segment or -1")
        par = self.seg_parent >= 0
        if np.any(self.seg_t1[self.seg_parent[par]] != self.seg_t0[par]) or np.any(
            self.seg_t0 >= self.seg_t1
        ):
            raise ValueError("seg_t0, seg_t1: expected seg_t0 < seg_t1 and each parent to end at seg_t0")
        if not np.all((self.seg_beta >= 0) & (self.seg_beta <= 1)) or np.any((self.seg_beta > 0) & ~par):
            raise ValueError("seg_beta: expected probabilities in [0, 1], 0 without a parent")
        if not np.all((self.seg_ended > 0) & (self.seg_ended < 1)):
            raise ValueError("seg_ended: expected probabilities in (0, 1)")

    def a_last(self) -> np.ndarray:
        """(S,) probability of being alive at ``t_last`` given existence (1 without a prefix)."""
        return alive_at_last(self.prefix, self.seg_ended)

    # ------------------------------------------------------------------
    # closed forms of the end time and existence
    # ------------------------------------------------------------------

    def bernoulli_terms(self) -> tuple[np.ndarray, np.ndarray]:
        """(log r now (S,), log D (S,)): see :func:`bernoulli_end_terms`."""
        return bernoulli_end_terms(
            self.r_last, self.t_last, self.cut, self.time, self.updated, self.p_survival, self.p_detection,
            self.a_last(),
        )  # fmt: skip

    def total_undetected(self) -> float:
        """Lambda: the expected number of undetected trajectories (ended ones included)."""
        ended, alive = ppp_masses(
            self.ppp_start,
            self.ppp_weight,
            self.ppp_cut,
            self.time,
            self.updated,
            self.p_survival,
            self.p_detection,
        )
        return float(np.sum(ended) + np.sum(alive))

    def chain(self, node: int) -> np.ndarray:
        """Node indices of ``node``'s ancestors, oldest first, ``node`` last."""
        out = []
        while node >= 0:
            out.append(node)
            node = int(self.node_parent[node])
        return np.array(out[::-1], dtype=np.int64)


def end_masses(t_last, cut, time: int, updated: bool, p_s: float, p_d: float):
    """(ended (S,), alive (S,)): the unnormalised end-time masses of trajectory Bernoullis.

    After its last detection at ``t_last``, a trajectory ends at ``e`` in
    ``t_last..hi`` (``hi = cut - 1`` if cut, else ``time - 1``) with weight
    ``u(e) = (P_S (1 - P_D))^(e - t_last) (1 - P_S)``, or is alive at ``time``
    with ``u_alive = P_S^(time - t_last) (1 - P_D)^misses`` (``misses = time -
    t_last``, one fewer before the update at ``time``; 0 once cut). ``ended`` is
    ``sum_e u(e)``, a geometric sum.
    """
    t_last = np.asarray(t_last)
    cut = np.asarray(cut)
    q = p_s * (1 - p_d)
    hi = np.where(cut >= 0, cut - 1, time - 1)
    n_ended = np.maximum(hi - t_last + 1, 0)
    if 0 < q < 1:
        ended = (1 - p_s) * -np.expm1(n_ended * math.log(q)) / (1 - q)
    elif q == 0:
        ended = (1 - p_s) * (n_ended > 0)
    else:  # q = 1: P_S = 1, no trajectory ends
        ended = np.zeros(n_ended.shape)
    misses = np.maximum(time - t_last - (0 if updated else 1), 0)
    alive_log = _times(time - t_last, _log(p_s)) + _times(misses, _log1m(p_d))
    alive = np.where(cut >= 0, 0.0, np.exp(alive_log))
    return np.asarray(ended, dtype=float), alive


def alive_at_last(prefix, seg_ended) -> np.ndarray:
    """(S,) ``a``: the probability of being alive at ``t_last`` given existence (1 where ``prefix`` is -1)."""
    prefix = np.asarray(prefix)
    seg_ended = np.asarray(seg_ended, dtype=float)
    if seg_ended.size == 0:
        return np.ones(prefix.shape[0])
    return np.where(prefix >= 0, 1.0 - seg_ended[np.maximum(prefix, 0)], 1.0)


def bernoulli_end_terms(r_last, t_last, cut, time: int, updated: bool, p_s: float, p_d: float, a_last=None):
    """(log r (S,), log D (S,)): the existence now and ``D = 1 - r_last + r_last Z``.

    With ``Z = (1 - a) + a (ended + alive)`` (:func:`end_masses`; ``a =
    a_last``, the probability of being alive at ``t_last`` given existence, 1
    if None), missed detections and survival since ``t_last`` give ``r =
    r_last Z / D``; the Bernoulli's weight of a trajectory ending at e >=
    t_last is ``r P(e) = r_last a u(e) / D``, and before t_last ``r_last (1 -
    a) P_prefix(e) / D``.
    """
    r_last = np.asarray(r_last, dtype=float)
    ended, alive = end_masses(t_last, cut, time, updated, p_s, p_d)
    Z = ended + alive
    if a_last is not None:
        a = np.asarray(a_last, dtype=float)
        Z = np.where(a < 1, (1 - a) + a * Z, Z)
    D = 1 - r_last + r_last * Z
    with np.errstate(divide="ignore", invalid="ignore"):
        log_D = np.log(D)
        # Z = 0 (no way left to have been missed): the Bernoulli is empty, never 0/0
        log_r = np.where(Z > 0, np.log(r_last) + np.log(Z) - log_D, -math.inf)
    return log_r, log_D


def alive_existence(
    r_last, t_last, cut, time: int, updated: bool, p_s: float, p_d: float, a_last=None
) -> np.ndarray:
    """(S,) the probability that the trajectory exists and is alive at ``time``: ``r_last a alive / D``."""
    _, log_D = bernoulli_end_terms(r_last, t_last, cut, time, updated, p_s, p_d, a_last)
    _, alive = end_masses(t_last, cut, time, updated, p_s, p_d)
    a = np.ones(np.shape(r_last)) if a_last is None else np.asarray(a_last, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_ra = np.log(np.asarray(r_last, dtype=float)) + np.log(a) + np.log(alive) - log_D
        return np.where(alive * a > 0, np.minimum(np.exp(log_ra), 1.0), 0.0)


def log_prefix_end(density: TrajectoryPMBM, segment: int, end) -> np.ndarray:
    """log P(end | ended before ``seg_t1[segment]``) of a prefix segment (-inf outside its support).

    Walks the segment's parents (one per projection that mixed an ended part in).
    """
    end = np.atleast_1d(np.asarray(end))
    out = np.full(end.shape, -math.inf)
    log_q = _log(density.p_survival) + _log1m(density.p_detection) if density.p_survival > 0 else -math.inf
    scale = 0.0
    g = segment
    while g >= 0 and scale > -math.inf:
        t0, t1 = int(density.seg_t0[g]), int(density.seg_t1[g])
        beta = float(density.seg_beta[g])
        here = (end >= t0) & (end < t1)
        n = t1 - t0
        log_geo = float(logsumexp(_times(np.arange(n), log_q)))
        out = np.where(here, scale + _log1m(beta) + _times(end - t0, log_q) - log_geo, out)
        scale += _log(beta)
        g = int(density.seg_parent[g])
    return out


def log_end_probability(
    t_last: int, cut: int, time: int, updated: bool, p_s: float, p_d: float, end
) -> np.ndarray:
    """log of the unnormalised end-time weight ``u(end)`` of one Bernoulli (see :func:`bernoulli_end_terms`).

    ``end`` may be an array; impossible ends give -inf. ``end == time`` is the alive branch.
    """
    end = np.asarray(end)
    log_q = _log(p_s) + _log1m(p_d) if p_s > 0 else -math.inf
    hi = cut - 1 if cut >= 0 else time - 1
    ended = _times(end - t_last, log_q) + _log1m(p_s)
    misses = time - t_last - (0 if updated else 1)
    alive = float(_times(time - t_last, _log(p_s)) + _times(max(misses, 0), _log1m(p_d)))
    out = np.where((end >= t_last) & (end <= hi), ended, -math.inf)
    if cut < 0:
        out = np.where(end == time, alive, out)
    return out


def bernoulli_log_end(density: TrajectoryPMBM, s: int, end) -> np.ndarray:
    """log of Bernoulli ``s``'s end-time weight: ``r P(end) = r_last exp(this) / D`` (-inf if impossible).

    ``a u(end)`` from :func:`log_end_probability` at or after ``t_last``, and
    ``(1 - a) P_prefix(end)`` (:func:`log_prefix_end`) before it.
    """
    end = np.atleast_1d(np.asarray(end))
    t_last = int(density.t_last[s])
    lu = log_end_probability(
        t_last, int(density.cut[s]), density.time, density.updated,
        density.p_survival, density.p_detection, end,
    )  # fmt: skip
    g = int(density.prefix[s])
    if g < 0:
        return lu
    ended = float(density.seg_ended[g])
    before = math.log(ended) + log_prefix_end(density, g, end)
    return np.where(end < t_last, before, math.log1p(-ended) + lu)


def ppp_masses(start, weight, cut, time: int, updated: bool, p_s: float, p_d: float):
    """(ended (J,), alive (J,)) masses of the undetected components.

    A component born at b with weight w is alive at t after its update with
    weight ``w P_S^(t - b) (1 - P_D)^(t - b + 1)``; it ends at e (``b <= e <
    cut`` or ``< time``) with ``w P_S^(e - b) (1 - P_D)^(e - b + 1) (1 - P_S)``.
    """
    start = np.asarray(start)
    cut = np.asarray(cut)
    weight = np.asarray(weight, dtype=float)
    q = p_s * (1 - p_d)
    hi = np.where(cut >= 0, cut - 1, time - 1)
    n = np.maximum(hi - start + 1, 0)
    if q < 1:
        geo = -np.expm1(n * _log(q)) / (1 - q) if q > 0 else (n > 0).astype(float)
    else:
        geo = n.astype(float)
    ended = weight * (1 - p_d) * (1 - p_s) * geo
    misses = time - start + (1 if updated else 0)
    with np.errstate(divide="ignore"):
        alive_log = np.log(weight) + _times(time - start, _log(p_s)) + _times(misses, _log1m(p_d))
    alive = np.where(cut >= 0, 0.0, np.exp(alive_log))
    return ended, alive


# ---------------------------------------------------------------------------
# Gaussian log densities of state sequences
# ---------------------------------------------------------------------------


def _logpdf_batch(x: np.ndarray, mean: np.ndarray, cov: np.ndarray) -> np.ndarray:
    """(L,) log N(x_i; mean_i, cov_i) by Cholesky factors."""
    d = x.shape[1]
    L = np.linalg.cholesky(cov)
    diff = (x - mean)[..., None]
    z = np.linalg.solve(L, diff)[..., 0]
    log_det = 2.0 * np.sum(np.log(np.diagonal(L, axis1=1, axis2=2)), axis=1)
    return -0.5 * (np.sum(z * z, axis=1) + log_det + d * math.log(2 * math.pi))


def backward_kernels(mean: np.ndarray, cov: np.ndarray, F: np.ndarray, Q: np.ndarray):
    """RTS backward kernels ``x_s | x_{s+1} ~ N(G x_{s+1} + o, C)`` of filtered densities (L, d), (L, d, d).

    ``G = P F^T (F P F^T + Q)^{-1}``, ``o = m - G F m``, ``C = P - G F P`` (Rauch, Tung, Striebel 1965).
    """
    P_pred = F @ cov @ F.T + Q
    PFt = cov @ F.T
    G = np.swapaxes(np.linalg.solve(P_pred, np.swapaxes(PFt, 1, 2)), 1, 2)
    o = mean - np.einsum("lij,lj->li", G, mean @ F.T)
    C = cov - G @ F @ cov
    return G, o, 0.5 * (C + np.swapaxes(C, 1, 2))


def chain_logpdf(density: TrajectoryPMBM, nodes: np.ndarray, states: np.ndarray) -> float:
    """log of the joint Gaussian of ``nodes`` (a chain, oldest first, length L) at ``states`` (L, d).

    ``log N(x_L; m_L, P_L) + sum_{s < L} log N(x_s; G_s x_{s+1} + o_s, C_s)``.
    """
    m, P = density.node_mean[nodes], density.node_cov[nodes]
    last = _logpdf_batch(states[-1:], m[-1:], P[-1:])[0]
    if nodes.size == 1:
        return float(last)
    G, o, C = backward_kernels(m[:-1], P[:-1], density.F, density.Q)
    cond_mean = np.einsum("lij,lj->li", G, states[1:]) + o
    return float(last + np.sum(_logpdf_batch(states[:-1], cond_mean, C)))


def prior_chain_logpdf(mean0: np.ndarray, cov0: np.ndarray, F: np.ndarray, Q: np.ndarray, states) -> float:
    """``log N(x_0; mean0, cov0) + sum_s log N(x_{s+1}; F x_s, Q)``: the undetected prior chain."""
    out = _logpdf_batch(states[:1], mean0[None], cov0[None])[0]
    if states.shape[0] > 1:
        L = states.shape[0] - 1
        out += np.sum(_logpdf_batch(states[1:], states[:-1] @ F.T, np.broadcast_to(Q, (L,) + Q.shape)))
    return float(out)


# ---------------------------------------------------------------------------
# the NLL of a true set of trajectories
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class TrueTrajectory:
    """One true trajectory: its start step and its states at start, start + 1, ... (L, d)."""

    start: int
    states: np.ndarray

    @property
    def end(self) -> int:
        return self.start + self.states.shape[0] - 1


def truth_trajectories(truth, truth_ids) -> list[TrueTrajectory]:
    """Per-step truth (a list of (n_k, d) arrays and (n_k,) ids) as trajectories, ordered by id.

    The model of the trajectory filters has no gaps: a truth absent at a step
    between two presences is refused, naming it.
    """
    steps: dict[int, list[int]] = {}
    rows: dict[int, list[np.ndarray]] = {}
    for k, (x, ids) in enumerate(zip(truth, truth_ids, strict=True)):
        for i, j in enumerate(np.asarray(ids).tolist()):
            steps.setdefault(j, []).append(k)
            rows.setdefault(j, []).append(np.asarray(x[i], dtype=float))
    out = []
    for j in sorted(steps):
        s = steps[j]
        if s[-1] - s[0] + 1 != len(s):
            raise ValueError(f"truth: trajectory {j} has a gap (steps {s[0]}..{s[-1]}, {len(s)} present)")
        out.append(TrueTrajectory(s[0], np.array(rows[j])))
    return out


@dataclass(frozen=True)
class TrajectoryDensityNLL:
    """The NLL of a true set of trajectories under a :class:`TrajectoryPMBM`.

    value, lower, upper : float (value = upper; lower certified)
    exact : float or None (every association of every hypothesis, when asked)
    complete : bool (every association with non-zero likelihood was listed)
    terms : dict of :data:`TRAJECTORY_DENSITY_TERMS` at the best (hypothesis, association); they sum to value
    best_hypothesis : int
    """

    value: float
    lower: float
    upper: float
    exact: float | None
    complete: bool
    terms: dict
    best_hypothesis: int


def pair_weights(density: TrajectoryPMBM, truths: list[TrueTrajectory]):
    """Per Bernoulli of the pool and truth: (loc (S, n), presence (S, n), alone (S,)) in logs.

    loc: the Gaussian log density of the truth's states under the Bernoulli's
    chain up to the truth's end; presence: ``log r + log P(end)``; -inf when the
    start differs or the end is impossible. alone: ``log(1 - r)``.
    """
    S, n = density.start.shape[0], len(truths)
    log_r, log_D = density.bernoulli_terms()
    with np.errstate(divide="ignore"):
        alone = np.log1p(-np.exp(log_r))
    loc = np.full((S, n), -math.inf)
    pres = np.full((S, n), -math.inf)
    for s in range(S if n else 0):
        b = int(density.start[s])
        chain = None
        for j, y in enumerate(truths):
            if y.start != b or log_r[s] == -math.inf:
                continue
            lu = float(bernoulli_log_end(density, s, y.end)[0])
            if lu == -math.inf:
                continue
            if chain is None:
                chain = density.chain(int(density.node[s]))
            pres[s, j] = math.log(float(density.r_last[s])) + lu - log_D[s]
            loc[s, j] = chain_logpdf(density, chain[: y.end - b + 1], y.states)
    return loc, pres, alone


def undetected_log_intensity(density: TrajectoryPMBM, truths: list[TrueTrajectory]) -> np.ndarray:
    """(n,) log lambda(Y_j) of the undetected trajectories' Poisson process (ended ones included)."""
    n = len(truths)
    out = np.full(n, -math.inf)
    p_s, p_d, k = density.p_survival, density.p_detection, density.time
    for j, y in enumerate(truths):
        comps = np.flatnonzero(density.ppp_start == y.start)
        terms = []
        for c in comps.tolist():
            cut = int(density.ppp_cut[c])
            hi = cut - 1 if cut >= 0 else k - 1
            e, b = y.end, y.start
            misses = e - b + 1 if (e < k or density.updated) else e - b
            lw = (
                _log(float(density.ppp_weight[c]))
                + float(_times(e - b, _log(p_s)))
                + float(_times(misses, _log1m(p_d)))
            )
            if e <= hi:
                lw += _log1m(p_s)
            elif not (e == k and cut < 0):
                continue
            if lw == -math.inf:
                continue
            root = int(density.chain(int(density.ppp_node[c]))[0])
            lw += prior_chain_logpdf(
                density.node_mean[root], density.node_cov[root], density.F, density.Q, y.states
            )
            terms.append(lw)
        if terms:
            out[j] = float(logsumexp(terms))
    return out


def trajectory_density_nll(
    density: TrajectoryPMBM, truths: list[TrueTrajectory], q: int = 10, exact: bool = False
) -> TrajectoryDensityNLL:
    """``-log f(Y)`` of the true set of trajectories Y under the trajectory PMBM ``density``.

    ``f(Y) = sum_h w_h exp(-Lambda) sum_theta prod_{l unmatched} (1 - r_l)
    prod_{(j -> l)} r_l P_l(end_j) p_l(y_j) prod_{j unmatched} lambda(Y_j)``,
    where ``p_l(y_j)`` is the Gaussian density of the states (zero if the
    start differs). Per hypothesis, the sum over theta is the
    ``(n, m_h + n)`` assignment sum of :func:`nllbench.engine.trajectory_nll.assignment_sum`
    (the Q best, certified bounds, the exact subset DP when ``exact``); the
    hypotheses are summed in log space.
    """
    if int(q) != q or q < 1:
        raise ValueError(f"q: expected a positive integer, got {q!r}")
    loc, pres, alone = pair_weights(density, truths)
    log_lam = undetected_log_intensity(density, truths)
    rate = density.total_undetected()
    H = density.assoc.shape[0]
    vals, lows, exs, completes, bests = [], [], [], [], []
    for h in range(H):
        members = density.assoc[h][density.assoc[h] >= 0]
        w = TrajectoryWeights(loc[members], pres[members], alone[members], log_lam, rate)
        problem = association_problem_from_weights(w.log_w, w.alone, w.log_lam, rate)
        res = assignment_sum(problem, int(q), exact)
        vals.append(res.value)
        lows.append(res.lower)
        exs.append(res.exact if exact else math.nan)
        completes.append(res.complete)
        bests.append((w, res))
    lw = density.log_weights
    vals, lows = np.array(vals), np.array(lows)
    value = -float(logsumexp(lw - vals)) if np.any(vals < math.inf) else math.inf
    lower = -float(logsumexp(lw - lows)) if np.any(lows < math.inf) else math.inf
    exact_value = None
    if exact:
        ex = np.array(exs)
        exact_value = -float(logsumexp(lw - ex)) if np.any(ex < math.inf) else math.inf
    h_best = int(np.argmin(vals - lw))
    w, res = bests[h_best]
    if value == math.inf or res.costs.size == 0:
        terms = dict.fromkeys(TRAJECTORY_DENSITY_TERMS, 0.0)
        terms["undetected" if len(truths) else "false"] = math.inf
    else:
        best_cost = float(res.costs[0])
        parts = decompose(w, res.columns[0], best_cost)
        mixture = -float(lw[h_best]) + 0.0
        terms = {k: parts[k] for k in ("localization", "presence", "false", "undetected")}
        terms["mixture"] = mixture
        terms["association"] = value - (best_cost + mixture)
    return TrajectoryDensityNLL(value, lower, value, exact_value, bool(all(completes)), terms, h_best)


def smoothed_means(density: TrajectoryPMBM, nodes: np.ndarray) -> np.ndarray:
    """(L, d) means of the joint Gaussian of a chain (oldest first): the RTS smoother's means.

    ``mean_L = m_L``; ``mean_s = G_s mean_{s+1} + o_s`` backwards (the kernels of :func:`backward_kernels`).
    """
    m, P = density.node_mean[nodes], density.node_cov[nodes]
    out = np.empty_like(m)
    out[-1] = m[-1]
    if nodes.size > 1:
        G, o, _ = backward_kernels(m[:-1], P[:-1], density.F, density.Q)
        for s in range(nodes.size - 2, -1, -1):
            out[s] = G[s] @ out[s + 1] + o[s]
    return out


def estimate_trajectories(density: TrajectoryPMBM, threshold: float = 0.4) -> tuple[list, list]:
    """Point estimate of the set of trajectories: per step, (states (m_k, d), labels (m_k,)).

    The rule of the MATLAB ``TPMBM_all_estimate1.m``: in the global hypothesis
    of largest weight, every Bernoulli with existence above ``threshold``; its
    most probable end time; the mean of its states up to then (here the exact
    smoothed means of the chain). Labels are the tracks' labels.
    """
    K, d = density.time + 1, density.F.shape[0]
    states: list[list] = [[] for _ in range(K)]
    labels: list[list] = [[] for _ in range(K)]
    h = int(np.argmax(density.log_weights))
    log_r, _ = density.bernoulli_terms()
    for s in density.assoc[h][density.assoc[h] >= 0].tolist():
        if not np.exp(log_r[s]) > threshold:
            continue
        b = int(density.start[s])
        ends = np.arange(b, K)
        lu = bernoulli_log_end(density, s, ends)
        e = int(ends[int(np.argmax(lu))])
        chain = density.chain(int(density.node[s]))[: e - b + 1]
        means = smoothed_means(density, chain)
        for i, t in enumerate(range(b, e + 1)):
            states[t].append(means[i])
            labels[t].append(int(density.track_labels[density.track[s]]))
    return (
        [np.array(x).reshape(-1, d) for x in states],
        [np.array(x, dtype=np.int64) for x in labels],
    )
