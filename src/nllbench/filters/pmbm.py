"""Track-oriented PMBM filter and its PMB, MBM and MBM01 variants.

* PMBM: Garcia-Fernandez, Williams, Granstrom, Svensson, "Poisson
  multi-Bernoulli mixture filter: direct derivation and implementation",
  IEEE TAES 2018 (track-oriented form, Murty per global hypothesis).
* PMB: Williams, "Marginal multi-Bernoulli filters", IEEE TAES 2015: the
  PMBM update followed by the track-oriented projection to one MB.
* MBM: the PMBM update with no Poisson part and multi-Bernoulli birth.
* MBM01: the MBM with every Bernoulli expanded into existence 0 / 1
  hypotheses (the k best expansions per hypothesis), then pruned.

State layout (no Python object per Bernoulli): a pool of single-target
hypotheses (STH) with arrays ``r (S,)``, ``means (S, 4)``, ``covs (S, 4, 4)``
and ``track (S,)``; tracks carry stable integer labels; global hypotheses are
rows of ``assoc (H, T)`` (the STH of each track, -1 if absent) with
``log_weights (H,)``.

Over 600 lines because the four variants share every step (predict, update,
reduce, estimate) on that one state layout; a module per variant would copy
the layout's bookkeeping four times.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.special import logsumexp

from nllbench.engine.assignment import murty
from nllbench.engine.densities import PMBM, MultiBernoulli
from nllbench.engine.gaussian_mixture import GaussianMixture, Gaussians
from nllbench.filters.estimates import MIXTURE_RULES, Estimates, map_cardinality_choice
from nllbench.filters.gaussian import (
    LabelledIntensity,
    detection_terms,
    innovation,
    kf_predict,
    log_likelihood,
    mahalanobis2,
    moment_match,
    predict_intensity,
    updated_means,
)
from nllbench.filters.loop import FilterSteps, run_steps
from nllbench.options import MAX_CAP, option
from nllbench.simulation.models import Model

VARIANTS = ("pmbm", "pmb", "mbm", "mbm01")


@dataclass(frozen=True)
class PMBMSettings:
    """Settings of the PMBM family; the defaults are those of the PMBM reference code.

    gate : squared Mahalanobis distance for ellipsoidal gating (20).
    max_hypotheses : cap on global hypotheses (200).
    hypothesis_floor : global hypotheses with weight below are pruned (1e-4).
    existence_floor : Bernoullis with r below are pruned (1e-5).
    ppp_floor : PPP components with weight below are pruned (1e-5).
    recycle : Bernoullis with r below this in every hypothesis move into the
        PPP (0 disables recycling; PMBM and PMB only).
    project_before_cap : PMB only: project every hypothesis of the update to
        one multi-Bernoulli before the hypotheses are pruned and capped (the
        order of the PMB reference code), instead of after.
    """

    # each field's option (help, type, bounds) is its command-line flag and config key (nllbench.options)
    gate: float = option(20.0, "squared Mahalanobis gate (PMBM family)", "number", low=0, open_low=True)
    max_hypotheses: int = option(200, "cap on global hypotheses", "integer", low=1, high=MAX_CAP)
    hypothesis_floor: float = option(1e-4, "prune hypotheses below this weight", "number", low=0, high=1)
    existence_floor: float = option(1e-5, "prune Bernoullis below this r", "number", low=0, high=1)
    ppp_floor: float = option(1e-5, "prune PPP components below this weight", "number", low=0)
    recycle: float = option(0.0, "recycle Bernoullis below this r (0: off)", "number", low=0, high=1)
    project_before_cap: bool = option(
        False, "PMB: project to one MB before pruning and capping the hypotheses", "bool"
    )

    def __post_init__(self) -> None:
        if not isinstance(self.project_before_cap, (bool, np.bool_)):
            raise TypeError(f"project_before_cap: expected a bool, got {self.project_before_cap!r}")
        if not self.gate > 0:
            raise ValueError(f"gate: expected a positive squared distance, got {self.gate!r}")
        if int(self.max_hypotheses) != self.max_hypotheses or self.max_hypotheses < 1:
            raise ValueError(f"max_hypotheses: expected a positive integer, got {self.max_hypotheses!r}")
        for name in ("hypothesis_floor", "existence_floor", "recycle"):
            value = getattr(self, name)
            if not 0 <= value <= 1:
                raise ValueError(f"{name}: expected a probability in [0, 1], got {value!r}")
        if not self.ppp_floor >= 0:
            raise ValueError(f"ppp_floor: expected a weight >= 0, got {self.ppp_floor!r}")


@dataclass(frozen=True)
class PMBMState:
    """Filter state; see the module docstring for the layout.

    ppp : LabelledIntensity, the PPP of undetected objects (empty for MBM / MBM01)
    r (S,), means (S, 4), covs (S, 4, 4), track (S,) int : STH pool
    track_labels (T,) int
    assoc (H, T) int, log_weights (H,) : global hypotheses (normalised)
    next_label : int
    """

    ppp: LabelledIntensity
    r: np.ndarray
    means: np.ndarray
    covs: np.ndarray
    track: np.ndarray
    track_labels: np.ndarray
    assoc: np.ndarray
    log_weights: np.ndarray
    next_label: int

    def to_density(self, with_ppp: bool) -> PMBM:
        """The posterior as a pooled ``nb.PMBM`` (``with_ppp=False``: an MBM).

        The STH pool is the PMBM's pool, each global hypothesis its STHs (a
        row of ``assoc``): every STH is held once, as in the posterior file.
        """
        pool = MultiBernoulli(self.r, Gaussians(self.means, self.covs), self.track_labels[self.track])
        w = np.exp(self.log_weights - logsumexp(self.log_weights))
        w = w / w.sum()
        members = [row[row >= 0] for row in self.assoc]
        return PMBM.pooled(self.ppp.to_ppp() if with_ppp else None, pool, members, w)


def initial_state(model: Model, variant: str) -> PMBMState:
    """The prior before the first scan.

    PMBM and PMB: the initial objects as a PPP, no Bernoulli. MBM and MBM01:
    if the model has ``initial_r``, one multi-Bernoulli of those existence
    probabilities and the densities of ``model.initial``, with no PPP (as
    the MBM of Garcia-Fernandez's reference code, which starts from its
    birth Bernoullis). Otherwise the initial PPP serves the first update
    only, where each measurement may start a Bernoulli (as in the PMBM); it
    is then dropped, and new objects enter through the multi-Bernoulli
    birth. (Starting an MBM from broad, identical prior Bernoullis makes
    the k-best truncation keep only hypotheses with a single detected
    object; use ``initial_r`` with well-separated Bernoullis.)
    """
    if variant not in VARIANTS:
        raise ValueError(f"filter: expected one of {VARIANTS}, got {variant!r}")
    if variant in ("mbm", "mbm01") and model.initial_r is not None:
        n = len(model.initial)
        return PMBMState(
            LabelledIntensity.empty(4, n),
            model.initial_r.copy(),
            model.initial.means.copy(),
            model.initial.covs.copy(),
            np.arange(n),
            np.arange(n),
            np.arange(n)[None, :],
            np.zeros(1),
            n,
        )
    return PMBMState(
        LabelledIntensity.start(model.initial),
        np.empty(0),
        np.empty((0, 4)),
        np.empty((0, 4, 4)),
        np.empty(0, dtype=np.int64),
        np.empty(0, dtype=np.int64),
        np.empty((1, 0), dtype=np.int64),
        np.zeros(1),
        len(model.initial),
    )


def predict(state: PMBMState, model: Model, variant: str) -> PMBMState:
    """Survival and motion of every Bernoulli and PPP component; Poisson or MB birth."""
    means, covs = kf_predict(state.means, state.covs, model.F, model.Q)
    r = model.p_survival * state.r
    ppp = state.ppp
    track, labels, assoc, next_label = state.track, state.track_labels, state.assoc, state.next_label
    if variant in ("pmbm", "pmb"):
        ppp = predict_intensity(ppp, model)
    else:
        # multi-Bernoulli birth: one new track per birth component, in every hypothesis
        B = len(model.birth)
        S, T, H = r.shape[0], labels.shape[0], assoc.shape[0]
        r = np.concatenate([r, model.birth_r])
        means = np.concatenate([means, model.birth.means])
        covs = np.concatenate([covs, model.birth.covs])
        track = np.concatenate([track, T + np.arange(B)])
        labels = np.concatenate([labels, next_label + np.arange(B)])
        assoc = np.concatenate([assoc, np.tile(S + np.arange(B), (H, 1))], axis=1)
        next_label += B
    return PMBMState(ppp, r, means, covs, track, labels, assoc, state.log_weights, next_label)


@dataclass(frozen=True)
class _Children:
    """Single-target hypotheses created by one update, before compaction."""

    r: np.ndarray
    means: np.ndarray
    covs: np.ndarray
    track: np.ndarray
    det_index: np.ndarray  # (S, nz): pool index of the detection child, -1 if not gated
    new_index: np.ndarray  # (nz,): pool index of the new track's STH, -1 if none


def update(state: PMBMState, Z: np.ndarray, model: Model, settings: PMBMSettings, variant: str) -> PMBMState:
    """PMBM update (Garcia-Fernandez et al. 2018, Section IV), then the variant's reduction."""
    return reduce(correct(state, Z, model, settings, variant), settings, variant)


