"""Report section 2, the filters: the proper scores beyond the NLL set beside the NLL and GOSPA."""

from __future__ import annotations

import nllbench.pipeline.plots.style as style
from nllbench.measures.declarations import declared_scores
from nllbench.measures.names import PROPER_SCORES

#: The panels of :func:`fig_proper_scores`: (measure, its summary, title, y label: its declaration's axis).
PROPER_PANELS = tuple(
    (m, style.MEAN, title, style.AXIS_LABEL[m])
    for m, title in (
        ("energy_score_mean", "set energy score"),
        ("intensity_score_mean", "intensity score"),
        ("cardinality_rps_mean", "cardinality RPS"),
    )
)


#: The run means the figure needs; the intensity score may be absent (no closed form for the densities).
REQUIRED = ("energy_score_mean", "cardinality_rps_mean")
#: What the intensity panel says when no run has the intensity score.
NO_INTENSITY = (
    "no intensity score in these runs:\nno closed form for their densities\n"
    "(the metrics files' proper_scores attribute says why)"
)


def fig_proper_scores(summary, q: int):
    """NLL, GOSPA and the three proper scores against the clutter rate, one panel each, per filter.

    NLL: median and interquartile range over seeds at Murty budget ``q`` (an
    infinite median is an open triangle labelled "inf" at the top edge; the
    legend names each filter's infinite runs). GOSPA and the proper scores:
    mean and seeded 95 % bootstrap interval over seeds of the run means over
    steps. Covariance scale 1; the first scenario and P_D of the study (the
    title names them). A filter with no proper scores (evaluated without
    them) is absent from those panels only; where no run has the intensity
    score (no closed form for its densities), its panel says so.
    """
    missing = sorted(set(REQUIRED) - set(summary["measure"]))
    if missing:
        raise ValueError(
            f"summary: no rows for {missing} (metrics files evaluated without the proper scores? "
            "see --proper-scores, docs/scores.md)"
        )
    plt, _ = style.pyplot()
    styles = style.filter_styles(summary["filter"].unique())
    scenario = sorted(summary["scenario"].unique())[0]
    pd_ = sorted(summary[summary["scenario"] == scenario]["pd"].unique())[0]
    base = style.pick(summary, scenario=scenario, pd=pd_, cov_scale=1.0)
    panels = (
        ("nll", q, style.ROBUST, f"NLL (Q = {q})", style.AXIS_LABEL["nll"]),
        ("gospa_mean", 0, style.MEAN, style.MEASURE_LABEL["gospa_mean"], style.AXIS_LABEL["gospa_mean"]),
        *((m, 0, kind, title, label) for m, kind, title, label in PROPER_PANELS),
    )
    fig, axes = plt.subplots(2, 3, figsize=(9.6, 5.6), constrained_layout=True)
    for ax, (measure, qq, kind, title, ylabel) in zip(axes.flat, panels, strict=False):
        data = style.pick(base, measure=measure, q=qq)
        ax.set_xlabel("clutter rate (false measurements per scan)")
        ax.set_ylabel(ylabel)
        ax.set_title(f"{title}: {kind[3].replace(' over seeds', '')}", fontsize=8)
        if not len(data):  # the intensity score where no run has a closed form for it
            ax.text(0.5, 0.5, NO_INTENSITY, transform=ax.transAxes, ha="center", va="center", fontsize=7,
                    color="#555555", wrap=True)  # fmt: skip
            continue
        style.draw_series(ax, data, "clutter", styles, kind, at="clutter", every="every clutter rate")
        ax.set_xticks(sorted(data["clutter"].unique()))
    legend_ax = axes.flat[-1]
    handles, labels = axes.flat[0].get_legend_handles_labels()  # the NLL panel's: with the infinite runs
    scored = set(base[base["measure"].isin(PROPER_SCORES)]["filter"])
    labels = [t if t.split(" (")[0] in scored else f"{t} (no proper scores)" for t in labels]
    legend_ax.axis("off")
    legend_ax.legend(handles, labels, loc="center", fontsize=8, title="filter", title_fontsize=8)
    fig.suptitle(
        f"The proper scores beside the NLL and GOSPA ({scenario}, P_D {pd_:g}, covariance scale 1; "
        "lower is better; the three scores stay finite where the NLL is infinite)",
        fontsize=9,
    )
    return style.captioned(fig, proper_scores_caption(summary, q))


