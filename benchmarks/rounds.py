"""Interleaved timing rounds shared by the benchmarks.

Every side runs once per round, in turn, so that all sides of a round see
the same machine load; a speed claim is the ratio of two sides *within* a
round, summarised by its median and its worst round (never the best time of
one side against a single time of the other).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np


def rounds(sides: dict[str, Callable], n: int) -> tuple[dict[str, list[float]], dict[str, object]]:
    """Each side once per round for ``n`` rounds: ({name: seconds per round}, {name: last output})."""
    times: dict[str, list[float]] = {name: [] for name in sides}
    last: dict[str, object] = {}
    for _ in range(n):
        for name, fn in sides.items():
            t = time.perf_counter()
            last[name] = fn()
            times[name].append(time.perf_counter() - t)
    return times, last


def speedup(slow: list[float], fast: list[float]) -> str:
    """Per-round ratio slow / fast (larger is better): median and worst (min) round."""
    r = np.asarray(slow) / np.asarray(fast)
    return f"median {np.median(r):.2f}x, worst (min) {r.min():.2f}x"


def overhead(ours: list[float], floor: list[float]) -> str:
    """Per-round ratio ours / floor (smaller is better): median and worst (max) round."""
    r = np.asarray(ours) / np.asarray(floor)
    return f"median {np.median(r):.2f}x, worst (max) {r.max():.2f}x"


def spread(num: list[float], den: list[float]) -> str:
    """Per-round ratio num / den when neither side is a baseline: median, and the range over rounds."""
    r = np.asarray(num) / np.asarray(den)
    return f"median {np.median(r):.2f}x (rounds {r.min():.2f}x to {r.max():.2f}x)"