def correct(state: PMBMState, Z: np.ndarray, model: Model, settings: PMBMSettings, variant: str) -> PMBMState:
    """Every Murty-ranked global hypothesis of the update, unnormalised and unpruned.

    For the PMB with ``settings.project_before_cap`` the result is already
    projected to one multi-Bernoulli.
    """
    nz = Z.shape[0]
    p_d = model.p_detection
    log_kappa = math.log(model.clutter_intensity) if model.clutter_intensity > 0 else -math.inf
    # missed-detection children keep their parent's index
    with np.errstate(divide="ignore", invalid="ignore"):
        l_miss = np.log1p(-state.r * p_d)  # (S,)
        r_miss = np.where(l_miss == -np.inf, 0.0, state.r * (1 - p_d) / (1 - state.r * p_d))
    missed = (r_miss, state.means, state.covs, state.track)
    l_det, detected, det_index = _detection_children(state, Z, model, settings)
    pool_size = state.r.shape[0] + detected[0].shape[0]
    l_new, born, new_index = _new_track_children(state, Z, model, settings, log_kappa, pool_size)
    children = _Children(
        *(np.concatenate(parts) for parts in zip(missed, detected, born, strict=True)), det_index, new_index
    )
    rows, logw = _ranked_associations(state, children, l_miss, l_det, l_new, settings)
    ppp = state.ppp
    if variant in ("pmbm", "pmb"):
        ppp = ppp.with_mixture(ppp.mixture.scaled(1 - p_d))
    else:
        ppp = LabelledIntensity.empty(4, ppp.next_label)  # MBM: the initial PPP served its one update
    labels = np.concatenate([state.track_labels, state.next_label + np.arange(nz)])
    out = PMBMState(
        ppp,
        children.r,
        children.means,
        children.covs,
        children.track,
        labels,
        rows,
        logw,
        state.next_label + nz,
    )
    if variant == "pmb" and settings.project_before_cap:
        out = _project_to_pmb(out, settings)
    return out


