"""``gospa_and_ospa`` gives ``gospa`` and ``ospa`` bit for bit from one cost matrix and one assignment,
and the per-step GOSPA and OSPA read it through the step view."""

from __future__ import annotations

import numpy as np
import pytest
from support.pooled import bits_equal

from nllbench.measures.point.metrics import gospa, gospa_and_ospa, ospa


def _same(X, Y, c, p):
    g, o = gospa_and_ospa(X, Y, c=c, p=p)
    assert bits_equal(g, gospa(X, Y, c=c, p=p))
    assert bits_equal(o, ospa(X, Y, c=c, p=p))
    return g, o


@pytest.mark.parametrize("p", [1.0, 2.0, 3.0])
def test_random_sets_give_the_separate_results(p):
    rng = np.random.default_rng(int(p) * 11)
    for _ in range(40):
        X = rng.uniform(0.0, 10.0, (int(rng.integers(0, 8)), 2))
        Y = rng.uniform(0.0, 10.0, (int(rng.integers(0, 8)), 2))
        _same(X, Y, float(rng.uniform(0.5, 6.0)), p)


def test_edges_give_the_separate_results():
    some = [[1.0, 1.0], [5.0, 5.0]]
    for X, Y in (([], []), ([], some), (some, []), (np.empty((0, 2)), np.empty((0, 2)))):
        _same(X, Y, 2.0, 1.0)
    # ties: two estimates equidistant from two objects; a repeated estimate
    _same([[4.0, 5.0], [6.0, 5.0]], [[5.0, 4.0], [5.0, 6.0]], 3.0, 1.0)
    _same([[5.0, 5.0], [5.0, 5.0]], [[5.0, 4.0], [5.0, 6.0], [9.0, 9.0]], 3.0, 2.0)
    # every pair beyond the cut-off: nothing assigned counts, everything is missed or false
    g, o = _same([[0.0, 0.0], [100.0, 0.0]], [[50.0, 50.0]], 2.0, 1.0)
    assert g.n_assigned == 0 and g.value == pytest.approx(3.0) and o.value == pytest.approx(2.0)
    # exactly at the cut-off: not a real pair for GOSPA
    g, _ = _same([[0.0, 0.0]], [[3.0, 4.0]], 5.0, 1.0)
    assert g.n_assigned == 0


def test_arguments_are_checked_as_separately():
    with pytest.raises(ValueError, match="truth: expected dimension 2"):
        gospa_and_ospa([[1.0, 2.0]], [[1.0, 2.0, 3.0]])
    with pytest.raises(ValueError, match="p: expected a number >= 1"):
        gospa_and_ospa([[1.0, 2.0]], [[1.0, 2.0]], p=0.5)
