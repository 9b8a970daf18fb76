"""Parity of nb.pgospa with the authors' MATLAB ``PGOSPA.m`` run under GNU Octave.

Random multi-Bernoulli pairs (Gaussian Bernoullis in 1 to 3 dimensions, some
existence probabilities exactly 0 or 1, some ground truths of points with
zero covariance, empty sides) go through both implementations; the script
prints the largest absolute and relative differences of the value and, for
alpha = 2, of the four decomposition terms, and exits 1 if any exceeds the
tolerance. Mixtures: the hypothesis-weighted mean of ``computePGOSPAStepPMBM.m``
(yuhsuansia/Extended-object-PMBM-filter-with-blocked-Gibbs-sampling,
``metrics/``) is restated in Octave around ``PGOSPA.m`` (weights
exp(log w - logsumexp(log w)), sum_a w_a d_a and sum_a w_a terms_a) and
compared with nb.pgospa on an MBM.

The authors' code is not part of nllbench: pass the folder holding their
``PGOSPA.m`` and ``assign2D.m`` (a checkout of github.com/yuhsuansia/Probabilistic-GOSPA).

Run:  python scripts/pgospa_octave_parity.py PATH/TO/Probabilistic-GOSPA [--cases 400] [--seed 0]
"""

from __future__ import annotations

import argparse
import itertools
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

import nllbench as nb

TOL = 1e-9  # relative to max(1, |value|): the MATLAB code's SVD square roots against our closed forms


def random_case(rng: np.random.Generator) -> dict:
    """One random pair of multi-Bernoulli densities and parameters (MATLAB's layout: columns are objects)."""
    d = int(rng.integers(1, 4))
    nx, ny = (int(k) for k in rng.integers(0, 6, size=2))
    truth_points = bool(rng.random() < 0.3)
    case = {"d": d, "p": float(rng.choice([1.0, 2.0, 3.0])), "c": float(rng.choice([0.5, 2.0, 5.0]))}
    case["alpha"] = float(rng.choice([2.0, 2.0, 1.0, 0.5]))
    for side, n in (("x", nx), ("y", ny)):
        r = rng.uniform(0.0, 1.0, n)
        r[rng.random(n) < 0.15] = 1.0
        r[rng.random(n) < 0.1] = 0.0
        L = rng.normal(0.0, 0.7, (n, d, d))
        covs = L @ np.swapaxes(L, 1, 2) + 1e-3 * np.eye(d)
        if side == "x" and truth_points:
            r, covs = np.ones(n), np.zeros((n, d, d))
        case[side] = (r, rng.normal(0.0, 2.0, (n, d)), covs, side == "x" and truth_points)
    return case


def ours(case: dict) -> np.ndarray:
    """nb.pgospa's value and four terms for a case."""
    args = []
    for side in ("x", "y"):
        r, means, covs, points = case[side]
        args.append(means if points else nb.MultiBernoulli.gaussian(r, means.reshape(-1, case["d"]), covs))
    res = nb.pgospa(*args, c=case["c"], p=case["p"], alpha=case["alpha"])
    return np.array([res.value, res.localization, res.existence_mismatch, res.missed, res.false])


def matlab_alpha_below_2(case: dict) -> np.ndarray:
    """PGOSPA.m's value for alpha < 2, restated: its assignment minimises the assigned pairs' cost only.

    ``PGOSPA.m`` gives ``assign2D`` the pair costs min(r_i, r_j) d^(c)^p + |r_i - r_j| c^p / alpha
    of a full assignment and then adds r c^p / alpha for the Bernoullis left
    over, so with |x| != |y| and unequal existences it may leave over more
    existence than the minimum does. Returns the values of every assignment
    that minimises those pair costs (several where they tie; ``assign2D``
    picks one).
    """
    (rx, mx, Sx, _), (ry, my, Sy, _) = case["x"], case["y"]
    c, p, alpha = case["c"], case["p"], case["alpha"]
    unit = c**p / alpha
    if rx.size == 0 or ry.size == 0:
        return np.array([(unit * (rx.sum() + ry.sum())) ** (1 / p)])
    W = np.array(
        [[_w2_reference(mx[i], Sx[i], my[j], Sy[j]) for j in range(ry.size)] for i in range(rx.size)]
    )
    cost = (
        np.minimum(rx[:, None], ry[None, :]) * np.minimum(W, c) ** p
        + np.abs(rx[:, None] - ry[None, :]) * unit
    )
    flip = rx.size > ry.size
    C, ra, rb = (cost.T, ry, rx) if flip else (cost, rx, ry)  # rows: the smaller side, all assigned
    options = []
    for cols in itertools.permutations(range(C.shape[1]), C.shape[0]):
        pair_cost = float(C[np.arange(C.shape[0]), list(cols)].sum())
        left = unit * (rb.sum() - rb[list(cols)].sum())
        options.append((pair_cost, (pair_cost + left) ** (1 / p)))
    best = min(o[0] for o in options)
    return np.array([value for pc, value in options if pc <= best + 1e-12 * max(1.0, abs(best))])


