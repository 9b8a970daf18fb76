"""``nb.score``'s per-frame densities of a million-row table take the memory of the table,
not of the frames.
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pandas as pd

from nllbench.trackers.tracks import densities, validate_tracks


def test_densities_of_a_million_rows_take_memory_of_the_table_not_of_the_frames():
    n, frames = 1_000_000, 200_000
    rng = np.random.default_rng(0)
    df = pd.DataFrame(
        {
            "frame": np.repeat(np.arange(frames), n // frames),
            "id": np.tile(np.arange(n // frames), frames),
            "r": 0.9,
            "x": rng.uniform(0, 100, n),
            "y": rng.uniform(0, 100, n),
            "var_x": 1.0,
            "var_y": 1.0,
        }
    )
    table = validate_tracks(df)
    tracemalloc.start()
    try:
        dens = densities(table, np.arange(frames), table.r, table.covs, None)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # the row order and frame bounds: 8 bytes per row and 16 per frame, about 12 MB here; one density
    # object per frame (about 2.5 kB each) would be 500 MB
    assert peak < 40e6, peak
    assert len(dens) == frames and len(dens[frames - 1].hypotheses[0]) == n // frames
