"""The figures' captions, written from the same tables the figures draw.

A caption has two paragraphs: what the figure shows (the measures, the
summaries over seeds, how infinite values are drawn: true of any run), and
"In this run": what the numbers of this run say (which filter is best where,
which runs are infinite and why, what changes with the swept value). No
sentence claims more than the tables hold: a statement about the filters'
ordering, a trend or calibration is computed here, from the tables, or left
out. Every ``*_caption`` function takes the tables its figure takes and
returns plain text (the workflow's report renders it as reStructuredText,
escaping its markup characters; ``nllbench plot`` writes it beside the figure,
``<figure>.caption.txt``).
"""

from __future__ import annotations

import numpy as np

from nllbench.measures.declarations import declared_scores
from nllbench.measures.names import NLL_TERM_MEASURES, TGOSPA_TERMS
from nllbench.pipeline.plots.caption_text import best_per, num, paragraphs, per_filter, run_paragraph, signed
from nllbench.pipeline.plots.style import MEASURE_LABEL, calibration_note, inf_note, join_words, plural

#: Why an NLL term is +inf (the decomposition names the term; docs/evaluation.md).
INFINITE_TERM_REASON = {
    "nll_false": "every kept global hypothesis holds more sure (r = 1) Bernoullis than there are true "
    "objects, so no association explains the truth",
    "nll_missed": "a true object lies where no Bernoulli can take it and the undetected-object (Poisson) "
    "intensity is zero",
    "nll_localization": "a matched Bernoulli's density underflows to zero at its true object",
    "nll_cardinality": "the cardinality distribution gives the true number of objects probability zero",
    "nll_mixture": "the best global hypothesis has weight zero",
    "nll_association": "the association term is infinite",
}

#: Reference filters whose point estimates carry no lasting track identity (docs/evaluation.md).
NO_IDENTITY = frozenset({"phd", "cphd"})

#: Names of measures in captions beyond the figures' own (MEASURE_LABEL): their declarations' captions.
LABELS = {s.name: s.caption for s in declared_scores() if s.caption}

#: Why the PHD and CPHD estimates have no lasting identities (docs/evaluation.md).
NO_IDENTITY_WHY = (
    "a CPHD estimate has no label, so every step starts new tracks; a PHD estimate carries the tag of "
    "its Gaussian component, which splits over measurements and merges"
)


def _means(summary, measures, filters) -> dict:
    """{(filter, measure): mean over every setting} of the summary means (covariance scale 1, q = 0)."""
    base = summary[(summary["cov_scale"] == 1.0) & (summary["q"] == 0) & summary["measure"].isin(measures)]
    base = base[base["filter"].isin(list(filters))]
    return {
        (str(f), str(m)): float(v) for (f, m), v in base.groupby(["filter", "measure"])["mean"].mean().items()
    }


def identity_sentence(summary, measures, what: str) -> str:
    """Why the PHD/CPHD fare badly on identity-aware ``measures``, with their numbers next to GOSPA's.

    ``what`` says what those numbers show (e.g. "their T-GOSPA is almost all missed and false objects").
    Empty when the study has neither filter. Numbers are means over every setting.
    """
    filters = sorted(set(summary["filter"]))
    plain = [f for f in filters if f in NO_IDENTITY]
    if not plain:
        return ""
    others = [f for f in filters if f not in NO_IDENTITY]
    m = _means(summary, [*measures, "gospa_mean"], filters)

    def numbers(f):
        return ", ".join(
            f"{LABELS.get(x, MEASURE_LABEL.get(x, x))} {num(m[(f, x)])}"
            for x in [*measures, "gospa_mean"]
            if (f, x) in m
        )

    gospa = [m[(f, "gospa_mean")] for f in others if (f, "gospa_mean") in m]
    compare = f" (the other filters' GOSPA: {num(min(gospa))} to {num(max(gospa))})" if gospa else ""
    return (
        f"{join_words(plain)} estimates carry no track identities that last ({NO_IDENTITY_WHY}): "
        f"{what}. Means over the settings: {'; '.join(f'{f}: {numbers(f)}' for f in plain)}{compare}. "
        "A low score here means lost identities, not undetected objects."
    )


