"""A self-contained HTML summary of a study: what was run, the headline, a sortable leaderboard,
whether NLL and GOSPA rank the filters alike (and which posterior feature explains where not),
paired comparisons and the paper's examples.

Everything is computed from the tables of :mod:`nllbench.pipeline.aggregate` (``summary.csv``,
``paired.csv``, ``ranking.csv``, ``provenance.json``) and the example tables written by
``nllbench example --out-dir``. The page loads nothing from the network: plain JavaScript
sorts the tables.
"""

from __future__ import annotations

import html
import json
import math
import re
from pathlib import Path

import numpy as np

from nllbench.measures.declarations import declared_scores, measures_of
from nllbench.measures.names import NLL_TERM_MEASURES, PROPER_SCORES
from nllbench.pipeline.report_notes import (
    SETTING,
    estimator_html,
    identity_note,
    infinite_html,
    infinite_nll,
)
from nllbench.pipeline.report_notes import setting_text as _setting_text
from nllbench.pipeline.statistics import Q_MEASURES, RANKED

TERMS = NLL_TERM_MEASURES
#: Each NLL term as a noun phrase that follows "through the" (no article of its own).
TERM_MEANING = {
    "nll_localization": "localisation term (the matched Bernoullis' densities at the true objects: spread or offset)",  # noqa: E501
    "nll_missed": "missed-objects term (true objects left to the PPP, whose intensity there is low)",
    "nll_false": "false-objects term (existence probability on Bernoullis that match no true object)",
    "nll_cardinality": "cardinality term (the cardinality distribution at the true number of objects)",
    "nll_mixture": "mixture term (the weight of the best global hypothesis)",
    "nll_association": "association term (association uncertainty)",
}
#: The leaderboard's column headings (the ranked measures' declarations).
LABEL = {s.name: s.leaderboard for s in declared_scores() if s.leaderboard}
#: The scores with a mean [95 % CI] column in the leaderboard, in declaration order (beside the NLL's).
COLUMNS = tuple(s for s in declared_scores() if s.column)
#: The leaderboard's "n/a" cell of a score a filter has none of, with why (its declaration's words).
NOT_APPLICABLE = {
    s.name: f'<td data-sort="" title="{html.escape(s.not_applicable)}">n/a</td>'
    for s in declared_scores()
    if s.not_applicable
}
#: The leaderboard cell of a filter without a trajectory NLL (a PHD/CPHD: no track labels).
TRAJECTORY_NA = NOT_APPLICABLE["trajectory_nll"]
#: The leaderboard's P-GOSPA cell of a filter without one: a PHD/CPHD posterior has no Bernoulli.
PGOSPA_NA = NOT_APPLICABLE["pgospa_mean"]
#: The heading of a ranked measure's rank column where it is shorter than its label.
RANK_HEADING = {s.name: s.rank_heading for s in declared_scores() if s.rank_heading}
#: Scores whose "n/a" stands even where no filter has them.
_NA_EVERYWHERE = frozenset(s.name for s in declared_scores() if s.na_everywhere)
#: After the name of a filter without lasting track identities: a link to the note that explains it.
IDENTITY_MARK = ' <a href="#identities" title="no lasting track identities">†</a>'


def _fmt(x, digits: int = 2) -> str:
    x = float(x)
    if math.isnan(x):
        return "–"
    if math.isinf(x):
        return "∞" if x > 0 else "−∞"
    return f"{x:.{digits}f}"


def _num(x) -> str:
    """Sort key of a cell (numbers; infinities as the extreme floats)."""
    x = float(x)
    if math.isnan(x):
        return ""
    return "1e308" if x == math.inf else ("-1e308" if x == -math.inf else repr(x))


def _select(df, **kw):
    for k, v in kw.items():
        df = df[df[k] == v]
    return df


def nll_budget(summary) -> int:
    """The largest Murty budget Q at which the NLL was evaluated (the leaderboard's)."""
    return int(summary[summary["measure"] == "nll"]["q"].max())


def _row(summary, setting, f, measure, q):
    sel = _select(summary, scenario=setting[0], clutter=setting[1], pd=setting[2], filter=f, measure=measure)
    sel = sel[(sel["q"] == q) & (sel["cov_scale"] == 1.0)]
    return sel.iloc[0] if len(sel) else None


