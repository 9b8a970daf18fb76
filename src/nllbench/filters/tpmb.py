"""Trajectory PMB filter for the set of all trajectories (linear-Gaussian, constant P_S and P_D).

Garcia-Fernandez, Svensson, Williams, Xia, Granstrom, "Trajectory Poisson
multi-Bernoulli filters", IEEE Trans. Signal Process. 68, 2020
(arXiv:2003.12767); published MATLAB code Agarciafernandez/MTT, folder
"TPMBM filter", ``TPMB_all_filter.m`` and ``TPMB_all_projection.m``.

Each step is the trajectory PMBM update (:mod:`nllbench.filters.tpmbm`)
followed by the projection of the PMBM posterior to one PMB: each track's
local hypotheses (its missed-detection Bernoulli and one Bernoulli per
detection) become one Bernoulli whose existence is their hypothesis-weighted
sum and whose single-trajectory density minimises the Kullback-Leibler
divergence from their mixture (per end time, the moment-matched Gaussian).

Why this stays exact and O(1) per track and step: after a projection a track
has one Bernoulli, so the update's local hypotheses of a track all continue
the same chain (the detection children are written beside the predicted
node, with the same parent). Their alive trajectory densities therefore
share every Rauch-Tung-Striebel backward kernel and differ only in the
Gaussian of the last state; the moment-matched Gaussian of the whole
trajectory is the moment-matched last state times the same kernels (one new
node). The trajectories that ended before now come from the
missed-detection hypothesis only and keep its density; the end-time
distribution of the projection is kept as an ended-prefix segment
(:class:`nllbench.filters.tpmbm.SegmentStore`, one per projection that mixes an
ended part in). docs/trajectory_filters.md ("The trajectory PMB filter").
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.special import logsumexp

from nllbench.engine.trajectory_density import alive_existence, bernoulli_end_terms, end_masses
from nllbench.filters.gaussian import moment_match
from nllbench.filters.loop import FilterSteps
from nllbench.filters.pmbm import PMBMSettings
from nllbench.filters.tpmbm import TPMBMState, run_final_with, run_steps_with
from nllbench.filters.tpmbm import reduce as reduce_tpmbm
from nllbench.simulation.models import Model


@dataclass(frozen=True)
class _PoolTerms:
    """Per Bernoulli of a corrected state (S,): existence now, alive existence, geometric ended mass, a."""

    r_now: np.ndarray
    ra: np.ndarray
    ended_geo: np.ndarray
    a: np.ndarray
    log_r: np.ndarray
    log_D: np.ndarray


def _pool_terms(state: TPMBMState, model: Model) -> _PoolTerms:
    k, p_s, p_d = state.time, model.p_survival, model.p_detection
    a = state.a_last()
    log_r, log_D = bernoulli_end_terms(state.r_last, state.t_last, state.cut, k, True, p_s, p_d, a)
    ra = alive_existence(state.r_last, state.t_last, state.cut, k, True, p_s, p_d, a)
    ended_geo, _ = end_masses(state.t_last, state.cut, k, True, p_s, p_d)
    return _PoolTerms(np.exp(log_r), ra, ended_geo, a, log_r, log_D)


def _merged(state: TPMBMState, t: int, local: np.ndarray, W: np.ndarray, terms: _PoolTerms):
    """The projection of track ``t``'s local hypotheses ``local`` (weights ``W``), several of them.

    Returns ``(s, R, node, segment)``: the pool slot that takes the projected
    Bernoulli (the missed-detection child's, else the first), its existence,
    the moment-matched last state ``(parent, mean, cov)`` or the one alive
    child's node index, and the new prefix segment ``(t0, parent, beta,
    ended)`` or None.
    """
    k = state.time
    R = float(np.sum(W * terms.r_now[local]))
    alive_w = W * terms.ra[local]
    A = float(alive_w.sum())
    miss = local[state.t_last[local] < k]
    if miss.size > 1 or A <= 0:
        raise ValueError(
            f"state: track {t} has {miss.size} missed-detection hypotheses and alive mass {A}; the"
            " projection expects a corrected trajectory PMB (one Bernoulli per track before the update)"
        )
    parents = state.nodes.parents(state.node[local])
    if np.any(parents != parents[0]):
        raise ValueError(f"state: the local hypotheses of track {t} do not continue one chain")
    s = int(miss[0]) if miss.size else int(local[0])
    use = alive_w > 0
    if use.sum() > 1:
        node = (int(parents[0]), *moment_match(alive_w[use], *state.nodes.gaussians(state.node[local[use]])))
    else:
        node = int(state.node[local[use][0]])
    # the missed-detection child's ended mass: its old prefix (1 - a) and its geometric part a E
    pre, geo = (1.0 - terms.a[s], terms.a[s] * terms.ended_geo[s]) if miss.size else (0.0, 0.0)
    segment = None
    if pre + geo > 0:
        W_miss = float(W[local == s][0])
        ended = W_miss * math.exp(math.log(state.r_last[s]) + math.log(pre + geo) - terms.log_D[s]) / R
        if ended > 0:
            segment = (int(state.t_last[s]), int(state.prefix[s]), pre / (pre + geo), min(ended, _BELOW_ONE))
    return s, R, node, segment


_BELOW_ONE = float(np.nextafter(1.0, 0.0))


def project(state: TPMBMState, model: Model) -> TPMBMState:
    """The trajectory PMB closest (Kullback-Leibler) to a corrected trajectory PMBM: one hypothesis.

    A track with one local hypothesis keeps it, its existence scaled by the
    weight of the hypotheses that hold it (the end-time distribution given
    existence does not change). A track with several: existence ``R = sum_c
    W_c r_c``; alive at ``time`` with ``A = sum_c W_c r_c P_c(alive)``, its
    last state the Gaussian moment-matched with those weights (a new node
    beside the children, same parent); ended before ``time`` with ``R - A``,
    with the missed-detection child's end-time distribution and densities (a
    new prefix segment). ``W_c``: the normalised weight of the hypotheses
    holding local hypothesis c.
    """
    w = np.exp(state.log_weights - logsumexp(state.log_weights))
    H, T = state.assoc.shape
    if H == 1 and abs(w[0] - 1.0) < 1e-15:
        return state.replace(log_weights=np.zeros(1))
    k = state.time
    terms = _pool_terms(state, model)
    out = {name: getattr(state, name).copy() for name in ("r_last", "t_last", "cut", "node", "prefix")}
    pick = np.full(T, -1)  # the pool slot of each track's projected Bernoulli (-1: held by no hypothesis)
    new_nodes, new_segs = [], []
    for t in range(T):
        col = state.assoc[:, t]
        held = col >= 0
        if not held.any():
            continue
        local, inverse = np.unique(col[held], return_inverse=True)
        W = np.zeros(local.size)
        np.add.at(W, inverse.ravel(), w[held])
        if local.size == 1:
            s = pick[t] = int(local[0])
            out["r_last"][s] = _rescaled_r_last(
                state, s, W[0] * terms.r_now[s], terms.log_r[s], terms.log_D[s]
            )
            continue
        s, R, node, segment = _merged(state, t, local, W, terms)
        pick[t] = s
        out["r_last"][s], out["t_last"][s], out["cut"][s], out["prefix"][s] = R, k, -1, -1
        if isinstance(node, tuple):
            new_nodes.append((s, *node))
        else:
            out["node"][s] = node
        if segment is not None:
            new_segs.append((s, *segment))
    if new_nodes:
        s_idx, parent, mean, cov = (np.array(c) for c in zip(*new_nodes, strict=True))
        out["node"][s_idx] = state.nodes.append(k, parent, mean, cov)
    if new_segs:
        s_idx, t0, parent, beta, ended = (np.array(c) for c in zip(*new_segs, strict=True))
        out["prefix"][s_idx] = state.segs.append(t0, np.full(s_idx.size, k), parent, beta, ended)
    tracks = np.flatnonzero(pick >= 0)
    pick = pick[tracks]
    n = tracks.size
    return state.replace(
        start=state.start[pick],
        r_last=np.minimum(out["r_last"][pick], 1.0),
        t_last=out["t_last"][pick],
        cut=out["cut"][pick],
        node=out["node"][pick],
        prefix=out["prefix"][pick],
        track=np.arange(n),
        track_labels=state.track_labels[tracks],
        assoc=np.arange(n)[None, :],
        log_weights=np.zeros(1),
    )


def _rescaled_r_last(state: TPMBMState, s: int, r_new: float, log_r: float, log_D: float) -> float:
    """``r_last`` that gives Bernoulli ``s`` the existence ``r_new`` now, its end-time law unchanged.

    With ``M = r D / r_last`` (the end masses' total), ``r = r_last M / (1 - r_last (1 - M))``, so
    ``r_last = r / (M + r (1 - M))``.
    """
    r_last = float(state.r_last[s])
    if r_new == math.exp(log_r):
        return r_last
    M = math.exp(log_r + log_D) / r_last
    return r_new / (M + r_new * (1 - M))


def reduce(state: TPMBMState, model: Model, settings: PMBMSettings) -> TPMBMState:
    """Project to one PMB before or after pruning and capping the hypotheses (``project_before_cap``).

    Before: the order of ``TPMB_all_filter.m`` (update, projection, estimate,
    pruning); after: the per-frame PMB filter's default. Either way the
    trajectory PMBM's reduction then applies the floors to the projected
    Bernoullis (with one hypothesis left, nothing else of it acts).
    """
    if settings.project_before_cap:
        return reduce_tpmbm(project(state, model), model, settings)
    return reduce_tpmbm(project(reduce_tpmbm(state, model, settings), model), model, settings)


def run_tpmb(
    measurements: Sequence[np.ndarray],
    model: Model,
    settings: PMBMSettings = PMBMSettings(),
    progress: Callable[[int], None] | None = None,
) -> FilterSteps:
    """The trajectory PMB filter's state after each update (``states[k].to_density(model)``)."""
    return run_steps_with(reduce, measurements, model, settings, progress)


def run_tpmb_final(
    measurements: Sequence[np.ndarray],
    model: Model,
    settings: PMBMSettings = PMBMSettings(),
    progress: Callable[[int], None] | None = None,
) -> TPMBMState:
    """The trajectory PMB filter's last state (the density of the whole run), keeping no earlier state."""
    return run_final_with(reduce, measurements, model, settings, progress)