def infinite_runs(rows, x: str | None, at: str, every: str) -> list[str]:
    """One clause per filter with infinite runs: "mbm01 in 6/6 seeds at every clutter rate"."""
    out = []
    for f in sorted(rows["filter"].unique()):
        note = inf_note(rows[rows["filter"] == f], x, at, every)
        if note:
            out.append(f"{f} in {note.removeprefix(' (NLL inf in ').removesuffix(')')}")
    return out


def infinite_terms(summary, f: str, q: int, where: dict) -> list[str]:
    """The NLL terms of filter ``f`` that are +inf in some run of the setting ``where`` (at ``q``)."""
    sel = summary[(summary["filter"] == f) & (summary["q"] == q) & (summary["cov_scale"] == 1.0)]
    for k, v in where.items():
        sel = sel[sel[k] == v]
    bad = sel[sel["measure"].isin(NLL_TERM_MEASURES) & (sel["n_infinite"] > 0)]
    return [t for t in NLL_TERM_MEASURES if t in set(bad["measure"])]


def infinite_reason(summary, f: str, q: int, where: dict) -> str:
    """One line: which term makes ``f``'s NLL infinite in the setting ``where``, and what that means."""
    terms = infinite_terms(summary, f, q, where)
    if not terms:
        return "the decomposition names no infinite term"
    if len(terms) == 1:
        return f"its {terms[0].removeprefix('nll_')} term is +inf: {INFINITE_TERM_REASON[terms[0]]}"
    names = join_words(t.removeprefix("nll_") for t in terms)
    reasons = "; ".join(f"{t.removeprefix('nll_')}: {INFINITE_TERM_REASON[t]}" for t in terms)
    return f"its {names} terms are +inf ({reasons})"


def _change(values: dict, label: str, at: str) -> str:
    """How each filter's value moves from the lowest to the highest x: "phd +0.10, pmb -1.2"."""
    xs = sorted(values)
    if len(xs) < 2:
        return ""
    lo, hi = values[xs[0]], values[xs[-1]]
    parts = []
    for f in sorted(set(lo) & set(hi)):
        a, b = lo[f], hi[f]
        if np.isfinite(a) and np.isfinite(b):
            parts.append(f"{f} {signed(b - a)} ({num(a)} to {num(b)})")
        elif not np.isfinite(a) and not np.isfinite(b):
            parts.append(f"{f} infinite at both")
        else:
            parts.append(f"{f} {num(a)} to {num(b)}")
    return f"From {at} {xs[0]:g} to {xs[-1]:g}, {label} changes by: {', '.join(parts)}."


def _spread(values: dict) -> dict:
    """Range (max - min) of the finite values at each x."""
    out = {}
    for x, v in values.items():
        finite = [a for a in v.values() if np.isfinite(a)]
        if len(finite) > 1:
            out[x] = max(finite) - min(finite)
    return out


def _pick(summary, measure: str, q: int, cov_scale: float = 1.0):
    return summary[
        (summary["measure"] == measure) & (summary["q"] == q) & (summary["cov_scale"] == cov_scale)
    ]


def clutter_caption(summary, q: int) -> str:
    """Caption of :func:`~nllbench.pipeline.plots.fig_vs_clutter`."""
    nll, gospa = _pick(summary, "nll", q), _pick(summary, "gospa_mean", 0)
    filters = sorted(nll["filter"].unique())
    what = (
        f"NLL and GOSPA against the clutter rate, one line per filter in its fixed colour and marker. "
        f"Left: NLL per step (position marginal, Q = {q}), median and interquartile range over seeds (the "
        "NLL is heavy-tailed). Right: GOSPA per step, mean and seeded 95 % bootstrap interval over seeds. A "
        "median that is infinite (the posterior gives the truth zero density in at least half of the seeds) "
        "is an open triangle in the row marked 'inf'; an interval reaching +inf is dotted to the top; the "
        "legend counts, per clutter rate, the seeds whose NLL is infinite."
    )
    med, gm = per_filter(nll, "clutter", "median"), per_filter(gospa, "clutter", "mean")
    found = [
        f"Lowest median NLL: {best_per(med, 'clutter', 'every clutter rate')}.",
        f"Lowest mean GOSPA: {best_per(gm, 'clutter', 'every clutter rate')}.",
    ]
    inf = infinite_runs(nll, "clutter", "clutter", "every clutter rate")
    if inf:
        found.append(f"Infinite NLL: {'; '.join(inf)}.")
    found.append(_change(med, "the median NLL", "clutter"))
    found.append(_change(gm, "the mean GOSPA", "clutter"))
    spread = _spread(med)
    if len(spread) > 1:
        xs = sorted(spread)
        found.append(
            f"The finite median NLLs span {num(spread[xs[0]])} nats at clutter {xs[0]:g} and "
            f"{num(spread[xs[-1]])} nats at clutter {xs[-1]:g}."
        )
    mbm = [f for f in filters if f in ("mbm", "mbm01")]
    if mbm:
        found.append(
            f"{join_words(mbm)} drop the undetected-object Poisson intensity after the first update, so an "
            "object missed at the first scan can only be explained by a Bernoulli started at another "
            "measurement, which can make their first steps' NLL very large (docs/evaluation.md)."
        )
    return paragraphs(what, run_paragraph(found))


