"""Benchmark: nb.gospa and nb.ospa at n = m = 1000 against their floor and against Stone Soup.

* Floor: a bare ``scipy.optimize.linear_sum_assignment`` on the same cost
  matrix min(d, c)^p, already built. nb.gospa should stay within 1.5x of it
  (it also builds the matrix with ``scipy.spatial.distance.cdist``).
* Peer: Stone Soup's ``GOSPAMetric.compute_gospa_metric`` (stonesoup 1.9.1)
  on the same points as ``State`` objects (building the States is not timed).

All sides are timed in this run, interleaved in rounds (each once per
round); the script prints the median and worst per-round ratio and checks
that the values agree.

Run:  python benchmarks/bench_gospa.py [--n 1000] [--peer-n 1000] [--rounds 20] [--peer-rounds 3]
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np
from scipy.optimize import linear_sum_assignment
from scipy.spatial.distance import cdist

import nllbench as nb
from nllbench.measures.metrics import ospa

sys.path.insert(0, str(Path(__file__).parent))
from rounds import overhead, rounds, speedup  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1000, help="points per set for the floor comparison")
    ap.add_argument("--peer-n", type=int, default=1000, help="points per set for the Stone Soup comparison")
    ap.add_argument("--rounds", type=int, default=20, help="interleaved rounds against the floor")
    ap.add_argument("--peer-rounds", type=int, default=3, help="interleaved rounds against Stone Soup")
    args = ap.parse_args()
    rng = np.random.default_rng(2017)
    c, p = 10.0, 2.0
    ok = True

    n = args.n
    # objects in a 300 x 300 field, estimates near most of them plus clutter
    Y = rng.uniform(0, 300, (n, 2))
    X = np.concatenate(
        [Y[: int(0.9 * n)] + rng.normal(0, 2, (int(0.9 * n), 2)), rng.uniform(0, 300, (n - int(0.9 * n), 2))]
    )
    cost = np.minimum(cdist(X, Y), c) ** p
    nb.gospa(X[:5], Y[:5], c=c, p=p)
    times, _ = rounds(
        {
            "lsa": lambda: linear_sum_assignment(cost),
            "gospa": lambda: nb.gospa(X, Y, c=c, p=p),
            "ospa": lambda: ospa(X, Y, c=c, p=p),
        },
        args.rounds,
    )
    print(f"n = m = {n}, c = {c}, p = {p}; {args.rounds} interleaved rounds (median time)")
    print(f"  bare linear_sum_assignment {np.median(times['lsa']) * 1e3:9.1f} ms")
    print(
        f"  nb.gospa                   {np.median(times['gospa']) * 1e3:9.1f} ms   "
        f"to the floor: {overhead(times['gospa'], times['lsa'])} (target median <= 1.5)"
    )
    print(
        f"  nb.ospa                    {np.median(times['ospa']) * 1e3:9.1f} ms   "
        f"to the floor: {overhead(times['ospa'], times['lsa'])}"
    )
    ok &= float(np.median(np.array(times["gospa"]) / times["lsa"])) <= 1.5

    try:
        from stonesoup.measures import Euclidean
        from stonesoup.metricgenerator.ospametric import GOSPAMetric
        from stonesoup.types.state import State
    except ImportError:
        print("\nStone Soup not installed (pip install -e '.[crosscheck]'): peer comparison skipped")
        return 0 if ok else 1
    m = args.peer_n
    Xp, Yp = X[:m], Y[:m]
    sx = [State(x.reshape(-1, 1)) for x in Xp]
    sy = [State(y.reshape(-1, 1)) for y in Yp]
    metric = GOSPAMetric(c=c, p=p, measure=Euclidean())
    times, last = rounds(
        {"peer": lambda: metric.compute_gospa_metric(sx, sy), "ours": lambda: nb.gospa(Xp, Yp, c=c, p=p)},
        args.peer_rounds,
    )
    ref, ours = last["peer"][0], last["ours"]
    ref_value = float(ref.value["distance"])
    same = math.isclose(ref_value, ours.value, rel_tol=1e-9)
    print(f"\nStone Soup GOSPAMetric, n = m = {m}; {args.peer_rounds} interleaved rounds (median time)")
    print(f"  Stone Soup {np.median(times['peer']) * 1e3:10.1f} ms   GOSPA {ref_value:.9f}")
    print(f"  nb.gospa   {np.median(times['ours']) * 1e3:10.1f} ms   GOSPA {ours.value:.9f}")
    print(f"  speed-up per round: {speedup(times['peer'], times['ours'])} (target >= 500)")
    print(f"  values agree: {same}")
    ok &= same and float(np.min(np.array(times["peer"]) / times["ours"])) >= 500
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
