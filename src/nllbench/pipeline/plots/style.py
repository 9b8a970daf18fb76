"""What every figure shares: the filters' colours and markers, labels, colours of the stacked terms,
the pyplot setup, the drawing helpers (a series with its interval and infinities, legends, panels)
and :func:`save`.

A filter keeps one colour and marker in every figure of a study
(:func:`filter_styles`); the NLL is drawn as median and interquartile range
(:data:`ROBUST`, it is heavy-tailed) and bounded measures as mean and
bootstrap interval (:data:`MEAN`); an infinite value is drawn as an open
triangle labelled "inf" at the panel's edge (:func:`mark_infinite`), never
dropped.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from nllbench.measures.names import NLL_TERM_MEASURES, TGOSPA_TERMS

MEASURE_LABEL = {
    "nll": "NLL",
    "gospa_mean": "GOSPA",
    "ospa_mean": "OSPA",
    "mota": "MOTA",
    "motp": "MOTP",
    "idf1": "IDF1",
    "tgospa": "T-GOSPA",
    "hota": "HOTA",
}
# axis labels with units: NLL in nats (natural log), distances in the scenario's position units
AXIS_LABEL = {
    "nll": "NLL per step (nats)",
    "gospa_mean": "GOSPA per step (position units)",
    "mota": "MOTA (fraction)",
}


@dataclass(frozen=True)
class Style:
    """A filter's fixed colour and marker in every figure."""

    color: str
    marker: str


# One visual identity: the reference filters' colours (Okabe-Ito, colour-blind safe) and markers.
FILTER_STYLE = {
    "phd": Style("#0072B2", "o"),
    "cphd": Style("#56B4E9", "s"),
    "pmb": Style("#009E73", "^"),
    "pmbm": Style("#D55E00", "D"),
    "mbm": Style("#CC79A7", "v"),
    "mbm01": Style("#E69F00", "P"),
}
# other trackers (named by users) take these in the sorted order of their names
RESERVED_COLORS = ("#000000", "#8C564B", "#7F7F7F", "#9467BD", "#17BECF", "#BCBD22", "#F0E442")
RESERVED_MARKERS = ("X", "h", "*", "p", "<", ">", "d")


def filter_styles(names) -> dict[str, Style]:
    """Style of every filter in ``names``: the fixed one, or a reserved one by sorted name order.

    Pass every filter of the study (not of one panel), so a tracker keeps its
    style across the study's figures. The i-th unknown name in sorted order
    gets reserved colour i and marker i (cycling; colour and marker cycle with
    different periods, so pairs repeat only after 49 names).
    """
    unknown = sorted({str(n) for n in names} - set(FILTER_STYLE))
    out = {n: FILTER_STYLE[n] for n in {str(n) for n in names} if n in FILTER_STYLE}
    for i, n in enumerate(unknown):
        out[n] = Style(RESERVED_COLORS[i % len(RESERVED_COLORS)], RESERVED_MARKERS[i % len(RESERVED_MARKERS)])
    return out


DECOMPOSITION_TERMS = NLL_TERM_MEASURES
#: One colour per term, in the order of :data:`nllbench.measures.names.NLL_TERMS`.
TERM_COLORS = dict(
    zip(DECOMPOSITION_TERMS, ("#4C72B0", "#DD8452", "#C44E52", "#8172B3", "#937860", "#55A868"), strict=True)
)
#: One colour per trajectory-GOSPA term, in the order of :data:`nllbench.measures.names.TGOSPA_TERMS`.
TGOSPA_COLORS = dict(zip(TGOSPA_TERMS, ("#4C72B0", "#C44E52", "#DD8452", "#55A868"), strict=True))


# the two summaries the figures draw: robust (NLL, heavy-tailed) and mean (bounded measures)
ROBUST = ("median", "q25", "q75", "median and interquartile range over seeds")
MEAN = ("mean", "ci95_low", "ci95_high", "mean and 95 % bootstrap interval over seeds")