def decomposition_caption(summary, q: int) -> str:
    """Caption of :func:`~nllbench.pipeline.plots.fig_decomposition`."""
    data = summary[(summary["q"] == q) & (summary["cov_scale"] == 1.0)]
    nll = data[data["measure"] == "nll"]
    what = (
        f"The NLL decomposition (paper eq. (11)) per filter and clutter rate at Q = {q}, per step: "
        "localisation of matched objects, missed objects (left to the Poisson part), false Bernoullis, "
        "CPHD cardinality, weight of the best global hypothesis and the (negative) association term; on a "
        "run with a finite NLL they sum to it. A bar is the term's mean over the seeds where that term is "
        "finite, so where every seed's NLL is finite the stacked bar is the mean NLL; all panels share one "
        "y-scale. A filter whose NLL is infinite in some seeds carries a box on top of its bar, 'NLL inf in "
        "k/n seeds' and the infinite term; where every seed is infinite, no bar is drawn and the box is "
        "shaded. A Poisson posterior (PHD; CPHD with its cardinality term) has no Bernoullis: every true "
        "object is explained by its intensity, so its whole NLL is in the missed (and cardinality) term."
    )
    found = []
    groups: dict[tuple, list[float]] = {}  # (all infinite?, filter, k/n, terms) -> clutter rates
    for r in nll.sort_values(["filter", "clutter"]).itertuples():
        k, n = int(r.n_infinite), int(r.n)
        if k:
            where = {"scenario": r.scenario, "clutter": r.clutter, "pd": r.pd}
            terms = join_words(t.removeprefix("nll_") for t in infinite_terms(summary, r.filter, q, where))
            groups.setdefault((k == n, r.filter, f"{k}/{n}", terms or "no term named"), []).append(r.clutter)
    for full, lead in (
        (True, "Infinite in every seed, so no bar"),
        (
            False,
            "Infinite in some seeds (the named term's bar averages the other seeds, so the stack is not a "
            "mean NLL)",
        ),
    ):
        clauses = [
            f"{f} at clutter {join_words(f'{c:g}' for c in cs)} ({kn} seeds; {terms})"
            for (is_full, f, kn, terms), cs in groups.items()
            if is_full == full
        ]
        if clauses:
            found.append(f"{lead}: {'; '.join(clauses)}.")
    largest = {}
    drawn = nll[nll["n_infinite"] < nll["n"]]  # the clutter rates at which a filter has a bar
    for f in sorted(drawn["filter"].unique()):
        sub = data[(data["filter"] == f) & data["measure"].isin(NLL_TERM_MEASURES)]
        sub = sub[sub["clutter"].isin(drawn[drawn["filter"] == f]["clutter"])]
        sub = sub[np.isfinite(sub["finite_mean"].to_numpy(dtype=float))]
        if sub.empty:
            continue
        by_term = sub.groupby("measure")["finite_mean"].mean()
        largest.setdefault(str(by_term.idxmax()).removeprefix("nll_"), []).append(f)
    if largest:
        found.append(
            "Largest term (mean over the clutter rates with a bar): "
            + "; ".join(f"{t} for {join_words(fs)}" for t, fs in sorted(largest.items()))
            + "."
        )
    return paragraphs(what, run_paragraph(found))


