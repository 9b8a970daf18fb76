"""A stand-in tracker for the .test workflow's ``trackers:`` section: it reports every true object.

    python .test/scripts/oracle_tracker.py --input-dir S --output-dir T   # seed<N>.nc -> seed<N>.csv

Each true object at each step becomes a row of a tidy tracks table (``frame``, ``id``, ``r``,
``x``, ``y``) with existence ``r = 0.9`` and the object's identity as the track label; no
covariance is written, so the pipeline's ``default_std`` fills it in. It needs nothing beyond
nllbench (no Stone Soup, no nrl-tracker) and runs in well under a second.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from nllbench.store import read_scenario

EXISTENCE = 0.9


def tracks_of(scenario: Path) -> pd.DataFrame:
    """The truth of a scenario file as a tidy tracks table, every object with r = ``EXISTENCE``."""
    data = read_scenario(scenario)
    rows = [
        {"frame": k, "id": int(i), "r": EXISTENCE, "x": float(x[0]), "y": float(x[1])}
        for k, (ids, states) in enumerate(zip(data.truth_ids, data.truth, strict=True))
        for i, x in zip(ids, states, strict=True)
    ]
    return pd.DataFrame(rows, columns=["frame", "id", "r", "x", "y"])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--input-dir", required=True, help="directory of seed<N>.nc scenario files")
    p.add_argument("--output-dir", required=True, help="directory for the seed<N>.csv tracks tables")
    args = p.parse_args()
    files = sorted(Path(args.input_dir).glob("seed*.nc"))
    if not files:
        p.error(f"{args.input_dir}: no seed<N>.nc scenario files")
    out = Path(args.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    for f in files:
        tracks_of(f).to_csv(out / f"{f.stem}.csv", index=False)


if __name__ == "__main__":
    main()
