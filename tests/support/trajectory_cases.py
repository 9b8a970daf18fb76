"""Random trajectory tables for the trajectory NLL: a box, random cases, an identity-switch probe."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

BOX = ((-1.0, -1.0), (5.0, 5.0))


def random_case(rng, m, n, K, *, special=True, row_prob=0.8):
    """A random labelled tracks table (m labels, K frames) and truth table (n trajectories)."""
    rows = []
    for lab in range(m):
        for t in range(K):
            if rng.random() > row_prob:
                continue
            if special and rng.random() < 0.3:
                r = float(rng.choice([0.0, 1.0, 0.5]))
            else:
                r = float(rng.uniform(0.05, 0.95))
            v = rng.uniform(0.4, 2.0, 2)
            rows.append(
                {
                    "frame": t,
                    "id": 100 + lab,
                    "r": r,
                    "x": rng.uniform(0, 4),
                    "y": rng.uniform(0, 4),
                    "var_x": v[0],
                    "var_y": v[1],
                    "cov_x_y": 0.3 * math.sqrt(v[0] * v[1]) * rng.uniform(-1, 1),
                }
            )
    truth = []
    for j in range(n):
        present = rng.random(K) < 0.7
        if not present.any():
            present[rng.integers(K)] = True
        for t in np.flatnonzero(present):
            truth.append({"frame": int(t), "id": 7 + 3 * j, "x": rng.uniform(0, 4), "y": rng.uniform(0, 4)})
    cols = ["frame", "id", "r", "x", "y", "var_x", "var_y", "cov_x_y"]
    return pd.DataFrame(rows, columns=cols), pd.DataFrame(truth, columns=["frame", "id", "x", "y"])


def switch_tables(swap: bool, frames=20):
    rng = np.random.default_rng(4)
    rows, truth = [], []
    for t in range(frames):
        a = np.array([t * 1.0, 0.0])
        b = np.array([t * 1.0, 3.0])
        truth += [{"frame": t, "id": 1, "x": a[0], "y": a[1]}, {"frame": t, "id": 2, "x": b[0], "y": b[1]}]
        ids = (11, 12) if not (swap and t >= frames // 2) else (12, 11)
        for lab, c in zip(ids, (a, b), strict=True):
            e = rng.normal(0, 0.3, 2)
            rows.append(
                {
                    "frame": t,
                    "id": lab,
                    "r": 0.99,
                    "x": c[0] + e[0],
                    "y": c[1] + e[1],
                    "var_x": 0.1,
                    "var_y": 0.1,
                }
            )
    return pd.DataFrame(rows), pd.DataFrame(truth)
