"""Bad input gets a ValueError/TypeError naming the argument and what was expected."""

from __future__ import annotations

import numpy as np
import pytest

import nllbench as nb

I2 = np.eye(2)


@pytest.mark.parametrize(
    "build, match",
    [
        (lambda: nb.MultiBernoulli.gaussian([0.5], [0.0, 0.0], [I2]), r"means: expected a 2-D array"),
        (lambda: nb.MultiBernoulli.gaussian([0.5], [[0.0, 0.0]], I2), r"covs: expected a 3-D array"),
        (
            lambda: nb.MultiBernoulli.gaussian([0.5], [[0.0, 0.0]], [np.eye(3)]),
            r"covs: expected shape \(1, 2, 2\)",
        ),
        (lambda: nb.MultiBernoulli.gaussian([0.5, 0.5], [[0.0, 0.0]], [I2]), r"r: expected shape \(1,\)"),
        (
            lambda: nb.MultiBernoulli.gaussian([0.5], [[0.0, 0.0]], [[[1.0, 0.5], [0.0, 1.0]]]),
            r"covs: expected symmetric",
        ),
        (
            lambda: nb.MultiBernoulli.gaussian([0.5], [[0.0, 0.0]], [[[1.0, 2.0], [2.0, 1.0]]]),
            r"covs: expected positive-definite",
        ),
        (
            lambda: nb.MultiBernoulli.gaussian([0.5], [[0.0, 0.0]], [np.zeros((2, 2))]),
            r"covs: expected positive-definite",
        ),
        (
            lambda: nb.MultiBernoulli.gaussian([1.5], [[0.0, 0.0]], [I2]),
            r"r: expected values in \[0, 1\], got 1.5",
        ),
        (lambda: nb.MultiBernoulli.gaussian([-0.1], [[0.0, 0.0]], [I2]), r"r: expected values in \[0, 1\]"),
        (lambda: nb.MultiBernoulli.gaussian([np.nan], [[0.0, 0.0]], [I2]), r"r: expected finite values"),
        (lambda: nb.MultiBernoulli.gaussian([0.5], [[np.inf, 0.0]], [I2]), r"means: expected finite values"),
        (lambda: nb.MultiBernoulli.laplace([0.5], [[0.0, 0.0]], 0.0), r"scale: expected positive"),
        (lambda: nb.MultiBernoulli.laplace([0.5], [[0.0, 0.0]], [1.0, 2.0]), r"scale: expected shape \(1,\)"),
        (lambda: nb.PPP.gaussian([-1.0], [[0.0, 0.0]], [I2]), r"weights: expected non-negative"),
        (lambda: nb.PPP.gaussian([1.0, 1.0], [[0.0, 0.0]], [I2]), r"weights: expected shape \(1,\)"),
        (lambda: nb.PPP.uniform(-1.0, [0, 0], [1, 1]), r"rate: expected non-negative"),
        (lambda: nb.PPP.uniform(1.0, [0, 0], [1, 1, 1]), r"high: expected shape \(2,\)"),
        (lambda: nb.PPP.uniform(1.0, [0, 0], [1, 0]), r"high: expected every upper corner"),
        (lambda: nb.PPP.uniform([1.0, 2.0], [0, 0], [1, 1]), r"rate: expected a scalar"),
        (lambda: nb.PMBM(None, [], []), r"hypotheses: expected at least one"),
        (
            lambda: nb.PMBM(None, [nb.MultiBernoulli.empty(2)], [0.5]),
            r"weights: expected weights that sum to 1",
        ),
        (
            lambda: nb.PMBM(None, [nb.MultiBernoulli.empty(2)] * 2, [1.5, -0.5]),
            r"weights: expected non-negative",
        ),
        (
            lambda: nb.PMBM(nb.PPP.empty(3), [nb.MultiBernoulli.empty(2)], [1.0]),
            r"hypotheses: expected one state dimension",
        ),
        (lambda: nb.PMBM(None, ["x"], [1.0]), r"hypotheses\[0\]: expected MultiBernoulli"),
        (lambda: nb.PMBM("ppp", [nb.MultiBernoulli.empty(2)], [1.0]), r"ppp: expected PPP or None"),
        (
            lambda: nb.IIDCluster([0.5, 0.4], [1.0], [[0, 0]], [I2]),
            r"cardinality: expected weights that sum to 1",
        ),
        (
            lambda: nb.IIDCluster([0.5, 0.5], [0.5], [[0, 0]], [I2]),
            r"weights: expected weights that sum to 1",
        ),
        (
            lambda: nb.MultiBernoulli.gaussian("abc", [[0.0, 0.0]], [I2]),
            r"r: expected an array of real numbers",
        ),
    ],
)
def test_constructor_errors(build, match):
    with pytest.raises((ValueError, TypeError), match=match):
        build()