def brute_force(case: dict) -> float:
    """The definition's minimum over every partial assignment (clipped W2, c^p / alpha per unit of r)."""
    (rx, mx, Sx, _), (ry, my, Sy, _) = case["x"], case["y"]
    c, p, alpha = case["c"], case["p"], case["alpha"]
    unit = c**p / alpha
    W = np.array(
        [[_w2_reference(mx[i], Sx[i], my[j], Sy[j]) for j in range(ry.size)] for i in range(rx.size)]
    )
    best = np.inf
    for k in range(min(rx.size, ry.size) + 1):
        for rows in itertools.combinations(range(rx.size), k):
            for cols in itertools.permutations(range(ry.size), k):
                total = unit * (rx.sum() - rx[list(rows)].sum() + ry.sum() - ry[list(cols)].sum())
                for i, j in zip(rows, cols, strict=True):
                    total += min(rx[i], ry[j]) * min(W[i, j], c) ** p + abs(rx[i] - ry[j]) * unit
                best = min(best, total)
    return float(best ** (1 / p))


def _w2_reference(m1, S1, m2, S2) -> float:
    """The textbook W2 of two Gaussians, with symmetric square roots by eigendecomposition."""
    w, V = np.linalg.eigh(S2)
    R = (V * np.sqrt(np.maximum(w, 0.0))) @ V.T
    inner = np.linalg.eigvalsh(R @ S1 @ R)
    return float(
        np.sqrt(
            max(
                np.sum((m1 - m2) ** 2)
                + np.trace(S1)
                + np.trace(S2)
                - 2 * np.sqrt(np.maximum(inner, 0)).sum(),
                0.0,
            )
        )
    )


def _mat(a: np.ndarray) -> str:
    """An Octave literal for an array of two or more dimensions (column-major values, then reshape)."""
    a = np.asarray(a, dtype=float)
    vals = " ".join(f"{x:.17g}" for x in a.ravel(order="F"))
    return f"reshape([{vals}], [{' '.join(str(s) for s in a.shape)}])"


def _octave_call(case: dict) -> str:
    """The Octave statements computing one case with PGOSPA.m and printing five numbers."""
    args = []
    for side in ("x", "y"):
        r, means, covs, _ = case[side]
        d, n = case["d"], r.size
        args += [_mat(r.reshape(1, n)), _mat(means.T.reshape(d, n)), _mat(np.transpose(covs, (1, 2, 0)))]
    return (
        f"try\n[dd, dc] = PGOSPA({', '.join(args)}, {case['p']!r}, {case['c']!r}, {case['alpha']!r});\n"
        "printf('%.17g %.17g %.17g %.17g %.17g\\n', dd, dc.localisation, dc.existence_mismatch, "
        "dc.missed, dc.false);\ncatch err\n"
        "printf('NaN NaN NaN NaN NaN %s\\n', strrep(err.message, ' ', '_'));\n"
        "end\n"
    )


