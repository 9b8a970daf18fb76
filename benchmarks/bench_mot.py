"""``nllbench score`` on MOTChallenge files against TrackEval 1.3.0, in interleaved rounds.

A MOT17-shaped synthetic benchmark (``--sequences`` sequences of ``--frames``
frames, 20-40 pedestrians per frame with distractors and zero-marked boxes, a
tracker result with misses, false boxes, switches and a confidence score)
is written once; each round then runs, as separate processes, in turn:

* ``trackeval``: TrackEval's MotChallenge2DBox with HOTA, CLEAR and Identity;
* ``classic``: ``nllbench score --measures hota,clear_mot,identity``: HOTA,
  CLEAR and Identity on IoU only (TrackEval's measures, no NLL);
* ``default``: ``nllbench score`` with the NLL (the confidence as r, box
  covariances, an undetected rate) and its default measures, ``--jobs 1``;
* ``default-jobs2``: the same with ``--jobs 2`` (wall time);
* ``baseline`` (with ``--baseline SRC``): ``default`` run by the package
  at ``SRC`` (``PYTHONPATH=SRC``, e.g. ``src`` of a checkout of an earlier
  commit), to time a change in the same rounds; its paired ratio to
  ``default`` and whether their output files are equal byte for byte are
  printed; ``baseline-classic``: ``classic`` run by it, with its paired ratio.

CPU seconds are each child's user + system time and its memory peak its
largest resident set (``os.wait4``; with ``--jobs 2`` the largest process of
the tree, not their sum); wall seconds too. Ratios are per round
(``benchmarks/rounds.py``: median and worst round). The load average is
printed before and after. Run::

    PYTHONPATH=src python benchmarks/bench_mot.py --sequences 7 --frames 760 --rounds 3

(7 x 760 frames is MOT17's train split size, 5,316 frames).
"""

from __future__ import annotations

import argparse
import filecmp
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from rounds import overhead, spread

TRACKEVAL = """
import sys, trackeval
root, seqs, frames = sys.argv[1], sys.argv[2].split(","), int(sys.argv[3])
ev = dict(trackeval.Evaluator.get_default_eval_config(), PRINT_RESULTS=False, PRINT_CONFIG=False,
          TIME_PROGRESS=False, OUTPUT_SUMMARY=False, OUTPUT_DETAILED=False, PLOT_CURVES=False,
          USE_PARALLEL=False, DISPLAY_LESS_PROGRESS=True)
ds = dict(trackeval.datasets.MotChallenge2DBox.get_default_dataset_config(), GT_FOLDER=root + "/gt",
          TRACKERS_FOLDER=root + "/te", TRACKERS_TO_EVAL=["T"], SEQ_INFO={s: frames for s in seqs},
          GT_LOC_FORMAT="{gt_folder}/{seq}/gt/gt.txt", SKIP_SPLIT_FOL=True, PRINT_CONFIG=False)
metrics = [m({"PRINT_CONFIG": False}) for m in (trackeval.metrics.HOTA, trackeval.metrics.CLEAR,
                                                 trackeval.metrics.Identity)]
res, _ = trackeval.Evaluator(ev).evaluate([trackeval.datasets.MotChallenge2DBox(ds)], metrics)
r = res["MotChallenge2DBox"]["T"]["COMBINED_SEQ"]["pedestrian"]
print("HOTA", float(r["HOTA"]["HOTA"].mean()), "MOTA", r["CLEAR"]["MOTA"], "IDF1", r["Identity"]["IDF1"])
"""


def sequence(seed: int, frames: int):
    """(ground-truth lines, tracker lines) of one synthetic MOT17-shaped sequence."""
    rng = np.random.default_rng(seed)
    gt, tr = [], []
    alive: dict[int, list] = {}
    next_gt, next_tr = 1, 1
    for t in range(1, frames + 1):
        target = rng.integers(20, 41)
        while len(alive) < target:  # births
            cls = rng.choice([1] * 8 + [2, 7])
            box = [*rng.uniform(0, 1800, 2), *rng.uniform(20, 120, 1) * [1, 2.5]]
            alive[next_gt] = [np.array(box), rng.normal(0, 2, 2), cls, next_tr]
            next_gt, next_tr = next_gt + 1, next_tr + 1
        for i in [i for i in alive if rng.random() < 0.01]:  # deaths
            del alive[i]
        for i, (box, vel, cls, tid) in alive.items():
            box[:2] += vel
            flag = 0 if rng.random() < 0.03 else 1
            gt.append(f"{t},{i},{box[0]:.1f},{box[1]:.1f},{box[2]:.1f},{box[3]:.1f},{flag},{cls},1")
            if rng.random() < 0.15:
                continue
            if rng.random() < 0.002:  # a switch
                alive[i][3] = tid = next_tr
                next_tr += 1
            j = rng.normal(0, 0.08 * box[2], 2)
            conf = rng.uniform(0.3, 1.0)
            shown = f"{box[0] + j[0]:.1f},{box[1] + j[1]:.1f},{box[2]:.1f},{box[3]:.1f}"
            tr.append(f"{t},{tid},{shown},{conf:.3f},-1,-1,-1")
        for k in range(rng.poisson(2)):  # false boxes
            fx, fy = rng.uniform(0, 1800, 2)
            tr.append(
                f"{t},{1000000 + 10 * t + k},{fx:.1f},{fy:.1f},40,100,{rng.uniform(0, 0.6):.3f},-1,-1,-1"
            )
    return gt, tr


