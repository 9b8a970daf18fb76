"""The propriety audit at a glance: which measures reward honest uncertainty (``docs/audit.md``).

Reads the audit's verdict and summary tables (:mod:`nllbench.pipeline.audit`)
and computes nothing.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

import nllbench.pipeline.plots.style as style
from nllbench.measures.run.audit_scores import FRAME_MEASURES, TRAJECTORY_MEASURES

#: Row labels of the measures (lower is better for each, as audited).
MEASURE_LABELS = {
    "nll": "NLL",
    "energy": "set energy score",
    "intensity": "intensity score",
    "cardinality_rps": "cardinality RPS",
    "pgospa": "P-GOSPA (density vs truth)",
    "gospa": "GOSPA (point estimates)",
    "ospa": "OSPA (point estimates)",
    "1-mota": "1 - MOTA (point estimates)",
    "motp": "MOTP (point estimates)",
    "1-idf1": "1 - IDF1 (point estimates)",
    "1-hota": "1 - HOTA (point estimates)",
    "nees": "NEES: |log(ANEES / d)|",
    "brier": "Brier score of existence",
    "cardinality_log": "cardinality log score",
    "trajectory_nll": "trajectory NLL",
    "ptgospa": "PT-GOSPA (density vs truth)",
    "tgospa": "T-GOSPA (point estimates)",
}
#: Column labels of the perturbation families.
FAMILY_LABELS = {
    "covariance": "cov. x s",
    "existence": "r tempered",
    "shift": "mean shift",
    "cardinality": "-1/+1 Bern.",
}
#: Verdict -> (colour, legend text).
VERDICT_COLOURS = {
    "strictly proper": ("#1a9850", "strictly proper: honest density best, every probe worse"),
    "proper": ("#b8e186", "proper: honest density within z SE of the best"),
    "insensitive": ("#d9d9d9", "insensitive: the probe does not change the score"),
    "improper (rewards over-confidence)": ("#d73027", "improper: rewards over-confidence"),
    "improper (rewards under-confidence)": ("#4575b4", "improper: rewards under-confidence"),
    "improper (rewards over- and under-confidence)": ("#762a83", "improper: rewards over- and under-"),
    "improper (rewards a wrong density)": ("#fdae61", "improper: rewards a shifted / wrong-size density"),
    "no-op": ("#ffffff", "no-op: the probe leaves this density unchanged"),
}


def verdict_groups(summary) -> dict[str, list[str]]:
    """Overall verdict -> the measures that received it, in table order.

    ``summary`` has one row per measure with its ``verdict``
    (:func:`nllbench.pipeline.audit.summary_table`). The groups: "strictly
    proper", "proper", "proper but blind to a probe" (a verdict "proper
    (insensitive to ...)") and "improper" (every "improper (...)").
    """
    out: dict[str, list[str]] = {
        "strictly proper": [],
        "proper": [],
        "proper but blind to a probe": [],
        "improper": [],
    }
    verdict_of = dict(zip(summary["measure"], summary["verdict"], strict=True))
    for m in (*FRAME_MEASURES, *TRAJECTORY_MEASURES):
        if m not in verdict_of:
            continue
        v = str(verdict_of[m])
        if v.startswith("improper"):
            out["improper"].append(m)
        elif v.startswith("proper (insensitive"):
            out["proper but blind to a probe"].append(m)
        elif v in out:
            out[v].append(m)
    return out


def _label(measure: str) -> str:
    return MEASURE_LABELS.get(measure, measure)


def in_this_run(summary) -> str:
    """The audit figure's "In this run" sentence: which measures got which overall verdict."""
    parts = [f"{k}: " + ", ".join(_label(m) for m in ms) for k, ms in verdict_groups(summary).items() if ms]
    return "In this run: " + "; ".join(parts) + "."


def filters_in_this_run(preferences) -> str:
    """The filter figure's "In this run" sentence: the NLL's preferred s and tau on each filter's run."""
    nll = preferences[preferences["measure"] == "nll"]
    if not len(nll):
        return ""
    parts = []
    for name, g in nll.groupby("filter", sort=False):
        vals = []
        for r in g.itertuples():
            sym = "s" if r.family == "covariance" else "tau"
            if r.insensitive:
                vals.append(f"{sym}: none (insensitive)")
            else:
                star = " (significant)" if isinstance(r.better, str) and r.better else ""
                vals.append(f"{sym} = {value_text(r.family, r.preferred)}{star}")
        parts.append(f"{name}: " + ", ".join(vals))
    return "In this run the NLL prefers " + "; ".join(parts) + "."


