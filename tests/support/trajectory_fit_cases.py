"""Tracks and truth drawn window by window from a declared trajectory density, in a box (LOW, HIGH)."""

from __future__ import annotations

import numpy as np
import pandas as pd

LOW, HIGH = np.array([0.0, 0.0]), np.array([100.0, 100.0])
FOV = (tuple(LOW), tuple(HIGH))


def simulate(rng, windows, K, rate, rho, R, labels=3, delay=2):
    """Tracks and truth drawn from the declared density, window by window.

    Each label has rows from frame ``delay`` of its window on (a confirmation delay): there
    it is present with its row's r, its state Gaussian; before, present with probability R,
    uniform on the box. Undetected trajectories: Poisson(rate) of them, present at each frame
    with probability rho given at least one frame, uniform on the box.
    """
    tracks, truth = [], []
    next_id = 0
    for w in range(windows):
        frames = w * K + np.arange(K)
        for lab in range(labels):
            ident = 1000 * w + lab
            centre = rng.uniform(10, 90, 2)
            states = {}
            for k, f in enumerate(frames):
                if k >= delay:
                    r = rng.uniform(0.6, 0.95)
                    mean = centre + rng.normal(0, 1.0, 2)
                    tracks.append({"frame": f, "id": ident, "r": r, "x": mean[0], "y": mean[1]})
                    if rng.random() < r:
                        states[f] = rng.multivariate_normal(mean, 0.5 * np.eye(2))
                elif rng.random() < R:
                    states[f] = rng.uniform(LOW, HIGH)
            if states:
                truth += [{"frame": f, "id": next_id, "x": s[0], "y": s[1]} for f, s in states.items()]
                next_id += 1
        for _ in range(rng.poisson(rate)):
            present = np.zeros(K, dtype=bool)
            while not present.any():
                present = rng.random(K) < rho
            for f in frames[present]:
                s = rng.uniform(LOW, HIGH)
                truth.append({"frame": f, "id": next_id, "x": s[0], "y": s[1]})
            next_id += 1
    tr = pd.DataFrame(tracks, columns=["frame", "id", "r", "x", "y"]).assign(var_x=0.5, var_y=0.5)
    return tr, pd.DataFrame(truth, columns=["frame", "id", "x", "y"])
