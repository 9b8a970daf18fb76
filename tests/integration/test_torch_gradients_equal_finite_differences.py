"""nllbench.torch: gradients of the set NLL and the trajectory set NLL equal central finite differences."""

from __future__ import annotations

import importlib
import os

import numpy as np
import pytest
from support.torch_cases import BOX, random_batch, trajectory_case

if os.environ.get("CI") or os.environ.get("NLLBENCH_REQUIRE_TORCH"):  # .ci/run installs the extra: never skip
    torch = importlib.import_module("torch")
else:  # a checkout without the extra skips them
    torch = pytest.importorskip("torch")
nbt = importlib.import_module("nllbench.torch")


@pytest.mark.parametrize("cholesky", [False, True])
def test_gradients_equal_finite_differences(cholesky):
    rng = np.random.default_rng(21 + cholesky)
    logits, means, cov_param, _, truth = random_batch(rng, B=2, N=3, sizes=(2, 3), cholesky=cholesky)
    logits[..., 0] = rng.normal(0, 1, 2)
    truth_t = [torch.tensor(y) for y in truth]
    parts = (
        torch.tensor([[-0.5, -1.0], [0.0, -2.0]], dtype=torch.float64),
        torch.tensor(rng.uniform(0, 4, (2, 2, 2))),
    )

    def f(lg, mu, cp, rate, log_w, ppp_mu):
        poisson = [
            nbt.UniformPoisson(rate, *BOX),
            nbt.GaussianPoisson(log_w, ppp_mu, variances=torch.ones(2, 2, 2)),
        ]
        cov_kw = {"scale_tril": cp} if cholesky else {"variances": cp}
        return nbt.set_nll(lg, mu, truth=truth_t, poisson=poisson, q=4, reduction="sum", **cov_kw).loss

    args = [torch.tensor(a, requires_grad=True) for a in (logits, means, cov_param)]
    if cholesky:
        args[2] = torch.tensor(np.tril(cov_param), requires_grad=True)
    args += [torch.tensor([0.7, 1.2], dtype=torch.float64, requires_grad=True)] + [
        p.clone().requires_grad_() for p in parts
    ]
    assert torch.autograd.gradcheck(f, args, eps=1e-6, atol=1e-6, rtol=1e-5)


def test_gradient_of_the_hypothesis_weights_and_the_truth():
    rng = np.random.default_rng(31)
    logits, means, cov_param, _, truth = random_batch(rng, B=2, N=3, H=2, sizes=(2, 3))
    logits[..., 0] = rng.normal(0, 1, (2, 2))
    y = torch.tensor(np.stack([np.vstack([truth[0], [[1.0, 1.0]]]), truth[1]]), requires_grad=True)

    def f(lg, hyp, yy):
        return nbt.set_nll(
            lg,
            torch.tensor(means),
            variances=torch.tensor(cov_param),
            truth=yy,
            hypothesis_logits=hyp,
            poisson=nbt.UniformPoisson(0.5, *BOX),
            q=3,
        ).loss

    args = [
        torch.tensor(logits, requires_grad=True),
        torch.tensor(rng.normal(0, 1, (2, 2)), requires_grad=True),
        y,
    ]
    assert torch.autograd.gradcheck(f, args, eps=1e-6, atol=1e-6, rtol=1e-5)


def test_trajectory_gradients_equal_finite_differences_and_one_frame_is_the_per_frame_loss():
    rng = np.random.default_rng(61)
    logits, means, var, truth, present = trajectory_case(rng, B=2, N=2, M=3, K=3)
    present[0, 0] = True
    truth = np.where(present[..., None], np.nan_to_num(truth, nan=1.0), np.nan)
    y, pres = torch.tensor(truth), torch.tensor(present)

    def f(lg, mu, v, rate, rho):
        spec = nbt.TrajectoryPoisson(rate, rho, *BOX)
        return nbt.trajectory_set_nll(
            lg, mu, variances=v, truth=y, truth_present=pres, undetected=spec, q=4, reduction="sum"
        ).loss

    args = [torch.tensor(a, requires_grad=True) for a in (logits, means, var)]
    args += [
        torch.tensor(0.8, dtype=torch.float64, requires_grad=True),
        torch.tensor(0.6, dtype=torch.float64, requires_grad=True),
    ]
    assert torch.autograd.gradcheck(f, args, eps=1e-6, atol=1e-6, rtol=1e-5)
    # K = 1: the per-frame NLL with a uniform Poisson part of the same rate
    one = nbt.trajectory_set_nll(
        torch.tensor(logits[..., :1]),
        torch.tensor(means[:, :, :1]),
        variances=torch.tensor(var[:, :, :1]),
        truth=torch.tensor(np.nan_to_num(truth[:, :, :1])),
        truth_present=torch.tensor(present[..., :1]),
        undetected=nbt.TrajectoryPoisson(0.8, 0.3, *BOX),
        q=50,
        reduction="none",
    )
    frame = nbt.set_nll(
        torch.tensor(logits[..., 0]),
        torch.tensor(means[:, :, 0]),
        variances=torch.tensor(var[:, :, 0]),
        truth=torch.tensor(np.nan_to_num(truth[:, :, 0])),
        truth_mask=torch.tensor(present[..., 0]),
        poisson=nbt.UniformPoisson(0.8, *BOX),
        q=50,
        reduction="none",
    )
    np.testing.assert_allclose(one.per_sample.detach().numpy(), frame.per_sample.detach().numpy(), atol=1e-12)
