"""Pooled PMBMs: hypotheses that index one shared pool of Bernoullis instead of holding copies.

Every consumer gives the same bits on a pooled PMBM as on the same density
built from copied hypotheses; a read posterior holds its pool once.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from support.densities import random_covs
from support.pooled import bits_equal, copied, random_pooled, same_hypotheses

import nllbench as nb
from nllbench.engine.transforms import marginal, scale_covariances, temper_existence
from nllbench.filters.estimates import estimate, expected_cardinality
from nllbench.measures.calibration import cardinality_score, step_counts
from nllbench.measures.evaluate import EvaluationSettings, evaluate_run


def _cases(seed, count=40, d=2):
    rng = np.random.default_rng(seed)
    for i in range(count):
        kind = "laplace" if i % 5 == 4 else "gaussian"
        f = random_pooled(rng, d, kind, ppp=i % 3 != 0)
        y = rng.normal(0.0, 2.0, (int(rng.integers(0, 5)), d))
        yield f, copied(f), y


def test_pooled_hypotheses_are_the_pool_members():
    pool = nb.MultiBernoulli.gaussian([0.2, 0.9, 1.0], [[0.0], [1.0], [2.0]], np.ones((3, 1, 1)), [5, -1, 6])
    f = nb.PMBM.pooled(
        None, pool, [np.array([2, 0]), np.array([], dtype=int), np.array([1])], [0.5, 0.3, 0.2]
    )
    assert f.is_pooled and not copied(f).is_pooled
    assert f.n_hypotheses == 3 and f.dim == 1 and f.family == "MBM"
    h0, h1, h2 = f.hypotheses
    assert np.array_equal(h0.r, [1.0, 0.2]) and np.array_equal(h0.means, [[2.0], [0.0]])
    assert np.array_equal(h0.labels, [6, 5])
    assert len(h1) == 0
    assert h2.labels is None  # every member unlabelled (-1): no labels, as a read posterior gives
    assert np.array_equal(f.existence(-3), [1.0, 0.2]) and f.hypothesis(-1).r.tolist() == [0.9]
    assert f.pool is pool and [m.tolist() for m in f.members] == [[2, 0], [], [1]]
    # a PMBM built from hypotheses gives them concatenated
    c = copied(f)
    assert np.array_equal(c.pool.r, [1.0, 0.2, 0.9])
    assert np.array_equal(c.pool.labels, [6, 5, -1])
    assert [m.tolist() for m in c.members] == [[0, 1], [], [2]]
    with pytest.raises(IndexError):
        f.hypothesis(3)


def test_pooled_construction_checks_its_arguments():
    pool = nb.MultiBernoulli.gaussian([0.5, 0.5], [[0.0], [1.0]], np.ones((2, 1, 1)))
    ok = [np.array([0, 1])]
    with pytest.raises(TypeError, match="pool: expected MultiBernoulli"):
        nb.PMBM.pooled(None, [pool], ok, [1.0])
    with pytest.raises(ValueError, match="members: expected at least one hypothesis"):
        nb.PMBM.pooled(None, pool, [], [])
    with pytest.raises(ValueError, match=r"members\[1\]: expected indices into the pool, 0..1, got 2"):
        nb.PMBM.pooled(None, pool, [np.array([0]), np.array([1, 2])], [0.5, 0.5])
    with pytest.raises(ValueError, match=r"members\[0\]: expected indices into the pool, 0..1, got -1"):
        nb.PMBM.pooled(None, pool, [np.array([-1])], [1.0])
    with pytest.raises(ValueError, match=r"members\[0\]: expected a 1-D integer array"):
        nb.PMBM.pooled(None, pool, [np.array([0.0, 1.0])], [1.0])
    with pytest.raises(ValueError, match=r"members\[0\]: expected a 1-D integer array"):
        nb.PMBM.pooled(None, pool, np.array([0, 1]), [1.0, 1.0])  # one flat array is not one per hypothesis
    with pytest.raises(ValueError, match="weights: expected shape"):
        nb.PMBM.pooled(None, pool, ok, [0.5, 0.5])
    with pytest.raises(ValueError, match="pool: expected one state dimension"):
        nb.PMBM.pooled(nb.PPP.uniform(1.0, [0, 0], [1, 1]), pool, ok, [1.0])


def test_nll_of_a_pooled_pmbm_equals_the_copied_one_bit_for_bit():
    for f, c, y in _cases(101):
        for budget in ("hypothesis", "global"):
            for q in (1, 3, 20):
                assert bits_equal(nb.nll(f, y, q=q, budget=budget), nb.nll(c, y, q=q, budget=budget))
            assert bits_equal(nb.nll_many(f, y, (1, 4, 9), budget), nb.nll_many(c, y, (1, 4, 9), budget))
        assert bits_equal(nb.nll(f, y, method="exact"), nb.nll(c, y, method="exact"))


def test_nll_of_a_large_pooled_pmbm_equals_the_copied_one_bit_for_bit():
    rng = np.random.default_rng(7)
    f = random_pooled(rng, 4, max_p=40, max_h=60, labels=True)
    c = copied(f)
    y = rng.normal(0.0, 2.0, (6, 4))
    for dims in ((0, 1), (0, 1, 2, 3), (1, 3)):
        a, b = marginal(f, dims), marginal(c, dims)
        assert bits_equal(nb.nll_many(a, y[:, dims], (1, 10, 100)), nb.nll_many(b, y[:, dims], (1, 10, 100)))


def test_transforms_of_a_pooled_pmbm_stay_pooled_and_equal_the_copied_ones():
    for f, c, y in _cases(202, d=4):
        for transform in (
            lambda g: temper_existence(g, 2.5, 0.4),
            lambda g: temper_existence(g, 0.3, 0.6),
        ):
            a, b = transform(f), transform(c)
            assert a.is_pooled and a.pool.densities is f.pool.densities  # only r changed
            same_hypotheses(a, b)
        if isinstance(f.pool.densities, nb.Laplaces):
            with pytest.raises(TypeError, match="Laplace"):
                marginal(f)
            continue
        for transform in (
            lambda g: marginal(g, (0, 1)),
            lambda g: marginal(g, (3, 1)),
            lambda g: scale_covariances(g, 4.0),
            lambda g: scale_covariances(marginal(g), 0.37),
        ):
            a, b = transform(f), transform(c)
            assert a.is_pooled and len(a.pool) == len(f.pool)  # the pool, transformed once
            same_hypotheses(a, b)
            yy = y[:, :2] if a.dim == 2 else y
            assert bits_equal(nb.nll_many(a, yy, (1, 5)), nb.nll_many(b, yy, (1, 5)))


def test_estimates_and_calibration_of_a_pooled_pmbm_equal_the_copied_ones():
    for f, c, y in _cases(303):
        assert f.family == c.family and f.dim == c.dim
        for rule in ("best_hypothesis", "map_cardinality"):
            assert bits_equal(estimate(f, 0.4, rule), estimate(c, 0.4, rule))
        assert bits_equal(expected_cardinality(f), expected_cardinality(c))
        card = cardinality_score(f, y.shape[0])
        assert bits_equal(card, cardinality_score(c, y.shape[0]))
        res = nb.nll(f, y, q=5)
        assert bits_equal(step_counts(f, y, res, card), step_counts(c, y, res, card))
        assert bits_equal(step_counts(f, y, res), step_counts(c, y, res))


def test_mbm01_family_of_a_pooled_pmbm_reads_the_members_only():
    pool = nb.MultiBernoulli.gaussian([1.0, 0.5, 0.0], [[0.0], [1.0], [2.0]], np.ones((3, 1, 1)))
    zero_one = nb.PMBM.pooled(None, pool, [np.array([0]), np.array([2, 0])], [0.5, 0.5])
    assert zero_one.family == copied(zero_one).family == "MBM01"  # the unreferenced r = 0.5 does not count
    mixed = nb.PMBM.pooled(None, pool, [np.array([0]), np.array([1])], [0.5, 0.5])
    assert mixed.family == copied(mixed).family == "MBM"


def test_a_pooled_posterior_is_written_as_its_copied_form(tmp_path):
    rng = np.random.default_rng(404)
    steps = [random_pooled(rng, 2, ppp=True, labels=True) for _ in range(6)]
    nb.write_posterior(steps, tmp_path / "pooled.nc")
    nb.write_posterior([copied(f) for f in steps], tmp_path / "copied.nc")
    a, b = nb.read_posterior(tmp_path / "pooled.nc"), nb.read_posterior(tmp_path / "copied.nc")
    assert a.attrs["subfamily"] == b.attrs["subfamily"]
    for f, g, orig in zip(a, b, steps, strict=True):
        assert f.is_pooled and g.is_pooled
        assert bits_equal(f.pool.r, g.pool.r) and bits_equal(f.pool.labels, g.pool.labels)
        assert bits_equal(f.pool.densities.covs, g.pool.densities.covs)
        assert all(bits_equal(x, z) for x, z in zip(f.members, g.members, strict=True))
        same_hypotheses(f, orig)


def _array_bytes(obj, seen=None) -> int:
    """Bytes of the distinct array buffers reachable from ``obj`` through attributes and containers."""
    seen = set() if seen is None else seen
    if id(obj) in seen:
        return 0
    seen.add(id(obj))
    if isinstance(obj, np.ndarray):
        base = obj
        while isinstance(base.base, np.ndarray):
            base = base.base
        if ("buffer", id(base)) in seen:
            return 0
        seen.add(("buffer", id(base)))
        return base.nbytes
    if isinstance(obj, tuple | list):
        return sum(_array_bytes(x, seen) for x in obj)
    if isinstance(obj, dict):
        return sum(_array_bytes(x, seen) for x in obj.values())
    if hasattr(obj, "__dict__"):
        return sum(_array_bytes(x, seen) for x in vars(obj).values())
    return 0


def test_a_read_posterior_holds_each_distinct_bernoulli_once(tmp_path):
    # hypotheses drawn from 30 Bernoullis, each holding 25 of them: copies would hold 25 per hypothesis
    rng = np.random.default_rng(5)
    d, P, H = 4, 30, 200
    pool = nb.MultiBernoulli.gaussian(
        rng.uniform(0.1, 1.0, P), rng.normal(size=(P, d)), random_covs(rng, P, d), np.arange(P)
    )
    members = [np.sort(rng.choice(P, 25, replace=False)) for _ in range(H)]
    f = nb.PMBM.pooled(nb.PPP.uniform(1.0, np.zeros(d), np.ones(d)), pool, members, rng.dirichlet(np.ones(H)))
    nb.write_posterior([f, f], tmp_path / "post.nc")
    post = nb.read_posterior(tmp_path / "post.nc")
    # per Bernoulli: r, label, mean, covariance, factor, log-diagonal, normaliser
    per_bernoulli = 8 * (2 + d + 2 * d * d + d + 1)
    for g in post:
        assert g.is_pooled and len(g.pool) == P
        held = _array_bytes(g)
        members_bytes = 8 * (H * 25 + H + 1)  # the index and its offsets
        assert held <= per_bernoulli * P + members_bytes + 8 * H + 4096
        assert held * 10 < _array_bytes(g.hypotheses)  # what copies would hold
        # the materialised hypotheses are the pool's rows
        assert np.array_equal(g.hypothesis(7).means, pool.means[members[7]])


def test_evaluate_run_on_pooled_posteriors_equals_the_copied_ones():
    rng = np.random.default_rng(505)
    K = 5
    post = [random_pooled(rng, 4, ppp=True, labels=True, max_p=6) for _ in range(K)]
    truth = [rng.normal(0.0, 2.0, (int(rng.integers(0, 4)), 4)) for _ in range(K)]
    ids = [np.arange(len(x)) for x in truth]
    for settings in (
        EvaluationSettings(qs=(1, 5), exact=True),
        EvaluationSettings(qs=(2,), marginal="full", cov_scale=2.0, temper=1.5),
        EvaluationSettings(qs=(3,), estimator="map_cardinality"),
    ):
        a = evaluate_run(post, truth, ids, [-10, -10], [10, 10], settings)
        b = evaluate_run([copied(f) for f in post], truth, ids, [-10, -10], [10, 10], settings)
        sa, sb = a.summary(), b.summary()
        assert sa.keys() == sb.keys()
        # the intensity score weighs a shared Bernoulli once by the summed weight of the hypotheses
        # holding it (pooled) or once per hypothesis (copied): equal up to rounding, not bit for bit
        rounding = {"intensity_score_mean"}
        assert all(
            bits_equal(sa[k], sb[k]) or (math.isnan(sa[k]) and math.isnan(sb[k]))
            for k in sa
            if k not in rounding
        )
        for k in rounding & sa.keys():
            assert sa[k] == pytest.approx(sb[k], rel=1e-12, abs=0)
        assert bits_equal(a.proper.energy, b.proper.energy) and bits_equal(a.proper.rps, b.proper.rps)
        for name in a.nll:
            assert bits_equal(a.nll[name], b.nll[name])
        assert bits_equal(a.calibration, b.calibration) and bits_equal(a.cardinality, b.cardinality)
        assert bits_equal(a.gospa, b.gospa) and bits_equal(a.theorem1_difference, b.theorem1_difference)
