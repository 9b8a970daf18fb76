"""Compiled sums of the Gaussian kernel k(u, v) = exp(-||u - v||^2 / 2) over sample blocks.

The points are already whitened (u = L^-1 x for the kernel covariance
R = L L^T), so the kernel is the isotropic one in every function here.

* :func:`block_gram` returns the n x n matrix S[i, j] = sum over x in set i
  and x' in set j of k(x, x'), skipping the pairs whose squared distance
  exceeds ``cut2`` (their kernel value is below exp(-cut2 / 2)). It finds
  the pairs within the cut-off with a grid of cells of side sqrt(cut2) over
  up to three coordinates (the ones of widest spread): two points closer
  than the cut-off lie in the same or in adjacent cells, because a
  projection on some coordinates never lengthens a distance. So the work
  is the number of point pairs in adjacent cells, not T^2 / 2; a point's
  row with a neighbouring cell is skipped where the point is beyond the
  cut-off from that cell's bounding box.
* :func:`cross_sums` returns sum over x in set i and y in Y of k(x, y)
  (dense: T x n).
* :func:`energy_parts` (and :func:`energy_sums`) computes what the energy
  score needs per step in one compiled call: S, the sums with the truth,
  the truth's self-sum, and the distances and truncation bounds.

Every sum is taken in one documented order (``_accumulate_pairs``), so the
values do not depend on which zero terms are skipped.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np
from numba.core import types
from numba.extending import intrinsic

#: The most coordinates the cell grid uses (3^3 - 1 = 26 neighbouring cells).
GRID_DIMS = 3
#: The largest number of cells a grid may index (the mixed-radix key must fit in an int64).
_MAX_KEY = 2**62


def block_gram(u: np.ndarray, offsets: np.ndarray, cut2: float, grid: bool = True) -> np.ndarray:
    """S (n, n): kernel sums between the sets ``u[offsets[i]:offsets[i+1]]``, pairs beyond ``cut2`` skipped.

    Parameters
    ----------
    u : (T, d) float64
        Whitened points of all sets.
    offsets : (n + 1,) int64
    cut2 : float > 0
        Squared-distance cut-off: a pair at squared distance > ``cut2`` adds
        nothing. With ``cut2 >= 1492`` nothing is lost: exp(-746) is 0 in
        float64.
    grid : bool
        False puts every point in one cell: every pair is visited (the
        dense computation, for tests and the benchmark's baseline).

    Returns
    -------
    (n, n) float64, symmetric; the diagonal holds the self-sums
    (including the k_i terms k(x, x) = 1).
    """
    side = math.sqrt(cut2) if grid else math.inf
    u = np.ascontiguousarray(u, dtype=np.float64)
    return _energy_sums(u, offsets.astype(np.int64), np.empty((0, u.shape[1])), float(cut2), side, 0, 0.0)[0]


def energy_sums(u: np.ndarray, offsets: np.ndarray, w: np.ndarray, cut2: float):
    """The three kernel sums of the energy score in one compiled call: (S, to_y, yy).

    ``S`` (n, n) is :func:`block_gram` (u, offsets, cut2), ``to_y`` (n,)
    :func:`cross_sums` (u, offsets, w, cut2) and ``yy`` the float
    sum over y, y' in ``w`` of k(y, y') with every term kept
    (:func:`cross_sums` (w, [0, m], w)[0]); the same values, bit for bit, as
    those calls, without their Python and numpy steps.
    """
    return energy_parts(u, offsets, w, cut2, w.shape[0], 0.0)[:3]


def energy_parts(u: np.ndarray, offsets: np.ndarray, w: np.ndarray, cut2: float, n_truth: int, tol: float):
    """:func:`energy_sums` and the element-wise arrays of the estimator: (S, to_y, yy, a, D, pair, to_truth).

    With s_i = S[i, i]: a2_i = s_i + yy - 2 to_y_i and d2_ij = s_i + s_j - 2 S_ij
    (squared distances; a negative value is rounding of a distance 0),
    ``a`` (N,) = sqrt(max(a2, 0)), ``D`` (N, N) = sqrt(max(d2, 0)) with a 0
    diagonal, and the moves of the distances by the kernel terms left out
    (``proper.energy_score_of_samples``): ``pair`` (N, N) = min(sqrt(e),
    e / sqrt(d2)), the second taken as inf where d2 <= 0, with
    e = tol (k_i^2 + k_j^2) and a 0 diagonal, and ``to_truth`` (N,) the same
    with e = tol (k_i^2 + 2 n k_i) and a2 (both 0 when ``tol`` = 0), for
    sets of k_i points and a truth of n = ``n_truth``. Element by element,
    each formula's operations in the order written (no fused
    multiply-add), so each value is correctly rounded as numpy's would be.
    """
    return _energy_sums(u, offsets, w, float(cut2), math.sqrt(cut2), int(n_truth), float(tol))


@nb.njit(cache=True)
def _energy_sums(u, offsets, w, cut2, side, n_truth, tol):
    """(S, to_y, yy) on a cell grid of side ``side`` (:func:`_gram`), then :func:`_energy_terms`."""
    S = _gram(u, offsets, cut2, side)
    n = offsets.shape[0] - 1
    T, m = u.shape[0], w.shape[0]
    wt = _transposed(w)
    if T == 0 or m == 0:
        to_y = np.zeros(n)
    else:
        to_y = _cross_kernel(_transposed(u), _owners(offsets), wt, n, cut2)
    yy = 0.0
    if m > 0:
        yy = _cross_kernel(wt, np.zeros(m, dtype=np.int64), wt, 1, _S_MAX)[0]
    counts = np.empty(n)
    for i in range(n):
        counts[i] = offsets[i + 1] - offsets[i]
    a, D, pair, to_truth = _energy_terms(S, to_y, yy, counts, n_truth, tol)
    return S, to_y, yy, a, D, pair, to_truth


@nb.njit(cache=True, inline="always")
def _energy_terms(S, to_y, yy, counts, n_truth, tol):
    """(a, D, pair, to_truth) of :func:`energy_parts` from the sums, in loops without branches (SIMD code)."""
    N = S.shape[0]
    a = np.empty(N)
    to_truth = np.zeros(N)
    for i in range(N):
        a2 = S[i, i] + yy - 2.0 * to_y[i]
        a[i] = math.sqrt(a2 if a2 >= 0.0 else 0.0)
        if tol > 0:
            to_truth[i] = _distance_bound(tol * (counts[i] * counts[i] + 2.0 * n_truth * counts[i]), a2)
    D = np.zeros((N, N))
    pair = np.zeros((N, N))
    for i in range(N):  # the upper triangle; the lower one holds the same values (S is symmetric)
        for j in range(i + 1, N):
            d2 = S[i, i] + S[j, j] - 2.0 * S[i, j]
            D[i, j] = math.sqrt(d2 if d2 >= 0.0 else 0.0)
        if tol > 0:
            for j in range(i + 1, N):
                d2 = S[i, i] + S[j, j] - 2.0 * S[i, j]
                pair[i, j] = _distance_bound(tol * (counts[i] * counts[i] + counts[j] * counts[j]), d2)
    for i in range(N):
        for j in range(i):
            D[i, j] = D[j, i]
            pair[i, j] = pair[j, i]
    return a, D, pair, to_truth


@nb.njit(cache=True, inline="always")
def _distance_bound(e, sq):
    """min(sqrt(e), e / sqrt(sq)), the second taken as inf where sq <= 0: how far a distance moves when its
    square ``sq`` moves by ``e``."""
    positive = sq > 0
    rel = e / math.sqrt(sq if positive else 1.0)
    rel = rel if positive else math.inf
    root = math.sqrt(e)
    return root if root <= rel else rel


@nb.njit(cache=True, inline="always")
def _owners(offsets):
    """(T,) int64: the set of each point, ``numpy.repeat(arange(n), diff(offsets))``."""
    owner = np.empty(offsets[-1], dtype=np.int64)
    for i in range(offsets.shape[0] - 1):
        for t in range(offsets[i], offsets[i + 1]):
            owner[t] = i
    return owner


@nb.njit(cache=True, inline="always")
def _transposed(x):
    """(d, T) C-contiguous copy of ``x`` (T, d): each coordinate contiguous (SIMD loops)."""
    T, d = x.shape
    out = np.empty((d, T))
    for p in range(T):
        for t in range(d):
            out[t, p] = x[p, t]
    return out


@nb.njit(cache=True, inline="always")
def _gram(u, offsets, cut2, side):
    """:func:`block_gram` on a cell grid of side ``side`` (inf: one cell, every pair visited).

    The points are ordered by cell, stably (within a cell by set, as the
    sets are stored in set order), and the pairs summed by
    :func:`_accumulate_pairs`; then S = acc + acc^T with the counts added
    to its diagonal.
    """
    n = offsets.shape[0] - 1
    T, d = u.shape
    acc = np.zeros((n, n))
    if T > 1:
        keys, deltas, span = _cell_keys(u, side)
        order = _stable_order(keys, span)  # by cell, then by set within a cell
        owner = _owners(offsets)
        starts = np.empty(T + 1, dtype=np.int64)
        C = 0
        for t in range(T):
            if t == 0 or keys[order[t]] != keys[order[t - 1]]:
                starts[C] = t
                C += 1
        starts[C] = T
        cell_keys = np.empty(C, dtype=np.int64)
        for c in range(C):
            cell_keys[c] = keys[order[starts[c]]]
        ut = np.empty((d, T))  # (d, T): each coordinate contiguous (SIMD loops)
        owner_sorted = np.empty(T, dtype=np.int64)
        for p in range(T):
            for t in range(d):
                ut[t, p] = u[order[p], t]
            owner_sorted[p] = owner[order[p]]
        _accumulate_pairs(ut, owner_sorted, cell_keys, starts[: C + 1], deltas, cut2, acc)
    out = np.empty((n, n))
    for i in range(n):
        for j in range(n):
            out[i, j] = acc[i, j] + acc[j, i]
        out[i, i] += offsets[i + 1] - offsets[i]
    return out


@nb.njit(cache=True, inline="always")
def _cell_keys(u, side):
    """Cell keys on a grid of cells of side ``side``: (key per point, positive steps to neighbours, span).

    The grid uses up to :data:`GRID_DIMS` coordinates, those of widest
    spread (ties: the lower coordinate first). Each index is padded by one
    cell on both sides so that a neighbour's key is the key plus a fixed
    step (no wrap-around). A coordinate whose spread is one cell (or not
    finite, or beyond the key's range) does not prune and is left out;
    ``side`` = inf leaves every one out (one cell). Every key is in [0, span).
    """
    T, d = u.shape
    lo = np.empty(d)
    spread = np.empty(d)
    for t in range(d):
        lo[t], hi = u[0, t], u[0, t]
        for p in range(1, T):
            lo[t], hi = min(lo[t], u[p, t]), max(hi, u[p, t])
        spread[t] = hi - lo[t]
    dims = _stable_order_desc(spread)[: min(GRID_DIMS, d)]
    keys = np.zeros(T, dtype=np.int64)
    strides = np.empty(GRID_DIMS, dtype=np.int64)
    k = 0
    stride = np.int64(1)
    for t in dims:
        if not (np.isfinite(spread[t]) and np.isfinite(side)):
            continue  # a spread beyond the float range: this coordinate does not prune
        q = spread[t] // side
        if q >= _MAX_KEY:
            continue  # beyond the key's range
        cells = np.int64(q) + 1
        if cells == 1 or cells + 2 > _MAX_KEY // stride:
            continue  # a coordinate one cell wide (or beyond the key's range) does not prune
        for p in range(T):
            keys[p] += (np.int64(np.floor((u[p, t] - lo[t]) / side)) + 1) * stride
        strides[k] = stride
        k += 1
        stride *= cells + 2
    steps = np.zeros(1, dtype=np.int64)
    for j in range(k):  # every sum of o * strides[j] over o in (-1, 0, 1)
        nxt = np.empty(3 * steps.shape[0], dtype=np.int64)
        for i in range(steps.shape[0]):
            for o in range(3):
                nxt[3 * i + o] = steps[i] + (o - 1) * strides[j]
        steps = nxt
    for i in range(1, steps.shape[0]):  # ascending (insertion sort: at most 27 steps)
        j = i
        while j > 0 and steps[j - 1] > steps[j]:
            steps[j - 1], steps[j] = steps[j], steps[j - 1]
            j -= 1
    half = steps.shape[0] // 2  # steps distinct (|a lower stride's sum| < the next stride), 0 in the middle
    return keys, steps[half + 1 :].copy(), stride


@nb.njit(cache=True, inline="always")
def _stable_order(keys, span):
    """``numpy.argsort(keys, kind="stable")`` for keys in [0, span): a counting sort where span is small."""
    T = keys.shape[0]
    if span > 8 * T + 4096:
        return _merge_order(keys)
    first = np.zeros(span + 1, dtype=np.int64)
    for t in range(T):
        first[keys[t] + 1] += 1
    for k in range(span):
        first[k + 1] += first[k]
    order = np.empty(T, dtype=np.int64)
    for t in range(T):
        order[first[keys[t]]] = t
        first[keys[t]] += 1
    return order


@nb.njit(cache=True, inline="always")
def _stable_order_desc(x):
    """Indices that sort the short array ``x`` in decreasing order, ties in index order (insertion sort)."""
    order = np.arange(x.shape[0])
    for k in range(1, x.shape[0]):
        j = k
        while j > 0 and x[order[j - 1]] < x[order[j]]:
            order[j - 1], order[j] = order[j], order[j - 1]
            j -= 1
    return order


@nb.njit(cache=True, inline="always")
def _merge_order(keys):
    """``numpy.argsort(keys, kind="stable")``: a bottom-up merge sort of the indices."""
    T = keys.shape[0]
    order = np.arange(T)
    other = np.empty(T, dtype=np.int64)
    width = 1
    while width < T:
        for lo in range(0, T, 2 * width):
            mid, hi = min(lo + width, T), min(lo + 2 * width, T)
            i, j = lo, mid
            for k in range(lo, hi):  # the left run's element first on ties: stable
                if i < mid and (j >= hi or keys[order[i]] <= keys[order[j]]):
                    other[k] = order[i]
                    i += 1
                else:
                    other[k] = order[j]
                    j += 1
        order, other = other, order
        width *= 2
    return order


# Cody and Waite's reduction x = n ln2 + r, |r| <= ln2 / 2, with ln2 split in a high part whose
# product with |n| <= 1076 is exact and a low part (the constants of fdlibm's e_exp.c)
_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
_INV_LN2 = 1.44269504088896338700e00
#: Squared distances beyond this give exp(-s / 2) = 0 in float64; the kernels clamp to it.
_S_MAX = 1492.0


@nb.njit(cache=True, fastmath={"contract"})
def _kernel_values(ut, a, w, b0, b1, cut2, kbuf, ebuf):
    """kbuf[b - b0] = exp(-||ut[:, a] - w[:, b]||^2 / 2) for b0 <= b < b1, or 0 beyond ``cut2``.

    ``ut`` (d, T) and ``w`` (d, m) hold points as columns, so that the
    loops over b run over contiguous memory and compile to SIMD code: the
    squared distances by :func:`_squared_distances`, then their kernel
    values by :func:`_exp_values` (``ebuf``: its (2 (b1 - b0),) int64 scratch).
    """
    _squared_distances(ut, a, w, b0, b1, kbuf, 0)
    _exp_values(kbuf, b1 - b0, cut2, ebuf)


@intrinsic
def _fma(typingctx, x, y, z):
    """x * y + z rounded once (LLVM's fma intrinsic: the FMA instruction where the CPU has one)."""
    sig = types.float64(types.float64, types.float64, types.float64)

    def codegen(context, builder, signature, args):
        return builder.fma(*args)

    return sig, codegen


@nb.njit(cache=True)
def _squared_distances(ut, a, w, b0, b1, out, o0):
    """out[o0 + b - b0] = ||ut[:, a] - w[:, b]||^2 for b0 <= b < b1.

    Summed over the coordinates in order, each square after the first
    added by a fused multiply-add: fma(e_t, e_t, s) (written out, so that
    the rounding does not depend on how the compiler contracts the loop);
    2-D in one pass.
    """
    d = ut.shape[0]
    n = b1 - b0
    if d == 2:
        x0, x1 = ut[0, a], ut[1, a]
        for b in range(n):
            e0 = x0 - w[0, b0 + b]
            e1 = x1 - w[1, b0 + b]
            out[o0 + b] = _fma(e1, e1, e0 * e0)
        return
    x = ut[0, a]
    for b in range(n):
        diff = x - w[0, b0 + b]
        out[o0 + b] = diff * diff
    for t in range(1, d):
        x = ut[t, a]
        for b in range(n):
            diff = x - w[t, b0 + b]
            out[o0 + b] = _fma(diff, diff, out[o0 + b])


@nb.njit(cache=True, fastmath={"contract"})
def _exp_values(kbuf, n, cut2, ebuf):
    """kbuf[b] = exp(-kbuf[b] / 2) in place for b < n, or 0 where kbuf[b] > ``cut2``.

    The exponential is computed here, not by libm (whose call does not
    vectorize): exp(x) = 2^n p(r) after Cody and Waite's reduction, with p
    the degree-13 Taylor polynomial of exp on |r| <= ln2 / 2 (remainder
    below 4e-18 relative) and 2^n the product of 2^(n // 2) and
    2^(n - n // 2), each built exactly from its exponent bits in ``ebuf``
    ((2 n,) int64 scratch; neither is subnormal, so only the last product
    can round); within about 1 ulp of libm's exp (tested). Written so that
    it compiles to SIMD code (``numpy.floor``, no table look-up), and run
    over a block of pairs, not one short row at a time.
    """
    for b in range(n):
        s = kbuf[b]
        x = -0.5 * min(s, _S_MAX)
        nf = np.floor(x * _INV_LN2 + 0.5)
        r = (x - nf * _LN2_HI) - nf * _LN2_LO
        p = 1.0 / 6227020800.0
        p = p * r + 1.0 / 479001600.0
        p = p * r + 1.0 / 39916800.0
        p = p * r + 1.0 / 3628800.0
        p = p * r + 1.0 / 362880.0
        p = p * r + 1.0 / 40320.0
        p = p * r + 1.0 / 5040.0
        p = p * r + 1.0 / 720.0
        p = p * r + 1.0 / 120.0
        p = p * r + 1.0 / 24.0
        p = p * r + 1.0 / 6.0
        p = p * r + 0.5
        p = p * r + 1.0
        p = p * r + 1.0
        ni = np.int64(nf)
        half = ni >> 1
        ebuf[b] = (half + 1023) << 52  # the bits of 2^half (-538 <= half <= 0: a normal number)
        ebuf[n + b] = (ni - half + 1023) << 52
        kbuf[b] = p if s <= cut2 else 0.0
    two = ebuf.view(np.float64)
    for b in range(n):
        kbuf[b] = kbuf[b] * two[b] * two[n + b]


@nb.njit(cache=True)
def _add_by_owner(acc, i, owner, b0, n, kbuf):
    """acc[i, owner[b0 + b]] += kbuf[b] for b < n, one add per run of equal owners."""
    if n == 0:
        return
    j = owner[b0]
    run = 0.0
    for b in range(n):
        o = owner[b0 + b]
        if o != j:
            acc[i, j] += run
            j = o
            run = 0.0
        run += kbuf[b]
    acc[i, j] += run


#: The most pair values one block of :func:`_accumulate_pairs` holds (at least one anchor's row).
_BLOCK = 1 << 14


@nb.njit(cache=True)
def _accumulate_pairs(ut, owner, cell_keys, starts, deltas, cut2, acc):
    """acc[owner[a], owner[b]] += k(u_a, u_b) for each unordered pair a != b in the same or adjacent cells.

    Cell by cell: the pairs within the cell (anchor a with a + 1 .. end),
    then those with each neighbour of larger key (anchor a with the whole
    neighbour). The kernel values of consecutive anchors' rows are computed
    as one block (:func:`_block_pairs`), then added row by row in anchor
    order (:func:`_add_by_owner`): the same kernel values and the same
    additions in the same order as one row at a time, so the same sums.
    A row with a neighbour whose points' bounding box is beyond the cut-off
    from the anchor is skipped: its kernel values are all 0, and adding 0
    changes no sum (the sums and the values are >= 0).
    """
    C = cell_keys.shape[0]
    d = ut.shape[0]
    size = 0
    for c in range(C):
        size = max(size, starts[c + 1] - starts[c])
    kbuf = np.empty(max(size, _BLOCK))
    ebuf = np.empty(2 * kbuf.shape[0], dtype=np.int64)
    rows = np.empty(size, dtype=np.int64)
    box = np.empty((C, 2, d))  # each cell's bounding box: box[c, 0] lowest, box[c, 1] highest coordinates
    for c in range(C):
        for t in range(d):
            box[c, 0, t], box[c, 1, t] = ut[t, starts[c]], ut[t, starts[c]]
            for p in range(starts[c] + 1, starts[c + 1]):
                box[c, 0, t] = min(box[c, 0, t], ut[t, p])
                box[c, 1, t] = max(box[c, 1, t], ut[t, p])
    far2 = cut2 * (1.0 + _FAR_MARGIN)
    for c in range(C):
        a0, a1 = starts[c], starts[c + 1]
        _block_pairs(ut, owner, a0, a1, a0, a1, True, cut2, acc, kbuf, ebuf, rows, box[c], far2)
        for q in range(deltas.shape[0]):  # pairs with each neighbour of larger key
            target = cell_keys[c] + deltas[q]
            c2 = np.searchsorted(cell_keys, target)
            if c2 >= C or cell_keys[c2] != target:
                continue
            _block_pairs(
                ut,
                owner,
                a0,
                a1,
                starts[c2],
                starts[c2 + 1],
                False,
                cut2,
                acc,
                kbuf,
                ebuf,
                rows,
                box[c2],
                far2,
            )


#: A row is skipped where its anchor's squared distance to the neighbour's bounding box exceeds
#: cut2 (1 + this): far beyond the rounding of either squared distance (a few ulps), so that every
#: skipped pair's computed squared distance exceeds cut2 (a kernel value of 0).
_FAR_MARGIN = 2.0**-30


@nb.njit(cache=True)
def _block_pairs(ut, owner, a0, a1, b0, b1, within, cut2, acc, kbuf, ebuf, rows, box, far2):
    """For a = a0 .. a1 - 1 in order: acc[owner[a], owner[b]] += k(u_a, u_b) for b in its row.

    Its row: b in [a + 1, a1) when ``within`` (the pairs of one cell), else
    [b0, b1), skipped where the anchor's squared distance to ``box`` (2, d),
    the bounding box of the points b0 .. b1 - 1, exceeds ``far2``. Rows are
    filled into ``kbuf`` until the next would pass its length, their kernel
    values computed in one pass, then added (``rows``: the anchors filled).
    """
    cap = kbuf.shape[0]
    d = ut.shape[0]
    a = a0
    while a < a1:
        o, m = 0, 0
        while a < a1:  # fill rows a = first, ...
            lo = a + 1 if within else b0
            if o > 0 and o + (b1 - lo) > cap:
                break
            if not within:
                gap2 = 0.0
                for t in range(d):
                    g = max(box[0, t] - ut[t, a], ut[t, a] - box[1, t], 0.0)
                    gap2 += g * g
                if gap2 > far2:
                    a += 1
                    continue
            _squared_distances(ut, a, ut, lo, b1, kbuf, o)  # kbuf[o + b] = ||u_a - u_(lo + b)||^2
            o += b1 - lo
            rows[m] = a
            m += 1
            a += 1
        _exp_values(kbuf, o, cut2, ebuf)
        o = 0
        for q in range(m):  # add the rows in anchor order
            r = rows[q]
            lo = r + 1 if within else b0
            _add_by_owner(acc, owner[r], owner, lo, b1 - lo, kbuf[o:])
            o += b1 - lo


def cross_sums(u: np.ndarray, offsets: np.ndarray, w: np.ndarray, cut2: float = _S_MAX) -> np.ndarray:
    """(n,) sum over x in set i and y in ``w`` of k(x, y), pairs beyond ``cut2`` skipped.

    ``u`` (T, d) and ``w`` (m, d) whitened; with the default ``cut2`` only
    exact zeros are skipped.
    """
    n = offsets.shape[0] - 1
    if u.shape[0] == 0 or w.shape[0] == 0:
        return np.zeros(n)
    owner = np.repeat(np.arange(n, dtype=np.int64), np.diff(offsets))
    return _cross_kernel(np.ascontiguousarray(u.T), owner, np.ascontiguousarray(w.T), n, cut2)


@nb.njit(cache=True)
def _cross_kernel(ut, owner, wt, n, cut2):
    T = ut.shape[1]
    out = np.zeros((1, n))
    kbuf = np.empty(T)
    ebuf = np.empty(2 * T, dtype=np.int64)
    zero = np.int64(0)  # not the literal 0: a literal argument compiles a second signature
    for b in range(wt.shape[1]):
        _kernel_values(wt, b, ut, zero, T, cut2, kbuf, ebuf)
        _add_by_owner(out, zero, owner, zero, T, kbuf)
    return out[0]
