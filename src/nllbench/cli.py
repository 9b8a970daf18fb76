"""The ``nllbench`` command line.

Subcommands
-----------
example N     print the paper's Example N (1 or 2): NLL, its decomposition,
              GOSPA, MOTA and MOTP for both trackers.
theorem1      check Theorem 1 on random sets and print both sides.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np


def _example(args: argparse.Namespace) -> int:
    from nllbench.examples import format_example

    for k, number in enumerate(args.number):
        if k:
            print()
        print(format_example(number))
    return 0


def _theorem1(args: argparse.Namespace) -> int:
    from nllbench.theorem1 import theorem1

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


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="nllbench", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    ex = sub.add_parser("example", help="print one of the paper's examples (1 or 2)")
    ex.add_argument("number", type=int, nargs="+", choices=[1, 2], help="example number")
    ex.set_defaults(func=_example)
    th = sub.add_parser("theorem1", help="check Theorem 1 (NLL vs GOSPA) on random sets")
    th.add_argument("--trials", type=int, default=10)
    th.add_argument("--seed", type=int, default=0)
    th.add_argument("--dim", type=int, default=2)
    th.add_argument("--size", type=float, default=20.0, help="field of view [0, size]^dim")
    th.add_argument("--max-objects", type=int, default=8)
    th.add_argument("--rho", type=float, default=0.8)
    th.add_argument("--scale", type=float, default=2.0)
    th.set_defaults(func=_theorem1)
    return p


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (ValueError, TypeError, OSError) as exc:
        print(f"nllbench {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
