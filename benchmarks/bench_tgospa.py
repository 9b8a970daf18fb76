"""Benchmark: exact trajectory GOSPA against the MILP it replaced, per-frame GOSPA, and in frames.

Measured in the same run (both sides interleaved in rounds; the per-round
ratios' median and minimum, the worst round, are printed):

* 1,000 frames x 40 true trajectories (births, deaths, estimated with
  noise, gaps, identity swaps and one-frame false tracks): the solver of
  :mod:`nllbench.measures.tracks._tgospa` against the exact MILP over per-pair
  spans that ``tgospa`` used before (frozen in ``tests/support/_tgospa_reference.py``),
  values compared to 1e-12 relative; and against per-frame GOSPA
  (``nb.gospa`` on every frame of the same scene), the floor a trajectory
  measure cannot beat;
* the time against the number of frames (250 to 4,000; labelled and
  unlabelled estimates) and of true trajectories (10 to 80 at 1,000 frames),
  all sizes of a series interleaved in each round, with the fitted exponent
  (least-squares slope of log time on log size, of the medians and of each
  round) and how the minimum was reached
  (:class:`~nllbench.measures.tracks._tgospa.SolveStats`: conflicts, groups);
  in frames on two scenes: the benchmark's, whose conflicts grow about as
  K^1.6 (it swaps identities of absent objects too: a swap with a dead
  object hands a present one the label the dead truth holds, at no cost, to
  the end of the run, a collision as long as the run), and a fair one (swaps of present objects only,
  objects kept in the box), whose conflicts stay bounded (0 - 115 over 250
  - 4,000 frames): target for it about K^1.3 or less; the old MILP's
  exponent in frames from 250, 500 and 1,000 frames;
* unlabelled estimates (a fresh identity every frame, as a tracks table
  without ``id`` gives): time and memory at 1,000 frames in a fresh process
  (peak resident memory during the call, VmHWM, with the process's before
  it, and the peak allocated during a second call, ``tracemalloc``), and the
  old MILP's at 100 and 200 frames (each child resets its peak first);
* on 8 frames x 4 x 4 trajectories, exhaustive enumeration (a Viterbi over
  every joint assignment, as the tests use) must agree.

Run:  python benchmarks/bench_tgospa.py [--rounds 3] [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import nllbench as nb
from nllbench.measures._sequences import labelled_sequence
from nllbench.measures.tgospa import tgospa
from nllbench.measures.tracks import _tgospa as solver

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "support"))
sys.path.insert(0, str(ROOT / "benchmarks"))
from _tgospa_reference import tgospa as frozen  # noqa: E402
from rounds import overhead, rounds, speedup  # noqa: E402
from tgospa_bruteforce import brute_force, random_case  # noqa: E402

C, P, GAMMA = 2.0, 1.0, 2.0


def scene(K: int, n: int, rng, fair: bool = False):
    """K frames of n trajectories with births/deaths; estimates with swaps, gaps and false tracks.

    The benchmark's scene (``fair=False``): every 17th frame two of the n
    estimated identities are swapped, chosen among all n objects, present or
    not, and the objects fly apart at constant velocities. ``fair=True``: the
    swapped objects are two present in that frame (a tracker confuses objects
    it sees) and the objects stay in the 100 x 100 box (reflected at its
    walls), so that close encounters, and the collisions they cause, come at
    a constant rate per frame.
    """
    start = rng.integers(0, K // 2, n)
    stop = start + rng.integers(K // 3, K, n)
    pos = rng.uniform(0, 100, (n, 2))
    vel = rng.normal(0, 1, (n, 2))
    T, TI, E, EI = [], [], [], []
    labels = np.arange(n) + 1000
    for k in range(K):
        pos = pos + vel
        if fair:  # reflect at the walls of the box
            out = (pos < 0) | (pos > 100)
            pos = np.where(pos < 0, -pos, np.where(pos > 100, 200 - pos, pos))
            vel = np.where(out, -vel, vel)
        alive = np.flatnonzero((start <= k) & (k < stop))
        T.append(pos[alive].copy())
        TI.append(alive)
        if k % 17 == 5 and (not fair or alive.size >= 2):  # swap two estimated identities now and then
            i, j = rng.choice(alive if fair else n, 2, replace=False)
            labels[[i, j]] = labels[[j, i]]
        seen = alive[rng.random(alive.size) < 0.9]
        false = rng.uniform(0, 100, (int(rng.poisson(1.0)), 2))
        E.append(np.concatenate([pos[seen] + rng.normal(0, 0.5, (seen.size, 2)), false]))
        EI.append(np.concatenate([labels[seen], 5000 + 10 * k + np.arange(false.shape[0])]))
    return T, TI, E, EI


def unlabelled(E) -> list:
    """A fresh estimate identity at every frame."""
    return [10_000_000 + 100 * k + np.arange(len(e)) for k, e in enumerate(E)]


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def rng0():
    return np.random.default_rng(0)


def growth(label: str, sizes: list, make, args) -> float:
    """Time against size, all sizes interleaved in each round; the fitted exponent (slope of log time
    on log size) of the per-size medians, and its range over the rounds' own fits."""
    print(f"\ntime against {label} ({args.rounds} interleaved rounds):")
    seqs = {size: make(size) for size in sizes}
    times, _ = rounds(
        {size: (lambda seq=seq: tgospa(*seq, c=C, p=P, gamma=GAMMA)) for size, seq in seqs.items()},
        args.rounds,
    )
    medians = [float(np.median(times[size])) for size in sizes]
    for size, t in zip(sizes, medians, strict=True):
        how = stats(*seqs[size])
        print(
            f"  {size:5d}  median {t:7.3f} s ({1e6 * t / size:6.1f} us each), conflicts {how.conflicts:6d} "
            f"({how.conflicts / size:5.2f} each), groups {len(how.groups)} (largest "
            f"{max(how.groups, default=0)}), price steps {sum(how.price_steps)}, MILP {len(how.milp_groups)}"
        )
    per_round = [slope(sizes, [times[size][r] for size in sizes]) for r in range(args.rounds)]
    exponent = slope(sizes, medians)
    print(f"  fitted exponent {exponent:.2f} (rounds {min(per_round):.2f} to {max(per_round):.2f})")
    return exponent


