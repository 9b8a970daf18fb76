"""The 2-Wasserstein distance between Gaussians, batched over all pairs of two families.

Used by :mod:`nllbench.measures.point.pgospa` and :mod:`nllbench.measures.tracks.ptgospa`.

For N(m1, S1) and N(m2, S2) (Givens and Shortt, "A class of Wasserstein
metrics for probability distributions", Michigan Math. J. 31, 1984):

    W2^2 = ||m1 - m2||^2 + tr S1 + tr S2 - 2 tr (S2^(1/2) S1 S2^(1/2))^(1/2).

The covariance part (the squared Bures distance) is computed from the
symmetric square roots A = S1^(1/2), B = S2^(1/2), which makes it exact where
the textbook form cancels: tr (B A A B)^(1/2) is the nuclear norm ||AB||_*,
and tr S1 + tr S2 = ||A||_F^2 + ||B||_F^2, so

    tr S1 + tr S2 - 2 ||AB||_* = ||A - B||_F^2 - 2 (||AB||_* - tr AB),

with both brackets >= 0 (tr AB >= 0 for PSD A, B). For S1 = S2 both are 0
exactly (the textbook form leaves a rounding residue of about 1e-16 tr S,
whose square root, 1e-8 sqrt(tr S), would make the distance of a density to
itself visibly non-zero). In 2-D, with M = AB (det M = det A det B >= 0),
(sigma_1 + sigma_2)^2 = ||M||_F^2 + 2 det M = (tr M)^2 + (M_12 - M_21)^2, so

    ||M||_* - tr M = (M_12 - M_21)^2 / (||M||_* + tr M),

free of cancellation; in 1-D the part is (sqrt S1 - sqrt S2)^2. Beyond 2-D,
||M||_* comes from the singular values (NumPy's batched SVD), and the bracket
is 0 exactly where M is symmetric (then A and B commute and M is PSD).
A zero covariance (a point, as a ground truth is) has the square root 0 and
gives the part tr S of the other side, exactly.

Square roots: in 1-D the scalar root; in 2-D the closed form
S^(1/2) = (S + sqrt(det S) I) / sqrt(tr S + 2 sqrt(det S)) (0 for S = 0);
beyond, an eigendecomposition. The square root is not Lipschitz at a
singular matrix: an eigenvalue of rounding size e (1e-17 for a rank-one
covariance u u^T of floats) moves the root by sqrt(e), 1e-8 or so. So an
eigenvalue within rounding of 0 is taken as 0: below d eps times the largest
eigenvalue, or in 2-D a determinant ad - b^2 within 4 eps max(ad, b^2) of 0
(the rounding of its two products); then a singular covariance, as every
route computes it, gives its exact root and W2 to rounding.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

#: Relative size of a negative eigenvalue still taken as rounding of 0 (beyond: not PSD).
PSD_TOL = 1e-9
EPS = float(np.finfo(np.float64).eps)


def psd_sqrt(covs: np.ndarray) -> np.ndarray:
    """Symmetric square roots (k, d, d) of symmetric positive semi-definite ``covs`` (k, d, d).

    The caller has checked symmetry and semi-definiteness (:func:`check_psd`).
    """
    k, d = covs.shape[0], covs.shape[1]
    if k == 0:
        return np.zeros((0, d, d))
    if d <= 2:
        return _sqrt_small(np.ascontiguousarray(covs, dtype=np.float64))
    w, V = np.linalg.eigh(covs)
    w = np.where(w > d * EPS * np.max(np.abs(w), axis=1, keepdims=True), w, 0.0)
    root = (V * np.sqrt(w)[:, None, :]) @ np.swapaxes(V, 1, 2)
    return 0.5 * (root + np.swapaxes(root, 1, 2))


@nb.njit(cache=True)
def _sqrt_small(covs):  # pragma: no cover - compiled
    """Square roots of 1x1 or 2x2 symmetric PSD matrices (k, d, d) by the closed forms (module notes)."""
    k, d = covs.shape[0], covs.shape[1]
    out = np.zeros_like(covs)
    for i in range(k):
        if d == 1:
            out[i, 0, 0] = math.sqrt(max(covs[i, 0, 0], 0.0))
            continue
        a, b, e = covs[i, 0, 0], covs[i, 0, 1], covs[i, 1, 1]
        det = a * e - b * b
        s = math.sqrt(det) if det > 4.0 * EPS * max(a * e, b * b) else 0.0
        t = math.sqrt(max(a + e + 2.0 * s, 0.0))
        if t > 0.0:
            out[i, 0, 0] = (a + s) / t
            out[i, 1, 1] = (e + s) / t
            out[i, 0, 1] = b / t
            out[i, 1, 0] = b / t
    return out


def check_psd(covs: np.ndarray, name: str) -> np.ndarray:
    """``covs`` (k, d, d) checked symmetric (to 1e-9 relative) and positive semi-definite, symmetrised.

    An eigenvalue below -PSD_TOL times the matrix's largest absolute entry is
    refused (ValueError naming the index); smaller negative ones are rounding
    of 0 and the square root takes them as 0.
    """
    k = covs.shape[0]
    if k == 0:
        return covs
    scale = np.maximum(np.max(np.abs(covs), axis=(1, 2)), np.finfo(float).tiny)
    asym = np.max(np.abs(covs - np.swapaxes(covs, 1, 2)), axis=(1, 2)) / scale
    bad = np.flatnonzero(asym > 1e-9)
    if bad.size:
        raise ValueError(f"{name}: expected symmetric matrices, got a non-symmetric matrix at index {bad[0]}")
    sym = 0.5 * (covs + np.swapaxes(covs, 1, 2))
    low = np.linalg.eigvalsh(sym)[:, 0]
    bad = np.flatnonzero(low < -PSD_TOL * scale)
    if bad.size:
        j = int(bad[0])
        raise ValueError(
            f"{name}: expected positive semi-definite matrices, got a matrix at index {j} "
            f"with smallest eigenvalue {low[j]:.3g}"
        )
    return sym


def w2(mx: np.ndarray, Ax: np.ndarray, my: np.ndarray, Ay: np.ndarray, zx=None, zy=None) -> np.ndarray:
    """W2 (nx, ny) between N(mx[i], Ax[i]^2) and N(my[j], Ay[j]^2) for every pair.

    ``mx`` (nx, d), ``my`` (ny, d) means; ``Ax`` (nx, d, d), ``Ay`` (ny, d, d)
    symmetric PSD square roots of the covariances (:func:`psd_sqrt`); ``zx``
    (nx,), ``zy`` (ny,) bool, optional: which roots are 0 (found if not given).
    """
    nx, ny = mx.shape[0], my.shape[0]
    if nx == 0 or ny == 0:
        return np.zeros((nx, ny))
    d = mx.shape[1]
    zx = ~np.any(Ax.reshape(nx, -1), axis=1) if zx is None else zx
    zy = ~np.any(Ay.reshape(ny, -1), axis=1) if zy is None else zy
    bures = np.zeros((0, 0)) if d <= 2 else _bures_svd(Ax, Ay)
    return _w2_kernel(
        np.ascontiguousarray(mx, dtype=np.float64),
        np.ascontiguousarray(my, dtype=np.float64),
        np.ascontiguousarray(Ax, dtype=np.float64),
        np.ascontiguousarray(Ay, dtype=np.float64),
        zx,
        zy,
        bures,
    )


def _bures_svd(Ax: np.ndarray, Ay: np.ndarray) -> np.ndarray:
    """Squared Bures distances (nx, ny) beyond 2-D: ||A - B||_F^2 - 2 (||AB||_* - tr AB) (module notes)."""
    M = Ax[:, None] @ Ay[None, :]  # (nx, ny, d, d)
    nuclear = np.linalg.svd(M, compute_uv=False).sum(axis=-1)
    trace = np.trace(M, axis1=-2, axis2=-1)
    symmetric = np.all(M == np.swapaxes(M, -1, -2), axis=(-2, -1))
    gap = np.where(symmetric, 0.0, np.maximum(nuclear - trace, 0.0))
    frob = np.sum((Ax[:, None] - Ay[None, :]) ** 2, axis=(-2, -1))
    return np.maximum(frob - 2.0 * gap, 0.0)


@nb.njit(cache=True)
def _root_norms(A):  # pragma: no cover - compiled
    """||A_i||_F^2 = tr S_i for each square root A (k, d, d)."""
    k, d = A.shape[0], A.shape[1]
    out = np.zeros(k)
    for i in range(k):
        for a in range(d):
            for b in range(d):
                out[i] += A[i, a, b] * A[i, a, b]
    return out


@nb.njit(cache=True)
def _w2_block(mx, Ax, zx, tx, my, Ay, zy, ty, bures, out):  # pragma: no cover - compiled
    """W2 of every pair into ``out`` (nx, ny) (module notes); ``bures`` (nx, ny) is used beyond 2-D.

    ``tx``, ``ty``: tr S = ||A||_F^2 of each Gaussian. The mean part is
    summed as ``scipy.spatial.distance.cdist`` sums it (squares in
    coordinate order), so between points the value is cdist's. One loop nest
    with the pair's formula written out: a compiled helper called per pair
    made it 10 times slower.
    """
    nx, d = mx.shape
    ny = my.shape[0]
    for i in range(nx):
        for j in range(ny):
            s = 0.0
            for a in range(d):
                t = mx[i, a] - my[j, a]
                s += t * t
            if zx[i] and zy[j]:
                part = 0.0
            elif zx[i]:
                part = ty[j]
            elif zy[j]:
                part = tx[i]
            elif d == 1:
                t = Ax[i, 0, 0] - Ay[j, 0, 0]
                part = t * t
            elif d == 2:
                a11, a12, a22 = Ax[i, 0, 0], Ax[i, 0, 1], Ax[i, 1, 1]
                b11, b12, b22 = Ay[j, 0, 0], Ay[j, 0, 1], Ay[j, 1, 1]
                m11 = a11 * b11 + a12 * b12
                m22 = a12 * b12 + a22 * b22
                m12 = a11 * b12 + a12 * b22
                m21 = a12 * b11 + a22 * b12
                tr = m11 + m22
                skew = m12 - m21
                nuclear = math.sqrt(tr * tr + skew * skew)
                gap = skew * skew / (nuclear + tr) if nuclear + tr > 0.0 else 0.0
                d11, d12, d22 = a11 - b11, a12 - b12, a22 - b22
                part = d11 * d11 + 2.0 * d12 * d12 + d22 * d22 - 2.0 * gap
            else:
                part = bures[i, j]
            out[i, j] = math.sqrt(s + max(part, 0.0))


@nb.njit(cache=True)
def _w2_kernel(mx, my, Ax, Ay, zx, zy, bures):  # pragma: no cover - compiled
    """W2 of every pair (nx, ny); ``bures`` (nx, ny) is used beyond 2-D."""
    out = np.empty((mx.shape[0], my.shape[0]))
    _w2_block(mx, Ax, zx, _root_norms(Ax), my, Ay, zy, _root_norms(Ay), bures, out)
    return out


def w2_frames(ox, mx, Ax, zx, oy, my, Ay, zy) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """W2 of the pairs within each frame of two sequences of Gaussians (d <= 2), as flat arrays.

    Frame k holds rows ``ox[k]:ox[k + 1]`` of x (``mx``, ``Ax``, ``zx`` as in
    :func:`w2`) and ``oy[k]:oy[k + 1]`` of y. Returns (frame, i, j, W) of every
    pair (i, j rows of x and y), frame by frame, i then j.
    """
    return _w2_frames_kernel(
        np.ascontiguousarray(ox, dtype=np.int64),
        np.ascontiguousarray(mx, dtype=np.float64),
        np.ascontiguousarray(Ax, dtype=np.float64),
        zx,
        np.ascontiguousarray(oy, dtype=np.int64),
        np.ascontiguousarray(my, dtype=np.float64),
        np.ascontiguousarray(Ay, dtype=np.float64),
        zy,
    )


@nb.njit(cache=True)
def _w2_frames_kernel(ox, mx, Ax, zx, oy, my, Ay, zy):  # pragma: no cover - compiled
    K = ox.size - 1
    total = 0
    for k in range(K):
        total += (ox[k + 1] - ox[k]) * (oy[k + 1] - oy[k])
    frame = np.empty(total, dtype=np.int64)
    rows = np.empty(total, dtype=np.int64)
    cols = np.empty(total, dtype=np.int64)
    W = np.empty(total)
    tx, ty = _root_norms(Ax), _root_norms(Ay)
    none = np.zeros((0, 0))
    t = 0
    for k in range(K):
        a0, a1, b0, b1 = ox[k], ox[k + 1], oy[k], oy[k + 1]
        size = (a1 - a0) * (b1 - b0)
        if size == 0:
            continue
        block = W[t : t + size].reshape((a1 - a0, b1 - b0))
        _w2_block(
            mx[a0:a1],
            Ax[a0:a1],
            zx[a0:a1],
            tx[a0:a1],
            my[b0:b1],
            Ay[b0:b1],
            zy[b0:b1],
            ty[b0:b1],
            none,
            block,
        )
        for i in range(a0, a1):
            for j in range(b0, b1):
                frame[t], rows[t], cols[t] = k, i, j
                t += 1
    return frame, rows, cols, W