def _octave_mixture_call(truth: np.ndarray, hyps: list, logw: np.ndarray, p: float, c: float) -> str:
    """computePGOSPAStepPMBM.m's weighted mean over hypotheses, restated around PGOSPA.m."""
    d, n = truth.shape[1], truth.shape[0]
    lines = [
        f"logw = {_mat(logw.reshape(1, -1))}; m = max(logw); w = exp(logw - (m + log(sum(exp(logw - m)))));",
        "acc = zeros(1, 5);",
    ]
    for a, (r, means, covs) in enumerate(hyps):
        k = r.size
        lines.append(
            f"[dd, dc] = PGOSPA(ones(1, {n}), {_mat(truth.T.reshape(d, n))}, zeros({d}, {d}, {n}), "
            f"{_mat(r.reshape(1, k))}, {_mat(means.T.reshape(d, k))}, {_mat(np.transpose(covs, (1, 2, 0)))}, "
            f"{p!r}, {c!r}, 2);"
        )
        lines.append(
            f"acc = acc + w({a + 1}) * [dd, dc.localisation, dc.existence_mismatch, dc.missed, dc.false];"
        )
    lines.append("printf('%.17g %.17g %.17g %.17g %.17g\\n', acc);")
    return "\n".join(lines) + "\n"


def run_octave(repo: Path, calls: list[str]) -> np.ndarray:
    """Run the Octave statements (one printed row each) with the authors' folder on the path."""
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "parity_cases.m"
        script.write_text(
            f"addpath('{repo.resolve()}');\nwarning('off', 'all');\nformat long;\n" + "".join(calls)
        )
        out = subprocess.run(
            ["octave-cli", "--no-gui", "--quiet", "--no-init-file", str(script)],
            capture_output=True,
            text=True,
            check=False,
        )
    if out.returncode != 0:
        raise RuntimeError(f"octave failed ({out.returncode}): {out.stderr[-2000:]}")
    rows = [line.split() for line in out.stdout.splitlines() if line.strip()]
    errors = [" ".join(row[5:]).replace("_", " ") for row in rows if len(row) > 5]
    return np.array([row[:5] for row in rows], dtype=float), errors


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("repo", type=Path, help="folder holding the authors' PGOSPA.m and assign2D.m")
    ap.add_argument("--cases", type=int, default=400, help="random multi-Bernoulli pairs")
    ap.add_argument("--mixtures", type=int, default=50, help="random truth / MBM pairs")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    if shutil.which("octave-cli") is None:
        print("octave-cli not found (apt-get install octave)", file=sys.stderr)
        return 2
    if not (args.repo / "PGOSPA.m").is_file() or not (args.repo / "assign2D.m").is_file():
        print(f"{args.repo}: expected PGOSPA.m and assign2D.m there", file=sys.stderr)
        return 2
    rng = np.random.default_rng(args.seed)
    cases = [random_case(rng) for _ in range(args.cases)]
    theirs, errors = run_octave(args.repo, [_octave_call(cs) for cs in cases])
    mine = np.array([ours(cs) for cs in cases])
    failed = np.isnan(theirs[:, 0])
    if failed.any():
        shapes = sorted(
            {
                (cs["x"][0].size, cs["y"][0].size, cs["alpha"])
                for cs, f in zip(cases, failed, strict=True)
                if f
            }
        )
        print(
            f"PGOSPA.m raised an error on {failed.sum()} cases, (|x|, |y|, alpha) in {shapes}: {set(errors)}"
        )
        closed = np.array(
            [
                cs["c"] ** cs["p"] / cs["alpha"] * cs["y"][0].sum()
                for cs, f in zip(cases, failed, strict=True)
                if f
            ]
        )
        gap = np.abs(mine[failed, 4] - closed).max() if closed.size else 0.0
        print(f"  there ours gives the closed form (c^p / alpha) sum r_y as false: max difference {gap:.3g}")
        ok_failed = gap <= TOL * max(1.0, float(np.abs(closed).max(initial=0.0)))
        cases = [cs for cs, f in zip(cases, failed, strict=True) if not f]
        theirs, mine = theirs[~failed], mine[~failed]
    else:
        ok_failed = True
    alpha2 = np.array([cs["alpha"] == 2.0 for cs in cases])
    # with an r = 0 on both sides of a possible pair, pairing it or not costs the same: the split is a tie
    untied = np.array([not (np.any(cs["x"][0] == 0) or np.any(cs["y"][0] == 0)) for cs in cases])
    scale = np.maximum(1.0, np.abs(theirs[:, :1]))
    diff = np.abs(mine - theirs) / scale
    ok = bool(ok_failed)
    print(
        f"{len(cases)} random cases compared (seed {args.seed}; {alpha2.sum()} with alpha = 2, "
        f"{untied.sum()} without r = 0)"
    )
    sizes = np.array([cs["x"][0].size != cs["y"][0].size for cs in cases])
    same = alpha2 | ~sizes
    print(
        f"  value (alpha = 2, or |x| = |y|; {same.sum()}): max |ours - PGOSPA.m| / max(1, value) = "
        f"{diff[same, 0].max():.3g}"
    )
    ok &= diff[same, 0].max() <= TOL
    other = np.flatnonzero(~same)
    if other.size:
        excess = theirs[other, 0] - mine[other, 0]
        restated = np.array(
            [np.min(np.abs(matlab_alpha_below_2(cases[i]) - theirs[i, 0])) for i in other]
        )  # their value against the nearest of the tied restatements
        brute = np.array([brute_force(cases[i]) for i in other])
        print(
            f"  value (alpha < 2, |x| != |y|; {other.size}): PGOSPA.m - ours in "
            f"[{excess.min():.3g}, {excess.max():.3g}], {np.sum(excess > TOL)} cases above;\n"
            f"    PGOSPA.m's assignment restated in Python: max difference "
            f"{restated.max():.3g}; brute force - ours: max "
            f"{np.abs(brute - mine[other, 0]).max():.3g}"
        )
        ok &= bool(np.all(excess >= -TOL)) and restated.max() <= TOL
        ok &= np.abs(brute - mine[other, 0]).max() <= TOL
    sel = alpha2 & untied
    names = ("localisation", "existence mismatch", "missed", "false")
    for t, name in enumerate(names, start=1):
        print(
            f"  {name} (alpha = 2, no r = 0; {sel.sum()}): max relative difference {diff[sel, t].max():.3g}"
        )
        ok &= diff[sel, t].max() <= TOL
    sel = alpha2 & ~untied
    total = np.abs(mine[sel, 1:].sum(axis=1) - theirs[sel, 1:].sum(axis=1)) / scale[sel, 0]
    print(
        f"  sum of the terms (alpha = 2, with r = 0 ties; {sel.sum()}): "
        f"max relative difference {total.max():.3g}"
    )
    ok &= total.max() <= TOL

    calls, mixtures = [], []
    for _ in range(args.mixtures):
        d = 2
        truth = rng.normal(0.0, 2.0, (int(rng.integers(1, 5)), d))  # PGOSPA.m fails on an empty x
        hyps = []
        for _ in range(int(rng.integers(1, 5))):
            k = int(rng.integers(0, 5))
            L = rng.normal(0.0, 0.7, (k, d, d))
            hyps.append(
                (
                    rng.uniform(0.05, 1.0, k),
                    rng.normal(0.0, 2.0, (k, d)),
                    L @ np.swapaxes(L, 1, 2) + 0.01 * np.eye(d),
                )
            )
        logw = rng.normal(0.0, 1.0, len(hyps))
        p, c = float(rng.choice([1.0, 2.0])), float(rng.choice([1.0, 3.0]))
        calls.append(_octave_mixture_call(truth, hyps, logw, p, c))
        w = np.exp(logw - logw.max())
        mbm = nb.MBM([nb.MultiBernoulli.gaussian(*h) for h in hyps], w / w.sum())
        res = nb.pgospa(truth, mbm, c=c, p=p)
        mixtures.append([res.value, res.localization, res.existence_mismatch, res.missed, res.false])
    theirs, errors = run_octave(args.repo, calls)
    if errors:
        print(f"PGOSPA.m raised an error on {len(errors)} mixture cases: {set(errors)}")
        return 1
    mdiff = np.abs(np.array(mixtures) - theirs) / np.maximum(1.0, np.abs(theirs[:, :1]))
    print(f"{args.mixtures} truth / MBM pairs (1 to 4 hypotheses), hypothesis-weighted means:")
    print(f"  value and the four terms: max relative difference {mdiff.max():.3g}")
    ok &= mdiff.max() <= TOL
    print("PASS" if ok else f"FAIL (tolerance {TOL:g})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
