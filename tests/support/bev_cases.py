"""3-D scenes for the bird's-eye tests: random frames, covariances, tables and their scores."""

from __future__ import annotations

import numpy as np
import pandas as pd

import nllbench as nb
from nllbench.measures.evaluate import EvaluationSettings

XYZ = ("x", "y", "z")


ONE = EvaluationSettings(qs=(1,))  # the NLL budget does not matter here


def spd(rng, k, d, spread=1.0):
    A = rng.normal(size=(k, d, d))
    return spread * (A @ np.swapaxes(A, 1, 2) + 0.3 * np.eye(d))


def tables(truth_rows, track_rows, var=(0.25, 0.25, 1.0)):
    """Tidy truth (frame, id, x, y, z) and tracks (r = 0.9, diagonal covariances) tables."""
    T = pd.DataFrame(truth_rows, columns=["frame", "id", *XYZ])
    E = pd.DataFrame(track_rows, columns=["frame", "id", *XYZ])
    E.insert(2, "r", 0.9)
    for name, s2 in zip(XYZ, var, strict=True):
        E[f"var_{name}"] = s2
    return T, E


def scored(E, T, frames, **kw):
    return nb.score(E, T, state=XYZ, frames=frames, **kw).metrics


def random_frames(rng, K, dim=2, box=4.0):
    T, TI, E, EI = [], [], [], []
    for _ in range(K):
        n, m = int(rng.integers(0, 5)), int(rng.integers(0, 5))
        T.append(rng.uniform(0, box, (n, dim)))
        TI.append(rng.choice(6, n, replace=False))
        E.append(rng.uniform(0, box, (m, dim)))
        EI.append(rng.choice(7, m, replace=False) + 20)
    return T, TI, E, EI
