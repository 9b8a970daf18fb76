"""Captions written from the tables: two runs with different numbers get different, true captions;
the plural helper and the "inf" wording; the report's item order and caption escaping."""

from __future__ import annotations

import itertools
import re

import numpy as np
import pandas as pd
import pytest
from support.paths import ROOT

from nllbench.measures.names import NLL_TERM_MEASURES
from nllbench.pipeline.plots import captions, style
from nllbench.pipeline.report_items import AUDIT_ITEMS, SWEEP_ITEMS, TIMING_ITEM, CaptionFile
from nllbench.pipeline.statistics import summarise


def test_plural_agrees_with_its_number():
    assert style.plural(1, "step") == "1 step"
    assert style.plural(0, "step") == "0 steps"
    assert style.plural(2, "setting") == "2 settings"
    assert style.plural(1.0, "Bernoulli") == "1 Bernoulli"
    assert style.plural(1240, "Bernoulli") == "1,240 Bernoullis"
    assert style.plural(3, "analysis", "analyses") == "3 analyses"
    assert style.join_words([]) == "" and style.join_words(["a"]) == "a"
    assert style.join_words(["a", "b"]) == "a and b" and style.join_words(["a", "b", "c"]) == "a, b and c"


def _rows(counts, n=6, x="clutter"):
    """Summary rows of one filter: {x value: infinite seeds}."""
    return pd.DataFrame({x: list(counts), "n_infinite": list(counts.values()), "n": n})


def test_inf_note_counts_seeds_per_point_and_says_so():
    every = {"at": "clutter", "every": "every clutter rate"}
    assert style.inf_note(_rows({5: 0, 20: 0, 50: 0}), "clutter", **every) == ""
    assert style.inf_note(_rows({5: 6, 20: 6, 50: 6}), "clutter", **every) == (
        " (NLL inf in 6/6 seeds at every clutter rate)"
    )
    assert style.inf_note(_rows({5: 0, 20: 0, 50: 1}), "clutter", **every) == (
        " (NLL inf in 1/6 seeds at clutter 50)"
    )
    assert style.inf_note(_rows({5: 2, 20: 6, 50: 6}), "clutter", **every) == (
        " (NLL inf in 2/6 seeds at clutter 5; 6/6 seeds at clutter 20 and 50)"
    )
    # one point only: no place named
    assert style.inf_note(_rows({5: 3}), None) == " (NLL inf in 3/6 seeds)"
    # a single x value is never "every"
    assert style.inf_note(_rows({5: 3}), "clutter", **every) == " (NLL inf in 3/6 seeds at clutter 5)"


TERMS = list(NLL_TERM_MEASURES)


def clutter_runs(best_at_high: str, infinite: bool) -> pd.DataFrame:
    """Two filters over two clutter rates: 'a' is best at clutter 5; ``best_at_high`` at clutter 50.

    ``infinite``: filter b's NLL is +inf (false term) in one of four seeds at clutter 50.
    """
    rows = []
    base = {"scenario": "s", "pd": 0.9, "temper": 1.0, "marginal": "position", "cov_scale": 1.0}
    for f, clutter, seed in itertools.product(["a", "b"], [5.0, 50.0], range(4)):
        row = {**base, "filter": f, "clutter": clutter, "seed": seed}
        good = f == "a" if clutter == 5.0 else f == best_at_high
        nll = (10.0 if good else 14.0) + 0.1 * seed
        gospa = (2.0 if good else 3.0) + 0.01 * seed
        inf = infinite and f == "b" and clutter == 50.0 and seed == 0
        for t in TERMS:
            v = np.inf if (inf and t == "nll_false") else (nll if t == "nll_localization" else 0.0)
            rows.append({**row, "q": 10, "measure": t, "value": v})
        rows.append({**row, "q": 10, "measure": "nll", "value": np.inf if inf else nll})
        rows.append({**row, "q": 0, "measure": "gospa_mean", "value": gospa})
    return pd.DataFrame(rows)


def test_clutter_caption_is_written_from_the_numbers():
    one = captions.clutter_caption(summarise(clutter_runs("a", infinite=False)), 10)
    two = captions.clutter_caption(summarise(clutter_runs("b", infinite=True)), 10)
    assert one != two
    assert "Lowest median NLL: a at every clutter rate." in one
    assert "Lowest mean GOSPA: a at every clutter rate." in one
    assert "Infinite NLL" not in one
    assert "Lowest median NLL: a at clutter 5; b at clutter 50." in two
    assert "Infinite NLL: b in 1/4 seeds at clutter 50." in two
    # the fixed claims of the old caption are gone: nothing about filters this run does not have
    for text in (one, two):
        assert "separate" not in text and "PHD" not in text and "MBM" not in text
        assert text.startswith("NLL and GOSPA against the clutter rate")
    # medians: a from 10.15 to 14.15; b from 14.15 to 10.25 (its infinite seed is the largest of four)
    assert "the median NLL changes by: a +4.00 (10.1 to 14.1), b -3.90 (14.1 to 10.2)." in two


