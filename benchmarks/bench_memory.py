"""Benchmark: memory of a read PMBM posterior, pooled against copied hypotheses, and the peak resident
set of ``nllbench evaluate`` and ``nllbench filter`` against earlier trees.

A posterior file stores each step's distinct Bernoullis once and its global
hypotheses as indices into them; :func:`nllbench.read_posterior` returns
pooled PMBMs that keep that layout. The baseline, built explicitly in the
same run, is the layout the reader returned before: every hypothesis holding
its own copies (``PMBM(ppp, hypotheses, weights)`` of the materialised
hypotheses).

Measured on a PMBM Williams-2015 run (``nllbench simulate --scenario
williams15 --seed 1 --clutter-rate 10``, then ``nllbench filter --filter
pmbm``; 81 steps, about 11,500 global hypotheses holding 269,000 Bernoullis
drawn from about 12,900 distinct ones):

* the memory the read posterior holds (``tracemalloc``, after a first read
  so that imports and compiled code are not counted): pooled, and the
  copies built from it;
* the peak resident set size of a process that reads the posterior and
  evaluates it as ``nllbench evaluate --q 1 10 100`` does
  (:func:`nllbench.measures.evaluate.evaluate_runs`), pooled or with the
  copies, in subprocesses interleaved in rounds; the median and the worst
  (min) of the per-round ratios, and the floor of that process (its peak
  resident set before reading the posterior, after importing the modules
  and loading the compiled kernels) for scale;
* the peak resident set (``VmHWM``, read by the command's own process at its
  end) of the commands ``nllbench evaluate POSTERIOR SCENARIO --q 1 10 100``
  and ``nllbench filter SCENARIO --filter pmbm`` of this tree against the
  same commands of earlier trees of the repository (``--baseline COMMIT``,
  extracted with ``git archive``; default: 6163711, the last commit before
  the pooled posterior, and 3312b58, the pooled posterior with every module
  imported eagerly, xarray reading and writing the files), in interleaved
  rounds after one unmeasured run of each (numba compiles into each tree's
  cache); the median and the worst (min) of the per-round ratios baseline / this tree;
* the values: every NLL array of the pooled and copied sides equal to the
  bit; the metrics file of ``evaluate`` and the posterior file of
  ``filter`` compared byte for byte with each baseline's (a baseline that
  writes an older metrics schema: the variables both files hold, as
  :func:`nllbench.read_metrics` reads them, compared to the bit).

Run:  python benchmarks/bench_memory.py [--rounds 3] [--posterior P.nc --scenario S.nc]
          [--baseline COMMIT ...] [--trees DIR]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import subprocess
import sys
import tarfile
import tempfile
import tracemalloc
from pathlib import Path

import numpy as np

MIB = 2.0**20


def make_run(directory: Path) -> tuple[Path, Path]:
    """The Williams-2015 scenario (seed 1, clutter rate 10) and its PMBM posterior, as the CLI writes them."""
    from nllbench.pipeline.runs import filter_file, simulate_file

    scenario, posterior = directory / "scenario.nc", directory / "pmbm.nc"
    simulate_file("williams15", 1, scenario, {"clutter_rate": 10.0})
    filter_file(scenario, "pmbm", posterior)
    return scenario, posterior


def copied(post):
    """Each step with every hypothesis holding its own copies (the reader's layout before pooling)."""
    import nllbench as nb

    return [nb.PMBM(d.ppp, d.hypotheses, d.weights) for d in post]


def held(build) -> tuple[object, float]:
    """``build()`` and the memory it holds afterwards (MiB, tracemalloc)."""
    gc.collect()
    tracemalloc.start()
    out = build()
    gc.collect()
    size = tracemalloc.get_traced_memory()[0] / MIB
    tracemalloc.stop()
    return out, size


def held_memory(posterior: Path) -> dict:
    import nllbench as nb

    nb.read_posterior(posterior)  # imports, compiled code and caches outside the measurement
    post, pooled = held(lambda: nb.read_posterior(posterior))
    copies, copies_mib = held(lambda: copied(post))
    return {
        "steps": len(post),
        "hypotheses": sum(d.n_hypotheses for d in post),
        "bernoullis": sum(sum(m.size for m in d.members) for d in post),
        "distinct": sum(len(d.pool) for d in post),
        "pooled_mib": pooled,
        "copies_mib": copies_mib,
    }


def peak_rss_mib() -> float:
    """This process's peak resident set size (VmHWM, MiB).

    Not ``getrusage``: its ``ru_maxrss`` survives ``exec`` on Linux, so a worker
    started from this (larger) script would report the script's peak.
    """
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # not Linux: the rusage figure


def worker(side: str, posterior: str, scenario: str, out: str) -> None:
    """Read and evaluate the posterior (``side``: pooled or copies); save peak RSS and the NLL arrays."""
    import nllbench as nb
    from nllbench.measures.evaluate import EvaluationSettings, evaluate_runs
    from nllbench.store import read_scenario

    data = read_scenario(scenario)
    nb.Gaussians(np.zeros((1, 4)), np.eye(4)[None])  # load the compiled factorisation: part of the floor
    floor = peak_rss_mib()
    post = nb.read_posterior(posterior)
    densities = list(post)
    if side == "copies":
        for k, d in enumerate(densities):  # step by step: the pooled step is dropped as its copy is made
            densities[k] = nb.PMBM(d.ppp, d.hypotheses, d.weights)
    del post
    lo, hi = data.attrs["fov_low"], data.attrs["fov_high"]
    (m,) = evaluate_runs(densities, data.truth, data.truth_ids, lo, hi, [EvaluationSettings(qs=(1, 10, 100))])
    peak = peak_rss_mib()
    np.savez(out, **{f"nll_{k}": v for k, v in m.nll.items()}, gospa=m.gospa)
    Path(out + ".json").write_text(json.dumps({"peak_mib": peak, "floor_mib": floor}))


def run_worker(side: str, posterior: Path, scenario: Path, out: str) -> dict:
    cmd = [sys.executable, __file__, "--worker", side, str(posterior), str(scenario), out]
    subprocess.run(cmd, check=True, env=dict(os.environ))
    return json.loads(Path(out + ".json").read_text())


ROOT = Path(__file__).resolve().parents[1]
#: The trees compared by default: before the pooled posterior; the pooled posterior, eager imports.
BASELINES = ("6163711", "3312b58")

#: Runs one nllbench command in this process and writes its peak resident set (VmHWM, MiB) to a file.
RUNNER = """
import sys
from nllbench.cli import main
rc = main(sys.argv[2:])
with open("/proc/self/status") as f:
    hwm = next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))
open(sys.argv[1], "w").write(str(hwm / 1024))
sys.exit(rc)
"""


def tree(commit: str, where: Path) -> Path:
    """The ``src`` directory of ``commit`` of this repository, extracted (git archive) under ``where``."""
    out = where / commit
    if not (out / "src" / "nllbench").is_dir():
        out.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", "--format=tar", commit, "src/nllbench"],
            check=True,
            capture_output=True,
        ).stdout
        tmp = out / "src.tar"
        tmp.write_bytes(archive)
        with tarfile.open(tmp) as tar:
            tar.extractall(out, filter="data")
        tmp.unlink()
    return out / "src"