def _detection_children(state: PMBMState, Z: np.ndarray, model: Model, settings: PMBMSettings):
    """Detection children of every gated (Bernoulli, measurement) pair.

    Returns ``l_det`` (S, nz), log(r P_D N(z; H m, S)) or -inf outside the
    gate; the children's (r, means, covs, track) arrays (all r = 1); and
    ``det_index`` (S, nz), their pool index counted after the S
    missed-detection children, -1 for none.
    """
    S, nz = state.r.shape[0], Z.shape[0]
    l_det = np.full((S, nz), -np.inf)
    det_index = np.full((S, nz), -1)
    d = state.means.shape[1]
    empty = (np.empty(0), np.empty((0, d)), np.empty((0, d, d)), np.empty(0, dtype=state.track.dtype))
    if not (S and nz):
        return l_det, empty, det_index
    inn = innovation(state.means, state.covs, model.H, model.R)
    gated = mahalanobis2(inn, Z) < settings.gate
    with np.errstate(divide="ignore"):
        ll = np.log(state.r * model.p_detection)[:, None] + log_likelihood(inn, Z)
    l_det = np.where(gated, ll, -np.inf)
    s_idx, j_idx = np.nonzero(gated & (l_det > -np.inf))
    if not s_idx.size:
        return l_det, empty, det_index
    m_det = updated_means(state.means, inn, Z)
    det_index[s_idx, j_idx] = S + np.arange(s_idx.size)
    children = (np.ones(s_idx.size), m_det[s_idx, j_idx], inn.P_upd[s_idx], state.track[s_idx])
    return l_det, children, det_index