def value_text(family: str, value: float) -> str:
    """The argmin as a reader reads it: scales as fractions (1/8), counts signed (+1)."""
    if family in ("covariance", "existence"):
        f = Fraction(value).limit_denominator(64)
        return str(f)
    if family == "cardinality":
        return f"{value:+g}" if value else "0"
    return f"{value:g}"


def fig_audit(verdicts, summary, z: float):
    """Measures (rows) x (density, probe family) (columns): colour = verdict, text = where the minimum lies.

    Parameters
    ----------
    verdicts : DataFrame
        One row per (level, density, measure, family): ``verdict`` and ``argmin``
        (:func:`nllbench.pipeline.audit.verdicts_table`).
    summary : DataFrame
        One row per measure: its overall ``verdict`` (:func:`nllbench.pipeline.audit.summary_table`).
    z : float
        The significance threshold in standard errors (for the caption).
    """
    plt, _ = style.pyplot()
    from matplotlib.patches import Patch

    measures = [m for m in (*FRAME_MEASURES, *TRAJECTORY_MEASURES) if m in set(verdicts["measure"])]
    columns = []  # (level, density, family)
    for (level, density), _g in verdicts.groupby(["level", "density"], sort=False):
        for fam in FAMILY_LABELS:
            columns.append((level, density, fam))
    index = {(r.level, r.density, r.measure, r.family): r for r in verdicts.itertuples()}
    names = list(VERDICT_COLOURS)
    grid = np.full((len(measures), len(columns)), -1)
    fig, ax = plt.subplots(figsize=(2.0 + 0.42 * len(columns) + 3.6, 1.2 + 0.36 * len(measures)))
    for i, m in enumerate(measures):
        for j, (level, density, fam) in enumerate(columns):
            r = index.get((level, density, m, fam))
            if r is None:
                continue
            grid[i, j] = names.index(r.verdict)
            colour = VERDICT_COLOURS[r.verdict][0]
            edge = "#bbbbbb" if r.verdict == "no-op" else "white"
            ax.add_patch(plt.Rectangle((j, i), 1, 1, facecolor=colour, edgecolor=edge, linewidth=1.5))
            dark = r.verdict.startswith("improper (rewards over") or r.verdict == "strictly proper"
            dark = dark or r.verdict in ("improper (rewards under-confidence)",)
            ax.text(
                j + 0.5,
                i + 0.5,
                {"insensitive": "=", "no-op": "."}.get(r.verdict, value_text(fam, r.argmin)),
                ha="center",
                va="center",
                fontsize=6.5,
                color="white" if dark else "black",
            )
    ax.set_xlim(0, len(columns))
    ax.set_ylim(len(measures), 0)
    ax.set_yticks(np.arange(len(measures)) + 0.5)
    ax.set_yticklabels([MEASURE_LABELS.get(m, m) for m in measures], fontsize=8)
    ax.set_xticks(np.arange(len(columns)) + 0.5)
    ax.set_xticklabels([FAMILY_LABELS[f] for _, _, f in columns], rotation=90, fontsize=7)
    ax.grid(False)
    top = ax.secondary_xaxis("top")
    starts = [j for j, c in enumerate(columns) if j == 0 or c[:2] != columns[j - 1][:2]]
    top.set_xticks([s + len(FAMILY_LABELS) / 2 for s in starts])
    top.set_xticklabels([columns[s][1] for s in starts], fontsize=8, fontweight="bold")
    top.tick_params(length=0)
    for s in starts[1:]:
        ax.axvline(s, color="black", linewidth=1.0)
    verdict_of = dict(zip(summary["measure"], summary["verdict"], strict=True))
    for i, m in enumerate(measures):
        text = verdict_of.get(m, "")
        colour = "#b2182b" if text.startswith("improper") else ("#1a9850" if "strictly" in text else "black")
        ax.text(
            len(columns) + 0.3, i + 0.5, text, ha="left", va="center", fontsize=7, color=colour, clip_on=False
        )
    ax.text(
        len(columns) + 0.3,
        -0.35,
        "overall verdict",
        ha="left",
        va="bottom",
        fontsize=8,
        fontweight="bold",
        clip_on=False,
    )
    used = sorted({int(v) for v in grid.ravel() if v >= 0})
    handles = [
        Patch(facecolor=VERDICT_COLOURS[names[k]][0], edgecolor="#bbbbbb", label=VERDICT_COLOURS[names[k]][1])
        for k in used
    ]
    fig.legend(
        handles=handles,
        loc="lower center",
        ncol=2,
        fontsize=7,
        frameon=False,
        bbox_to_anchor=(0.45, -0.02 - 0.025 * ((len(handles) + 1) // 2)),
    )
    ax.set_title(
        "Which measures reward honest uncertainty? Expected score over truths drawn from the density;\n"
        "cell text: the probe value of the smallest expected score (honest: s = 1, tau = 1, shift 0, 0;"
        " '=': every probe scores the same)",
        fontsize=8,
    )
    caption = (
        "Propriety audit: for each density (column group) and probe family, the colour is the measure's "
        f"verdict (z = {z:g} paired standard errors) and the text the probe value with the smallest "
        "expected score. Covariance probe: every covariance times s; existence probe: logit tempered by "
        "tau about 1/2 (tau > 1 towards 0/1: over-confident); mean shift along x; -1/+1: one Bernoulli "
        "dropped or added. Point-estimate measures do not see covariances (grey). " + in_this_run(summary)
    )
    return style.captioned(fig, caption)


def fig_filter_preferences(preferences, z: float):
    """Part 2: the probe value each measure prefers on each reference filter's run.

    Rows are measures, columns (filter, probe family); the colour is
    log2 of the preferred value (white: the posterior as it is, s = tau = 1;
    red: a larger covariance or existence pulled towards 0/1; blue: the
    reverse), the text the value, with ``*`` where it beats the unprobed
    posterior by more than ``z`` paired SE, and ``=`` where the measure does
    not see the probe.
    """
    plt, _ = style.pyplot()
    from matplotlib.colors import Normalize

    measures = [m for m in FRAME_MEASURES if m in set(preferences["measure"])]
    columns = list(dict.fromkeys(zip(preferences["filter"], preferences["family"], strict=True)))
    index = {(r.filter, r.measure, r.family): r for r in preferences.itertuples()}
    cmap = plt.get_cmap("RdBu_r")
    norm = Normalize(-3.0, 3.0)
    fig, ax = plt.subplots(figsize=(2.6 + 0.55 * len(columns), 1.3 + 0.34 * len(measures)))
    for i, m in enumerate(measures):
        for j, (name, fam) in enumerate(columns):
            r = index.get((name, m, fam))
            if r is None:
                continue
            if r.insensitive:
                colour, text = "#d9d9d9", "="
            else:
                x = float(np.log2(r.preferred))
                colour = cmap(norm(x))
                text = value_text(fam, r.preferred) + ("*" if isinstance(r.better, str) and r.better else "")
            ax.add_patch(plt.Rectangle((j, i), 1, 1, facecolor=colour, edgecolor="white", linewidth=1.5))
            dark = not r.insensitive and abs(float(np.log2(r.preferred))) >= 2
            ax.text(
                j + 0.5,
                i + 0.5,
                text,
                ha="center",
                va="center",
                fontsize=7,
                color="white" if dark else "black",
            )
    ax.set_xlim(0, len(columns))
    ax.set_ylim(len(measures), 0)
    ax.set_yticks(np.arange(len(measures)) + 0.5)
    ax.set_yticklabels([MEASURE_LABELS.get(m, m) for m in measures], fontsize=8)
    ax.set_xticks(np.arange(len(columns)) + 0.5)
    ax.set_xticklabels(
        [f"{n}\n{'cov. x s' if f == 'covariance' else 'r: tau'}" for n, f in columns], fontsize=7
    )
    ax.grid(False)
    sm = plt.cm.ScalarMappable(norm=norm, cmap=cmap)
    bar = fig.colorbar(sm, ax=ax, fraction=0.04, pad=0.02)
    bar.set_ticks([-3, -2, -1, 0, 1, 2, 3])
    bar.set_ticklabels(["1/8", "1/4", "1/2", "1", "2", "4", "8"])
    bar.set_label("preferred s or tau", fontsize=8)
    ax.set_title(
        "Reference filters: the probe value each measure prefers (mean over the run's steps against the "
        f"simulated truth)\n* = better than the posterior as it is by > {z:g} paired SE; '=' = does not "
        "see the probe",
        fontsize=8,
    )
    caption = (
        "Covariance (every covariance times s) and existence (logit tempered by tau about 1/2) probes of "
        "each reference filter's posteriors, scored at every step against the simulated truth. A measure "
        "that prefers s > 1 judges the filter over-confident in its covariances; tau > 1 asks for existence "
        "nearer 0/1. Steps play the draws (paired, not independent). " + filters_in_this_run(preferences)
    ).strip()
    return style.captioned(fig, caption)
