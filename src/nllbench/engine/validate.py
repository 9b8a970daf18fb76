"""Input validation shared by the public constructors (of the engine, the measures and the models).

Every check raises ``ValueError`` (or ``TypeError`` for non-numeric input)
with a message of the form ``"<name>: expected ..., got ..."`` so that the
caller sees which argument was wrong and why. Validation happens once, at
construction; the numerical cores trust their inputs.
"""

from __future__ import annotations

import numpy as np

# Relative tolerance used for "weights sum to one" and covariance symmetry.
SUM_TOL = 1e-9
SYM_TOL = 1e-9


def as_float_array(value, name: str) -> np.ndarray:
    """Convert ``value`` to a float64 array, naming ``name`` on failure."""
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name}: expected an array of real numbers, got {value!r}") from exc
    return arr


def check_ndim(arr: np.ndarray, ndim: int, name: str, shape_doc: str) -> None:
    if arr.ndim != ndim:
        raise ValueError(f"{name}: expected a {ndim}-D array of shape {shape_doc}, got shape {arr.shape}")


def check_finite(arr: np.ndarray, name: str) -> None:
    if not np.isfinite(arr).all():  # the method: np.all's dispatch costs more than the test here
        bad = tuple(int(i) for i in np.argwhere(~np.isfinite(arr))[0])
        raise ValueError(f"{name}: expected finite values, got {float(arr[bad])} at index {bad}")


def vector(value, name: str, length: int | None = None) -> np.ndarray:
    """A finite 1-D float array, optionally of a given length."""
    arr = as_float_array(value, name)
    check_ndim(arr, 1, name, "(k,)" if length is None else f"({length},)")
    if length is not None and arr.shape[0] != length:
        raise ValueError(f"{name}: expected shape ({length},), got shape {arr.shape}")
    check_finite(arr, name)
    return arr


def points(value, name: str, count: int | None = None, dim: int | None = None) -> np.ndarray:
    """A finite ``(k, d)`` float array of points."""
    arr = as_float_array(value, name)
    doc = f"({'k' if count is None else count}, {'d' if dim is None else dim})"
    check_ndim(arr, 2, name, doc)
    if count is not None and arr.shape[0] != count:
        raise ValueError(f"{name}: expected shape {doc}, got shape {arr.shape}")
    if dim is not None and arr.shape[1] != dim:
        raise ValueError(f"{name}: expected shape {doc} (dimension {dim}), got shape {arr.shape}")
    if arr.shape[1] < 1:
        raise ValueError(f"{name}: expected at least one state dimension, got shape {arr.shape}")
    check_finite(arr, name)
    return arr


def covariances(value, name: str, count: int, dim: int) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric positive-definite ``(count, dim, dim)`` covariances.

    Returns the (symmetrised) covariances and their lower Cholesky factors.
    """
    arr = as_float_array(value, name)
    doc = f"({count}, {dim}, {dim})"
    check_ndim(arr, 3, name, doc)
    if arr.shape != (count, dim, dim):
        raise ValueError(f"{name}: expected shape {doc}, got shape {arr.shape}")
    check_finite(arr, name)
    asym = np.abs(arr - np.swapaxes(arr, 1, 2))
    scale = np.maximum(np.abs(arr), 1.0)
    if np.any(asym > SYM_TOL * scale):
        j = int(np.argmax(np.max(asym / scale, axis=(1, 2))))
        raise ValueError(f"{name}: expected symmetric matrices, got a non-symmetric matrix at index {j}")
    sym = 0.5 * (arr + np.swapaxes(arr, 1, 2))
    try:
        chol = np.linalg.cholesky(sym) if count else np.empty_like(sym)
    except np.linalg.LinAlgError:
        chol = None
    if chol is None or not np.all(np.diagonal(chol, axis1=1, axis2=2) > 0):
        for j in range(count):  # find and name the first offending matrix
            try:
                ok = bool(np.all(np.diag(np.linalg.cholesky(sym[j])) > 0))
            except np.linalg.LinAlgError:
                ok = False
            if not ok:
                eig = np.linalg.eigvalsh(sym[j])
                raise ValueError(
                    f"{name}: expected positive-definite matrices, got a matrix at index {j} "
                    f"with smallest eigenvalue {eig.min():.3g}"
                )
    return sym, chol


def probabilities(value, name: str, length: int | None = None) -> np.ndarray:
    """A 1-D array with every entry in [0, 1]."""
    arr = vector(value, name, length)
    if np.any((arr < 0) | (arr > 1)):
        j = int(np.argmax((arr < 0) | (arr > 1)))
        raise ValueError(f"{name}: expected values in [0, 1], got {float(arr[j])} at index {j}")
    return arr


def nonnegative(value, name: str, length: int | None = None) -> np.ndarray:
    arr = vector(value, name, length)
    if np.any(arr < 0):
        j = int(np.argmax(arr < 0))
        raise ValueError(f"{name}: expected non-negative values, got {float(arr[j])} at index {j}")
    return arr


def normalised(value, name: str, length: int | None = None) -> np.ndarray:
    """Non-negative weights that sum to one (within ``SUM_TOL`` relative)."""
    arr = nonnegative(value, name, length)
    total = float(arr.sum())
    if abs(total - 1.0) > SUM_TOL * max(1, arr.size):
        raise ValueError(f"{name}: expected weights that sum to 1, got sum {total!r}")
    return arr


def positive_scalar(value, name: str) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name}: expected a positive number, got {value!r}") from exc
    if not np.isfinite(x) or x <= 0:
        raise ValueError(f"{name}: expected a positive finite number, got {value!r}")
    return x


def truth_set(value, dim: int, name: str = "truth") -> np.ndarray:
    """Ground-truth set as an ``(n, dim)`` array; empty input gives ``(0, dim)``."""
    arr = as_float_array(value, name)
    if arr.size == 0 and arr.ndim <= 2:
        if arr.ndim == 2 and arr.shape[1] not in (0, dim):
            raise ValueError(
                f"{name}: expected shape (n, {dim}) matching the density's dimension, got shape {arr.shape}"
            )
        return np.empty((0, dim))
    if arr.ndim != 2:
        raise ValueError(f"{name}: expected a 2-D array of shape (n, {dim}), got shape {arr.shape}")
    if arr.shape[1] != dim:
        raise ValueError(f"{name}: expected dimension {dim} to match the density, got shape {arr.shape}")
    check_finite(arr, name)
    return arr


def labels(value, count: int, name: str = "labels") -> np.ndarray | None:
    """Optional integer tags of shape ``(count,)`` (None stays None), as int64."""
    if value is None:
        return None
    arr = np.asarray(value)
    if arr.shape != (count,) or (arr.size and not np.issubdtype(arr.dtype, np.integer)):
        raise ValueError(f"{name}: expected {count} integers, got shape {arr.shape} of {arr.dtype}")
    return arr.astype(np.int64)
