"""Figures name the right filters: every panel's legend against the data drawn, with a filter
whose NLL is infinite in every run; styles fixed per filter; infinite values shown."""

from __future__ import annotations

import itertools

import matplotlib
import numpy as np
import pandas as pd
import pytest
from matplotlib.colors import to_hex

from nllbench.measures.names import NLL_TERM_MEASURES
from nllbench.pipeline import plots
from nllbench.pipeline.statistics import summarise

matplotlib.use("Agg")

FILTERS = ["mbm01", "phd", "pmb", "zz_user_tracker"]  # mbm01: NLL +inf in every run
TERMS = list(NLL_TERM_MEASURES)


def study_runs() -> pd.DataFrame:
    """A small per-run table as written by nllbench.pipeline.aggregate.collect."""
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


TGOSPA_TERMS = ["tgospa_localization", "tgospa_missed", "tgospa_false", "tgospa_switches"]
SETTINGS = [5.0, 20.0]


@pytest.fixture(scope="module")
def measure_summary():
    """Summary with T-GOSPA terms and HOTA next to the NLL (mbm01's NLL infinite in every run)."""
    runs = study_runs()
    runs = runs[(runs["cov_scale"] == 1.0) & runs["measure"].isin(["nll"])]
    rng = np.random.default_rng(1)
    rows = []
    for (f, clutter, seed), _ in runs.groupby(["filter", "clutter", "seed"]):
        row = {"scenario": "williams15", "pd": 0.9, "temper": 1.0, "marginal": "position"}
        row.update(filter=f, clutter=clutter, cov_scale=1.0, seed=seed, q=0)
        rows += [{**row, "measure": t, "value": rng.uniform(0, 10)} for t in TGOSPA_TERMS]
        rows.append({**row, "measure": "hota", "value": rng.uniform(0.2, 0.8)})
    return summarise(pd.concat([runs, pd.DataFrame(rows)], ignore_index=True))


def calibration_tables():
    """(calibration, reliability) tables as written by nllbench.pipeline.aggregate, phd without Bernoullis."""
    from dataclasses import replace

    from test_aggregate import random_counts

    from nllbench.pipeline.pooling import pooled_calibration, pooled_reliability

    rng = np.random.default_rng(6)
    counts = {}
    for f, clutter, s in itertools.product(FILTERS, SETTINGS, [0.5, 1.0]):
        runs = {seed: random_counts(rng, bernoullis=f != "phd") for seed in range(3)}
        if f == "mbm01":  # a step with P(true count) = 0
            runs[0] = replace(runs[0], card_log_score_sum=np.inf)
        counts[("williams15", f, clutter, 0.9, s, 1.0, "position")] = runs
    return pooled_calibration(counts), pooled_reliability(counts)


def check_legend(ax, filters, extra=()):
    """The legend names exactly ``filters`` (+ ``extra``), each in its fixed colour, as the lines drawn."""
    styles = plots.filter_styles(FILTERS)
    entries = legend_entries(ax)
    assert sorted(entries) == sorted([*filters, *extra]), ax.get_title()
    drawn = drawn_lines(ax)
    for name in filters:
        assert entries[name] == drawn[name] == to_hex(styles[name].color), (ax.get_title(), name)


def test_tgospa_figure_bars_are_the_term_means(measure_summary):
    fig = plots.fig_tgospa(measure_summary)
    bars = [ax for ax in fig.axes if ax.patches]
    assert len(bars) == len(SETTINGS) and bars[0].get_ylim() == bars[1].get_ylim()
    styles = plots.filter_styles(FILTERS)
    for ax, clutter in zip(bars, SETTINGS, strict=True):
        assert [t.get_text() for t in ax.get_xticklabels()] == sorted(FILTERS)
        assert [to_hex(t.get_color()) for t in ax.get_xticklabels()] == [
            to_hex(styles[f].color) for f in sorted(FILTERS)
        ]
        sub = measure_summary[
            (measure_summary["clutter"] == clutter) & measure_summary["measure"].isin(TGOSPA_TERMS)
        ]
        tops = {}
        for patch in ax.patches:
            tops.setdefault(round(patch.get_x() + patch.get_width() / 2), []).append(patch.get_height())
        for i, f in enumerate(sorted(FILTERS)):
            assert sum(tops[i]) == pytest.approx(sub[sub["filter"] == f]["mean"].sum(), rel=1e-12)
    legend = fig.axes[-1].get_legend()
    assert [t.get_text() for t in legend.get_texts()] == [t.removeprefix("tgospa_") for t in TGOSPA_TERMS]


