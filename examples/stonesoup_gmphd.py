"""Run Stone Soup's GM-PHD tracker on nllbench scenario files and write its tidy tracks tables.

Usage (see docs/score.md, "Stone Soup next to nllbench's PMBM")::

    python examples/stonesoup_gmphd.py SCENARIO.nc -o TRACKS.csv          # one run
    python examples/stonesoup_gmphd.py --input-dir S --output-dir T       # seed<N>.nc -> seed<N>.csv

Then ``nllbench score TRACKS.csv SCENARIO.nc --fit-score-on ... --fit-undetected-on ...``
(or ``--tracks-dir T --scenario-dir S --output-dir M``) scores them into the same
metrics files as ``nllbench evaluate`` writes for the PMBM.
Needs Stone Soup (``pip install -e '.[crosscheck]'``).
"""

import argparse
from pathlib import Path

from nllbench.example_trackers.stonesoup import gmphd_tracks_table
from nllbench.store import atomic_directory, read_scenario


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("scenario", nargs="?", help="scenario file from 'nllbench simulate' (one run)")
    p.add_argument("-o", "--output", help="tidy tracks table, .csv or .parquet (one run)")
    p.add_argument("--input-dir", help="batch: directory of seed<N>.nc scenario files")
    p.add_argument("--output-dir", help="batch: directory for seed<N>.csv tracks tables (written atomically)")
    p.add_argument("--extraction-threshold", type=float, default=0.5, help="GM-PHD track extraction weight")
    args = p.parse_args()
    if bool(args.scenario and args.output) == bool(args.input_dir and args.output_dir):
        p.error("give either SCENARIO -o OUTPUT or --input-dir --output-dir")
    if args.scenario:
        pairs, out = [(Path(args.scenario), Path(args.output))], None
    else:
        files = sorted(Path(args.input_dir).glob("seed*.nc"))
        if not files:
            p.error(f"{args.input_dir}: no seed<N>.nc scenario files")
        out = atomic_directory(args.output_dir)
        tmp = out.__enter__()
        pairs = [(f, tmp / (f.stem + ".csv")) for f in files]
    try:
        for scenario, path in pairs:
            df = gmphd_tracks_table(read_scenario(scenario), extraction_threshold=args.extraction_threshold)
            path.parent.mkdir(parents=True, exist_ok=True)
            df.to_parquet(path, index=False) if path.suffix == ".parquet" else df.to_csv(path, index=False)
            print(f"wrote {path.name}: {len(df)} rows from {scenario.name}")
    except BaseException as exc:
        if out is not None:
            out.__exit__(type(exc), exc, None)
        raise
    if out is not None:
        out.__exit__(None, None, None)


if __name__ == "__main__":
    main()
