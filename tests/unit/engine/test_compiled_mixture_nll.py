"""The compiled mixture pass against the straightforward per-hypothesis path, and trusted construction."""

from __future__ import annotations

import math

import numpy as np
import pytest
from support.densities import random_covs, random_pmbm

import nllbench as nb
from nllbench.engine.assignment import count_assignments_log, murty
from nllbench.engine.densities import Gaussians, MultiBernoulli
from nllbench.engine.nll import association_problem
from nllbench.engine.transforms import marginal, scale_covariances, temper_existence


def straightforward(f, y, q):
    """Paper eq. (9) one hypothesis at a time with the public pieces: value and the count of terms."""
    log_lam = f.ppp.log_intensity(y) if f.ppp is not None else np.full(len(y), -np.inf)
    rate = f.ppp.total_rate if f.ppp is not None else 0.0
    terms = []
    for w, mb in zip(f.weights, f.hypotheses, strict=True):
        if w == 0:
            continue
        prob = association_problem(mb, y, log_lam, rate)
        ranked = murty(prob.cost, q, prob.mandatory)
        terms.append(math.log(w) - prob.base - ranked.costs)
    terms = np.concatenate(terms)
    if terms.size == 0:
        return math.inf, 0
    top = terms.max()
    return -(top + math.log(np.sum(np.exp(terms - top)))), terms.size


def _scene(rng, H, m, n):
    truth = rng.uniform(0, 50, (n, 2))
    base = np.concatenate([truth, rng.uniform(0, 50, (max(m - n, 0), 2))])[:m]
    hyps = []
    pool_r = rng.uniform(0.05, 1.0, m)
    pool_r[rng.random(m) < 0.2] = 1.0
    pool_covs = random_covs(rng, m, 2)
    for _ in range(H):
        keep = rng.random(m) < 0.8  # hypotheses share most Bernoullis, as in a track-oriented PMBM
        hyps.append(nb.MultiBernoulli.gaussian(pool_r[keep], base[keep], pool_covs[keep]))
    ppp = nb.PPP.uniform(2.0, [0, 0], [50, 50])
    return nb.PMBM(ppp, hyps, rng.dirichlet(np.ones(H))), truth + rng.normal(0, 0.5, truth.shape)


def test_compiled_pass_equals_the_straightforward_path():
    rng = np.random.default_rng(2024)
    for _ in range(25):
        f, y = _scene(rng, int(rng.integers(1, 12)), int(rng.integers(0, 12)), int(rng.integers(0, 7)))
        for q in (1, 3, 10, 50):
            res = nb.nll(f, y, q=q)
            want, count = straightforward(f, y, q)
            # the same associations; sums in another order: 1e-12 relative
            assert res.n_terms == count
            assert res.value == pytest.approx(want, rel=1e-12, abs=1e-12) or res.value == want == math.inf


def test_compiled_pass_on_random_families_equals_the_straightforward_path():
    rng = np.random.default_rng(31)
    for family in ("PMBM", "PMB", "MBM", "MBM01", "MB"):
        for _ in range(40):
            f = random_pmbm(rng, 2, family)
            y = rng.normal(0, 2, (int(rng.integers(0, 4)), 2))
            for q in (1, 4):
                res = nb.nll(f, y, q=q)
                want, count = straightforward(f, y, q)
                assert res.n_terms == count
                if want == math.inf:
                    assert res.value == math.inf
                else:
                    assert res.value == pytest.approx(want, rel=1e-12, abs=1e-12)
                    assert res.lower <= res.value


def test_shared_bernoullis_are_evaluated_once_without_changing_a_bit():
    rng = np.random.default_rng(8)
    f, y = _scene(rng, 6, 8, 4)
    # the same PMBM with every hypothesis' Gaussians copied (nothing to share)
    copies = nb.PMBM(
        f.ppp,
        [
            nb.MultiBernoulli.gaussian(mb.r.copy(), mb.means.copy() + 0.0, mb.densities.covs.copy())
            for mb in f.hypotheses
        ],
        f.weights,
    )
    for q in (1, 7):
        assert nb.nll(f, y, q=q) == nb.nll(copies, y, q=q)