def _rank(ranks, setting, f, measure, q):
    sel = _select(ranks, scenario=setting[0], clutter=setting[1], pd=setting[2], filter=f, measure=measure)
    sel = sel[(sel["q"] == q) & (sel["cov_scale"] == 1.0)]
    return int(sel["rank"].iloc[0]) if len(sel) else None


def settings_and_filters(summary):
    """Sorted settings (scenario, clutter, pd) and filters of the study."""
    keys = summary[SETTING].drop_duplicates().sort_values(SETTING)
    return [tuple(r) for r in keys.itertuples(index=False)], sorted(summary["filter"].unique())


def best_scale(summary, setting, f) -> float | None:
    """Covariance scale s with the lowest median NLL among the probes (None without probes)."""
    sel = _select(summary, scenario=setting[0], clutter=setting[1], pd=setting[2], filter=f, measure="nll")
    probed = sel[sel["cov_scale"] != 1.0]
    if probed.empty:
        return None
    q = int(probed["q"].max())
    sel = sel[sel["q"] == q].sort_values("cov_scale")
    med = sel["median"].to_numpy(dtype=float)
    if not np.isfinite(med).any():
        return None
    return float(sel["cov_scale"].to_numpy()[int(np.argmin(med))])


def _pair(pairs, setting, a, b, measure, q):
    """(median difference a - b, interval excludes 0) from paired.csv, whichever order it was stored in."""
    sel = _select(pairs, scenario=setting[0], clutter=setting[1], pd=setting[2], measure=measure)
    sel = sel[(sel["q"] == q) & (sel["cov_scale"] == 1.0)]
    for x, y, sign in ((a, b, 1.0), (b, a, -1.0)):
        r = sel[(sel["filter_a"] == x) & (sel["filter_b"] == y)]
        if len(r):
            r = r.iloc[0]
            separated = bool(r["ci95_low"] > 0 or r["ci95_high"] < 0)
            return sign * float(r["median_difference"]), separated
    return math.nan, False


def explain(summary, setting, winner: str, loser: str, q: int) -> str:
    """Why the NLL ranks ``loser`` below ``winner``: the largest term gap, calibration, infinite runs."""
    parts = []
    total = _row(summary, setting, loser, "nll", q)
    if total is not None and int(total["n_infinite"]):
        parts.append(
            f"{loser}'s posterior gives the truth zero density in {int(total['n_infinite'])} of "
            f"{int(total['n'])} seeds"
        )
    if total is not None and int(total["n_infinite"]) == int(total["n"]):
        return parts[0]  # no finite run to decompose: zero density is the whole story
    gaps = []
    for t in TERMS:
        lo, wi = _row(summary, setting, loser, t, q), _row(summary, setting, winner, t, q)
        if lo is not None and wi is not None:
            gap = float(lo["finite_mean"]) - float(wi["finite_mean"])
            if np.isfinite(gap):
                gaps.append((gap, t))
    if gaps:
        gap, term = max(gaps)
        loc = _row(summary, setting, loser, "nll_localization", q)
        if term == "nll_missed" and loc is not None and float(loc["finite_mean"]) == 0.0:
            parts.append(
                f"{loser}'s posterior is a PPP (no Bernoullis), which explains every object by its intensity, "  # noqa: E501
                "so its whole NLL is in the missed-objects term"
            )
        if gap > 0:
            parts.append(
                f"its NLL exceeds {winner}'s mostly through the {TERM_MEANING[term]}, "
                f"+{gap:.2f} nats per step"
            )
    s = best_scale(summary, setting, loser)
    if s is not None and s != 1.0:
        kind = "too small: over-confident" if s > 1 else "too large: under-confident"
        parts.append(f"its NLL is lowest with covariances scaled by s = {s:g} (its covariances are {kind})")
    return "; ".join(parts) if parts else "no single term or probe stands out"