def _new_track_children(
    state: PMBMState, Z: np.ndarray, model: Model, settings: PMBMSettings, log_kappa: float, pool_size: int
):
    """One possible new track per measurement, from the PPP of undetected objects (PMBM, PMB).

    Returns ``l_new`` (nz,), log(kappa + sum_j P_D w_j N(z; H m_j, S_j)); the
    new tracks' (r, means, covs, track) arrays, each moment-matched from the
    gated PPP components; and ``new_index`` (nz,), their pool index counted
    from ``pool_size``, -1 where no component explains the measurement.
    """
    ppp, nz, T = state.ppp.mixture, Z.shape[0], state.track_labels.shape[0]
    d = state.means.shape[1]
    l_new = np.full(nz, log_kappa)
    new_index = np.full(nz, -1)
    r_new, m_new, P_new, t_new = (
        [np.empty(0)],
        [np.empty((0, d))],
        [np.empty((0, d, d))],
        [np.empty(0, dtype=state.track.dtype)],
    )
    if nz and ppp.weights.size:
        pin, log_q, pm = detection_terms(ppp, Z, model)
        log_q = np.where(mahalanobis2(pin, Z) < settings.gate, log_q, -np.inf)  # (J, nz)
        log_e = logsumexp(log_q, axis=0)
        l_new = np.logaddexp(log_kappa, log_e)
        k = 0
        for j in range(nz):
            if log_e[j] == -np.inf:
                continue
            wj = np.exp(log_q[:, j] - log_e[j])
            use = wj > 0
            m, P = moment_match(wj[use], pm[use, j], pin.P_upd[use])
            r_new.append(np.array([math.exp(log_e[j] - l_new[j])]))
            m_new.append(m[None])
            P_new.append(P[None])
            t_new.append(np.array([T + j]))
            new_index[j] = pool_size + k
            k += 1
    born = (np.concatenate(r_new), np.concatenate(m_new), np.concatenate(P_new), np.concatenate(t_new))
    return l_new, born, new_index


