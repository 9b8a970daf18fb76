"""The trajectory NLL: the likelihood of the true set of trajectories under a labelled output.

Frames ``F`` (K of them); truth trajectories ``j = 1..n``, each present at the
frames ``S_j`` (a non-empty subset of F, gaps allowed) with states
``y_{j,t}``; labels ``l = 1..m``, each a *trajectory Bernoulli*: at frame t
present with probability ``r_{l,t}``, independently over frames, its state
drawn from ``p_{l,t}`` (a Gaussian where the label has a row, uniform on the
field-of-view box where it has none and the unlisted presence R > 0).
Undetected trajectories are a Poisson process of mean ``Lambda`` whose members
are present at each frame with probability ``rho`` (conditioned on at least
one frame), uniform on the box of volume V:

    lambda(Y_j) = Lambda / (1 - (1 - rho)^K) prod_{t in S_j} rho / V prod_{t in F \\ S_j} (1 - rho)

The likelihood of the truth is the Poisson multi-Bernoulli set density on
trajectory space (docs/trajectory.md gives the normalisation argument):

    f(Y) = exp(-Lambda) sum_theta prod_{l unmatched} a_l prod_{(j -> l)} w_{l,j}
           prod_{j unmatched} lambda(Y_j)

with ``a_l = prod_t (1 - r_{l,t})`` and ``w_{l,j} = prod_{t in S_j} r_{l,t}
p_{l,t}(y_{j,t}) prod_{t in F \\ S_j} (1 - r_{l,t})``: an assignment sum of
the same form as one frame's PMB likelihood (Pinto et al., IEEE SPL 2021,
eq. (2)-(4)), with trajectories for objects and labels for Bernoullis. The
cost matrix is the per-frame one (:class:`nllbench.engine.nll.AssociationProblem`):
``(n, m + n)``, truths in rows, labels then one dummy column per truth.

This module builds the weights from frame-sorted arrays (one compiled pass
over the (label, frame) rows and the truths, :func:`label_truth_statistics`),
turns them into weights at given fill-in parameters
(:func:`trajectory_weights`), and sums the assignments (:func:`assignment_sum`):
the Q best (Murty), certified bounds, and the exact sum by a subset dynamic
programme per connected component.

Over 600 lines because these three stages share one set of arrays and one
compiled pass; split apart, each would re-derive the frame-sorted layout.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numba as nb
import numpy as np

from nllbench.engine.assignment import count_assignments_log, murty
from nllbench.engine.association import FORBIDDEN_COST, AssociationProblem
from nllbench.engine.exact import EXACT_WORK_LIMIT
from nllbench.engine.exact import log_sum_all as _log_sum_all
from nllbench.engine.logsum import log_remaining, log_row_sum_bound, logsumexp

#: The terms of the trajectory NLL's decomposition; they sum to the value.
TRAJECTORY_TERMS = ("localization", "presence", "false", "undetected", "association")


# ---------------------------------------------------------------------------
# label-truth statistics (parameter free) and weights (at the fill-ins)
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class LabelTruthStatistics:
    """What the weights need from the rows, before the fill-in parameters are chosen.

    m labels, n truth trajectories, K frames. Sums run over frames where the
    label *has a row* (r_{l,t} and p_{l,t} from the table); counts are of the
    frames where it has none (filled in by the unlisted presence R).

    Attributes
    ----------
    loc_rows : (m, n) float
        ``sum_{t in S_j, l has a row} log(r_{l,t} p_{l,t}(y_{j,t}))``.
    presence_rows : (m, n) float
        ``sum_{t in F \\ S_j, l has a row} log(1 - r_{l,t})``.
    alone_rows : (m,) float
        ``sum_{t: l has a row} log(1 - r_{l,t})``.
    free_present, free_absent : (m, n) int
        Frames where l has no row and j is present / absent.
    free_outside : (m, n) int
        Frames where l has no row and j is present outside the box (0 without a box).
    free : (m,) int
        Frames where l has no row.
    n_present : (n,) int
        ``|S_j|``.
    inside : (n,) bool
        Every state of j in the box (True without a box).
    n_frames : int
        K.
    log_volume : float or None
        log V of the box (None without one).
    """

    loc_rows: np.ndarray
    presence_rows: np.ndarray
    alone_rows: np.ndarray
    free_present: np.ndarray
    free_absent: np.ndarray
    free_outside: np.ndarray
    free: np.ndarray
    n_present: np.ndarray
    inside: np.ndarray
    n_frames: int
    log_volume: float | None


@dataclass(frozen=True)
class TrajectoryWeights:
    """The log-weights of the trajectory assignment sum (m labels, n truths).

    Attributes
    ----------
    loc : (m, n) float
        ``sum_{t in S_j} log(r_{l,t} p_{l,t}(y_{j,t}))``: the localisation part of w_{l,j}.
    presence : (m, n) float
        ``sum_{t in F \\ S_j} log(1 - r_{l,t})``: frames where l claims presence but j is absent.
    alone : (m,) float
        ``log a_l = sum_t log(1 - r_{l,t})``: label l matched to no truth (a false trajectory).
    log_lam : (n,) float
        ``log lambda(Y_j)``: truth j undetected.
    total_rate : float
        Lambda.
    """

    loc: np.ndarray
    presence: np.ndarray
    alone: np.ndarray
    log_lam: np.ndarray
    total_rate: float

    @property
    def log_w(self) -> np.ndarray:
        """(m, n) ``log w_{l,j} = loc + presence``."""
        return self.loc + self.presence


def label_truth_statistics(
    group_frame: np.ndarray,
    group_label: np.ndarray,
    group_r: np.ndarray,
    group_start: np.ndarray,
    row_log_coef: np.ndarray,
    means: np.ndarray,
    chol: np.ndarray,
    log_norm: np.ndarray,
    truth_at: np.ndarray,
    truth_states: np.ndarray,
    n_labels: int,
    box: tuple[np.ndarray, np.ndarray] | None,
    log_volume: float | None,
) -> LabelTruthStatistics:
    """The parameter-free statistics of the weights, in one compiled pass.

    Parameters
    ----------
    group_frame, group_label : (G,) int
        Frame index (0..K-1) and label index (0..m-1) of each (label, frame)
        group of rows, sorted by frame; one group per label and frame at most.
    group_r : (G,) float
        ``r_{l,t}`` of the group (the hypothesis-weighted sum of its rows' r).
    group_start : (G + 1,) int
        Rows ``group_start[g]:group_start[g + 1]`` form group g.
    row_log_coef : (N,) float
        ``log(w_i r_i / r_{l,t})`` of each row (0 for a lone row with r > 0;
        ``-inf`` for a row of zero weight): the group's state density is the
        mixture ``sum_i exp(row_log_coef[i]) N(m_i, P_i)``.
    means, chol, log_norm : (N, d), (N, d, d), (N,)
        The rows' Gaussians: means, lower Cholesky factors, log-normalisers.
    truth_at : (K, n) int
        Row of ``truth_states`` of truth j at frame t, -1 when j is absent.
    truth_states : (N_y, d) float
    n_labels : int
        m.
    box : (low, high) of (d,) arrays, or None
    log_volume : float or None
        log V of ``box``.

    Returns
    -------
    LabelTruthStatistics
    """
    K, n = truth_at.shape
    m = int(n_labels)
    present = truth_at >= 0
    n_present = present.sum(axis=0).astype(np.int64)
    if box is None:
        outside_row = np.zeros(truth_states.shape[0], dtype=bool)
    else:
        low, high = box
        outside_row = np.any((truth_states < low) | (truth_states > high), axis=1)
    with np.errstate(divide="ignore"):
        log_r = np.log(group_r)
        log_1mr = np.log1p(-group_r)
    loc, pres, alone, n_row_present, n_row_absent, n_row_outside, n_rows = _statistics_kernel(
        np.ascontiguousarray(group_frame, dtype=np.int64),
        np.ascontiguousarray(group_label, dtype=np.int64),
        log_r,
        log_1mr,
        np.ascontiguousarray(group_start, dtype=np.int64),
        np.ascontiguousarray(row_log_coef, dtype=np.float64),
        np.ascontiguousarray(means, dtype=np.float64),
        np.ascontiguousarray(chol, dtype=np.float64),
        np.ascontiguousarray(log_norm, dtype=np.float64),
        np.ascontiguousarray(truth_at, dtype=np.int64),
        np.ascontiguousarray(truth_states, dtype=np.float64),
        outside_row,
        m,
    )
    outside_traj = np.zeros(n, dtype=np.int64)
    for_rows = truth_at[present]
    np.add.at(outside_traj, np.nonzero(present)[1], outside_row[for_rows].astype(np.int64))
    return LabelTruthStatistics(
        loc_rows=loc,
        presence_rows=pres,
        alone_rows=alone,
        free_present=n_present[None, :] - n_row_present,
        free_absent=(K - n_present)[None, :] - n_row_absent,
        free_outside=outside_traj[None, :] - n_row_outside,
        free=K - n_rows,
        n_present=n_present,
        inside=outside_traj == 0,
        n_frames=int(K),
        log_volume=log_volume,
    )


@nb.njit(cache=True)
def _group_logpdf(g0, g1, coef, means, chol, log_norm, y, z, vals):
    """log sum_{i in g0:g1} exp(coef[i]) N(y; means[i], chol[i] chol[i]^T) (forward substitution).

    ``z`` (d,) and ``vals`` (at least g1 - g0,) are scratch space.
    """
    d = means.shape[1]
    top = -np.inf
    for i in range(g0, g1):
        quad = 0.0
        for a in range(d):
            acc = y[a] - means[i, a]
            for b in range(a):
                acc = acc - chol[i, a, b] * z[b]
            z[a] = acc / chol[i, a, a]
            quad = z[a] * z[a] if a == 0 else quad + z[a] * z[a]
        if quad != quad:  # an overflowing quadratic form: density 0 (as the per-frame kernel)
            quad = np.inf
        v = coef[i] + (log_norm[i] - 0.5 * quad)
        vals[i - g0] = v
        if v > top:
            top = v
    if g1 - g0 == 1 or top == -np.inf:
        return top
    s = 0.0
    for k in range(g1 - g0):
        s += math.exp(vals[k] - top)
    return top + math.log(s)


@nb.njit(cache=True)
def _statistics_kernel(
    group_frame,
    group_label,
    log_r,
    log_1mr,
    group_start,
    coef,
    means,
    chol,
    log_norm,
    truth_at,
    y,
    outside_row,
    m,
):
    K, n = truth_at.shape
    d = means.shape[1]
    loc = np.zeros((m, n))
    pres = np.zeros((m, n))
    alone = np.zeros(m)
    n_row_present = np.zeros((m, n), dtype=np.int64)
    n_row_absent = np.zeros((m, n), dtype=np.int64)
    n_row_outside = np.zeros((m, n), dtype=np.int64)
    n_rows = np.zeros(m, dtype=np.int64)
    z = np.empty(d)
    longest = 1
    for g in range(group_frame.shape[0]):
        longest = max(longest, group_start[g + 1] - group_start[g])
    vals = np.empty(longest)
    for g in range(group_frame.shape[0]):
        t = group_frame[g]
        lab = group_label[g]
        alone[lab] += log_1mr[g]
        n_rows[lab] += 1
        for j in range(n):
            k = truth_at[t, j]
            if k < 0:
                pres[lab, j] += log_1mr[g]
                n_row_absent[lab, j] += 1
            else:
                if log_r[g] == -np.inf:
                    loc[lab, j] += -np.inf
                else:
                    loc[lab, j] += log_r[g] + _group_logpdf(
                        group_start[g], group_start[g + 1], coef, means, chol, log_norm, y[k], z, vals
                    )
                n_row_present[lab, j] += 1
                if outside_row[k]:
                    n_row_outside[lab, j] += 1
    return loc, pres, alone, n_row_present, n_row_absent, n_row_outside, n_rows


def _times(count: np.ndarray, log_value: float) -> np.ndarray:
    """``count * log_value`` with 0 where the count is 0 (never 0 * -inf = NaN)."""
    count = np.asarray(count)
    if log_value == -math.inf:
        return np.where(count > 0, -math.inf, 0.0)
    return count * log_value


def log_undetected(
    n_present: np.ndarray, inside: np.ndarray, n_frames: int, rate: float, presence: float, log_volume
) -> np.ndarray:
    """(n,) ``log lambda(Y_j)`` of the undetected-trajectory Poisson process.

    ``log Lambda - log(1 - (1 - rho)^K) + |S_j| (log rho - log V) + (K - |S_j|) log(1 - rho)``;
    ``-inf`` for a state outside the box, for rho = 1 and a gap, and for Lambda = 0.
    """
    n = np.asarray(n_present).shape[0]
    if rate == 0.0:
        return np.full(n, -math.inf)
    with np.errstate(divide="ignore"):
        log_1mrho = math.log1p(-presence) if presence < 1.0 else -math.inf
    # 1 - (1 - rho)^K = -expm1(K log(1 - rho)), exact at rho = 1 (expm1(-inf) = -1)
    log_norm = math.log(rate) - math.log(-math.expm1(n_frames * log_1mrho))
    out = (
        log_norm
        + _times(n_present, math.log(presence) - log_volume)
        + _times(n_frames - np.asarray(n_present), log_1mrho)
    )
    return np.where(inside, out, -math.inf)


def trajectory_weights(
    stats: LabelTruthStatistics,
    unlisted_presence: float = 0.0,
    rate: float = 0.0,
    presence: float = 1.0,
) -> TrajectoryWeights:
    """The weights at the fill-ins: unlisted presence R, undetected trajectories (Lambda, rho).

    Where label l has no row it is present with probability R, its state
    uniform on the box (density 1/V inside, 0 outside); R = 0 makes such a
    frame of a matched truth impossible and costs nothing where the truth is
    absent. R > 0 and Lambda > 0 need the box (``stats.log_volume``).
    """
    R = float(unlisted_presence)
    if (R > 0 or rate > 0) and stats.log_volume is None:
        raise ValueError("fov: the unlisted presence and the undetected trajectories need the box")
    with np.errstate(divide="ignore"):
        log_R = math.log(R) if R > 0 else -math.inf
        log_1mR = math.log1p(-R) if R < 1 else -math.inf
    if R > 0:
        free_loc = _times(stats.free_present, log_R - stats.log_volume)
        free_loc = np.where(stats.free_outside > 0, -math.inf, free_loc)
    else:
        free_loc = _times(stats.free_present, -math.inf)
    loc = stats.loc_rows + free_loc
    pres = stats.presence_rows + _times(stats.free_absent, log_1mR)
    alone = stats.alone_rows + _times(stats.free, log_1mR)
    log_lam = log_undetected(stats.n_present, stats.inside, stats.n_frames, rate, presence, stats.log_volume)
    return TrajectoryWeights(loc, pres, alone, log_lam, float(rate))


# ---------------------------------------------------------------------------
# the assignment sum: costs in, NLL out
# ---------------------------------------------------------------------------


def association_problem_from_weights(
    log_w: np.ndarray, log_alone: np.ndarray, log_lam: np.ndarray, total_rate: float
) -> AssociationProblem:
    """The (n, m + n) association problem of pair weights ``log_w`` (m, n).

    ``cost[j, l] = -(log_w[l, j] - log_alone[l])`` (the ratio against l being
    unmatched), ``-log_w[l, j]`` when ``log_alone[l] = -inf`` (l must be
    matched: a mandatory column); ``cost[j, m + j] = -log_lam[j]``; other cells
    and every cell above ``FORBIDDEN_COST`` are ``+inf``. ``base = total_rate -
    sum of the finite log_alone``. The per-frame problem
    (:func:`nllbench.engine.nll.association_problem`) is the case
    ``log_w = log r + log p``, ``log_alone = log(1 - r)``.
    """
    m, n = log_w.shape
    sure = log_alone == -math.inf
    cost = np.full((n, m + n), math.inf)
    cost[:, :m] = -(log_w - np.where(sure, 0.0, log_alone)[:, None]).T
    cost[np.arange(n), m + np.arange(n)] = -log_lam
    cost[cost > FORBIDDEN_COST] = math.inf
    mandatory = np.zeros(m + n, dtype=bool)
    mandatory[:m] = sure
    base = float(total_rate) - float(np.sum(log_alone[~sure]))
    return AssociationProblem(
        cost, mandatory, base, np.zeros(m), np.asarray(log_alone, dtype=float), log_w, log_lam, total_rate
    )


@dataclass(frozen=True)
class AssignmentSum:
    """``-log`` of an assignment sum: the Q best, bounds, and the exact value when asked.

    Attributes
    ----------
    value : float
        ``-log`` of the sum over the listed associations (``+inf``: none has
        non-zero likelihood).
    lower, upper : float
        Certified bounds on the exact ``-log`` sum (``upper == value``).
    complete : bool
        Every association of non-zero likelihood was listed (``value`` is exact).
    exact : float or None
        The exact ``-log`` sum (subset DP) when asked for.
    costs : (k,) float
        Total costs (``base`` included) of the listed associations, increasing.
    columns : (k, n) int
        Column of each truth in each listed association (label l < m, or
        ``m + j``: undetected).
    q : int
    """

    value: float
    lower: float
    upper: float
    complete: bool
    exact: float | None
    costs: np.ndarray
    columns: np.ndarray
    q: int

    def posterior(self, m: int) -> np.ndarray:
        """(n, m + 1): probability of each truth going to each label (last column: undetected).

        Marginals over the *listed* associations, their weights normalised to
        sum to 1 (exact when ``complete``). Rows of an impossible truth set are 0.
        """
        k, n = self.columns.shape
        out = np.zeros((n, m + 1))
        if k == 0 or n == 0:
            return out
        p = np.exp(-(self.costs - self.costs[0]))
        p /= p.sum()
        col = np.minimum(self.columns, m)
        flat = (np.arange(n)[None, :] * (m + 1) + col).ravel()
        out += np.bincount(flat, weights=np.repeat(p, n), minlength=n * (m + 1)).reshape(n, m + 1)
        return out


def assignment_sum(problem: AssociationProblem, q: int, exact: bool = False) -> AssignmentSum:
    """The Q best associations of ``problem`` summed in log space, with certified bounds.

    Parameters
    ----------
    problem : AssociationProblem
        Costs (n, m + n), mandatory columns, base (as built by
        :func:`association_problem_from_weights`).
    q : int
        Murty budget.
    exact : bool
        Also sum every association (:func:`exact_log_sum`).

    Notes
    -----
    The bounds are those of the per-frame NLL (docs/nll.md, "Exactness and
    bounds"): the unlisted associations sum to at most (their number) x
    exp(-cost of the cheapest unlisted one), and to at most the product of
    the cost matrix's row sums; the smaller one is added.
    """
    n, M = problem.cost.shape
    m = M - n
    ranked = murty(problem.cost, q, problem.mandatory)
    costs = ranked.costs + problem.base
    if costs.size == 0:
        inf = math.inf
        return AssignmentSum(inf, inf, inf, True, inf if exact else None, costs, ranked.columns, q)
    log_listed = logsumexp(-costs)
    value = -log_listed
    alive = int(np.sum(np.any(problem.cost[:, :m] < math.inf, axis=0))) if n else 0
    forced = int(np.sum(problem.cost[np.arange(n), m + np.arange(n)] == math.inf))
    log_left = log_remaining(count_assignments_log(n, alive, forced), costs.size)
    complete = ranked.complete or log_left == -math.inf
    if complete:
        lower = value
    else:
        by_count = float(np.logaddexp(log_listed, log_left - (ranked.rest + problem.base)))
        by_rows = log_row_sum_bound(problem)
        lower = min(value, -max(log_listed, min(by_count, by_rows)))
    exact_value = None
    if exact:
        exact_value = value if complete else exact_log_sum(problem)
    return AssignmentSum(value, lower, value, complete, exact_value, costs, ranked.columns, q)


def exact_log_sum(problem: AssociationProblem) -> float:
    """``-log`` of the sum over every association, exactly: a subset DP per connected component.

    Truths and labels linked by an allowed cell form a bipartite graph; the
    sum factorises over its connected components (an association of one
    component does not constrain another). Each component goes through the
    per-frame NLL's subset dynamic programme
    (:func:`nllbench.engine.exact.log_sum_all`, O(a b 2^min(a, b))); a
    component beyond ``EXACT_WORK_LIMIT`` operations is refused.
    """
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    n, M = problem.cost.shape
    m = M - n
    allowed = problem.cost[:, :m] < math.inf  # (n, m)
    log_w = np.where(allowed.T, problem.log_p, -math.inf)
    rows, cols = np.nonzero(allowed)
    graph = coo_matrix((np.ones(rows.size), (rows, n + cols)), shape=(n + m, n + m))
    n_comp, comp = connected_components(graph, directed=False)
    log_lam = np.where(problem.cost[np.arange(n), m + np.arange(n)] < math.inf, problem.log_lam, -math.inf)
    total = 0.0
    for c in range(n_comp):
        js = np.flatnonzero(comp[:n] == c)
        ls = np.flatnonzero(comp[n:] == c)
        if ls.size == 0:
            total += float(np.sum(log_lam[js]))
            continue
        if js.size == 0:
            total += float(np.sum(problem.log_1mr[ls]))
            continue
        small, large = min(js.size, ls.size), max(js.size, ls.size)
        if small * large * 2.0**small > EXACT_WORK_LIMIT:
            raise ValueError(
                f"exact: a connected component of {js.size} truth trajectories and {ls.size} labels "
                f"needs 2^{small} subsets (limit {EXACT_WORK_LIMIT:g} operations); use exact=False with a "
                "larger q (the bounds stay certified)"
            )
        sub = AssociationProblem(
            np.empty((js.size, 0)),
            np.zeros(0, dtype=bool),
            0.0,
            np.zeros(ls.size),
            problem.log_1mr[ls],
            log_w[np.ix_(ls, js)],
            log_lam[js],
            0.0,
        )
        total += _log_sum_all(sub)
        if total == -math.inf:
            break
    return problem.total_rate - total


# ---------------------------------------------------------------------------
# decomposition and impossible truths
# ---------------------------------------------------------------------------


def decompose(weights: TrajectoryWeights, columns: np.ndarray, value: float) -> dict[str, float]:
    """The terms of one association (the best), plus the association term; they sum to ``value``.

    localization ``-sum_{(j -> l)} loc[l, j]``; presence ``-sum_{(j -> l)}
    presence[l, j]`` (a matched label present where its truth is absent);
    false ``-sum_{l unmatched} alone[l]``; undetected ``Lambda - sum_{j
    unmatched} log lambda(Y_j)``; association = value minus the others.
    """
    m = weights.alone.shape[0]
    to_label = columns < m
    js = np.flatnonzero(to_label)
    ls = columns[to_label]
    loc = -float(np.sum(weights.loc[ls, js])) + 0.0
    pres = -float(np.sum(weights.presence[ls, js])) + 0.0
    free = np.ones(m, dtype=bool)
    free[ls] = False
    false = -float(np.sum(weights.alone[free])) + 0.0
    undetected = weights.total_rate - float(np.sum(weights.log_lam[~to_label])) + 0.0
    named = loc + pres + false + undetected
    return {
        "localization": loc,
        "presence": pres,
        "false": false,
        "undetected": undetected,
        "association": 0.0 if value == math.inf else value - named,
    }


@dataclass(frozen=True)
class Infeasibility:
    """Why the likelihood is 0: truth trajectories and labels (indices) that cannot be explained.

    truths : indices of truths no label and no undetected trajectory can explain: alone (no
        allowed cell), else jointly (``jointly``: left over by a maximum matching, i.e. more
        truths than the labels that can take them);
    labels : indices of labels that must be matched (r = 1 at some frame) and that no truth can
        take (all of them when they only conflict with one another);
    jointly : bool
    """

    truths: np.ndarray
    labels: np.ndarray
    jointly: bool = False


def infeasibility(problem: AssociationProblem) -> Infeasibility:
    """Diagnose an assignment problem with no feasible association."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import maximum_bipartite_matching

    n, M = problem.cost.shape
    m = M - n
    allowed = problem.cost < math.inf
    sure = np.flatnonzero(problem.mandatory[:m])
    stuck = sure[~allowed[:, sure].any(axis=0)]
    alone = np.flatnonzero(~allowed.any(axis=1))
    if alone.size or stuck.size:
        return Infeasibility(alone, stuck)
    if n:
        match = maximum_bipartite_matching(csr_matrix(allowed.astype(np.int8)), perm_type="column")
        left = np.flatnonzero(match < 0)
        if left.size:
            return Infeasibility(left, np.empty(0, dtype=np.int64), True)
    return Infeasibility(np.empty(0, dtype=np.int64), sure)