def write_set(root: Path, sequences: int, frames: int) -> list[str]:
    """The synthetic set in both layouts: nllbench's (res/, gt/) and TrackEval's (gt/, te/T/data/)."""
    names = [f"SYN-{k:02d}" for k in range(sequences)]
    for k, name in enumerate(names):
        g, t = sequence(k, frames)
        (root / "gt" / name / "gt").mkdir(parents=True)
        (root / "gt" / name / "gt" / "gt.txt").write_text("\n".join(g) + "\n")
        for folder in (root / "res", root / "te" / "T" / "data"):
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"{name}.txt").write_text("\n".join(t) + "\n")
    return names


def timed(argv: list[str]) -> tuple[float, float, float, str]:
    """(CPU seconds of the child, wall seconds, its memory peak in MiB, its stdout) of one command."""
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        child = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=err)
        out = child.stdout.read().decode()
        child.stdout.close()
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - t0
        if child.returncode:
            err.seek(0)
            raise RuntimeError(f"{argv[:4]} failed: {err.read().decode()[-2000:]}")
    cpu = usage.ru_utime + usage.ru_stime
    return cpu, wall, usage.ru_maxrss / 1024.0, out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sequences", type=int, default=2)
    parser.add_argument("--frames", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--baseline", metavar="SRC", help="also run the default set with PYTHONPATH=SRC")
    args = parser.parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="bench_mot_"))
    names = write_set(root, args.sequences, args.frames)
    py = [sys.executable]
    score = [*py, "-m", "nllbench.cli", "score", "--tracks-dir", str(root / "res"), "--scenario-dir"]
    score += [str(root / "gt"), "--frames", "union"]
    nll = ["--mot-conf", "r", "--mot-box-std-fraction", "0.1", "--undetected-rate", "2"]
    nll += ["--fov", "-200", "-200", "2200", "2200", "--threshold", "50", "--cutoff", "50"]
    sides = {
        "trackeval": [*py, "-c", TRACKEVAL, str(root), ",".join(names), str(args.frames)],
        "classic": [*score, "--output-dir", str(root / "o1"), *nll, "--measures", "hota,clear_mot,identity"],
        "default": [*score, "--output-dir", str(root / "o2"), *nll, "--jobs", "1"],
        "default-jobs2": [*score, "--output-dir", str(root / "o3"), *nll, "--jobs", "2"],
    }
    if args.baseline:
        base = ["env", f"PYTHONPATH={Path(args.baseline).resolve()}", *score]
        sides["baseline"] = [*base, "--output-dir", str(root / "o4"), *nll, "--jobs", "1"]
        classic = ["--measures", "hota,clear_mot,identity"]
        sides["baseline-classic"] = [*base, "--output-dir", str(root / "o5"), *nll, *classic]
    timed(sides["classic"])  # kernels compiled once, outside the rounds
    timed(sides["default"])
    if args.baseline:
        timed(sides["baseline"])
    cpu = {k: [] for k in sides}
    wall = {k: [] for k in sides}
    peak = {k: [] for k in sides}
    load = os.getloadavg()
    for _ in range(args.rounds):
        for name, cmd in sides.items():
            c, w, m, _ = timed(cmd)
            cpu[name].append(c)
            wall[name].append(w)
            peak[name].append(m)
    frames = args.sequences * args.frames
    frames_note = f"({frames} frames), {args.rounds} rounds, {os.cpu_count()} CPUs"
    print(f"{args.sequences} sequences x {args.frames} frames {frames_note}")
    print(
        f"  load average (1, 5, 15 min) before {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}, after "
        + " ".join(f"{x:.2f}" for x in os.getloadavg())
    )
    for name in sides:
        cpu_s, wall_s, mem = np.median(cpu[name]), np.median(wall[name]), max(peak[name])
        print(f"  {name:14s} CPU {cpu_s:7.2f} s  wall {wall_s:7.2f} s (medians)  memory peak {mem:6.0f} MiB")
    for name in ("classic", "default", "default-jobs2"):
        print(f"  CPU {name} / trackeval: {overhead(cpu[name], cpu['trackeval'])}")
    print(f"  wall --jobs 2 / --jobs 1: {spread(wall['default-jobs2'], wall['default'])}")
    if args.baseline:
        print(f"  CPU baseline / trackeval: {overhead(cpu['baseline'], cpu['trackeval'])}")
        print(f"  CPU default / baseline: {overhead(cpu['default'], cpu['baseline'])}")
        print(f"  CPU classic / baseline-classic: {overhead(cpu['classic'], cpu['baseline-classic'])}")
        files = sorted(p.name for p in (root / "o2").iterdir())
        same = all(filecmp.cmp(root / "o2" / f, root / "o4" / f, shallow=False) for f in files)
        print(f"  output files of default and baseline byte-identical: {same} ({len(files)} files)")
        files = sorted(p.name for p in (root / "o1").iterdir())
        same = all(filecmp.cmp(root / "o1" / f, root / "o5" / f, shallow=False) for f in files)
        print(f"  output files of classic and baseline-classic byte-identical: {same} ({len(files)} files)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
