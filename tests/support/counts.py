"""Random calibration counts of one synthetic run."""

from __future__ import annotations

import numpy as np


def random_counts(rng, bernoullis: bool = True, steps: int = 5):
    """CalibrationCounts of one synthetic run (PHD-like without Bernoullis or pairs)."""
    from nllbench.measures.calibration import PIT_BINS, RELIABILITY_BINS, CalibrationCounts

    count = rng.integers(0, 6, RELIABILITY_BINS) if bernoullis else np.zeros(RELIABILITY_BINS, dtype=np.int64)
    lows = np.arange(RELIABILITY_BINS) / RELIABILITY_BINS
    r_sum = count * (lows + rng.uniform(0, 1 / RELIABILITY_BINS, RELIABILITY_BINS))
    explained = rng.binomial(count, 0.5)
    pairs = int(rng.integers(1, 9)) if bernoullis else 0
    return CalibrationCounts(
        count.astype(np.int64),
        r_sum,
        explained.astype(np.int64),
        brier_sum=float(rng.uniform(0, count.sum() + 1)) if bernoullis else 0.0,
        nees_pairs=pairs,
        nees_sum=float(rng.uniform(0, 5 * pairs)),
        nees_dof=2 * pairs,
        nees_inside=int(rng.integers(0, pairs + 1)),
        pit_count=np.zeros(PIT_BINS, dtype=np.int64),
        card_steps=steps,
        card_covered=int(rng.integers(0, steps + 1)),
        card_log_score_sum=float(rng.uniform(0, 10)),
        unassociated=0,
    )
