"""Point-estimate measures that the NLL is compared with.

GOSPA (Rahmathullah, Garcia-Fernandez, Svensson, FUSION 2017) with
alpha = 2, any order p >= 1 and cut-off c > 0, and its decomposition.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numba as nb
import numpy as np
from scipy.optimize import linear_sum_assignment
from scipy.spatial.distance import cdist

from nllbench.engine import validate as v
from nllbench.measures._sequences import covariance_factors, distances


@dataclass(frozen=True)
class GOSPAResult:
    """GOSPA (alpha = 2) between estimates X and truth Y.

    ``value = (localization + missed + false) ** (1 / p)``; the three
    components are in p-th-power units (the root is taken on the total only).

    Attributes
    ----------
    value : float
    localization : float
        Sum of d(x, y)^p over assigned pairs (pairs with d < c).
    missed : float
        c^p / 2 per truth left unassigned.
    false : float
        c^p / 2 per estimate left unassigned.
    n_assigned, n_missed, n_false : int
    p, c : float
    assignment : (k, 2) int
        (estimate index, truth index) of the assigned pairs.
    """

    value: float
    localization: float
    missed: float
    false: float
    n_assigned: int
    n_missed: int
    n_false: int
    p: float
    c: float
    assignment: np.ndarray


def gospa(estimates, truth, c: float = 2.0, p: float = 1.0, alpha: float = 2.0) -> GOSPAResult:
    """GOSPA metric with alpha = 2 and the Euclidean base distance.

    d_p^(c,2)(X, Y) = ( min_gamma sum_{(i,j) in gamma} d(x_i, y_j)^p
                        + c^p / 2 (|X| + |Y| - 2 |gamma|) )^(1/p)

    Parameters
    ----------
    estimates : (k, d) array_like
        Estimated object states X (may be empty).
    truth : (n, d) array_like
        Ground-truth states Y (may be empty).
    c : float
        Cut-off distance (> 0). The paper uses 2.
    p : float
        Order, >= 1. The paper uses 1.
    alpha : float
        Must be 2 (the only value with the localisation/missed/false split).

    Notes
    -----
    For alpha = 2 a rectangular assignment on min(d, c)^p, plus c^p / 2 per
    unit of cardinality difference, is exact: an assigned pair at distance
    >= c costs c^p, the same as leaving both unassigned, so such pairs are
    reported as one miss and one false estimate.

    Examples
    --------
    >>> r = gospa([[3, 5], [7, 4]], [[2, 5], [6, 3]], c=2, p=1)
    >>> round(r.value, 6) == round(1 + 2 ** 0.5, 6)
    True
    """
    if alpha != 2:
        raise ValueError(f"alpha: expected 2 (the only value supported), got {alpha!r}")
    c, p, X, Y = _sets_c_p(estimates, truth, c, p)
    return _gospa(X, Y, c, p, _assigned(X, Y, c, p))


def gospa_and_ospa(estimates, truth, c: float = 2.0, p: float = 1.0) -> tuple[GOSPAResult, OSPAResult]:
    """``(gospa(estimates, truth, c, p), ospa(estimates, truth, c, p))``, bit for bit, from one assignment.

    Both minimise the sum of min(d, c)^p over rectangular assignments: the
    cost matrix and its assignment are computed once and read by both.
    """
    c, p, X, Y = _sets_c_p(estimates, truth, c, p)
    assigned = _assigned(X, Y, c, p)
    return _gospa(X, Y, c, p, assigned), _ospa(X, Y, c, p, assigned)


def _assigned(X: np.ndarray, Y: np.ndarray, c: float, p: float):
    """(cost (nx, ny), rows, cols): the cut-off cost min(d, c)^p and its assignment; None for an empty set."""
    if X.shape[0] == 0 or Y.shape[0] == 0:
        return None
    cost = _cut_power(X, Y, c, p)
    rows, cols = linear_sum_assignment(cost)
    return cost, rows, cols


def _gospa(X: np.ndarray, Y: np.ndarray, c: float, p: float, assigned) -> GOSPAResult:
    """:func:`gospa` of validated sets from their :func:`_assigned`."""
    nx, ny = X.shape[0], Y.shape[0]
    half = c**p / 2.0
    if assigned is None:
        missed, false = half * ny, half * nx
        return GOSPAResult(
            (missed + false) ** (1 / p), 0.0, missed, false, 0, ny, nx, p, c, np.empty((0, 2), dtype=np.int64)
        )
    _, rows, cols = assigned
    # C-contiguous: one compiled signature (a Fortran-ordered slice would compile a second)
    dist = _pair_distances(np.ascontiguousarray(X), np.ascontiguousarray(Y), rows, cols)
    real = dist < c
    rows, cols = rows[real], cols[real]
    loc = float((dist[real] ** p).sum())  # the array methods: np.sum and np.stack cost more than the work
    k = rows.size
    missed = half * (ny - k)
    false = half * (nx - k)
    pairs = np.empty((k, 2), dtype=np.int64)
    pairs[:, 0], pairs[:, 1] = rows, cols
    return GOSPAResult((loc + missed + false) ** (1 / p), loc, missed, false, k, ny - k, nx - k, p, c, pairs)


@nb.njit(cache=True)
def _cut_distances(X, Yt, c, square):
    """min(||x_i - y_j||, c), squared if ``square``, for all pairs: (nx, ny); ``Yt`` is Y transposed (d, ny).

    One pass per row, no (nx, ny, d) temporary, with inner loops over j that
    the compiler vectorises. The distance is summed as
    ``scipy.spatial.distance.cdist`` sums it (squares in coordinate order,
    then the square root), so the values are the same bit for bit.
    """
    nx, d = X.shape
    ny = Yt.shape[1]
    out = np.empty((nx, ny))
    for i in range(nx):
        row = out[i]
        for j in range(ny):
            t = X[i, 0] - Yt[0, j]
            row[j] = t * t
        for k in range(1, d):
            for j in range(ny):
                t = X[i, k] - Yt[k, j]
                row[j] += t * t
        for j in range(ny):
            v = math.sqrt(row[j])
            v = v if v < c else c
            row[j] = v * v if square else v
    return out


@nb.njit(cache=True)
def _pair_distances(X, Y, rows, cols):
    """||x_rows[k] - y_cols[k]|| for the assigned pairs, as :func:`_cut_distances` computes them."""
    out = np.empty(rows.size)
    for k in range(rows.size):
        s = 0.0
        for m in range(X.shape[1]):
            t = X[rows[k], m] - Y[cols[k], m]
            s += t * t
        out[k] = math.sqrt(s)
    return out


def _cut_power(X: np.ndarray, Y: np.ndarray, c: float, p: float) -> np.ndarray:
    """The assignment cost min(d(x_i, y_j), c)^p, (nx, ny)."""
    cost = _cut_distances(np.ascontiguousarray(X), np.ascontiguousarray(Y.T), c, p == 2.0)
    if p not in (1.0, 2.0):
        np.power(cost, p, out=cost)  # NumPy's power, as before (numba's may differ by an ulp)
    return cost


def _sets_c_p(estimates, truth, c, p):
    """Validated cut-off c > 0, order p >= 1 and point sets of one dimension."""
    c = v.positive_scalar(c, "c")
    p = float(p)
    if not np.isfinite(p) or p < 1:
        raise ValueError(f"p: expected a number >= 1, got {p!r}")
    X = point_set(estimates, "estimates")
    Y = point_set(truth, "truth")
    if X.shape[0] and Y.shape[0] and X.shape[1] != Y.shape[1]:
        raise ValueError(f"truth: expected dimension {X.shape[1]} like estimates, got shape {Y.shape}")
    return c, p, X, Y


def point_set(value, name: str) -> np.ndarray:
    """``value`` as a finite float64 point set (k, d); an empty one as (0, d) or (0, 0).

    Raises ValueError naming ``name`` for an array that is not 2-D or not finite.
    """
    arr = v.as_float_array(value, name)
    if arr.size == 0:
        return np.empty((0, arr.shape[1] if arr.ndim == 2 else 0))
    if arr.ndim != 2:
        raise ValueError(f"{name}: expected a 2-D array of shape (k, d), got shape {arr.shape}")
    v.check_finite(arr, name)
    return arr


@dataclass(frozen=True)
class ClearMOTFrame:
    """CLEAR MOT counts for one frame (no identities, so no switches).

    Attributes
    ----------
    mota : float
        ``1 - (misses + false_positives) / n_truth`` (``nan``-free: with no
        truth it is ``1 - false_positives`` if that is 0, else ``-inf``).
    motp : float
        Mean Euclidean distance of the matched pairs (same unit as the
        states, not squared); ``inf`` when nothing is matched.
    matches, misses, false_positives : int
    distance_sum : float
    """

    mota: float
    motp: float
    matches: int
    misses: int
    false_positives: int
    distance_sum: float


def clear_mot_frame(estimates, truth, threshold: float = 2.0) -> ClearMOTFrame:
    """MOTA and MOTP of one frame (Bernardin & Stiefelhagen 2008).

    Pairs at Euclidean distance ``<= threshold`` (inclusive, as py-motmetrics
    and TrackEval) may match. The gate is applied inside the assignment: the
    matching maximises the number of matches, then minimises the summed
    distance among maximum matchings.

    Examples
    --------
    >>> r = clear_mot_frame([[0, 0], [1.43091, -1.25]], [[0, 0], [1.43091, 1.25]])
    >>> r.mota, round(r.motp, 4)
    (1.0, 1.9)
    """
    threshold = v.positive_scalar(threshold, "threshold")
    X = point_set(estimates, "estimates")
    Y = point_set(truth, "truth")
    nx, ny = X.shape[0], Y.shape[0]
    dist = np.empty((nx, ny))
    if nx and ny:
        if X.shape[1] != Y.shape[1]:
            raise ValueError(f"truth: expected dimension {X.shape[1]} like estimates, got shape {Y.shape}")
        dist = cdist(X, Y)
    rows, cols = gated_matching(dist, threshold)
    k = rows.size
    dsum = float(dist[rows, cols].sum()) if k else 0.0
    misses, fps = ny - k, nx - k
    if ny:
        mota = 1.0 - (misses + fps) / ny
    else:
        mota = 1.0 if fps == 0 else -np.inf
    motp = dsum / k if k else np.inf
    return ClearMOTFrame(float(mota), float(motp), k, misses, fps, dsum)


@dataclass(frozen=True)
class OSPAResult:
    """OSPA (Schuhmacher, Vo & Vo 2008) with its localisation / cardinality split.

    ``value = ((localization + cardinality) / max(|X|, |Y|)) ** (1 / p)``
    (0 when both sets are empty); the components are sums in p-th-power units.
    """

    value: float
    localization: float
    cardinality: float
    p: float
    c: float


def ospa(estimates, truth, c: float = 2.0, p: float = 1.0) -> OSPAResult:
    """OSPA metric of order p with cut-off c and the Euclidean base distance.

    The assignment minimises sum min(d, c)^p (the distances are raised to p
    *before* assigning, which matters for p != 1), and each unit of
    cardinality difference costs c^p.
    """
    c, p, X, Y = _sets_c_p(estimates, truth, c, p)
    return _ospa(X, Y, c, p, _assigned(X, Y, c, p))


def _ospa(X: np.ndarray, Y: np.ndarray, c: float, p: float, assigned) -> OSPAResult:
    """:func:`ospa` of validated sets from their :func:`_assigned`."""
    nx, ny = X.shape[0], Y.shape[0]
    if nx == 0 and ny == 0:
        return OSPAResult(0.0, 0.0, 0.0, p, c)
    loc = 0.0
    if assigned is not None:
        cost, rows, cols = assigned
        loc = float(cost[rows, cols].sum())
    card = c**p * abs(nx - ny)
    return OSPAResult(((loc + card) / max(nx, ny)) ** (1 / p), loc, card, p, c)


def gated_matching(dist: np.ndarray, threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """Maximum number of pairs with dist <= threshold, then minimum summed distance."""
    nr, nc = dist.shape
    if nr == 0 or nc == 0:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    allowed = dist <= threshold
    # an unmatched row costs `unmatched`: one more match always pays for any
    # rerouting of the others (each costs <= threshold)
    unmatched = (min(nr, nc) + 1) * threshold + 1.0
    cost = np.concatenate([np.where(allowed, dist, np.inf), np.full((nr, nr), np.inf)], axis=1)
    cost[np.arange(nr), nc + np.arange(nr)] = unmatched
    rows, cols = linear_sum_assignment(cost)
    real = cols < nc
    return rows[real], cols[real]


@dataclass(frozen=True)
class ClearMOTResult:
    """Multi-frame CLEAR MOT (Bernardin & Stiefelhagen 2008).

    mota = 1 - (misses + false_positives + switches) / num_objects;
    motp = distance_sum / matches: the mean *Euclidean* distance of matched
    pairs, in state units (not squared). Per-frame counts are (K,) arrays.
    """

    mota: float
    motp: float
    matches: int
    misses: int
    false_positives: int
    switches: int
    num_objects: int
    distance_sum: float
    frame_matches: np.ndarray
    frame_misses: np.ndarray
    frame_false_positives: np.ndarray
    frame_switches: np.ndarray
    frame_distance_sum: np.ndarray


#: CLEAR MOT matching rules of :func:`clear_mot`.
CLEAR_RULES = ("motmetrics", "trackeval")
_EPS = np.finfo(float).eps  # TrackEval's tolerance on similarities


def clear_mot(
    truth,
    truth_ids,
    estimates,
    estimate_ids,
    threshold: float = 2.0,
    *,
    rule: str = "motmetrics",
    estimate_covs=None,
) -> ClearMOTResult:
    """CLEAR MOT over a sequence of frames.

    Parameters
    ----------
    truth, estimates : sequences (one per frame) of (n_k, d) and (m_k, d) arrays
    truth_ids, estimate_ids : sequences of (n_k,) and (m_k,) integer identities
    threshold : float
        A pair may match when its distance is <= threshold (inclusive, as
        py-motmetrics and TrackEval; for nuScenes' strict ``d < t`` pass
        ``np.nextafter(t, 0)``, the same test on floats).
    rule : {"motmetrics", "trackeval"}
        The matching of each frame (Notes).
    estimate_covs : sequence of (m_k, d, d) arrays, optional
        The estimates' covariances: the distance is then the Mahalanobis
        distance of the true state from the estimate (``threshold`` and MOTP
        in those units).

    Notes
    -----
    ``rule="motmetrics"``, per frame, as py-motmetrics 1.4 (and the nuScenes
    devkit, which uses it): (1) every object keeps the hypothesis it
    was last matched to (in any earlier frame) if that hypothesis is present
    and within the threshold; (2) the remaining objects and hypotheses are
    matched inside the gate, maximising the number of matches and then
    minimising the summed distance; (3) a match whose hypothesis differs from
    the object's last matched hypothesis is an identity switch (gaps do not
    reset the memory); (4) unmatched objects are misses, unmatched hypotheses
    false positives.

    ``rule="trackeval"``, as TrackEval's CLEAR (Luiten & Hoffhues, TrackEval,
    2020; the Argoverse 2 tracking evaluation uses it): similarities
    ``S = max(0, 1 - d / (2 threshold))`` (TrackEval's similarity threshold
    0.5 is then the distance ``threshold``), and one assignment per frame
    maximising ``sum 1000 [continued] + S`` over pairs with ``S >= 0.5``, where
    a pair is continued when the object was matched to that hypothesis in the
    previous frame that had both objects and hypotheses; switches as in (3),
    counted against the last match in any earlier frame. MOTP is reported as
    the mean distance under both rules (TrackEval's MOTP, a mean similarity,
    is ``1 - motp / (2 threshold)``).
    """
    threshold = v.positive_scalar(threshold, "threshold")
    if rule not in CLEAR_RULES:
        raise ValueError(f"rule: expected one of {CLEAR_RULES}, got {rule!r}")
    K = len(truth)
    for name, seq in (("truth_ids", truth_ids), ("estimates", estimates), ("estimate_ids", estimate_ids)):
        if len(seq) != K:
            raise ValueError(f"{name}: expected {K} frames like truth, got {len(seq)}")
    if estimate_covs is not None and len(estimate_covs) != K:
        raise ValueError(f"estimate_covs: expected {K} frames like truth, got {len(estimate_covs)}")

    def frames():
        for k in range(K):
            Y = point_set(truth[k], "truth")
            X = point_set(estimates[k], "estimates")
            oid = np.asarray(truth_ids[k], dtype=np.int64).reshape(-1)
            hid = np.asarray(estimate_ids[k], dtype=np.int64).reshape(-1)
            if oid.size != Y.shape[0] or hid.size != X.shape[0]:
                raise ValueError(f"truth_ids/estimate_ids: frame {k}: expected one identity per state")
            yield oid, hid, _frame_distances(Y, X, estimate_covs, k)

    previous: dict[int, int] = {}  # trackeval: object -> hypothesis in the previous frame with both

    def pairs_of(dist, oid, hid, last):
        if rule == "motmetrics":
            return _motmetrics_pairs(dist, oid, hid, last, threshold)
        return _trackeval_pairs(dist, oid, hid, previous, threshold)

    return _clear_run(K, frames(), pairs_of)[0]


def clear_similarity(similarities, truth_ids, estimate_ids, threshold: float = 0.5):
    """TrackEval's CLEAR on per-frame similarities (e.g. box IoU): (ClearMOTResult, matched pairs).

    The matching of :func:`clear_mot` with ``rule="trackeval"``, fed the
    similarities directly: pairs with ``S >= threshold`` (up to an epsilon,
    as TrackEval) may match, continued matches first. In the result,
    ``distance_sum`` is the sum of the matched similarities and ``motp``
    their mean (TrackEval's MOTP). The second element holds, per frame, the
    (object identities, hypothesis identities) of the matched pairs
    (two (p_k,) int arrays), for the track-level counts (MT, PT, ML, Frag).
    """
    threshold = v.positive_scalar(threshold, "threshold")
    K = len(similarities)
    for name, seq in (("truth_ids", truth_ids), ("estimate_ids", estimate_ids)):
        if len(seq) != K:
            raise ValueError(f"{name}: expected {K} frames like similarities, got {len(seq)}")

    def frames():
        for k in range(K):
            oid = np.asarray(truth_ids[k], dtype=np.int64).reshape(-1)
            hid = np.asarray(estimate_ids[k], dtype=np.int64).reshape(-1)
            yield oid, hid, np.asarray(similarities[k], dtype=float).reshape(oid.size, hid.size)

    previous: dict[int, int] = {}

    def pairs_of(sim, oid, hid, last_match):
        return _trackeval_sim_pairs(sim, oid, hid, previous, threshold)

    return _clear_run(K, frames(), pairs_of)


def _clear_run(K: int, frames, pairs_of):
    """The CLEAR MOT loop shared by :func:`clear_mot` and :func:`clear_similarity`.

    ``frames`` yields (object ids (n,), hypothesis ids (m,), values (n, m)) per
    frame; ``pairs_of(values, oid, hid, last)`` gives the frame's matched
    (object, hypothesis) index pairs. A match whose hypothesis differs from
    the object's last matched one (in any earlier frame) is a switch.
    Returns (ClearMOTResult with ``distance_sum`` the sum of the matched
    values, per-frame matched (object ids, hypothesis ids)).
    """
    last: dict[int, int] = {}  # object -> hypothesis of its last match
    fm, fmiss, ffp, fsw = (np.zeros(K, dtype=np.int64) for _ in range(4))
    fd = np.zeros(K)
    num_objects = 0
    matched = []
    for k, (oid, hid, values) in enumerate(frames):
        _check_unique(oid, "truth_ids", k)
        _check_unique(hid, "estimate_ids", k)
        num_objects += oid.size
        pairs = pairs_of(values, oid, hid, last)
        o_ids, h_ids = oid.tolist(), hid.tolist()
        dsum, switches = 0.0, 0
        for i, j in pairs:
            o, h = o_ids[i], h_ids[j]
            switch = o in last and last[o] != h
            last[o] = h
            dsum += float(values[i, j])  # in pair order, as the per-frame sum always was
            switches += switch
        fd[k], fsw[k], fm[k] = dsum, switches, len(pairs) - switches
        fmiss[k] = oid.size - len(pairs)
        ffp[k] = hid.size - len(pairs)
        index = np.array(pairs, dtype=np.int64).reshape(-1, 2)
        matched.append((oid[index[:, 0]], hid[index[:, 1]]))
    matches, switches = int(fm.sum()), int(fsw.sum())
    misses, fps = int(fmiss.sum()), int(ffp.sum())
    detections = matches + switches
    dsum = float(fd.sum())
    if num_objects:
        mota = 1.0 - (misses + fps + switches) / num_objects
    else:
        mota = 1.0 if fps == 0 else -np.inf
    motp = dsum / detections if detections else np.inf
    result = ClearMOTResult(
        float(mota), float(motp), matches, misses, fps, switches, num_objects, dsum, fm, fmiss, ffp, fsw, fd
    )
    return result, matched


def _frame_distances(Y: np.ndarray, X: np.ndarray, estimate_covs, k: int) -> np.ndarray:
    """(n, m) distances of frame k's truth Y (n, d) from its estimates X (m, d), Mahalanobis if covs given."""
    if Y.shape[0] and X.shape[0] and X.shape[1] != Y.shape[1]:
        raise ValueError(f"estimates[{k}]: expected dimension {Y.shape[1]} like truth, got {X.shape[1]}")
    chol = None
    if estimate_covs is not None:
        chol = covariance_factors(estimate_covs[k], X.shape[0], X.shape[1], f"estimate_covs[{k}]")
    return distances(Y, X, chol)


def _motmetrics_pairs(dist, oid, hid, last: dict, threshold: float) -> list[tuple[int, int]]:
    """One frame's matched (object, hypothesis) index pairs by py-motmetrics' rule (clear_mot Notes)."""
    n, m = dist.shape
    o_used = np.zeros(n, dtype=bool)
    h_used = np.zeros(m, dtype=bool)
    pairs = []
    if last:  # 1. keep established correspondences (identities are distinct within a frame)
        column = {h: j for j, h in enumerate(hid.tolist())}
        for i, o in enumerate(oid.tolist()):
            j = column.get(last.get(o))
            if j is not None and not h_used[j] and dist[i, j] <= threshold:
                o_used[i] = h_used[j] = True
                pairs.append((i, j))
    ri, ci = np.flatnonzero(~o_used), np.flatnonzero(~h_used)  # 2. match the rest in the gate
    rows, cols = gated_matching(dist[np.ix_(ri, ci)], threshold)
    pairs += [(int(a), int(b)) for a, b in zip(ri[rows], ci[cols], strict=True)]
    return pairs


def _trackeval_pairs(dist, oid, hid, previous: dict, threshold: float) -> list[tuple[int, int]]:
    """One frame's matched (object, hypothesis) index pairs by TrackEval's CLEAR rule (clear_mot Notes).

    ``previous`` (object -> hypothesis matched in the previous frame that had
    both) is updated in place; a frame without objects or hypotheses leaves it.
    """
    if dist.size == 0:
        return []
    return _trackeval_sim_pairs(np.maximum(0.0, 1.0 - dist / (2.0 * threshold)), oid, hid, previous, 0.5)


def _trackeval_sim_pairs(sim, oid, hid, previous: dict, threshold: float) -> list[tuple[int, int]]:
    """TrackEval's CLEAR matching of one frame on similarities ``sim`` (n, m), pairs with S >= threshold."""
    n, m = sim.shape
    if n == 0 or m == 0:
        return []
    last = [previous.get(o) for o in oid.tolist()]
    known = np.array([h is not None for h in last], dtype=bool)
    last_h = np.array([h if h is not None else 0 for h in last], dtype=np.int64)
    continued = known[:, None] & (last_h[:, None] == hid[None, :])
    score = 1000.0 * continued + sim
    score[sim < threshold - _EPS] = 0.0
    rows, cols = linear_sum_assignment(-score)
    keep = score[rows, cols] > _EPS
    pairs = [(int(a), int(b)) for a, b in zip(rows[keep], cols[keep], strict=True)]
    previous.clear()
    previous.update({int(oid[a]): int(hid[b]) for a, b in pairs})
    return pairs


def _check_unique(ids: np.ndarray, name: str, frame: int) -> None:
    if ids.size < 2:
        return
    if ids.dtype.kind in "iu":  # sorted neighbours (cheaper than np.unique for a frame's few)
        ordered = np.sort(ids)
        if (ordered[1:] == ordered[:-1]).any():
            raise ValueError(f"{name}: frame {frame}: expected distinct identities, got {ids.tolist()}")
    elif np.unique(ids).size != ids.size:
        raise ValueError(f"{name}: frame {frame}: expected distinct identities, got {ids.tolist()}")


@dataclass(frozen=True)
class IdentityResult:
    """Identity measures (Ristani et al. 2016): IDF1 = 2 IDTP / (num_objects + num_predictions)."""

    idf1: float
    idp: float
    idr: float
    idtp: int
    idfp: int
    idfn: int


def identity_scores(
    truth, truth_ids, estimates, estimate_ids, threshold: float = 2.0, *, estimate_covs=None
) -> IdentityResult:
    """IDF1, IDP, IDR: the best one-to-one pairing of truth and estimate identities over the whole run.

    A frame counts for a pair of identities when both are present and within
    ``threshold`` (inclusive); IDTP is the largest total count over one-to-one
    pairings of identities. ``estimate_covs`` (one (m_k, d, d) array per
    frame): the distance is the Mahalanobis distance under the estimate's
    covariance, as in :func:`clear_mot`.
    """
    threshold = v.positive_scalar(threshold, "threshold")
    if estimate_covs is not None and len(estimate_covs) != len(estimates):
        raise ValueError(
            f"estimate_covs: expected {len(estimates)} frames like the estimates, got {len(estimate_covs)}"
        )
    counts: dict[tuple[int, int], int] = {}
    n_obj = n_pred = 0
    for k, (Y, oid, X, hid) in enumerate(zip(truth, truth_ids, estimates, estimate_ids, strict=True)):
        Y, X = point_set(Y, "truth"), point_set(X, "estimates")
        _check_unique(np.asarray(oid).reshape(-1), "truth_ids", k)
        _check_unique(np.asarray(hid).reshape(-1), "estimate_ids", k)
        n_obj += Y.shape[0]
        n_pred += X.shape[0]
        if Y.shape[0] and X.shape[0]:
            d = _frame_distances(Y, X, estimate_covs, k)
            i, j = np.nonzero(d <= threshold)
            o_ids = np.asarray(oid).reshape(-1)[i].tolist()
            h_ids = np.asarray(hid).reshape(-1)[j].tolist()
            for key in zip(o_ids, h_ids, strict=True):
                counts[key] = counts.get(key, 0) + 1
    gain = np.zeros((0, 0))
    if counts:
        os_ = sorted({o for o, _ in counts})
        hs = sorted({h for _, h in counts})
        gain = np.zeros((len(os_), len(hs)))
        oi = {o: i for i, o in enumerate(os_)}
        hi = {h: j for j, h in enumerate(hs)}
        for (o, h), c in counts.items():
            gain[oi[o], hi[h]] = c
    return _identity_result(gain, n_obj, n_pred)


def identity_similarity(similarities, truth_ids, estimate_ids, threshold: float = 0.5) -> IdentityResult:
    """IDF1, IDP, IDR on per-frame similarities (e.g. box IoU): a frame counts for a pair at S >= threshold.

    The identity pairing of :func:`identity_scores` (the largest IDTP over
    one-to-one pairings of identities), with TrackEval's test ``S >=
    threshold`` (no epsilon, as TrackEval's Identity) in place of the distance gate.
    """
    threshold = v.positive_scalar(threshold, "threshold")
    if not len(similarities) == len(truth_ids) == len(estimate_ids):
        raise ValueError(
            f"similarities: expected one per frame like truth_ids ({len(truth_ids)}) and "
            f"estimate_ids ({len(estimate_ids)}), got {len(similarities)}"
        )
    oids = [np.asarray(i, dtype=np.int64).reshape(-1) for i in truth_ids]
    hids = [np.asarray(i, dtype=np.int64).reshape(-1) for i in estimate_ids]
    for k, (o, h) in enumerate(zip(oids, hids, strict=True)):
        _check_unique(o, "truth_ids", k)
        _check_unique(h, "estimate_ids", k)
    n = np.array([o.size for o in oids], dtype=np.int64)
    m = np.array([h.size for h in hids], dtype=np.int64)
    o_cat = np.concatenate([*oids, np.empty(0, dtype=np.int64)])
    h_cat = np.concatenate([*hids, np.empty(0, dtype=np.int64)])
    o_all, o_of = np.unique(o_cat, return_inverse=True)
    h_all, h_of = np.unique(h_cat, return_inverse=True)
    flat = [
        np.asarray(S, dtype=float).reshape(a, b).ravel() for S, a, b in zip(similarities, n, m, strict=True)
    ]
    hit = np.flatnonzero(np.concatenate([*flat, np.empty(0)]) >= threshold)  # every frame's (n_k, m_k)
    row_m = np.repeat(m, n)
    row = np.searchsorted(np.cumsum(row_m), hit, side="right")  # the entry's row among every frame's
    col = hit - (np.cumsum(row_m) - row_m)[row] + np.repeat(np.cumsum(m) - m, n)[row]
    pairs = np.bincount(
        o_of.reshape(-1)[row] * h_all.size + h_of.reshape(-1)[col], minlength=o_all.size * h_all.size
    )
    gain = pairs.reshape(o_all.size, h_all.size).astype(float)
    n_obj = sum(o.size for o in oids)
    n_pred = sum(h.size for h in hids)
    return _identity_result(gain, n_obj, n_pred)


def _identity_result(gain: np.ndarray, n_obj: int, n_pred: int) -> IdentityResult:
    """The identity scores from the (objects, hypotheses) co-occurrence counts ``gain``."""
    idtp = 0
    if gain.size:
        rows, cols = linear_sum_assignment(-gain)
        idtp = int(gain[rows, cols].sum())
    idfp, idfn = n_pred - idtp, n_obj - idtp
    idf1 = 2 * idtp / (n_obj + n_pred) if n_obj + n_pred else 1.0
    idp = idtp / n_pred if n_pred else 1.0
    idr = idtp / n_obj if n_obj else 1.0
    return IdentityResult(float(idf1), float(idp), float(idr), idtp, idfp, idfn)


# Trajectory and calibration measures live in their own modules (re-exported here).
from nllbench.measures.tracks.hota import ALPHAS, HOTAResult, hota  # noqa: E402, F401
from nllbench.measures.tracks.tgospa import TGOSPAResult, tgospa  # noqa: E402, F401
