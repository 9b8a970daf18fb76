"""The paper's Examples 1 and 2 reproduce the reported numbers.

The commands that print them: tests/cli/test_example_and_theorem1_commands.py.
"""

from __future__ import annotations

import math

import pytest

from nllbench.examples import evaluate_example


@pytest.mark.parametrize("number", [1, 2])
def test_reported_numbers(number):
    rows = {r.tracker: r for r in evaluate_example(number)}
    for name, r in rows.items():
        if math.isinf(r.paper_nll):
            assert r.nll_q1.value == math.inf and r.nll_exact.value == math.inf
        else:
            # printed precision: one decimal, for the paper's formula and the exact sum
            assert round(r.nll_q1.value, 1) == r.paper_nll, name
            assert round(r.nll_exact.value, 1) == r.paper_nll, name
    m1, m2 = rows["M1"], rows["M2"]
    for r in (m1, m2):
        if number == 1:
            assert r.clear.mota == 1
            assert r.clear.motp == pytest.approx((1 + math.sqrt(2)) / 2)
            assert r.gospa.value == pytest.approx(1 + math.sqrt(2))
        else:
            assert r.clear.mota == 0.5 and r.clear.motp == pytest.approx(1)
            assert r.gospa.value == pytest.approx(2)
    assert m1.nll_q1.value < m2.nll_q1.value


def test_example1_stated_properties():
    from nllbench.examples import example1

    ex = example1()
    m1, m2 = ex.trackers["M1"].hypotheses[0], ex.trackers["M2"].hypotheses[0]
    assert m1.r[0] > m2.r[0]  # M1 is more certain of the object near A
    # M1's density near B explains B better than M2's
    assert m1.densities.logpdf(ex.truth[1:])[1, 0] > m2.densities.logpdf(ex.truth[1:])[1, 0] + 5