def agreement(summary, pairs, q: int) -> list[dict]:
    """Per setting: do NLL and GOSPA order every pair of filters alike? Discordant pairs, explained.

    A pair is discordant when the paired median differences of NLL and GOSPA
    prefer different filters; ``significant`` when both paired intervals
    exclude zero. Explanations come from :func:`explain`.
    """
    settings, filters = settings_and_filters(summary)
    out = []
    for setting in settings:
        discordant = []
        for i, a in enumerate(filters):
            for b in filters[i + 1 :]:
                d_nll, s_nll = _pair(pairs, setting, a, b, "nll", q)
                d_gospa, s_gospa = _pair(pairs, setting, a, b, "gospa_mean", 0)
                if np.isnan(d_nll) or np.isnan(d_gospa) or d_nll * d_gospa >= 0:
                    continue
                winner, loser = (a, b) if d_nll < 0 else (b, a)
                discordant.append(
                    {
                        "nll_prefers": winner,
                        "gospa_prefers": loser,
                        "significant": s_nll and s_gospa,
                        "why": explain(summary, setting, winner, loser, q),
                    }
                )
        out.append({"setting": setting, "discordant": discordant})
    return out


STYLE = """
body{font:15px/1.45 system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;
max-width:1400px;margin:1.5em auto;padding:0 1em;color:#222}
.wide{overflow-x:auto;max-width:100%}details{margin:.3em 0}summary{cursor:pointer;padding:.2em 0}
h1{font-size:1.6em;margin-bottom:.2em}h2{margin-top:1.6em;border-bottom:1px solid #ddd;padding-bottom:.2em}
table{border-collapse:collapse;margin:.6em 0 1.2em;font-size:13px}
th,td{padding:4px 6px;border-bottom:1px solid #e4e4e4;text-align:right;white-space:nowrap;vertical-align:top}
th{background:#f3f5f8;position:sticky;top:0;cursor:pointer;user-select:none}
th:hover{background:#e4e9f2}td.l,th.l{text-align:left}tr:hover td{background:#fafbfd}
.ci{color:#777;font-size:11px}.sw{display:inline-block;width:.8em;height:.8em;border-radius:2px;margin-right:5px;
vertical-align:-1px}.best{font-weight:600}.note{color:#555;font-size:13px}.inf{color:#b2182b}
dl{display:grid;grid-template-columns:max-content auto;gap:2px 14px;font-size:13px}
dt{font-weight:600}dd{margin:0}
"""
SORT_JS = """
document.querySelectorAll('table.sortable th').forEach(function (th) {
  th.title = 'click to sort';
  th.addEventListener('click', function () {
    var i = th.cellIndex;
    var body = th.closest('table').tBodies[0], rows = Array.prototype.slice.call(body.rows);
    var asc = th.dataset.order !== 'asc';
    th.dataset.order = asc ? 'asc' : 'desc';
    rows.sort(function (a, b) {
      var x = a.cells[i].dataset.sort, y = b.cells[i].dataset.sort;
      if (x === undefined) { x = a.cells[i].textContent; y = b.cells[i].textContent; }
      var nx = parseFloat(x), ny = parseFloat(y);
      var c = (isNaN(nx) || isNaN(ny)) ? x.localeCompare(y) : nx - ny;
      return asc ? c : -c;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  });
});
"""


def _filter_cell(name: str, styles, mark: str = "") -> str:
    """A filter's name after a swatch of its colour; ``mark`` (HTML) follows the name."""
    colour = styles[name].color if name in styles else "#999"
    return f'<td class=l data-sort="{html.escape(name)}"><span class=sw style="background:{colour}"></span>{html.escape(name)}{mark}</td>'  # noqa: E501


def _stat_cell(row, centre: str, low: str, high: str, why: str = "") -> str:
    """A centre value over its interval (two lines: the table fits a page); "inf k/n" when seeds are."""
    if row is None:
        return "<td>–</td>"
    inf = int(row["n_infinite"])
    title = f"seeds with an infinite value{': ' + why if why else ''}"
    note = f'<br><span class=inf title="{html.escape(title)}">inf {inf}/{int(row["n"])}</span>' if inf else ""
    return (
        f'<td data-sort="{_num(row[centre])}">{_fmt(row[centre])}'
        f"<br><span class=ci>[{_fmt(row[low])}, {_fmt(row[high])}]</span>{note}</td>"
    )


def short_setting(setting, settings) -> str:
    """``setting`` by what varies among ``settings`` (the clutter rate alone in a clutter sweep)."""
    parts = [
        setting[0] if len({s[0] for s in settings}) > 1 else "",
        f"clutter {setting[1]:g}",
        f"P_D {setting[2]:g}" if len({s[2] for s in settings}) > 1 else "",
    ]
    return ", ".join(p for p in parts if p)


