"""The sampler's fast paths draw exactly what numpy's plain routes draw, number for number.

The energy score samples a density at every step; its samplers skip
``Generator.choice``'s checks, spell out einsum's product in 1-D and 2-D,
and place the united sets' points without a sort. Each is checked here
against the plain numpy call it replaces: the same values, bit for bit, and
the generator left in the same state.
"""

from __future__ import annotations

import numpy as np
import pytest

from nllbench.engine import sampling
from nllbench.engine.densities import PMBM, PPP, MultiBernoulli
from nllbench.engine.sampling import SetSamples, sample


def _bits(a: np.ndarray) -> bytes:
    return np.ascontiguousarray(a).tobytes()


@pytest.mark.parametrize("k", [1, 2, 3, 7])
@pytest.mark.parametrize("size", [1, 2, 17, 400])
def test_choice_draws_what_numpys_choice_draws_and_leaves_the_stream_where_it_does(k, size):
    p = np.random.default_rng(k).uniform(0.1, 3.0, k)
    p = p / p.sum()
    plain, fast = np.random.default_rng([4, k, size]), np.random.default_rng([4, k, size])
    expected = plain.choice(k, size=size, p=p)
    got = sampling._choice(p, size, fast)
    assert got.dtype == np.int64 and np.array_equal(got, expected)
    assert _bits(fast.random(5)) == _bits(plain.random(5))  # the same numbers consumed


def test_choice_of_one_component_consumes_the_uniforms_numpy_consumes():
    plain, fast = np.random.default_rng(9), np.random.default_rng(9)
    expected = plain.choice(1, size=33, p=np.array([1.0]))
    got = sampling._choice(np.array([1.0]), 33, fast)
    assert np.array_equal(got, expected) and not got.any()
    assert plain.bit_generator.state == fast.bit_generator.state


@pytest.mark.parametrize("d", [1, 2, 3])
@pytest.mark.parametrize("T", [0, 1, 5, 16, 999])
def test_affine_draws_equal_einsums_bit_for_bit(d, T):
    rng = np.random.default_rng([d, T])
    K = 6
    chol = np.tril(rng.normal(size=(K, d, d)) * rng.uniform(1e-3, 1e3, (K, 1, 1)))
    means = rng.normal(size=(K, d)) * 100
    means[0] = -0.0  # signed zeros: -0.0 + 0 * z must come out as einsum's
    chol[0] = 0.0
    which = rng.integers(0, K, T)
    z = rng.standard_normal((T, d))
    expected = means[which] + np.einsum("tij,tj->ti", chol[which], z)
    got = sampling._affine(means, chol, which, z)
    assert got.shape == (T, d) and _bits(got) == _bits(expected)


def _plain_unite(parts, n, dim):
    """The stable sort of the points by set, spelled out with fancy indexing."""
    if not parts:
        return np.zeros(n + 1, dtype=np.int64), np.empty((0, dim))
    owner = np.concatenate([np.repeat(np.arange(n), s.counts) for s in parts])
    points = np.concatenate([s.points for s in parts])
    order = np.argsort(owner, kind="stable")
    counts = np.bincount(owner, minlength=n)
    return np.concatenate([[0], np.cumsum(counts)]), points[order]


@pytest.mark.parametrize("rates", [(3.0, 0.5), (0.0, 2.0), (2.0, 0.0), (0.0, 0.0), (1.0, 1.0, 4.0)])
@pytest.mark.parametrize("n", [1, 2, 50])
def test_unite_sets_puts_each_set_s_points_part_by_part(rates, n):
    rng = np.random.default_rng(len(rates) * 100 + n)
    parts = []
    for lam in rates:
        counts = rng.poisson(lam, n)
        offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        parts.append(SetSamples._trusted(offsets, rng.normal(size=(int(counts.sum()), 2))))
    united = sampling._unite_sets(parts, n)
    offsets, points = _plain_unite(parts, n, 2)
    assert np.array_equal(united.offsets, offsets) and _bits(united.points) == _bits(points)
    also = sampling._unite([(np.arange(n), s) for s in parts], n, 2)
    assert np.array_equal(also.offsets, offsets) and _bits(also.points) == _bits(points)