def pyplot():
    """(matplotlib.pyplot, seaborn) with the file-only Agg backend and the figures' seaborn theme."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import seaborn as sns

    sns.set_theme(style="whitegrid", context="paper")
    return plt, sns


def save(fig, path: str | Path, provenance: dict | None = None) -> list[Path]:
    """Write ``path`` (.png) and the same stem as .pdf, atomically, with provenance metadata."""
    from nllbench.store import provenance_record, save_figure

    desc = json.dumps(provenance_record(provenance), sort_keys=True)
    return save_figure(
        fig, path, {".png": {"Description": desc}, ".pdf": {"Subject": desc, "CreationDate": None}}
    )


def pick(summary, **filters):
    """The rows of ``summary`` whose column ``k`` equals ``v`` for every ``k=v`` given."""
    sel = summary
    for k, v in filters.items():
        sel = sel[sel[k] == v]
    return sel


def inf_note(g) -> str:
    """Caption note " (inf in k/n runs)" of a group of summary rows; empty when no run is infinite."""
    k, n = int(g["n_infinite"].sum()), int(g["n"].sum())
    return f" (inf in {k}/{n} runs)" if k else ""


def draw_series(ax, data, x: str, styles: dict[str, Style], summary_kind=ROBUST) -> None:
    """One line per filter (every filter in ``data``) with its interval; infinite values are shown.

    A point whose centre is +inf is drawn as an open triangle at the top edge
    of the panel (labelled "inf"); an interval whose upper end is +inf is
    drawn dotted up to the top edge. The legend names every filter with its
    style, with "inf in k/n runs" when some runs are infinite.
    """
    centre, low, high, _ = summary_kind
    pending = []
    for name in sorted(data["filter"].unique()):
        st = styles[name]
        g = data[data["filter"] == name].sort_values(x)
        gx, c = g[x].to_numpy(dtype=float), g[centre].to_numpy(dtype=float)
        lo, hi = g[low].to_numpy(dtype=float), g[high].to_numpy(dtype=float)
        finite = np.isfinite(c)
        label = f"{name}{inf_note(g)}"
        ax.plot(gx[finite], c[finite], marker=st.marker, color=st.color, label=label, ms=5, lw=1.4)
        bounded = finite & np.isfinite(hi)
        ax.vlines(gx[bounded], lo[bounded], hi[bounded], color=st.color, lw=1.2, alpha=0.8)
        ends = np.column_stack([np.r_[gx[finite], gx[bounded]], np.r_[lo[finite], hi[bounded]]])
        ax.update_datalim(ends[np.isfinite(ends).all(axis=1)])  # intervals inside the view
        pending.append((gx, lo, hi, finite, st))
    ax.autoscale_view()
    top = ax.get_ylim()[1]
    for gx, lo, hi, finite, st in pending:
        open_top = finite & ~np.isfinite(hi)  # interval reaching +inf: dotted up to the edge
        ax.vlines(gx[open_top], lo[open_top], top, color=st.color, lw=1.0, ls=":", alpha=0.8)
        if (~finite).any():
            mark_infinite(ax, gx[~finite], st.color)
    ax.set_ylim(top=top)


def mark_infinite(ax, positions, color: str, edge: str = "top") -> None:
    """Open triangles labelled "inf" at the panel's top edge (at x = ``positions``) or right edge (y).

    Drawn in axes coordinates across the edge (0.97 of the panel), so they stay
    inside the view whatever the finite values' limits.
    """
    top = edge == "top"
    transform = ax.get_xaxis_transform() if top else ax.get_yaxis_transform()
    at_edge = np.full(len(positions), 0.97)
    xy = (positions, at_edge) if top else (at_edge, positions)
    ax.plot(*xy, marker="^" if top else ">", ls="none", mfc="none", color=color, ms=8, transform=transform)
    for v in positions:
        ax.annotate(
            "inf",
            (v, 0.97) if top else (0.97, v),
            xycoords=transform,
            xytext=(6, -3) if top else (-14, 4),
            textcoords="offset points",
            fontsize=7,
            color=color,
        )


def points(ax, xs, ys, st: Style, label: str) -> None:
    """Unconnected markers of one filter (``xs``, ``ys`` of equal length), in its style."""
    ax.plot(xs, ys, marker=st.marker, color=st.color, ls="none", ms=6, label=label)


def legend(ax, **kw) -> None:
    """The figures' legend: small type on a translucent box."""
    ax.legend(fontsize=7, framealpha=0.85, **kw)


def clutter_panels(plt, n: int):
    """One bar panel per clutter rate, sharing the y-scale (the decomposition figures)."""
    return plt.subplots(
        1, n, figsize=(2.6 * n + 1.6, 3.4), squeeze=False, sharey=True, constrained_layout=True
    )


def color_ticks(ax, filters, styles) -> None:
    """Colour each x tick label (one per filter, in ``filters`` order) in its filter's colour."""
    for tick, f in zip(ax.get_xticklabels(), filters, strict=True):
        tick.set_color(styles[f].color)


def require_measures(table, measures, name: str) -> None:
    """Raise ``ValueError`` naming the table ``name`` when it has no rows for some of ``measures``."""
    missing = sorted(set(measures) - set(table["measure"]))
    if missing:
        raise ValueError(
            f"{name}: no rows for {missing} (metrics files written before T-GOSPA/HOTA/calibration?)"
        )