def q_caption(summary) -> str:
    """Caption of :func:`~nllbench.pipeline.plots.fig_nll_vs_q`."""
    nll = summary[(summary["measure"] == "nll") & (summary["cov_scale"] == 1.0)]
    clutter = sorted(nll["clutter"].unique())[0]
    nll = nll[nll["clutter"] == clutter]
    exact = summary[
        (summary["measure"] == "nll_exact") & (summary["cov_scale"] == 1.0) & (summary["clutter"] == clutter)
    ]
    what = (
        f"NLL per step against the Murty budget Q (associations per global hypothesis) at the lowest "
        f"clutter rate ({clutter:g}), one panel per filter with its own y-scale: median and interquartile "
        "range over seeds; dotted: the median exact NLL, where the subset dynamic programme could compute "
        "it. On every run, more associations can only lower the NLL towards the exact value. Measured "
        "times are in the Timing section."
    )
    qs = sorted(nll["q"].unique())
    found = []
    if len(qs) > 1:
        med = per_filter(nll, "q", "median")
        found.append(_change(med, "the median NLL", "Q ="))
        iqr = {
            f: float(r.q75 - r.q25)
            for f, r in zip(nll["filter"], nll.itertuples(), strict=True)
            if r.q == qs[-1] and np.isfinite(r.q75 - r.q25)
        }
        moved = {
            f: abs(med[qs[-1]][f] - med[qs[0]][f])
            for f in iqr
            if np.isfinite(med[qs[-1]].get(f, np.nan) - med[qs[0]].get(f, np.nan))
        }
        wider = sorted(f for f in moved if iqr[f] > moved[f])
        if moved:
            found.append(
                f"The interquartile range at Q = {int(qs[-1])} (the spread between seeds) exceeds that "
                f"change for {len(wider)} of {plural(len(moved), 'filter')}"
                + (f" ({join_words(wider)})." if wider and len(wider) < len(moved) else ".")
            )
    inf = infinite_runs(nll, "q", "Q =", "every Q")
    if inf:
        found.append(f"Infinite NLL: {'; '.join(inf)}.")
    have = sorted(f for f, m in zip(exact["filter"], exact["median"], strict=True) if np.isfinite(m))
    if len(exact):
        found.append(
            f"Exact NLL (median finite) for {join_words(have)}." if have else "No median exact NLL is finite."
        )
    return paragraphs(what, run_paragraph(found))


def calibration_caption(summary, q: int) -> str:
    """Caption of :func:`~nllbench.pipeline.plots.fig_calibration`."""
    what = (
        f"Calibration probe, one row per clutter rate: every covariance of the posteriors scaled by s. Left: "
        f"NLL (Q = {q}), median and interquartile range over seeds; right: GOSPA, mean and 95 % bootstrap "
        "interval. The point estimates do not move with s, so GOSPA does not either; the NLL is lowest near "
        "the scale at which a filter's covariances are calibrated: a minimum at s > 1 means over-confident "
        "covariances (too small), at s < 1 under-confident ones (too large). With three scales, the "
        "minimum is only located to the nearest probed s."
    )
    nll = summary[(summary["measure"] == "nll") & (summary["q"] == q)]
    clutters = sorted(nll["clutter"].unique())
    found = []
    best: dict[tuple, list[str]] = {}  # (s, clutter rates) -> filters
    for f, g in nll.groupby("filter", sort=True):
        at: dict[float, list[float]] = {}
        for clutter, h in g.groupby("clutter", sort=True):
            h = h.sort_values("cov_scale")
            m = h["median"].to_numpy(dtype=float)
            if np.isfinite(m).any():
                at.setdefault(
                    float(h["cov_scale"].to_numpy()[int(np.argmin(np.where(np.isfinite(m), m, np.inf)))]), []
                ).append(float(clutter))
        for scale, cs in at.items():
            best.setdefault((scale, tuple(cs)), []).append(str(f))
    for (scale, cs), fs in sorted(best.items()):
        kind = "calibrated" if scale == 1.0 else ("over-confident" if scale > 1 else "under-confident")
        where = (
            "every clutter rate"
            if len(cs) == len(clutters) > 1
            else f"clutter {join_words(f'{c:g}' for c in cs)}"
        )
        found.append(f"Lowest median NLL at s = {scale:g} ({kind}) at {where}: {join_words(fs)}.")
    gospa = summary[(summary["measure"] == "gospa_mean") & (summary["q"] == 0)]
    spread = gospa.groupby(["filter", "clutter"])["mean"].agg(lambda v: float(np.ptp(v)))
    if len(spread):
        found.append(
            "GOSPA is exactly the same at every s."
            if spread.max() == 0
            else f"GOSPA moves with s by up to {num(spread.max())}."
        )
    clauses = []
    for f, g in nll.groupby("filter", sort=True):
        note = calibration_note(g, len(clutters))
        if note:
            clauses.append(f"{f} {note.strip().removeprefix('(NLL inf ').removesuffix(')')}")
    if clauses:
        found.append(f"Infinite NLL: {'; '.join(clauses)}.")
    return paragraphs(what, run_paragraph(found))