MB = nb.MultiBernoulli.gaussian([0.5], [[0.0, 0.0]], [I2])


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (
            dict(truth=[[0.0, 0.0, 0.0]]),
            r"truth: expected dimension 2 to match the density, got shape \(1, 3\)",
        ),
        (dict(truth=[0.0, 0.0]), r"truth: expected a 2-D array of shape \(n, 2\)"),
        (dict(truth=[[np.nan, 0.0]]), r"truth: expected finite values"),
        (dict(truth=[[np.inf, 0.0]]), r"truth: expected finite values"),
        (dict(truth=[[0.0, 0.0]], q=0), r"q: expected a positive integer"),
        (dict(truth=[[0.0, 0.0]], q=1.5), r"q: expected a positive integer"),
        (dict(truth=[[0.0, 0.0]], method="best"), r"method: expected one of"),
        (dict(truth=[[0.0, 0.0]], budget="all"), r"budget: expected one of"),
    ],
)
def test_nll_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        nb.nll(MB, **kwargs)


def test_nll_rejects_non_density():
    with pytest.raises(TypeError, match="density: expected PPP, IIDCluster, MultiBernoulli or PMBM"):
        nb.nll({"r": 1}, [[0.0, 0.0]])


def test_exact_refuses_intractable_problem():
    m = 40
    mb = nb.MultiBernoulli.gaussian(np.full(m, 0.5), np.zeros((m, 2)), np.stack([I2] * m))
    with pytest.raises(ValueError, match="method: 'exact' would enumerate 2\\^30"):
        nb.nll(mb, np.zeros((30, 2)), method="exact")


def test_empty_truth_shapes_are_accepted():
    for empty in ([], np.empty((0, 2)), np.empty(0)):
        assert nb.nll(MB, empty).value == pytest.approx(-np.log(0.5))
    with pytest.raises(ValueError, match="truth: expected shape"):
        nb.nll(MB, np.empty((0, 3)))


def test_densities_are_frozen():
    with pytest.raises(AttributeError):
        MB.r = np.ones(1)


@pytest.mark.parametrize(
    "truth, match",
    [
        ([[0.0, 0.0, 0.0]], r"truth: expected dimension 2"),
        ([0.0, 0.0], r"truth: expected a 2-D array"),
        ([[np.nan, 0.0]], r"truth: expected finite values"),
        ([[0.0, -np.inf]], r"truth: expected finite values"),
        (np.empty((0, 3)), r"truth: expected shape \(n, 2\)"),
    ],
)
def test_nll_many_rejects_bad_truth_like_nll(truth, match):
    f = nb.PMBM(nb.PPP.gaussian([1.0], [[0.0, 0.0]], [I2]), [MB, MB], [0.5, 0.5])
    for call in (lambda: nb.nll_many(f, truth, [1, 5]), lambda: nb.nll(f, truth, q=5)):
        with pytest.raises(ValueError, match=match):
            call()


@pytest.mark.parametrize(
    "covs, match",
    [
        ([[[1.0, 0.0], [0.0, np.nan]]], r"covs: expected finite values"),
        ([[[np.inf, 0.0], [0.0, 1.0]]], r"covs: expected finite values"),
        ([[[1.0, 1.0], [1.0, 1.0]]], r"covs: expected positive-definite"),
        ([[[1e-300, 0.0], [0.0, -1e-300]]], r"covs: expected positive-definite"),
    ],
)
def test_degenerate_covariances_are_named(covs, match):
    with pytest.raises(ValueError, match=match):
        nb.MultiBernoulli.gaussian([0.5], [[0.0, 0.0]], covs)
