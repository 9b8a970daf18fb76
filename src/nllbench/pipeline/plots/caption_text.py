"""The wording every figure's caption is built from: numbers for reading, signed changes,
the best filters per swept value, the "In this run" paragraph and the caption's paragraphs.

Shared by the captions of :mod:`nllbench.pipeline.plots.captions`,
:mod:`~nllbench.pipeline.plots.captions_calibration` and the figures that write their own.
"""

from __future__ import annotations

import math

import numpy as np

from nllbench.pipeline.plots.style import join_words


def num(x) -> str:
    """A number for reading: about three significant digits, "inf" for +inf."""
    x = float(x)
    if math.isnan(x):
        return "n/a"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    a = abs(x)
    if a >= 1000:
        return f"{x:,.0f}"
    if a >= 100:
        return f"{x:.0f}"
    if a >= 10:
        return f"{x:.1f}"
    if a >= 0.01 or a == 0:
        return f"{x:.2f}"
    return f"{x:.1e}"


def signed(x) -> str:
    """A change with its sign: "+1.2", "-0.35", "0.00"."""
    x = float(x)
    if np.isfinite(x) and abs(x) < 0.01:  # a change this small reads as 0.00, with its sign
        return f"{x:+.2f}" if x else "0.00"
    return num(x) if x <= 0 else f"+{num(x)}"


def per_filter(table, x: str, column: str) -> dict:
    """{x value: {filter: value}} of ``column`` (rows with one filter per x value)."""
    out: dict = {}
    for v, f, c in zip(table[x], table["filter"], table[column], strict=True):
        out.setdefault(float(v), {})[str(f)] = float(c)
    return out


def best_per(values: dict, at: str, every: str, lower: bool = True) -> str:
    """Which filters are best at each x value, grouped: "pmbm at every clutter rate", "a at clutter 5; b ...".

    ``values``: {x value: {filter: value}}; only finite values compete (ties
    share the place); an x value without a finite one is left out.
    """
    winners: dict[tuple, list[float]] = {}
    for x in sorted(values):
        finite = {f: v for f, v in values[x].items() if np.isfinite(v)}
        if not finite:
            continue
        target = min(finite.values()) if lower else max(finite.values())
        names = tuple(sorted(f for f, v in finite.items() if v == target))
        winners.setdefault(names, []).append(x)
    if not winners:
        return "no filter has a finite value"
    if len(winners) == 1 and len(values) > 1 and len(next(iter(winners.values()))) == len(values):
        return f"{join_words(next(iter(winners)))} at {every}"
    return "; ".join(
        f"{join_words(names)} at {at} {join_words(f'{x:g}' for x in xs)}" for names, xs in winners.items()
    )


def run_paragraph(sentences) -> str:
    """The second paragraph, "In this run: ...", of the non-empty ``sentences``; "" if there is none."""
    body = " ".join(s for s in sentences if s)
    return f"In this run: {body}" if body else ""


def paragraphs(*paragraphs) -> str:
    """A caption: the non-empty ``paragraphs``, one blank line between them, ending in a newline."""
    return "\n\n".join(p for p in paragraphs if p) + "\n"