def theorem1_caption(steps) -> str:
    """Caption of :func:`~nllbench.pipeline.plots.fig_theorem1`."""
    diff = steps[steps["measure"] == "theorem1_difference"]["value"].to_numpy(dtype=float)
    lhs = steps[steps["measure"] == "theorem1_lhs"]["value"].to_numpy(dtype=float)
    what = (
        "Theorem 1 at every evaluated step of every run: the NLL of the theorem's PMB built from the step's "
        "estimates against the right-hand side of the theorem's equation (a GOSPA-type assignment cost "
        "plus V(1 - rho)); the line is equality."
    )
    if not diff.size:
        return paragraphs(what, run_paragraph(["No step was evaluated."]))
    worst = float(np.max(np.abs(diff)))
    scale = float(np.max(np.abs(lhs))) if lhs.size else 0.0
    verdict = (
        "every point lies on the diagonal to rounding"
        if worst <= 1e-9 * max(1.0, scale)
        else "some points lie off the diagonal"
    )
    return paragraphs(
        what,
        run_paragraph([f"{plural(diff.size, 'step')}, largest |difference| {worst:.1e} nats: {verdict}."]),
    )


def ranks_caption(summary, q: int, measures, mat, left_out=()) -> str:
    """Caption of :func:`~nllbench.pipeline.plots.fig_rank_agreement` (``measures``, ``mat`` as drawn).

    ``left_out``: the measures not drawn, since no setting has three filters with both them and another.
    """
    what = (
        "Agreement between the filter rankings of each pair of measures: Kendall tau (1: the same order, "
        f"-1: reversed), averaged over the settings (scenario, clutter rate, P_D) at covariance scale 1; "
        f"NLL at Q = {q} by its mean over finite runs, a filter with an infinite run ranked last. The "
        "leaderboard explains each NLL-GOSPA disagreement."
    )
    found = []
    if "nll" in measures:
        i = list(measures).index("nll")
        others = {
            m: float(mat[i][j]) for j, m in enumerate(measures) if m != "nll" and np.isfinite(mat[i][j])
        }
        if others:
            lo, hi = min(others, key=others.get), max(others, key=others.get)
            found.append(
                f"The NLL agrees most with {MEASURE_LABEL.get(hi, hi)} (tau {others[hi]:.2f}) and least "
                f"with {MEASURE_LABEL.get(lo, lo)} (tau {others[lo]:.2f})."
            )
    pairs = [
        (float(mat[a][b]), measures[a], measures[b])
        for a in range(len(measures))
        for b in range(a + 1, len(measures))
        if np.isfinite(mat[a][b])
    ]
    if pairs:
        t, a, b = min(pairs)
        found.append(
            f"Lowest agreement overall: {MEASURE_LABEL.get(a, a)} and {MEASURE_LABEL.get(b, b)} ({t:.2f})."
        )
    else:
        found.append("No setting has three filters, so no tau is defined.")
    if left_out:
        names = join_words([MEASURE_LABEL.get(m, m) for m in left_out])
        why = (
            " (P-GOSPA and PT-GOSPA exist for multi-Bernoulli filters only, not PHD or CPHD)"
            if {"pgospa_mean", "ptgospa"} & set(left_out)
            else ""
        )
        found.append(
            f"Not drawn: {names}, which no setting has for three filters along with another measure{why}."
        )
    return paragraphs(what, run_paragraph(found))


