"""nllbench.torch: the loss equals nb.nll / nb.trajectory_nll, its gradients equal finite differences,
infinite samples never give a NaN gradient, and the lean import stays lean."""

from __future__ import annotations

import doctest
import importlib
import math
import os

import numpy as np
import pandas as pd
import pytest
from support.torch_cases import BOX, random_batch, trajectory_case

import nllbench as nb

if os.environ.get("CI") or os.environ.get("NLLBENCH_REQUIRE_TORCH"):  # .ci/run installs the extra: never skip
    torch = importlib.import_module("torch")
else:  # a checkout without the extra skips them
    torch = pytest.importorskip("torch")
nbt = importlib.import_module("nllbench.torch")


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def reference(logits, means, cov, truth, q, ppp=None, hyp_logits=None):
    """nb.nll of each sample's density (built from the same numbers) with its terms."""
    out = []
    for b in range(len(truth)):
        if hyp_logits is None:
            hyps, w = [nb.MultiBernoulli.gaussian(sigmoid(logits[b]), means[b], cov[b])], [1.0]
        else:
            hyps = [
                nb.MultiBernoulli.gaussian(sigmoid(lg), m, c)
                for lg, m, c in zip(logits[b], means[b], cov[b], strict=True)
            ]
            e = np.exp(hyp_logits[b] - hyp_logits[b].max())
            w = e / e.sum()
        out.append(nb.nll(nb.PMBM(ppp(b) if ppp else None, hyps, w), truth[b], q=q))
    return out


def call(logits, means, cov_param, truth, cholesky=False, **kw):
    t = torch.as_tensor
    cov_kw = {"scale_tril": t(cov_param)} if cholesky else {"variances": t(cov_param)}
    return nbt.set_nll(t(logits), t(means), truth=[t(y) for y in truth], reduction="none", **cov_kw, **kw)


def assert_matches(out, ref):
    got = out.per_sample.detach().numpy()
    want = np.array([r.value for r in ref])
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-10)
    for name in ("localization", "false", "missed", "mixture", "association"):
        np.testing.assert_allclose(
            getattr(out, name).numpy(), [getattr(r, name) for r in ref], rtol=0, atol=1e-10, err_msg=name
        )
    np.testing.assert_array_equal(out.complete, [r.exact for r in ref])
    np.testing.assert_array_equal(out.n_terms, [r.n_terms for r in ref])


# ---------------------------------------------------------------------------
# the value equals nb.nll
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("cholesky", [False, True])
@pytest.mark.parametrize("q", [1, 3, 1000])
def test_value_and_terms_equal_nb_nll_with_a_uniform_poisson_part(cholesky, q):
    rng = np.random.default_rng(1 + q + cholesky)
    logits, means, cov_param, cov, truth = random_batch(rng, cholesky=cholesky)
    uniform = nbt.UniformPoisson(torch.tensor(0.8, dtype=torch.float64), *BOX)
    out = call(logits, means, cov_param, truth, cholesky, poisson=uniform, q=q)
    assert_matches(out, reference(logits, means, cov, truth, q, lambda b: nb.PPP.uniform(0.8, *BOX)))


def test_value_equals_nb_nll_with_a_predicted_gaussian_mixture_poisson_part_and_a_box():
    rng = np.random.default_rng(7)
    logits, means, cov_param, cov, truth = random_batch(rng)
    B = len(truth)
    log_w = rng.normal(-1.0, 0.5, (B, 3))
    mu = rng.uniform(0.0, 4.0, (B, 3, 2))
    var = rng.uniform(0.5, 3.0, (B, 3, 2))
    parts = [
        nbt.GaussianPoisson(torch.tensor(log_w), torch.tensor(mu), variances=torch.tensor(var)),
        nbt.UniformPoisson(torch.full((B,), 0.2, dtype=torch.float64), *BOX),
    ]
    out = call(logits, means, cov_param, truth, poisson=parts, q=4)

    def ppp(b):
        covs = [np.diag(v) for v in var[b]]
        return nb.PPP.gaussian(np.exp(log_w[b]), mu[b], covs) + nb.PPP.uniform(0.2, *BOX)

    assert_matches(out, reference(logits, means, cov, truth, 4, ppp))


def test_value_equals_nb_nll_for_a_mixture_of_hypotheses():
    rng = np.random.default_rng(11)
    logits, means, cov_param, cov, truth = random_batch(rng, H=3, cholesky=True)
    hyp = rng.normal(0.0, 1.0, (len(truth), 3))
    uniform = nbt.UniformPoisson(0.5, *BOX)
    out = call(
        logits, means, cov_param, truth, True, poisson=uniform, q=2, hypothesis_logits=torch.tensor(hyp)
    )
    ref = reference(logits, means, cov, truth, 2, lambda b: nb.PPP.uniform(0.5, *BOX), hyp)
    assert_matches(out, ref)
    assert out.mixture.min() > 0  # -log w_h of the best hypothesis


