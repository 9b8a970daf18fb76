"""Report section 2, the filters: NLL and GOSPA against clutter and Q, the NLL and T-GOSPA
decompositions, HOTA against NLL and the measures' rank agreement."""

from __future__ import annotations

import numpy as np

import nllbench.pipeline.plots.captions as captions
import nllbench.pipeline.plots.style as style
from nllbench.measures.names import TGOSPA_TERMS
from nllbench.pipeline.plots.captions import NO_IDENTITY
from nllbench.pipeline.statistics import rank_agreement

#: Fill of the decomposition's note on a filter whose NLL is infinite in every seed (no bar drawn).
ALL_INFINITE_FILL = "#F6D3D3"


def fig_vs_clutter(summary, q: int):
    """NLL (median, IQR) and GOSPA (mean, bootstrap interval) against the clutter rate, per filter.

    One legend below both panels (the NLL panel's labels, which count the
    seeds with an infinite NLL per clutter rate), so that no legend covers a
    line. The caption (:func:`~nllbench.pipeline.plots.captions.clutter_caption`)
    is attached for :func:`~nllbench.pipeline.plots.style.save`.
    """
    plt, _ = style.pyplot()
    styles = style.filter_styles(summary["filter"].unique())
    fig, axes = plt.subplots(1, 2, figsize=(7.2, 3.9), constrained_layout=True)
    panels = (
        ("nll", q, style.ROBUST, f"NLL (Q = {q})"),
        ("gospa_mean", 0, style.MEAN, style.MEASURE_LABEL["gospa_mean"]),
    )
    for ax, (measure, qq, kind, title) in zip(axes, panels, strict=True):
        data = style.pick(summary, measure=measure, q=qq, cov_scale=1.0)
        style.draw_series(ax, data, "clutter", styles, kind, at="clutter", every="every clutter rate")
        ax.set_xlabel("clutter rate (false measurements per scan)")
        ax.set_ylabel(style.AXIS_LABEL[measure])
        ax.set_title(f"{title}: {kind[3]}", fontsize=8)
        ax.set_xticks(sorted(data["clutter"].unique()))
    style.legend_outside(fig, *axes[0].get_legend_handles_labels())
    return style.captioned(fig, captions.clutter_caption(summary, q))


def fig_decomposition(summary, q: int):
    """NLL terms per filter and clutter rate: each term's mean over the seeds where it is finite.

    Panels share the y-axis. Where every seed's NLL is finite, the stacked bar
    is the mean NLL. A filter whose NLL is infinite in some seeds is annotated
    "NLL inf in k/n seeds" with the term that made it infinite (that term's
    bar averages its finite seeds, the other terms' bars every seed). A filter
    infinite in every seed has no bar at all, only a shaded box.
    """
    plt, _ = style.pyplot()
    data = summary[(summary["q"] == q) & (summary["cov_scale"] == 1.0)]
    settings = sorted(data["clutter"].unique())
    filters = sorted(data["filter"].unique())
    fig, axes = style.clutter_panels(plt, len(settings))
    boxed = []  # bar tops that carry a note
    for ax, clutter in zip(axes[0], settings, strict=True):
        sub = data[data["clutter"] == clutter]
        nll = {f: sub[(sub["filter"] == f) & (sub["measure"] == "nll")] for f in filters}
        all_infinite = np.array(
            [
                len(nll[f]) > 0 and int(nll[f]["n_infinite"].iloc[0]) == int(nll[f]["n"].iloc[0])
                for f in filters
            ]
        )
        pos, neg = np.zeros(len(filters)), np.zeros(len(filters))
        for term in style.DECOMPOSITION_TERMS:
            rows = [sub[(sub["filter"] == f) & (sub["measure"] == term)] for f in filters]
            vals = np.array([float(r["finite_mean"].iloc[0]) if len(r) else 0.0 for r in rows])
            # every seed infinite: no bar at all (marked below), whatever the other terms' values
            vals = np.where(all_infinite, 0.0, np.nan_to_num(vals, nan=0.0))
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
            total = nll[f]
            if total.empty or int(total["n_infinite"].iloc[0]) == 0:
                continue
            k, n = int(total["n_infinite"].iloc[0]), int(total["n"].iloc[0])
            where = {"scenario": total["scenario"].iloc[0], "clutter": clutter, "pd": total["pd"].iloc[0]}
            culprits = [t.removeprefix("nll_") for t in captions.infinite_terms(summary, f, q, where)]
            boxed.append(pos[i])
            ax.annotate(  # on top of the filter's bar (at 0: where its bar would be)
                f"NLL inf in\n{k}/{n} seeds;\n{'term' if len(culprits) == 1 else 'terms'}: "
                + ",\n".join(culprits or ["?"]),
                (i, pos[i]),
                xytext=(0, 3),
                textcoords="offset points",
                ha="center",
                va="bottom",
                fontsize=6,
                color="black",
                # every seed infinite: a shaded box where the bar would be
                bbox={"boxstyle": "round", "fc": ALL_INFINITE_FILL if k == n else "white", "ec": "#C44E52"},
            )
        ax.axhline(0, color="black", lw=0.6)
        ax.set_title(f"clutter {clutter:g}", fontsize=9)
        ax.tick_params(axis="x", rotation=45)
        style.color_ticks(ax, filters, style.filter_styles(filters))
    axes[0][0].set_ylabel(f"NLL term per step (nats, Q = {q})\nmean over the seeds where the term is finite")
    if boxed:  # room above the noted bars for their three-line notes (about a quarter of the panel)
        low, high = axes[0][0].get_ylim()
        axes[0][0].set_ylim(low, max(high, max(boxed) + 0.35 * (max(high, max(boxed)) - low)))
    axes[0][-1].legend(
        fontsize=7, title="NLL term", title_fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1)
    )
    return style.captioned(fig, captions.decomposition_caption(summary, q))


