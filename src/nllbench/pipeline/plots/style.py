"""What every figure shares: the filters' colours and markers, labels, colours of the stacked terms,
the pyplot setup, the drawing helpers (a series with its interval and infinities, legends, panels)
and :func:`save`.

A filter keeps one colour and marker in every figure of a study
(:func:`filter_styles`); the NLL is drawn as median and interquartile range
(:data:`ROBUST`, it is heavy-tailed) and bounded measures as mean and
bootstrap interval (:data:`MEAN`); an infinite value is drawn as an open
triangle in a row (column) at the panel's edge named once "inf"
(:func:`mark_infinite`), never dropped, and legends say how many seeds are
infinite at which point (:func:`inf_note`). Legends stand outside the panels
(:func:`legend_outside`); counts agree with their nouns (:func:`plural`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from nllbench.measures.declarations import declared_scores
from nllbench.measures.names import NLL_TERM_MEASURES, TGOSPA_TERMS

#: The short name of each measure in figures (its declaration's label).
MEASURE_LABEL = {s.name: s.label for s in declared_scores() if s.label}
# axis labels with units: NLL in nats (natural log), distances in the scenario's position units
AXIS_LABEL = {s.name: s.axis for s in declared_scores() if s.axis}


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
    # the trajectory filters (Tol's indigo and wine: outside the reserved colours below)
    "tpmbm": Style("#332288", "H"),
    "tpmb": Style("#882255", "8"),
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


#: The attribute of a figure that holds its caption (set by :func:`captioned`, written by :func:`save`).
CAPTION_ATTRIBUTE = "nllbench_caption"


def captioned(fig, text: str):
    """``fig`` with its caption ``text`` attached (plain text; :func:`save` writes it beside the figure)."""
    setattr(fig, CAPTION_ATTRIBUTE, text)
    return fig


def caption_path(path: str | Path) -> Path:
    """Where :func:`save` writes the caption of the figure saved as ``path``: ``<stem>.caption.txt``."""
    return Path(path).with_suffix(".caption.txt")


def save(fig, path: str | Path, provenance: dict | None = None) -> list[Path]:
    """Write ``path`` (.png) and the same stem as .pdf, atomically, with provenance metadata.

    A figure with a caption (:func:`captioned`) also gets it as
    ``<stem>.caption.txt`` (:func:`caption_path`), written together with
    the figure: the text the workflow's report shows under the figure, so
    the figure reads on its own outside the report too.
    """
    from nllbench.store import provenance_record, save_figure

    desc = json.dumps(provenance_record(provenance), sort_keys=True)
    meta = {".png": {"Description": desc}, ".pdf": {"Subject": desc, "CreationDate": None}}
    caption = getattr(fig, CAPTION_ATTRIBUTE, None)
    return save_figure(fig, path, meta, caption=caption or None)


def pick(summary, **filters):
    """The rows of ``summary`` whose column ``k`` equals ``v`` for every ``k=v`` given."""
    sel = summary
    for k, v in filters.items():
        sel = sel[sel[k] == v]
    return sel


def plural(n, word: str, many: str | None = None) -> str:
    """``n`` and ``word`` in agreement: "1 step", "2 steps", "0 settings", "1,240 Bernoullis".

    ``many`` is the plural form when it is not ``word + "s"``. Integral
    floats count as integers; thousands are separated by commas.
    """
    if isinstance(n, float) and n.is_integer():
        n = int(n)
    form = word if n == 1 else (many or f"{word}s")
    return f"{n:,} {form}"


def join_words(items) -> str:
    """ "a", "a and b", "a, b and c" (an empty list gives "")."""
    items = [str(i) for i in items]
    if len(items) <= 1:
        return "".join(items)
    return f"{', '.join(items[:-1])} and {items[-1]}"


def inf_note(rows, x: str | None = None, at: str = "", every: str = "", measure: str = "NLL") -> str:
    """Legend note " (NLL inf in k/n seeds at clutter 50)" of one filter's summary rows; "" when none is.

    It counts seeds, always: ``k/n`` is the number of seeds whose value is
    infinite out of the seeds evaluated at one point of the figure. ``x``
    names the column that tells the figure's points apart (None: one point)
    and ``at`` its words ("clutter", "s =", "Q ="); points with the same
    ``k/n`` share one clause, and ``every`` ("every clutter rate") replaces
    the list of values when every point of several has the same count.
    """
    bad = rows[rows["n_infinite"] > 0]
    if bad.empty:
        return ""
    if x is None:
        k, n = int(bad["n_infinite"].sum()), int(bad["n"].sum())
        return f" ({measure} inf in {k}/{n} seeds)"
    groups: dict[tuple[int, int], list[float]] = {}
    for v, k, n in sorted(zip(bad[x], bad["n_infinite"], bad["n"], strict=True)):
        groups.setdefault((int(k), int(n)), []).append(float(v))
    points = rows[x].nunique()
    clauses = []
    for (k, n), values in groups.items():
        if every and points > 1 and len(values) == points:
            where = every
        else:
            where = f"{at} {join_words(f'{v:g}' for v in values)}".strip()
        clauses.append(f"{k}/{n} seeds at {where}")
    return f" ({measure} inf in {'; '.join(clauses)})"


def draw_series(
    ax,
    data,
    x: str,
    styles: dict[str, Style],
    summary_kind=ROBUST,
    at: str = "",
    every: str = "",
    measure: str = "NLL",
) -> None:
    """One line per filter (every filter in ``data``) with its interval; infinite values are shown.

    A point whose centre is +inf is drawn as an open triangle in the row
    labelled "inf" at the top edge of the panel (:func:`mark_infinite`); an
    interval whose upper end is +inf is drawn dotted up to the top edge. Each
    line's label is the filter's name with :func:`inf_note` (``at``, ``every``
    describe ``x``; ``measure`` names what is infinite) when some seeds are
    infinite; the caller places the legend.
    """
    centre, low, high, _ = summary_kind
    pending = []
    for name in sorted(data["filter"].unique()):
        st = styles[name]
        g = data[data["filter"] == name].sort_values(x)
        gx, c = g[x].to_numpy(dtype=float), g[centre].to_numpy(dtype=float)
        lo, hi = g[low].to_numpy(dtype=float), g[high].to_numpy(dtype=float)
        finite = np.isfinite(c)
        label = f"{name}{inf_note(g, x, at, every, measure)}"
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


#: Where the row (or column) of infinite values sits, in axes coordinates.
INF_EDGE = 0.97
#: The "inf" label's ``gid``: drawn once per panel and edge (tests find it by this).
INF_LABEL = "inf-label"


def mark_infinite(ax, positions, color: str, edge: str = "top") -> None:
    """Open triangles at the panel's top edge (at x = ``positions``) or right edge (at y = ``positions``).

    Drawn in axes coordinates across the edge (0.97 of the panel), so they
    stay inside the view whatever the finite values' limits. The row (column)
    is named once per panel by an "inf" label outside the frame, like a tick
    label (right of the frame for the top row, above it for the right column),
    so that neighbouring infinite points never overlap their labels.
    """
    top = edge == "top"
    transform = ax.get_xaxis_transform() if top else ax.get_yaxis_transform()
    at_edge = np.full(len(positions), INF_EDGE)
    xy = (positions, at_edge) if top else (at_edge, positions)
    ax.plot(*xy, marker="^" if top else ">", ls="none", mfc="none", color=color, ms=8, transform=transform)
    if any(t.get_gid() == f"{INF_LABEL}-{edge}" for t in ax.texts):
        return
    ends = ([0, 1], [INF_EDGE, INF_EDGE]) if top else ([INF_EDGE, INF_EDGE], [0, 1])
    ax.plot(*ends, color="#999999", lw=0.6, ls=(0, (1, 3)), transform=ax.transAxes, zorder=0.5, label="_inf")
    ax.annotate(
        "inf",
        (1.0, INF_EDGE) if top else (INF_EDGE, 1.0),
        xycoords="axes fraction",
        xytext=(3, 0) if top else (0, 3),
        textcoords="offset points",
        ha="left" if top else "center",
        va="center" if top else "bottom",
        fontsize=7,
        color="#555555",
        gid=f"{INF_LABEL}-{edge}",
    )


def points(ax, xs, ys, st: Style, label: str) -> None:
    """Unconnected markers of one filter (``xs``, ``ys`` of equal length), in its style."""
    ax.plot(xs, ys, marker=st.marker, color=st.color, ls="none", ms=6, label=label)


def legend(ax, **kw) -> None:
    """The figures' legend inside a panel: small type on a translucent box (only where it covers no data)."""
    ax.legend(fontsize=7, framealpha=0.85, **kw)


