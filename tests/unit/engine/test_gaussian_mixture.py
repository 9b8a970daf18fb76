"""The one Gaussian-mixture type: validation, the trusted path, and its log-pdf against SciPy."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import logsumexp
from scipy.stats import multivariate_normal
from support.densities import random_covs

import nllbench as nb
from nllbench.engine.densities import box_volume, log_box_volume
from nllbench.engine.gaussian_mixture import GaussianMixture, Gaussians
from nllbench.filters.gaussian import LabelledIntensity, predict_intensity
from nllbench.simulation.models import GaussianMixture as ModelsGaussianMixture
from nllbench.simulation.scenarios import PRESETS, get_scenario


def scipy_logpdf(weights, means, covs, y):
    """log sum_k w_k N(y; m_k, P_k) by scipy.stats, one component at a time."""
    with np.errstate(divide="ignore"):
        terms = [
            np.log(w) + multivariate_normal(m, P).logpdf(y).reshape(-1)
            for w, m, P in zip(weights, means, covs, strict=True)
        ]
    if not terms:
        return np.full(y.shape[0], -np.inf)
    return logsumexp(np.array(terms), axis=0)


@pytest.mark.parametrize("d", [1, 2, 4])
@pytest.mark.parametrize("K", [1, 3, 6])
def test_logpdf_matches_scipy(d, K):
    rng = np.random.default_rng(100 * d + K)
    w = rng.uniform(0.0, 3.0, K)
    w[0] = 0.0  # a zero weight is allowed and contributes nothing
    means, covs = rng.normal(0.0, 2.0, (K, d)), random_covs(rng, K, d)
    y = rng.normal(0.0, 3.0, (7, d))
    gm = GaussianMixture(w, means, covs)
    np.testing.assert_allclose(gm.logpdf(y), scipy_logpdf(w, means, covs, y), rtol=1e-12, atol=1e-12)
    per_component = np.array(
        [multivariate_normal(m, P).logpdf(y).reshape(-1) for m, P in zip(means, covs, strict=True)]
    )
    with np.errstate(divide="ignore"):
        want = np.log(w)[:, None] + per_component
    got = gm.log_weighted(y)
    assert got.shape == (K, 7)
    assert np.all(got[0] == -np.inf)
    np.testing.assert_allclose(got[1:], want[1:], rtol=1e-12)


def test_empty_mixture_is_zero_everywhere():
    gm = GaussianMixture(np.empty(0), np.empty((0, 3)), np.empty((0, 3, 3)))
    assert len(gm) == 0 and gm.dim == 3
    assert np.all(gm.logpdf(np.zeros((4, 3))) == -np.inf)
    assert gm.logpdf(np.empty((0, 3))).shape == (0,)
    assert GaussianMixture.empty(3).logpdf(np.ones((2, 3))).tolist() == [-np.inf, -np.inf]


def test_ppp_and_iid_cluster_evaluate_through_their_mixture():
    rng = np.random.default_rng(5)
    w, means, covs = rng.uniform(0.1, 2, 3), rng.normal(size=(3, 2)), random_covs(rng, 3, 2)
    y = rng.normal(size=(5, 2))
    ppp = nb.PPP.gaussian(w, means, covs)
    assert isinstance(ppp.mixture, GaussianMixture)
    np.testing.assert_array_equal(ppp.log_intensity(y), ppp.mixture.logpdf(y))
    np.testing.assert_allclose(ppp.log_intensity(y), scipy_logpdf(w, means, covs, y), rtol=1e-12)
    cluster = nb.IIDCluster([0.5, 0.5], w / w.sum(), means, covs)
    np.testing.assert_allclose(cluster.log_spatial(y), scipy_logpdf(w / w.sum(), means, covs, y), rtol=1e-12)


@pytest.mark.parametrize(
    ("kwargs", "name", "error"),
    [
        ({"weights": [-1.0]}, "weights", ValueError),
        ({"weights": [1.0, 2.0]}, "weights", ValueError),
        ({"weights": ["a"]}, "weights", TypeError),
        ({"means": [0.0, 0.0]}, "means", ValueError),
        ({"means": [[np.nan, 0.0]]}, "means", ValueError),
        ({"covs": [np.eye(3)]}, "covs", ValueError),
        ({"covs": [[[1.0, 0.5], [0.0, 1.0]]]}, "covs", ValueError),
        ({"covs": [[[1.0, 2.0], [2.0, 1.0]]]}, "covs", ValueError),
        ({"labels": [1, 2]}, "labels", ValueError),
        ({"labels": [0.5]}, "labels", ValueError),
    ],
)
def test_validation_names_the_argument(kwargs, name, error):
    args = {"weights": [1.0], "means": [[0.0, 0.0]], "covs": [np.eye(2)], "labels": None} | kwargs
    with pytest.raises(error, match=rf"^{name}: expected"):
        GaussianMixture(**args)


def test_validated_fields_are_float64_symmetrised_and_int64_labels():
    P = np.array([[2.0, 1.0], [1.0 + 1e-12, 2.0]])
    gm = GaussianMixture([1], [[0, 0]], [P], labels=np.array([7], dtype=np.int32))
    assert gm.weights.dtype == gm.means.dtype == gm.covs.dtype == np.float64
    np.testing.assert_array_equal(gm.covs[0], 0.5 * (P + P.T))
    assert gm.labels.dtype == np.int64 and gm.labels.tolist() == [7]
    assert GaussianMixture is ModelsGaussianMixture  # one type, also where models name it


def test_trusted_path_checks_and_copies_nothing():
    w, m, P = np.array([-1.0]), np.array([[0.0, 0.0]]), np.array([[[1.0, 2.0], [2.0, 1.0]]])
    with pytest.raises(ValueError, match="^weights: expected non-negative"):
        GaussianMixture(w, m, P)
    with pytest.raises(ValueError, match="^covs: expected positive-definite"):
        GaussianMixture([1.0], m, P)
    gm = GaussianMixture._trusted(w, m, P)  # invalid on purpose: the caller vouches, nothing is checked
    assert gm.weights is w and gm.means is m and gm.covs is P and gm.labels is None


def test_derived_mixtures_keep_the_validated_components_bit_for_bit():
    rng = np.random.default_rng(1)
    gm = GaussianMixture(
        rng.uniform(0, 1, 4), rng.normal(size=(4, 2)), random_covs(rng, 4, 2), labels=[3, 1, 4, 1]
    )
    y = rng.normal(size=(6, 2))
    np.testing.assert_array_equal(gm.scaled(0.25).weights, 0.25 * gm.weights)
    np.testing.assert_array_equal(
        gm.scaled(0.25).log_weighted(y)[:, 0], np.log(0.25 * gm.weights) + gm.components.logpdf(y)[:, 0]
    )
    part = gm.subset(np.array([2, 0]))
    np.testing.assert_array_equal(part.log_weighted(y), gm.log_weighted(y)[[2, 0]])
    assert part.labels.tolist() == [4, 3]
    both = GaussianMixture.concatenate([part, gm])
    np.testing.assert_array_equal(
        both.log_weighted(y), np.concatenate([part.log_weighted(y), gm.log_weighted(y)])
    )
    assert both.labels.tolist() == [4, 3, 3, 1, 4, 1]
    unlabelled = GaussianMixture(gm.weights, gm.means, gm.covs)
    assert GaussianMixture.concatenate([gm, unlabelled]).labels is None


def test_from_gaussians_reuses_the_family_and_checks_weights():
    g = Gaussians([[0.0], [1.0]], [[[1.0]], [[2.0]]])
    gm = GaussianMixture.from_gaussians([0.5, 0.5], g, labels=[0, 1])
    assert gm.components is g
    with pytest.raises(ValueError, match="^weights: expected shape"):
        GaussianMixture.from_gaussians([1.0], g)
    with pytest.raises(TypeError, match="^gaussians: expected Gaussians"):
        GaussianMixture.from_gaussians([1.0], np.zeros((1, 1)))
    with pytest.raises(TypeError, match="^mixture: expected GaussianMixture"):
        nb.PPP.from_mixture(g)
    with pytest.raises(ValueError, match="^high: expected every upper corner"):
        nb.PPP.from_mixture(gm, [1.0], [[1.0]], [[0.0]])


def test_ppp_public_constructor_and_fields_unchanged():
    g = nb.Gaussians([[0.0, 1.0]], [np.eye(2)])
    ppp = nb.PPP([2.0], g, [3.0], [[0.0, 0.0]], [[1.0, 2.0]], labels=[5])
    assert ppp.gaussians is g and ppp.weights.tolist() == [2.0] and ppp.labels.tolist() == [5]
    assert ppp.total_rate == 5.0 and ppp.dim == 2
    both = ppp + nb.PPP.uniform(1.0, [0, 0], [1, 1])
    assert both.labels is None and both.weights.tolist() == [2.0] and both.rates.tolist() == [3.0, 1.0]
    y = np.array([[0.5, 0.5], [5.0, 5.0]])
    want = np.logaddexp(ppp.log_intensity(y), np.where([True, False], 0.0, -np.inf))
    np.testing.assert_allclose(both.log_intensity(y), want, rtol=1e-15)
    with pytest.raises(ValueError, match="^weights: expected non-negative"):
        nb.PPP([-1.0], g, [], None, None)
    with pytest.raises(ValueError, match="^labels: expected 1 integers"):
        nb.PPP([1.0], g, [], None, None, labels=[1, 2])


def test_predicted_intensity_thins_moves_and_adds_labelled_birth():
    model = get_scenario("chalmers").model
    start = LabelledIntensity.start(model.initial, first_label=10)
    assert start.mixture.labels.tolist() == [10, 11, 12, 13] and start.next_label == 14
    out = predict_intensity(start, model)
    J = len(model.initial)
    np.testing.assert_array_equal(out.mixture.weights[:J], model.p_survival * model.initial.weights)
    np.testing.assert_allclose(out.mixture.means[:J], model.initial.means @ model.F.T)
    np.testing.assert_allclose(out.mixture.covs[:J], model.F @ model.initial.covs @ model.F.T + model.Q)
    np.testing.assert_array_equal(out.mixture.means[J:], model.birth.means)
    assert out.mixture.labels.tolist() == [10, 11, 12, 13, 14, 15, 16, 17] and out.next_label == 18
    ppp = out.to_ppp()
    assert ppp.labels.tolist() == out.mixture.labels.tolist()
    np.testing.assert_array_equal(
        ppp.gaussians.covs, 0.5 * (out.mixture.covs + np.swapaxes(out.mixture.covs, 1, 2))
    )


def test_box_volume_is_the_plain_product_and_survives_overflow():
    lows = np.array([[0.0, 0.0], [-1.7e308, 0.0], [0.0, 0.0], [0.0, 0.0]])
    highs = np.array([[300.0, 300.0], [1.7e308, 1e-300], [1e200, 1e200], [1e-200, 1e-200]])
    v = box_volume(lows, highs)
    assert v[0] == 300.0 * 300.0
    # the side overflows, the volume does not; the log route cancels log(3.4e308) + log(1e-300) (~700 eps)
    assert v[1] == pytest.approx(3.4e8, rel=1e-12)
    assert v[2] == np.inf
    assert v[3] == 0.0  # 1e-400 is below the float range
    np.testing.assert_allclose(np.log(v[:2]), log_box_volume(lows[:2], highs[:2]), rtol=1e-14)
    for name in PRESETS:
        m = get_scenario(name).model
        assert m.fov_volume == float(np.prod(m.fov_high - m.fov_low))
