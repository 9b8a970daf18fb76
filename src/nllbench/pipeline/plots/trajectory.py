"""Report section 2, the filters: the trajectory NLL beside the per-frame NLL, IDF1 and HOTA.

The trajectory NLL (``docs/trajectory.md``) is the one uncertainty-aware
measure that sees identities; the figure sets it next to the per-frame NLL
(uncertainty-aware, blind to identity) and the identity measures of the
point estimates (IDF1, HOTA), so that a filter's place can be compared
across the four. Filters without track labels (PHD, CPHD) have no trajectory
NLL: they are named "n/a" in its panel, never drawn as a number.
"""

from __future__ import annotations

import nllbench.pipeline.plots.style as style
from nllbench.measures.declarations import declared_scores

_SCORES = {s.name: s for s in declared_scores()}
#: The panels: (measure, drawn at Q?, summary drawn, axis label); Q and the axis are the measures'
#: declarations'.
PANELS = tuple(
    (m, _SCORES[m].q_dependent, kind, _SCORES[m].axis)
    for m, kind in (
        ("trajectory_nll", style.ROBUST),
        ("nll", style.ROBUST),
        ("idf1", style.MEAN),
        ("hota", style.MEAN),
    )
)
#: Each panel's title: its measure's figure label, else its leaderboard heading.
TITLES = {m: _SCORES[m].label or _SCORES[m].leaderboard for m, *_ in PANELS}
#: What the figure shows (no claim about the run: the panels carry the numbers).
CAPTION = (
    "The trajectory NLL (docs/trajectory.md) beside the per-frame NLL and the identity measures, against"
    " the clutter rate (covariance scale 1). First panel: the negative log-likelihood of the true set of"
    " trajectories under each filter's labelled output, per run in nats (lower is better), at the largest"
    " Q, median and interquartile range over seeds; each label is one trajectory Bernoulli with, at each"
    " step, the filter's existence and Gaussian marginalised over its global hypotheses. Second: the"
    " per-frame NLL per step (median and IQR). Third and fourth: IDF1 and HOTA of the point estimates"
    " (mean and seeded 95 % bootstrap interval; higher is better). The per-frame NLL sums over each step's"
    " own associations and cannot see a label switch; the trajectory NLL can. PHD and CPHD posteriors carry"
    " no track labels: they have no trajectory NLL and are named n/a in its panel, never drawn as a number."
    " An infinite median is an open triangle labelled 'inf' at the top edge."
)


def fig_trajectory(summary, q: int):
    """Trajectory NLL, NLL (median, IQR), IDF1 and HOTA (mean, 95 % interval) against clutter, per filter.

    One row of four panels per (scenario, P_D), covariance scale 1, the NLL
    and the trajectory NLL at Q = ``q``. In the trajectory-NLL panel's title
    the filters of the study that have none (no track labels) are listed as
    "n/a"; an infinite median is an open triangle labelled "inf" at the top
    edge (:func:`~nllbench.pipeline.plots.style.draw_series`). One legend
    below the panels names each filter once, with the seeds whose trajectory
    NLL or NLL is infinite per clutter rate (:func:`legend_labels`), so that
    no legend covers data.
    """
    plt, _ = style.pyplot()
    style.require_measures(summary, ["trajectory_nll", "nll", "idf1", "hota"], "summary")
    base = summary[summary["cov_scale"] == 1.0]
    styles = style.filter_styles(summary["filter"].unique())
    groups = sorted({(str(s), float(p)) for s, p in zip(base["scenario"], base["pd"], strict=True)})
    fig, axes = plt.subplots(
        len(groups), len(PANELS), figsize=(3.0 * len(PANELS) + 0.6, 3.1 * len(groups) + 0.5), squeeze=False
    )
    filters = sorted(base["filter"].unique())
    for row, (scenario, pd_) in zip(axes, groups, strict=True):
        sub = style.pick(base, scenario=scenario, pd=pd_)
        for ax, (measure, at_q, kind, label) in zip(row, PANELS, strict=True):
            data = style.pick(sub, measure=measure, q=q if at_q else 0)
            if len(data):
                style.draw_series(
                    ax, data, "clutter", styles, kind, at="clutter", every=EVERY, measure=TITLES[measure]
                )
                ax.set_xticks(sorted(sub["clutter"].unique()))
            ax.set_xlabel("clutter rate (false measurements per scan)")
            ax.set_ylabel(label)
            qtext = f" (Q = {q})" if at_q else ""
            title = f"{scenario}, P_D {pd_:g}: {TITLES[measure]}{qtext}\n{kind[3]}"
            missing = [f for f in filters if f not in set(data["filter"])]
            if measure == "trajectory_nll" and missing:  # above the frame: it never covers a point
                title += "\nn/a (no track labels): " + ", ".join(missing)
            ax.set_title(title, fontsize=7)
    fig.set_layout_engine("constrained")
    rows = [(f"{scenario}, P_D {pd_:g}", row[:2]) for row, (scenario, pd_) in zip(axes, groups, strict=True)]
    style.legend_outside(fig, *legend_labels(rows))
    return style.captioned(fig, trajectory_caption(summary, q))


