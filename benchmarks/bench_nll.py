"""Benchmark: nb.nll on a PMBM (H = 100, m = 60, n = 20, Q = 100) against a baseline.

The baseline computes the same per-hypothesis Q-best NLL (paper eq. (9)) with
a straightforward Murty that re-solves a masked copy of the cost matrix with
scipy's linear_sum_assignment at every node (benchmarks/baseline_murty.py).
Both are timed in the same run, interleaved in rounds (each once per
round); the script prints the median and worst (min) per-round ratio,
checks that the values are identical, and shows how nb.nll's time grows
with Q, n and H (best of three calls per size; no ratio).

Run:  python benchmarks/bench_nll.py [--quick] [--rounds 3]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np
from scipy.special import logsumexp

import nllbench as nb
from nllbench.engine.nll import association_problem

sys.path.insert(0, str(Path(__file__).parent))
from baseline_murty import murty_baseline  # noqa: E402
from rounds import rounds, speedup  # noqa: E402


def scene(H, m, n, rng, sure=0.0):
    """A PMBM posterior around n true objects in a 300 x 300 field of view.

    Each hypothesis perturbs a shared track set: the first n Bernoullis sit
    near the objects (with hypothesis-dependent jitter and existence), the
    rest are clutter-born tracks spread over the scene. ``sure`` is the
    share of Bernoullis with r = 1 (as after a detection update).
    """
    truth = rng.uniform(0, 300, (n, 2))
    base = np.concatenate([truth, rng.uniform(0, 300, (max(m - n, 0), 2))])[:m]
    hyps = []
    for _ in range(H):
        means = base + rng.normal(0, 1.5, base.shape)
        r = rng.uniform(0.05, 0.95, m)
        r[rng.random(m) < sure] = 1.0
        s = rng.uniform(1.0, 4.0, m)
        covs = s[:, None, None] * np.eye(2)
        hyps.append(nb.MultiBernoulli.gaussian(r, means, covs))
    w = rng.dirichlet(np.ones(H))
    ppp = nb.PPP.uniform(3.0, [0, 0], [300, 300]) + nb.PPP.gaussian([0.5], [[150, 150]], [np.eye(2) * 1e4])
    return nb.PMBM(ppp, hyps, w), truth


def baseline_nll(f, y, q):
    log_lam = f.ppp.log_intensity(y)
    terms = []
    for w, mb in zip(f.weights, f.hypotheses, strict=True):
        prob = association_problem(mb, y, log_lam, f.ppp.total_rate)
        costs = murty_baseline(prob.cost, q)
        terms.append(math.log(w) - prob.base - costs)
    return -float(logsumexp(np.concatenate(terms)))


def slope(points):
    """Least-squares slope of log(time) against log(size): the measured scaling exponent."""
    x = np.log([p[0] for p in points])
    y = np.log([p[1] for p in points])
    return float(np.polyfit(x, y, 1)[0])


def timed(fn, repeat=3):
    best = math.inf
    out = None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="H = 10 for the headline comparison")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds of the headline comparison")
    args = ap.parse_args()
    rng = np.random.default_rng(2021)
    H = 10 if args.quick else 100
    m, n, Q = 60, 20, 100
    f, y = scene(H, m, n, rng)
    nb.nll(f, y[:2], q=2)  # JIT compilation outside the timings

    times, last = rounds(
        {"nb.nll": lambda: nb.nll(f, y, q=Q), "baseline": lambda: baseline_nll(f, y, Q)}, args.rounds
    )
    ours, base = last["nb.nll"], last["baseline"]
    same = abs(ours.value - base) <= 1e-9 * max(1.0, abs(base))
    print(f"PMBM H={H}, m={m}, n={n}, Q={Q}; {args.rounds} interleaved rounds (median time)")
    print(f"  nb.nll              {np.median(times['nb.nll']) * 1e3:10.1f} ms   NLL = {ours.value:.12f}")
    print(f"  baseline (LSA/node) {np.median(times['baseline']) * 1e3:10.1f} ms   NLL = {base:.12f}")
    print(f"  speed-up per round  {speedup(times['baseline'], times['nb.nll'])} (target >= 150)")
    print(f"  values identical: {same}")

    print("\nnb.nll time vs Q (H=10, m=60, n=20)")
    f10, y10 = scene(10, 60, 20, rng)
    times = []
    for q in (1, 10, 100, 1000):
        t, r = timed(lambda q=q: nb.nll(f10, y10, q=q))
        times.append((q, t))
        print(f"  Q={q:5d} {t * 1e3:9.2f} ms   NLL={r.value:.6f}  [{r.lower:.6f}, {r.upper:.6f}]")
    print(f"  fitted exponent Q^{slope(times[1:]):.2f} (Q >= 10)")
    print("\nnb.nll time vs n (H=10, m=3n, Q=100)")
    times = []
    for nn in (5, 10, 20, 40, 80):
        fn_, yn = scene(10, 3 * nn, nn, rng)
        t, _ = timed(lambda fn_=fn_, yn=yn: nb.nll(fn_, yn, q=100))
        times.append((nn, t))
        print(f"  n={nn:3d} {t * 1e3:9.2f} ms")
    print(f"  fitted exponent n^{slope(times[2:]):.2f} (n >= 20, m = 3n)")
    print("\nnb.nll time vs m (H=10, n=20, Q=100)")
    times = []
    for mm in (20, 40, 80, 160):
        fm, ym = scene(10, mm, 20, rng)
        t, _ = timed(lambda fm=fm, ym=ym: nb.nll(fm, ym, q=100))
        times.append((mm, t))
        print(f"  m={mm:3d} {t * 1e3:9.2f} ms")
    print(f"  fitted exponent m^{slope(times):.2f} (n = 20)")
    print("\nnb.nll time vs H (m=60, n=20, Q=100)")
    times = []
    for hh in (1, 10, 100):
        fh, yh = scene(hh, 60, 20, rng)
        t, _ = timed(lambda fh=fh, yh=yh: nb.nll(fh, yh, q=100))
        times.append((hh, t))
        print(f"  H={hh:4d} {t * 1e3:9.2f} ms   ({t / hh * 1e3:.2f} ms per hypothesis)")
    print(f"  fitted exponent H^{slope(times):.2f}")
    print("\nwith r = 1 Bernoullis (30% sure; the baseline cannot express them)")
    fs, ys = scene(10, 60, 20, rng, sure=0.3)
    t, r = timed(lambda: nb.nll(fs, ys, q=100))
    print(f"  H=10 Q=100 {t * 1e3:9.2f} ms   NLL={r.value:.6f}")
    print("\nglobal budget (extension): Q best (hypothesis, association) pairs overall")
    t, r = timed(lambda: nb.nll(f10, y10, q=100, budget="global"))
    print(f"  H=10 Q=100 {t * 1e3:9.2f} ms   NLL={r.value:.6f}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