def legend_outside(owner, handles=None, labels=None, where: str = "below", **kw):
    """A legend outside the panels, so that it never covers data.

    ``owner`` is a figure (``where``: "below" the panels or "right" of them;
    needs constrained layout) or an axes (the legend beside it, right of its
    frame). ``handles``/``labels`` default to the labelled artists of
    ``owner``'s panels, each label once. Columns: as many as fit the
    figure's width below (at about 0.55 em per character), one beside.
    """
    from matplotlib.figure import Figure

    if handles is None:
        handles, labels, seen = [], [], set()
        for ax in owner.axes if isinstance(owner, Figure) else [owner]:
            for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
                if lab not in seen:
                    seen.add(lab)
                    handles.append(h)
                    labels.append(lab)
    if not handles:
        return None
    longest = max(len(lab) for lab in labels)
    fontsize = kw.pop("fontsize", 7)
    width = owner.get_figwidth() if isinstance(owner, Figure) else owner.figure.get_figwidth()
    fits = int(width * 72 / (0.55 * fontsize))  # characters on one line of the figure's width
    below = where == "below" and isinstance(owner, Figure)
    ncols = max(1, min(len(labels), fits // (longest + 6))) if below else 1
    kw = {"fontsize": fontsize, "frameon": False, "ncols": ncols, **kw}
    if isinstance(owner, Figure):
        loc = "outside lower center" if where == "below" else "outside right upper"
        return owner.legend(handles, labels, loc=loc, **kw)
    return owner.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.02, 1.0), **kw)


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


def calibration_note(rows, n_clutter: int) -> str:
    """ " (NLL inf at clutter 50: 1/6 seeds at every s)" of one filter's NLL rows over clutter and s."""
    per: dict[str, list[float]] = {}
    for clutter, g in rows.groupby("clutter", sort=True):
        note = inf_note(g, "cov_scale", "s =", "every s").removeprefix(" (NLL inf in ").removesuffix(")")
        if note:
            per.setdefault(note, []).append(float(clutter))
    clauses = [
        ("every clutter rate" if len(cs) == n_clutter > 1 else f"clutter {join_words(f'{c:g}' for c in cs)}")
        + f": {note}"
        for note, cs in per.items()
    ]
    return f" (NLL inf at {'; '.join(clauses)})" if clauses else ""
