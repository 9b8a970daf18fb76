"""The calibration section's captions (reliability, NEES, cardinality), written from the tables
their figures draw; the shared wording helpers are in :mod:`nllbench.pipeline.plots.caption_text`.
"""

from __future__ import annotations

import numpy as np

from nllbench.pipeline.plots.caption_text import paragraphs, run_paragraph
from nllbench.pipeline.plots.style import join_words

#: A filter whose share of Bernoullis explaining an object is within this of its mean r is "calibrated
#: on average" in the reliability caption.
CALIBRATED_WITHIN = 0.02


def _base(table):
    return table[(table["cov_scale"] == 1.0) & (table["temper"] == 1.0)]


def reliability_caption(reliability, calibration) -> str:
    """Caption of :func:`~nllbench.pipeline.plots.fig_reliability`."""
    rel, cal = _base(reliability), _base(calibration)
    what = (
        "Existence calibration: reliability diagrams pooled over seeds, one panel per setting (the filters' "
        "own covariances). Every Bernoulli of the best global hypothesis is binned by its existence "
        "probability r into ten equal bins; a marker is a non-empty bin's mean r against the share of its "
        "Bernoullis that explain a true object under the NLL's best association (counts summed over the "
        "seeds, then divided: tables/reliability.csv). Markers are joined only where a filter has at least "
        "three non-empty bins. The dashed diagonal is perfect calibration: above it, existence is "
        "under-confident (objects more often real than stated), below it over-confident. The legend gives "
        "each filter's number of Bernoullis and non-empty bins; bins with few Bernoullis swing widely."
    )
    found = []
    groups: dict[str, list[str]] = {"over": [], "under": [], "close": []}
    for f, g in rel.groupby("filter", sort=True):
        count = float(g["count"].sum())
        if count <= 0:
            continue
        r, freq = float(g["r_sum"].sum()) / count, float(g["explained"].sum()) / count
        kind = (
            "over" if freq < r - CALIBRATED_WITHIN else ("under" if freq > r + CALIBRATED_WITHIN else "close")
        )
        groups[kind].append(f"{f} (mean r {r:.2f}, share explaining an object {freq:.2f})")
    leads = {
        "over": "over-confident existence (fewer real objects than stated)",
        "under": "under-confident existence (more real objects than stated)",
        "close": f"calibrated on average (within {CALIBRATED_WITHIN})",
    }
    clauses = [f"{lead}: {'; '.join(groups[kind])}" for kind, lead in leads.items() if groups[kind]]
    if clauses:
        found.append(f"Pooled over all settings, {'. '.join(clauses)}.")
    none = sorted(set(cal["filter"]) - set(rel["filter"]))
    if none:
        found.append(
            "No Bernoulli scored (a Poisson posterior, or an NLL infinite in every seed): "
            f"{join_words(none)}."
        )
    return paragraphs(what, run_paragraph(found))


def _cal_values(cal, measure: str) -> dict:
    sel = cal[cal["measure"] == measure]
    return {
        (r.scenario, float(r.clutter), float(r.pd), str(r.filter)): float(r.value) for r in sel.itertuples()
    }


def where_text(keys) -> str:
    """ "clutter 5 and 20" of (scenario, clutter, pd) keys (scenario and P_D named when they vary)."""
    many = len({k[0] for k in keys}) > 1 or len({k[2] for k in keys}) > 1
    if many:
        return join_words(f"{s} clutter {c:g} P_D {p:g}" for s, c, p in keys)
    return "clutter " + join_words(f"{c:g}" for _, c, _ in keys)


