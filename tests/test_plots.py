"""Figures name the right filters: every panel's legend against the data drawn, with a filter
whose NLL is infinite in every run; styles fixed per filter; infinite values shown."""

from __future__ import annotations

import itertools

import matplotlib
import numpy as np
import pandas as pd
import pytest
from matplotlib.colors import to_hex

from nllbench import plots
from nllbench.aggregate import summarise

matplotlib.use("Agg")

FILTERS = ["mbm01", "phd", "pmb", "zz_user_tracker"]  # mbm01: NLL +inf in every run
TERMS = ["nll_localization", "nll_missed", "nll_false", "nll_cardinality", "nll_mixture", "nll_association"]


def study_runs() -> pd.DataFrame:
    """A small per-run table as written by nllbench.aggregate.collect."""
    rng = np.random.default_rng(0)
    rows = []
    base = {"scenario": "williams15", "pd": 0.9, "temper": 1.0, "marginal": "position"}
    for f, clutter, s, seed in itertools.product(FILTERS, [5.0, 20.0], [0.5, 1.0, 2.0], range(4)):
        row = {**base, "filter": f, "clutter": clutter, "cov_scale": s, "seed": seed}
        for q in (1, 10):
            nll = np.inf if f == "mbm01" else 10 + rng.gamma(2.0) + clutter / 10
            rows.append({**row, "q": q, "measure": "nll", "value": nll})
            for t in TERMS:
                v = np.inf if (f == "mbm01" and t == "nll_missed") else rng.uniform(0, 3)
                rows.append({**row, "q": q, "measure": t, "value": v})
        rows.append({**row, "q": 0, "measure": "gospa_mean", "value": rng.uniform(2, 5)})
        rows.append({**row, "q": 0, "measure": "mota", "value": rng.uniform(0, 1)})
        rows.append({**row, "q": 0, "measure": "nll_exact", "value": np.inf if f == "mbm01" else 11.0})
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def summary():
    return summarise(study_runs())


def legend_entries(ax) -> dict[str, str]:
    """Legend label (filter name, before any note) -> colour of its handle."""
    legend = ax.get_legend()
    assert legend is not None, f"panel {ax.get_title()!r} draws lines but has no legend"
    out = {}
    for text, handle in zip(legend.get_texts(), legend.legend_handles, strict=True):
        out[text.get_text().split(" (")[0]] = to_hex(handle.get_color())
    return out


def drawn_lines(ax) -> dict[str, str]:
    """Labelled data lines of a panel: filter name -> colour."""
    return {
        line.get_label().split(" (")[0]: to_hex(line.get_color())
        for line in ax.lines
        if not line.get_label().startswith("_")
    }


@pytest.mark.parametrize("figure", ["clutter", "q", "calibration"])
def test_every_panel_names_every_filter_in_its_own_colour(summary, figure):
    fig = {
        "clutter": lambda: plots.fig_vs_clutter(summary, 10),
        "q": lambda: plots.fig_nll_vs_q(summary),
        "calibration": lambda: plots.fig_calibration(summary),
    }[figure]()
    styles = plots.filter_styles(FILTERS)
    panels = [ax for ax in fig.axes if ax.lines]
    assert panels
    seen = set()
    for ax in panels:
        entries = legend_entries(ax)
        filters_shown = sorted(set(entries) - {"exact NLL"})  # the q figure's dotted reference line
        seen |= set(filters_shown)
        if figure != "q":  # the q figure has one panel per filter
            assert filters_shown == sorted(FILTERS), ax.get_title()
        else:
            assert filters_shown == [ax.get_title()]
        drawn = drawn_lines(ax)
        assert entries.get("exact NLL") == drawn.get("exact NLL"), ax.get_title()
        drawn.pop("exact NLL", None)
        entries.pop("exact NLL", None)
        assert entries == drawn, ax.get_title()  # the legend names the line it shows
        for name in filters_shown:
            assert entries[name] == to_hex(styles[name].color), (ax.get_title(), name)
        texts = [t.get_text() for t in ax.get_legend().get_texts()]
        if "NLL" in ax.get_title() or ax.get_title() == "mbm01":  # the all-infinite filter: announced
            assert any(t.startswith("mbm01 (inf in") for t in texts), texts
            assert any(t.get_text() == "inf" for t in ax.texts)
    assert seen == set(FILTERS)


def test_decomposition_marks_infinite_terms_and_shares_scale(summary):
    fig = plots.fig_decomposition(summary, 10)
    bars = [ax for ax in fig.axes if ax.patches]
    assert len(bars) == 2
    assert bars[0].get_ylim() == bars[1].get_ylim()
    for ax in bars:
        assert [t.get_text() for t in ax.get_xticklabels()] == sorted(FILTERS)
        notes = [t.get_text() for t in ax.texts]
        assert any("inf in 4/4" in n and "missed" in n for n in notes), notes
    legend = fig.axes[-1].get_legend()
    assert [t.get_text() for t in legend.get_texts()] == [t.removeprefix("nll_") for t in TERMS]


def test_styles_are_fixed_and_unknown_names_deterministic():
    a = plots.filter_styles(["pmb", "zeta", "alpha"])
    b = plots.filter_styles(["alpha", "zeta", "pmb", "phd"])
    assert a["pmb"] == plots.FILTER_STYLE["pmb"] == b["pmb"]
    assert a["alpha"] == b["alpha"] and a["zeta"] == b["zeta"] and a["alpha"] != a["zeta"]
    known = {s.color for s in plots.FILTER_STYLE.values()}
    assert not known & set(plots.RESERVED_COLORS)


def test_intervals_of_non_negative_data_stay_non_negative(summary):
    gospa = summary[summary["measure"].isin(["gospa_mean", "mota"])]
    assert (gospa["ci95_low"] >= 0).all() and (gospa["q25"] >= 0).all()


def test_example_figure_legend_and_geometry(tmp_path):
    from nllbench.examples import write_example

    write_example(2, tmp_path)  # M1 has a PPP (dashed region), M2 has none
    fig = plots.fig_example(tmp_path)
    axes = fig.axes
    assert axes[0].get_xlim() == axes[1].get_xlim() and axes[0].get_ylim() == axes[1].get_ylim()
    for ax, name, has_ppp in zip(axes, ("M1", "M2"), (True, False), strict=True):
        assert ax.get_aspect() == 1.0
        labels = [t.get_text() for t in ax.get_legend().get_texts()]
        assert labels[:3] == ["ground truth", f"{name} Bernoulli mean", f"{name} Bernoulli 2-sigma ellipse"]
        assert ("PPP 2-sigma region" in labels) == has_ppp
        assert ax.get_xlabel()
    assert axes[0].get_ylabel()


def test_q_figure_has_no_measured_time(summary):
    fig = plots.fig_nll_vs_q(summary)
    assert all("time" not in ax.get_ylabel() for ax in fig.axes)