def test_decomposition_caption_names_the_infinite_term():
    two = captions.decomposition_caption(summarise(clutter_runs("b", infinite=True)), 10)
    assert "Infinite in some seeds" in two and "b at clutter 50 (1/4 seeds; false)" in two
    assert "Infinite in every seed" not in two
    reason = captions.infinite_reason(
        summarise(clutter_runs("b", infinite=True)), "b", 10, {"scenario": "s", "clutter": 50.0, "pd": 0.9}
    )
    assert reason.startswith("its false term is +inf: every kept global hypothesis holds more sure")


def test_theorem1_caption_claims_the_diagonal_only_when_true():
    steps = pd.DataFrame(
        {
            "measure": ["theorem1_lhs", "theorem1_rhs", "theorem1_difference"] * 2,
            "value": [5.0, 5.0, 1e-13, 6.0, 6.0, 0.0],
        }
    )
    assert "every point lies on the diagonal to rounding" in captions.theorem1_caption(steps)
    assert "2 steps" in captions.theorem1_caption(steps)
    off = steps.assign(value=[5.0, 4.0, 1.0, 6.0, 6.0, 0.0])
    assert "some points lie off the diagonal" in captions.theorem1_caption(off)


def test_report_items_follow_the_landing_page_order():
    landing = (ROOT / "workflow/report/workflow.rst").read_text()
    items = [*SWEEP_ITEMS, TIMING_ITEM, *AUDIT_ITEMS]
    for category in sorted({i.category for i in items}):
        section = [i for i in items if i.category == category]
        numbers = [int(i.label.split()[0]) for i in section]
        assert numbers == list(range(1, len(section) + 1)) and max(numbers) < 10, category
        # the report sorts labels as text: that order is the declared order
        assert sorted(section, key=lambda i: i.label) == section
        # ... and the landing page names them in that order, in its paragraph on the section
        start = landing.index(f"*{category}*")
        paragraph = re.sub(r"\s+", " ", landing[start:].split("*", 3)[2])
        places = [paragraph.find(i.label.split(" ", 1)[1]) for i in section]
        assert -1 not in places and places == sorted(places), (category, places)


def test_caption_file_escapes_markup_and_reports_a_missing_file(tmp_path):
    path = tmp_path / "x.caption.txt"
    missing = CaptionFile(path)
    assert str(missing) == str(path) and "does not exist" in missing.text
    path.write_text("filter my_tracker_ beats *a* at P_D 0.9 | done\n")
    cap = CaptionFile(path)
    assert cap.text == "filter my_tracker_ beats *a* at P_D 0.9 | done\n"
    assert cap.rst == "filter my\\_tracker\\_ beats \\*a\\* at P\\_D 0.9 \\| done\n"
    from docutils.core import publish_parts

    body = publish_parts(cap.rst, writer="html")["body"]
    assert "my_tracker_ beats *a* at P_D 0.9 | done" in body and "problematic" not in body


def test_save_writes_the_caption_beside_the_figure(tmp_path):
    plt, _ = style.pyplot()
    fig, _ = plt.subplots()
    written = style.save(style.captioned(fig, "What it shows.\n"), tmp_path / "f.png")
    assert [p.name for p in written] == ["f.png", "f.pdf", "f.caption.txt"]
    assert (tmp_path / "f.caption.txt").read_text() == "What it shows.\n"
    fig, _ = plt.subplots()
    assert len(style.save(fig, tmp_path / "g.png")) == 2  # no caption, no file
    plt.close("all")


@pytest.mark.parametrize("x", [0.0, 0.004, 0.5, 12.345, 123.4, 4127.43, np.inf, -2.5])
def test_numbers_read_with_about_three_digits(x):
    text = captions.num(x)
    assert text == {0.0: "0.00", 0.004: "4.0e-03", 0.5: "0.50", 12.345: "12.3", 123.4: "123"}.get(
        x, {4127.43: "4,127", np.inf: "inf", -2.5: "-2.50"}.get(x)
    )