def _ranked_associations(
    state: PMBMState,
    children: _Children,
    l_miss: np.ndarray,
    l_det: np.ndarray,
    l_new: np.ndarray,
    settings: PMBMSettings,
) -> tuple[np.ndarray, np.ndarray]:
    """Murty's best associations per global hypothesis, its share of ``max_hypotheses`` each.

    Returns the new hypotheses' rows (H', T + nz) of pool indices (-1: no
    Bernoulli) and their unnormalised log weights (H',).
    """
    nz, T = l_new.shape[0], state.track_labels.shape[0]
    weights = np.exp(state.log_weights - logsumexp(state.log_weights))
    rows, logw = [], []
    for h in range(state.assoc.shape[0]):
        present = np.flatnonzero(state.assoc[h] >= 0)
        s = state.assoc[h, present]
        sure = l_miss[s] == -np.inf  # r = 1 and P_D = 1: must be detected
        cost = np.full((nz, s.size + nz), np.inf)
        if s.size:
            lm = np.where(sure, 0.0, l_miss[s])
            cost[:, : s.size] = -(l_det[s].T - lm[None, :])
        cost[np.arange(nz), s.size + np.arange(nz)] = -l_new
        mandatory = np.concatenate([sure, np.zeros(nz, dtype=bool)])
        k = max(1, math.ceil(settings.max_hypotheses * weights[h]))
        ranked = murty(cost, k, mandatory)  # nz = 0: one empty association, none if any is mandatory
        base = state.log_weights[h] + float(np.sum(l_miss[s][~sure]))
        for c, cols in zip(ranked.costs, ranked.columns, strict=True):
            row = np.full(T + nz, -1)
            row[present] = s  # missed-detection children keep the parent index
            for j, col in enumerate(cols):
                if col < s.size:
                    row[present[col]] = children.det_index[s[col], j]
                else:
                    row[T + j] = children.new_index[j]
            rows.append(row)
            logw.append(base - c)
    if not rows:
        raise ValueError("measurements: no global hypothesis can explain this scan (zero clutter intensity?)")
    return np.array(rows, dtype=np.int64), np.array(logw)


def reduce(state: PMBMState, settings: PMBMSettings, variant: str) -> PMBMState:
    """The variant's reduction after :func:`correct`: prune and cap the hypotheses,
    expand (MBM01), project (PMB), recycle, prune the PPP."""
    out = _reduce(state, settings)
    if variant == "mbm01":
        out = _mbm01_expand(out, settings)
    if variant == "pmb" and not settings.project_before_cap:
        out = _project_to_pmb(out, settings)
    if settings.recycle > 0 and variant in ("pmbm", "pmb"):
        out = _recycle(out, settings)
    ppp = out.ppp.with_mixture(out.ppp.mixture.subset(out.ppp.mixture.weights > settings.ppp_floor))
    return PMBMState(
        ppp,
        out.r,
        out.means,
        out.covs,
        out.track,
        out.track_labels,
        out.assoc,
        out.log_weights,
        out.next_label,
    )


def _reduce(state: PMBMState, settings: PMBMSettings) -> PMBMState:
    """Normalise, prune and cap global hypotheses; drop improbable Bernoullis; compact."""
    lw = state.log_weights - logsumexp(state.log_weights)
    order = np.argsort(-lw, kind="stable")
    keep = order[np.exp(lw[order]) >= settings.hypothesis_floor][: settings.max_hypotheses]
    if keep.size == 0:
        keep = order[:1]
    assoc = state.assoc[keep].copy()
    lw = lw[keep]
    # Bernoullis with negligible existence leave the hypotheses
    small = np.zeros(state.r.shape[0] + 1, dtype=bool)
    small[:-1] = state.r < settings.existence_floor
    assoc[small[assoc]] = -1  # index -1 maps to the sentinel slot small[-1] = False
    return _compact(state, assoc, lw - logsumexp(lw))


