"""Report section 3, calibration: NLL and GOSPA against the covariance scale, reliability diagrams,
NEES consistency and cardinality calibration (the pooled tables of :mod:`nllbench.pipeline.pooling`)."""

from __future__ import annotations

import numpy as np

import nllbench.pipeline.plots.captions as captions
import nllbench.pipeline.plots.captions_calibration as captions_calibration
import nllbench.pipeline.plots.style as style
from nllbench.pipeline.plots.style import calibration_note


def probe_q(summary) -> int:
    """The Q at which the covariance-scale probes were evaluated."""
    probed = summary[(summary["measure"] == "nll") & (summary["cov_scale"] != 1.0)]["q"].unique()
    if probed.size == 0:
        raise ValueError("summary: no covariance-scale probe (cov_scale != 1) was evaluated")
    return int(probed.max())


def fig_calibration(summary, q: int | None = None):
    """NLL (median, IQR) and GOSPA (mean, interval) against the covariance scale s, a row per clutter.

    One legend below the panels; a filter's label counts its infinite seeds
    per clutter rate and s (:func:`calibration_note`), so no legend covers a line.
    """
    plt, _ = style.pyplot()
    q = probe_q(summary) if q is None else q
    styles = style.filter_styles(summary["filter"].unique())
    clutters = sorted(summary["clutter"].unique())
    fig, axes = plt.subplots(
        len(clutters), 2, figsize=(7.2, 2.6 * len(clutters) + 0.9), squeeze=False, constrained_layout=True
    )
    nll = style.pick(summary, measure="nll", q=q)
    for row, clutter in zip(axes, clutters, strict=True):
        sub = summary[summary["clutter"] == clutter]
        style.draw_series(row[0], style.pick(sub, measure="nll", q=q), "cov_scale", styles, style.ROBUST)
        style.draw_series(row[1], style.pick(sub, measure="gospa_mean", q=0), "cov_scale", styles, style.MEAN)
        scales = sorted(sub[sub["measure"] == "gospa_mean"]["cov_scale"].unique())
        for ax, measure in zip(row, ("nll", "gospa_mean"), strict=True):
            ax.set_xscale("log")
            ax.set_xticks(scales, [f"{x:g}" for x in scales])
            ax.minorticks_off()
            ax.set_xlabel("covariance scale s (1: the filter's own)")
            ax.set_ylabel(style.AXIS_LABEL[measure])
            name = f"NLL (Q = {q})" if measure == "nll" else style.MEASURE_LABEL[measure]
            ax.set_title(f"{name}, clutter {clutter:g}", fontsize=8)
    handles, labels = [], []
    for h, label in zip(*axes[0][0].get_legend_handles_labels(), strict=True):
        name = label.split(" (")[0]  # the first row's own note counts that row only
        handles.append(h)
        labels.append(name + calibration_note(nll[nll["filter"] == name], len(clutters)))
    style.legend_outside(fig, handles, labels)
    fig.suptitle(f"NLL: {style.ROBUST[3]}; GOSPA: {style.MEAN[3]}", fontsize=8)
    return style.captioned(fig, captions.calibration_caption(summary, q))


#: A reliability line is drawn through at least this many non-empty bins (markers alone below it).
MIN_BINS_FOR_LINE = 3


def _base_setting(table):
    """The rows at the filters' own covariances and no tempering (the calibration probes aside)."""
    return table[(table["cov_scale"] == 1.0) & (table["temper"] == 1.0)]


def _setting_title(scenario, clutter, pd_) -> str:
    return f"{scenario}, clutter {clutter:g}, P_D {pd_:g}"