def fig_nll_vs_q(summary):
    """NLL (median, IQR) against the Murty budget Q, one panel per filter; dotted: the exact NLL.

    Each panel has its own y-scale: the figure compares Q values within a
    filter (a heavy-tailed filter would otherwise flatten the others). The
    panel's title names the filter (with its infinite seeds); one legend below
    the panels names the dotted line. Measured times are not drawn here (see
    :func:`fig_timing`), so this figure is the same bytes however the jobs ran.
    """
    plt, _ = style.pyplot()
    from matplotlib.lines import Line2D

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
        nrows, ncols, figsize=(2.6 * ncols + 0.6, 2.5 * nrows + 0.7), squeeze=False, constrained_layout=True
    )
    qs = sorted(nll["q"].unique())
    any_exact = False
    for ax, name in zip(axes.flat, filters, strict=False):
        data = nll[nll["filter"] == name]
        style.draw_series(ax, data, "q", styles, style.ROBUST, at="Q =", every="every Q")
        ex = exact[exact["filter"] == name]
        if len(ex) and np.isfinite(ex["median"].iloc[0]):
            any_exact = True
            ax.axhline(
                ex["median"].iloc[0], ls=":", lw=1.2, color=styles[name].color, label="exact NLL (median)"
            )
        ax.set_xscale("log")
        ax.set_xticks(qs, [str(int(v)) for v in qs])
        ax.minorticks_off()
        if not np.isfinite(data["median"].to_numpy(dtype=float)).any():  # nothing finite: no scale to read
            ax.set_yticks([])
            ax.text(
                0.5, 0.5, "no finite median", transform=ax.transAxes, ha="center", fontsize=7, color="#555"
            )
        note = style.inf_note(data, "q", "Q =", "every Q").strip()
        ax.set_title(
            name + (f"\n{note}" if note else ""), fontsize=9 if not note else 7, color=styles[name].color
        )
    for ax in axes.flat[len(filters) :]:
        ax.set_visible(False)
    for ax in axes[:, 0]:
        ax.set_ylabel(style.AXIS_LABEL["nll"])
    for ax in axes[-1, :]:
        ax.set_xlabel("Q (associations per hypothesis)")
    if any_exact:
        handle = Line2D([], [], ls=":", lw=1.2, color="#555555")
        style.legend_outside(
            fig, [handle], ["dotted: the filter's median exact NLL (subset dynamic programme)"]
        )
    fig.suptitle(f"NLL against Q, clutter {clutter:g}: {style.ROBUST[3]}", fontsize=9)
    return style.captioned(fig, captions.q_caption(summary))


