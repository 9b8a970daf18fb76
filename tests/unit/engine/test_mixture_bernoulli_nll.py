"""Bernoullis whose single-object density is a Gaussian mixture (``nb.GaussianMixtures``).

Checked against brute-force enumeration with an independent mixture
log-density (scipy), and, for one-component mixtures, bit for bit against the
Gaussian Bernoullis they stand for: NLL, nll_many, exact, terms, transforms,
estimates, sampling, scores, the evaluation and ``nb.score`` of a tracks
table; posterior files round trip; bad tables refused with the row named.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from scipy.special import logsumexp
from scipy.stats import multivariate_normal
from support.bruteforce import bernoulli_set_likelihoods, pmbm_log_likelihood, table_brute_force
from support.densities import random_covs, random_ppp, random_r
from support.pooled import as_single_mixture, bits_equal, copied, random_pooled

import nllbench as nb
from nllbench.engine.gaussian_mixture import segment_logsumexp
from nllbench.engine.transforms import marginal, scale_covariances
from nllbench.filters.estimates import estimate
from nllbench.measures.evaluate import EvaluationSettings, evaluate_run

EXAMPLES = "docs/examples"


def random_mixtures(rng, m, d, max_c=3):
    counts = rng.integers(1, max_c + 1, m)
    offsets = np.concatenate([[0], np.cumsum(counts)])
    C = int(offsets[-1])
    weights = np.concatenate([rng.dirichlet(np.ones(c)) for c in counts]) if m else np.empty(0)
    return nb.GaussianMixtures(weights, rng.normal(0.0, 2.0, (C, d)), random_covs(rng, C, d), offsets)


def random_mixture_pmbm(rng, d=2, ppp=True, max_p=5, max_h=4):
    """A pooled PMBM of mixture Bernoullis (some hypotheses sharing members)."""
    P = int(rng.integers(0, max_p + 1))
    pool = nb.MultiBernoulli(random_r(rng, P), random_mixtures(rng, P, d), rng.integers(0, 9, P))
    H = int(rng.integers(1, max_h + 1))
    members = [np.flatnonzero(rng.random(P) < 0.7) for _ in range(H)]
    return nb.PMBM.pooled(random_ppp(rng, d) if ppp else None, pool, members, rng.dirichlet(np.ones(H)))


def scipy_logpdf(mb, y):
    """log p_k(y_l) of each mixture Bernoulli, by scipy, component by component: (m, n)."""
    g = mb.densities
    out = np.empty((len(mb), y.shape[0]))
    for k in range(len(mb)):
        a, b = g.offsets[k], g.offsets[k + 1]
        comps = [
            np.log(g.weights[c])
            + multivariate_normal(g.components.means[c], g.components.covs[c]).logpdf(y).reshape(-1)
            for c in range(a, b)
        ]
        out[k] = logsumexp(np.stack(comps), axis=0)
    return out


# ---------------------------------------------------------------------------
# the family itself
# ---------------------------------------------------------------------------


def test_mixture_logpdf_means_and_covariance_against_scipy():
    rng = np.random.default_rng(1)
    g = random_mixtures(rng, 6, 3)
    y = rng.normal(0.0, 2.0, (5, 3))
    mb = nb.MultiBernoulli(np.full(6, 0.5), g)
    np.testing.assert_allclose(g.logpdf(y), scipy_logpdf(mb, y), rtol=1e-12)
    for k in range(6):
        a, b = g.offsets[k], g.offsets[k + 1]
        w, m, P = g.weights[a:b], g.components.means[a:b], g.components.covs[a:b]
        mu = w @ m
        np.testing.assert_allclose(g.means[k], mu, rtol=1e-12, atol=1e-14)
        cov = np.einsum("c,cij->ij", w, P + np.einsum("ci,cj->cij", m - mu, m - mu))
        np.testing.assert_allclose(g.moment_matched().covs[k], cov, rtol=1e-12, atol=1e-14)


def test_segment_logsumexp_edges():
    a = np.array([[-np.inf, 0.0], [-np.inf, 1.0], [3.0, -np.inf]])
    out = segment_logsumexp(a, np.array([0, 2, 3]))
    assert out[0, 0] == -np.inf and out[0, 1] == pytest.approx(np.logaddexp(0.0, 1.0))
    assert bits_equal(out[1], a[2])  # a segment of one row is that row
    far = nb.GaussianMixtures([0.5, 0.5], [[0.0], [1.0]], np.ones((2, 1, 1)), [0, 2])
    assert far.logpdf(np.array([[1e200]]))[0, 0] == -np.inf  # no NaN


def test_subset_and_concatenate_keep_each_member():
    rng = np.random.default_rng(2)
    g = random_mixtures(rng, 5, 2)
    y = rng.normal(size=(4, 2))
    idx = np.array([3, 0, 3])
    assert bits_equal(g.subset(idx).logpdf(y), g.logpdf(y)[idx])
    assert bits_equal(g.subset(np.array([True, False, True, False, False])).means, g.means[[0, 2]])
    h = nb.Gaussians(rng.normal(size=(2, 2)), random_covs(rng, 2, 2))
    both = nb.GaussianMixtures.concatenate([g, h])
    assert bits_equal(both.logpdf(y), np.concatenate([g.logpdf(y), h.logpdf(y)]))


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (([0.5, 0.4], [[0.0], [1.0]], np.ones((2, 1, 1)), [0, 2]), "sum to 1, got 0.9 for member 0"),
        (([1.0, 1.0], [[0.0], [1.0]], np.ones((2, 1, 1)), [0, 1, 1, 2]), "offsets.*member 1"),
        (([1.0], [[0.0]], np.ones((1, 1, 1)), [1, 1]), "offsets: expected 0 first"),
        (([-0.5, 1.5], [[0.0], [1.0]], np.ones((2, 1, 1)), [0, 2]), "weights"),
        (([1.0], [[0.0]], -np.ones((1, 1, 1)), [0, 1]), "covs"),
        (([1.0], [[0.0]], np.ones((1, 1, 1)), [0.0, 1.0]), "offsets: expected a 1-D integer"),
    ],
)
def test_bad_mixtures_are_refused(args, match):
    with pytest.raises(ValueError, match=match):
        nb.GaussianMixtures(*args)


def test_multi_bernoulli_gaussian_mixture_constructor():
    mb = nb.MultiBernoulli.gaussian_mixture(
        [0.9, 0.5], [0.25, 0.75, 1.0], [[0.0], [4.0], [9.0]], np.ones((3, 1, 1)), [0, 2, 3], [4, 5]
    )
    assert mb.means.ravel().tolist() == [3.0, 9.0]  # the mixture means
    with pytest.raises(TypeError, match="GaussianMixtures"):
        nb.MultiBernoulli([0.5], "not a density")


# ---------------------------------------------------------------------------
# the NLL against brute force
# ---------------------------------------------------------------------------


def _cases(seed, count):
    rng = np.random.default_rng(seed)
    for i in range(count):
        f = random_mixture_pmbm(rng, ppp=i % 3 != 0)
        y = rng.normal(0.0, 2.0, (int(rng.integers(0, 4)), 2))
        yield f, y


def test_nll_value_exact_and_terms_equal_brute_force():
    for f, y in _cases(11, 40):
        expected, terms = pmbm_log_likelihood(f, y, scipy_logpdf)
        full = nb.nll(f, y, q=10_000)
        exact = nb.nll(f, y, method="exact")
        if expected == -math.inf:
            assert full.value == math.inf and exact.value == math.inf
            continue
        assert full.exact and full.value == pytest.approx(-expected, rel=1e-9, abs=1e-9)
        assert exact.value == pytest.approx(-expected, rel=1e-9, abs=1e-9)
        for res in (full, exact):  # the terms decompose the best (hypothesis, association) pair
            parts = res.localization + res.false + res.missed + res.mixture
            assert parts == pytest.approx(-terms[0], rel=1e-9, abs=1e-9)
            assert parts + res.association == pytest.approx(res.value, rel=1e-9, abs=1e-9)


def test_murty_bounds_bracket_the_brute_force_value():
    for f, y in _cases(12, 40):
        expected, _ = pmbm_log_likelihood(f, y, scipy_logpdf)
        if expected == -math.inf:
            continue
        for q in (1, 2):
            res = nb.nll(f, y, q=q)
            assert res.lower <= -expected + 1e-9 * max(1.0, abs(expected))
            assert res.value >= -expected - 1e-9 * max(1.0, abs(expected))
        many = nb.nll_many(f, y, [1, 2, 50])
        assert all(bits_equal(a, nb.nll(f, y, q=q)) for a, q in zip(many, [1, 2, 50], strict=True))


def test_pooled_mixture_pmbm_equals_its_copied_hypotheses_bit_for_bit():
    for f, y in _cases(13, 25):
        c = copied(f)
        assert bits_equal(nb.nll(f, y, q=3), nb.nll(c, y, q=3))
        assert bits_equal(nb.nll(f, y, method="exact"), nb.nll(c, y, method="exact"))


def test_mixed_gaussian_and_mixture_hypotheses():
    rng = np.random.default_rng(14)
    gauss = nb.MultiBernoulli.gaussian([0.8], [[0.0, 0.0]], [np.eye(2)])
    mix = nb.MultiBernoulli(np.array([0.6, 0.7]), random_mixtures(rng, 2, 2))
    f = nb.PMBM(nb.PPP.uniform(1.0, -5, 5, dim=2), (gauss, mix), [0.4, 0.6])
    y = rng.normal(size=(2, 2))
    expected, _ = pmbm_log_likelihood(f, y)
    assert nb.nll(f, y, q=1000).value == pytest.approx(-expected, rel=1e-12)
    assert isinstance(f.pool.densities, nb.GaussianMixtures) and len(f.pool) == 3


def test_marginal_and_covariance_scale_apply_per_component():
    rng = np.random.default_rng(15)
    g = random_mixtures(rng, 3, 4)
    mb = nb.MultiBernoulli([0.9, 0.4, 0.7], g)
    y = rng.normal(size=(2, 4))
    m = marginal(mb, (0, 1)).densities
    for k in range(3):
        a, b = g.offsets[k], g.offsets[k + 1]
        comps = [
            np.log(g.weights[c])
            + multivariate_normal(g.components.means[c, :2], g.components.covs[c, :2, :2]).logpdf(y[:, :2])
            for c in range(a, b)
        ]
        np.testing.assert_allclose(m.logpdf(y[:, :2])[k], logsumexp(np.stack(comps), axis=0), rtol=1e-10)
    s = scale_covariances(mb, 2.5).densities
    np.testing.assert_allclose(s.components.covs, 2.5 * g.components.covs)
    assert bits_equal(s.weights, g.weights) and bits_equal(s.means, g.means)


def test_samples_follow_the_mixture():
    g = nb.GaussianMixtures([0.25, 0.75], [[-3.0], [3.0]], np.full((2, 1, 1), 0.01), [0, 2])
    s = nb.sample(nb.MultiBernoulli([1.0], g), 4000, seed=3)
    share = float(np.mean(s.points[:, 0] > 0))
    assert abs(share - 0.75) < 4 * math.sqrt(0.75 * 0.25 / 4000)
    assert np.all(np.abs(np.abs(s.points[:, 0]) - 3.0) < 0.6)


def test_estimates_are_the_mixture_means():
    mb = nb.MultiBernoulli.gaussian_mixture(
        [0.9, 0.2],
        [0.5, 0.5, 1.0],
        [[0.0, 0.0], [2.0, 4.0], [7.0, 7.0]],
        np.tile(np.eye(2), (3, 1, 1)),
        [0, 2, 3],
    )
    est = estimate(mb)
    assert est.states.tolist() == [[1.0, 2.0]]


def test_intensity_score_of_a_mixture_is_that_of_its_weighted_components():
    rng = np.random.default_rng(16)
    g = random_mixtures(rng, 2, 2)
    mb = nb.MultiBernoulli([0.8, 0.5], g)
    r_c = np.array([0.8, 0.5])[g.owner] * g.weights
    as_ppp = nb.PPP.gaussian(r_c, g.components.means, g.components.covs)  # the same intensity
    y = rng.normal(size=(3, 2))
    a, b = nb.intensity_score(mb, y, 1.5), nb.intensity_score(as_ppp, y, 1.5)
    assert a.value == pytest.approx(b.value, rel=1e-12)


# ---------------------------------------------------------------------------
# one component: bit for bit the Gaussian
# ---------------------------------------------------------------------------


def test_evaluation_of_one_component_mixtures_is_bit_identical():
    rng = np.random.default_rng(22)
    post = [random_pooled(rng, 4, ppp=True, labels=True, max_p=6) for _ in range(5)]
    truth = [rng.normal(0.0, 2.0, (int(rng.integers(0, 4)), 4)) for _ in range(5)]
    ids = [np.arange(len(x)) for x in truth]
    for settings in (
        EvaluationSettings(qs=(1, 5), exact=True),
        EvaluationSettings(qs=(2,), marginal="full", cov_scale=2.0, temper=1.5),
    ):
        a = evaluate_run(post, truth, ids, [-10, -10], [10, 10], settings)
        b = evaluate_run([as_single_mixture(f) for f in post], truth, ids, [-10, -10], [10, 10], settings)
        sa, sb = a.summary(), b.summary()
        assert all(bits_equal(sa[k], sb[k]) or (math.isnan(sa[k]) and math.isnan(sb[k])) for k in sa)
        for name in a.nll:
            assert bits_equal(a.nll[name], b.nll[name])
        assert bits_equal(a.calibration, b.calibration) and bits_equal(a.gospa, b.gospa)


# ---------------------------------------------------------------------------
# posterior files
# ---------------------------------------------------------------------------


def test_posterior_file_round_trip_with_mixtures(tmp_path):
    import xarray as xr

    rng = np.random.default_rng(31)
    steps = [random_mixture_pmbm(rng, ppp=True) for _ in range(4)]
    steps.append(
        nb.PMB(random_ppp(rng, 2, "uniform"), nb.MultiBernoulli.gaussian([0.5], [[0, 0]], [np.eye(2)]))
    )
    path = tmp_path / "gm.nc"
    nb.write_posterior(steps, path)
    raw = xr.open_dataset(path, decode_cf=False)
    assert (
        raw.attrs["nllbench_schema_version"] == "3" and raw.attrs["bernoulli_density"] == "gaussian_mixture"
    )
    assert "bern_mean" not in raw and "bern_components" in raw
    back = nb.read_posterior(path)
    for a, b in zip(steps, back, strict=True):
        y = rng.normal(0.0, 2.0, (2, 2))
        assert bits_equal(nb.nll(a, y, q=5), nb.nll(b, y, q=5))
        assert isinstance(b.pool.densities, nb.GaussianMixtures)
        for x, z in zip(a.hypotheses, b.hypotheses, strict=True):
            assert bits_equal(x.densities.means, z.densities.means)


def test_gaussian_posterior_files_stay_version_2_and_old_files_read(tmp_path):
    import xarray as xr

    rng = np.random.default_rng(32)
    steps = [random_pooled(rng, 2, ppp=True, labels=True) for _ in range(3)]
    path = tmp_path / "g.nc"
    nb.write_posterior(steps, path)
    raw = xr.open_dataset(path, decode_cf=False)
    assert raw.attrs["nllbench_schema_version"] == "2" and "bernoulli_density" not in raw.attrs
    back = nb.read_posterior(path)
    assert all(isinstance(f.pool.densities, nb.Gaussians) for f in back)
    for a, b in zip(steps, back, strict=True):
        y = rng.normal(0.0, 2.0, (2, 2))
        assert bits_equal(nb.nll(a, y, q=5), nb.nll(b, y, q=5))


def test_bad_component_variables_are_refused(tmp_path):
    import xarray as xr

    mb = nb.MultiBernoulli.gaussian_mixture(
        [0.9, 0.5], [0.25, 0.75, 1.0], [[0.0], [4.0], [9.0]], np.ones((3, 1, 1)), [0, 2, 3]
    )
    path = tmp_path / "gm.nc"
    nb.write_posterior([mb, mb.subset([1])], path)
    ds = xr.open_dataset(path, decode_cf=False).load()
    bad = ds.copy(deep=True)
    bad["bern_components"].values[0] = 0
    bad.to_netcdf(tmp_path / "b1.nc", engine="netcdf4")
    with pytest.raises(nb.SchemaError, match="bern_components"):
        nb.read_posterior(tmp_path / "b1.nc")
    bad = ds.copy(deep=True)
    bad["component_weight"].values[0] += 0.25
    bad.to_netcdf(tmp_path / "b2.nc", engine="netcdf4")
    with pytest.raises(nb.SchemaError, match="sum to 1"):
        nb.read_posterior(tmp_path / "b2.nc")


# ---------------------------------------------------------------------------
# the tracks table
# ---------------------------------------------------------------------------


def test_score_of_the_example_mixture_table_equals_brute_force():
    df = pd.read_csv(f"{EXAMPLES}/tracks_gm.csv")
    truth = pd.read_csv(f"{EXAMPLES}/truth.csv")
    fill = nb.FillIns(0.5, (0, 0), (100, 100))
    res = nb.score(f"{EXAMPLES}/tracks_gm.csv", f"{EXAMPLES}/truth.csv", fill=fill)
    expected = table_brute_force(df, truth, 0.5, (0, 0), (100, 100))
    frame = res.per_frame()
    np.testing.assert_allclose(frame["nll"], expected, rtol=1e-10)
    # the points: each track's mixture mean (frame 0: track 1 at 0.7 (10.2, 20.1) + 0.3 (11.5, 21.0))
    assert frame["n_estimates"].tolist() == [1, 1, 1, 2]  # r > 0.4: track 2 (r = 0.3) is not estimated


def test_one_component_table_scores_as_the_gaussian_table_bit_for_bit():
    df = pd.read_csv(f"{EXAMPLES}/tracks.csv")
    truth = pd.read_csv(f"{EXAMPLES}/truth.csv")
    mix = df.assign(component=7, component_weight=1.0)
    fill = nb.FillIns(0.5, (0, 0), (100, 100))
    a = nb.score(df, truth, fill=fill, frames="union")
    b = nb.score(mix, truth, fill=fill, frames="union")
    pa, pb = a.per_frame(), b.per_frame()
    for col in pa.columns:
        assert bits_equal(pa[col].to_numpy(), pb[col].to_numpy()), col
    sa, sb = a.summary(), b.summary()
    for k in sa:
        same = sa[k] == sb[k] or (isinstance(sa[k], float) and math.isnan(sa[k]) and math.isnan(sb[k]))
        assert same or bits_equal(sa[k], sb[k]), k


def test_mixture_point_estimates_in_the_table_are_the_mixture_means():
    df = pd.DataFrame(
        {
            "frame": [0, 0, 0],
            "id": [1, 1, 2],
            "r": [0.9, 0.9, 0.8],
            "component": [0, 1, 0],
            "component_weight": [0.25, 0.75, 1.0],
            "x": [0.0, 4.0, 50.0],
            "y": [0.0, 8.0, 50.0],
            "var_x": [1.0, 1.0, 1.0],
            "var_y": [1.0, 1.0, 1.0],
        }
    )
    truth = pd.DataFrame({"frame": [0], "id": [5], "x": [3.0], "y": [6.0]})
    res = nb.score(df, truth, settings=EvaluationSettings(qs=(1,), cutoff=10.0, threshold=10.0))
    # the estimate of track 1 is (3, 6), exactly at the truth: GOSPA has only track 2's false term
    assert res.per_frame()["gospa_localization"].tolist() == [0.0]


def _mixture_table():
    return pd.DataFrame(
        {
            "frame": [0, 0, 0, 1],
            "id": [1, 1, 2, 1],
            "r": [0.9, 0.9, 0.5, 0.9],
            "component": [0, 1, 0, 0],
            "component_weight": [0.4, 0.6, 1.0, 1.0],
            "x": [0.0, 1.0, 5.0, 0.5],
            "y": [0.0, 1.0, 5.0, 0.5],
            "var_x": [1.0] * 4,
            "var_y": [1.0] * 4,
        }
    )


@pytest.mark.parametrize(
    ("change", "match"),
    [
        (
            lambda t: t.assign(component_weight=[0.4, 0.5, 1.0, 1.0]),
            r"row 1\b.*column 'component_weight'.*"
            r"track id 1 in frame 0: expected component weights summing to 1, got 0.9 \(rows \[1, 2\]\)",
        ),
        (
            lambda t: t.assign(component_weight=[0.4, None, 1.0, 1.0]),
            r"row 2\b.*'component_weight': expected a number",
        ),
        (lambda t: t.drop(columns="component_weight"), "go together"),
        (lambda t: t.drop(columns="id"), "need column 'id'"),
        (lambda t: t.assign(component=[0, 0, 0, 0]), r"row 2\b.*'component'.*component 0 of id 1 again"),
        (lambda t: t.assign(r=[0.9, 0.8, 0.5, 0.9]), r"row 2\b.*column 'r'.*share its r"),
        (lambda t: t.assign(component_weight=[1.4, -0.4, 1.0, 1.0]), r"row 1\b.*weight in \[0, 1\]"),
        (lambda t: t.assign(component=[0, 0.5, 0, 0]), r"row 2\b.*'component'.*expected an integer"),
    ],
)
def test_bad_mixture_tables_are_refused_with_the_row(change, match):
    truth = pd.DataFrame({"frame": [0, 1], "id": [1, 1], "x": [0.0, 0.0], "y": [0.0, 0.0]})
    with pytest.raises(ValueError, match=match):
        nb.score(change(_mixture_table()), truth, fill=nb.FillIns(0.5, (-10, -10), (10, 10)))


def test_a_mixture_table_with_hypotheses_groups_by_hypothesis():
    t = _mixture_table()
    t = pd.concat([t.assign(hypothesis=0, weight=0.7), t.assign(hypothesis=1, weight=0.3)], ignore_index=True)
    t.loc[t.hypothesis == 1, "x"] += 1.0
    truth = pd.DataFrame({"frame": [0, 1], "id": [1, 1], "x": [0.0, 0.0], "y": [0.0, 0.0]})
    res = nb.score(
        t, truth, fill=nb.FillIns(0.5, (-10, -10), (10, 10)), settings=EvaluationSettings(qs=(50,))
    )
    from nllbench.trackers.build import build_densities
    from nllbench.trackers.fillins import FillIns
    from nllbench.trackers.tracks import validate_tracks

    dens, _ = build_densities(validate_tracks(t), np.array([0, 1]), FillIns(0.5, (-10, -10), (10, 10)))
    assert [len(mb) for mb in dens[0].hypotheses] == [2, 2] and dens[0].hypotheses[
        0
    ].densities.counts.tolist() == [
        2,
        1,
    ]
    for k, f in enumerate(dens):
        y = truth[truth.frame == k][["x", "y"]].to_numpy(float)
        expected, _ = pmbm_log_likelihood(f, y, scipy_logpdf)
        assert res.per_frame()["nll"][k] == pytest.approx(-expected, rel=1e-10)


def test_calibration_fit_counts_a_mixture_track_once():
    from nllbench.trackers.fitting import fit_score_calibration

    rng = np.random.default_rng(41)
    rows, truth = [], []
    for f in range(40):
        truth.append((f, 1, 0.0, 0.0))
        s = float(rng.normal(2.0, 1.0))
        rows += [(f, 1, s, 0, 0.5, 0.1, 0.0), (f, 1, s, 1, 0.5, -0.1, 0.0)]  # a matched track
        s2 = float(rng.normal(0.0, 1.0))
        rows += [(f, 2, s2, 0, 1.0, 30.0, 30.0)]  # a false one
        if f % 4 == 0:
            rows += [(f, 3, float(rng.normal(2.0, 1.0)), 0, 1.0, 0.2, 0.2)]  # sometimes a second near one
    cols = ["frame", "id", "score", "component", "component_weight", "x", "y"]
    t = pd.DataFrame(rows, columns=cols)
    y = pd.DataFrame(truth, columns=["frame", "id", "x", "y"])
    cal = fit_score_calibration(t, y, threshold=2.0)
    assert cal.n_rows == 40 * 2 + 10  # tracks, not component rows


def test_the_trajectory_nll_refuses_mixture_tables():
    truth = pd.DataFrame({"frame": [0, 1], "id": [1, 1], "x": [0.0, 0.0], "y": [0.0, 0.0]})
    with pytest.raises(ValueError, match="component"):
        nb.trajectory_nll(_mixture_table(), truth)


def test_brute_force_helper_enumerates_every_association():
    # the table brute force's enumeration: 2 Bernoullis, 2 objects -> 7 injective maps with the PPP
    assert sum(1 for _ in bernoulli_set_likelihoods(np.array([0.5, 0.5]), np.zeros((2, 2)), 2)) == 7
    assert len(list(itertools.product(range(-1, 2), repeat=2))) == 9


def test_a_csv_component_without_weight_names_the_file_row_and_line(tmp_path):
    text = open(f"{EXAMPLES}/tracks_gm.csv").read().splitlines()
    cells = text[3].split(",")
    cells[4] = ""  # data row 3 (line 4): component 0 of track 2 in frame 0 without its weight
    text[3] = ",".join(cells)
    path = tmp_path / "gm.csv"
    path.write_text("\n".join(text) + "\n")
    with pytest.raises(ValueError, match=r"gm.csv: row 3 \(line 4\), column 'component_weight'.*empty cell"):
        nb.score(path, f"{EXAMPLES}/truth.csv", fill=nb.FillIns(0.5, (0, 0), (100, 100)))