def leaderboard_html(summary, ranks, q: int, styles) -> str:
    """The filter x setting table: NLL median [IQR] and mean [95 % CI]; the mean [CI] of each score
    declared with a column (GOSPA, MOTA, T-GOSPA, HOTA, the trajectory NLL, P-GOSPA; "–" where the
    metrics files predate it, "n/a" where it does not apply: a declared ``not_applicable``, e.g. the
    trajectory NLL of a filter without track labels, P-GOSPA of a PHD/CPHD filter); a rank per ranked
    measure."""
    settings, filters = settings_and_filters(summary)
    from nllbench.pipeline.plots.captions import NO_IDENTITY, infinite_reason

    head = (
        "<tr><th class=l>setting</th><th class=l>filter</th><th>NLL median<br>[IQR]</th>"
        "<th>NLL mean<br>[95 % CI]</th>"
        + "".join(f"<th>{s.leaderboard or s.label} mean<br>[95 % CI]</th>" for s in COLUMNS)
        + "".join(f"<th>rank<br>{RANK_HEADING.get(m, LABEL[m])}</th>" for m in RANKED)
        + "</tr>"
    )
    present = set(summary["measure"])
    na = {m: cell for m, cell in NOT_APPLICABLE.items() if m in present or m in _NA_EVERYWHERE}
    body = []
    for setting in settings:
        for f in filters:
            nll = _row(summary, setting, f, "nll", q)
            if nll is None:
                continue
            where = dict(zip(SETTING, setting, strict=True))
            why = infinite_reason(summary, f, q, where) if int(nll["n_infinite"]) else ""
            cells = []
            for s in COLUMNS:
                row = _row(summary, setting, f, s.name, q if s.q_dependent else 0)
                cells.append(na[s.name] if row is None and s.name in na else _stat_cell(row, *_MEAN_CI))
            rank_cells = []
            for m in RANKED:
                r = _rank(ranks, setting, f, m, q if m in Q_MEASURES else 0)
                if r is None and m in _NA_EVERYWHERE:
                    rank_cells.append(NOT_APPLICABLE[m])
                    continue
                cls = " class=best" if r == 1 else ""
                rank_cells.append(
                    f'<td{cls} data-sort="{r if r is not None else ""}">{r if r is not None else "–"}</td>'
                )
            mark = IDENTITY_MARK if f in NO_IDENTITY else ""
            body.append(
                f'<tr><td class=l title="{html.escape(_setting_text(setting))}">'
                f"{html.escape(short_setting(setting, settings))}</td>{_filter_cell(f, styles, mark)}"
                + _stat_cell(nll, "median", "q25", "q75", why)
                + _stat_cell(nll, "mean", "ci95_low", "ci95_high", why)
                + "".join(cells)
                + "".join(rank_cells)
                + "</tr>"
            )
    return f"<table class=sortable id=leaderboard><thead>{head}</thead><tbody>{''.join(body)}</tbody></table>"


#: A mean [95 % CI] cell's columns of the summary table.
_MEAN_CI = ("mean", "ci95_low", "ci95_high")


#: The proper scores' columns of :func:`proper_scores_html`: (measure, heading), their declarations'
#: names in running text (the caption, else the label).
PROPER_COLUMNS = tuple(
    (s.name, s.caption or s.label) for m in measures_of("proper") for s in m.scores if s.better is not None
)


