"""Frozen copy of ``nllbench.measures.tgospa`` as of commit 71647ce (the exact MILP over per-pair spans).

The reference that the linear-time solver is compared with
(``tests/crosscheck/test_tgospa_against_frozen_milp.py``, ``benchmarks/bench_tgospa.py``): its exact
value is the contract (equal to 1e-12 relative).
Do not edit it; it is test code, not part of the package.

Original module docstring:

Trajectory GOSPA (García-Fernández, Rahmathullah, Svensson, IEEE TSP 68, 2020), alpha = 2.

For true trajectories i and estimated trajectories j over frames k = 1..T,
an assignment sequence pi^1..pi^T maps every true trajectory to an estimated
one or to 0 (injectively on the non-zero values), and

    d^p = min_{pi^{1:T}} sum_k [ sum_{(i, j = pi^k_i): both exist, d(x_i^k, y_j^k) < c} d^p
                                 + c^p / 2 (|X^k| + |Y^k| - 2 #those pairs) ]
          + gamma^p sum_{k<T} sum_i s_i(pi^k, pi^{k+1}),

with s_i = 0 if pi^k_i = pi^{k+1}_i, 1 if they differ and are both non-zero,
1/2 otherwise (the paper's assignment-sequence definition with the per-frame
GOSPA base metric).

Computation: with binary w^k_ij = 1[pi^k_i = j], sum_i s_i is half the total
variation (1/2) sum_ij |w^k_ij - w^{k+1}_ij| (as in the paper), so the minimum
is a mixed-integer linear programme; it is solved exactly with HiGHS
(``scipy.optimize.milp``, zero gap) and the value is recomputed from the
integral assignment. Its LP relaxation (w in [0, 1]) is the paper's
LP metric, a lower bound that is itself a metric.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse
from scipy.optimize import LinearConstraint, milp

from nllbench.engine import validate as v
from nllbench.measures._sequences import distances, labelled_sequence


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
        ``"exact"``: the integer minimum (the definition). ``"lp"``: the LP
        relaxation, the paper's LP metric (a lower bound of the exact value).

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
    c = v.positive_scalar(c, "c")
    p = float(p)
    if not np.isfinite(p) or p < 1:
        raise ValueError(f"p: expected a number >= 1, got {p!r}")
    gamma = c if gamma is None else v.positive_scalar(gamma, "gamma")
    if method not in ("exact", "lp"):
        raise ValueError(f"method: expected 'exact' or 'lp', got {method!r}")
    X = labelled_sequence(truth, truth_ids, "truth", "truth_ids")
    Y = labelled_sequence(estimates, estimate_ids, "estimates", "estimate_ids", frames=X.frames)
    K, n, m = X.frames, X.count, Y.count
    close = np.zeros((K, n, m), dtype=bool)  # both exist and d < c: the pair may count
    dist_p = np.zeros((K, n, m))
    for k in range(K):
        d = distances(X.points[k], Y.points[k])
        rows, cols = np.nonzero(d < c)
        close[k, X.index[k][rows], Y.index[k][cols]] = True
        dist_p[k, X.index[k][rows], Y.index[k][cols]] = d[rows, cols] ** p
    gain = np.where(close, dist_p - c**p, 0.0)
    pairs = np.flatnonzero(close.any(axis=0).reshape(-1))
    ti, ej = np.divmod(pairs, max(m, 1))
    gain = gain.reshape(K, n * m)[:, pairs]
    if method == "exact":
        w = _solve_spans(gain, ti, ej, n, m, gamma**p)
    else:
        w = _solve(gain, ti, ej, n, m, gamma**p, integer=False)
    full = np.zeros((K, n * m))
    full[:, pairs] = w
    return _result(full.reshape(K, n, m), close, dist_p, X, Y, c, p, gamma, method == "exact")


def _solve(gain, ti, ej, n: int, m: int, switch: float, integer: bool) -> np.ndarray:
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
    x = _highs(cost, A, np.concatenate(lower), np.concatenate(upper), integrality)
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


@dataclass(frozen=True)
class _SpanLayout:
    """Columns of :func:`_solve_spans`' problem.

    cost : (n_var,) gain of each w column (0 for the pre/post holds);
    core : per pair p, the columns of w on frames f0[p]..f1[p];
    cap_rows, cap_cols : (nnz,) the capacity matrix's entries (rows (k, truth) then (k, estimate));
    later, earlier : (ne,) the w columns of each switch term |w_later - w_earlier|.
    """

    cost: np.ndarray
    core: list
    cap_rows: np.ndarray
    cap_cols: np.ndarray
    later: np.ndarray
    earlier: np.ndarray


def _span_layout(gain, ti, ej, n: int, m: int, f0, f1) -> _SpanLayout:
    """Variables of each pair on its span of frames, plus one ``pre`` and one ``post`` hold."""
    K, P = gain.shape
    trip_r, trip_c = [], []
    cost, col, core = [], 0, []
    tv_pairs = []  # (later, earlier)

    def capacity(frames, p, column):
        frames = np.asarray(frames)
        trip_r.extend([frames * n + ti[p], K * n + frames * m + ej[p]])
        trip_c.extend([np.full(frames.size, column)] * 2)

    for p in range(P):
        span = np.arange(f0[p], f1[p] + 1)
        cols = col + np.arange(span.size)
        cost.append(gain[span, p])
        col += span.size
        for k, c_ in zip(span, cols, strict=True):
            capacity([k], p, c_)
        core.append(cols)
        tv_pairs += [(cols[t], cols[t - 1]) for t in range(1, span.size)]
        if f0[p] > 0:  # pre-hold, then the step into the span
            capacity(np.arange(f0[p]), p, col)
            cost.append(np.zeros(1))
            tv_pairs.append((cols[0], col))
            col += 1
        if f1[p] < K - 1:
            capacity(np.arange(f1[p] + 1, K), p, col)
            cost.append(np.zeros(1))
            tv_pairs.append((col, cols[-1]))
            col += 1
    later, earlier = np.array(tv_pairs, dtype=np.int64).reshape(-1, 2).T
    rows, cols = np.concatenate(trip_r), np.concatenate(trip_c)
    return _SpanLayout(np.concatenate(cost), core, rows, cols, later, earlier)


def _solve_spans(gain, ti, ej, n: int, m: int, switch: float) -> np.ndarray:
    """The integer minimum of :func:`_solve` with per-frame variables only where they can matter.

    For a pair (i, j) whose frames with d < c run from f0 to f1, w is a
    variable on [f0, f1]; before f0 it is one binary ``pre`` (w = pre on every
    frame < f0) and after f1 one binary ``post``. This loses nothing: with the
    switch cost s (0 to stay, 1/2 to or from none, 1 between two estimates),
    any label on a stretch of frames where it gains nothing can be replaced by
    none (s(a, j) + s(j, b) >= s(a, 0) + s(0, b) unless a = b = j), and a
    stretch of j that reaches neither frame 0 nor a frame where (i, j) gains
    ends next to another label, where dropping it costs nothing either; so j
    is needed before f0 only on all of [0, f0), and after f1 only on all of
    (f1, K).
    """
    K, P = gain.shape
    if P == 0:
        return np.zeros((K, 0))
    active = gain < 0
    f0 = active.argmax(axis=0)
    f1 = K - 1 - active[::-1].argmax(axis=0)
    lay = _span_layout(gain, ti, ej, n, m, f0, f1)
    n_var, ne = lay.cost.size, lay.later.size
    A_cap = sparse.csr_matrix(
        (np.ones(lay.cap_rows.size), (lay.cap_rows, lay.cap_cols)), shape=(K * (n + m), n_var + ne)
    )
    blocks, lower, upper = _switch_rows(n_var, lay.later, lay.earlier, n_var + ne)
    x = _highs(
        np.concatenate([lay.cost, np.full(ne, switch / 2.0)]),
        sparse.vstack([A_cap, *blocks], format="csr"),
        np.concatenate([np.full(K * (n + m), -np.inf), *lower]),
        np.concatenate([np.ones(K * (n + m)), *upper]),
        np.concatenate([np.ones(n_var, dtype=int), np.zeros(ne, dtype=int)]),
    )
    return _spans_to_w(np.round(x[:n_var]), lay.core, f0, f1, K)


def _spans_to_w(x: np.ndarray, core: list, f0, f1, K: int) -> np.ndarray:
    """(K, P) w from the span solution: the core columns, then the pre and post holds."""
    w = np.zeros((K, len(core)))
    for p, cols in enumerate(core):
        w[f0[p] : f1[p] + 1, p] = x[cols]
        nxt = cols[-1] + 1
        if f0[p] > 0:
            w[: f0[p], p] = x[nxt]
            nxt += 1
        if f1[p] < K - 1:
            w[f1[p] + 1 :, p] = x[nxt]
    return w


def _highs(cost, A, lower, upper, integrality) -> np.ndarray:
    """Minimise cost @ x subject to lower <= A x <= upper, 0 <= x <= 1, with HiGHS.

    HiGHS stops a MILP within an absolute gap of 1e-6 in the objective even
    with zero relative gap; scaling the costs so that the largest is 1e6
    makes that gap 1e-12 of the largest cost.
    """
    top = float(np.max(np.abs(cost), initial=0.0))
    scale = 1e6 / top if top > 0 else 1.0
    res = milp(
        cost * scale,
        constraints=LinearConstraint(A, lower, upper),
        integrality=integrality,
        bounds=(0.0, 1.0),
        options={"mip_rel_gap": 0.0},
    )
    if res.x is None:
        raise RuntimeError(f"tgospa: the HiGHS solver failed ({res.message})")
    return res.x


def _result(w, close, dist_p, X, Y, c, p, gamma, exact) -> TGOSPAResult:
    """Decomposition of the (K, n, m) assignment weights ``w``."""
    K, n, m = w.shape
    half = c**p / 2.0
    counted = w * close  # weight of pairs that both exist within c
    frame_loc = np.sum(counted * dist_p, axis=(1, 2))
    n_pairs = counted.sum(axis=(1, 2))
    n_truth = np.array([pts.shape[0] for pts in X.points], dtype=float)
    n_est = np.array([pts.shape[0] for pts in Y.points], dtype=float)
    frame_missed = half * (n_truth - n_pairs)
    frame_false = half * (n_est - n_pairs)
    tv = np.zeros(K)
    tv[1:] = 0.5 * np.abs(np.diff(w, axis=0)).sum(axis=(1, 2))
    frame_switch = gamma**p * tv
    assigned = np.full((K, n), -1, dtype=np.int64)
    n_full = n_half = 0
    if n and m:
        best = w.argmax(axis=2)
        has = np.take_along_axis(w, best[:, :, None], axis=2)[:, :, 0] > 0.5
        assigned[has] = best[has]
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
