"""nllbench.torch: the set NLL as a differentiable training loss (the ``torch`` extra).

``pip install "nllbench[torch]"``. :func:`set_nll` / :class:`SetNLLLoss` score a batch of padded
network outputs (existence logits, Gaussian states, an optional Poisson part and hypotheses) at
the true sets, equal to :func:`nllbench.nll` on the same density; :func:`trajectory_set_nll` is
the trajectory NLL (``docs/trajectory.md``) of per-track state windows. ``docs/torch.md`` says what
is differentiated and why. ``import nllbench`` does not import this package (nor torch).
"""

from __future__ import annotations

try:
    import torch as _torch  # noqa: F401 - the extra's one dependency, checked here
except ImportError as exc:  # pragma: no cover - exercised in an environment without torch
    raise ImportError(
        'nllbench.torch needs PyTorch, which is not installed: pip install "nllbench[torch]" '
        "(or install torch >= 2.4 as PyTorch's site describes for your platform)"
    ) from exc

from nllbench.torch._inputs import GaussianPoisson, UniformPoisson
from nllbench.torch.loss import SetNLLLoss, SetNLLResult, set_nll
from nllbench.torch.trajectory_loss import TrajectoryPoisson, TrajectorySetNLLResult, trajectory_set_nll

#: Old module names -> their names now (:mod:`nllbench._moved`).
MOVED = {"trajectory": "trajectory_loss"}

__all__ = [
    "GaussianPoisson",
    "SetNLLLoss",
    "SetNLLResult",
    "TrajectoryPoisson",
    "TrajectorySetNLLResult",
    "UniformPoisson",
    "set_nll",
    "trajectory_set_nll",
]
