"""The propriety audit's verdict table as a self-contained HTML page, and its caption (``docs/audit.md``).

Reads the tables of :mod:`nllbench.pipeline.audit` (verdicts, overall verdicts,
the reference filters' preferred probes) and computes nothing: one row per
measure, one letter per (density, probe family) as in ``docs/audit.md``, the
overall verdict, and the run's settings. The Snakemake report shows the page
(``workflow/rules/audit.smk``); ``nllbench audit`` writes it as ``verdicts.html``.
"""

from __future__ import annotations

import html

from nllbench.measures.run.audit_scores import FRAME_MEASURES, TRAJECTORY_MEASURES
from nllbench.pipeline.plots.audit import (
    FAMILY_LABELS,
    MEASURE_LABELS,
    VERDICT_COLOURS,
    value_text,
    verdict_groups,
)
from nllbench.pipeline.report import STYLE

#: One letter per family verdict (docs/audit.md): the table's cells.
VERDICT_LETTERS = {
    "strictly proper": "S",
    "proper": "P",
    "insensitive": "=",
    "improper (rewards over-confidence)": "O",
    "improper (rewards under-confidence)": "U",
    "improper (rewards over- and under-confidence)": "OU",
    "improper (rewards a wrong density)": "W",
    "no-op": ".",
}
#: Short column heads of the probe families (the full label is the head's tooltip).
FAMILY_HEADS = {"covariance": "cov", "existence": "r", "shift": "shift", "cardinality": "&plusmn;1"}
#: Verdicts whose colour is dark enough for white letters.
_DARK = {
    "strictly proper",
    "improper (rewards over-confidence)",
    "improper (rewards under-confidence)",
    "improper (rewards over- and under-confidence)",
}


def _measures(names) -> list[str]:
    present = set(names)
    return [m for m in (*FRAME_MEASURES, *TRAJECTORY_MEASURES) if m in present]


def _label(measure: str) -> str:
    return MEASURE_LABELS.get(measure, measure)


def verdicts_caption(summary, record: dict) -> str:
    """The table's caption from the run: its draws, seed and z, then which measures got which verdict."""
    s = record["settings"]
    groups = verdict_groups(summary)
    parts = [f"{k}: " + ", ".join(_label(m) for m in ms) for k, ms in groups.items() if ms]
    return (
        "Propriety audit, verdict table: one letter per density and probe family (cov: covariances scaled, "
        "r: existence tempered, shift: means shifted, +-1: a Bernoulli dropped or added): S strictly "
        "proper, P proper, = insensitive, O rewards over-confidence, "
        "U under-confidence, OU both, W a shifted or wrong-size density, . the probe leaves the density "
        "unchanged; hover a cell for the probe value of the smallest expected score. "
        f"In this run ({s['n_draws']} truths per density, seed {s['seed']}, z = {s['z']:g} paired standard "
        f"errors): {'; '.join(parts)}."
    )


def _cell(row) -> str:
    if row is None:
        return "<td></td>"
    colour = VERDICT_COLOURS[row.verdict][0]
    ink = "#fff" if row.verdict in _DARK else "#222"
    title = f"{row.verdict}; smallest expected score at {value_text(row.family, row.argmin)}"
    if isinstance(row.better, str) and row.better:
        title += f"; better than honest: {row.better}"
    return (
        f'<td style="background:{colour};color:{ink};text-align:center;padding:3px 4px;border:1px solid #fff"'
        f' title="{html.escape(title)}">'
        f"{VERDICT_LETTERS[row.verdict]}</td>"
    )


