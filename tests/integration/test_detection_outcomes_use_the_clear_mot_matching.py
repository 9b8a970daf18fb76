"""Detection outcomes of a scored tracks table are the CLEAR MOT matches: a chain the capped-cost
assignment gets wrong, and 200 random frames counted against clear_mot."""

from __future__ import annotations

import numpy as np
import pandas as pd


def test_detection_outcomes_use_the_clear_mot_matching():
    from nllbench.measures.metrics import clear_mot
    from nllbench.trackers.scoring import detection_outcomes
    from nllbench.trackers.tracks import validate_tracks, validate_truth

    # a chain where a capped-cost assignment keeps two exact pairs and drops the third object,
    # while the CLEAR MOT rule (most pairs within the threshold) matches all three
    tracks = pd.DataFrame({"frame": 0, "x": [1.9, 3.8, 5.7], "y": 0.0, "score": [0.1, 0.2, 0.3]})
    truth = pd.DataFrame({"frame": 0, "id": [1, 2, 3], "x": [0.0, 1.9, 3.8], "y": 0.0})
    out = detection_outcomes(validate_tracks(tracks), validate_truth(truth), 2.0)
    assert out.tolist() == [1.0, 1.0, 1.0]
    # random single frames: as many detections as CLEAR MOT matches
    rng = np.random.default_rng(3)
    for _ in range(200):
        n, m = rng.integers(0, 6, 2)
        X, Y = rng.uniform(0, 6, (n, 2)), rng.uniform(0, 6, (m, 2))
        t = validate_tracks(pd.DataFrame({"frame": 0, "x": Y[:, 0], "y": Y[:, 1], "score": 0.5}))
        y = validate_truth(pd.DataFrame({"frame": 0, "id": np.arange(n), "x": X[:, 0], "y": X[:, 1]}))
        got = detection_outcomes(t, y, 2.0).sum()
        assert got == clear_mot([X], [np.arange(n)], [Y], [np.arange(m)], threshold=2.0).matches