def proper_scores_html(summary, ranks, q: int, styles) -> str:
    """The filter x setting table of the proper scores beside the NLL: NLL mean [95 % CI] (with its
    infinite runs), then the set energy, intensity and cardinality scores mean [95 % CI] and their ranks.

    Empty note when the tables have no proper scores (metrics files evaluated without them).
    """
    if not set(PROPER_SCORES) & set(summary["measure"]):
        return "<p>No proper scores in these tables (the runs were evaluated without them).</p>"
    settings, filters = settings_and_filters(summary)
    head = (
        "<tr><th class=l>setting</th><th class=l>filter</th><th>NLL mean<br>[95 % CI]</th>"
        + "".join(f"<th>{h} mean<br>[95 % CI]</th>" for _, h in PROPER_COLUMNS)
        + "".join(f"<th>rank<br>{h}</th>" for _, h in PROPER_COLUMNS)
        + "</tr>"
    )
    body = []
    for setting in settings:
        for f in filters:
            rows = [_row(summary, setting, f, m, 0) for m, _ in PROPER_COLUMNS]
            if all(r is None for r in rows):
                continue
            rank_cells = []
            for m, _ in PROPER_COLUMNS:
                r = _rank(ranks, setting, f, m, 0)
                cls = " class=best" if r == 1 else ""
                rank_cells.append(
                    f'<td{cls} data-sort="{r if r is not None else ""}">{r if r is not None else "–"}</td>'
                )
            body.append(
                f'<tr><td class=l title="{html.escape(_setting_text(setting))}">'
                f"{html.escape(short_setting(setting, settings))}</td>{_filter_cell(f, styles)}"
                + _stat_cell(_row(summary, setting, f, "nll", q), "mean", "ci95_low", "ci95_high")
                + "".join(_stat_cell(r, "mean", "ci95_low", "ci95_high") for r in rows)
                + "".join(rank_cells)
                + "</tr>"
            )
    return (
        f"<table class=sortable id=proper-scores><thead>{head}</thead><tbody>{''.join(body)}</tbody></table>"
    )


def paired_html(pairs, q: int, styles) -> str:
    """Paired differences (a - b) of NLL, GOSPA and MOTA at covariance scale 1, one folded table per setting.

    Each setting is a ``<details>`` element whose summary counts its
    comparisons and those whose 95 % interval excludes zero; the tables sort
    on their own.
    """
    sel = pairs[(pairs["cov_scale"] == 1.0) & pairs["measure"].isin(RANKED)]
    sel = sel[(sel["measure"].isin(Q_MEASURES) & (sel["q"] == q)) | (sel["q"] == 0)]
    head = (
        "<tr><th class=l>measure</th><th class=l>filter a</th><th class=l>filter b</th>"
        "<th>mean a − b [95 % CI]</th><th>median a − b</th><th>a lower / b lower (seeds)</th>"
        "<th>Wilcoxon p</th><th>seeds</th></tr>"
    )
    parts = []
    for setting, g in sel.groupby(SETTING, sort=True):
        body = []
        for r in g.itertuples():
            both = f" (+{r.n_both_infinite} both inf)" if r.n_both_infinite else ""
            body.append(
                f"<tr><td class=l>{LABEL[r.measure]}</td>"
                f"{_filter_cell(r.filter_a, styles)}{_filter_cell(r.filter_b, styles)}"
                f'<td data-sort="{_num(r.mean_difference)}">{_fmt(r.mean_difference)} '
                f"<span class=ci>[{_fmt(r.ci95_low)}, {_fmt(r.ci95_high)}]</span></td>"
                f'<td data-sort="{_num(r.median_difference)}">{_fmt(r.median_difference)}</td>'
                f"<td>{r.a_lower} / {r.b_lower}</td>"
                f'<td data-sort="{_num(r.wilcoxon_p)}">{_fmt(r.wilcoxon_p, 3)}</td>'
                f"<td>{r.n_compared}{both}</td></tr>"
            )
        separated = int(((g["ci95_low"] > 0) | (g["ci95_high"] < 0)).sum())
        parts.append(
            f"<details><summary><b>{html.escape(_setting_text(tuple(setting)))}</b>: "
            f"{len(g)} comparisons, {separated} with the 95 % interval excluding zero</summary>"
            f"<table class=sortable><thead>{head}</thead><tbody>{''.join(body)}</tbody></table></details>"
        )
    if not parts:
        return "<p>No paired comparison (a single filter per setting).</p>"
    return f"<div id=paired>{''.join(parts)}</div>"


def headline(summary, ranks, agree, q: int) -> str:
    """One sentence per setting: the best filters by NLL and GOSPA, and whether the orders agree."""
    from nllbench.pipeline.plots.style import plural

    items = []
    for entry in agree:
        setting = entry["setting"]
        best = {}
        for m in ("nll", "gospa_mean"):
            sel = _select(ranks, scenario=setting[0], clutter=setting[1], pd=setting[2], measure=m)
            sel = sel[(sel["q"] == (q if m == "nll" else 0)) & (sel["cov_scale"] == 1.0) & (sel["rank"] == 1)]
            best[m] = ", ".join(sorted(sel["filter"])) or "–"
        sig = [d for d in entry["discordant"] if d["significant"]]
        if not entry["discordant"]:
            verdict = "NLL and GOSPA order every pair of filters the same way"
        else:
            verdict = (
                f"NLL and GOSPA disagree on {plural(len(entry['discordant']), 'pair')} of filters "
                f"({len(sig)} with both paired intervals excluding zero)"
            )
        items.append(
            f"<li><b>{html.escape(_setting_text(setting))}</b>: best by NLL (Q = {q}): {html.escape(best['nll'])}; "  # noqa: E501
            f"best by GOSPA: {html.escape(best['gospa_mean'])}. {verdict}.</li>"
        )
    return "<ul>" + "".join(items) + "</ul>"


