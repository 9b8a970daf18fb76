"""Benchmark: ``nllbench score`` on a 1,000-frame tracks file (50 Bernoullis, 40 truths per frame), Q = 10.

In interleaved rounds (each side once per round, in turn), prints the
median and best time and the frames per second of

* ``score`` from the CSV files (read, validate, build the densities, evaluate),
* the same from Parquet files,
* ``evaluate_run`` (what ``nllbench evaluate`` runs after reading its
  posterior file) on the same densities already in memory: the baseline,

with the median and min (worst) of the per-round ratios to the baseline,
and checks that all give identical NLL values. With ``--against SRC`` (the
``src`` directory of another checkout, e.g. the main branch before a
change), ``score`` from the CSV files also runs in a fresh process per
round for both source trees, interleaved (imports and compilation on two
frames outside the timing), with the per-round ratio other / this and the
trajectory-GOSPA values compared. ``--parts`` prints the CPU seconds of each
part of ``score`` (wrappers around the functions ``evaluate_run`` calls).

Run:  python benchmarks/bench_score.py [--frames 1000] [--rounds 3] [--against ../main/src] [--parts]
      [--proper-scores]
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from nllbench.measures.evaluate import EvaluationSettings, evaluate_run
from nllbench.trackers.api import FillIns, build_densities, score
from nllbench.trackers.tracks import frame_list, truth_sets, validate_tracks, validate_truth

sys.path.insert(0, str(Path(__file__).parent))
from scenes import N_TRACKS as N_BERNOULLI  # noqa: E402
from scenes import N_TRUTH, SIZE, make_tables  # noqa: E402

CHILD = """
import json, sys, time
t0 = time.perf_counter()
import numpy as np
import nllbench
from nllbench.measures.evaluate import EvaluationSettings
from nllbench.trackers.api import FillIns, score
import pandas as pd
imported = time.perf_counter() - t0
# the proper scores (docs/scores.md) exist only in trees that have them: off unless asked, like for like
extra = {{"proper_scores": {proper}}} if "proper_scores" in EvaluationSettings.__dataclass_fields__ else {{}}
fill, settings = FillIns(1.0, (0.0, 0.0), ({size}, {size})), EvaluationSettings(qs=(10,), **extra)
tracks, truth = pd.read_csv({tracks!r}), pd.read_csv({truth!r})
score(tracks[tracks.frame < 2], truth[truth.frame < 2], fill=fill, settings=settings)
t, c = time.perf_counter(), time.process_time()
r = score({tracks!r}, {truth!r}, fill=fill, settings=settings)
print(json.dumps({{"seconds": time.perf_counter() - t, "cpu": time.process_time() - c, "import": imported,
                   "tgospa": r.metrics.tgospa.value, "nll": float(np.sum(r.metrics.nll["value"])),
                   "package": nllbench.__file__}}))
