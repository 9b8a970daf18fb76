"""Report section 2, the filters: NLL and GOSPA against clutter and Q, the NLL and T-GOSPA
decompositions, HOTA against NLL and the measures' rank agreement."""

from __future__ import annotations

import numpy as np

import nllbench.pipeline.plots.style as style
from nllbench.measures.names import TGOSPA_TERMS
from nllbench.pipeline.statistics import rank_agreement


def fig_vs_clutter(summary, q: int):
    """NLL (median, IQR) and GOSPA (mean, bootstrap interval) against the clutter rate, per filter."""
    plt, _ = style.pyplot()
    styles = style.filter_styles(summary["filter"].unique())
    fig, axes = plt.subplots(1, 2, figsize=(7.2, 3.2), constrained_layout=True)
    panels = (("nll", q, style.ROBUST, f"NLL (Q = {q})"), ("gospa_mean", 0, style.MEAN, "GOSPA"))
    for ax, (measure, qq, kind, title) in zip(axes, panels, strict=True):
        data = style.pick(summary, measure=measure, q=qq, cov_scale=1.0)
        style.draw_series(ax, data, "clutter", styles, kind)
        ax.set_xlabel("clutter rate (false measurements per scan)")
        ax.set_ylabel(style.AXIS_LABEL[measure])
        ax.set_title(f"{title}: {kind[3]}", fontsize=8)
        ax.set_xticks(sorted(data["clutter"].unique()))
        style.legend(ax)
    return fig


def fig_decomposition(summary, q: int):
    """NLL terms per filter and clutter rate (means over the runs whose NLL is finite).

    Panels share the y-axis. A filter whose NLL is infinite in some runs is
    annotated "inf in k/n runs" with the term that made it infinite; a filter
    infinite in every run has no finite bar, only a hatched marker.
    """
    plt, _ = style.pyplot()
    data = summary[(summary["q"] == q) & (summary["cov_scale"] == 1.0)]
    settings = sorted(data["clutter"].unique())
    filters = sorted(data["filter"].unique())
    fig, axes = style.clutter_panels(plt, len(settings))
    for ax, clutter in zip(axes[0], settings, strict=True):
        sub = data[data["clutter"] == clutter]
        pos, neg = np.zeros(len(filters)), np.zeros(len(filters))
        for term in style.DECOMPOSITION_TERMS:
            rows = [sub[(sub["filter"] == f) & (sub["measure"] == term)] for f in filters]
            vals = np.array([float(r["finite_mean"].iloc[0]) if len(r) else 0.0 for r in rows])
            vals = np.nan_to_num(vals, nan=0.0)  # all runs infinite: no finite bar (marked below)
            base = np.where(vals >= 0, pos, neg)
            ax.bar(
                filters,
                vals,
                bottom=base,
                color=style.TERM_COLORS[term],
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
                for t in style.DECOMPOSITION_TERMS
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
        style.color_ticks(ax, filters, style.filter_styles(filters))
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
    plt, _ = style.pyplot()
    styles = style.filter_styles(summary["filter"].unique())
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
        style.draw_series(ax, nll[nll["filter"] == name], "q", styles, style.ROBUST)
        ex = exact[exact["filter"] == name]
        if len(ex) and np.isfinite(ex["median"].iloc[0]):
            ax.axhline(
                ex["median"].iloc[0], ls=":", lw=1.2, color=styles[name].color, label="exact NLL (median)"
            )
        ax.set_xscale("log")
        ax.set_xticks(qs, [str(int(v)) for v in qs])
        ax.minorticks_off()
        ax.set_title(name, fontsize=9, color=styles[name].color)
        style.legend(ax)
    for ax in axes.flat[len(filters) :]:
        ax.set_visible(False)
    for ax in axes[:, 0]:
        ax.set_ylabel(style.AXIS_LABEL["nll"])
    for ax in axes[-1, :]:
        ax.set_xlabel("Q (associations per hypothesis)")
    fig.suptitle(f"NLL against Q, clutter {clutter:g}: {style.ROBUST[3]}", fontsize=9)
    return fig


def fig_tgospa(summary):
    """Trajectory-GOSPA decomposition per filter and clutter rate (mean over seeds of each run's sum).

    Each run's per-step terms (localisation, missed, false, switches) are
    summed over its steps, so a bar's height is the mean over seeds of
    ``tgospa ** p``; panels share the y-axis.
    """
    plt, _ = style.pyplot()
    style.require_measures(summary, TGOSPA_TERMS, "summary")
    data = summary[(summary["q"] == 0) & (summary["cov_scale"] == 1.0)]
    data = data[data["measure"].isin(TGOSPA_TERMS)]
    settings = sorted(data["clutter"].unique())
    filters = sorted(data["filter"].unique())
    styles = style.filter_styles(filters)
    fig, axes = style.clutter_panels(plt, len(settings))
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
                color=style.TGOSPA_COLORS[term],
                width=0.7,
                label=term.removeprefix("tgospa_"),
            )
            bottom += vals
        ax.set_title(f"clutter {clutter:g}", fontsize=9)
        ax.tick_params(axis="x", rotation=45)
        style.color_ticks(ax, filters, styles)
    axes[0][0].set_ylabel("T-GOSPA^p per run (position units^p)\nmean over seeds")
    axes[0][-1].legend(
        fontsize=7, title="T-GOSPA term", title_fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1)
    )
    return fig


def fig_hota_vs_nll(summary, q: int):
    """HOTA (mean, 95 % bootstrap interval) against NLL (median, IQR): a point per filter and setting.

    A setting whose NLL median is +inf is drawn as an open marker at the
    right edge labelled "inf" (its HOTA is finite); the style.legend notes the
    filter's infinite runs.
    """
    plt, _ = style.pyplot()
    style.require_measures(summary, ["hota"], "summary")
    base = summary[summary["cov_scale"] == 1.0]
    keys = ["scenario", "clutter", "pd", "filter"]
    nll = base[(base["measure"] == "nll") & (base["q"] == q)]
    ho = base[(base["measure"] == "hota") & (base["q"] == 0)]
    both = ho.merge(nll, on=keys, suffixes=("_h", "_n"), how="inner")
    styles = style.filter_styles(summary["filter"].unique())
    fig, ax = plt.subplots(figsize=(5.0, 3.8), constrained_layout=True)
    pending = []
    for name in sorted(both["filter"].unique()):
        g, st = both[both["filter"] == name], styles[name]
        x, y = g["median_n"].to_numpy(dtype=float), g["mean_h"].to_numpy(dtype=float)
        finite = np.isfinite(x)
        k, n = int(g["n_infinite_n"].sum()), int(g["n_n"].sum())
        label = f"{name} (NLL inf in {k}/{n} runs)" if k else name
        style.points(ax, x[finite], y[finite], st, label)
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
            style.mark_infinite(ax, y, st.color, edge="right")
        ax.set_xlim(right=right)
    ax.set_xlabel(f"NLL per step (nats, Q = {q}): median and IQR over seeds")
    ax.set_ylabel("HOTA: mean and 95 % bootstrap interval")
    ax.set_title("HOTA against NLL: one point per filter and setting (covariance scale 1)", fontsize=8)
    style.legend(ax)
    return fig


def fig_rank_agreement(summary, q: int):
    """Heat map of rank agreement (Kendall tau) between measures across filters and settings."""
    plt, sns = style.pyplot()
    # the measures of the map: one value per filter and setting for every filter
    measures, mat = rank_agreement(summary, q, list(style.MEASURE_LABEL))
    fig, ax = plt.subplots(figsize=(6, 5))
    labels = [style.MEASURE_LABEL[m] for m in measures]
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
