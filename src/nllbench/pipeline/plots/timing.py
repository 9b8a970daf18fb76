"""Report section 5, timing: the measured time of the NLL evaluation (machine-dependent, so this
figure alone differs between runs)."""

from __future__ import annotations

import nllbench.pipeline.plots.captions as captions
import nllbench.pipeline.plots.style as style


def fig_timing(timing):
    """Measured time of the NLL part of the evaluation per run (varies between runs).

    Against Q when some filter was timed at several Q (an external tracker is
    scored once per Q); else one point per filter: a reference filter ranks
    every Q at once, so its time covers all of them.
    """
    plt, _ = style.pyplot()
    from matplotlib.ticker import FormatStrFormatter, LogLocator, NullLocator

    fig, ax = plt.subplots(figsize=(4.8, 3.4), constrained_layout=True)
    if len(timing):
        styles = style.filter_styles(timing["filter"].unique())
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
    return style.captioned(fig, captions.timing_caption(timing))


def _timing_against_q(ax, t, col, styles) -> None:
    for name, g in t.groupby("filter", sort=True):
        st = styles[name]
        ax.plot(g["q"], g[col], marker=st.marker, color=st.color, label=name)
    ax.set_xscale("log")
    qs = sorted(t["q"].unique())
    ax.set_xticks(qs, [str(int(v)) for v in qs])
    ax.minorticks_off()
    ax.set_xlabel("Q (associations per global hypothesis)")
    style.legend_outside(ax)


def _timing_per_filter(ax, t, col, styles) -> None:
    names = sorted(t["filter"].unique())
    for x, name in enumerate(names):
        st = styles[name]
        ax.plot([x], t.loc[t["filter"] == name, col].to_numpy(), marker=st.marker, color=st.color, ls="none")
    ax.set_xticks(range(len(names)), names)
    ax.set_xlim(-0.5, len(names) - 0.5)
    ax.set_xlabel(f"filter (every Q up to {int(t['q'].iloc[0])} ranked at once)")