def test_bounds_hold_against_the_exact_value():
    rng = np.random.default_rng(12)
    for _ in range(20):
        f, y = _scene(rng, 4, 6, 4)
        ex = nb.nll(f, y, method="exact").value
        for q in (1, 2, 5):
            res = nb.nll(f, y, q=q)
            assert res.lower - 1e-9 <= ex <= res.upper + 1e-9
        n, m = len(y), max(len(mb) for mb in f.hypotheses)
        assert nb.nll(f, y, q=int(math.exp(count_assignments_log(n, m))) + 1).exact


def _same_gaussians(a, b):
    for name in ("means", "covs", "_chol", "_log_diag", "_log_norm"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name


@pytest.mark.parametrize("dims", [(0, 1), (2, 3), (1, 3), (0, 1, 2), (3,)])
def test_trusted_marginal_equals_a_validated_construction_bit_for_bit(dims):
    rng = np.random.default_rng(len(dims))
    m = 6
    g = Gaussians(rng.normal(size=(m, 4)), random_covs(rng, m, 4))
    mb = MultiBernoulli(rng.uniform(size=m), g)
    f = nb.PMBM(
        nb.PPP.gaussian([1.0], [[0, 0, 0, 0]], [np.eye(4)]),
        [mb, mb, nb.MultiBernoulli.empty(4)],
        [0.5, 0.3, 0.2],
    )
    got = marginal(f, dims)
    idx = list(dims)
    want = Gaussians(g.means[:, idx], g.covs[:, idx][:, :, idx])
    _same_gaussians(got.hypotheses[0].densities, want)
    _same_gaussians(got.hypotheses[1].densities, want)
    assert len(got.hypotheses[2]) == 0
    y = rng.normal(size=(3, len(dims)))
    public = nb.PMBM(
        nb.PPP.gaussian([1.0], [np.zeros(len(dims))], [np.eye(len(dims))]),
        [MultiBernoulli(mb.r, want), MultiBernoulli(mb.r, want), nb.MultiBernoulli.empty(len(dims))],
        [0.5, 0.3, 0.2],
    )
    assert nb.nll(got, y, q=5) == nb.nll(public, y, q=5)


def test_trusted_scaled_and_tempered_copies_equal_validated_ones():
    rng = np.random.default_rng(4)
    g = Gaussians(rng.normal(size=(5, 2)), random_covs(rng, 5, 2))
    mb = MultiBernoulli(rng.uniform(size=5), g)
    _same_gaussians(scale_covariances(mb, 3.5).densities, Gaussians(g.means, 3.5 * g.covs))
    t = temper_existence(mb, 2.0)
    assert np.array_equal(MultiBernoulli(t.r, g).r, t.r)
    # the public constructors keep every check
    with pytest.raises(ValueError, match="covs: expected positive-definite"):
        Gaussians(g.means, -g.covs)
    with pytest.raises(ValueError, match="s: expected a positive covariance scale"):
        scale_covariances(mb, -1.0)


def test_exact_sums_of_many_hypotheses_equal_one_call_each_bit_for_bit():
    """The exact NLL sums the subset-DP tables of equal size in one logsumexp(axis=1) call."""
    from nllbench.engine.exact import log_sum_all, log_sum_all_many

    rng = np.random.default_rng(21)
    problems = []
    for _ in range(60):
        m, n = int(rng.integers(0, 6)), int(rng.integers(0, 6))
        r = rng.uniform(0.0, 1.0, m)
        r[rng.random(m) < 0.2] = 1.0
        mb = nb.MultiBernoulli.gaussian(r, rng.normal(0, 2, (m, 2)), random_covs(rng, m, 2))
        y = rng.normal(0, 2, (n, 2))
        ppp = nb.PPP.uniform(float(rng.uniform(0.1, 3.0)), [-5, -5], [5, 5])
        problems.append(association_problem(mb, y, ppp.log_intensity(y), ppp.total_rate))
    assert log_sum_all_many(problems) == [log_sum_all(p) for p in problems]
