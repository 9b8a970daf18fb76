"""Run Stone Soup's GM-PHD tracker on an nllbench scenario file and write its tidy tracks table.

Usage (see docs/score.md, "Stone Soup next to nllbench's PMBM")::

    python examples/stonesoup_gmphd.py SCENARIO.nc -o TRACKS.csv [--truth TRUTH.csv]

Then ``nllbench score TRACKS.csv TRUTH.csv --fit-score-on ... --fit-undetected-on ...``
scores it with the same metrics file as ``nllbench evaluate`` writes for the PMBM.
Needs Stone Soup (``pip install -e '.[crosscheck]'``).
"""

import argparse
from pathlib import Path

from nllbench.io import read_scenario
from nllbench.stonesoup_tracker import gmphd_tracks_table, truth_table


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("scenario", help="scenario file from 'nllbench simulate'")
    p.add_argument("-o", "--output", required=True, help="tidy tracks table (.csv or .parquet)")
    p.add_argument("--truth", help="also write the scenario's truth as a tidy truth table")
    p.add_argument("--extraction-threshold", type=float, default=0.5, help="GM-PHD track extraction weight")
    args = p.parse_args()
    data = read_scenario(args.scenario)
    tables = [(gmphd_tracks_table(data, extraction_threshold=args.extraction_threshold), args.output)]
    if args.truth:
        tables.append((truth_table(data), args.truth))
    for df, path in tables:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        if str(path).endswith(".parquet"):
            df.to_parquet(path, index=False)
        else:
            df.to_csv(path, index=False)
        print(f"wrote {path}: {len(df)} rows")


if __name__ == "__main__":
    main()
