"""Benchmark: the set energy score of a 40-object PMBM, 1,000 samples per frame, against a dense baseline.

* Scene: a PMBM in the 4-D constant-velocity state of the scenarios
  (position, velocity), 40 tracks spread over a 300 x 300 field with
  existence probabilities in [0.5, 1] (three r = 1 per hypothesis), 10
  global hypotheses that perturb the means, and a PPP of undetected
  objects (a wide Gaussian and a uniform box): about 32,000 sampled points.
* nb.energy_score: the sample-pair kernel sums over a cell grid of side
  sqrt(2 log(1 / kernel_tol)) (default kernel_tol = 1e-16), compiled, with a
  vectorised exp.
* Baseline, in rounds: the same compiled kernel with the grid switched off
  (every point pair visited, every term kept), then the same estimator:
  what the cell grid saves.
* Reference, once (for the first kernel): the Gram matrix of all points
  computed densely with numpy (blocks of rows, squared distances by BLAS on
  centred coordinates, ``np.exp``), reduced to the N x N sample-pair sums
  with ``np.add.reduceat``: an independent check of the value and the
  plain-numpy cost.

Both sides run on the same samples (the samples-only entry point),
interleaved in rounds; the script prints each time, the median and the
worst (min) of the per-round ratios baseline / nb.energy_score, the peak
memory of each call (tracemalloc: numpy allocations; the compiled kernels
allocate only two buffers of one cell's size), the sampling time, and checks
that the values agree within the reported truncation bound. BLAS runs on one
thread (the machine is shared; the compiled code is single-threaded too).

Run:  python benchmarks/bench_scores.py [--rounds 3] [--samples 1000]
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")

import argparse  # noqa: E402
import resource  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402

import numpy as np  # noqa: E402

import nllbench as nb  # noqa: E402
from nllbench.measures._set_kernel import block_gram, cross_sums  # noqa: E402
from nllbench.measures.proper import UNDERFLOW_CUT2, whiten  # noqa: E402


def scene(seed: int = 1, m: int = 40, hyps: int = 10) -> nb.PMBM:
    rng = np.random.default_rng(seed)
    means = np.column_stack([rng.uniform(0, 300, (m, 2)), rng.normal(0, 1, (m, 2))])
    covs = np.array([np.diag([1.0, 1.0, 0.1, 0.1]) * rng.uniform(0.5, 2) for _ in range(m)])
    hypotheses = []
    for _ in range(hyps):
        r = rng.uniform(0.5, 1.0, m)
        r[rng.integers(0, m, 3)] = 1.0
        hypotheses.append(nb.MultiBernoulli.gaussian(r, means + rng.normal(0, 0.3, means.shape), covs))
    ppp = nb.PPP.gaussian([0.5], [[150.0, 150.0, 0.0, 0.0]], [np.diag([150.0**2, 150.0**2, 1.0, 1.0])])
    ppp = ppp + nb.PPP.uniform(1.0, [0.0, 0.0, -5.0, -5.0], [300.0, 300.0, 5.0, 5.0])
    return nb.PMBM(ppp, tuple(hypotheses), np.full(hyps, 1.0 / hyps))


def _estimate(S: np.ndarray, to_y: np.ndarray, yy: float) -> float:
    """(1/N) sum_i ||Phi(X_i) - Phi(Y)|| - 1/(2N(N-1)) sum_{i != j} ||Phi(X_i) - Phi(X_j)|| from the sums."""
    N = S.shape[0]
    diag = np.diag(S)
    a = np.sqrt(np.maximum(diag + yy - 2.0 * to_y, 0.0))
    D = np.sqrt(np.maximum(diag[:, None] + diag[None, :] - 2.0 * S, 0.0))
    np.fill_diagonal(D, 0.0)
    return float(a.mean() - D.sum() / (2 * N * (N - 1)))


def dense_compiled(samples: nb.SetSamples, truth: np.ndarray, R: np.ndarray) -> float:
    """The estimator with the compiled kernel visiting every pair (no grid, no term skipped)."""
    u, w = whiten(samples.points, R), whiten(truth, R)
    S = block_gram(u, samples.offsets, UNDERFLOW_CUT2, grid=False)
    to_y = cross_sums(u, samples.offsets, w)
    yy = float(cross_sums(w, np.array([0, w.shape[0]]), w)[0])
    return _estimate(S, to_y, yy)


def dense_numpy(samples: nb.SetSamples, truth: np.ndarray, R: np.ndarray, block: int = 256) -> float:
    """The estimator with every kernel term, from a dense numpy Gram reduced by sample blocks."""
    u, w = whiten(samples.points, R), whiten(truth, R)
    centre = u.mean(axis=0)  # centred: the BLAS expansion ||a||^2 + ||b||^2 - 2 a.b loses less
    u, w = u - centre, w - centre
    N, T = len(samples), u.shape[0]
    starts = samples.offsets[:-1]
    nonempty = samples.counts > 0
    sq = (u**2).sum(axis=1)
    S = np.zeros((N, N))
    for lo in range(0, T, block):
        hi = min(lo + block, T)
        d2 = np.maximum(sq[lo:hi, None] + sq[None, :] - 2.0 * u[lo:hi] @ u.T, 0.0)
        K = np.exp(-0.5 * d2)
        cols = np.zeros((hi - lo, N))
        cols[:, nonempty] = np.add.reduceat(K, starts[nonempty], axis=1)
        owner = np.searchsorted(samples.offsets, np.arange(lo, hi), side="right") - 1
        np.add.at(S, owner, cols)
    kxy = np.exp(-0.5 * ((u[:, None, :] - w[None, :, :]) ** 2).sum(axis=2)).sum(axis=1)  # (T,)
    to_y = np.zeros(N)
    to_y[nonempty] = np.add.reduceat(kxy, starts[nonempty])
    yy = float(np.exp(-0.5 * ((w[:, None, :] - w[None, :, :]) ** 2).sum(axis=2)).sum())
    return _estimate(S, to_y, yy)


def timed(fn):
    tracemalloc.start()
    t = time.perf_counter()
    out = fn()
    elapsed = time.perf_counter() - t
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return elapsed, peak, out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--samples", type=int, default=1000)
    ap.add_argument("--no-numpy", action="store_true", help="skip the plain numpy reference (about 15-60 s)")
    args = ap.parse_args()
    pmbm = scene()
    truth = np.vstack([h.means[:35] for h in pmbm.hypotheses[:1]])
    samples = nb.sample(pmbm, args.samples, seed=0)
    print(
        f"PMBM: {len(pmbm.hypotheses[0])} tracks x {len(pmbm.hypotheses)} hypotheses + PPP, d = 4; "
        f"{len(samples)} samples, {samples.points.shape[0]} points; truth {truth.shape[0]} objects"
    )
    t_sample = min(timed(lambda: nb.sample(pmbm, args.samples, seed=0))[0] for _ in range(3))
    print(f"sampling 1,000 sets: {t_sample * 1e3:.1f} ms (best of 3)")
    nb.energy_score(samples, truth, 1.0)  # compile outside the timings
    dense_compiled(nb.SetSamples.from_sets(samples.as_list()[:3]), truth, np.eye(4))
    ok = True
    for label, R in (
        ("R = I (kernel sd 1)", np.eye(4)),
        ("R = diag(4, 4, 1, 1)", np.diag([4.0, 4.0, 1.0, 1.0])),
        ("R = 25 I (kernel sd 5)", 25.0 * np.eye(4)),
    ):
        ratios, t_main, t_base = [], [], []
        for _ in range(args.rounds):
            tm, peak_m, res = timed(lambda R=R: nb.energy_score(samples, truth, R))
            tb, peak_b, base = timed(lambda R=R: dense_compiled(samples, truth, R))
            t_main.append(tm)
            t_base.append(tb)
            ratios.append(tb / tm)
        full = min(
            timed(lambda R=R: nb.energy_score(pmbm, truth, R, n_samples=args.samples))[0] for _ in range(2)
        )
        agree = abs(res.value - base) <= res.truncation_bound + 1e-12 * max(1.0, abs(base))
        mib_m, mib_b = peak_m / 2**20, peak_b / 2**20
        print(f"\n{label}: ES = {res.value:.6f} +- {res.standard_error:.6f}")
        print(f"  truncation bound {res.truncation_bound:.1e}")
        print(f"  nb.energy_score (samples) median {statistics.median(t_main):7.3f} s  peak {mib_m:6.1f} MiB")
        print(f"  compiled dense baseline   median {statistics.median(t_base):7.3f} s  peak {mib_b:6.1f} MiB")
        print(f"  ratio baseline / ours     median {statistics.median(ratios):6.1f}  min {min(ratios):6.1f}")
        print(f"  from the density (sampling included): {full:.3f} s (best of 2; target < 1 s)")
        print(f"  values agree within the truncation bound: {agree} (|diff| = {abs(res.value - base):.1e})")
        ok &= agree
        if label.startswith("R = I") and not args.no_numpy:
            tn, peak_n, ref = timed(lambda R=R: dense_numpy(samples, truth, R))
            agree_n = abs(res.value - ref) <= res.truncation_bound + 1e-9 * max(1.0, abs(ref))
            print(f"  numpy dense Gram (once) {tn:.1f} s, peak {peak_n / 2**20:.0f} MiB, agrees: {agree_n}")
            ok &= agree_n
    print(f"\nprocess peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