def slope(sizes, times) -> float:
    return float(np.polyfit(np.log(sizes), np.log(times), 1)[0])


def stats(T, TI, E, EI) -> solver.SolveStats:
    X = labelled_sequence(T, TI, "truth", "truth_ids")
    Y = labelled_sequence(E, EI, "estimates", "estimate_ids", frames=X.frames)
    return solver.exact_assignment(solver.close_entries(X, Y, C, P), GAMMA**P)[1]


def per_frame_gospa(T, E) -> float:
    return sum(nb.gospa(e, t, c=C, p=P).value for t, e in zip(T, E, strict=True))


CHILD = """
import json, sys, time, tracemalloc
import numpy as np
sys.path.insert(0, {bench!r}); sys.path.insert(0, {tests!r})
from bench_tgospa import scene, unlabelled, resident
from {module} import tgospa
T, TI, E, EI = scene({K}, {n}, np.random.default_rng(0))
EI = unlabelled(E)
tgospa(T[:2], TI[:2], E[:2], EI[:2], c={c}, p={p}, gamma={gamma})  # imports, compiled kernels
before = resident(reset=True)
t = time.perf_counter()
r = tgospa(T, TI, E, EI, c={c}, p={p}, gamma={gamma})
seconds = time.perf_counter() - t
peak = resident()
tracemalloc.start()
tgospa(T, TI, E, EI, c={c}, p={p}, gamma={gamma})
traced = tracemalloc.get_traced_memory()[1]
print(json.dumps({{"seconds": seconds, "value": r.value, "before": before, "peak": peak, "traced": traced}}))
"""


def resident(reset: bool = False) -> float:
    """This process's resident memory in MiB: now (after resetting the peak) or its peak since the reset.

    Linux: ``/proc/self/status`` (VmRSS, VmHWM), the peak reset by writing 5 to
    ``/proc/self/clear_refs`` (a process's ``ru_maxrss`` keeps its parent's
    peak from before the fork, so it cannot be used in a child).
    """
    if reset:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    key = "VmRSS:" if reset else "VmHWM:"
    with open("/proc/self/status") as f:
        line = next(x for x in f if x.startswith(key))
    return int(line.split()[1]) / 1024


