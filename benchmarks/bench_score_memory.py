"""Benchmark: peak resident set of ``nllbench score`` on a long tracks table, against another tree.

Writes a tracks CSV of ``--frames`` frames with 5 tracks each (``frame, id,
r, x, y, var_x, var_y``; 5 rows per frame) and its truth (5 objects per
frame, the tracks 1-sigma off), then runs ``nllbench score TRACKS TRUTH -o
M.nc --per-frame F.csv --undetected-rate 0.5 --fov 0 0 100 100`` in a fresh
process per side: this tree and ``--against SRC`` (the ``src`` of another
checkout, e.g. the main branch before a change), in interleaved rounds
(each side once per round, in turn) after one unmeasured run of each on 10
frames (numba's cache). Prints per side the median peak resident set
(``VmHWM``, read by the command's own process at its end), the wall time,
the frames per second, and the memory per frame above the floor (the same
command on 10 frames); the per-round ratio other / this (median and worst);
and checks that the per-frame CSV files are byte-identical.

Run:  python benchmarks/bench_score_memory.py --against ../main/src [--frames 20000] [--rounds 1]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from rounds import rounds, speedup  # noqa: E402

SRC = Path(__file__).resolve().parents[1] / "src"
#: Runs one nllbench command in this process and writes its peak resident set (VmHWM, MiB) to a file.
RUNNER = """
import sys
from nllbench.cli import main
rc = main(sys.argv[2:])
with open("/proc/self/status") as f:
    hwm = [int(line.split()[1]) / 1024 for line in f if line.startswith("VmHWM:")][0]
open(sys.argv[1], "w").write(str(hwm))
sys.exit(rc)
"""


def write_tables(directory: Path, frames: int, per_frame: int = 5) -> tuple[Path, Path]:
    """A tracks CSV and its truth CSV of ``frames`` frames, ``per_frame`` rows each (seeded)."""
    import pandas as pd

    rng = np.random.default_rng(0)
    n = frames * per_frame
    frame = np.repeat(np.arange(frames), per_frame)
    ids = np.tile(np.arange(per_frame), frames)
    truth = rng.uniform(0, 100, (n, 2))
    est = truth + rng.normal(0, 1, truth.shape)
    tracks = pd.DataFrame(
        {"frame": frame, "id": ids, "r": 0.9, "x": est[:, 0], "y": est[:, 1], "var_x": 1.0, "var_y": 1.0}
    )
    tpath, ypath = directory / f"tracks{frames}.csv", directory / f"truth{frames}.csv"
    tracks.to_csv(tpath, index=False, float_format="%.4f")
    pd.DataFrame({"frame": frame, "id": ids, "x": truth[:, 0], "y": truth[:, 1]}).to_csv(
        ypath, index=False, float_format="%.4f"
    )
    return tpath, ypath


def run_score(src: Path, tracks: Path, truth: Path, out: Path) -> tuple[float, float]:
    """(peak resident set MiB, wall seconds) of ``nllbench score`` of the tree ``src``."""
    hwm = out.with_suffix(".hwm")
    args = [str(tracks), str(truth), "-o", str(out), "--per-frame", str(out.with_suffix(".csv"))]
    args += ["--undetected-rate", "0.5", "--fov", "0", "0", "100", "100"]
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", RUNNER, str(hwm), "score", *args],
        check=True,
        capture_output=True,
        env={**os.environ, "PYTHONPATH": str(src)},
    )
    return float(hwm.read_text()), time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", required=True, help="src directory of the other tree")
    parser.add_argument("--frames", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    sides = {"this": SRC, "other": Path(args.against).resolve()}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        small = write_tables(tmp, 10)
        floor = {name: run_score(src, *small, tmp / f"floor_{name}.nc")[0] for name, src in sides.items()}
        tracks, truth = write_tables(tmp, args.frames)
        peaks: dict[str, list[float]] = {name: [] for name in sides}

        def side(name):
            def fn():
                peak, _ = run_score(sides[name], tracks, truth, tmp / f"{name}.nc")
                peaks[name].append(peak)

            return fn

        times, _ = rounds({name: side(name) for name in sides}, args.rounds)
        print(f"nllbench score, {args.frames} frames x 5 rows, {args.rounds} round(s):")
        for name, src in sides.items():
            peak, wall = float(np.median(peaks[name])), float(np.median(times[name]))
            per_frame = (peak - floor[name]) * 2**20 / args.frames
            print(
                f"  {name:5s} ({src}): peak {peak:.0f} MiB (floor {floor[name]:.0f} MiB on 10 frames, "
                f"{per_frame / 1024:.1f} KiB per frame above it), {wall:.0f} s, "
                f"{args.frames / wall:.0f} frames/s"
            )
        print("  peak other / this:", speedup(peaks["other"], peaks["this"]))
        same = (tmp / "this.csv").read_bytes() == (tmp / "other.csv").read_bytes()
        print(f"  per-frame CSV files byte-identical: {same}")
        if not same:
            raise SystemExit("the per-frame values differ")


if __name__ == "__main__":
    main()
