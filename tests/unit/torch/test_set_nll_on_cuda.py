"""nllbench.torch on a CUDA device: the same values and gradients as on the CPU, kept on the device.

These run where ``torch.cuda.is_available()``; elsewhere they are skipped, unless
``NLLBENCH_REQUIRE_CUDA`` is set (``scripts/gpu_torch_check.sh`` sets it on a GPU machine), which
turns a missing device into a failure. The ranking runs on the CPU on a detached copy of the cost
tensor (``docs/torch.md``), so a CUDA run and a CPU run of the same float64 inputs rank the same
associations; the gathered costs and the log-sum-exp run on the device, whose reductions may add
in another order: values and gradients are compared to 1e-12 relative, not bit for bit.
"""

from __future__ import annotations

import importlib
import math
import os

import numpy as np
import pytest
from support.torch_cases import BOX, random_batch, trajectory_case

if os.environ.get("CI") or os.environ.get("NLLBENCH_REQUIRE_TORCH"):
    torch = importlib.import_module("torch")
else:
    torch = pytest.importorskip("torch")
nbt = importlib.import_module("nllbench.torch")
TERMS = importlib.import_module("nllbench.torch.loss").TERMS
TRAJECTORY_TERMS = importlib.import_module("nllbench.torch.trajectory_loss").TRAJECTORY_TERMS

if not torch.cuda.is_available():
    if os.environ.get("NLLBENCH_REQUIRE_CUDA"):
        raise RuntimeError("NLLBENCH_REQUIRE_CUDA is set but torch.cuda.is_available() is False")
    pytest.skip("no CUDA device (set NLLBENCH_REQUIRE_CUDA to require one)", allow_module_level=True)

CUDA = torch.device("cuda")
CPU = torch.device("cpu")
RTOL, ATOL = 1e-12, 1e-12


def leaves(arrays: dict, device) -> dict:
    """Each numpy array as a float64 leaf tensor on ``device`` that records its gradient."""
    return {
        k: torch.tensor(a, dtype=torch.float64, device=device, requires_grad=True) for k, a in arrays.items()
    }


def run_set_nll(arrays: dict, truth, device, cholesky=False, hypothesis=None, **kw):
    """set_nll of the same numbers on ``device``: the result and the gradients of its summed loss."""
    x = leaves(arrays, device)
    cov = {"scale_tril": x["cov"]} if cholesky else {"variances": x["cov"]}
    extra = {} if hypothesis is None else {"hypothesis_logits": torch.tensor(hypothesis, device=device)}
    out = nbt.set_nll(
        x["logits"],
        x["means"],
        truth=[torch.tensor(y, device=device) for y in truth],
        reduction="sum",
        **cov,
        **extra,
        **kw,
    )
    out.loss.backward()
    return out, {k: t.grad for k, t in x.items()}


def assert_same(cuda_out, cpu_out, cuda_grads, cpu_grads, terms):
    assert cuda_out.loss.device.type == "cuda" and cuda_out.per_sample.device.type == "cuda"
    torch.testing.assert_close(cuda_out.per_sample.cpu(), cpu_out.per_sample, rtol=RTOL, atol=ATOL)
    for name in terms:
        got = getattr(cuda_out, name)
        assert got.device.type == "cuda", name
        torch.testing.assert_close(got.cpu(), getattr(cpu_out, name), rtol=RTOL, atol=ATOL, msg=name)
    np.testing.assert_array_equal(cuda_out.complete, cpu_out.complete)
    np.testing.assert_array_equal(cuda_out.n_terms, cpu_out.n_terms)
    assert cuda_out.infinite.cpu().tolist() == cpu_out.infinite.tolist()
    for name, g in cuda_grads.items():
        assert g is not None and g.device.type == "cuda", name
        assert torch.isfinite(g).all(), name
        torch.testing.assert_close(g.cpu(), cpu_grads[name], rtol=RTOL, atol=ATOL, msg=f"grad {name}")


@pytest.mark.parametrize("cholesky", [False, True])
@pytest.mark.parametrize("q", [1, 7, 1000])
def test_values_terms_and_gradients_on_cuda_equal_the_cpus(cholesky, q):
    rng = np.random.default_rng(7 + q)
    logits, means, cov_param, _, truth = random_batch(
        rng, B=6, N=5, sizes=(0, 1, 3, 5, 2, 4), cholesky=cholesky
    )
    arrays = {"logits": logits, "means": means, "cov": cov_param}
    poisson = {"poisson": nbt.UniformPoisson(0.7, *BOX), "q": q}
    a, ga = run_set_nll(arrays, truth, CUDA, cholesky, **poisson)
    b, gb = run_set_nll(arrays, truth, CPU, cholesky, **poisson)
    assert_same(a, b, ga, gb, TERMS)


def test_a_mixture_of_hypotheses_with_masks_and_a_gaussian_poisson_part_on_cuda():
    rng = np.random.default_rng(3)
    logits, means, cov_param, _, truth = random_batch(rng, B=5, N=4, H=3)
    hyp = rng.normal(0.0, 1.0, (5, 3))
    mask = torch.tensor(rng.random((5, 4)) < 0.8)

    def gaussian_poisson(device):
        return nbt.GaussianPoisson(
            torch.tensor([-0.5, -1.0], dtype=torch.float64, device=device),
            torch.tensor([[1.0, 1.0], [3.0, 2.0]], dtype=torch.float64, device=device),
            variances=torch.ones(2, 2, dtype=torch.float64, device=device),
        )

    arrays = {"logits": logits, "means": means, "cov": cov_param}
    a, ga = run_set_nll(
        arrays, truth, CUDA, hypothesis=hyp, output_mask=mask.to(CUDA), poisson=gaussian_poisson(CUDA), q=9
    )
    b, gb = run_set_nll(
        arrays, truth, CPU, hypothesis=hyp, output_mask=mask, poisson=gaussian_poisson(CPU), q=9
    )
    assert_same(a, b, ga, gb, TERMS)


