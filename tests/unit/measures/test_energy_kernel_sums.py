"""The energy score's compiled kernel sums, bit for bit against a plain re-statement of their order.

The set-pair sums S are sums of floating-point numbers, so their last bits
depend on the order of the additions. The order is documented in
``nllbench.measures.scores._set_kernel``: points sorted stably by cell of a
grid of side sqrt(cut2) over up to three coordinates, cells in key order,
in each cell the pairs within it (anchor a with a + 1 .. end) and then with
each neighbour of larger key, and in each anchor's row the kernel values of
one set summed in order before being added to S. The tests below restate
that order in plain Python (the cell keys with Python's float floor
division, numpy's lexsort, one add per run) and require the compiled
``energy_sums`` to equal it exactly, also where rows are skipped by the
bounding-box test (their kernel values are 0), where the key span sends
the sort to its fallback, and in 1-D to 4-D. The squared distances are
checked against exact rational arithmetic (one rounding per fused
multiply-add), and the element-wise terms of the estimator against the
numpy formulas.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest

from nllbench.measures.scores import _set_kernel as sk
from nllbench.measures.scores._set_kernel import block_gram, cross_sums, energy_parts, energy_sums

CUT2 = 2.0 * math.log(1e16)


def _python_cell_keys(u, side):
    """Cell keys and positive neighbour steps, in plain Python (Python's float floor division)."""
    T, d = u.shape
    with np.errstate(over="ignore"):  # a spread beyond the float range is inf, and left out
        spread = u.max(axis=0) - u.min(axis=0)
    dims = np.argsort(-spread, kind="stable")[: min(sk.GRID_DIMS, d)]
    keys = np.zeros(T, dtype=np.int64)
    strides, stride = [], 1
    for t in dims:
        if not np.isfinite(spread[t]):
            continue
        cells = int(float(spread[t]) // side) + 1
        if cells == 1 or stride * (cells + 2) > 2**62:
            continue
        keys += (np.floor((u[:, t] - u[:, t].min()) / side).astype(np.int64) + 1) * stride
        strides.append(stride)
        stride *= cells + 2
    steps = {
        sum(o * s for o, s in zip(step, strides, strict=True))
        for step in itertools.product((-1, 0, 1), repeat=len(strides))
    }
    return keys, np.array(sorted(x for x in steps if x > 0), dtype=np.int64)


def _kernel_row(ut, a, lo, hi, cut2):
    """k(u_a, u_b) for lo <= b < hi by the compiled kernel (its exp and distances are tested apart)."""
    kbuf, ebuf = np.empty(max(hi - lo, 1)), np.empty(2 * max(hi - lo, 1), dtype=np.int64)
    sk._kernel_values(ut, a, ut, lo, hi, cut2, kbuf, ebuf)
    return kbuf[: hi - lo]


def _reference_gram(u, offsets, cut2):
    """S in the documented order: by cell, within then neighbours, one add per run of one set."""
    n, T = offsets.shape[0] - 1, u.shape[0]
    owner = np.repeat(np.arange(n), np.diff(offsets))
    acc = np.zeros((n, n))
    if T > 1:
        keys, steps = _python_cell_keys(u, math.sqrt(cut2))
        order = np.lexsort((owner, keys))
        ut, own, ks = np.ascontiguousarray(u[order].T), owner[order], keys[order]
        cells = {}
        for p, k in enumerate(ks.tolist()):
            cells.setdefault(k, [p, p])[1] = p + 1

        def add_row(a, lo, hi):
            vals = _kernel_row(ut, a, lo, hi, cut2)
            b = lo
            while b < hi:
                run, j = 0.0, own[b]
                while b < hi and own[b] == j:
                    run += vals[b - lo]
                    b += 1
                acc[own[a], j] += run

        for k in sorted(cells):
            a0, a1 = cells[k]
            for a in range(a0, a1):
                add_row(a, a + 1, a1)
            for step in steps.tolist():
                if k + step in cells:
                    b0, b1 = cells[k + step]
                    for a in range(a0, a1):
                        add_row(a, b0, b1)
    out = acc + acc.T
    out[np.diag_indices(n)] += np.diff(offsets)
    return out


def _clumps(rng, T, d, n_sets, spread, sd):
    centres = rng.uniform(-spread, spread, (12, d))
    u = centres[rng.integers(0, 12, T)] + rng.normal(0.0, sd, (T, d))
    cuts = np.sort(rng.choice(np.arange(1, T), n_sets - 1, replace=False))
    return u, np.concatenate([[0], cuts, [T]]).astype(np.int64)


@pytest.mark.parametrize("d", [1, 2, 3, 4])
def test_energy_sums_equal_the_documented_order_bit_for_bit(d):
    rng = np.random.default_rng(10 + d)
    u, offsets = _clumps(rng, 500, d, 25, 40.0, 3.0)
    w = rng.uniform(-40.0, 40.0, (6, d))
    S, to_y, yy = energy_sums(u, offsets, w, CUT2)
    assert np.array_equal(S, _reference_gram(u, offsets, CUT2))
    assert np.array_equal(S, block_gram(u, offsets, CUT2))
    assert np.array_equal(to_y, cross_sums(u, offsets, w, CUT2))
    assert yy == cross_sums(w, np.array([0, 6], dtype=np.int64), w)[0]
    dense = block_gram(u, offsets, CUT2, grid=False)  # every pair, another order: equal up to rounding
    np.testing.assert_allclose(S, dense, rtol=1e-12, atol=1e-12)


def test_rows_skipped_by_the_bounding_box_hold_only_zeros():
    # sets of two points in neighbouring cells, at squared distances within a few ulps of the cut-off:
    # whether each pair counts is decided by its own squared distance, never by the skip
    side = math.sqrt(CUT2)
    rng = np.random.default_rng(3)
    base = np.array([[0.0, 0.0], [3 * side, 0.0], [0.0, 5 * side]])
    pts = []
    for b in base:
        for gap in (
            side,
            math.nextafter(side, 0.0),
            math.nextafter(side, 10.0),
            side * (1 + 1e-15),
            0.5 * side,
        ):
            pts += [b + [0.9 * side, 0.1], b + [0.9 * side + gap, 0.1]]
    u = np.array(pts)
    offsets = np.arange(0, u.shape[0] + 1, 2, dtype=np.int64)
    S = energy_sums(u, offsets, np.empty((0, 2)), CUT2)[0]
    assert np.array_equal(S, _reference_gram(u, offsets, CUT2))
    u2, off2 = _clumps(rng, 400, 2, 20, 200.0, 1.0)  # far-apart clumps: most neighbour rows skipped
    assert np.array_equal(energy_sums(u2, off2, u2[:2], CUT2)[0], _reference_gram(u2, off2, CUT2))


def test_a_wide_key_span_takes_the_stable_sort_fallback():
    rng = np.random.default_rng(5)
    u = rng.uniform(-1e5, 1e5, (300, 3))  # about 2e4 cells per coordinate: a span far beyond 8 T
    u[::3] = u[1::3] + rng.normal(0.0, 2.0, (100, 3))  # some pairs within the cut-off
    offsets = np.arange(0, 301, 10, dtype=np.int64)
    assert np.array_equal(energy_sums(u, offsets, u[:1], CUT2)[0], _reference_gram(u, offsets, CUT2))


@pytest.mark.parametrize(
    "u",
    [
        np.array([[0.0, 0.0], [8.0, 1.0], [16.0, 2.0]]),  # a spread that is an exact multiple of the side
        np.array([[0.0, 0.0, 5.0], [1e308, 1.0, 5.0], [-1e308, 2.0, 5.0]]),  # an infinite spread
        np.array([[1.0, 1.0]] * 4),  # one cell
        np.array([[0.0, 0.0, 0.0, 0.0, 0.0], [30.0, 30.0, 30.0, 30.0, 9.0]]),  # ties in the spread
        np.array([[0.0], [1e-300], [700.0]]),
    ],
)
@pytest.mark.parametrize("side", [8.0, math.sqrt(CUT2), math.inf])
def test_compiled_cell_keys_equal_the_python_ones(u, side):
    keys, steps, span = sk._cell_keys(np.ascontiguousarray(u), side)
    if math.isinf(side):
        assert not keys.any() and steps.size == 0 and span == 1
        return
    want_keys, want_steps = _python_cell_keys(u, side)
    assert np.array_equal(keys, want_keys) and np.array_equal(steps, want_steps)
    assert 0 <= keys.min() and keys.max() < span


@pytest.mark.parametrize("d", [1, 2, 3])
def test_squared_distances_round_once_per_fused_multiply_add(d):
    rng = np.random.default_rng(d)
    ut = np.ascontiguousarray(rng.normal(0.0, 7.0, (d, 200)))
    out = np.empty(199)
    sk._squared_distances(ut, 0, ut, 1, 200, out, 0)
    for b in range(199):
        e = [ut[t, 0] - ut[t, b + 1] for t in range(d)]
        s = e[0] * e[0]
        for t in range(1, d):
            s = float(Fraction(e[t]) * Fraction(e[t]) + Fraction(s))  # fma: one rounding
        assert out[b] == s


@pytest.mark.parametrize("tol", [0.0, 1e-16, 1e-3])
def test_energy_terms_equal_the_numpy_formulas(tol):
    rng = np.random.default_rng(7)
    u, offsets = _clumps(rng, 120, 2, 12, 5.0, 1.0)
    offsets[3] = offsets[2]  # an empty set
    u[offsets[5] : offsets[6]] = u[offsets[4] : offsets[5]][: offsets[6] - offsets[5]]  # equal sets: d2 ~ 0
    w = u[:2] + 0.5
    S, to_y, yy, a, D, pair, to_truth = energy_parts(u, offsets, w, CUT2, 2, tol)
    assert all(
        np.array_equal(x, y) for x, y in zip(energy_sums(u, offsets, w, CUT2), (S, to_y, yy), strict=True)
    )
    counts = np.diff(offsets)
    diag = np.diag(S).copy()
    a2 = diag + yy - 2.0 * to_y
    d2 = diag[:, None] + diag[None, :] - 2.0 * S
    want_D = np.sqrt(np.maximum(d2, 0.0))
    np.fill_diagonal(want_D, 0.0)
    assert np.array_equal(a, np.sqrt(np.maximum(a2, 0.0))) and np.array_equal(D, want_D)
    k2 = counts.astype(float) ** 2

    def dist_bound(e, sq):
        with np.errstate(divide="ignore", invalid="ignore"):
            rel = np.where(sq > 0, e / np.sqrt(np.maximum(sq, 0.0)), np.inf)
        return np.minimum(np.sqrt(e), rel)

    if tol == 0:
        assert not pair.any() and not to_truth.any()
        return
    want_pair = dist_bound(tol * (k2[:, None] + k2[None, :]), d2)
    np.fill_diagonal(want_pair, 0.0)
    assert np.array_equal(pair, want_pair)
    assert np.array_equal(to_truth, dist_bound(tol * (k2 + 2.0 * 2 * counts), a2))
