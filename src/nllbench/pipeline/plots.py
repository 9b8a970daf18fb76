"""Figures from stored tables: they read results and compute no measure.

Each ``fig_*`` function takes tables (pandas DataFrames written by
:mod:`nllbench.pipeline.aggregate`, or the example files written by ``nllbench example
--out-dir``) and returns a ``matplotlib.figure.Figure``; :func:`save` writes
PNG and PDF with provenance in their metadata.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from nllbench.measures.names import NLL_TERM_MEASURES, TGOSPA_TERMS
from nllbench.pipeline.statistics import rank_agreement

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


def _plt():
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


def _pick(summary, **filters):
    sel = summary
    for k, v in filters.items():
        sel = sel[sel[k] == v]
    return sel


# the two summaries the figures draw: robust (NLL, heavy-tailed) and mean (bounded measures)
ROBUST = ("median", "q25", "q75", "median and interquartile range over seeds")
MEAN = ("mean", "ci95_low", "ci95_high", "mean and 95 % bootstrap interval over seeds")


def _inf_note(g) -> str:
    k, n = int(g["n_infinite"].sum()), int(g["n"].sum())
    return f" (inf in {k}/{n} runs)" if k else ""


def _series(ax, data, x: str, styles: dict[str, Style], summary_kind=ROBUST) -> None:
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
        label = f"{name}{_inf_note(g)}"
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
            ax.plot(
                gx[~finite],
                np.full((~finite).sum(), 0.97),
                marker="^",
                ls="none",
                mfc="none",
                color=st.color,
                ms=8,
                transform=ax.get_xaxis_transform(),
            )
            for xv in gx[~finite]:
                ax.annotate(
                    "inf",
                    (xv, 0.97),
                    xycoords=ax.get_xaxis_transform(),
                    xytext=(6, -3),
                    textcoords="offset points",
                    fontsize=7,
                    color=st.color,
                )
    ax.set_ylim(top=top)


def _legend(ax, **kw) -> None:
    ax.legend(fontsize=7, framealpha=0.85, **kw)


def fig_vs_clutter(summary, q: int):
    """NLL (median, IQR) and GOSPA (mean, bootstrap interval) against the clutter rate, per filter."""
    plt, _ = _plt()
    styles = filter_styles(summary["filter"].unique())
    fig, axes = plt.subplots(1, 2, figsize=(7.2, 3.2), constrained_layout=True)
    panels = (("nll", q, ROBUST, f"NLL (Q = {q})"), ("gospa_mean", 0, MEAN, "GOSPA"))
    for ax, (measure, qq, kind, title) in zip(axes, panels, strict=True):
        data = _pick(summary, measure=measure, q=qq, cov_scale=1.0)
        _series(ax, data, "clutter", styles, kind)
        ax.set_xlabel("clutter rate (false measurements per scan)")
        ax.set_ylabel(AXIS_LABEL[measure])
        ax.set_title(f"{title}: {kind[3]}", fontsize=8)
        ax.set_xticks(sorted(data["clutter"].unique()))
        _legend(ax)
    return fig


DECOMPOSITION_TERMS = NLL_TERM_MEASURES
#: One colour per term, in the order of :data:`nllbench.measures.names.NLL_TERMS`.
TERM_COLORS = dict(
    zip(DECOMPOSITION_TERMS, ("#4C72B0", "#DD8452", "#C44E52", "#8172B3", "#937860", "#55A868"), strict=True)
)


def _clutter_panels(plt, n: int):
    """One bar panel per clutter rate, sharing the y-scale (the decomposition figures)."""
    return plt.subplots(
        1, n, figsize=(2.6 * n + 1.6, 3.4), squeeze=False, sharey=True, constrained_layout=True
    )


def fig_decomposition(summary, q: int):
    """NLL terms per filter and clutter rate (means over the runs whose NLL is finite).

    Panels share the y-axis. A filter whose NLL is infinite in some runs is
    annotated "inf in k/n runs" with the term that made it infinite; a filter
    infinite in every run has no finite bar, only a hatched marker.
    """
    plt, _ = _plt()
    data = summary[(summary["q"] == q) & (summary["cov_scale"] == 1.0)]
    settings = sorted(data["clutter"].unique())
    filters = sorted(data["filter"].unique())
    fig, axes = _clutter_panels(plt, len(settings))
    for ax, clutter in zip(axes[0], settings, strict=True):
        sub = data[data["clutter"] == clutter]
        pos, neg = np.zeros(len(filters)), np.zeros(len(filters))
        for term in DECOMPOSITION_TERMS:
            rows = [sub[(sub["filter"] == f) & (sub["measure"] == term)] for f in filters]
            vals = np.array([float(r["finite_mean"].iloc[0]) if len(r) else 0.0 for r in rows])
            vals = np.nan_to_num(vals, nan=0.0)  # all runs infinite: no finite bar (marked below)
            base = np.where(vals >= 0, pos, neg)
            ax.bar(
                filters,
                vals,
                bottom=base,
                color=TERM_COLORS[term],
                label=term.removeprefix("nll_"),
                width=0.7,
            )
            pos += np.where(vals >= 0, vals, 0)
            neg += np.where(vals < 0, vals, 0)
        for i, f in enumerate(filters):
            total = sub[(sub["filter"] == f) & (sub["measure"] == "nll")]
            if total.empty or int(total["n_infinite"].iloc[0]) == 0:
                continue
            k, n = int(total["n_infinite"].iloc[0]), int(total["n"].iloc[0])
            culprits = [
                t.removeprefix("nll_")
                for t in DECOMPOSITION_TERMS
                if not sub[(sub["filter"] == f) & (sub["measure"] == t) & (sub["n_infinite"] > 0)].empty
            ]
            ax.annotate(
                f"inf in {k}/{n}\n({', '.join(culprits)})",
                (i, 0.98 - 0.1 * (i % 2)),  # staggered: neighbours' notes do not overlap
                xycoords=ax.get_xaxis_transform(),
                ha="center",
                va="top",
                fontsize=6,
                color="black",
                bbox={
                    "boxstyle": "round",
                    "fc": "white",
                    "ec": "#C44E52",
                    "hatch": "///" if k == n else None,
                },
            )
        ax.axhline(0, color="black", lw=0.6)
        ax.set_title(f"clutter {clutter:g}", fontsize=9)
        ax.tick_params(axis="x", rotation=45)
        for tick, f in zip(ax.get_xticklabels(), filters, strict=True):
            tick.set_color(filter_styles(filters)[f].color)
    axes[0][0].set_ylabel(f"NLL term per step (nats, Q = {q})\nmean over runs with finite NLL")
    axes[0][-1].legend(
        fontsize=7, title="NLL term", title_fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1)
    )
    return fig


def fig_nll_vs_q(summary):
    """NLL (median, IQR) against the Murty budget Q, one panel per filter; dotted: the exact NLL.

    Each panel has its own y-scale: the figure compares Q values within a
    filter (a heavy-tailed filter would otherwise flatten the others).
    Measured times are not drawn here (see :func:`fig_timing`), so this
    figure is the same bytes however the jobs ran.
    """
    plt, _ = _plt()
    styles = filter_styles(summary["filter"].unique())
    nll = summary[(summary["measure"] == "nll") & (summary["cov_scale"] == 1.0)]
    clutter = sorted(nll["clutter"].unique())[0]
    nll = nll[nll["clutter"] == clutter]
    exact = summary[
        (summary["measure"] == "nll_exact") & (summary["cov_scale"] == 1.0) & (summary["clutter"] == clutter)
    ]
    filters = sorted(nll["filter"].unique())
    ncols = min(3, len(filters))
    nrows = -(-len(filters) // ncols)
    fig, axes = plt.subplots(
        nrows, ncols, figsize=(2.6 * ncols + 0.6, 2.4 * nrows + 0.4), squeeze=False, constrained_layout=True
    )
    qs = sorted(nll["q"].unique())
    for ax, name in zip(axes.flat, filters, strict=False):
        _series(ax, nll[nll["filter"] == name], "q", styles, ROBUST)
        ex = exact[exact["filter"] == name]
        if len(ex) and np.isfinite(ex["median"].iloc[0]):
            ax.axhline(
                ex["median"].iloc[0], ls=":", lw=1.2, color=styles[name].color, label="exact NLL (median)"
            )
        ax.set_xscale("log")
        ax.set_xticks(qs, [str(int(v)) for v in qs])
        ax.minorticks_off()
        ax.set_title(name, fontsize=9, color=styles[name].color)
        _legend(ax)
    for ax in axes.flat[len(filters) :]:
        ax.set_visible(False)
    for ax in axes[:, 0]:
        ax.set_ylabel(AXIS_LABEL["nll"])
    for ax in axes[-1, :]:
        ax.set_xlabel("Q (associations per hypothesis)")
    fig.suptitle(f"NLL against Q, clutter {clutter:g}: {ROBUST[3]}", fontsize=9)
    return fig


def fig_timing(timing):
    """Measured time of the NLL part of the evaluation per run (varies between runs).

    Against Q when some filter was timed at several Q (an external tracker is
    scored once per Q); else one point per filter: a reference filter ranks
    every Q at once, so its time covers all of them.
    """
    plt, _ = _plt()
    from matplotlib.ticker import FormatStrFormatter, LogLocator, NullLocator

    fig, ax = plt.subplots(figsize=(4.8, 3.4), constrained_layout=True)
    if len(timing):
        styles = filter_styles(timing["filter"].unique())
        t = timing[timing["cov_scale"] == 1.0] if "cov_scale" in timing else timing
        col = "nll_seconds" if "nll_seconds" in t else "seconds"
        t = t.groupby(["filter", "q"], as_index=False)[col].median()
        ax.set_yscale("log")
        if t["q"].nunique() > 1:
            _timing_against_q(ax, t, col, styles)
        else:
            _timing_per_filter(ax, t, col, styles)
        # values at 2x and 5x each decade: a span of one or two decades is readable
        ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_major_formatter(FormatStrFormatter("%g"))
        ax.yaxis.set_minor_locator(NullLocator())
    ax.set_ylabel("NLL evaluation time per run (s)")
    ax.set_title("measured wall time (median over runs); machine-dependent", fontsize=8)
    return fig


def _timing_against_q(ax, t, col, styles) -> None:
    for name, g in t.groupby("filter", sort=True):
        st = styles[name]
        ax.plot(g["q"], g[col], marker=st.marker, color=st.color, label=name)
    ax.set_xscale("log")
    qs = sorted(t["q"].unique())
    ax.set_xticks(qs, [str(int(v)) for v in qs])
    ax.minorticks_off()
    ax.set_xlabel("Q (associations per global hypothesis)")
    _legend(ax)


def _timing_per_filter(ax, t, col, styles) -> None:
    names = sorted(t["filter"].unique())
    for x, name in enumerate(names):
        st = styles[name]
        ax.plot([x], t.loc[t["filter"] == name, col].to_numpy(), marker=st.marker, color=st.color, ls="none")
    ax.set_xticks(range(len(names)), names)
    ax.set_xlim(-0.5, len(names) - 0.5)
    ax.set_xlabel(f"filter (every Q up to {int(t['q'].iloc[0])} ranked at once)")


def probe_q(summary) -> int:
    """The Q at which the covariance-scale probes were evaluated."""
    probed = summary[(summary["measure"] == "nll") & (summary["cov_scale"] != 1.0)]["q"].unique()
    if probed.size == 0:
        raise ValueError("summary: no covariance-scale probe (cov_scale != 1) was evaluated")
    return int(probed.max())


def fig_calibration(summary, q: int | None = None):
    """NLL (median, IQR) and GOSPA (mean, interval) against the covariance scale s, a row per clutter."""
    plt, _ = _plt()
    q = probe_q(summary) if q is None else q
    styles = filter_styles(summary["filter"].unique())
    clutters = sorted(summary["clutter"].unique())
    fig, axes = plt.subplots(
        len(clutters), 2, figsize=(7.2, 2.8 * len(clutters)), squeeze=False, constrained_layout=True
    )
    for row, clutter in zip(axes, clutters, strict=True):
        sub = summary[summary["clutter"] == clutter]
        _series(row[0], _pick(sub, measure="nll", q=q), "cov_scale", styles, ROBUST)
        _series(row[1], _pick(sub, measure="gospa_mean", q=0), "cov_scale", styles, MEAN)
        scales = sorted(sub[sub["measure"] == "gospa_mean"]["cov_scale"].unique())
        for ax, measure, kind in zip(row, ("nll", "gospa_mean"), (ROBUST, MEAN), strict=True):
            ax.set_xscale("log")
            ax.set_xticks(scales, [f"{x:g}" for x in scales])
            ax.minorticks_off()
            ax.set_xlabel("covariance scale s (1: the filter's own)")
            ax.set_ylabel(AXIS_LABEL[measure])
            name = f"NLL (Q = {q})" if measure == "nll" else "GOSPA"
            ax.set_title(f"{name}, clutter {clutter:g}: {kind[3]}", fontsize=7)
            _legend(ax)
    return fig


def fig_theorem1(steps):
    """Both sides of Theorem 1 at every evaluated step (parity plot)."""
    plt, _ = _plt()
    lhs = steps[steps["measure"] == "theorem1_lhs"]["value"].to_numpy()
    rhs = steps[steps["measure"] == "theorem1_rhs"]["value"].to_numpy()
    diff = steps[steps["measure"] == "theorem1_difference"]["value"].to_numpy()
    fig, ax = plt.subplots(figsize=(4.2, 4.2), constrained_layout=True)
    ax.scatter(rhs, lhs, s=6, alpha=0.5, color="#0072B2", label="one evaluated step")
    if lhs.size:
        lo, hi = float(min(lhs.min(), rhs.min())), float(max(lhs.max(), rhs.max()))
        ax.plot([lo, hi], [lo, hi], color="black", lw=0.8, label="equality")
    worst = float(np.max(np.abs(diff))) if diff.size else 0.0
    ax.set_xlabel("right-hand side: V(1-rho) + assignment cost (nats)")
    ax.set_ylabel("NLL of the theorem's PMB, Q = 1 (nats)")
    ax.set_title(f"Theorem 1: {lhs.size} steps, max |difference| = {worst:.1e}", fontsize=8)
    ax.set_aspect("equal", adjustable="datalim")
    _legend(ax)
    return fig


def fig_rank_agreement(summary, q: int):
    """Heat map of rank agreement (Kendall tau) between measures across filters and settings."""
    plt, sns = _plt()
    # the measures of the map: one value per filter and setting for every filter
    measures, mat = rank_agreement(summary, q, list(MEASURE_LABEL))
    fig, ax = plt.subplots(figsize=(6, 5))
    labels = [MEASURE_LABEL[m] for m in measures]
    sns.heatmap(
        mat,
        vmin=-1,
        vmax=1,
        cmap="vlag",
        annot=True,
        fmt=".2f",
        xticklabels=labels,
        yticklabels=labels,
        ax=ax,
    )
    ax.set_title(f"Agreement of filter rankings (Kendall tau; NLL at Q = {q})")
    return fig


def _ellipse(ax, mean, cov, **kw) -> float:
    """Draw the 2-sigma ellipse; return its largest half-axis (for the view limits)."""
    from matplotlib.patches import Ellipse

    vals, vecs = np.linalg.eigh(cov)
    angle = np.degrees(np.arctan2(vecs[1, 1], vecs[0, 1]))
    w, h = 2 * 2 * np.sqrt(vals[1]), 2 * 2 * np.sqrt(vals[0])  # 2-sigma
    ax.add_patch(Ellipse(mean, w, h, angle=angle, fill=False, **kw))
    return float(2 * np.sqrt(vals[1]))


def fig_example(example_dir: str | Path):
    """The paper's Fig. 1 / Fig. 2: Bernoullis (r and 2-sigma ellipses), PPP 2-sigma region, truth, table.

    Panels share both axes with equal aspect, so equal covariances look equal.
    """
    import pandas as pd
    from matplotlib.lines import Line2D

    from nllbench.store import read_posterior

    plt, _ = _plt()
    d = Path(example_dir)
    truth = pd.read_csv(d / "truth.csv")[["x", "y"]].to_numpy()
    table = pd.read_csv(d / "table.csv")
    trackers = list(table["tracker"])
    fig, axes = plt.subplots(
        1,
        len(trackers),
        figsize=(3.6 * len(trackers), 4.4),
        sharex=True,
        sharey=True,
        constrained_layout=True,
    )
    colors = {"M1": "#0072B2", "M2": "#D55E00"}
    lo, hi = truth.min(axis=0) - 1, truth.max(axis=0) + 1
    for ax, name in zip(np.atleast_1d(axes), trackers, strict=True):
        color = colors.get(name, "#009E73")
        density = read_posterior(d / f"{name}.nc")[0]
        mb = density.hypotheses[int(np.argmax(density.weights))]
        for r, m, P in zip(mb.r, mb.densities.means, mb.densities.covs, strict=True):
            half = _ellipse(ax, m, P, color=color, lw=1.5)
            lo, hi = np.minimum(lo, m - half), np.maximum(hi, m + half)
            ax.plot(*m, "o", color=color, ms=4)
            ax.annotate(f"r = {r:.2f}", m, xytext=(6, 6), textcoords="offset points", fontsize=8)
        if density.ppp is not None:
            for m, P in zip(density.ppp.gaussians.means, density.ppp.gaussians.covs, strict=True):
                half = _ellipse(ax, m, P, color="gray", lw=1.2, ls="--")
                lo, hi = np.minimum(lo, m - half), np.maximum(hi, m + half)
        ax.plot(truth[:, 0], truth[:, 1], "*", color="black", ms=12)
        row = table[table["tracker"] == name].iloc[0]
        ax.set_title(
            f"{name}: NLL {row['nll']:.2f}, GOSPA {row['gospa']:.2f}\n"
            f"MOTA {row['mota']:.2f}, MOTP {row['motp']:.2f}",
            fontsize=9,
        )
        ax.set_xlabel("x (position units)")
        handles = [
            Line2D([], [], marker="*", ls="none", color="black", ms=10, label="ground truth"),
            Line2D([], [], marker="o", ls="none", color=color, ms=4, label=f"{name} Bernoulli mean"),
            Line2D([], [], color=color, lw=1.5, label=f"{name} Bernoulli 2-sigma ellipse"),
        ]
        if density.ppp is not None:
            handles.append(Line2D([], [], color="gray", lw=1.2, ls="--", label="PPP 2-sigma region"))
        ax.legend(handles=handles, fontsize=7, loc="lower left", framealpha=0.85)
    first = np.atleast_1d(axes)[0]
    first.set_ylabel("y (position units)")
    for ax in np.atleast_1d(axes):
        ax.set_aspect("equal", adjustable="box")
    first.set_xlim(lo[0] - 0.5, hi[0] + 0.5)
    first.set_ylim(lo[1] - 1.5, hi[1] + 0.5)  # room below for the legend
    return fig


TGOSPA_COLORS = dict(zip(TGOSPA_TERMS, ("#4C72B0", "#C44E52", "#DD8452", "#55A868"), strict=True))


def _require(table, measures, name: str) -> None:
    missing = sorted(set(measures) - set(table["measure"]))
    if missing:
        raise ValueError(
            f"{name}: no rows for {missing} (metrics files written before T-GOSPA/HOTA/calibration?)"
        )


def _color_ticks(ax, filters, styles) -> None:
    for tick, f in zip(ax.get_xticklabels(), filters, strict=True):
        tick.set_color(styles[f].color)


def fig_tgospa(summary):
    """Trajectory-GOSPA decomposition per filter and clutter rate (mean over seeds of each run's sum).

    Each run's per-step terms (localisation, missed, false, switches) are
    summed over its steps, so a bar's height is the mean over seeds of
    ``tgospa ** p``; panels share the y-axis.
    """
    plt, _ = _plt()
    _require(summary, TGOSPA_TERMS, "summary")
    data = summary[(summary["q"] == 0) & (summary["cov_scale"] == 1.0)]
    data = data[data["measure"].isin(TGOSPA_TERMS)]
    settings = sorted(data["clutter"].unique())
    filters = sorted(data["filter"].unique())
    styles = filter_styles(filters)
    fig, axes = _clutter_panels(plt, len(settings))
    for ax, clutter in zip(axes[0], settings, strict=True):
        sub = data[data["clutter"] == clutter]
        bottom = np.zeros(len(filters))
        for term in TGOSPA_TERMS:
            rows = [sub[(sub["filter"] == f) & (sub["measure"] == term)] for f in filters]
            vals = np.array([float(r["mean"].iloc[0]) if len(r) else 0.0 for r in rows])
            ax.bar(
                filters,
                vals,
                bottom=bottom,
                color=TGOSPA_COLORS[term],
                width=0.7,
                label=term.removeprefix("tgospa_"),
            )
            bottom += vals
        ax.set_title(f"clutter {clutter:g}", fontsize=9)
        ax.tick_params(axis="x", rotation=45)
        _color_ticks(ax, filters, styles)
    axes[0][0].set_ylabel("T-GOSPA^p per run (position units^p)\nmean over seeds")
    axes[0][-1].legend(
        fontsize=7, title="T-GOSPA term", title_fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1)
    )
    return fig


def fig_hota_vs_nll(summary, q: int):
    """HOTA (mean, 95 % bootstrap interval) against NLL (median, IQR): a point per filter and setting.

    A setting whose NLL median is +inf is drawn as an open marker at the
    right edge labelled "inf" (its HOTA is finite); the legend notes the
    filter's infinite runs.
    """
    plt, _ = _plt()
    _require(summary, ["hota"], "summary")
    base = summary[summary["cov_scale"] == 1.0]
    keys = ["scenario", "clutter", "pd", "filter"]
    nll = base[(base["measure"] == "nll") & (base["q"] == q)]
    ho = base[(base["measure"] == "hota") & (base["q"] == 0)]
    both = ho.merge(nll, on=keys, suffixes=("_h", "_n"), how="inner")
    styles = filter_styles(summary["filter"].unique())
    fig, ax = plt.subplots(figsize=(5.0, 3.8), constrained_layout=True)
    pending = []
    for name in sorted(both["filter"].unique()):
        g, st = both[both["filter"] == name], styles[name]
        x, y = g["median_n"].to_numpy(dtype=float), g["mean_h"].to_numpy(dtype=float)
        finite = np.isfinite(x)
        k, n = int(g["n_infinite_n"].sum()), int(g["n_n"].sum())
        label = f"{name} (NLL inf in {k}/{n} runs)" if k else name
        ax.plot(x[finite], y[finite], marker=st.marker, color=st.color, ls="none", ms=6, label=label)
        ax.vlines(
            x[finite],
            g["ci95_low_h"].to_numpy()[finite],
            g["ci95_high_h"].to_numpy()[finite],
            color=st.color,
            lw=1.0,
        )
        lo, hi = g["q25_n"].to_numpy(dtype=float), g["q75_n"].to_numpy(dtype=float)
        closed = finite & np.isfinite(hi)
        ax.hlines(y[closed], lo[closed], hi[closed], color=st.color, lw=1.0)
        pending.append((y[~finite], st))
    if any(len(y) for y, _ in pending):
        ax.autoscale_view()
        right = ax.get_xlim()[1]
        for y, st in pending:
            ax.plot(
                np.full(len(y), 0.97),
                y,
                marker=">",
                mfc="none",
                ls="none",
                color=st.color,
                ms=8,
                transform=ax.get_yaxis_transform(),
            )
            for yv in y:
                ax.annotate(
                    "inf",
                    (0.97, yv),
                    xycoords=ax.get_yaxis_transform(),
                    xytext=(-14, 4),
                    textcoords="offset points",
                    fontsize=7,
                    color=st.color,
                )
        ax.set_xlim(right=right)
    ax.set_xlabel(f"NLL per step (nats, Q = {q}): median and IQR over seeds")
    ax.set_ylabel("HOTA: mean and 95 % bootstrap interval")
    ax.set_title("HOTA against NLL: one point per filter and setting (covariance scale 1)", fontsize=8)
    _legend(ax)
    return fig


def _base_setting(table):
    """The rows at the filters' own covariances and no tempering (the calibration probes aside)."""
    return table[(table["cov_scale"] == 1.0) & (table["temper"] == 1.0)]


def _setting_title(scenario, clutter, pd_) -> str:
    return f"{scenario}, clutter {clutter:g}, P_D {pd_:g}"


def fig_reliability(reliability, calibration):
    """Reliability diagrams pooled over seeds: per setting, each filter's mean r against frequency.

    One panel per (scenario, clutter, P_D); the diagonal is perfect
    calibration. Filters without Bernoullis (PHD, CPHD) have no points and are
    named in the panel's note.
    """
    plt, _ = _plt()
    rel, cal = _base_setting(reliability), _base_setting(calibration)
    settings = sorted({tuple(r) for r in cal[["scenario", "clutter", "pd"]].itertuples(index=False)})
    styles = filter_styles(calibration["filter"].unique())
    ncols = min(3, len(settings))
    nrows = -(-len(settings) // ncols)
    fig, axes = plt.subplots(
        nrows,
        ncols,
        figsize=(3.2 * ncols + 0.4, 3.2 * nrows + 0.3),
        squeeze=False,
        sharex=True,
        sharey=True,
        constrained_layout=True,
    )
    for ax, (scenario, clutter, pd_) in zip(axes.flat, settings, strict=False):
        sel = (rel["scenario"] == scenario) & (rel["clutter"] == clutter) & (rel["pd"] == pd_)
        sub = rel[sel]
        ax.plot([0, 1], [0, 1], color="black", lw=0.8, ls="--", label="perfect calibration")
        for name in sorted(sub["filter"].unique()):
            g, st = sub[sub["filter"] == name].sort_values("bin_low"), styles[name]
            ax.plot(
                g["mean_r"],
                g["frequency"],
                marker=st.marker,
                color=st.color,
                ms=5,
                lw=1.2,
                label=f"{name} ({int(g['count'].sum())} Bernoullis)",
            )
        c = cal[(cal["scenario"] == scenario) & (cal["clutter"] == clutter) & (cal["pd"] == pd_)]
        none = sorted(set(c["filter"]) - set(sub["filter"]))
        if none:
            ax.text(
                0.98,
                0.02,
                f"no Bernoulli scored: {', '.join(none)}\n(none, or NLL infinite in every run)",
                transform=ax.transAxes,
                ha="right",
                va="bottom",
                fontsize=6,
            )
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_aspect("equal")
        ax.set_title(_setting_title(scenario, clutter, pd_), fontsize=8)
        _legend(ax, loc="upper left")
    for ax in axes.flat[len(settings) :]:
        ax.set_visible(False)
    for ax in axes[-1, :]:
        ax.set_xlabel("existence probability r (bin mean)")
    for ax in axes[:, 0]:
        ax.set_ylabel("frequency: explains a true object")
    fig.suptitle("Existence calibration, pooled over seeds (10 bins of r)", fontsize=9)
    return fig


def _values(cal, measure: str):
    return cal[cal["measure"] == measure].set_index(["scenario", "clutter", "pd", "filter"])["value"]


def _dodge(filters) -> dict[str, float]:
    """Horizontal offsets (in category units) that keep filters side by side within a setting."""
    n = len(filters)
    return {f: (i - (n - 1) / 2) * 0.7 / max(n, 1) for i, f in enumerate(filters)}


def _setting_axes(axes, settings) -> None:
    """x ticks naming each (scenario, clutter, pd) setting, limits and a legend on every panel."""
    labels = [
        f"clutter {c:g}" if len({s[0] for s in settings}) == 1 else f"{s} {c:g}" for s, c, _ in settings
    ]
    for ax in axes:
        ax.set_xticks(range(len(settings)), labels, rotation=30 if len(settings) > 4 else 0)
        ax.set_xlim(-0.6, len(settings) - 0.4)
        _legend(ax)


def fig_nees(calibration):
    """State consistency pooled over seeds: ANEES with its chi-square 95 % interval, and the inside share.

    Left: per setting (x) and filter, the average NEES over the pooled pairs
    (log scale) with the interval a consistent posterior's ANEES falls in with
    probability 0.95 (grey bar, chi2(N d) / N) and the state dimension d
    (dotted). Right: the share of pairs inside their 95 % ellipse, against 0.95.
    """
    plt, _ = _plt()
    cal = _base_setting(calibration)
    _require(cal, ["anees", "nees_inside95_share"], "calibration")
    anees, low, high = _values(cal, "anees"), _values(cal, "anees_ci95_low"), _values(cal, "anees_ci95_high")
    share, pairs, dof = (
        _values(cal, "nees_inside95_share"),
        _values(cal, "nees_pairs"),
        _values(cal, "nees_dof"),
    )
    settings = sorted({k[:3] for k in anees.index})
    filters = sorted({k[3] for k in anees.index})
    styles, dodge = filter_styles(calibration["filter"].unique()), _dodge(filters)
    fig, axes = plt.subplots(1, 2, figsize=(8.0, 3.4), constrained_layout=True)
    for name in filters:
        st = styles[name]
        keys = [(*s, name) for s in settings if (*s, name) in anees.index]
        xs = np.array([settings.index(k[:3]) + dodge[name] for k in keys])
        n = int(sum(pairs[k] for k in keys))
        axes[0].vlines(xs, [low[k] for k in keys], [high[k] for k in keys], color="#BBBBBB", lw=6)
        for ax, values in ((axes[0], anees), (axes[1], share)):
            ax.plot(
                xs,
                [values[k] for k in keys],
                marker=st.marker,
                color=st.color,
                ls="none",
                ms=6,
                label=f"{name} ({n} pairs)",
            )
    dims = sorted({round(dof[k] / pairs[k]) for k in anees.index})
    for d in dims:
        axes[0].axhline(d, color="black", ls=":", lw=0.9, label=f"d = {d} (consistent)")
    axes[0].plot([], [], color="#BBBBBB", lw=6, label="95 % interval if consistent")
    axes[1].axhline(0.95, color="black", ls=":", lw=0.9, label="0.95 (consistent)")
    from matplotlib.ticker import FormatStrFormatter, LogLocator, NullFormatter

    axes[0].set_yscale("log")
    axes[0].margins(y=0.6)  # headroom for the legend above the intervals
    # 1-2-5 ticks: an ANEES range within one decade would otherwise show a single label
    axes[0].yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    axes[0].yaxis.set_major_formatter(FormatStrFormatter("%g"))
    axes[0].yaxis.set_minor_formatter(NullFormatter())  # labelled minor ticks overlap on a log axis
    axes[0].set_ylabel("ANEES (average NEES over pairs)")
    axes[1].set_ylabel("share of pairs inside their 95 % ellipse")
    axes[1].set_ylim(0, 1.05)
    _setting_axes(axes, settings)
    axes[0].set_title("ANEES, pooled over seeds", fontsize=8)
    axes[1].set_title("inside the 95 % ellipse, pooled over seeds", fontsize=8)
    return fig


def fig_cardinality(calibration):
    """Cardinality calibration pooled over seeds: coverage of the central 90 % interval, and log score.

    Per setting (x) and filter: left, the share of steps whose true count
    lies in the posterior's central 90 % interval against 0.90; right, the
    mean log score -log P(true count) (nats; +inf drawn at the top edge).
    """
    plt, _ = _plt()
    cal = _base_setting(calibration)
    _require(cal, ["cardinality_coverage90", "cardinality_log_score"], "calibration")
    cover, score = _values(cal, "cardinality_coverage90"), _values(cal, "cardinality_log_score")
    steps = _values(cal, "cardinality_steps")
    settings = sorted({k[:3] for k in cover.index})
    filters = sorted({k[3] for k in cover.index})
    styles, dodge = filter_styles(calibration["filter"].unique()), _dodge(filters)
    fig, axes = plt.subplots(1, 2, figsize=(8.0, 3.4), constrained_layout=True)
    infinite = []
    for name in filters:
        st = styles[name]
        keys = [(*s, name) for s in settings if (*s, name) in cover.index]
        xs = np.array([settings.index(k[:3]) + dodge[name] for k in keys])
        n = int(sum(steps[k] for k in keys))
        axes[0].plot(
            xs,
            [cover[k] for k in keys],
            marker=st.marker,
            color=st.color,
            ls="none",
            ms=6,
            label=f"{name} ({n} steps)",
        )
        s = np.array([score[k] for k in keys])
        fin = np.isfinite(s)
        axes[1].plot(
            xs[fin],
            s[fin],
            marker=st.marker,
            color=st.color,
            ls="none",
            ms=6,
            label=f"{name} ({n} steps)" + ("" if fin.all() else f" (inf in {(~fin).sum()} settings)"),
        )
        infinite.append((xs[~fin], st))
    for xs, st in infinite:
        axes[1].plot(
            xs,
            np.full(len(xs), 0.97),
            marker="^",
            mfc="none",
            ls="none",
            color=st.color,
            ms=8,
            transform=axes[1].get_xaxis_transform(),
        )
        for xv in xs:
            axes[1].annotate(
                "inf",
                (xv, 0.97),
                xycoords=axes[1].get_xaxis_transform(),
                xytext=(6, -3),
                textcoords="offset points",
                fontsize=7,
                color=st.color,
            )
    axes[0].axhline(0.90, color="black", ls=":", lw=0.9, label="0.90 (calibrated)")
    axes[0].set_ylim(0, 1.05)
    axes[0].set_ylabel("coverage of the central 90 % interval")
    axes[1].set_ylabel("log score -log P(true count) (nats)")
    axes[1].margins(y=0.35)  # headroom for the legend
    _setting_axes(axes, settings)
    axes[0].set_title("cardinality interval coverage, pooled over seeds", fontsize=8)
    axes[1].set_title("cardinality log score, mean over pooled steps", fontsize=8)
    return fig
