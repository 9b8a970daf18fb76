"""The NLL's shortcuts give the plain route's numbers bit for bit.

* the decomposition of the best association from its pieces (no cost matrix) against
  :func:`decompose` of the full association problem, with r = 0 and r = 1, no object, no Bernoulli;
* a one-box PPP's log-intensity against the box formula and the general route;
* the marginal on every component in order is the density itself (and still refuses a
  non-Gaussian one).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from support.densities import random_covs

import nllbench as nb
from nllbench.engine.association import association_terms, decompose, existence_logs, problem_of
from nllbench.engine.gaussian_mixture import GaussianMixture
from nllbench.engine.nll import association_problem
from nllbench.engine.transforms import marginal


def _scene(rng, m, n):
    r = rng.uniform(0.0, 1.0, m)
    r[rng.random(m) < 0.2] = 1.0
    r[rng.random(m) < 0.1] = 0.0
    mb = nb.MultiBernoulli.gaussian(r, rng.uniform(0, 20, (m, 2)), random_covs(rng, m, 2))
    ppp = nb.PPP.uniform(1.5, [0, 0], [20, 20])
    return nb.PMBM.pmb(ppp, mb), rng.uniform(-2, 22, (n, 2))


@pytest.mark.parametrize(("m", "n"), [(0, 0), (0, 3), (4, 0), (1, 1), (5, 3), (3, 6)])
def test_terms_from_pieces_equal_decompose_of_the_problem(m, n):
    rng = np.random.default_rng(100 * m + n)
    for _ in range(5):
        f, y = _scene(rng, m, n)
        mb = f.hypotheses[0]
        log_lam, rate = f.ppp.log_intensity(y), f.ppp.total_rate
        prob = association_problem(mb, y, log_lam, rate)
        res = nb.nll_many(f, y, [1, 4])
        for r in res:
            if r.best_assignment is None:
                continue
            cols = r.best_assignment
            log_r, log_1mr = existence_logs(mb.r)
            log_p = mb.densities.logpdf(y) if m and n else np.zeros((m, n))
            got = association_terms(log_r, log_1mr, log_p, log_lam, rate, cols)
            want = decompose(prob, cols)
            assert np.array(got).tobytes() == np.array(want).tobytes()
            # the rows read through a pool: shuffled among other Bernoullis' rows
            pool = rng.permutation(m + 3)[:m]
            pooled = rng.normal(size=(m + 3, n))
            pooled[pool] = log_p
            got = association_terms(log_r, log_1mr, pooled, log_lam, rate, cols, pool)
            assert np.array(got).tobytes() == np.array(want).tobytes()
            assert (r.localization, r.false, r.missed) == want


def test_problem_of_reads_existence_logs():
    r = np.array([0.0, 0.3, 1.0])
    prob = problem_of(r, 0, np.empty(0), 0.0, None)
    log_r, log_1mr = existence_logs(r)
    assert prob.log_r.tobytes() == log_r.tobytes() and prob.log_1mr.tobytes() == log_1mr.tobytes()
    assert log_r[0] == -math.inf and log_1mr[2] == -math.inf


def test_decomposition_equal_for_every_budget_with_a_shared_best_association():
    rng = np.random.default_rng(7)
    f, y = _scene(rng, 8, 6)
    many = nb.nll_many(f, y, [1, 5, 50])
    for q, r in zip([1, 5, 50], many, strict=True):
        alone = nb.nll(f, y, q=q)
        assert (r.value, r.localization, r.false, r.missed, r.association) == (
            alone.value,
            alone.localization,
            alone.false,
            alone.missed,
            alone.association,
        )


def test_one_box_intensity_is_the_box_formula():
    ppp = nb.PPP.uniform(3.0, [0.0, -1.0], [4.0, 1.0])
    y = np.array([[0.0, -1.0], [4.0, 1.0], [2.0, 0.0], [4.0000001, 0.0], [-1e-300, 0.0], [np.nan, 0.0]])
    got = ppp.log_intensity(y)
    inside = math.log(3.0) - (math.log(4.0) + math.log(2.0))
    assert got.tolist() == [inside, inside, inside, -math.inf, -math.inf, -math.inf]
    assert ppp.log_intensity(np.empty((0, 2))).shape == (0,)
    zero = nb.PPP.uniform(0.0, [0.0, 0.0], [1.0, 1.0])
    assert zero.log_intensity(y[:3]).tolist() == [-math.inf] * 3


def test_one_box_intensity_equals_the_general_route():
    """Two boxes, one of them of rate 0, take the general route: the same numbers as the box alone."""
    rng = np.random.default_rng(3)
    lows, highs = np.array([[0.0, 0.0]]), np.array([[7.0, 3.0]])
    one = nb.PPP.from_mixture(GaussianMixture.empty(2), np.array([2.5]), lows, highs)
    two = nb.PPP.from_mixture(
        GaussianMixture.empty(2),
        np.array([2.5, 0.0]),
        np.concatenate([lows, [[100.0, 100.0]]]),
        np.concatenate([highs, [[101.0, 101.0]]]),
    )
    y = rng.uniform(-1, 8, (50, 2))
    assert one.log_intensity(y).tobytes() == two.log_intensity(y).tobytes()


def test_marginal_on_every_component_in_order_is_the_density():
    rng = np.random.default_rng(11)
    f, y = _scene(rng, 5, 4)
    same = marginal(f, (0, 1))
    assert same is f
    swapped = marginal(f, (1, 0))
    assert swapped is not f
    assert nb.nll(swapped, y[:, ::-1], q=3).value == pytest.approx(nb.nll(f, y, q=3).value, rel=1e-12)
    laplace = nb.PMBM.pmb(None, nb.MultiBernoulli.laplace([0.5], [[0.0, 0.0]], 1.0))
    with pytest.raises(TypeError, match="Gaussian"):
        marginal(laplace, (0, 1))
