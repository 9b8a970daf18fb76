"""Trajectory GOSPA (García-Fernández, Rahmathullah, Svensson, IEEE TSP 68, 2020), alpha = 2.

For true trajectories i and estimated trajectories j over frames k = 1..T,
an assignment sequence pi^1..pi^T maps every true trajectory to an estimated
one or to 0 (injectively on the non-zero values), and

    d^p = min_{pi^{1:T}} sum_k [ sum_{(i, j = pi^k_i): both exist, d(x_i^k, y_j^k) < c} d^p
                                 + c^p / 2 (|X^k| + |Y^k| - 2 #those pairs) ]
          + gamma^p sum_{k<T} sum_i s_i(pi^k, pi^{k+1}),

with s_i = 0 if pi^k_i = pi^{k+1}_i, 1 if they differ and are both non-zero,
1/2 otherwise (the paper's assignment-sequence definition with the per-frame
GOSPA base metric). With binary w^k_ij = 1[pi^k_i = j], sum_i s_i is half the
total variation (1/2) sum_ij |w^k_ij - w^{k+1}_ij| (as in the paper), so the
minimum is a mixed-integer linear programme; its LP relaxation (w in [0, 1])
is the paper's LP metric, a lower bound that is itself a metric
(``method="lp"``, solved with HiGHS over every frame and candidate pair).

The exact minimum (``method="exact"``) is found in time and memory linear in
the frames for a fixed number of trajectories by
:mod:`nllbench.measures.tracks._tgospa`: each true trajectory's cheapest
assignment sequence on its own (a Viterbi recursion over the labels it can
use, the estimates' capacity dropped), then, where those collide, the
colliding trajectories jointly (Lagrangian prices on the contested estimates
and a joint Viterbi over the states the prices leave, or a mixed-integer
programme of size linear in the frames). The value is recomputed from the
integral assignment.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse

from nllbench.engine import validate as v
from nllbench.measures._sequences import labelled_sequence
from nllbench.measures.tracks._tgospa import Close, close_entries, exact_assignment, highs


@dataclass(frozen=True)
class TGOSPAResult:
    """Trajectory GOSPA (alpha = 2) and its decomposition.

    ``localization + missed + false + switches == value ** p`` (p-th-power
    units; the root is taken on the total only). Per-frame arrays have shape
    (K,); the switch cost of the transition k-1 -> k is booked at frame k.

    Attributes
    ----------
    value : float
    localization : float
        Sum of d^p over assigned pairs that both exist and are closer than c.
    missed, false : float
        c^p / 2 per true (estimated) point left without such a pair.
    switches : float
        gamma^p times the summed s_i (1 per full switch, 1/2 per half).
    n_switches, n_half_switches : int
        Transitions between two estimates, and between an estimate and none.
    frame_localization, frame_missed, frame_false, frame_switches : (K,) float
    assignment : (K, n) int
        pi^k_i as an index into ``estimate_ids`` (-1 for none), columns in the
        order of ``truth_ids``.
    truth_ids, estimate_ids : (n,), (m,) int
        The distinct identities, sorted.
    exact : bool
        True for the integer optimum, False for the LP relaxation (then the
        decomposition is that of the fractional optimum and ``assignment``
        holds the largest weight of each row where it exceeds 1/2).
    p, c, gamma : float
    """

    value: float
    localization: float
    missed: float
    false: float
    switches: float
    n_switches: int
    n_half_switches: int
    frame_localization: np.ndarray
    frame_missed: np.ndarray
    frame_false: np.ndarray
    frame_switches: np.ndarray
    assignment: np.ndarray
    truth_ids: np.ndarray
    estimate_ids: np.ndarray
    exact: bool
    p: float
    c: float
    gamma: float


def checked_arguments(truth, truth_ids, estimates, estimate_ids, c, p, gamma, method):
    """The arguments of :func:`tgospa` (and of PT-GOSPA, which takes the same) checked:
    (c, p, gamma, truth sequence, estimates sequence), errors naming the argument."""
    c = v.positive_scalar(c, "c")
    p = float(p)
    if not np.isfinite(p) or p < 1:
        raise ValueError(f"p: expected a number >= 1, got {p!r}")
    gamma = c if gamma is None else v.positive_scalar(gamma, "gamma")
    if method not in ("exact", "lp"):
        raise ValueError(f"method: expected 'exact' or 'lp', got {method!r}")
    X = labelled_sequence(truth, truth_ids, "truth", "truth_ids")
    Y = labelled_sequence(estimates, estimate_ids, "estimates", "estimate_ids", frames=X.frames)
    return c, p, gamma, X, Y


def tgospa(
    truth,
    truth_ids,
    estimates,
    estimate_ids,
    c: float,
    p: float = 1.0,
    gamma: float | None = None,
    method: str = "exact",
) -> TGOSPAResult:
    """Trajectory GOSPA metric (alpha = 2) of estimated against true trajectories.

    Parameters
    ----------
    truth, estimates : sequences (one per frame) of (n_k, d) and (m_k, d) arrays
    truth_ids, estimate_ids : sequences of (n_k,) and (m_k,) integer identities
        An identity names a trajectory; it may be absent in some frames and return.
    c : float
        Cut-off (> 0).
    p : float
        Order (>= 1).
    gamma : float, optional
        Switch cost (> 0); default ``c``: a full switch costs as much as one
        missed and one false point in one frame.
    method : {"exact", "lp"}
        ``"exact"``: the integer minimum (the definition), in time and memory
        linear in the frames for a fixed number of trajectories (module
        docstring). ``"lp"``: the LP relaxation over every frame and candidate
        pair, the paper's LP metric (a lower bound of the exact value; its
        size grows with frames times pairs).

    Returns
    -------
    TGOSPAResult

    Examples
    --------
    >>> r = tgospa([[[0.0, 0.0]], [[0.0, 0.0]]], [[1], [1]],
    ...            [[[0.5, 0.0]], [[0.5, 0.0]]], [[7], [8]], c=2.0, p=1, gamma=1.0)
    >>> r.value, r.localization, r.switches
    (2.0, 1.0, 1.0)
    """
    c, p, gamma, X, Y = checked_arguments(truth, truth_ids, estimates, estimate_ids, c, p, gamma, method)
    close = close_entries(X, Y, c, p)
    if method == "lp":
        return _lp_result(close, X, Y, c, p, gamma)
    assignment, _ = exact_assignment(close, gamma**p)
    return _result(assignment, close, X, Y, c, p, gamma)


def lp_weights(gain, ti, ej, n: int, m: int, switch: float, integer: bool) -> np.ndarray:
    """argmin over w (K, P) of sum gain * w + switch / 2 * sum_t |w_t - w_{t-1}| (injective per frame).

    ``gain`` is (K, P) for the P candidate pairs (truth ti[P], estimate ej[P]).
    Pairs that never gain are left out: their w only adds switch cost.
    """
    K, P = gain.shape
    if P == 0:
        return np.zeros((K, 0))
    nw, ne = K * P, (K - 1) * P
    cost = np.concatenate([gain.reshape(-1), np.full(ne, switch / 2.0)])
    w_idx = np.arange(nw).reshape(K, P)
    blocks = []
    # sum_j w^k_ij <= 1 and sum_i w^k_ij <= 1: rows indexed by (k, truth) and (k, estimate)
    for owner, count in ((ti, n), (ej, m)):
        rows = (np.arange(K)[:, None] * count + owner[None, :]).reshape(-1)
        blocks.append(sparse.csr_matrix((np.ones(nw), (rows, w_idx.reshape(-1))), shape=(K * count, nw + ne)))
    lower = [np.full(K * n, -np.inf), np.full(K * m, -np.inf)]
    upper = [np.ones(K * n), np.ones(K * m)]
    if ne:
        switch_blocks, switch_lower, switch_upper = _switch_rows(
            nw, w_idx[1:].reshape(-1), w_idx[:-1].reshape(-1), nw + ne
        )
        blocks += switch_blocks
        lower += switch_lower
        upper += switch_upper
    A = sparse.vstack(blocks, format="csr")
    integrality = np.concatenate([np.full(nw, int(integer)), np.zeros(ne, dtype=int)])
    x = highs(cost, A, np.concatenate(lower), np.concatenate(upper), integrality)
    w = x[:nw].reshape(K, P)
    return np.round(w) if integer else np.clip(w, 0.0, 1.0)


def _switch_rows(first: int, later: np.ndarray, earlier: np.ndarray, width: int):
    """Rows e_t >= +-(w_later - w_earlier) for switch variables e at columns first, first + 1, ...

    As -e + w_later - w_earlier <= 0 and -e - w_later + w_earlier <= 0: returns
    (blocks, lower, upper) lists to stack under the other constraints (``width`` columns).
    """
    ne = later.size
    r = np.arange(ne)
    blocks, lower, upper = [], [], []
    for sign in (1.0, -1.0):
        blocks.append(
            sparse.csr_matrix(
                (
                    np.concatenate([-np.ones(ne), np.full(ne, sign), np.full(ne, -sign)]),
                    (np.concatenate([r, r, r]), np.concatenate([first + r, later, earlier])),
                ),
                shape=(ne, width),
            )
        )
        lower.append(np.full(ne, -np.inf))
        upper.append(np.zeros(ne))
    return blocks, lower, upper


def _result(A: np.ndarray, close: Close, X, Y, c, p, gamma) -> TGOSPAResult:
    """Decomposition of the integral assignment A (K, n) (estimate index or -1, holds included)."""
    K = A.shape[0]
    kk, ii = np.nonzero(A >= 0)
    entry = close.lookup(kk, ii, A[kk, ii])
    hit = entry >= 0
    frame_loc = np.bincount(kk[hit], weights=close.dist_p[entry[hit]], minlength=K).astype(
        float
    )  # int if empty
    n_pairs = np.bincount(kk[hit], minlength=K).astype(float)
    before, after = A[:-1], A[1:]
    changed = before != after
    full = changed & (before >= 0) & (after >= 0)
    tv = np.zeros(K)
    tv[1:] = full.sum(axis=1) + 0.5 * (changed & ~full).sum(axis=1)
    return _assemble(frame_loc, n_pairs, tv, A, X, Y, c, p, gamma, exact=True)


def _assemble(frame_loc, n_pairs, tv, assigned, X, Y, c, p, gamma, exact: bool) -> TGOSPAResult:
    """The result from per-frame localization, counted pairs, switch variation and the assignment."""
    half = c**p / 2.0
    n_truth = np.array([pts.shape[0] for pts in X.points], dtype=float)
    n_est = np.array([pts.shape[0] for pts in Y.points], dtype=float)
    frame_missed = half * (n_truth - n_pairs)
    frame_false = half * (n_est - n_pairs)
    frame_switch = gamma**p * tv
    before, after = assigned[:-1], assigned[1:]
    changed = before != after
    n_full = int(np.sum(changed & (before >= 0) & (after >= 0)))
    n_half = int(np.sum(changed & ((before < 0) | (after < 0))))
    parts = [float(np.sum(a)) for a in (frame_loc, frame_missed, frame_false, frame_switch)]
    total = sum(parts)
    return TGOSPAResult(
        total ** (1.0 / p),
        *parts,
        n_full,
        n_half,
        frame_loc,
        frame_missed,
        frame_false,
        frame_switch,
        assigned,
        X.ids,
        Y.ids,
        exact,
        p,
        c,
        gamma,
    )


def _lp_result(close: Close, X, Y, c, p, gamma) -> TGOSPAResult:
    """The LP relaxation over every frame and candidate pair (the paper's LP metric) and its decomposition."""
    K, n, m = close.frames, close.n, close.m
    pair = np.repeat(np.arange(close.truth.size), np.diff(close.ptr))
    gain = np.zeros((K, close.truth.size))
    gain[close.frame, pair] = close.gain
    w = lp_weights(gain, close.truth, close.est, n, m, gamma**p, integer=False)
    counted = np.zeros_like(w)  # weight of pairs that both exist within c
    counted[close.frame, pair] = w[close.frame, pair]
    dist_p = np.zeros_like(w)
    dist_p[close.frame, pair] = close.dist_p
    frame_loc = np.sum(counted * dist_p, axis=1)
    n_pairs = counted.sum(axis=1)
    tv = np.zeros(K)
    tv[1:] = 0.5 * np.abs(np.diff(w, axis=0)).sum(axis=1)
    assigned = np.full((K, n), -1, dtype=np.int64)
    if n and m and w.size:
        full = np.zeros((K, n, m))
        full[:, close.truth, close.est] = w
        best = full.argmax(axis=2)
        has = np.take_along_axis(full, best[:, :, None], axis=2)[:, :, 0] > 0.5
        assigned[has] = best[has]
    return _assemble(frame_loc, n_pairs, tv, assigned, X, Y, c, p, gamma, exact=False)
