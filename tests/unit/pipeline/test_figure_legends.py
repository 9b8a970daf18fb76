"""Figures name the right filters: every panel's legend against the data drawn, with a filter
whose NLL is infinite in every run; styles fixed per filter; infinite values shown."""

from __future__ import annotations

import itertools

import matplotlib
import numpy as np
import pandas as pd
import pytest
from matplotlib.colors import to_hex
from support.figures import assert_legends_clear_of_panels

from nllbench.measures.names import NLL_TERM_MEASURES
from nllbench.pipeline import plots
from nllbench.pipeline.plots import style
from nllbench.pipeline.plots.filters import ALL_INFINITE_FILL
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


def figure_legend_entries(fig) -> dict[str, str]:
    """The figure-level legend (below or beside the panels): filter name -> handle colour."""
    (legend,) = fig.legends
    out = {}
    for text, handle in zip(legend.get_texts(), legend.legend_handles, strict=True):
        out[text.get_text().split(" (")[0]] = to_hex(handle.get_color())
    return out


def inf_labels(ax) -> list[str]:
    """The "inf" labels of a panel's rows (columns) of infinite values."""
    return [t.get_text() for t in ax.texts if (t.get_gid() or "").startswith(style.INF_LABEL)]


@pytest.mark.parametrize("figure", ["clutter", "calibration"])
def test_every_filter_is_named_in_its_own_colour_outside_the_panels(summary, figure):
    fig = {
        "clutter": lambda: plots.fig_vs_clutter(summary, 10),
        "calibration": lambda: plots.fig_calibration(summary),
    }[figure]()
    styles = plots.filter_styles(FILTERS)
    panels = [ax for ax in fig.axes if ax.lines]
    assert panels
    for ax in panels:
        drawn = drawn_lines(ax)
        assert sorted(drawn) == sorted(FILTERS), ax.get_title()
        for name in FILTERS:
            assert drawn[name] == to_hex(styles[name].color), (ax.get_title(), name)
        if "NLL" in ax.get_title():  # the all-infinite filter: at the top edge, one "inf" label per panel
            assert inf_labels(ax) == ["inf"]
    # one legend below the panels; the calibration figure's counts the seeds per clutter rate and s
    entries = figure_legend_entries(fig)
    assert entries == {f: to_hex(styles[f].color) for f in FILTERS}
    texts = [t.get_text() for t in fig.legends[0].get_texts()]
    if figure == "clutter":
        assert "mbm01 (NLL inf in 4/4 seeds at every clutter rate)" in texts, texts
    else:
        assert "mbm01 (NLL inf at every clutter rate: 4/4 seeds at every s)" in texts, texts
    assert_legends_clear_of_panels(fig)


def test_q_figure_names_the_filter_and_its_infinite_seeds_in_each_title(summary):
    fig = plots.fig_nll_vs_q(summary)
    styles = plots.filter_styles(FILTERS)
    panels = [ax for ax in fig.axes if ax.get_visible()]
    assert sorted(ax.get_title().split("\n")[0] for ax in panels) == sorted(FILTERS)
    for ax in panels:
        name = ax.get_title().split("\n")[0]
        drawn = drawn_lines(ax)
        assert drawn[name] == to_hex(styles[name].color)
        assert to_hex(ax.title.get_color()) == to_hex(styles[name].color)
        if name == "mbm01":
            assert ax.get_title() == "mbm01\n(NLL inf in 4/4 seeds at every Q)" and inf_labels(ax) == ["inf"]
        else:
            assert "inf" not in ax.get_title() and drawn["exact NLL"] == drawn[name]
    (legend,) = fig.legends
    assert legend.get_texts()[0].get_text().startswith("dotted: the filter's median exact NLL")
    assert_legends_clear_of_panels(fig)


def test_decomposition_draws_no_bar_for_an_all_infinite_filter(summary):
    fig = plots.fig_decomposition(summary, 10)
    bars = [ax for ax in fig.axes if ax.patches]
    assert len(bars) == 2
    assert bars[0].get_ylim() == bars[1].get_ylim()
    i_inf = sorted(FILTERS).index("mbm01")
    for ax in bars:
        assert [t.get_text() for t in ax.get_xticklabels()] == sorted(FILTERS)
        # mbm01's NLL is +inf in every seed, yet its localisation, false ... terms are finite in the
        # table: no bar of any term may be drawn at its place
        at_mbm01 = [p for p in ax.patches if round(p.get_x() + p.get_width() / 2) == i_inf]
        assert at_mbm01 and all(p.get_height() == 0.0 for p in at_mbm01)
        others = [p for p in ax.patches if round(p.get_x() + p.get_width() / 2) != i_inf]
        assert any(p.get_height() != 0.0 for p in others)
        (note,) = [t for t in ax.texts if t.get_text().startswith("NLL inf")]
        assert note.get_text() == "NLL inf in\n4/4 seeds;\nterm: missed"
        assert to_hex(note.get_bbox_patch().get_facecolor()) == to_hex(ALL_INFINITE_FILL)
        assert note.xy == (i_inf, 0.0)  # where its bar would stand
    assert "where the term is finite" in bars[0].get_ylabel()
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
    assert_legends_clear_of_panels(fig)


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

    from support.counts import random_counts

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
        # phd's estimates carry no lasting identities: marked, and explained under the panels
        assert [t.get_text() for t in ax.get_xticklabels()] == [
            f"{f}*" if f == "phd" else f for f in sorted(FILTERS)
        ]
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
    styles = plots.filter_styles(FILTERS)
    assert figure_legend_entries(fig) == {f: to_hex(styles[f].color) for f in FILTERS}
    texts = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "mbm01 (NLL inf in 4/4 seeds at every clutter rate)" in texts
    assert "phd (no lasting track identities)" in texts
    # two settings of mbm01 in the right-edge column, named once
    assert len([ln for ln in ax.lines if ln.get_marker() == ">"][0].get_ydata()) == len(SETTINGS)
    assert inf_labels(ax) == ["inf"]
    pmb = [line for line in ax.lines if line.get_label() == "pmb"][0]
    want = measure_summary[(measure_summary["measure"] == "hota") & (measure_summary["filter"] == "pmb")]
    assert sorted(pmb.get_ydata()) == pytest.approx(sorted(want["mean"]))
    assert_legends_clear_of_panels(fig)


