"""The proper-scores figure and leaderboard section: beside the NLL and GOSPA, finite where the NLL is not."""

from __future__ import annotations

import json

import matplotlib
import numpy as np
import pytest
from matplotlib.colors import to_hex
from support.proper_score_study import FILTERS, study_runs

from nllbench.measures.names import PROPER_SCORES
from nllbench.pipeline import plots
from nllbench.pipeline.report import write_leaderboard
from nllbench.pipeline.statistics import paired, ranking, summarise

matplotlib.use("Agg")


@pytest.fixture(scope="module")
def tables():
    runs = study_runs()
    pairs = paired(runs)
    return summarise(runs), pairs, ranking(pairs)


def test_the_figure_sets_the_scores_beside_nll_and_gospa_and_marks_the_infinite_nll(tables):
    summary = tables[0]
    fig = plots.fig_proper_scores(summary, 10)
    panels = [ax for ax in fig.axes if ax.lines]
    titles = [ax.get_title() for ax in panels]
    assert [t.split(":")[0] for t in titles] == [
        "NLL (Q = 10)",
        "GOSPA",
        "set energy score",
        "intensity score",
        "cardinality RPS",
    ]
    styles = plots.filter_styles(FILTERS)
    nll, gospa, *scores = panels
    # mbm01's infinite median at both clutter rates: two open triangles in the row named "inf" once
    marks = [ln for ln in nll.lines if ln.get_marker() == "^" and ln.get_markerfacecolor() == "none"]
    assert sum(len(ln.get_xdata()) for ln in marks) == 2
    assert [t.get_text() for t in nll.texts].count("inf") == 1
    for ax in scores:
        drawn = {
            line.get_label(): to_hex(line.get_color()) for line in ax.lines if line.get_label()[0] != "_"
        }
        # every filter with the scores, finite (a line, no 'inf' mark); the tracker without them absent
        assert drawn == {f: to_hex(styles[f].color) for f in ("mbm01", "phd", "pmbm")}, ax.get_title()
        assert not [t for t in ax.texts if t.get_text() == "inf"]
        mbm01 = next(line for line in ax.lines if line.get_label() == "mbm01")
        assert np.isfinite(mbm01.get_ydata()).all() and len(mbm01.get_ydata()) == 2
    legend = [t.get_text() for t in fig.axes[-1].get_legend().get_texts()]
    assert "mbm01 (NLL inf in 4/4 seeds at every clutter rate)" in legend, legend
    assert {t.split(" (")[0] for t in legend} == set(FILTERS)
    assert "zz_tracker (no proper scores)" in legend


def test_the_figure_refuses_tables_without_the_scores(tables):
    summary = tables[0]
    with pytest.raises(ValueError, match="evaluated without the proper scores"):
        plots.fig_proper_scores(summary[~summary["measure"].isin(PROPER_SCORES)], 10)


def test_leaderboard_has_the_scores_with_their_ranks_and_a_finite_mbm01(tmp_path, tables):
    summary, pairs, ranks = tables
    summary.to_csv(tmp_path / "summary.csv", index=False)
    pairs.to_csv(tmp_path / "paired.csv", index=False)
    ranks.to_csv(tmp_path / "ranking.csv", index=False)
    (tmp_path / "provenance.json").write_text(json.dumps({"config": {}}))
    page = write_leaderboard(tmp_path, [], tmp_path / "page.html").read_text()
    section = page[page.index("<table class=sortable id=proper-scores>") :]
    section = section[: section.index("</table>")]
    assert "stay finite where a posterior gives the truth zero density" in page
    for head in ("energy score mean", "intensity score mean", "cardinality RPS mean", "rank<br>energy score"):
        assert head in section, head
    rows = section.split("<tr>")[2:]
    assert len(rows) == 2 * 3  # two settings x the three filters with scores; the tracker has none
    mbm01 = [r for r in rows if "mbm01" in r]
    assert len(mbm01) == 2 and all("inf 4/4" in r for r in mbm01)  # its NLL: infinite in every run
    for r in mbm01:  # its scores: finite, ranked last
        cells = r.split("<td")[4:7]
        assert all("∞" not in c for c in cells)
        assert r.endswith('<td data-sort="3">3</td></tr>')


def test_the_figure_says_so_when_no_run_has_the_intensity_score(tables):
    """No closed form anywhere (e.g. Laplace densities): the intensity panel says why; the rest is drawn."""
    summary = tables[0]
    fig = plots.fig_proper_scores(summary[summary["measure"] != "intensity_score_mean"], 10)
    panel = next(ax for ax in fig.axes if ax.get_title().startswith("intensity score"))
    assert not panel.lines and any("no intensity score in these runs" in t.get_text() for t in panel.texts)
    drawn = [ax.get_title().split(":")[0] for ax in fig.axes if ax.lines]
    assert drawn == ["NLL (Q = 10)", "GOSPA", "set energy score", "cardinality RPS"]
    from nllbench.pipeline.plots.style import CAPTION_ATTRIBUTE

    run = getattr(fig, CAPTION_ATTRIBUTE).split("In this run:")[-1]
    assert "Lowest mean energy score" in run and "intensity score" not in run
