"""One-component Gaussian mixtures give the results of the Gaussian Bernoullis they stand for,
bit for bit, on 30 random pooled PMBMs each: NLL, nll_many, exact, transforms, estimates, samples,
the intensity score and step counts (both constructors)."""

from __future__ import annotations

import numpy as np
import pytest
from support.pooled import as_single_mixture, bits_equal, random_pooled

import nllbench as nb
from nllbench.engine.transforms import marginal, scale_covariances, temper_existence
from nllbench.filters.estimates import estimate
from nllbench.measures.calibration import step_counts


def _gaussian_cases(seed, count, d=2):
    rng = np.random.default_rng(seed)
    for i in range(count):
        f = random_pooled(rng, d, "gaussian", ppp=i % 3 != 0, max_p=6)
        y = rng.normal(0.0, 2.0, (int(rng.integers(0, 4)), d))
        yield f, y


def _outcome(fn, *args):
    """``fn(*args)``, or the message of the ValueError it raises (boxes with correlated covariances)."""
    try:
        return fn(*args)
    except ValueError as exc:
        return str(exc)


@pytest.mark.parametrize("construct", [False, True])
def test_one_component_mixtures_give_the_gaussian_results_bit_for_bit(construct):
    for f, y in _gaussian_cases(21, 30, d=4):
        g = as_single_mixture(f, construct)
        assert isinstance(g.pool.densities, nb.GaussianMixtures)
        for q in (1, 3):
            assert bits_equal(nb.nll(f, y, q=q), nb.nll(g, y, q=q))
            assert bits_equal(nb.nll(f, y, q=q, budget="global"), nb.nll(g, y, q=q, budget="global"))
        assert bits_equal(nb.nll_many(f, y, [1, 2, 7]), nb.nll_many(g, y, [1, 2, 7]))
        assert bits_equal(nb.nll(f, y, method="exact"), nb.nll(g, y, method="exact"))
        y2 = y[:, :2]
        for tf, tg in (
            (marginal(f, (0, 1)), marginal(g, (0, 1))),
            (marginal(f, (1, 3)), marginal(g, (1, 3))),
        ):
            yy = y2 if tf.dim == 2 else y
            assert bits_equal(nb.nll(tf, yy, q=2), nb.nll(tg, yy, q=2))
        assert bits_equal(
            nb.nll(scale_covariances(f, 3.0), y, q=2), nb.nll(scale_covariances(g, 3.0), y, q=2)
        )
        assert bits_equal(nb.nll(temper_existence(f, 2.0), y, q=2), nb.nll(temper_existence(g, 2.0), y, q=2))
        for rule in ("best_hypothesis", "map_cardinality"):
            assert bits_equal(estimate(f, rule=rule), estimate(g, rule=rule))
        assert bits_equal(nb.sample(f, 20, seed=5), nb.sample(g, 20, seed=5))
        assert bits_equal(_outcome(nb.intensity_score, f, y, 2.0), _outcome(nb.intensity_score, g, y, 2.0))
        res = nb.nll(f, y, q=2)
        assert bits_equal(step_counts(f, y, res), step_counts(g, y, nb.nll(g, y, q=2)))