def test_padded_truth_on_cuda_equals_the_list_form():
    rng = np.random.default_rng(11)
    logits, means, var, _, truth = random_batch(rng, B=4, N=3, sizes=(2, 0, 3, 1))
    M = max(len(y) for y in truth)
    padded = np.zeros((4, M, 2))
    present = np.zeros((4, M), dtype=bool)
    for b, y in enumerate(truth):
        padded[b, : len(y)], present[b, : len(y)] = y, True
    t = {"dtype": torch.float64, "device": CUDA}
    kw = {"variances": torch.tensor(var, **t), "poisson": nbt.UniformPoisson(0.5, *BOX), "reduction": "none"}
    listed = nbt.set_nll(
        torch.tensor(logits, **t), torch.tensor(means, **t), truth=[torch.tensor(y, **t) for y in truth], **kw
    )
    pad = nbt.set_nll(
        torch.tensor(logits, **t),
        torch.tensor(means, **t),
        truth=torch.tensor(padded, **t),
        truth_mask=torch.tensor(present, device=CUDA),
        **kw,
    )
    torch.testing.assert_close(pad.per_sample, listed.per_sample, rtol=RTOL, atol=ATOL)


def test_float32_inputs_on_cuda_get_float32_gradients_on_cuda():
    logits = torch.tensor([[60.0, -60.0, 0.0]], device=CUDA, requires_grad=True)  # r rounds to 1 and 0
    means = torch.tensor([[[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]]], device=CUDA, requires_grad=True)
    out = nbt.set_nll(
        logits,
        means,
        variances=torch.ones(1, 3, 2, device=CUDA),
        truth=[torch.tensor([[0.0, 0.1]], device=CUDA)],
    )
    out.loss.backward()
    assert out.loss.dtype == torch.float64 and out.loss.device.type == "cuda"
    assert logits.grad.dtype == torch.float32 and logits.grad.device.type == "cuda"
    assert torch.isfinite(logits.grad).all() and math.isfinite(out.loss.item())


def test_an_infinite_sample_on_cuda_raises_is_skipped_or_kept_without_a_nan_gradient():
    logits = torch.zeros(3, 1, dtype=torch.float64, device=CUDA, requires_grad=True)
    means = torch.zeros(3, 1, 2, dtype=torch.float64, device=CUDA, requires_grad=True)
    truth = [
        torch.tensor([[0.1, 0.0]], device=CUDA),
        torch.tensor([[0.0, 0.0], [1.0, 1.0]], device=CUDA),  # two truths, one output, no Poisson part
        torch.zeros((0, 2), device=CUDA),
    ]
    kw = {"variances": torch.ones(3, 1, 2, device=CUDA), "truth": truth}
    with pytest.raises(ValueError, match=r"samples \[1\]"):
        nbt.set_nll(logits, means, **kw)
    keep = nbt.set_nll(logits, means, infinite="keep", reduction="sum", **kw)
    assert keep.loss.item() == math.inf
    keep.loss.backward()
    assert torch.isfinite(logits.grad).all() and torch.isfinite(means.grad).all()
    assert logits.grad[0].item() != 0.0


@pytest.mark.parametrize("undetected", [None, (0.6, 0.5)])
def test_the_trajectory_form_on_cuda_equals_the_cpus(undetected):
    rng = np.random.default_rng(51)
    logits, means, var, truth, present = trajectory_case(rng)
    spec = None if undetected is None else nbt.TrajectoryPoisson(*undetected, *BOX)
    results = {}
    for device in (CUDA, CPU):
        x = leaves({"logits": logits, "means": means, "cov": var}, device)
        out = nbt.trajectory_set_nll(
            x["logits"],
            x["means"],
            variances=x["cov"],
            truth=torch.tensor(truth, device=device),
            truth_present=torch.tensor(present, device=device),
            undetected=spec,
            q=5,
            reduction="sum",
            infinite="keep",
        )
        finite = out.per_sample[~out.infinite].sum()
        finite.backward()
        results[device.type] = (out, {k: t.grad for k, t in x.items()})
    (a, ga), (b, gb) = results["cuda"], results["cpu"]
    assert_same(a, b, ga, gb, TRAJECTORY_TERMS)


def test_a_training_sized_batch_on_cuda_equals_the_cpu_and_reports_its_memory():
    """B = 256 samples, N = 32 outputs, up to 32 truths, Q = 16: the values and gradients agree."""
    rng = np.random.default_rng(0)
    B, N, M = 256, 32, 32
    logits = rng.normal(0.0, 2.0, (B, N))
    means = rng.uniform(0.0, 10.0, (B, N, 2))
    var = rng.uniform(0.3, 2.0, (B, N, 2))
    truth = [rng.uniform(0.0, 10.0, (rng.integers(0, M + 1), 2)) for _ in range(B)]
    arrays = {"logits": logits, "means": means, "cov": var}
    poisson = {"poisson": nbt.UniformPoisson(1.0, [0.0, 0.0], [10.0, 10.0]), "q": 16}
    torch.cuda.reset_peak_memory_stats()
    a, ga = run_set_nll(arrays, truth, CUDA, **poisson)
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated() / 2**20
    b, gb = run_set_nll(arrays, truth, CPU, **poisson)
    assert_same(a, b, ga, gb, TERMS)
    print(f"CUDA memory peak of the B = {B}, N = {N}, M <= {M}, Q = 16 batch: {peak:.1f} MiB")
    assert peak < 1024  # a few (B, N, M) and (B, Q, M) float64 tensors: tens of MiB, not GiB