def test_hota_figure_legend_and_infinite_nll(measure_summary):
    fig = plots.fig_hota_vs_nll(measure_summary, 10)
    (ax,) = fig.axes
    check_legend(ax, FILTERS)
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "mbm01 (NLL inf in 8/8 runs)" in texts
    assert [t.get_text() for t in ax.texts].count("inf") == len(SETTINGS)  # mbm01 at the right edge
    pmb = [line for line in ax.lines if line.get_label() == "pmb"][0]
    want = measure_summary[(measure_summary["measure"] == "hota") & (measure_summary["filter"] == "pmb")]
    assert sorted(pmb.get_ydata()) == pytest.approx(sorted(want["mean"]))


def test_reliability_figure_draws_the_pooled_bins_per_filter():
    cal, rel = calibration_tables()
    fig = plots.fig_reliability(rel, cal)
    panels = [ax for ax in fig.axes if ax.get_visible()]
    assert len(panels) == len(SETTINGS)
    with_bernoullis = sorted(set(FILTERS) - {"phd"})
    for ax, clutter in zip(panels, SETTINGS, strict=True):
        check_legend(ax, with_bernoullis, extra=["perfect calibration"])
        assert any(t.get_text().startswith("no Bernoulli scored: phd\n") for t in ax.texts)
        for line in ax.lines:
            name = line.get_label().split(" (")[0]
            if name not in with_bernoullis:
                continue
            g = rel[(rel["filter"] == name) & (rel["clutter"] == clutter) & (rel["cov_scale"] == 1.0)]
            np.testing.assert_array_equal(line.get_xdata(), g.sort_values("bin_low")["mean_r"])
            np.testing.assert_array_equal(line.get_ydata(), g.sort_values("bin_low")["frequency"])
            assert line.get_label() == f"{name} ({g['count'].sum()} Bernoullis)"


def test_nees_figure_anees_points_and_reference_lines():
    cal, _ = calibration_tables()
    fig = plots.fig_nees(cal)
    left, right = fig.axes
    with_pairs = sorted(set(FILTERS) - {"phd"})
    check_legend(left, with_pairs, extra=["d = 2", "95 % interval if consistent"])
    check_legend(right, with_pairs, extra=["0.95"])
    base = cal[cal["cov_scale"] == 1.0]
    for name in with_pairs:
        line = [ln for ln in left.lines if ln.get_label().split(" (")[0] == name][0]
        want = base[(base["filter"] == name) & (base["measure"] == "anees")].sort_values("clutter")["value"]
        np.testing.assert_array_equal(line.get_ydata(), want)
    assert [ln.get_ydata()[0] for ln in right.lines if ln.get_label().startswith("0.95")] == [0.95]


def test_cardinality_figure_shows_every_filter_and_infinite_scores():
    cal, _ = calibration_tables()
    fig = plots.fig_cardinality(cal)
    left, right = fig.axes
    check_legend(left, FILTERS, extra=["0.90"])
    check_legend(right, FILTERS)
    texts = [t.get_text() for t in right.get_legend().get_texts()]
    assert any(t.startswith("mbm01") and "inf in 2 settings" in t for t in texts), texts
    assert [t.get_text() for t in right.texts].count("inf") == len(SETTINGS)


def test_new_figures_need_the_new_measures(summary):
    with pytest.raises(ValueError, match="tgospa_localization"):
        plots.fig_tgospa(summary)
    with pytest.raises(ValueError, match="hota"):
        plots.fig_hota_vs_nll(summary, 10)


def test_timing_figure_names_each_filters_point():
    # reference filters rank every Q at once: one point per filter, named on the x axis in its colour
    timing = pd.DataFrame(
        {
            "filter": ["pmb", "phd", "pmb", "phd"],
            "q": [10, 10, 10, 10],
            "cov_scale": [1.0] * 4,
            "nll_seconds": [0.02, 0.001, 0.04, 0.003],
        }
    )
    fig = plots.fig_timing(timing)
    ax = fig.axes[0]
    styles = plots.filter_styles(["phd", "pmb"])
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels == ["phd", "pmb"] and "up to 10" in ax.get_xlabel()
    for x, name in enumerate(labels):
        (line,) = [ln for ln in ax.get_lines() if ln.get_xdata()[0] == x]
        assert to_hex(line.get_color()) == to_hex(styles[name].color)
        assert line.get_ydata()[0] == timing[timing["filter"] == name]["nll_seconds"].median()
    # a tracker scored once per Q: time against Q, one legend entry per line
    both = pd.concat([timing, timing.assign(filter="zz_user_tracker", q=1)])
    ax = plots.fig_timing(both).axes[0]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == [ln.get_label() for ln in ax.get_lines()] == ["phd", "pmb", "zz_user_tracker"]