def agreement_html(agree) -> str:
    rows = []
    for entry in agree:
        for d in entry["discordant"]:
            rows.append(
                f"<tr><td class=l>{html.escape(_setting_text(entry['setting']))}</td>"
                f"<td class=l>{html.escape(d['nll_prefers'])}</td><td class=l>{html.escape(d['gospa_prefers'])}</td>"  # noqa: E501
                f"<td class=l>{'yes' if d['significant'] else 'no'}</td>"
                f"<td class=l style='white-space:normal'>{html.escape(d['why'])}</td></tr>"
            )
    if not rows:
        return "<p>In every setting, NLL and GOSPA order every pair of filters the same way.</p>"
    head = (
        "<tr><th class=l>setting</th><th class=l>NLL prefers</th><th class=l>GOSPA prefers</th>"
        "<th class=l>both significant</th><th class=l>what in the posterior explains it</th></tr>"
    )
    return f"<table class=sortable id=agreement><thead>{head}</thead><tbody>{''.join(rows)}</tbody></table>"


def examples_html(example_dirs) -> str:
    """The paper's examples: NLL (Q = 1 and exact), the paper's NLL, GOSPA, MOTA and MOTP per tracker."""
    import pandas as pd

    parts = []
    for d in example_dirs:
        table = pd.read_csv(Path(d) / "table.csv")
        head = (
            "<tr><th class=l>tracker</th><th>NLL</th><th>NLL exact</th><th>paper's NLL</th><th>GOSPA</th>"
            "<th>MOTA</th><th>MOTP</th></tr>"
        )
        body = "".join(
            f"<tr><td class=l>{html.escape(str(r.tracker))}</td><td>{_fmt(r.nll)}</td><td>{_fmt(r.nll_exact)}</td>"  # noqa: E501
            f"<td>{_fmt(r.paper_nll, 1)}</td><td>{_fmt(r.gospa)}</td><td>{_fmt(r.mota)}</td><td>{_fmt(r.motp)}</td></tr>"  # noqa: E501
            for r in table.itertuples()
        )
        title = re.sub(r"(\D)(\d)", r"\1 \2", Path(d).name.capitalize())  # example1 -> Example 1
        parts.append(
            f"<h3>{html.escape(title)}</h3><table><thead>{head}</thead><tbody>{body}</tbody></table>"
        )
    return "".join(parts)


def gospa_html(path: Path) -> str:
    """The reference code's GOSPA table (``nllbench gospa-table``), if the study wrote one."""
    import pandas as pd

    if not path.exists():
        return ""
    table = pd.read_csv(path)
    head = (
        "<tr><th class=l>scenario</th><th class=l>filter</th><th>clutter</th><th>P_D</th><th>runs</th>"
        "<th>steps</th><th>mean GOSPA</th><th>RMS GOSPA</th></tr>"
    )
    body = "".join(
        f"<tr><td class=l>{html.escape(str(r.scenario))}</td><td class=l>{html.escape(str(r.filter))}</td>"
        f"<td>{float(r.clutter):g}</td><td>{float(r.pd):g}</td><td>{int(r.runs)}</td><td>{int(r.steps)}</td>"
        f"<td>{_fmt(r.mean_gospa)}</td><td>{_fmt(r.rms_gospa)}</td></tr>"
        for r in table.itertuples()
    )
    return (
        "<h2>GOSPA as the reference MATLAB code reports it</h2><p class=note>GOSPA with c = 10, p = 2, "
        "alpha = 2 on position, unprobed posteriors: the mean over steps and runs, and the root mean "
        "square that the filter authors' public code prints (docs/reference.md).</p>"
        f"<table class=sortable><thead>{head}</thead><tbody>{body}</tbody></table>"
    )


