"""The leaderboard page's notes: infinite NLLs and why, filters without lasting identities, empty estimates.

Each function reads the study's tables (:mod:`nllbench.pipeline.aggregate`) and returns a fragment of
the page written by :mod:`nllbench.pipeline.report`.
"""

from __future__ import annotations

import html

#: The columns that name a setting of the study.
SETTING = ["scenario", "clutter", "pd"]


def setting_text(setting) -> str:
    """``(scenario, clutter, pd)`` as the page prints it."""
    scenario, clutter, pd_ = setting
    return f"{scenario}, clutter {clutter:g}, P_D {pd_:g}"


def infinite_nll(summary, q: int) -> list[dict]:
    """Every (setting, filter) whose NLL at ``q`` is +inf in some seed, with the decomposition's reason.

    Each entry: ``setting``, ``filter``, ``k`` infinite seeds of ``n``, and
    ``why``: the infinite term(s) and what they mean
    (:func:`nllbench.pipeline.plots.captions.infinite_reason`).
    """
    from nllbench.pipeline.plots.captions import infinite_reason

    out = []
    rows = summary[(summary["measure"] == "nll") & (summary["q"] == q) & (summary["cov_scale"] == 1.0)]
    for r in rows[rows["n_infinite"] > 0].sort_values([*SETTING, "filter"]).itertuples():
        setting = (r.scenario, float(r.clutter), float(r.pd))
        where = {"scenario": r.scenario, "clutter": r.clutter, "pd": r.pd}
        out.append(
            {
                "setting": setting,
                "filter": str(r.filter),
                "k": int(r.n_infinite),
                "n": int(r.n),
                "why": infinite_reason(summary, str(r.filter), q, where),
            }
        )
    return out


def infinite_html(entries) -> str:
    """One line per (setting, filter) with an infinite NLL: how many seeds, and why."""
    if not entries:
        return "<p class=note>No run's NLL is infinite.</p>"
    items = "".join(
        f"<li><b>{html.escape(e['filter'])}</b>, {html.escape(setting_text(e['setting']))}: NLL infinite in "
        f"{e['k']} of {e['n']} seeds; {html.escape(e['why'])}.</li>"
        for e in entries
    )
    return (
        "<p class=note>An infinite NLL is what the posterior says (it gives the truth zero density), not an "
        "evaluation error; the NLL decomposition names the term (docs/evaluation.md).</p>"
        f"<ul>{items}</ul>"
    )


def identity_note(summary, filters) -> str:
    """Why the PHD and CPHD have near-zero MOTA and IDF1 next to a GOSPA close to the others', with numbers.

    Empty when the study has neither. The numbers are the means over every
    setting (covariance scale 1) of each filter's MOTA, IDF1 and GOSPA.
    """
    from nllbench.pipeline.plots.captions import NO_IDENTITY, num

    plain = [f for f in filters if f in NO_IDENTITY]
    if not plain:
        return ""
    base = summary[(summary["cov_scale"] == 1.0) & (summary["q"] == 0)]

    def mean(f, m):
        v = base[(base["filter"] == f) & (base["measure"] == m)]["mean"]
        return num(v.mean()) if len(v) else "–"

    numbers = "; ".join(
        f"{f}: MOTA {mean(f, 'mota')}, IDF1 {mean(f, 'idf1')}, GOSPA {mean(f, 'gospa_mean')}" for f in filters
    )
    return (
        f"<p class=note id=identities>† {html.escape(', '.join(plain))}: the estimates carry no track "
        "identities that last (a CPHD estimate has none; a PHD tag follows a Gaussian component that splits "
        "and merges), so the identity-aware measures (MOTA, IDF1, T-GOSPA's switches, HOTA's association) "
        "charge them at nearly every step, while GOSPA, which compares each step's estimates without "
        "identities, does not. A low MOTA or IDF1 here does not mean that the filter detects nothing. Means "
        f"over the settings: {html.escape(numbers)}.</p>"
    )


def estimator_html(empty) -> str:
    """The steps at which a filter's point estimator reported nothing while its posterior expected objects.

    ``empty`` is :func:`nllbench.pipeline.cube.empty_estimate_steps` (None:
    the study has no step cube). ``nllbench evaluate`` warns once per such
    run in its job's log; here they are counted once, per filter.
    """
    if empty is None or empty.empty:
        return "<p class=note>No step cube in the tables: the estimator's empty steps are not counted.</p>"
    hit = empty[empty["empty_steps"] > 0]
    if hit.empty:
        return (
            "<p>At no step did a point estimator report no object while the posterior expected at least one."
            "</p>"
        )
    from nllbench.pipeline.plots.style import join_words, plural

    parts = []
    for f, g in hit.groupby("filter", sort=True):
        total = empty[empty["filter"] == f]
        parts.append(
            f"<li><b>{html.escape(str(f))}</b>: {plural(int(g['empty_steps'].sum()), 'step')} of "
            f"{int(total['steps'].sum()):,} in {plural(len(g), 'run')} of {len(total)} "
            f"(at clutter {join_words(f'{c:g}' for c in sorted(g['clutter'].unique()))})</li>"
        )
    return (
        f"<p>At {plural(int(hit['empty_steps'].sum()), 'step')} in {plural(len(hit), 'run')}, a filter's "
        "point estimator reported no object while the expected number of objects of its posterior rounds "
        "to at least one; GOSPA, MOTA, IDF1, T-GOSPA and HOTA count every object of such a step as missed. "
        f"The evaluate jobs' logs warn once per run ({plural(len(hit), 'warning')}; docs/estimators.md "
        "describes the estimators, e.g. <code>greedy</code> for a (C)PHD).</p>"
        f"<ul>{''.join(parts)}</ul>"
    )