#: What the figure shows (true of any run; the run's numbers follow in "In this run").
CAPTION = (
    "The proper scores beyond the NLL (docs/scores.md) beside the NLL and GOSPA, per filter against the"
    " clutter rate, for the first scenario and P_D of the study (the title names them; the filters' own"
    " covariances). NLL: median and interquartile range over seeds at the largest Q; a median of +inf is an"
    " open triangle labelled 'inf' at the top edge and the legend names each filter's infinite runs. GOSPA"
    " and the three scores: mean over seeds of each run's mean over steps, with a seeded 95 % bootstrap"
    " interval. The set energy score is strictly proper (lowest in expectation only for the true"
    " multi-object density; estimated from samples of the posterior at every step, its Monte Carlo standard"
    " error in tables/runs.csv); the quadratic intensity score is proper for the intensity, the posterior's"
    " first moment; the ranked probability score of the number of objects is proper for the cardinality."
    " The first two embed sets with a Gaussian kernel of covariance s I (s = (c / 2)^2 by default, c the"
    " GOSPA cut-off). Lower is better for all five. Where a posterior gives the truth zero density (NLL ="
    " +inf) the three scores stay finite and rank it against the others."
)
#: Each proper score's name in the caption (its declaration's name in running text).
SCORE_NAMES = {s.name: s.caption or s.label for s in declared_scores() if s.name in PROPER_SCORES}


def proper_scores_caption(summary, q: int) -> str:
    """:data:`CAPTION`, then what this run's numbers say for the drawn setting: the lowest mean of each
    score per clutter rate, whether the energy score and the median NLL pick the same filter, and the
    finite scores of every filter whose NLL is infinite in some run."""
    from nllbench.pipeline.plots.caption_text import best_per, num, paragraphs, per_filter, run_paragraph
    from nllbench.pipeline.plots.captions import infinite_runs

    scenario = sorted(summary["scenario"].unique())[0]
    pd_ = sorted(summary[summary["scenario"] == scenario]["pd"].unique())[0]
    base = style.pick(summary, scenario=scenario, pd=pd_, cov_scale=1.0)
    every = "every clutter rate"
    found = []
    for m, name in SCORE_NAMES.items():
        rows = style.pick(base, measure=m, q=0)
        if len(rows):
            found.append(
                f"Lowest mean {name}: {best_per(per_filter(rows, 'clutter', 'mean'), 'clutter', every)}."
            )
    nll = style.pick(base, measure="nll", q=q)
    energy = per_filter(style.pick(base, measure="energy_score_mean", q=0), "clutter", "mean")
    median = per_filter(nll, "clutter", "median")
    shared = [x for x in sorted(energy) if x in median]
    if shared:
        same = sum(best_per({x: energy[x]}, "clutter", every) == best_per({x: median[x]}, "clutter", every)
                   for x in shared)  # fmt: skip
        found.append(
            f"The energy score and the median NLL pick the same best filter at {same} of {len(shared)} "
            "clutter rates."
        )
    for clause in infinite_runs(nll, "clutter", "clutter", every):
        f = clause.split(" in ")[0]
        values = [v[f] for v in energy.values() if f in v]
        if values:
            found.append(
                f"{clause.replace(' in ', ' has an infinite NLL in ', 1)}, yet a finite mean energy score "
                f"({num(min(values))} to {num(max(values))} over the clutter rates)."
            )
    return paragraphs(CAPTION, run_paragraph(found))
