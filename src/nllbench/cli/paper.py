"""The paper's commands: ``example N`` (Examples 1 and 2) and ``theorem1`` (Theorem 1 on random sets)."""

from __future__ import annotations

import argparse
import math
import sys

import numpy as np

from nllbench.cli.common import POSITIVE, checked_outputs
from nllbench.options import MAX_SEED, integer, number


def _example(args: argparse.Namespace) -> int:
    from nllbench.examples import format_example, write_example

    if args.out_dir and len(args.number) != 1:
        raise ValueError("example: --out-dir takes one example number")
    for k, n in enumerate(args.number):
        if k:
            print()
        text = format_example(n)
        print(text)
        if args.out_dir:
            with checked_outputs(("--out-dir", args.out_dir, "the paper's example files")) as (out,):
                write_example(n, out, text)
    return 0


def _theorem1(args: argparse.Namespace) -> int:
    from nllbench.measures.likelihood.theorem1 import theorem1

    if args.dim * math.log(args.size) >= math.log(sys.float_info.max):
        raise ValueError(
            f"--size {args.size:g} with --dim {args.dim}: the field of view's volume size^dim overflows;"
            f" expected size^dim below {sys.float_info.max:.3g}"
        )
    rng = np.random.default_rng(args.seed)
    lo = np.zeros(args.dim)
    hi = np.full(args.dim, args.size)
    worst = 0.0
    print(f"{'trial':>5}{'|X|':>5}{'|Y|':>5}{'NLL (Q=1)':>14}{'RHS':>14}{'difference':>12}")
    for t in range(args.trials):
        X = rng.uniform(lo, hi, (rng.integers(0, args.max_objects + 1), args.dim))
        Y = rng.uniform(lo, hi, (rng.integers(0, args.max_objects + 1), args.dim))
        r = theorem1(X, Y, lo, hi, args.rho, args.scale)
        worst = max(worst, abs(r.difference))
        print(f"{t:5d}{len(X):5d}{len(Y):5d}{r.lhs:14.6f}{r.rhs:14.6f}{r.difference:12.2e}")
    print(f"max |difference| = {worst:.3e}")
    return 0 if worst < 1e-9 else 1


def add_parsers(sub) -> None:
    ex = sub.add_parser(
        "example",
        help="print one of the paper's examples (1 or 2)",
        description="Print the paper's Example N: NLL (Q = 1 and exact), its decomposition, GOSPA, MOTA"
        " and MOTP of both trackers M1 and M2.",
    )
    ex.add_argument("number", type=int, nargs="+", choices=[1, 2], help="example number")
    ex.add_argument("--out-dir", help="also write the trackers' posteriors, truth and table there")
    ex.set_defaults(func=_example)
    th = sub.add_parser(
        "theorem1",
        help="check Theorem 1 (NLL vs GOSPA) on random sets",
        description="Draw random estimate and truth sets X and Y in [0, SIZE]^DIM and print both sides"
        " of Theorem 1 (the NLL at Q = 1 of the PMB built from X, and the GOSPA-type right-hand side);"
        " exit status 1 if they differ by more than 1e-9.",
    )
    th.add_argument("--trials", type=integer(1, 10**6), default=10, help="number of random (X, Y) pairs")
    th.add_argument("--seed", type=integer(0, MAX_SEED), default=0, help="seed of the random sets")
    th.add_argument("--dim", type=integer(1, 10), default=2, help="dimension of the points")
    th.add_argument("--size", type=POSITIVE, default=20.0, help="field of view [0, size]^dim")
    th.add_argument(
        "--max-objects", type=integer(0, 100), default=8, help="largest |X| and |Y| (each drawn in 0..max)"
    )
    th.add_argument(
        "--rho",
        type=number(0, 1, open_low=True, open_high=True),
        default=0.8,
        help="existence probability of the Bernoullis; sets the cut-off c = -2 log(1 - rho)",
    )
    th.add_argument("--scale", type=POSITIVE, default=2.0, help="metric scale: D(x, y) = ||x - y|| / scale")
    th.set_defaults(func=_theorem1)