def test_reliability_figure_draws_the_pooled_bins_per_filter():
    cal, rel = calibration_tables()
    # pmb keeps two bins in the first setting: two points that a line would make look calibrated
    first = (rel["filter"] == "pmb") & (rel["clutter"] == SETTINGS[0]) & (rel["cov_scale"] == 1.0)
    keep = rel[first].sort_values("bin_low").index[:2]
    rel = rel[~first | rel.index.isin(keep)]
    fig = plots.fig_reliability(rel, cal)
    panels = [ax for ax in fig.axes if ax.get_visible()]
    assert len(panels) == len(SETTINGS)
    with_bernoullis = sorted(set(FILTERS) - {"phd"})
    for ax, clutter in zip(panels, SETTINGS, strict=True):
        check_legend(ax, with_bernoullis, extra=["perfect calibration", "no Bernoulli scored: phd"])
        for line in ax.lines:
            name = line.get_label().split(" (")[0]
            if name not in with_bernoullis:
                continue
            g = rel[(rel["filter"] == name) & (rel["clutter"] == clutter) & (rel["cov_scale"] == 1.0)]
            np.testing.assert_array_equal(line.get_xdata(), g.sort_values("bin_low")["mean_r"])
            np.testing.assert_array_equal(line.get_ydata(), g.sort_values("bin_low")["frequency"])
            bins = len(g)
            assert line.get_label() == (
                f"{name} ({style.plural(int(g['count'].sum()), 'Bernoulli')}, {style.plural(bins, 'bin')})"
            )
            # a line only through three bins or more
            assert (line.get_linestyle() != "None") == (bins >= 3), (name, clutter, bins)
    assert any(ln.get_linestyle() == "None" for ln in panels[0].lines if ln.get_label().startswith("pmb "))
    assert_legends_clear_of_panels(fig)


def test_nees_figure_anees_points_and_reference_lines():
    cal, _ = calibration_tables()
    fig = plots.fig_nees(cal)
    left, right = fig.axes
    with_pairs = sorted(set(FILTERS) - {"phd"})
    styles = plots.filter_styles(FILTERS)
    entries = figure_legend_entries(fig)
    assert {f: entries[f] for f in with_pairs} == {f: to_hex(styles[f].color) for f in with_pairs}
    assert set(entries) - set(with_pairs) == {
        "left: ANEES = d = 2",
        "left: 95 % interval of a consistent ANEES",
        "right: share 0.95",
    }
    base = cal[cal["cov_scale"] == 1.0]
    for name in with_pairs:
        line = [ln for ln in left.lines if ln.get_label().split(" (")[0] == name][0]
        want = base[(base["filter"] == name) & (base["measure"] == "anees")].sort_values("clutter")["value"]
        np.testing.assert_array_equal(line.get_ydata(), want)
    assert [ln.get_ydata()[0] for ln in right.lines if ln.get_label().startswith("right: share")] == [0.95]
    assert_legends_clear_of_panels(fig)


def test_cardinality_figure_shows_every_filter_and_infinite_scores():
    cal, _ = calibration_tables()
    fig = plots.fig_cardinality(cal)
    left, right = fig.axes
    styles = plots.filter_styles(FILTERS)
    entries = figure_legend_entries(fig)
    assert {f: entries[f] for f in FILTERS} == {f: to_hex(styles[f].color) for f in FILTERS}
    texts = [t.get_text() for t in fig.legends[0].get_texts()]
    steps = int(
        cal[(cal["filter"] == "mbm01") & (cal["measure"] == "cardinality_steps") & (cal["cov_scale"] == 1.0)][
            "value"
        ].sum()
    )
    assert f"mbm01 ({style.plural(steps, 'step')}; log score inf at clutter 5 and 20)" in texts, texts
    # both settings' infinite scores at the top edge, one "inf" label
    assert (
        len([ln for ln in right.lines if ln.get_marker() == "^" and ln.get_mfc() == "none"][0].get_xdata())
        == 2
    )
    assert inf_labels(right) == ["inf"] and inf_labels(left) == []
    assert_legends_clear_of_panels(fig)


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
