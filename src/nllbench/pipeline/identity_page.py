"""The identity study's table as a self-contained HTML page, and its caption (``docs/trajectory_filters.md``).

Reads the study's summary and extra-cost tables (:mod:`nllbench.pipeline.identity_study`) and computes
nothing: one row per filter, for each measure its median with the objects kept apart, with them meeting,
and the median paired extra cost of the meeting. The Snakemake report shows the page
(``workflow/rules/identity.smk``); ``nllbench identity`` writes it as ``table.html``.
"""

from __future__ import annotations

import html

import numpy as np

from nllbench.pipeline.plots.style import plural
from nllbench.pipeline.report import STYLE

#: The table's measure groups: (head, measure of a labelled filter, measure of a trajectory filter, format).
GROUPS = (
    ("trajectory NLL, full state (nats)", "labelled-output (full)", "trajectory density (full)", "{:,.0f}"),
    ("labelled-output NLL, position (nats)", "labelled-output (position)", None, "{:,.0f}"),
    ("T-GOSPA", "T-GOSPA", "T-GOSPA", "{:,.1f}"),
    ("IDF1", "IDF1", "IDF1", "{:.3f}"),
)
#: What each kind of filter's trajectory NLL is.
KIND_TEXT = {"labelled": "per-frame, labelled output", "trajectory": "trajectory filter, exact density"}


def _value(x, fmt: str) -> str:
    if x is None or (isinstance(x, float) and np.isnan(x)):
        return ""
    return "inf" if not np.isfinite(x) else fmt.format(x)


def identity_table_html(summary, extra, names) -> str:
    """Filters (rows) x (measure: kept apart, meet, extra cost) (columns)."""
    med = {(r.filter, r.measure, r.condition): r.median for r in summary.itertuples()}
    ext = {(r.filter, r.measure): r.median_extra for r in extra.itertuples()}
    kinds = dict(zip(summary["filter"], summary["kind"], strict=False))
    head1 = "".join(f'<th colspan="3" style="text-align:center">{html.escape(g[0])}</th>' for g in GROUPS)
    head2 = "<th>apart</th><th>meet</th><th>extra</th>" * len(GROUPS)
    rows = []
    for name in names:
        kind = kinds.get(name, "labelled")
        cells = []
        for _, labelled, trajectory, fmt in GROUPS:
            m = trajectory if kind == "trajectory" else labelled
            vals = (med.get((name, m, "separated")), med.get((name, m, "coalescence")), ext.get((name, m)))
            cells += [f"<td>{html.escape(_value(v, fmt))}</td>" for v in vals]
        rows.append(
            f'<tr><td class="l">{html.escape(name)}</td><td class="l">{html.escape(KIND_TEXT[kind])}</td>'
            f"{''.join(cells)}</tr>"
        )
    return (
        '<div class="wide"><table><thead>'
        '<tr><th class="l" rowspan="2">filter</th><th class="l" rowspan="2">trajectory NLL scored</th>'
        f"{head1}</tr>"
        f"<tr>{head2}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
    )


def identity_table_caption(seeds: int, clutter_rate: float, steps: int, q: int) -> str:
    """The table's caption: what its columns are."""
    return (
        f"Identity study, medians over {plural(seeds, 'seed')} (williams15, {steps} steps, "
        f"clutter {clutter_rate:g} per scan): each measure with the four objects kept apart, with "
        "them meeting, and the median over seeds of the paired extra cost of the meeting (meet minus "
        "apart). The trajectory NLL is the labelled-output one for per-frame filters (each label a "
        f"trajectory Bernoulli) and the exact trajectory-density NLL (Q = {q}) for trajectory "
        "filters; T-GOSPA and IDF1 score the estimates on position."
    )


def identity_page(summary, extra, names, caption: str) -> str:
    """The table with its caption as one HTML page."""
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f"<title>Identity study</title><style>{STYLE}</style></head><body>"
        f'<h1>What identity uncertainty is worth</h1><p class="note">{html.escape(caption)}</p>'
        f"{identity_table_html(summary, extra, names)}</body></html>\n"
    )
