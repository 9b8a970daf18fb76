"""A per-run study table with the proper scores, as collect writes it (the proper-scores figure's tests)."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

from nllbench.measures.names import PROPER_SCORES

FILTERS = ["mbm01", "phd", "pmbm", "zz_tracker"]  # mbm01: NLL +inf in every run, scores finite


def study_runs() -> pd.DataFrame:
    """A per-run table as collect writes it: NLL, GOSPA and the proper scores (run means)."""
    rng = np.random.default_rng(1)
    rows = []
    base = {"scenario": "williams15", "pd": 0.9, "temper": 1.0, "marginal": "position"}
    for f, clutter, s, seed in itertools.product(FILTERS, [5.0, 20.0], [0.5, 1.0], range(4)):
        row = {**base, "filter": f, "clutter": clutter, "cov_scale": s, "seed": seed}
        rows.append({**row, "q": 10, "measure": "nll", "value": np.inf if f == "mbm01" else rng.gamma(5.0)})
        rows.append({**row, "q": 0, "measure": "gospa_mean", "value": rng.uniform(2, 5)})
        rows.append({**row, "q": 0, "measure": "mota", "value": rng.uniform(0, 1)})
        if s == 1.0 and f != "zz_tracker":  # the tracker was scored without the proper scores
            worse = 0.3 if f == "mbm01" else 0.0
            for m in PROPER_SCORES:
                rows.append({**row, "q": 0, "measure": m, "value": 1.0 + worse + rng.uniform(0, 0.05)})
            rows.append({**row, "q": 0, "measure": "energy_score_mean_se", "value": 0.003})
    return pd.DataFrame(rows)