def test_padded_tensors_with_masks_give_the_values_of_the_list_form():
    rng = np.random.default_rng(3)
    logits, means, cov_param, cov, truth = random_batch(rng)
    B, M = len(truth), max(len(y) for y in truth)
    padded = np.full((B, M + 1, 2), np.nan)  # NaN padding must not reach the value nor the gradient
    mask = np.zeros((B, M + 1), dtype=bool)
    for b, y in enumerate(truth):
        rows = rng.permutation(M + 1)[: len(y)]  # real rows anywhere, not only first
        padded[b, rows], mask[b, rows] = y, True
    uniform = nbt.UniformPoisson(1.0, *BOX)
    want = call(logits, means, cov_param, truth, poisson=uniform, q=5).per_sample
    lg = torch.tensor(logits, requires_grad=True)
    got = nbt.set_nll(
        lg,
        torch.tensor(means),
        variances=torch.tensor(cov_param),
        truth=torch.tensor(padded),
        truth_mask=torch.tensor(mask),
        poisson=uniform,
        q=5,
        reduction="sum",
    )
    np.testing.assert_allclose(got.per_sample.detach().numpy(), want.detach().numpy(), rtol=0, atol=1e-12)
    got.loss.backward()
    assert torch.isfinite(lg.grad).all()


def test_masked_outputs_are_left_out_of_the_density():
    rng = np.random.default_rng(5)
    logits, means, cov_param, cov, truth = random_batch(rng, N=5)
    keep = rng.random((len(truth), 5)) < 0.6
    out = call(
        logits,
        means,
        cov_param,
        truth,
        poisson=nbt.UniformPoisson(1.0, *BOX),
        q=6,
        output_mask=torch.tensor(keep),
    )
    small = [(logits[b][keep[b]], means[b][keep[b]], cov[b][keep[b]]) for b in range(len(truth))]
    ref = [
        nb.nll(nb.PMB(nb.PPP.uniform(1.0, *BOX), nb.MultiBernoulli.gaussian(sigmoid(lg), m, c)), y, q=6)
        for (lg, m, c), y in zip(small, truth, strict=True)
    ]
    assert_matches(out, ref)


def test_doctests():
    from nllbench.torch import loss

    assert doctest.testmod(loss).failed == 0


def test_reductions_and_the_module():
    rng = np.random.default_rng(9)
    logits, means, cov_param, _, truth = random_batch(rng)
    t = torch.as_tensor
    none = call(logits, means, cov_param, truth, q=3, poisson=nbt.UniformPoisson(1.0, *BOX)).loss
    loss = nbt.SetNLLLoss(q=3, reduction="mean", poisson=nbt.UniformPoisson(1.0, *BOX))
    got = loss(t(logits), t(means), variances=t(cov_param), truth=[t(y) for y in truth])
    assert float(got.loss) == pytest.approx(float(none.mean()), abs=1e-12)
    summed = nbt.SetNLLLoss(q=3, reduction="sum")
    got = summed(
        t(logits),
        t(means),
        variances=t(cov_param),
        truth=[t(y) for y in truth],
        poisson=nbt.UniformPoisson(1.0, *BOX),
    )
    assert float(got.loss) == pytest.approx(float(none.sum()), abs=1e-12)
    sums = sum(got.terms().values())
    np.testing.assert_allclose(sums.numpy(), got.per_sample.detach().numpy(), atol=1e-10)


# ---------------------------------------------------------------------------
# gradients equal finite differences
# ---------------------------------------------------------------------------


def test_the_gradient_is_the_weighted_sum_of_the_associations_gradients():
    """With Q fixed, d(-log sum_A e^{-c_A}) = sum_A softmax(-c)_A dc_A: checked association by association."""
    rng = np.random.default_rng(41)
    logits, means, cov_param, _, truth = random_batch(rng, B=1, N=3, sizes=(2,))
    lg = torch.tensor(logits, requires_grad=True)
    t = torch.as_tensor
    out = nbt.set_nll(
        lg,
        t(means),
        variances=t(cov_param),
        truth=[t(truth[0])],
        poisson=nbt.UniformPoisson(1.0, *BOX),
        q=1000,
    )
    (g,) = torch.autograd.grad(out.loss, lg)
    ranked = nb.murty(_cost(logits[0], means[0], cov_param[0], truth[0]), 1000)
    w = np.exp(-(ranked.costs - ranked.costs.min()))
    w /= w.sum()
    want = np.zeros(3)
    r = sigmoid(logits[0])
    for weight, cols in zip(w, ranked.columns, strict=True):
        taken = np.zeros(3, dtype=bool)
        taken[cols[cols < 3]] = True
        # d cost_A / d logit_k: matched -(1 - r_k), unmatched r_k (from -log r_k and -log(1 - r_k))
        want += weight * np.where(taken, -(1 - r), r)
    np.testing.assert_allclose(g.numpy()[0], want, atol=1e-12)