def in_child(module: str, K: int, n: int) -> dict:
    """Time, resident memory before and at the peak of the call (MiB) and the traced peak (bytes,
    tracemalloc, a second call) of one unlabelled call in a fresh process."""
    code = CHILD.format(
        bench=str(ROOT / "benchmarks"),
        tests=str(ROOT / "tests" / "support"),
        module=module,
        K=K,
        n=n,
        c=C,
        p=P,
        gamma=GAMMA,
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="200 frames for the comparison with the old MILP")
    args = ap.parse_args()
    ok = True
    K, n = (200 if args.quick else 1000), 40
    T, TI, E, EI = scene(K, n, np.random.default_rng(0))
    tgospa(T[:3], TI[:3], E[:3], EI[:3], c=C, p=P, gamma=GAMMA)  # compiled kernels, outside the timings
    nb.gospa(E[0], T[0], c=C, p=P)
    print(
        f"{K} frames x {n} true trajectories ({len(np.unique(np.concatenate(EI)))} estimated), c = {C}, "
        f"p = {P}, gamma = {GAMMA}; {args.rounds} interleaved rounds"
    )
    times, last = rounds(
        {
            "exact (new)": lambda: tgospa(T, TI, E, EI, c=C, p=P, gamma=GAMMA),
            "old MILP": lambda: frozen(T, TI, E, EI, c=C, p=P, gamma=GAMMA),
            "per-frame GOSPA": lambda: per_frame_gospa(T, E),
        },
        args.rounds,
    )
    new, old, floor = times["exact (new)"], times["old MILP"], times["per-frame GOSPA"]
    value, want = last["exact (new)"].value, last["old MILP"].value
    same = abs(value - want) <= 1e-12 * abs(want)
    ok &= same and float(np.median(new)) < 0.5
    for name, t in times.items():
        print(f"  {name:16} median {np.median(t):8.3f} s   worst {max(t):8.3f} s")
    print(f"  speed-up per round, old MILP / new: {speedup(old, new)}")
    print(f"  new / per-frame GOSPA per round: {overhead(new, floor)} (target <= about 20x)")
    print(f"  values equal to 1e-12: {same} (new {value:.9f}, old {want:.9f})")
    print(f"  how: {stats(T, TI, E, EI)}")

    frames = [250, 500, 1000, 2000, 4000]
    growth(
        "frames K, 40 trajectories, the benchmark's scene (swaps of absent objects)",
        frames,
        lambda k: scene(k, n, rng0()),
        args,
    )
    fair = growth(
        "frames K, 40 trajectories, swaps of present objects, objects kept in the box",
        frames,
        lambda k: scene(k, n, rng0(), fair=True),
        args,
    )
    growth(
        "frames K, 40 trajectories, unlabelled estimates",
        frames,
        lambda k: (lambda T, TI, E, EI: (T, TI, E, unlabelled(E)))(*scene(k, n, rng0())),
        args,
    )
    growth("true trajectories n, 1,000 frames", [10, 20, 40, 80], lambda m: scene(1000, m, rng0()), args)
    ok &= fair <= 1.3
    if not args.quick:
        old_sizes = [250, 500]
        old_times = [
            timed(lambda k=k: frozen(*scene(k, n, np.random.default_rng(0)), c=C, p=P, gamma=GAMMA))[0]
            for k in old_sizes
        ]
        old_sizes.append(K)
        old_times.append(float(np.median(old)))
        listed = ", ".join(f"K = {k} {t:.2f} s" for k, t in zip(old_sizes, old_times, strict=True))
        print(f"  old MILP: {listed} (the last from the rounds above): K^{slope(old_sizes, old_times):.2f}")

    print("\nunlabelled estimates (a fresh identity every frame), one call in a fresh process:")
    for module, k in (
        ("nllbench.measures.tgospa", 1000),
        ("_tgospa_reference", 100),
        ("_tgospa_reference", 200),
    ):
        if args.quick and k > 100 and module == "_tgospa_reference":
            continue
        r = in_child(module, k, n)
        name = "exact (new)" if module.startswith("nllbench") else "old MILP"
        print(
            f"  {name:11} K = {k:4d}: {r['seconds']:7.2f} s, peak RSS {r['peak']:5.0f} MiB "
            f"({r['before']:.0f} MiB before the call), allocated in the call "
            f"{r['traced'] / 2**20:6.1f} MiB (tracemalloc), value {r['value']:.6f}"
        )

    small = random_case(np.random.default_rng(3), 8, 4, 4)
    agree = abs(tgospa(*small, c=2.0, p=1, gamma=1.0).value - brute_force(*small, 2.0, 1, 1.0)) < 1e-9
    print(f"\n8 frames x 4 x 4 trajectories: equal to exhaustive enumeration: {agree}")
    return 0 if ok and agree else 1


if __name__ == "__main__":
    sys.exit(main())