def fig_reliability(reliability, calibration):
    """Reliability diagrams pooled over seeds: per setting, each filter's mean r against frequency.

    One panel per (scenario, clutter, P_D); the diagonal is perfect
    calibration. A filter's bins are markers, joined by a line only when it
    has at least :data:`MIN_BINS_FOR_LINE` non-empty bins (a line through two
    bins would look like a calibration curve). Each panel's legend stands
    below it, with each filter's Bernoullis and bins, and names the filters
    without Bernoullis (PHD, CPHD).
    """
    plt, _ = style.pyplot()
    from matplotlib.lines import Line2D

    rel, cal = _base_setting(reliability), _base_setting(calibration)
    settings = sorted({tuple(r) for r in cal[["scenario", "clutter", "pd"]].itertuples(index=False)})
    styles = style.filter_styles(calibration["filter"].unique())
    ncols = min(3, len(settings))
    nrows = -(-len(settings) // ncols)
    fig, axes = plt.subplots(
        nrows,
        ncols,
        figsize=(3.2 * ncols + 0.4, 4.4 * nrows + 0.3),
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
            bins = len(g)
            ax.plot(
                g["mean_r"],
                g["frequency"],
                marker=st.marker,
                color=st.color,
                ms=5,
                lw=1.0 if bins >= MIN_BINS_FOR_LINE else 0.0,
                ls="-" if bins >= MIN_BINS_FOR_LINE else "none",
                zorder=2.5 if bins < MIN_BINS_FOR_LINE else 2.0,  # lone markers on top of the lines
                label=f"{name} ({style.plural(int(g['count'].sum()), 'Bernoulli')}, "
                f"{style.plural(bins, 'bin')})",
            )
        c = cal[(cal["scenario"] == scenario) & (cal["clutter"] == clutter) & (cal["pd"] == pd_)]
        none = sorted(set(c["filter"]) - set(sub["filter"]))
        handles, labels = ax.get_legend_handles_labels()
        if none:
            handles.append(Line2D([], [], ls="none"))
            labels.append(f"no Bernoulli scored: {', '.join(none)}")
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_aspect("equal")
        ax.set_title(_setting_title(scenario, clutter, pd_), fontsize=8)
        ax.legend(
            handles, labels, fontsize=6.5, loc="upper center", bbox_to_anchor=(0.5, -0.16), frameon=False
        )
    for ax in axes.flat[len(settings) :]:
        ax.set_visible(False)
    for ax in axes[-1, :]:
        ax.set_xlabel("existence probability r (bin mean)")
    for ax in axes[:, 0]:
        ax.set_ylabel("frequency: explains a true object")
    fig.suptitle("Existence calibration, pooled over seeds (10 bins of r)", fontsize=9)
    return style.captioned(fig, captions_calibration.reliability_caption(reliability, calibration))


def _values(cal, measure: str):
    return cal[cal["measure"] == measure].set_index(["scenario", "clutter", "pd", "filter"])["value"]


def _dodge(filters) -> dict[str, float]:
    """Horizontal offsets (in category units) that keep filters side by side within a setting."""
    n = len(filters)
    return {f: (i - (n - 1) / 2) * 0.7 / max(n, 1) for i, f in enumerate(filters)}


def _setting_axes(axes, settings) -> None:
    """x ticks naming each (scenario, clutter, pd) setting, limits, and one legend below the panels."""
    labels = [
        f"clutter {c:g}" if len({s[0] for s in settings}) == 1 else f"{s} {c:g}" for s, c, _ in settings
    ]
    for ax in axes:
        ax.set_xticks(range(len(settings)), labels, rotation=30 if len(settings) > 4 else 0)
        ax.set_xlim(-0.6, len(settings) - 0.4)
    style.legend_outside(axes[0].figure)


def fig_nees(calibration):
    """State consistency pooled over seeds: ANEES with its chi-square 95 % interval, and the inside share.

    Left: per setting (x) and filter, the average NEES over the pooled pairs
    (log scale) with the interval a consistent posterior's ANEES falls in with
    probability 0.95 (grey bar, chi2(N d) / N) and the state dimension d
    (dotted). Right: the share of pairs inside their 95 % ellipse, against 0.95.
    """
    plt, _ = style.pyplot()
    cal = _base_setting(calibration)
    style.require_measures(cal, ["anees", "nees_inside95_share"], "calibration")
    anees, low, high = _values(cal, "anees"), _values(cal, "anees_ci95_low"), _values(cal, "anees_ci95_high")
    share, pairs, dof = (
        _values(cal, "nees_inside95_share"),
        _values(cal, "nees_pairs"),
        _values(cal, "nees_dof"),
    )
    settings = sorted({k[:3] for k in anees.index})
    filters = sorted({k[3] for k in anees.index})
    styles, dodge = style.filter_styles(calibration["filter"].unique()), _dodge(filters)
    fig, axes = plt.subplots(1, 2, figsize=(8.0, 3.4), constrained_layout=True)
    for name in filters:
        st = styles[name]
        keys = [(*s, name) for s in settings if (*s, name) in anees.index]
        xs = np.array([settings.index(k[:3]) + dodge[name] for k in keys])
        n = int(sum(pairs[k] for k in keys))
        axes[0].vlines(xs, [low[k] for k in keys], [high[k] for k in keys], color="#BBBBBB", lw=6)
        for ax, values in ((axes[0], anees), (axes[1], share)):
            style.points(ax, xs, [values[k] for k in keys], st, f"{name} ({style.plural(n, 'pair')})")
    dims = sorted({round(dof[k] / pairs[k]) for k in anees.index})
    for d in dims:
        axes[0].axhline(d, color="black", ls=":", lw=0.9, label=f"left: ANEES = d = {d} (consistent)")
    axes[0].plot([], [], color="#BBBBBB", lw=6, label="left: 95 % interval of a consistent ANEES")
    axes[1].axhline(0.95, color="black", ls="-.", lw=0.9, label="right: share 0.95 (consistent)")
    from matplotlib.ticker import FormatStrFormatter, LogLocator, NullFormatter

    axes[0].set_yscale("log")
    axes[0].margins(y=0.1)
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
    return style.captioned(fig, captions_calibration.nees_caption(calibration))


def fig_cardinality(calibration):
    """Cardinality calibration pooled over seeds: coverage of the central 90 % interval, and log score.

    Per setting (x) and filter: left, the share of steps whose true count
    lies in the posterior's central 90 % interval against 0.90; right, the
    mean log score -log P(true count) (nats; +inf drawn at the top edge).
    """
    plt, _ = style.pyplot()
    cal = _base_setting(calibration)
    style.require_measures(cal, ["cardinality_coverage90", "cardinality_log_score"], "calibration")
    cover, score = _values(cal, "cardinality_coverage90"), _values(cal, "cardinality_log_score")
    steps = _values(cal, "cardinality_steps")
    settings = sorted({k[:3] for k in cover.index})
    filters = sorted({k[3] for k in cover.index})
    styles, dodge = style.filter_styles(calibration["filter"].unique()), _dodge(filters)
    fig, axes = plt.subplots(1, 2, figsize=(8.0, 3.4), constrained_layout=True)
    infinite = []
    for name in filters:
        st = styles[name]
        keys = [(*s, name) for s in settings if (*s, name) in cover.index]
        xs = np.array([settings.index(k[:3]) + dodge[name] for k in keys])
        n = int(sum(steps[k] for k in keys))
        s = np.array([score[k] for k in keys])
        fin = np.isfinite(s)
        bad = [k[:3] for k, f in zip(keys, fin, strict=True) if not f]
        note = f"; log score inf at {captions_calibration.where_text(bad)}" if bad else ""
        style.points(axes[0], xs, [cover[k] for k in keys], st, f"{name} ({style.plural(n, 'step')}{note})")
        style.points(axes[1], xs[fin], s[fin], st, f"{name} ({style.plural(n, 'step')}{note})")
        infinite.append((xs[~fin], st))
    for xs, st in infinite:
        if len(xs):
            style.mark_infinite(axes[1], xs, st.color)
    axes[0].axhline(0.90, color="black", ls=":", lw=0.9, label="left: coverage 0.90 (calibrated)")
    axes[0].set_ylim(0, 1.05)
    axes[0].set_ylabel("coverage of the central 90 % interval")
    axes[1].set_ylabel("log score -log P(true count) (nats)")
    axes[1].margins(y=0.1)
    _setting_axes(axes, settings)
    axes[0].set_title("cardinality interval coverage, pooled over seeds", fontsize=8)
    axes[1].set_title("cardinality log score, mean over pooled steps", fontsize=8)
    return style.captioned(fig, captions_calibration.cardinality_caption(calibration))