def _plain_ppp(ppp: PPP, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """A PPP's draw as numpy's plain calls make it (choice with p, einsum, fancy indexing)."""
    rates = np.concatenate([ppp.weights, ppp.rates])
    total = float(rates.sum())
    counts = rng.poisson(total, size=n) if total > 0 else np.zeros(n, dtype=np.int64)
    m = int(counts.sum())
    comp = rng.choice(rates.shape[0], size=m, p=rates / total) if m else np.empty(0, int)
    points = np.empty((m, ppp.dim))
    J = len(ppp.mixture)
    gauss = comp < J
    if np.any(gauss):
        g = ppp.gaussians
        z = rng.standard_normal((int(gauss.sum()), ppp.dim))
        points[gauss] = g.means[comp[gauss]] + np.einsum("tij,tj->ti", g._chol[comp[gauss]], z)
    if np.any(~gauss):
        box = comp[~gauss] - J
        u = rng.random((box.shape[0], ppp.dim))
        lo, hi = ppp.lows[box], ppp.highs[box]
        points[~gauss] = np.minimum(np.maximum((1.0 - u) * lo + u * hi, lo), hi)
    return np.concatenate([[0], np.cumsum(counts)]), points


_GAUSS = PPP.gaussian([0.7, 1.5], [[0.0, 1.0], [5.0, -2.0]], [np.eye(2), [[2.0, 0.3], [0.3, 0.5]]])
_BOX = PPP.uniform(2.0, [-200.0, -200.0], [2200.0, 2200.0])
_TWO_BOXES = _BOX + PPP.uniform(0.5, [0.0, 0.0], [1.0, 3.0])


@pytest.mark.parametrize("ppp", [_GAUSS, _BOX, _TWO_BOXES, _GAUSS + _BOX, PPP.empty(2)])
@pytest.mark.parametrize("n", [0, 1, 100])
def test_ppp_samples_equal_the_plain_draw_bit_for_bit(ppp, n):
    offsets, points = _plain_ppp(ppp, n, np.random.default_rng([7, n]))
    got = sample(ppp, n, np.random.default_rng([7, n]))
    assert np.array_equal(got.offsets, offsets) and _bits(got.points) == _bits(points)


def test_pmb_samples_equal_the_plain_draw_bit_for_bit():
    """One hypothesis (the energy score's PMB): the MB draw, then the PPP, united set by set."""
    rng = np.random.default_rng(3)
    J = 30
    r = rng.uniform(0.0, 1.0, J)
    r[:2] = (1.0, 0.0)
    means = rng.uniform(0.0, 2000.0, (J, 2))
    covs = np.stack([np.diag(rng.uniform(10.0, 100.0, 2)) for _ in range(J)])
    mb = MultiBernoulli.gaussian(r, means, covs)
    n = 100
    plain = np.random.default_rng([11, 5])
    exists = plain.random((n, J)) < r[None, :]
    comp = np.flatnonzero(exists) % J
    z = plain.standard_normal((comp.shape[0], 2))
    mb_points = mb.densities.means[comp] + np.einsum("tij,tj->ti", mb.densities._chol[comp], z)
    mb_part = SetSamples._trusted(
        np.concatenate([[0], np.cumsum(exists.sum(axis=1))]).astype(np.int64), mb_points
    )
    ppp_offsets, ppp_points = _plain_ppp(_BOX, n, plain)
    ppp_part = SetSamples._trusted(ppp_offsets.astype(np.int64), ppp_points)
    offsets, points = _plain_unite([mb_part, ppp_part], n, 2)
    fast = np.random.default_rng([11, 5])
    got = sample(PMBM.pmb(_BOX, mb), n, fast)
    assert np.array_equal(got.offsets, offsets) and _bits(got.points) == _bits(points)
    assert fast.bit_generator.state == plain.bit_generator.state


def test_total_rate_is_computed_once_and_equals_the_sum():
    ppp = _GAUSS + _BOX
    assert ppp.total_rate == float(ppp.weights.sum() + ppp.rates.sum())
    assert "total_rate" in vars(ppp)  # cached on the instance
