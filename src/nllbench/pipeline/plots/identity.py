"""What identity uncertainty is worth: the identity study's figure and caption
(``docs/trajectory_filters.md``).

Reads the study's rows, summary and extra-cost tables
(:mod:`nllbench.pipeline.identity_study`) and computes nothing.
"""

from __future__ import annotations

import textwrap

import numpy as np

import nllbench.pipeline.plots.style as style

#: The panels: (title, measure of a labelled filter, measure of a trajectory filter, y label).
PANELS = (
    (
        "trajectory NLL (full state)",
        "labelled-output (full)",
        "trajectory density (full)",
        "NLL of the true trajectories (nats)",
    ),
    ("trajectory GOSPA (estimates)", "T-GOSPA", "T-GOSPA", "T-GOSPA (position)"),
    ("IDF1 (estimates)", "IDF1", "IDF1", "IDF1 (higher is better)"),
)
#: How each kind of filter's NLL is named in the caption.
KIND_NLL = {"labelled": "labelled-output NLL", "trajectory": "trajectory-density NLL"}
#: What each kind of filter is and scores, in the legend.
KIND_LEGEND = {
    "labelled": "per-frame filter, labelled-output trajectory NLL",
    "trajectory": "trajectory filter, exact trajectory-density NLL",
}
#: Condition labels on the x axis.
CONDITION_LABELS = {"separated": "objects kept apart", "coalescence": "objects meet"}
CONDITION_SHORT = {"separated": "apart", "coalescence": "meet"}


def _series(summary, name: str, measure: str):
    sel = style.pick(summary, filter=name, measure=measure)
    order = {c: i for i, c in enumerate(CONDITION_LABELS)}
    sel = sel.assign(_c=sel["condition"].map(order)).sort_values("_c")
    return sel


def fig_identity(rows, summary, names, linthresh: float = 1000.0):
    """Three panels (trajectory NLL, T-GOSPA, IDF1) against the condition (kept apart, meet).

    One line per filter of ``names`` (its median over seeds, bars: interquartile range), each seed's
    value a faint dot; the NLL panel has a symmetric-log axis (linear within ``linthresh`` nats).
    """
    plt, _ = style.pyplot()
    styles = style.filter_styles(names)
    kinds = dict(zip(summary["filter"], summary["kind"], strict=False))
    fig, axes = plt.subplots(1, len(PANELS), figsize=(11, 4.2), layout="constrained")
    xs = np.arange(len(CONDITION_LABELS))
    for p, (ax, (title, labelled, trajectory, ylabel)) in enumerate(zip(axes, PANELS, strict=True)):
        notes = []
        for i, name in enumerate(names):
            kind = kinds.get(name, "labelled")
            measure = trajectory if kind == "trajectory" else labelled
            st = styles[name]
            sel = _series(summary, name, measure)
            if sel.empty:
                continue
            dx = (i - (len(names) - 1) / 2) * 0.04
            runs = style.pick(rows, filter=name, measure=measure)
            for c, cond in enumerate(CONDITION_LABELS):
                v = runs[runs["condition"] == cond]["value"].to_numpy(float)
                if (~np.isfinite(v)).any():  # counted in the title, never dropped silently
                    notes.append(f"{name} {(~np.isfinite(v)).sum()}/{len(v)} {CONDITION_SHORT[cond]}")
                v = v[np.isfinite(v)]
                ax.plot(
                    np.full(len(v), c + dx), v, ls="none", marker=st.marker, color=st.color, alpha=0.25, ms=4
                )
            med = sel["median"].to_numpy(float)
            err = np.vstack([med - sel["q25"].to_numpy(float), sel["q75"].to_numpy(float) - med])
            label = f"{name}: {KIND_LEGEND[kind]}" if p == 0 else None
            ax.errorbar(
                xs + dx, med, yerr=err, color=st.color, marker=st.marker, ms=7, lw=1.8, capsize=3, label=label
            )
        ax.set_xticks(xs, list(CONDITION_LABELS.values()))
        ax.set_xlim(-0.4, len(xs) - 0.6)
        note = textwrap.fill("infinite, not drawn: " + ", ".join(notes), 48) if notes else ""
        ax.set_title(title + ("\n" + note if note else ""), fontsize=9)
        ax.set_ylabel(ylabel)
        if p == 0:
            ax.set_yscale("symlog", linthresh=linthresh)
    style.legend_outside(fig, where="below")
    return fig


def _nats(x: float) -> str:
    return "inf" if not np.isfinite(x) else f"{x:,.0f}"


def identity_caption(extra, summary, names, seeds: int, clutter_rate: float, steps: int, q: int) -> str:
    """The figure's caption from the run's numbers: what it shows, then each filter's cost of a meeting."""
    kinds = dict(zip(summary["filter"], summary["kind"], strict=False))
    head = (
        f"What identity uncertainty is worth. Scenario williams15 ({steps} steps, clutter {clutter_rate:g} "
        f"per scan), {style.plural(seeds, 'seed')}: each seed is simulated once with its four objects "
        "meeting around step 39 and once with the same objects kept apart (moved by a fixed offset each, "
        "same motion and measurement noise), and every filter runs on the same measurements. Left: the "
        "negative log-likelihood of the true set of trajectories (full state; lower is better): for "
        "per-frame filters the labelled-output trajectory NLL (each label one trajectory Bernoulli), for "
        f"trajectory filters the exact trajectory-density NLL (Q = {q}). Middle: trajectory GOSPA of the "
        "estimates; right: IDF1. Lines: median over seeds, bars: interquartile range, dots: each seed."
    )
    parts = []
    for name in names:
        kind = kinds.get(name, "labelled")
        measure = "trajectory density (full)" if kind == "trajectory" else "labelled-output (full)"
        sel = style.pick(extra, filter=name, measure=measure)
        if sel.empty:
            continue
        row = sel.iloc[0]
        inf = f", infinite in {int(row['infinite'])}" if row["infinite"] else ""
        parts.append(f"{name} {_nats(row['median_extra'])} nats ({KIND_NLL[kind]}{inf})")
    body = (
        " In this run, the median extra cost of a meeting (coalescence minus kept apart, paired by seed): "
        + "; ".join(parts)
        + "."
        if parts
        else ""
    )
    return head + body