def _cost(logits, means, var, y):
    r = sigmoid(logits)
    logp = np.array(
        [
            [-0.5 * np.sum((yy - m) ** 2 / v + np.log(2 * np.pi * v)) for yy in y]
            for m, v in zip(means, var, strict=True)
        ]
    )
    n, N = len(y), len(r)
    C = np.full((n, N + n), np.inf)
    C[:, :N] = -(np.log(r)[:, None] + logp - np.log1p(-r)[:, None]).T
    C[np.arange(n), N + np.arange(n)] = -(math.log(1.0) - math.log(36.0))
    return C


# ---------------------------------------------------------------------------
# infinite samples, edges, errors
# ---------------------------------------------------------------------------


def test_an_infinite_sample_raises_is_skipped_or_kept_without_a_nan_gradient():
    t = torch.as_tensor
    logits = torch.zeros(3, 1, dtype=torch.float64, requires_grad=True)
    means = torch.zeros(3, 1, 2, dtype=torch.float64, requires_grad=True)
    # sample 1: two truths, one output, no Poisson part -> likelihood 0
    truth = [t([[0.1, 0.0]]), t([[0.0, 0.0], [1.0, 1.0]]), t(np.zeros((0, 2)))]
    kw = {"variances": torch.ones(3, 1, 2), "truth": truth}
    with pytest.raises(ValueError, match=r"samples \[1\]"):
        nbt.set_nll(logits, means, **kw)
    skip = nbt.set_nll(logits, means, infinite="skip", **kw)
    assert skip.infinite.tolist() == [False, True, False]
    assert skip.per_sample[1] == math.inf and skip.missed[1] == math.inf and skip.localization[1] == 0
    finite = skip.per_sample[[0, 2]]
    assert skip.loss.item() == pytest.approx(finite.detach().mean().item())
    skip.loss.backward()
    assert torch.isfinite(logits.grad).all() and torch.isfinite(means.grad).all()
    assert logits.grad[1].item() == 0.0
    logits.grad = None
    keep = nbt.set_nll(logits, means, infinite="keep", reduction="sum", **kw)
    assert keep.loss.item() == math.inf
    keep.loss.backward()
    assert torch.isfinite(logits.grad).all() and logits.grad[0].item() != 0.0
    alone = nbt.set_nll(
        logits[1:2], means[1:2], variances=torch.ones(1, 1, 2), truth=truth[1:2], infinite="skip"
    )
    assert alone.loss.item() == 0.0 and alone.loss.requires_grad


def test_a_truth_outside_the_box_with_no_outputs_is_infinite_and_a_zero_rate_has_finite_gradients():
    rate = torch.tensor([0.0, 1.0], dtype=torch.float64, requires_grad=True)
    truth = [torch.tensor([[10.0, 10.0]]), torch.tensor([[1.0, 1.0]])]
    out = nbt.set_nll(
        torch.zeros(2, 0),
        torch.zeros(2, 0, 2),
        variances=torch.ones(2, 0, 2),
        truth=truth,
        poisson=nbt.UniformPoisson(rate, *BOX),
        infinite="skip",
        reduction="sum",
    )
    assert out.infinite.tolist() == [True, False]
    assert out.per_sample[1].item() == pytest.approx(1.0 + math.log(36.0))
    out.loss.backward()
    assert torch.isfinite(rate.grad).all()
    assert nb.nll(nb.PPP.uniform(1.0, *BOX), [[1.0, 1.0]]).value == pytest.approx(out.per_sample[1].item())


