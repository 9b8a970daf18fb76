"""Propriety by Monte Carlo: expected scores (NLL, energy) smallest at the truth, the energy
estimator unbiased.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from support.proper_cases import ALTERNATIVES, Z_MIN, _exact_single_gaussian_es, _paired_z, _true_pmb

import nllbench as nb
from nllbench.measures.run.audit import (
    Perturbation,
    expected_nll_bernoulli,
    family_verdict,
    paired_rows,
    perturb,
    perturbations,
)
from nllbench.measures.run.audit_scores import (
    AuditSettings,
    mean_draws,
)


def _nll_rows(density, settings, n):
    truths = nb.sample(density, n, seed=11).as_list()
    perts = perturbations(settings)
    scores = [
        {"nll": mean_draws([nb.nll(perturb(density, p, settings), y, q=100).value for y in truths])}
        for p in perts
    ]
    return paired_rows("frame", "tiny", perts, scores)


def test_nll_expected_score_is_smallest_at_the_truth_density():
    mb = nb.MultiBernoulli.gaussian([0.8, 0.4], [[0.0, 0.0], [5.0, 0.0]], [np.eye(2), 0.5 * np.eye(2)])
    s = AuditSettings(
        n_draws=8, blocks=2, cov_scales=(0.25, 1.0, 4.0), tempers=(0.25, 1.0, 4.0), shifts=(0.0, 1.0)
    )
    rows = _nll_rows(mb, s, 400)
    for fam in ("covariance", "existence", "shift", "cardinality"):
        fr = [r for r in rows if r.family == fam]
        v = family_verdict(fr, 2.0)
        assert v.verdict == "strictly proper", (fam, fr)
        assert v.argmin == {"covariance": 1.0, "existence": 1.0}.get(fam, 0.0)


def test_expected_nll_of_a_bernoulli_matches_its_closed_form_and_is_smallest_at_r():
    r, n = 0.7, 1000
    mb = nb.MultiBernoulli.gaussian([r], [[0.0, 0.0]], [np.eye(2)])
    truths = nb.sample(mb, n, seed=5).as_list()
    s = AuditSettings(n_draws=8, blocks=2)
    grid = (0.25, 0.5, 1.0, 2.0, 4.0)
    exact, mc = [], []
    for tau in grid:
        dens = perturb(mb, Perturbation("existence", tau, "honest" if tau == 1 else "other"), s)
        vals = np.array([nb.nll(dens, y).value for y in truths])
        mc.append((vals.mean(), vals.std(ddof=1) / math.sqrt(n)))
        # log det(I) = 0: the closed form is the expectation itself
        exact.append(expected_nll_bernoulli(r, float(dens.r[0]), 1.0, 2))
    for (m, se), e in zip(mc, exact, strict=True):
        assert abs(m - e) < 4 * se
    assert int(np.argmin(exact)) == grid.index(1.0)
    # the closed form in r_est: a cross-entropy, smallest at r_est = r
    rs = np.linspace(0.01, 0.99, 99)
    assert rs[np.argmin([expected_nll_bernoulli(r, q, 1.0, 2) for q in rs])] == pytest.approx(r)
    ss = np.linspace(0.2, 5.0, 97)
    assert ss[np.argmin([expected_nll_bernoulli(r, r, x, 2) for x in ss])] == pytest.approx(1.0)


def test_energy_estimator_is_unbiased_even_for_few_samples():
    # The mean of 1500 estimates with N = 5 is the exact ES; a V-statistic (N^2
    # in the denominator) would be off by spread / (2N), about 20 standard errors.
    mb = nb.MultiBernoulli.gaussian([1.0], [[0.0]], [[[1.0]]])
    exact = _exact_single_gaussian_es(0.0, 1.0, 0.5, 1.0)
    rng = np.random.default_rng(0)
    vals = np.array([nb.energy_score(mb, [[0.5]], 1.0, n_samples=5, seed=rng).value for _ in range(1500)])
    z = (vals.mean() - exact) / (vals.std(ddof=1) / math.sqrt(vals.size))
    assert abs(z) < 4


def test_energy_score_is_proper_by_monte_carlo():
    # 300 truths, 60 samples per score: z 7.8-13.0 here, 5.8-13.3 over five other seeds
    P = _true_pmb()
    truths = nb.sample(P, 300, seed=100)
    rng = np.random.default_rng(7)
    kw = {"kernel_cov": 1.0, "n_samples": 60}
    own = [nb.energy_score(P, y, seed=rng, **kw).value for y in truths.as_list()]
    for name, Q in ALTERNATIVES.items():
        alt = [nb.energy_score(Q, y, seed=rng, **kw).value for y in truths.as_list()]
        z = _paired_z(np.subtract(alt, own))
        assert z > Z_MIN, (name, z)
