"""The cardinality score's compiled convolution and the pooled calibration counts equal the plain routes.

The plain route of the convolution is the shifted log-Poisson table added to the mixed Poisson-binomial
and :func:`nllbench.measures.calibration._logsumexp_rows` over it (itself scipy's logsumexp bit for bit,
``test_fast_routes_equal_old_routes.py``); the fast route must give the same bits on edge inputs too.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from nllbench.engine.densities import PMBM, PPP, MultiBernoulli
from nllbench.measures import calibration as cal


def same_bits(a, b) -> bool:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return a.shape == b.shape and a.tobytes() == b.tobytes()


def plain_convolution(log_pb_mix, lam, M, K):
    return cal._logsumexp_rows(log_pb_mix[:, None] + cal._shifted_log_poisson_of(lam, M, K))


def edge_existence(rng, H, M, t):
    r = rng.uniform(0, 1, (H, M)) ** rng.uniform(0.05, 20)
    if M > 1 and t % 3 == 0:
        r[0, 0], r[-1, 1] = 0.0, 1.0  # r = 0 and r = 1
    if M > 2 and t % 4 == 0:
        r[:, 2] = 1e-300
    if M > 3 and t % 5 == 0:
        r[:, 3] = 1.0 - 1e-16
    if t % 6 == 0:
        r[:] = 0.0  # no Bernoulli can exist
    return r


RATES = (0.0, 1e-300, 1e-3, 0.7, 2.0, 37.5, 400.0)


@pytest.mark.parametrize("lam", RATES)
def test_convolution_is_the_table_route_bit_for_bit(lam):
    rng = np.random.default_rng(int(lam * 1000) % 2**32)
    compiled = 0
    for t in range(60):
        H, M = int(rng.integers(1, 4)), int(rng.integers(0, 45))
        r = edge_existence(rng, H, M, t)
        log_w = np.log(rng.dirichlet(np.ones(H)))
        log_pb = cal._log_poisson_binomial(r)
        log_pb_mix = cal._logsumexp_rows(log_pb + log_w[:, None]) if H > 1 else log_pb[0] + 0.0
        n = int(rng.integers(0, 3 * M + 5)) if t % 10 else 5000  # a large n: a long table
        K = max(n, M + int(lam + 12 * math.sqrt(lam) + 40))
        with np.errstate(all="ignore"):
            expected = plain_convolution(log_pb_mix, lam, M, K)
        got = cal._log_convolution(log_pb_mix, lam, M, K)
        assert same_bits(got, expected), (lam, t)
        assert not np.isnan(got).any()
        if (M + 1) * (K + 1) <= 1 << 16:
            compiled += cal._convolution_terms(log_pb_mix, cal._kept_log_poisson_row(lam, K))[3]
    # the compiled route was taken where every column has a finite largest term (a PPP of positive rate)
    assert compiled >= 20 if lam > 0 else compiled == 0


def test_convolution_takes_nan_and_infinite_terms_to_the_table_route():
    log_pois_M, K = 3, 50
    cases = [
        np.array([np.nan, -1.0, -2.0, -3.0]),
        np.array([-np.inf, -0.1, -2.0, -3.0]),  # r = 1: P(0 Bernoullis) = 0
        np.full(4, -np.inf),
        np.array([0.0, -np.inf, -np.inf, -np.inf]),
        np.array([-0.0, -0.0, -0.0, -0.0]),  # ties at the maximum
    ]
    for log_pb_mix in cases:
        for lam in (0.0, 2.0):
            with np.errstate(all="ignore"):
                expected = plain_convolution(log_pb_mix, lam, log_pois_M, K)
                got = cal._log_convolution(log_pb_mix, lam, log_pois_M, K)
            assert same_bits(got, expected), (log_pb_mix, lam)


def test_one_hypothesis_and_its_mixture_of_one_give_the_same_pmf():
    rng = np.random.default_rng(5)
    for t in range(40):
        m = int(rng.integers(0, 30))
        r = edge_existence(rng, 1, m, t)[0]
        mb = MultiBernoulli.gaussian(r, rng.normal(size=(m, 2)), np.tile(np.eye(2), (m, 1, 1)))
        ppp = [None, PPP.uniform(2.0, [0.0, 0.0], [1.0, 1.0]), PPP.uniform(0.0, [0.0, 0.0], [1.0, 1.0])][
            t % 3
        ]
        n = int(rng.integers(0, m + 5))
        log_pmf, mean = cal._log_cardinality_pmbm(PMBM(ppp, (mb,), np.ones(1)), n)
        # the plain mixture over hypotheses: the row logsumexp of the one row plus log 1
        lam = 0.0 if ppp is None else ppp.total_rate
        K = max(n, m + int(lam + 12 * math.sqrt(lam) + 40))
        log_pb = cal._log_poisson_binomial(r[None, :])
        mix = cal._logsumexp_rows(log_pb + np.zeros(1)[:, None])
        with np.errstate(all="ignore"):
            expected = plain_convolution(mix, lam, m, K)
        assert same_bits(log_pmf, expected), t
        assert mean == lam + float(np.ones(1) @ r[None, :].sum(axis=1))
        assert not np.isnan(log_pmf).any()
        # the pmf is a distribution: it sums to 1 (what the tail bound leaves out is < 1e-15)
        assert abs(np.exp(log_pmf).sum() - 1.0) < 1e-12


def test_kept_log_poisson_row_is_row_zero_of_the_table_and_read_only():
    for lam, K in ((0.0, 40), (2.0, 86), (1e-300, 50), (37.5, 160)):
        row = cal._kept_log_poisson_row(lam, K)
        assert same_bits(row, cal._shifted_log_poisson_of(lam, 0, K)[0])
        assert not row.flags.writeable
        assert cal._kept_log_poisson_row(lam, K) is row


def test_pooled_counts_add_every_field_as_the_fields_add():
    rng = np.random.default_rng(6)
    parts = []
    for _ in range(5):
        b = rng.integers(0, 5, cal.RELIABILITY_BINS)
        parts.append(
            cal.CalibrationCounts(
                b,
                rng.uniform(size=cal.RELIABILITY_BINS),
                np.minimum(b, 2),
                float(rng.uniform()),
                int(rng.integers(0, 9)),
                float(rng.uniform(0, 9)),
                int(rng.integers(0, 9)),
                int(rng.integers(0, 9)),
                rng.integers(0, 3, cal.PIT_BINS),
                1,
                int(rng.integers(0, 2)),
                [float(rng.uniform()), math.inf][_ % 4 == 3],
                int(rng.integers(0, 2)),
            )
        )
    pooled = sum(parts, cal.CalibrationCounts.empty())
    assert type(pooled) is cal.CalibrationCounts
    for name in cal._COUNT_FIELDS:
        expected = getattr(cal.CalibrationCounts.empty(), name)
        for p in parts:
            expected = expected + getattr(p, name)
        got = getattr(pooled, name)
        assert type(got) is type(expected) and np.asarray(got).dtype == np.asarray(expected).dtype
        assert np.asarray(got).tobytes() == np.asarray(expected).tobytes(), name
    assert pooled.card_log_score_sum == math.inf
    with pytest.raises(TypeError):
        pooled + 1
    with pytest.raises(AttributeError):  # still frozen
        pooled.card_steps = 0


def test_total_rate_is_kept_and_is_the_sum_of_the_rates():
    ppp = PPP.uniform(2.5, [0.0, 0.0], [1.0, 1.0]) + PPP.gaussian([0.25], [[0.0, 0.0]], [np.eye(2)])
    assert ppp.total_rate == 2.75 and ppp.total_rate is ppp.total_rate
    big = PPP.uniform(1e308, [0.0], [1.0]) + PPP.uniform(1e308, [0.0], [1.0])
    assert big.total_rate == math.inf  # an overflow gives +inf, silently
    assert PPP.empty(2).total_rate == 0.0