def nees_caption(calibration) -> str:
    """Caption of :func:`~nllbench.pipeline.plots.fig_nees`."""
    cal = _base(calibration)
    what = (
        "State consistency, pooled over seeds (the filters' own covariances; tables/calibration.csv). Left: "
        "the average NEES of all matched (Bernoulli, truth) pairs of the NLL's best association, per "
        "clutter rate and filter (log scale), with the grey 95 % interval chi2(N d) / N in which a "
        "consistent posterior's ANEES falls for the pooled number N of pairs (Bar-Shalom, Li, Kirubarajan "
        "2001, ch. 5); the dotted line is the state dimension d. Above the interval: over-confident "
        "covariances (errors larger than stated); below: under-confident. Right: the share of pairs whose "
        "truth lies inside the component's 95 % ellipse, against 0.95. PHD and CPHD have no Bernoullis, "
        "so no pairs and no marker."
    )
    anees, low, high = (_cal_values(cal, m) for m in ("anees", "anees_ci95_low", "anees_ci95_high"))
    found = []
    by_filter: dict[str, dict[str, list]] = {}
    for key, v in sorted(anees.items()):
        if not np.isfinite(v):
            continue
        kind = "above" if v > high[key] else ("below" if v < low[key] else "inside")
        by_filter.setdefault(key[3], {}).setdefault(kind, []).append(key[:3])
    words = {"above": "over-confident", "below": "under-confident", "inside": "consistent"}
    for f, kinds in by_filter.items():
        found.append(
            f"{f}: "
            + "; ".join(f"{words[k]} at {where_text(keys)}" for k, keys in sorted(kinds.items()))
            + "."
        )
    return paragraphs(what, run_paragraph(found))


def cardinality_caption(calibration) -> str:
    """Caption of :func:`~nllbench.pipeline.plots.fig_cardinality`."""
    cal = _base(calibration)
    what = (
        "Cardinality calibration, pooled over seeds (the filters' own covariances; "
        "tables/calibration.csv). Left: the share of steps whose true number of objects lies in the "
        "central 90 % interval of the posterior's cardinality distribution (Poisson for the PHD, the "
        "CPHD's own pmf, a Poisson-binomial mixture for the Bernoulli filters), against 0.90: below it, "
        "the cardinality is over-confident or biased; above, under-confident. Right: the mean logarithmic "
        "score -log P(true count) in nats, lower is better; it is +inf (a triangle in the row marked "
        "'inf') when some step gives its true count probability 0. The legend gives each filter's number "
        "of steps over all settings."
    )
    cover, score = _cal_values(cal, "cardinality_coverage90"), _cal_values(cal, "cardinality_log_score")
    found = []
    ranges = {}
    for k, v in cover.items():
        ranges.setdefault(k[3], []).append(v)
    if ranges:
        found.append(
            "Coverage over the settings: "
            + "; ".join(
                f"{f} {min(v):.2f}" + (f" to {max(v):.2f}" if f"{max(v):.2f}" != f"{min(v):.2f}" else "")
                for f, v in sorted(ranges.items())
            )
            + "."
        )
    below = {}
    for k, v in sorted(cover.items()):
        if v < 0.9:
            below.setdefault(k[3], []).append(k[:3])
    if below:
        found.append(
            "Below 0.90: "
            + "; ".join(f"{f} at {where_text(keys)}" for f, keys in sorted(below.items()))
            + "."
        )
    finite = {}
    for k, v in score.items():
        finite.setdefault(k[:3], {})[k[3]] = v
    if finite:
        best: dict[str, list] = {}
        for s in sorted(finite):
            vals = {f: v for f, v in finite[s].items() if np.isfinite(v)}
            if vals:
                best.setdefault(
                    join_words(sorted(f for f, v in vals.items() if v == min(vals.values()))), []
                ).append(s)
        found.append(
            "Lowest log score: "
            + "; ".join(f"{names} at {where_text(keys)}" for names, keys in best.items())
            + "."
        )
    inf = sorted(k for k, v in score.items() if not np.isfinite(v))
    if inf:
        per: dict[str, list] = {}
        for k in inf:
            per.setdefault(k[3], []).append(k[:3])
        found.append(
            "Infinite log score (some step's true count has probability 0): "
            + "; ".join(f"{f} at {where_text(keys)}" for f, keys in sorted(per.items()))
            + "."
        )
    return paragraphs(what, run_paragraph(found))
