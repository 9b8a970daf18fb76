"""Trajectory PMBM filter for the set of all trajectories (linear-Gaussian, constant P_S and P_D).

Granstrom, Svensson, Xia, Williams, Garcia-Fernandez, "Poisson multi-Bernoulli
mixtures for sets of trajectories", IEEE TAES 61(2), 2025 (arXiv:1912.08718),
the filter for the set of all trajectories; the published MATLAB code
(Agarciafernandez/MTT, folder "TPMBM filter", ``TPMBM_all_filter.m``) fixes
the choices the paper leaves open, which are the defaults here:

* a new Bernoulli takes the trajectory of the gated undetected component of
  largest weight (``TPMBM_all_update.m``: absorption), its existence from all
  gated components;
* the hypotheses, gate and floors are the PMBM filter's (:class:`PMBMSettings`).

Differences, each for an exact likelihood (docs/trajectory_filters.md):

* the whole trajectory is updated exactly (no L-scan window): the joint Gaussian
  is kept as the filtered density now plus Rauch-Tung-Striebel backward
  kernels (:mod:`nllbench.engine.trajectory_density`), O(1) per step and
  Bernoulli;
* undetected trajectories that have ended are kept (in closed form), so a truth
  never detected has non-zero density;
* a Bernoulli whose alive existence ``r P(alive)`` falls below
  ``existence_floor`` keeps its ended part (the MATLAB code's ``T_alive``
  marks it dead the same way), an undetected component whose alive weight falls
  to ``ppp_floor`` keeps its ended part.

State layout: an append-only node store (never changed once written: a state
refers to the nodes written before it), and arrays for the Bernoullis,
hypotheses and undetected components (see :class:`TPMBMState`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from scipy.special import logsumexp

from nllbench.engine.assignment import murty
from nllbench.engine.densities import PMBM, PPP, MultiBernoulli
from nllbench.engine.gaussian_mixture import GaussianMixture, Gaussians
from nllbench.engine.trajectory_density import (
    TrajectoryPMBM,
    alive_at_last,
    alive_existence,
    bernoulli_end_terms,
    ppp_masses,
)
from nllbench.filters.gaussian import innovation, kf_predict, log_likelihood, mahalanobis2, updated_means
from nllbench.filters.loop import FilterSteps, run_steps
from nllbench.filters.pmbm import PMBMSettings, merge_duplicate_hypotheses
from nllbench.simulation.models import Model

#: The trajectory filters built on this module's steps: the PMBM, and the PMB (nllbench.filters.tpmb).
TRAJECTORY_VARIANTS = ("tpmbm", "tpmb")


class NodeStore:
    """Append-only store of Gaussian nodes (time, parent, mean, cov), in arrays of doubling capacity.

    Appending never changes a written node, so every filter state (which only
    refers to nodes written before it) stays valid: the steps remain pure in
    what they return. An append costs O(nodes appended) amortised; ``arrays()``
    returns views of the written prefix (a later append that grows the arrays
    leaves earlier views on the old, unchanged buffers).
    """

    def __init__(self, dim: int, capacity: int = 256) -> None:
        self.dim = dim
        self.size = 0
        self._time = np.empty(capacity, dtype=np.int64)
        self._parent = np.empty(capacity, dtype=np.int64)
        self._mean = np.empty((capacity, dim))
        self._cov = np.empty((capacity, dim, dim))

    def append(self, time, parent, mean, cov) -> np.ndarray:
        """Write nodes; returns their indices."""
        n = mean.shape[0]
        need = self.size + n
        if need > self._time.shape[0]:
            cap = max(need, 2 * self._time.shape[0])
            for name in ("_time", "_parent", "_mean", "_cov"):
                old = getattr(self, name)
                new = np.empty((cap, *old.shape[1:]), dtype=old.dtype)
                new[: self.size] = old[: self.size]
                setattr(self, name, new)
        sl = slice(self.size, need)
        self._time[sl] = time
        self._parent[sl] = parent
        self._mean[sl] = mean
        self._cov[sl] = cov
        self.size = need
        return np.arange(sl.start, sl.stop)

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(time (N,), parent (N,), mean (N, d), cov (N, d, d)) of the nodes written so far (views)."""
        n = self.size
        return self._time[:n], self._parent[:n], self._mean[:n], self._cov[:n]

    def gaussians(self, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return self._mean[idx], self._cov[idx]

    def parents(self, idx: np.ndarray) -> np.ndarray:
        return self._parent[idx]


class SegmentStore:
    """Append-only store of ended-prefix segments (t0, t1, parent, beta, ended) of the trajectory PMB.

    See :class:`nllbench.engine.trajectory_density.TrajectoryPMBM` for their
    meaning; like :class:`NodeStore`, a written segment never changes.
    """

    def __init__(self, capacity: int = 64) -> None:
        self.size = 0
        self._int = np.empty((capacity, 3), dtype=np.int64)
        self._float = np.empty((capacity, 2))

    def append(self, t0, t1, parent, beta, ended) -> np.ndarray:
        """Write segments (arrays of equal length); returns their indices."""
        n = np.asarray(t0).shape[0]
        need = self.size + n
        if need > self._int.shape[0]:
            cap = max(need, 2 * self._int.shape[0])
            for name in ("_int", "_float"):
                old = getattr(self, name)
                new = np.empty((cap, old.shape[1]), dtype=old.dtype)
                new[: self.size] = old[: self.size]
                setattr(self, name, new)
        sl = slice(self.size, need)
        self._int[sl] = np.column_stack([t0, t1, parent])
        self._float[sl] = np.column_stack([beta, ended])
        self.size = need
        return np.arange(sl.start, sl.stop)

    def arrays(self) -> tuple[np.ndarray, ...]:
        """(t0, t1, parent, beta, ended), each (G,), of the segments written so far."""
        i, f = self._int[: self.size], self._float[: self.size]
        return i[:, 0], i[:, 1], i[:, 2], f[:, 0], f[:, 1]

    def ended(self) -> np.ndarray:
        return self._float[: self.size, 1]


@dataclass(frozen=True)
class EndedBernoullis:
    """Bernoullis that ended for good and that every global hypothesis holds: a factor of all of them.

    start, t_last, cut, node, label, prefix : (F,) int; r_last : (F,) float (see :class:`TPMBMState`).
    Their existence and end time no longer change, and they can no longer be
    detected, so they leave the hypotheses' bookkeeping (whose cost would
    otherwise grow with every trajectory ever seen) and rejoin every
    hypothesis in :meth:`TPMBMState.to_density`.
    """

    start: np.ndarray
    r_last: np.ndarray
    t_last: np.ndarray
    cut: np.ndarray
    node: np.ndarray
    label: np.ndarray
    prefix: np.ndarray

    @classmethod
    def empty(cls) -> EndedBernoullis:
        e = np.empty(0, dtype=np.int64)
        return cls(e, np.empty(0), e, e, e, e, e)

    def __len__(self) -> int:
        return int(self.start.shape[0])

    def extended(self, start, r_last, t_last, cut, node, label, prefix) -> EndedBernoullis:
        new = (start, r_last, t_last, cut, node, label, prefix)
        old = (self.start, self.r_last, self.t_last, self.cut, self.node, self.label, self.prefix)
        return EndedBernoullis(*(np.concatenate([a, b]) for a, b in zip(old, new, strict=True)))


@dataclass(frozen=True)
class TPMBMState:
    """Filter state at step ``time`` (``updated``: after that step's update).

    nodes : NodeStore (shared, append-only)
    start, r_last, t_last, cut, node, track : (S,) Bernoulli pool (see
        :class:`nllbench.engine.trajectory_density.TrajectoryPMBM`)
    track_labels (T,), assoc (H, T), log_weights (H,) : global hypotheses
    ppp_start, ppp_weight, ppp_node, ppp_cut : (J,) undetected components
    next_label : int
    ended : EndedBernoullis held by every hypothesis (not in the pool)
    prefix : (S,) int ended-prefix segment of each Bernoulli (-1: none; only the trajectory PMB writes them)
    segs : SegmentStore (shared, append-only)
    """

    time: int
    updated: bool
    nodes: NodeStore = field(repr=False)
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
    next_label: int
    ended: EndedBernoullis = field(default_factory=EndedBernoullis.empty)
    prefix: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    segs: SegmentStore = field(default_factory=SegmentStore, repr=False)

    def a_last(self) -> np.ndarray:
        """(S,) probability of being alive at ``t_last`` given existence (1 without a prefix)."""
        return alive_at_last(self.prefix, self.segs.ended())

    def replace(self, **changes) -> TPMBMState:
        fields = {k: getattr(self, k) for k in self.__dataclass_fields__}
        fields.update(changes)
        return TPMBMState(**fields)

    def to_density(self, model: Model) -> TrajectoryPMBM:
        """The posterior over the set of all trajectories (normalised hypothesis weights)."""
        t, p, m, P = self.nodes.arrays()
        lw = self.log_weights - logsumexp(self.log_weights)
        e, S, T, H = self.ended, self.start.shape[0], self.track_labels.shape[0], self.assoc.shape[0]
        n = len(e)
        assoc = np.concatenate([self.assoc, np.tile(S + np.arange(n), (H, 1))], axis=1)
        return TrajectoryPMBM(
            self.time, self.updated, model.F, model.Q, model.p_survival, model.p_detection, t, p, m, P,
            np.concatenate([self.start, e.start]), np.concatenate([self.r_last, e.r_last]),
            np.concatenate([self.t_last, e.t_last]), np.concatenate([self.cut, e.cut]),
            np.concatenate([self.node, e.node]), np.concatenate([self.track, T + np.arange(n)]),
            np.concatenate([self.track_labels, e.label]), assoc, lw,
            self.ppp_start, self.ppp_weight, self.ppp_node, self.ppp_cut,
            np.concatenate([self.prefix, e.prefix]), *self.segs.arrays(),
        )  # fmt: skip

    def alive_marginal(self, model: Model) -> PMBM:
        """The per-frame posterior now (the alive trajectories' current states): an ``nb.PMBM``.

        Bernoulli existence ``r P(alive)``, density the alive node; the PPP the
        alive undetected components. Where the filters' approximations agree,
        this equals the PMBM filter's posterior (tests/unit/filters/test_trajectory_pmbm_filter.py).
        """
        r_alive = alive_existence(
            self.r_last, self.t_last, self.cut, self.time, self.updated, model.p_survival,
            model.p_detection, self.a_last(),
        )  # fmt: skip
        m, P = self.nodes.gaussians(self.node)
        pool = MultiBernoulli(r_alive, Gaussians(m, P), self.track_labels[self.track])
        w = np.exp(self.log_weights - logsumexp(self.log_weights))
        members = [row[(row >= 0)] for row in self.assoc]
        members = [mm[r_alive[mm] > 0] for mm in members]
        a_w = _ppp_alive_weights(self, model)
        keep = a_w > 0
        pm, pP = self.nodes.gaussians(self.ppp_node[keep])
        ppp = PPP.from_mixture(GaussianMixture(a_w[keep], pm, pP))
        return PMBM.pooled(ppp, pool, members, w / w.sum())


def _ppp_alive_weights(state: TPMBMState, model: Model) -> np.ndarray:
    """(J,) alive weights of undetected components now: ``w P_S^(k - b) (1 - P_D)^misses`` (0 if cut)."""
    k, b = state.time, state.ppp_start
    misses = k - b + (1 if state.updated else 0)
    with np.errstate(divide="ignore"):
        log_w = (
            np.log(state.ppp_weight)
            + _times(k - b, _log(model.p_survival))
            + _times(misses, _log1m(model.p_detection))
        )
    return np.where(state.ppp_cut >= 0, 0.0, np.exp(log_w))


def _times(count, log_value: float) -> np.ndarray:
    """``count * log_value`` with 0 where the count is 0 (never 0 * -inf = NaN)."""
    count = np.asarray(count)
    if log_value == -math.inf:
        return np.where(count > 0, -math.inf, 0.0)
    return count * log_value


def _log(p: float) -> float:
    return math.log(p) if p > 0 else -math.inf


def _log1m(p: float) -> float:
    return math.log1p(-p) if p < 1 else -math.inf


def initial_state(model: Model) -> TPMBMState:
    """The prior before step 0: the initial objects as undetected components born at step 0."""
    nodes = NodeStore(4)
    J = len(model.initial)
    idx = nodes.append(0, np.full(J, -1), model.initial.means, model.initial.covs)
    e_i = np.empty(0, dtype=np.int64)
    return TPMBMState(
        0, False, nodes, e_i, np.empty(0), e_i, e_i, e_i, e_i, e_i, np.empty((1, 0), dtype=np.int64),
        np.zeros(1), np.zeros(J, dtype=np.int64), model.initial.weights.copy(), idx, np.full(J, -1),
        0,
    )  # fmt: skip


def predict(state: TPMBMState, model: Model) -> TPMBMState:
    """Move every alive branch one step (a new node whose parent is the current one); Poisson birth."""
    k = state.time + 1
    nodes = state.nodes
    alive = np.flatnonzero(state.cut < 0)
    node = state.node.copy()
    if alive.size:
        uniq, inv = np.unique(state.node[alive], return_inverse=True)
        m, P = kf_predict(*nodes.gaussians(uniq), model.F, model.Q)
        node[alive] = nodes.append(k, uniq, m, P)[inv]
    ppp_node = state.ppp_node.copy()
    ppp_alive = np.flatnonzero(state.ppp_cut < 0)
    if ppp_alive.size:
        m, P = kf_predict(*nodes.gaussians(state.ppp_node[ppp_alive]), model.F, model.Q)
        ppp_node[ppp_alive] = nodes.append(k, state.ppp_node[ppp_alive], m, P)
    B = len(model.birth)
    born = nodes.append(k, np.full(B, -1), model.birth.means, model.birth.covs)
    return state.replace(
        time=k,
        updated=False,
        node=node,
        ppp_start=np.concatenate([state.ppp_start, np.full(B, k)]),
        ppp_weight=np.concatenate([state.ppp_weight, model.birth.weights]),
        ppp_node=np.concatenate([ppp_node, born]),
        ppp_cut=np.concatenate([state.ppp_cut, np.full(B, -1)]),
    )


def correct(state: TPMBMState, Z: np.ndarray, model: Model, settings: PMBMSettings) -> TPMBMState:
    """Every Murty-ranked global hypothesis of the update (unnormalised, unpruned).

    Missed detection keeps a Bernoulli's index (its existence and end time are
    closed forms of the step); a detection writes a node at this step beside
    the predicted one (same parent) and starts a Bernoulli with ``r_last = 1``.
    """
    k, nz, p_d = state.time, Z.shape[0], model.p_detection
    log_kappa = _log(model.clutter_intensity)
    S = state.start.shape[0]
    ra = alive_existence(
        state.r_last, state.t_last, state.cut, k, False, model.p_survival, p_d, state.a_last()
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        log_ra = np.log(ra)
        l_miss = np.log1p(-ra * p_d)
    # detection children
    l_det = np.full((S, nz), -math.inf)
    det_index = np.full((S, nz), -1)
    new_parts: list[tuple] = []
    n_children = 0
    live = np.flatnonzero((state.cut < 0) & (ra > 0))
    if live.size and nz and p_d > 0:
        m, P = state.nodes.gaussians(state.node[live])
        inn = innovation(m, P, model.H, model.R)
        gated = mahalanobis2(inn, Z) < settings.gate
        ll = (log_ra[live] + math.log(p_d))[:, None] + log_likelihood(inn, Z)
        ll = np.where(gated, ll, -math.inf)
        l_det[live] = ll
        si, ji = np.nonzero(ll > -math.inf)
        if si.size:
            m_upd = updated_means(m, inn, Z)[si, ji]
            parents = state.nodes.parents(state.node[live[si]])
            new_nodes = state.nodes.append(k, parents, m_upd, inn.P_upd[si])
            det_index[live[si], ji] = S + np.arange(si.size)
            sth = live[si]
            new_parts.append((state.start[sth], np.ones(si.size), state.track[sth], new_nodes))
            n_children = si.size
    # new tracks from the undetected components (absorption into the heaviest gated one)
    T = state.track_labels.shape[0]
    l_new = np.full(nz, log_kappa)
    new_index = np.full(nz, -1)
    a_w = _ppp_alive_weights(state, model)
    comps = np.flatnonzero(a_w > 0)
    if nz and comps.size and p_d > 0:
        m, P = state.nodes.gaussians(state.ppp_node[comps])
        inn = innovation(m, P, model.H, model.R)
        log_q = np.log(p_d * a_w[comps])[:, None] + log_likelihood(inn, Z)
        log_q = np.where(mahalanobis2(inn, Z) < settings.gate, log_q, -math.inf)
        log_e = logsumexp(log_q, axis=0)
        l_new = np.logaddexp(log_kappa, log_e)
        js = np.flatnonzero(log_e > -math.inf)
        if js.size:
            best = np.argmax(log_q[:, js], axis=0)
            m_upd = updated_means(m, inn, Z)[best, js]
            c = comps[best]
            parents = state.nodes.parents(state.ppp_node[c])
            new_nodes = state.nodes.append(k, parents, m_upd, inn.P_upd[best])
            r_new = np.exp(log_e[js] - l_new[js])
            new_index[js] = S + n_children + np.arange(js.size)
            new_parts.append((state.ppp_start[c], r_new, T + js, new_nodes))
    starts = [state.start] + [p[0] for p in new_parts]
    r_last = [state.r_last] + [p[1] for p in new_parts]
    tracks = [state.track] + [p[2] for p in new_parts]
    nodes = [state.node] + [p[3] for p in new_parts]
    n_new = sum(p[0].shape[0] for p in new_parts)
    rows, logw = _ranked_associations(state, l_miss, l_det, det_index, l_new, new_index, settings)
    return state.replace(
        updated=True,
        start=np.concatenate(starts).astype(np.int64),
        r_last=np.concatenate(r_last).astype(float),
        t_last=np.concatenate([state.t_last, np.full(n_new, k)]).astype(np.int64),
        cut=np.concatenate([state.cut, np.full(n_new, -1)]).astype(np.int64),
        prefix=np.concatenate([state.prefix, np.full(n_new, -1)]).astype(np.int64),
        node=np.concatenate(nodes).astype(np.int64),
        track=np.concatenate(tracks).astype(np.int64),
        track_labels=np.concatenate([state.track_labels, state.next_label + np.arange(nz)]),
        assoc=rows,
        log_weights=logw,
        next_label=state.next_label + nz,
    )


def _ranked_associations(state, l_miss, l_det, det_index, l_new, new_index, settings):
    """Murty's best associations per hypothesis, its share of ``max_hypotheses`` each (as the PMBM filter)."""
    nz, T = l_new.shape[0], state.track_labels.shape[0]
    weights = np.exp(state.log_weights - logsumexp(state.log_weights))
    rows, logw = [], []
    for h in range(state.assoc.shape[0]):
        held = np.flatnonzero(state.assoc[h] >= 0)
        s_held = state.assoc[h, held]
        # Bernoullis that cannot be detected (alive branch cut, or r P(alive) = 0) stay as they are
        # and leave the assignment problem: its size follows the live trajectories, not all of them
        live = (l_miss[s_held] != 0.0) | np.isfinite(l_det[s_held]).any(axis=1)
        present, s = held[live], s_held[live]
        sure = l_miss[s] == -math.inf  # alive surely and P_D = 1: must be detected
        cost = np.full((nz, s.size + nz), np.inf)
        if s.size:
            lm = np.where(sure, 0.0, l_miss[s])
            cost[:, : s.size] = -(l_det[s].T - lm[None, :])
        cost[np.arange(nz), s.size + np.arange(nz)] = -l_new
        mandatory = np.concatenate([sure, np.zeros(nz, dtype=bool)])
        k = max(1, math.ceil(settings.max_hypotheses * weights[h]))
        ranked = murty(cost, k, mandatory)
        base = state.log_weights[h] + float(np.sum(l_miss[s][~sure]))
        cols = ranked.columns.reshape(ranked.costs.shape[0], nz)  # (k, nz): all associations at once
        block = np.full((cols.shape[0], T + nz), -1)
        block[:, held] = s_held  # missed-detection children keep the parent index
        kk, jj = np.nonzero(cols < s.size)
        c = cols[kk, jj]
        block[kk, present[c]] = det_index[s[c], jj]
        kk, jj = np.nonzero(cols >= s.size)
        block[kk, T + jj] = new_index[jj]
        rows.extend(block)
        logw.extend((base - ranked.costs).tolist())
    if not rows:
        raise ValueError("measurements: no global hypothesis can explain this scan (zero clutter intensity?)")
    return np.array(rows, dtype=np.int64), np.array(logw)


def reduce(state: TPMBMState, model: Model, settings: PMBMSettings) -> TPMBMState:
    """Prune and cap the hypotheses; cut improbable alive branches; drop empty Bernoullis; compact."""
    lw = state.log_weights - logsumexp(state.log_weights)
    order = np.argsort(-lw, kind="stable")
    keep = order[np.exp(lw[order]) >= settings.hypothesis_floor][: settings.max_hypotheses]
    if keep.size == 0:
        keep = order[:1]
    assoc = state.assoc[keep].copy()
    lw = lw[keep]
    # the alive branch of a Bernoulli with r P(alive) below the floor is dropped (its ended part stays)
    k, p_s, p_d = state.time, model.p_survival, model.p_detection
    a = state.a_last()
    ra = alive_existence(state.r_last, state.t_last, state.cut, k, True, p_s, p_d, a)
    cut = np.where((state.cut < 0) & (ra < settings.existence_floor), k, state.cut)
    log_r, _ = bernoulli_end_terms(state.r_last, state.t_last, cut, k, True, p_s, p_d, a)
    small = np.zeros(state.start.shape[0] + 1, dtype=bool)
    small[:-1] = np.exp(log_r) < settings.existence_floor
    assoc[small[assoc]] = -1
    out = _set_aside_ended(_compact(state.replace(cut=cut), assoc, lw - logsumexp(lw)))
    # undetected components: the alive branch at or below ppp_floor is cut; empty components go
    a_w = _ppp_alive_weights(out, model)
    ppp_cut = np.where((out.ppp_cut < 0) & (a_w <= settings.ppp_floor), k, out.ppp_cut)
    ended, alive_w = ppp_masses(out.ppp_start, out.ppp_weight, ppp_cut, k, True, p_s, p_d)
    left = (ended + alive_w) > 0
    return out.replace(
        ppp_start=out.ppp_start[left],
        ppp_weight=out.ppp_weight[left],
        ppp_node=out.ppp_node[left],
        ppp_cut=ppp_cut[left],
    )


def _set_aside_ended(state: TPMBMState) -> TPMBMState:
    """Move tracks whose Bernoulli is the same ended one in every hypothesis to ``state.ended``."""
    A = state.assoc
    if A.shape[1] == 0:
        return state
    first = A[0]
    same = np.all(A == first[None, :], axis=0) & (first >= 0)
    tracks = np.flatnonzero(same)
    tracks = tracks[state.cut[first[tracks]] >= 0]
    if tracks.size == 0:
        return state
    s = first[tracks]
    ended = state.ended.extended(
        state.start[s],
        state.r_last[s],
        state.t_last[s],
        state.cut[s],
        state.node[s],
        state.track_labels[tracks],
        state.prefix[s],
    )
    keep = np.ones(A.shape[1], dtype=bool)
    keep[tracks] = False
    # the set-aside tracks' columns leave; _compact drops their Bernoullis and re-indexes the rest
    out = state.replace(ended=ended)
    A2 = A.copy()
    A2[:, ~keep] = -1
    return _compact(out, A2, state.log_weights)


def _compact(state: TPMBMState, assoc: np.ndarray, log_weights: np.ndarray) -> TPMBMState:
    """Merge duplicate hypotheses, drop unreferenced Bernoullis and empty tracks, re-index."""
    assoc, log_weights = merge_duplicate_hypotheses(assoc, log_weights)
    used_tracks = np.flatnonzero((assoc >= 0).any(axis=0))
    assoc = assoc[:, used_tracks]
    used = np.unique(assoc[assoc >= 0])
    remap = np.full(state.start.shape[0] + 1, -1)
    remap[used] = np.arange(used.size)
    track_remap = np.full(state.track_labels.shape[0], -1)
    track_remap[used_tracks] = np.arange(used_tracks.size)
    return state.replace(
        start=state.start[used],
        r_last=state.r_last[used],
        t_last=state.t_last[used],
        cut=state.cut[used],
        prefix=state.prefix[used],
        node=state.node[used],
        track=track_remap[state.track[used]],
        track_labels=state.track_labels[used_tracks],
        assoc=remap[assoc],
        log_weights=log_weights,
    )


def run_steps_with(
    reduce_step: Callable[[TPMBMState, Model, PMBMSettings], TPMBMState],
    measurements: Sequence[np.ndarray],
    model: Model,
    settings: PMBMSettings,
    progress: Callable[[int], None] | None,
) -> FilterSteps:
    """A trajectory filter's state after each update: predict, correct, then its reduction ``reduce_step``."""
    return run_steps(
        initial_state(model),
        lambda s: predict(s, model),
        lambda s, Z: correct(s, Z, model, settings),
        lambda s: reduce_step(s, model, settings),
        measurements,
        progress,
    )


def run_final_with(
    reduce_step: Callable[[TPMBMState, Model, PMBMSettings], TPMBMState],
    measurements: Sequence[np.ndarray],
    model: Model,
    settings: PMBMSettings,
    progress: Callable[[int], None] | None,
) -> TPMBMState:
    """A trajectory filter's last state (the density of the whole run), keeping no earlier state."""
    state = initial_state(model)
    for k, Z in enumerate(measurements):
        if k:
            state = predict(state, model)
        state = reduce_step(correct(state, Z, model, settings), model, settings)
        if progress:
            progress(k)
    return state


def run_tpmbm(
    measurements: Sequence[np.ndarray],
    model: Model,
    settings: PMBMSettings = PMBMSettings(),
    progress: Callable[[int], None] | None = None,
) -> FilterSteps:
    """The trajectory PMBM filter's state after each update (``states[k].to_density(model)``)."""
    return run_steps_with(reduce, measurements, model, settings, progress)


def run_tpmbm_final(
    measurements: Sequence[np.ndarray],
    model: Model,
    settings: PMBMSettings = PMBMSettings(),
    progress: Callable[[int], None] | None = None,
) -> TPMBMState:
    """The trajectory PMBM filter's last state (the density of the whole run), keeping no earlier state."""
    return run_final_with(reduce, measurements, model, settings, progress)
