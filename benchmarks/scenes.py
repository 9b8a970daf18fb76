"""Scenes shared by the benchmarks: a tracks table and a truth table of many frames.

``make_tables`` is the scene of ``bench_score`` (truths drawn anew each frame)
and of ``bench_trajectory_nll`` (``moving=True``: truth trajectories moving
smoothly, so that labels follow them across frames).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

#: Tracks (Bernoullis, labels) per frame, truths per frame, side of the square surveillance area.
N_TRACKS, N_TRUTH, SIZE = 50, 40, 300.0


def make_tables(frames: int, seed: int = 0, *, moving: bool = False) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(tracks, truth): 40 truths per frame seen by 40 tracks (noisy means, r near 1), plus 10 false tracks.

    The truths are uniform on the area, drawn anew each frame, or (``moving``)
    uniform at frame 0 and then a random walk (steps of standard deviation 0.3
    per axis). Track ``i < 40`` is truth ``i`` plus noise of standard
    deviation 0.7 with ``r`` in [0.7, 0.99]; tracks 40 to 49 are uniform on
    the area with ``r`` in [0.01, 0.3]; variances in [0.3, 1], correlation 0.1.
    """
    rng = np.random.default_rng(seed)
    if moving:
        start = rng.uniform(0, SIZE, (N_TRUTH, 2))
        walk = rng.normal(0, 0.3, (frames, N_TRUTH, 2)).cumsum(axis=0)
    truth, tracks = [], []
    for f in range(frames):
        X = start + walk[f] if moving else rng.uniform(0, SIZE, (N_TRUTH, 2))
        truth.append(pd.DataFrame({"frame": f, "id": np.arange(N_TRUTH), "x": X[:, 0], "y": X[:, 1]}))
        M = np.concatenate([X + rng.normal(0, 0.7, X.shape), rng.uniform(0, SIZE, (N_TRACKS - N_TRUTH, 2))])
        r = np.concatenate([rng.uniform(0.7, 0.99, N_TRUTH), rng.uniform(0.01, 0.3, N_TRACKS - N_TRUTH)])
        var = rng.uniform(0.3, 1.0, (N_TRACKS, 2))
        tracks.append(
            pd.DataFrame(
                {
                    "frame": f,
                    "id": np.arange(N_TRACKS),
                    "r": r,
                    "x": M[:, 0],
                    "y": M[:, 1],
                    "var_x": var[:, 0],
                    "var_y": var[:, 1],
                    "cov_x_y": 0.1 * np.sqrt(var[:, 0] * var[:, 1]),
                }
            )
        )
    return pd.concat(tracks, ignore_index=True), pd.concat(truth, ignore_index=True)