#: How the legend notes name a note's points when they are all of a row's clutter rates.
EVERY = "every clutter rate"


def legend_labels(rows) -> tuple[list, list[str]]:
    """One legend entry per filter: its line, its name and the infinite seeds of every row's NLL panels.

    ``rows`` is a list of (row name, panels), the panels those whose lines
    carry :func:`~nllbench.pipeline.plots.style.inf_note` labels ("pmbm
    (trajectory NLL inf in 2/3 seeds at clutter 10)"). A filter's notes are
    joined with "; ", each prefixed by its row's name when the figure has
    more than one row: "pmbm (trajectory NLL inf in 2/3 seeds at clutter 10;
    NLL inf in 1/3 seeds at clutter 10)".
    """
    handles: dict[str, object] = {}
    notes: dict[str, list[str]] = {}
    for name, panels in rows:
        for ax in panels:
            for handle, label in zip(*ax.get_legend_handles_labels(), strict=True):
                filt, _, note = label.partition(" (")
                handles.setdefault(filt, handle)
                notes.setdefault(filt, [])
                if note:
                    notes[filt].append(f"{name}: {note[:-1]}" if len(rows) > 1 else note[:-1])
    names = sorted(handles)
    labels = [f + (f" ({'; '.join(notes[f])})" if notes[f] else "") for f in names]
    return [handles[f] for f in names], labels


def trajectory_caption(summary, q: int) -> str:
    """:data:`CAPTION`, then what this run's numbers say: lowest median trajectory NLL and per-frame
    NLL per clutter rate, the filters without track labels, and infinite runs."""
    from nllbench.pipeline.plots.caption_text import best_per, paragraphs, per_filter, run_paragraph
    from nllbench.pipeline.plots.captions import infinite_runs

    base = summary[(summary["cov_scale"] == 1.0) & (summary["q"] == q)]
    traj = base[base["measure"] == "trajectory_nll"]
    nll = base[base["measure"] == "nll"]
    every = EVERY
    found = []
    if len(traj):
        best = best_per(per_filter(traj, "clutter", "median"), "clutter", every)
        found.append(f"Lowest median trajectory NLL: {best}.")
    found.append(
        f"Lowest median per-frame NLL: {best_per(per_filter(nll, 'clutter', 'median'), 'clutter', every)}."
    )
    missing = sorted(set(nll["filter"]) - set(traj["filter"]))
    if missing:
        found.append(f"No trajectory NLL (no track labels): {style.join_words(missing)}.")
    inf = infinite_runs(traj, "clutter", "clutter", every)
    if inf:
        found.append(f"Infinite trajectory NLL: {'; '.join(inf)}.")
    return paragraphs(CAPTION, run_paragraph(found))
