"""nllbench's Octave k-best 2-D assignment (scripts/octave/kbest2dassign.m) against nb.murty.

The published trajectory filters call ``kBest2DAssign`` (Tracker Component
Library, distributed only as MEX files in their repository);
``scripts/tpmbm_octave_parity.py`` runs them with nllbench's own Octave
implementation instead. Here it must rank the same assignments as the
engine's Murty on random rectangular matrices with forbidden cells, in both
orientations (more rows than columns is solved transposed), and return fewer
than k when fewer exist. Skipped without Octave.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import nllbench as nb

OCTAVE_DIR = Path(__file__).resolve().parents[2] / "scripts" / "octave"

pytestmark = pytest.mark.skipif(shutil.which("octave-cli") is None, reason="octave-cli not installed")


def _mat(a: np.ndarray) -> str:
    vals = " ".join("Inf" if np.isinf(x) else f"{x:.17g}" for x in a.ravel(order="F"))
    return f"reshape([{vals}], [{a.shape[0]} {a.shape[1]}])"


def _cases(seed: int, count: int) -> list[tuple[np.ndarray, int]]:
    rng = np.random.default_rng(seed)
    cases = []
    for _ in range(count):
        n, m = (int(x) for x in rng.integers(1, 7, size=2))
        C = rng.normal(0.0, 3.0, (n, m))
        C[rng.random((n, m)) < 0.3] = np.inf
        cases.append((C, int(rng.integers(1, 30))))
    return cases


def _octave(cases) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """(col4row (n, found), row4col (m, found), gain (found,)) of kbest2dassign per case."""
    lines = [f"addpath('{OCTAVE_DIR}');"]
    for C, k in cases:
        lines.append(
            f"[a, b, g] = kbest2dassign({_mat(C)}, {k});\n"
            "printf('%d %d %d\\n', size(a, 2), numel(g), numel(a)); printf('%d ', a); printf('\\n');"
            "printf('%d ', b); printf('\\n'); printf('%.17g ', g); printf('\\n');"
        )
    out = subprocess.run(
        ["octave-cli", "--no-gui", "--quiet", "--no-init-file", "--eval", "\n".join(lines)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    rows = out.stdout.split("\n")
    res = []
    for i, (C, _) in enumerate(cases):
        n, m = C.shape
        found, ng, _ = (int(x) for x in rows[4 * i].split())
        a = np.array(rows[4 * i + 1].split(), dtype=np.int64).reshape(found, n).T if found else None
        b = np.array(rows[4 * i + 2].split(), dtype=np.int64).reshape(found, m).T if found else None
        g = np.array(rows[4 * i + 3].split(), dtype=float)[:ng]
        res.append((a, b, g))
    return res


def _reference(C: np.ndarray, k: int) -> tuple[np.ndarray, list[tuple]]:
    """nb.murty's costs and assignments as (row, column) pairs, on the side with fewer rows."""
    flip = C.shape[0] > C.shape[1]
    A = C.T if flip else C
    if not np.isfinite(A).any(axis=1).all():
        return np.zeros(0), []
    r = nb.murty(A, k)
    pairs = []
    for cols in r.columns.reshape(r.costs.shape[0], A.shape[0]):
        pairs.append(frozenset((int(j), i) if flip else (i, int(j)) for i, j in enumerate(cols)))
    return r.costs, pairs


def test_kbest2dassign_ranks_as_nb_murty():
    cases = _cases(0, 60)
    for (C, k), (a, b, g) in zip(cases, _octave(cases), strict=True):
        costs, pairs = _reference(C, k)
        if costs.size == 0:  # some row (on the smaller side) has no allowed cell
            assert g.tolist() == [-1.0] and a is None, (C, g)
            continue
        np.testing.assert_allclose(g, costs, rtol=0, atol=1e-9 * max(1.0, np.abs(costs).max()))
        n, m = C.shape
        ours = []
        for h in range(g.size):
            rows = np.flatnonzero(a[:, h])
            pair = frozenset((int(i), int(a[i, h]) - 1) for i in rows)
            assert len(pair) == min(n, m) and len({j for _, j in pair}) == len(pair)
            assert np.isclose(sum(C[i, j] for i, j in pair), g[h], rtol=0, atol=1e-9)
            # row4col is col4row inverted
            assert all(b[j, h] - 1 == i for i, j in pair) and np.count_nonzero(b[:, h]) == len(pair)
            ours.append(pair)
        assert len(set(ours)) == g.size  # distinct assignments
        # costs are continuous draws: ties only between equal sums, so compare where untied
        for h in range(g.size):
            if np.sum(np.isclose(costs, costs[h], rtol=0, atol=1e-9)) == 1:
                assert ours[h] == pairs[h], (C, k, h)


def test_kbest2dassign_returns_every_assignment_when_fewer_than_k():
    C = np.array([[1.0, 2.0, np.inf], [2.0, 1.0, 5.0]])  # 4 assignments of both rows
    ((a, b, g),) = _octave([(C, 10)])
    assert g.tolist() == [2.0, 4.0, 6.0, 7.0]
    assert a.T.tolist() == [[1, 2], [2, 1], [1, 3], [2, 3]]
    assert b[:, 3].tolist() == [0, 1, 2]