def merge_duplicate_hypotheses(assoc: np.ndarray, log_weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Global hypotheses with the same association row (H, tracks) merged, their log weights
    (H,) log-summed; the rows come out sorted (``np.unique``). Shared by the PMBM and TPMBM filters."""
    if assoc.shape[0] > 1:
        uniq, inverse = np.unique(assoc, axis=0, return_inverse=True)
        if uniq.shape[0] < assoc.shape[0]:
            lw = np.full(uniq.shape[0], -np.inf)
            np.logaddexp.at(lw, inverse.ravel(), log_weights)
            return uniq, lw
    return assoc, log_weights


def _compact(state: PMBMState, assoc: np.ndarray, log_weights: np.ndarray) -> PMBMState:
    """Merge duplicate hypotheses, drop unreferenced STHs and empty tracks, re-index."""
    assoc, log_weights = merge_duplicate_hypotheses(assoc, log_weights)
    used_tracks = np.flatnonzero((assoc >= 0).any(axis=0))
    assoc = assoc[:, used_tracks]
    used_sth = np.unique(assoc[assoc >= 0])
    remap = np.full(state.r.shape[0] + 1, -1)
    remap[used_sth] = np.arange(used_sth.size)
    new_assoc = remap[assoc]  # -1 stays -1 through the sentinel slot
    track_remap = np.full(state.track_labels.shape[0], -1)
    track_remap[used_tracks] = np.arange(used_tracks.size)
    return PMBMState(
        state.ppp,
        state.r[used_sth],
        state.means[used_sth],
        state.covs[used_sth],
        track_remap[state.track[used_sth]],
        state.track_labels[used_tracks],
        new_assoc,
        log_weights,
        state.next_label,
    )


def _project_to_pmb(state: PMBMState, settings: PMBMSettings) -> PMBMState:
    """Track-oriented projection of the MBM to one MB (Williams 2015)."""
    w = np.exp(state.log_weights - logsumexp(state.log_weights))
    T = state.track_labels.shape[0]
    r, means, covs = np.zeros(T), np.zeros((T, 4)), np.tile(np.eye(4), (T, 1, 1))
    for t in range(T):
        hs = np.flatnonzero(state.assoc[:, t] >= 0)
        s = state.assoc[hs, t]
        mass = w[hs] * state.r[s]
        r[t] = min(float(mass.sum()), 1.0)
        if mass.sum() > 0:
            means[t], covs[t] = moment_match(mass, state.means[s], state.covs[s])
    keep = r >= settings.existence_floor
    T2 = int(keep.sum())
    return PMBMState(
        state.ppp,
        r[keep],
        means[keep],
        covs[keep],
        np.arange(T2),
        state.track_labels[keep],
        np.arange(T2)[None, :],
        np.zeros(1),
        state.next_label,
    )


def _recycle(state: PMBMState, settings: PMBMSettings) -> PMBMState:
    """Move tracks whose existence is below ``recycle`` in every hypothesis into the PPP."""
    w = np.exp(state.log_weights - logsumexp(state.log_weights))
    T = state.track_labels.shape[0]
    add_w, add_m, add_P, drop = [], [], [], np.zeros(T, dtype=bool)
    for t in range(T):
        hs = np.flatnonzero(state.assoc[:, t] >= 0)
        s = state.assoc[hs, t]
        if s.size and np.all(state.r[s] < settings.recycle):
            mass = w[hs] * state.r[s]
            m, P = moment_match(mass, state.means[s], state.covs[s])
            add_w.append(mass.sum())
            add_m.append(m)
            add_P.append(P)
            drop[t] = True
    if not drop.any():
        return state
    # moment-matched from validated Bernoulli densities: weights >= 0, covariances positive definite
    recycled = GaussianMixture._trusted(
        np.array(add_w), np.array(add_m), np.array(add_P), state.track_labels[drop]
    )
    ppp = state.ppp.with_mixture(GaussianMixture.concatenate([state.ppp.mixture, recycled]))
    assoc = state.assoc.copy()
    assoc[:, drop] = -1
    out = PMBMState(
        ppp,
        state.r,
        state.means,
        state.covs,
        state.track,
        state.track_labels,
        assoc,
        state.log_weights,
        state.next_label,
    )
    return _compact(out, assoc, state.log_weights)


def _k_best_flips(costs: np.ndarray, k: int) -> list[tuple[float, tuple[int, ...]]]:
    """The k cheapest subsets of independent non-negative flip costs (sum, indices)."""
    order = np.argsort(costs, kind="stable")
    c = costs[order]
    out = [(0.0, ())]
    if c.size == 0 or k <= 1:
        return out[:k]
    heap = [(float(c[0]), (0,))]
    while heap and len(out) < k:
        total, idx = heapq.heappop(heap)
        out.append((total, tuple(int(order[i]) for i in idx)))
        last = idx[-1]
        if last + 1 < c.size:
            heapq.heappush(heap, (total + float(c[last + 1]), idx + (last + 1,)))
            heapq.heappush(heap, (total - float(c[last]) + float(c[last + 1]), idx[:-1] + (last + 1,)))
    return out


def _mbm01_expand(state: PMBMState, settings: PMBMSettings) -> PMBMState:
    """Expand each Bernoulli with 0 < r < 1 into exists (r = 1) or absent; keep the k best per hypothesis."""
    S = state.r.shape[0]
    sure_idx = np.arange(S) + S  # pool copies with r = 1
    r_pool = np.concatenate([state.r, np.ones(S)])
    means = np.concatenate([state.means, state.means])
    covs = np.concatenate([state.covs, state.covs])
    track = np.concatenate([state.track, state.track])
    w = np.exp(state.log_weights - logsumexp(state.log_weights))
    rows, logw = [], []
    with np.errstate(divide="ignore"):
        log_r, log_1mr = np.log(state.r), np.log1p(-state.r)
    for h in range(state.assoc.shape[0]):
        row = state.assoc[h]
        present = np.flatnonzero(row >= 0)
        s = row[present]
        exists = state.r[s] >= 0.5
        best = np.where(exists, log_r[s], log_1mr[s])
        other = np.where(exists, log_1mr[s], log_r[s])
        flip = best - other  # >= 0, inf when the other choice is impossible
        k = max(1, math.ceil(settings.max_hypotheses * w[h]))
        finite = np.flatnonzero(np.isfinite(flip))
        for total, flips in _k_best_flips(flip[finite], k):
            choice = exists.copy()
            for f in flips:
                choice[finite[f]] = ~choice[finite[f]]
            new = np.full(row.shape[0], -1)
            new[present[choice]] = sure_idx[s[choice]]
            rows.append(new)
            logw.append(state.log_weights[h] + float(best.sum()) - total)
    expanded = PMBMState(
        state.ppp,
        r_pool,
        means,
        covs,
        track,
        state.track_labels,
        np.array(rows, dtype=np.int64),
        np.array(logw),
        state.next_label,
    )
    return _reduce(expanded, settings)


def estimate_state(state: PMBMState, rule: str, threshold: float) -> Estimates:
    """Point estimates of a (possibly unnormalised, unpruned) state by ``rule``.

    Works on the arrays directly (no density object per hypothesis), so that
    estimating before pruning costs little; the result equals
    ``estimate(state.to_density(...), threshold, rule)``.
    """
    lw = state.log_weights - logsumexp(state.log_weights)
    members = [row[row >= 0] for row in state.assoc]
    if rule == "best_hypothesis":
        h = int(np.argmax(lw))
        s = members[h][state.r[members[h]] > threshold]
    elif rule == "map_cardinality":
        h, idx = map_cardinality_choice(lw, [state.r[m] for m in members])
        s = members[h][idx]
    else:
        raise ValueError(
            f"estimator: expected one of {MIXTURE_RULES} for a multi-Bernoulli mixture, got {rule!r}"
        )
    return Estimates(state.means[s], state.track_labels[state.track[s]])


def run_pmbm(
    measurements: Sequence[np.ndarray],
    model: Model,
    variant: str = "pmbm",
    settings: PMBMSettings = PMBMSettings(),
    progress: Callable[[int], None] | None = None,
    extract: Callable[[PMBMState], object] | None = None,
) -> FilterSteps:
    """Posterior after each update for the PMBM family (``variant`` in pmbm, pmb, mbm, mbm01).

    ``extract``, if given, is applied to each corrected state before its
    reduction (for the PMB with ``project_before_cap``: after the projection).
    """
    return run_steps(
        initial_state(model, variant),
        lambda s: predict(s, model, variant),
        lambda s, Z: correct(s, Z, model, settings, variant),
        lambda s: reduce(s, settings, variant),
        measurements,
        progress,
        extract,
    )