def test_large_logits_do_not_crash_and_float32_inputs_get_float32_gradients():
    logits = torch.tensor([[60.0, -60.0, 0.0]], requires_grad=True)  # float32; r rounds to 1 and 0
    means = torch.tensor([[[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]]], requires_grad=True)
    out = nbt.set_nll(logits, means, variances=torch.ones(1, 3, 2), truth=[torch.tensor([[0.0, 0.1]])])
    out.loss.backward()
    assert out.loss.dtype == torch.float64 and logits.grad.dtype == torch.float32
    assert torch.isfinite(logits.grad).all() and math.isfinite(out.loss.item())


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"logits": torch.zeros(2, 3, 1)}, "logits: expected shape"),
        ({"means": torch.zeros(2, 3)}, "means: expected shape"),
        ({"variances": -torch.ones(2, 3, 2)}, "variances: expected positive"),
        ({"variances": None}, "exactly one"),
        ({"scale_tril": torch.eye(2).expand(2, 3, 2, 2)}, "exactly one"),
        ({"truth": [torch.zeros(1, 3), torch.zeros(1, 2)]}, r"truth\[0\]: expected shape"),
        ({"truth": [torch.zeros(1, 2)]}, "a list of B = 2"),
        ({"q": 0}, "q: expected a positive integer"),
        ({"reduction": "avg"}, "reduction: expected one of"),
        ({"infinite": "clamp"}, "infinite: expected one of"),
        ({"logits": torch.tensor([[0.0, math.nan, 0.0]] * 2)}, "logits: expected no NaN"),
        ({"output_mask": torch.ones(2, 3)}, "output_mask: expected a bool tensor"),
        ({"poisson": nbt.UniformPoisson(1.0, [0.0], [1.0])}, r"poisson\[0\].low, high: expected shape"),
        ({"poisson": nbt.UniformPoisson(-1.0, *BOX)}, r"poisson\[0\].rate: expected values >= 0"),
        ({"poisson": "uniform"}, r"poisson\[0\]: expected UniformPoisson"),
    ],
)
def test_bad_input_is_refused_by_name(change, match):
    kw = {
        "logits": torch.zeros(2, 3),
        "means": torch.zeros(2, 3, 2),
        "variances": torch.ones(2, 3, 2),
        "truth": [torch.zeros(1, 2), torch.zeros(0, 2)],
        **change,
    }
    with pytest.raises((ValueError, TypeError), match=match):
        nbt.set_nll(kw.pop("logits"), kw.pop("means"), **kw)


# ---------------------------------------------------------------------------
# the trajectory form equals nb.trajectory_nll
# ---------------------------------------------------------------------------


def tables(logits, means, var, truth, present, b):
    N, K = logits.shape[1:]
    tracks = pd.DataFrame(
        [
            {
                "frame": t,
                "id": 100 + k,
                "r": sigmoid(logits[b, k, t]),
                "x": means[b, k, t, 0],
                "y": means[b, k, t, 1],
                "var_x": var[b, k, t, 0],
                "var_y": var[b, k, t, 1],
            }
            for t in range(K)
            for k in range(N)
        ]
    )
    rows = [
        {"frame": t, "id": 7 + j, "x": truth[b, j, t, 0], "y": truth[b, j, t, 1]}
        for t in range(K)
        for j in range(present.shape[1])
        if present[b, j, t]
    ]
    return tracks, pd.DataFrame(rows, columns=["frame", "id", "x", "y"])


@pytest.mark.parametrize("undetected", [None, (0.6, 0.5), (1.5, 1.0)])
def test_trajectory_form_equals_nb_trajectory_nll(undetected):
    rng = np.random.default_rng(51)
    logits, means, var, truth, present = trajectory_case(rng)
    spec = None if undetected is None else nbt.TrajectoryPoisson(*undetected, *BOX)
    out = nbt.trajectory_set_nll(
        torch.tensor(logits),
        torch.tensor(means),
        variances=torch.tensor(var),
        truth=torch.tensor(truth),
        truth_present=torch.tensor(present),
        undetected=spec,
        q=5,
        reduction="none",
        infinite="keep",
    )
    K = logits.shape[2]
    for b in range(logits.shape[0]):
        tracks, truth_table = tables(logits, means, var, truth, present, b)
        kw = {} if undetected is None else {"undetected": undetected, "fov": BOX}
        ref = nb.trajectory_nll(tracks, truth_table, q=5, frames=list(range(K)), **kw)
        got = float(out.per_sample[b].detach())
        assert got == ref.value if math.isinf(ref.value) else got == pytest.approx(ref.value, abs=1e-10)
        for name, value in ref.terms.items():
            assert float(getattr(out, name)[b].detach()) == pytest.approx(value, abs=1e-10), name
        assert bool(out.complete[b]) == ref.complete


def test_trajectory_presence_one_with_a_gap_leaves_the_truth_to_the_tracks():
    """rho = 1: an undetected trajectory is present at every frame; one with a gap has density 0 there."""
    present = torch.tensor([[[True, False, True]]])
    truth = torch.ones(1, 1, 3, 2)
    spec = nbt.TrajectoryPoisson(
        torch.tensor(1.0, requires_grad=True), torch.tensor(1.0, requires_grad=True), *BOX
    )
    out = nbt.trajectory_set_nll(
        torch.zeros(1, 0, 3),
        torch.zeros(1, 0, 3, 2),
        variances=torch.ones(1, 0, 3, 2),
        truth=truth,
        truth_present=present,
        undetected=spec,
        infinite="keep",
    )
    assert out.infinite.tolist() == [True] and out.undetected[0] == math.inf
    out.loss.backward()
    assert torch.isfinite(spec.rate.grad) and torch.isfinite(spec.presence.grad)


# ---------------------------------------------------------------------------
# packaging: lean import, the missing extra named, the example runs
# ---------------------------------------------------------------------------