def command_peak(src: Path, args: list[str], out: Path) -> float:
    """Peak RSS (MiB) of ``nllbench ARGS`` run with the package at ``src``."""
    report = out.with_suffix(".hwm")
    env = {**os.environ, "PYTHONPATH": str(src)}
    subprocess.run(
        [sys.executable, "-c", RUNNER, str(report), *args], check=True, env=env, stdout=subprocess.DEVNULL
    )
    return float(report.read_text())


def same_metrics(a: Path, b: Path) -> str:
    """``"byte for byte"`` if the two metrics files are equal, else which read variables differ."""
    if a.read_bytes() == b.read_bytes():
        return "equal byte for byte"
    import nllbench as nb

    x, y = nb.read_metrics(a), nb.read_metrics(b)
    common = sorted(set(x.variables) & set(y.variables))
    differ = [n for n in common if np.asarray(x[n].values).tobytes() != np.asarray(y[n].values).tobytes()]
    return (
        f"files differ (schema {x.attrs['nllbench_schema_version']} against "
        f"{y.attrs['nllbench_schema_version']}); of the {len(common)} variables both hold, "
        + (f"{len(differ)} differ: {', '.join(differ)}" if differ else "all equal to the bit")
    )


def compare_commands(posterior: Path, scenario: Path, baselines, rounds: int, trees: Path, tmp: Path):
    """Peak RSS of evaluate and filter, this tree against each baseline, interleaved in rounds."""
    sides = {"this tree": ROOT / "src", **{c: tree(c, trees) for c in baselines}}
    commands = {
        "evaluate": lambda o: [
            "evaluate",
            str(posterior),
            str(scenario),
            "-o",
            str(o),
            "--q",
            "1",
            "10",
            "100",
        ],
        "filter": lambda o: ["filter", str(scenario), "--filter", "pmbm", "-o", str(o)],
    }
    for name, args in commands.items():
        for src in sides.values():  # unmeasured: numba compiles into the tree's cache
            command_peak(src, args(tmp / f"warm-{name}.nc"), tmp / f"warm-{name}.nc")
        peaks = {side: [] for side in sides}
        for k in range(rounds):
            order = list(sides) if k % 2 == 0 else list(sides)[::-1]
            for side in order:
                out = tmp / f"{name}-{side.replace(' ', '_')}-{k}.nc"
                peaks[side].append(command_peak(sides[side], args(out), out))
            print(
                f"{name} round {k + 1}: peak RSS "
                + ", ".join(f"{side} {peaks[side][-1]:.0f} MiB" for side in sides)
            )
        new = np.array(peaks["this tree"])
        for side in baselines:
            ratio = np.array(peaks[side]) / new
            print(
                f"{name}: peak RSS {side} / this tree: median {np.median(ratio):.2f}, min {ratio.min():.2f} "
                f"over {rounds} rounds ({side} median {np.median(peaks[side]):.0f} MiB, this tree "
                f"{np.median(new):.0f} MiB)"
            )
            mine, theirs = tmp / f"{name}-this_tree-0.nc", tmp / f"{name}-{side}-0.nc"
            if name == "evaluate":
                print(f"  metrics file against {side}: {same_metrics(mine, theirs)}")
            else:
                same = mine.read_bytes() == theirs.read_bytes()
                print(f"  posterior file against {side}: {'equal' if same else 'differs'} byte for byte")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--posterior", type=Path)
    ap.add_argument("--scenario", type=Path)
    ap.add_argument("--baseline", nargs="*", default=list(BASELINES), help="earlier commits to compare")
    ap.add_argument("--trees", type=Path, help="keep the extracted trees (and their numba caches) here")
    ap.add_argument("--worker", nargs=4, metavar=("SIDE", "POSTERIOR", "SCENARIO", "OUT"))
    args = ap.parse_args()
    if args.worker:
        worker(*args.worker)
        return
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        if (args.posterior is None) != (args.scenario is None):
            ap.error("--posterior and --scenario go together")
        scenario, posterior = (args.scenario, args.posterior) if args.posterior else make_run(tmp)
        h = held_memory(posterior)
        print(
            f"{posterior.name}: {posterior.stat().st_size / MIB:.2f} MiB on disk, {h['steps']} steps, "
            f"{h['hypotheses']} hypotheses holding {h['bernoullis']} Bernoullis, {h['distinct']} distinct"
        )
        print(
            f"held by the read posterior: pooled {h['pooled_mib']:.1f} MiB, copies {h['copies_mib']:.1f} MiB "
            f"(ratio {h['copies_mib'] / h['pooled_mib']:.1f}x)"
        )
        ratios, peaks = [], {"pooled": [], "copies": []}
        floors = []
        for k in range(args.rounds):
            # alternate which side goes first, so that neither always meets the same machine state
            sides = ("copies", "pooled") if k % 2 == 0 else ("pooled", "copies")
            got = {s: run_worker(s, posterior, scenario, str(tmp / f"{s}{k}.npz")) for s in sides}
            for s in sides:
                peaks[s].append(got[s]["peak_mib"])
                floors.append(got[s]["floor_mib"])
            ratios.append(got["copies"]["peak_mib"] / got["pooled"]["peak_mib"])
            print(
                f"round {k + 1}: peak RSS of read + evaluate: copies {got['copies']['peak_mib']:.0f} MiB, "
                f"pooled {got['pooled']['peak_mib']:.0f} MiB, ratio {ratios[-1]:.2f}"
            )
        print(
            f"peak RSS ratio copies / pooled: median {np.median(ratios):.2f}, min {np.min(ratios):.2f} "
            f"over {args.rounds} rounds (pooled median {np.median(peaks['pooled']):.0f} MiB, copies "
            f"{np.median(peaks['copies']):.0f} MiB; the process before reading: {np.median(floors):.0f} MiB)"
        )
        for k in range(args.rounds):
            a, b = np.load(tmp / f"pooled{k}.npz"), np.load(tmp / f"copies{k}.npz")
            same = all(a[n].tobytes() == b[n].tobytes() for n in a.files)
            if not same:
                raise SystemExit(f"round {k + 1}: the NLL arrays of the two sides differ")
        print("values: every NLL and GOSPA array of the two sides equal to the bit")
        if args.baseline:
            trees = args.trees or tmp / "trees"
            compare_commands(posterior, scenario, args.baseline, args.rounds, trees, tmp)


if __name__ == "__main__":
    main()