def verdicts_html(verdicts, summary) -> str:
    """The verdict table: measures (rows) x (density, family) (columns), then the overall verdict."""
    index = {(r.density, r.measure, r.family): r for r in verdicts.itertuples()}
    densities = list(dict.fromkeys(verdicts["density"]))
    families = list(FAMILY_LABELS)
    verdict_of = dict(zip(summary["measure"], summary["verdict"], strict=True))
    head1 = "".join(
        f'<th colspan="{len(families)}" style="text-align:center">{html.escape(str(d))}</th>'
        for d in densities
    )
    head2 = "".join(
        f'<th title="{html.escape(FAMILY_LABELS[f])}" style="text-align:center">{FAMILY_HEADS[f]}</th>'
        for f in families
    ) * len(densities)
    rows = []
    for m in _measures(verdicts["measure"]):
        cells = "".join(_cell(index.get((d, m, f))) for d in densities for f in families)
        verdict = str(verdict_of.get(m, ""))
        cls = ' class="l inf"' if verdict.startswith("improper") else ' class="l"'
        rows.append(
            f'<tr><td class="l">{html.escape(_label(m))}</td>{cells}<td{cls}>{html.escape(verdict)}</td></tr>'
        )
    return (
        '<div class="wide"><table><thead>'
        f'<tr><th class="l" rowspan="2">measure</th>{head1}'
        '<th class="l" rowspan="2">overall verdict</th></tr>'
        f"<tr>{head2}</tr></thead><tbody>{''.join(rows)}</tbody></table></div>"
    )


def preferences_html(prefs) -> str:
    """Part 2: the probe value each measure prefers on each filter's run.

    ``*``: better than the unprobed posterior beyond z SE; ``=``: the measure does not see the probe.
    """
    columns = list(dict.fromkeys(zip(prefs["filter"], prefs["family"], strict=True)))
    index = {(r.filter, r.measure, r.family): r for r in prefs.itertuples()}
    head = "".join(
        f"<th>{html.escape(str(n))}<br>{'s' if f == 'covariance' else 'tau'}</th>" for n, f in columns
    )
    rows = []
    for m in _measures(prefs["measure"]):
        cells = []
        for n, f in columns:
            r = index.get((n, m, f))
            if r is None:
                text = ""
            elif r.insensitive:
                text = "="
            else:
                text = value_text(f, r.preferred) + ("*" if isinstance(r.better, str) and r.better else "")
            cells.append(f"<td>{html.escape(text)}</td>")
        rows.append(f'<tr><td class="l">{html.escape(_label(m))}</td>{"".join(cells)}</tr>')
    return (
        f'<div class="wide"><table><thead><tr><th class="l">measure</th>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table></div>"
    )


def verdicts_page(verdicts, summary, prefs, record: dict) -> tuple[str, str]:
    """(HTML page, caption) of the audit's verdicts; ``prefs`` (part 2) may be None.

    ``record`` is the run's record as ``nllbench audit`` writes it to
    ``run.json`` (its ``settings``; its timings are not shown, so the page
    is the same bytes on a rerun).
    """
    s = record["settings"]
    caption = verdicts_caption(summary, record)
    body = [
        "<h1>Which measures reward honest uncertainty?</h1>",
        f'<p class="note">{html.escape(caption)}</p>',
        verdicts_html(verdicts, summary),
    ]
    if prefs is not None and len(prefs):
        body += [
            "<h2>Reference filters: the probe value each measure prefers</h2>",
            '<p class="note">Mean score over the run\'s steps against the simulated truth; s: every '
            "covariance times s, tau: existence logit tempered about 1/2 (tau &gt; 1 towards 0/1); * better "
            f"than the posterior as it is by more than {s['z']:g} paired SE; = the measure does not see the "
            "probe.</p>",
            preferences_html(prefs),
        ]
    settings = ", ".join(
        f"{k} = {' '.join(f'{x:g}' for x in v) if isinstance(v, list) else v}" for k, v in sorted(s.items())
    )
    body.append(f'<p class="note">Settings: {html.escape(settings)}. Method: docs/audit.md.</p>')
    page = (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        "<title>nllbench propriety audit</title>"
        f"<style>{STYLE}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n"
    )
    return page, caption