def fig_tgospa(summary):
    """Trajectory-GOSPA decomposition per filter and clutter rate (mean over seeds of each run's sum).

    Each run's per-step terms (localisation, missed, false, switches) are
    summed over its steps, so a bar's height is the mean over seeds of
    ``tgospa ** p``; panels share the y-axis. Filters whose estimates carry no
    lasting identity (PHD, CPHD) are marked under their tick label.
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
        ax.set_xticks(range(len(filters)), [f"{f}*" if f in NO_IDENTITY else f for f in filters])
        ax.tick_params(axis="x", rotation=45)
        style.color_ticks(ax, filters, styles)
    axes[0][0].set_ylabel("T-GOSPA^p per run (position units^p)\nmean over seeds")
    axes[0][-1].legend(
        fontsize=7, title="T-GOSPA term", title_fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1)
    )
    if NO_IDENTITY & set(filters):
        fig.text(
            0.5,
            0.0,
            "* estimates without lasting track identities: T-GOSPA leaves most of them unassigned "
            "(missed and false objects; see the caption)",
            ha="center",
            va="top",
            fontsize=7,
        )
    return style.captioned(fig, captions.tgospa_caption(summary))


def fig_hota_vs_nll(summary, q: int):
    """HOTA (mean, 95 % bootstrap interval) against NLL (median, IQR): a point per filter and setting.

    A setting whose NLL median is +inf is drawn as an open marker in the
    column marked "inf" at the right edge (its HOTA is finite); the legend,
    below the panel, counts the filter's infinite seeds per clutter rate.
    """
    plt, _ = style.pyplot()
    style.require_measures(summary, ["hota"], "summary")
    base = summary[summary["cov_scale"] == 1.0]
    keys = ["scenario", "clutter", "pd", "filter"]
    nll = base[(base["measure"] == "nll") & (base["q"] == q)]
    ho = base[(base["measure"] == "hota") & (base["q"] == 0)]
    both = ho.merge(nll, on=keys, suffixes=("_h", "_n"), how="inner")
    styles = style.filter_styles(summary["filter"].unique())
    fig, ax = plt.subplots(figsize=(6.6, 4.4), constrained_layout=True)
    pending = []
    for name in sorted(both["filter"].unique()):
        g, st = both[both["filter"] == name], styles[name]
        x, y = g["median_n"].to_numpy(dtype=float), g["mean_h"].to_numpy(dtype=float)
        finite = np.isfinite(x)
        counts = g[["clutter", "n_infinite_n", "n_n"]].rename(
            columns={"n_infinite_n": "n_infinite", "n_n": "n"}
        )
        label = name + style.inf_note(counts, "clutter", "clutter", "every clutter rate")
        if name in NO_IDENTITY:
            label += " (no lasting track identities)"
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
            if len(y):
                style.mark_infinite(ax, y, st.color, edge="right")
        ax.set_xlim(right=right)
    ax.set_xlabel(f"NLL per step (nats, Q = {q}): median and IQR over seeds")
    ax.set_ylabel("HOTA: mean and 95 % bootstrap interval")
    style.legend_outside(fig)
    # a figure title: the "inf" column's label sits above the panel's frame
    fig.suptitle("HOTA against NLL: one point per filter and setting (covariance scale 1)", fontsize=8)
    return style.captioned(fig, captions.hota_caption(summary, q))


def fig_rank_agreement(summary, q: int):
    """Heat map of rank agreement (Kendall tau) between measures across filters and settings."""
    plt, sns = style.pyplot()
    # the measures of the map: one value per filter and setting for every filter
    measures, mat = rank_agreement(summary, q, list(style.MEASURE_LABEL))
    # a measure no other can be compared with (P-GOSPA with fewer than three multi-Bernoulli
    # filters, say) is left out and named in the caption, not drawn as an empty row
    off = np.isfinite(np.asarray(mat, dtype=float)) & ~np.eye(len(measures), dtype=bool)
    keep = off.any(axis=1) if off.any() else np.ones(len(measures), dtype=bool)
    left_out = [m for m, k in zip(measures, keep, strict=True) if not k]
    measures, mat = [m for m, k in zip(measures, keep, strict=True) if k], np.asarray(mat)[keep][:, keep]
    n = len(measures)
    fig, ax = plt.subplots(figsize=(max(6.0, 0.54 * n), max(5.0, 0.45 * n)))
    labels = [style.MEASURE_LABEL[m] for m in measures]
    sns.heatmap(
        mat,
        vmin=-1,
        vmax=1,
        cmap="vlag",
        annot=True,
        fmt=".2f",
        annot_kws={"fontsize": 7} if n > 11 else None,  # beyond 11 measures the numbers need room
        xticklabels=labels,
        yticklabels=labels,
        ax=ax,
    )
    ax.set_title(f"Agreement of filter rankings (Kendall tau; NLL at Q = {q})")
    return style.captioned(fig, captions.ranks_caption(summary, q, measures, mat, left_out))