def tgospa_caption(summary) -> str:
    """Caption of :func:`~nllbench.pipeline.plots.fig_tgospa`."""
    data = summary[(summary["q"] == 0) & (summary["cov_scale"] == 1.0)]
    what = (
        "Trajectory GOSPA (Garcia-Fernandez, Rahmathullah, Svensson, IEEE TSP 2020; cut-off c and order p "
        "as for GOSPA, alpha = 2, switch cost gamma from the evaluation settings) per filter and clutter "
        "rate, split into localisation of assigned objects, missed and false objects, and track switches "
        "(a half switch when an assignment starts or ends). Each run's per-step terms are summed over its "
        "steps, so a bar is the mean over seeds of T-GOSPA to the power p (position units to the p); the "
        "value is exact. Unlike per-step GOSPA, identity changes cost here. Tick labels carry each "
        "filter's fixed colour."
    )
    total = per_filter(data[data["measure"] == "tgospa"], "clutter", "mean")
    terms = data[data["measure"].isin(TGOSPA_TERMS)]
    found = []
    if total:
        found.append(f"Lowest mean T-GOSPA: {best_per(total, 'clutter', 'every clutter rate')}.")
    largest: dict[str, list[str]] = {}
    for f, g in terms.groupby("filter", sort=True):
        by_term = g.groupby("measure")["mean"].mean()
        largest.setdefault(str(by_term.idxmax()).removeprefix("tgospa_"), []).append(str(f))
    if largest:
        found.append(
            "Largest term (mean over clutter rates): "
            + "; ".join(f"{t} for {join_words(fs)}" for t, fs in sorted(largest.items()))
            + "."
        )
    found.append(
        identity_sentence(
            summary,
            ["tgospa", "tgospa_localization"],
            "T-GOSPA, which charges identity changes, leaves most of their short tracks unassigned, so "
            "their T-GOSPA is mostly missed and false objects and its localisation term is small",
        )
    )
    return paragraphs(what, run_paragraph(found))


def hota_caption(summary, q: int) -> str:
    """Caption of :func:`~nllbench.pipeline.plots.fig_hota_vs_nll`."""
    base = summary[summary["cov_scale"] == 1.0]
    nll = base[(base["measure"] == "nll") & (base["q"] == q)]
    hota = base[(base["measure"] == "hota") & (base["q"] == 0)]
    what = (
        "HOTA (Luiten et al., IJCV 2021; similarity max(0, 1 - d / threshold), mean over alpha = 0.05, ..., "
        f"0.95) of the point estimates against the NLL of the posterior at Q = {q}, one point per filter and "
        "setting (scenario, clutter rate, P_D; the filters' own covariances). Vertical bars: mean HOTA and "
        "its seeded 95 % bootstrap interval; horizontal bars: median NLL and its interquartile range. A "
        "setting whose median NLL is infinite is an open marker in the column marked 'inf' at the right; "
        "the legend counts the seeds with an infinite NLL per clutter rate. Upper left is good on both."
    )
    found = []
    if len(hota):
        every = "every clutter rate"
        found.append(
            f"Highest mean HOTA: {best_per(per_filter(hota, 'clutter', 'mean'), 'clutter', every, False)}."
        )
        found.append(
            f"Lowest median NLL: {best_per(per_filter(nll, 'clutter', 'median'), 'clutter', every)}."
        )
    inf = infinite_runs(nll, "clutter", "clutter", "every clutter rate")
    if inf:
        found.append(f"Infinite NLL: {'; '.join(inf)}.")
    found.append(
        identity_sentence(
            summary,
            ["hota", "deta", "assa"],
            "HOTA's association accuracy (AssA) charges every change of identity, so their HOTA is low "
            "while their detection accuracy (DetA) is not",
        )
    )
    return paragraphs(what, run_paragraph(found))


def timing_caption(timing) -> str:
    """Caption of :func:`~nllbench.pipeline.plots.fig_timing` (measured times: differs between runs)."""
    what = (
        "Measured wall time of the NLL part of the evaluation per run (median over runs, covariance scale "
        "1), on a log scale. A reference filter's evaluation ranks every Q at once (the Q best associations "
        "are prefixes of one ranking), so its time covers every Q; an external tracker scored once per Q is "
        "drawn against Q. This is the only figure that depends on the machine and its load: it differs "
        "between runs, while every other figure is the same bytes."
    )
    if not len(timing):
        return paragraphs(what, run_paragraph(["No run was timed."]))
    t = timing[timing["cov_scale"] == 1.0] if "cov_scale" in timing else timing
    col = "nll_seconds" if "nll_seconds" in t else "seconds"
    top = t.groupby("filter")["q"].transform("max")  # each filter at its largest Q (all Q for a reference)
    med = t[t["q"] == top].groupby("filter")[col].median().sort_values()
    return paragraphs(
        what,
        run_paragraph(
            [
                f"At each filter's largest Q, fastest: {med.index[0]} ({med.iloc[0]:.2g} s per run); "
                f"slowest: {med.index[-1]} ({med.iloc[-1]:.2g} s per run)."
            ]
        ),
    )