def _definition_list(obj, prefix: str = "") -> str:
    """Nested settings as a flat definition list (key path -> value), not a JSON blob."""
    items = []
    if isinstance(obj, dict):
        for k in sorted(obj):
            items.append(
                _definition_list(obj[k], f"{prefix}{k}." if isinstance(obj[k], dict) else f"{prefix}{k}")
            )
        return "".join(items)
    value = ", ".join(map(str, obj)) if isinstance(obj, list) else str(obj)
    return f"<dt>{html.escape(prefix)}</dt><dd>{html.escape(value)}</dd>"


def _fill_in_value(obj):
    """Floats of a fill-in record to 4 significant digits (the page is for reading; the CSV keeps all)."""
    if isinstance(obj, float):
        return float(f"{obj:.4g}")
    if isinstance(obj, dict):
        return {k: _fill_in_value(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_fill_in_value(v) for v in obj]
    return obj


def fill_ins_html(fill_ins, styles, q: int) -> str:
    """The external trackers' fill-ins (tables/fill_ins.csv) behind the leaderboard's numbers.

    Only the records of the leaderboard's jobs (covariance scale 1, NLL at
    ``q``) are shown; the probe jobs' records are in the CSV.
    """
    if fill_ins is None or fill_ins.empty:
        return "<p>No external tracker in this study (every filter reports its own full density).</p>"
    fill_ins = fill_ins[(fill_ins["cov_scale"] == 1.0) & (fill_ins["q"] == q)]
    head = "".join(f"<th>{h}</th>" for h in ("tracker", "setting", "Q", "cov. scale", "seeds", "fill-ins"))
    body = ""
    for r in fill_ins.itertuples(index=False):
        record = _fill_in_value(json.loads(r.fill_ins))
        setting = _setting_text((r.scenario, float(r.clutter), float(r.pd)))
        body += (
            f"<tr>{_filter_cell(str(r.filter), styles)}<td class=l>{html.escape(setting)}</td>"
            f"<td>{int(r.q)}</td><td>{float(r.cov_scale):g}</td><td>{html.escape(str(r.seeds))}</td>"
            f'<td class=l style="word-break:break-all"><dl>{_definition_list(record)}</dl></td></tr>'
        )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def leaderboard_page(tables: str | Path, example_dirs=(), theorem1: str | Path | None = None) -> str:
    """The whole HTML page (see the module docstring)."""
    import pandas as pd

    from nllbench.pipeline.plots import filter_styles

    tables = Path(tables)
    summary = pd.read_csv(tables / "summary.csv")
    pairs = pd.read_csv(tables / "paired.csv")
    ranks = pd.read_csv(tables / "ranking.csv", keep_default_na=False, na_values={"rank": []})
    provenance = json.loads((tables / "provenance.json").read_text())
    q = nll_budget(summary)
    styles = filter_styles(summary["filter"].unique())
    fill_path = tables / "fill_ins.csv"
    fill_ins = pd.read_csv(fill_path, dtype={"seeds": str}) if fill_path.exists() else None
    settings, filters = settings_and_filters(summary)
    seeds = int(summary[summary["measure"] == "nll"]["n"].max())
    agree = agreement(summary, pairs, q)
    n_disagree = sum(bool(e["discordant"]) for e in agree)
    run = (
        f"{len(filters)} filters ({', '.join(filters)}) on {len(settings)} settings "
        f"({'; '.join(_setting_text(s) for s in settings)}), up to {seeds} Monte Carlo seeds each; "
        f"NLL at Murty budgets Q = {', '.join(str(int(v)) for v in sorted(summary[summary['measure'] == 'nll']['q'].unique()))}."  # noqa: E501
    )
    config = provenance.get("config", {})
    empty = None
    if (tables / "steps.nc").exists():
        from nllbench.pipeline.cube import empty_estimate_steps, read_step_cube

        empty = empty_estimate_steps(read_step_cube(tables / "steps.nc"))
    theorem_html = ""
    if theorem1 is not None:
        text = html.escape(Path(theorem1).read_text())
        theorem_html = f"<h2>Theorem 1 on random sets</h2><pre style='font-size:12px'>{text}</pre>"
    return f"""<!DOCTYPE html>
<html lang=en><head><meta charset=utf-8><title>nllbench study: leaderboard</title>
<style>{STYLE}</style></head>
<body>
<h1>nllbench study: results at a glance</h1>
<p class=note>NLL: negative log-likelihood of each filter's multi-object posterior at the ground truth
(Pinto et al., IEEE SPL 2021), per step, in nats; lower is better. Trajectory NLL: the negative
log-likelihood of the true set of trajectories under the labelled output, per run, in nats; it sees
identities (docs/trajectory.md); n/a for posteriors without track labels (PHD, CPHD).
GOSPA: per step, lower is better.
MOTA: higher is better. Intervals over seeds: NLL median [interquartile range] (robust: the NLL is
heavy-tailed) and, for every mean, a seeded 95 % percentile-bootstrap interval. "inf k/n": k of the n
seeds whose posterior gives the truth zero density (NLL = +inf; the reason is listed below the
leaderboard); they are counted, never dropped. Ranks: 1 + the
number of filters whose paired bootstrap interval is better (ties where intervals cover zero).
Click a column header to sort.</p>
<h2>What was run</h2><p>{html.escape(run)}</p>
<h2>Headline</h2>
<p>NLL and GOSPA order the filters differently in {n_disagree} of {len(agree)} settings.</p>
{headline(summary, ranks, agree, q)}
<h2>Leaderboard (covariance scale 1, NLL at Q = {q})</h2>
<div class=wide>{leaderboard_html(summary, ranks, q, styles)}</div>
{identity_note(summary, filters)}
<h3>Infinite NLLs, and why</h3>
{infinite_html(infinite_nll(summary, q))}
<h3>Point estimator: empty steps</h3>
{estimator_html(empty)}
<h2>Proper scores beside the NLL (covariance scale 1)</h2>
<p class=note>Three more proper scores of each posterior at the truth (docs/scores.md), per step on the
position marginal, with sets embedded by a Gaussian kernel of covariance s I (s = (c / 2)^2 by default, c
the GOSPA cut-off): the set energy score (strictly proper, like the NLL: its expectation is lowest only
for the true multi-object density; estimated from samples of the posterior, its Monte Carlo standard error
in tables/runs.csv), the quadratic intensity score (proper for the intensity, the posterior's first
moment) and the ranked probability score of the number of objects. Lower is better for all three. Unlike
the NLL they stay finite where a posterior gives the truth zero density: a filter with "inf" NLL runs gets
a finite, comparable number here. Ranks as in the leaderboard (paired intervals over seeds).</p>
<div class=wide>{proper_scores_html(summary, ranks, q, styles)}</div>
<h2>Where NLL and GOSPA disagree, and why</h2>
<p class=note>A pair is listed when the paired median differences of NLL and GOSPA prefer different
filters. The explanation names the NLL term (from the decomposition) in which the NLL's loser is worse,
and what the calibration probe says about its covariances.</p>
{agreement_html(agree)}
<h2>Paired comparisons (same seeds, same truth and measurements)</h2>
<p class=note>One table per setting (click to open): NLL at Q = {q}, GOSPA and MOTA, covariance scale 1;
every comparison is in tables/paired.csv.</p>
{paired_html(pairs, q, styles)}
<h2>External trackers' fill-ins</h2>
<p class=note>What nllbench filled in for each external tracker (<code>nllbench score</code>; docs/score.md):
the undetected-object intensity, covariances and existence probabilities it does not report, with every
fitted value and the calibration run it was fitted on, for the leaderboard's runs (covariance scale 1,
Q = {q}; every job's record is in tables/fill_ins.csv). The NLL of such a tracker depends on these
choices.</p>
{fill_ins_html(fill_ins, styles, q)}
<h2>The paper's examples</h2>
{examples_html(example_dirs)}
{theorem_html}
{gospa_html(tables / "gospa.csv")}
<h2>Settings</h2><dl>{_definition_list(config)}</dl>
<script>{SORT_JS}</script>
</body></html>
"""


def write_leaderboard(
    tables: str | Path, example_dirs, output: str | Path, theorem1: str | Path | None = None
) -> Path:
    """Write :func:`leaderboard_page` to ``output`` atomically (no partial file on error)."""
    from nllbench.store import write_text

    return write_text(output, leaderboard_page(tables, example_dirs, theorem1))
