"""Calibration panels: cardinality distributions by enumeration, existence and NEES counts, pooling."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.stats import chi2, poisson
from support.calibrated_runs import calibrated_run

import nllbench as nb
from nllbench.engine.densities import PMBM, PPP, IIDCluster, MultiBernoulli
from nllbench.measures.calibration import (
    RELIABILITY_BINS,
    CalibrationCounts,
    cardinality_score,
    nees,
    step_counts,
)


def brute_cardinality(pmbm: PMBM, kmax: int) -> np.ndarray:
    """P(N = k) by enumerating every subset of existing Bernoullis of every hypothesis, plus a Poisson."""
    lam = 0.0 if pmbm.ppp is None else pmbm.ppp.total_rate
    out = np.zeros(kmax + 1)
    for w, mb in zip(pmbm.weights, pmbm.hypotheses, strict=True):
        for alive in itertools.product([0, 1], repeat=len(mb)):
            p = w * math.prod(r if a else 1 - r for r, a in zip(mb.r, alive, strict=True))
            s = sum(alive)
            for extra in range(kmax + 1 - s):
                out[s + extra] += p * (poisson.pmf(extra, lam) if lam > 0 else float(extra == 0))
    return out


def random_pmbm(rng, with_ppp=True, H=3):
    hyps = []
    for _ in range(H):
        m = int(rng.integers(0, 5))
        r = rng.choice([0.0, 1.0, 0.3, 0.8, 0.55], m) if rng.random() < 0.5 else rng.random(m)
        hyps.append(MultiBernoulli.gaussian(r, rng.normal(0, 3, (m, 2)), np.tile(np.eye(2), (m, 1, 1))))
    ppp = PPP.uniform(float(rng.uniform(0.1, 3)), [0, 0], [10, 10]) if with_ppp else None
    return PMBM(ppp, tuple(hyps), rng.dirichlet(np.ones(H)))


@pytest.mark.parametrize("seed", range(10))
def test_cardinality_pmf_equals_enumeration(seed):
    rng = np.random.default_rng(seed)
    pmbm = random_pmbm(rng, with_ppp=seed % 3 != 0)
    ref = brute_cardinality(pmbm, 25)
    cdf = np.cumsum(ref)
    for n in range(8):
        s = cardinality_score(pmbm, n)
        expected = -math.log(ref[n]) if ref[n] > 0 else math.inf
        assert s.log_score == pytest.approx(expected, rel=1e-10)
        assert s.low == int(np.argmax(cdf >= 0.05 - 1e-12))
        assert s.high == int(np.argmax(cdf >= 0.95 - 1e-12))
        assert s.covered == (s.low <= n <= s.high)
        assert s.mean == pytest.approx(float(np.arange(26) @ ref), rel=1e-9)


def test_cardinality_closed_forms():
    ppp = PPP.uniform(4.0, [0, 0], [1, 1])
    s = cardinality_score(ppp, 7)
    assert s.log_score == pytest.approx(-poisson.logpmf(7, 4.0), rel=1e-12)
    assert (s.low, s.high) == (int(poisson.ppf(0.05, 4.0)), int(poisson.ppf(0.95, 4.0)))
    # a huge count: the Poisson log score stays finite and exact (no underflow to +inf)
    assert cardinality_score(ppp, 400).log_score == pytest.approx(-poisson.logpmf(400, 4.0), rel=1e-10)
    iid = IIDCluster([0.2, 0.5, 0.3], [1.0], [[0.0, 0.0]], [np.eye(2)])
    assert cardinality_score(iid, 1).log_score == pytest.approx(-math.log(0.5))
    s = cardinality_score(iid, 3)
    assert s.log_score == math.inf and not s.covered
    sure = MultiBernoulli.gaussian([1.0, 1.0], [[0, 0], [5, 5]], [np.eye(2)] * 2)
    assert cardinality_score(sure, 2).log_score == 0.0
    assert cardinality_score(sure, 1).log_score == math.inf
    assert cardinality_score(PPP.empty(2), 0).log_score == 0.0


def test_existence_and_nees_counts_of_one_step():
    # three Bernoullis far apart; truth at the first two: they explain objects, the third does not
    r = np.array([0.95, 0.35, 0.15])
    means = np.array([[0.0, 0.0], [20.0, 0.0], [40.0, 0.0]])
    covs = np.array([np.eye(2), 4 * np.eye(2), np.eye(2)])
    mb = MultiBernoulli.gaussian(r, means, covs)
    truth = np.array([[1.0, 1.0], [20.0, 3.0]])
    res = nb.nll(mb, truth)
    c = step_counts(mb, truth, res)
    assert c.bin_count.tolist() == [0, 1, 0, 1, 0, 0, 0, 0, 0, 1]
    assert c.bin_explained.tolist() == [0, 0, 0, 1, 0, 0, 0, 0, 0, 1]
    assert c.brier_sum == pytest.approx(0.05**2 + 0.65**2 + 0.15**2)
    assert c.ece == pytest.approx((0.05 + 0.65 + 0.15) / 3)
    assert c.nees_pairs == 2 and c.nees_dof == 4
    assert c.nees_sum == pytest.approx(2.0 + 9.0 / 4)
    assert c.nees_inside == 2  # chi2_0.95(2) = 5.99
    assert (c.card_steps, c.unassociated) == (1, 0)


def test_impossible_truth_is_counted_not_scored():
    sure = MultiBernoulli.gaussian([1.0], [[0.0, 0.0]], [np.eye(2)])
    truth = np.empty((0, 2))
    c = step_counts(sure, truth, nb.nll(sure, truth))
    assert c.unassociated == 1 and c.bernoullis == 0 and c.card_log_score_sum == math.inf


def test_phd_and_cphd_score_cardinality_only():
    ppp = PPP.gaussian([0.9, 1.2], [[0, 0], [3, 3]], [np.eye(2)] * 2)
    truth = np.array([[0.0, 0.0]])
    c = step_counts(ppp, truth, nb.nll(ppp, truth))
    assert (c.card_steps, c.bernoullis, c.nees_pairs) == (1, 0, 0)
    assert c.brier is None and c.anees is None and c.cardinality_coverage == 1.0


def test_pooling_is_exact():
    rng = np.random.default_rng(4)
    parts = []
    for _ in range(6):
        pmbm = random_pmbm(rng)
        truth = rng.normal(0, 3, (int(rng.integers(0, 4)), 2))
        parts.append(step_counts(pmbm, truth, nb.nll(pmbm, truth)))
    total = sum(parts[1:], parts[0])
    assert total.bernoullis == sum(p.bernoullis for p in parts)
    assert total.brier == pytest.approx(sum(p.brier_sum for p in parts) / total.bernoullis)
    assert total.card_steps == 6
    assert total.pit_count.sum() == total.nees_pairs
    mean_r, freq, count = total.reliability()
    assert count.sum() == total.bernoullis and np.all((freq >= 0) & (freq <= 1))
    assert total.bin_count.shape == (RELIABILITY_BINS,)
    assert CalibrationCounts.empty().brier is None


def test_nees_interval_is_the_chi_square_one():
    c = CalibrationCounts.empty()
    c = CalibrationCounts(
        c.bin_count, c.bin_r_sum, c.bin_explained, nees_pairs=50, nees_sum=97.0, nees_dof=100
    )
    lo, hi = c.anees_interval()
    assert (lo, hi) == pytest.approx((chi2.ppf(0.025, 100) / 50, chi2.ppf(0.975, 100) / 50))
    assert c.anees == pytest.approx(97.0 / 50)


def test_nees_function_matches_mahalanobis():
    from scipy.spatial.distance import mahalanobis

    rng = np.random.default_rng(8)
    A = rng.normal(size=(20, 3, 3))
    covs = A @ np.swapaxes(A, 1, 2) + 0.1 * np.eye(3)
    means, y = rng.normal(size=(20, 3)), rng.normal(size=(20, 3))
    ref = [mahalanobis(y[i], means[i], np.linalg.inv(covs[i])) ** 2 for i in range(20)]
    np.testing.assert_allclose(nees(means, covs, y), ref, rtol=1e-10)


def test_metrics_file_keeps_every_measure_and_pools_exactly(tmp_path):
    from nllbench.measures.evaluate import EvaluationSettings, evaluate_run
    from nllbench.pipeline.aggregate import collect
    from nllbench.store import read_calibration_counts, read_metrics, write_metrics

    posts, truth, ids = calibrated_run(K=12)
    runs = []
    for seed in (1, 2):
        m = evaluate_run(posts, truth, ids, [-100.0, -100.0], [600.0, 100.0], EvaluationSettings(qs=(1, 3)))
        write_metrics(m, tmp_path / "dir" / f"seed{seed}.nc", {"seed": seed, "scenario": "calibrated"})
        runs.append(m)
    ds = read_metrics(tmp_path / "dir" / "seed1.nc")
    m = runs[0]
    counts = read_calibration_counts(ds)
    pooled = m.calibration_total()
    for name in ("bin_count", "bin_explained", "pit_count"):
        np.testing.assert_array_equal(getattr(counts, name), getattr(pooled, name))
    assert counts.brier == pytest.approx(pooled.brier, rel=1e-12)
    assert counts.anees == pytest.approx(pooled.anees, rel=1e-12)
    assert counts.cardinality_log_score == pytest.approx(pooled.cardinality_log_score, rel=1e-12)
    assert float(ds["brier"]) == pytest.approx(pooled.brier) and float(ds["ece"]) == pytest.approx(pooled.ece)
    terms = sum(float(ds[f"tgospa_{t}"].sum()) for t in ("localization", "missed", "false", "switches"))
    assert terms == pytest.approx(float(ds["tgospa"]) ** m.settings.p, rel=1e-12)
    assert float(ds["hota"]) == pytest.approx(float(ds["hota_alpha"].mean()), rel=1e-12)
    assert ds["alpha"].size == 19 and ds["reliability_count"].sum() == pooled.bernoullis
    # two seeds pooled from the files equal the runs' counts added
    both = read_calibration_counts(read_metrics(tmp_path / "dir" / "seed2.nc")) + counts
    assert both.nees_pairs == sum(r.calibration_total().nees_pairs for r in runs)
    steps, _ = collect([tmp_path / "dir"])
    assert {"tgospa_switches", "nees_sum", "cardinality_log_score"} <= set(steps.data_vars)