"""

#: The parts of ``score`` timed by ``--parts``: (module, function name as evaluate calls it, label).
PARTS = (
    ("nllbench.measures.evaluate", "nll_many", "NLL (Murty ranking)"),
    ("nllbench.measures.evaluate", "cardinality_score", "cardinality score"),
    ("nllbench.measures.evaluate", "step_counts", "calibration counts"),
    ("nllbench.measures.evaluate", "theorem1", "Theorem 1 check"),
    ("nllbench.measures.evaluate", "gospa", "per-frame GOSPA"),
    ("nllbench.measures.evaluate", "ospa", "per-frame OSPA"),
    ("nllbench.measures.evaluate", "estimate", "point estimates"),
    ("nllbench.measures.evaluate", "_evaluated_density", "position marginal"),
    ("nllbench.measures.evaluate", "clear_mot", "CLEAR MOT"),
    ("nllbench.measures.evaluate", "identity_scores", "IDF1"),
    ("nllbench.measures.evaluate", "tgospa", "trajectory GOSPA"),
    ("nllbench.measures.evaluate", "hota", "HOTA"),
    ("nllbench.measures.evaluate", "step_proper_scores", "proper scores (energy, intensity, RPS)"),
)


def in_child(src: str, tracks: Path, truth: Path, proper: bool = False) -> dict:
    """One ``score`` of the CSV files in a fresh process importing nllbench from ``src`` (``proper``: with
    the proper scores, in a tree that has them)."""
    code = CHILD.format(size=SIZE, tracks=str(tracks), truth=str(truth), proper=proper)
    env = dict(os.environ, PYTHONPATH=src)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def ratio_line(slow: list, fast: list) -> str:
    r = np.array(slow) / np.array(fast)
    return f"median {np.median(r):6.2f}x  min {r.min():6.2f}x"


def parts(tracks: Path, truth: Path, fill, settings) -> None:
    """CPU seconds of each part of one ``score`` call (wrappers around the functions it calls)."""
    import importlib

    spent = collections.defaultdict(float)
    for module, name, label in PARTS:
        mod = importlib.import_module(module)
        fn = getattr(mod, name, None)
        if fn is None:
            continue

        def timed(*a, _fn=fn, _label=label, **k):
            c = time.process_time()
            try:
                return _fn(*a, **k)
            finally:
                spent[_label] += time.process_time() - c

        setattr(mod, name, timed)
    c = time.process_time()
    score(tracks, truth, fill=fill, settings=settings)
    total = time.process_time() - c
    print(f"\nparts of one score (CSV), CPU seconds (total {total:.2f} s):")
    for label, sec in sorted(spent.items(), key=lambda kv: -kv[1]):
        print(f"  {label:28} {sec:6.2f} s  {100 * sec / total:5.1f} %")
    print(f"  {'the rest':28} {total - sum(spent.values()):6.2f} s")


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--frames", type=int, default=1000)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--against", help="src directory of another checkout to time score against")
    p.add_argument("--parts", action="store_true", help="CPU seconds of each part of score")
    p.add_argument(
        "--proper-scores",
        action="store_true",
        help="also the proper scores (docs/scores.md; on by default in nllbench score): off by default here, "
        "so that --against compares the same measures with a tree that has none",
    )
    args = p.parse_args()
    K = args.frames
    settings = EvaluationSettings(qs=(10,), proper_scores=args.proper_scores)
    fill = FillIns(1.0, (0.0, 0.0), (SIZE, SIZE))
    tracks, truth = make_tables(K)
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        tracks.to_csv(tmp / "tracks.csv", index=False)
        truth.to_csv(tmp / "truth.csv", index=False)
        tracks.to_parquet(tmp / "tracks.parquet", index=False)
        truth.to_parquet(tmp / "truth.parquet", index=False)
        print(
            f"{K} frames, {N_BERNOULLI} Bernoullis, {N_TRUTH} truths per frame, Q = 10, {args.rounds} rounds"
        )
        # warm-up (imports, compiled kernels) on two frames, outside the timings
        score(tracks[tracks.frame < 2], truth[truth.frame < 2], fill=fill, settings=settings)
        tt, yy = validate_tracks(tmp / "tracks.csv"), validate_truth(tmp / "truth.csv")
        frames = frame_list(tt, yy)
        t = time.perf_counter()
        dens, _ = build_densities(tt, frames, fill)
        t_build = time.perf_counter() - t
        X, ids = truth_sets(yy, frames)
        times = {"csv": [], "parquet": [], "base": []}
        for _ in range(args.rounds):
            t = time.perf_counter()
            res_csv = score(tmp / "tracks.csv", tmp / "truth.csv", fill=fill, settings=settings)
            times["csv"].append(time.perf_counter() - t)
            t = time.perf_counter()
            res_pq = score(tmp / "tracks.parquet", tmp / "truth.parquet", fill=fill, settings=settings)
            times["parquet"].append(time.perf_counter() - t)
            lo, hi = res_csv.theorem_fov
            t = time.perf_counter()
            base = evaluate_run(dens, X, ids, lo, hi, settings)
            times["base"].append(time.perf_counter() - t)
        same = np.array_equal(res_csv.metrics.nll["value"], base.nll["value"]) and np.array_equal(
            res_pq.metrics.nll["value"], base.nll["value"]
        )
        ok &= same
        print(f"  building the densities alone: {t_build:.2f} s")
        for key, name in (
            ("csv", "nllbench score (CSV)"),
            ("parquet", "nllbench score (Parquet)"),
            ("base", "evaluate_run, same densities (baseline)"),
        ):
            sec = float(np.median(times[key]))
            print(
                f"  {name:40} median {sec:6.2f} s  best {min(times[key]):6.2f} s  {K / sec:7.1f} frames/s"
                f"  to baseline {ratio_line(times[key], times['base'])}"
            )
        print(f"  identical NLL values: {same}; mean NLL {float(np.mean(base.nll['value'])):.3f}")
        if args.against:
            here = str(Path(__file__).resolve().parents[1] / "src")
            runs = {here: [], args.against: []}
            for _ in range(args.rounds):
                for src in (args.against, here):
                    runs[src].append(in_child(src, tmp / "tracks.csv", tmp / "truth.csv", args.proper_scores))
            scores = "with" if args.proper_scores else "without"
            print(
                f"\nscore (CSV) in a fresh process per round, this tree against {args.against} "
                f"({scores} the proper scores where a tree has them):"
            )
            for src, name in ((args.against, "other"), (here, "this")):
                wall, cpu, imp = (
                    np.median([x[key] for x in runs[src]]) for key in ("seconds", "cpu", "import")
                )
                print(
                    f"  {name:5} median {wall:7.2f} s wall, {cpu:7.2f} s CPU (import {imp:.1f} s)"
                    f"  tgospa {runs[src][-1]['tgospa']:.9f}  ({runs[src][-1]['package']})"
                )
            wall = ratio_line([x["seconds"] for x in runs[args.against]], [x["seconds"] for x in runs[here]])
            cpu = ratio_line([x["cpu"] for x in runs[args.against]], [x["cpu"] for x in runs[here]])
            agree = all(
                abs(a["tgospa"] - b["tgospa"]) <= 1e-12 * abs(a["tgospa"]) and a["nll"] == b["nll"]
                for a, b in zip(runs[args.against], runs[here], strict=True)
            )
            ok &= agree
            print(f"  other / this per round: wall {wall}; CPU {cpu}; same values: {agree}")
        if args.parts:
            parts(tmp / "tracks.csv", tmp / "truth.csv", fill, settings)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
