"""nllbench: the negative log-likelihood of multi-object tracking posteriors.

Implements Pinto, Xia, Svensson, Wymeersch, "An Uncertainty-Aware Performance
Measure for Multi-Object Tracking", IEEE Signal Processing Letters, 2021.
"""

from importlib import metadata as _metadata

from nllbench.engine.assignment import RankedAssignments, murty
from nllbench.engine.densities import MBM, PMB, PMBM, PPP, Gaussians, IIDCluster, Laplaces, MultiBernoulli
from nllbench.engine.nll import NLLResult, nll, nll_many
from nllbench.measures.hota import HOTAResult, hota
from nllbench.measures.metrics import GOSPAResult, gospa
from nllbench.measures.tgospa import TGOSPAResult, tgospa
from nllbench.measures.theorem1 import Theorem1Result, theorem1, theorem1_pmb
from nllbench.store import SchemaError, read_metrics, read_posterior, read_scenario, write_posterior
from nllbench.trackers.scoring import FillIns, ScoreResult, score
from nllbench.trackers.trajectory import TrajectoryNLLResult, trajectory_nll

__version__ = _metadata.version("nllbench")  # one source: pyproject.toml

__all__ = [
    "MBM",
    "PMB",
    "PMBM",
    "PPP",
    "GOSPAResult",
    "HOTAResult",
    "FillIns",
    "Gaussians",
    "IIDCluster",
    "Laplaces",
    "MultiBernoulli",
    "NLLResult",
    "RankedAssignments",
    "SchemaError",
    "ScoreResult",
    "TGOSPAResult",
    "Theorem1Result",
    "TrajectoryNLLResult",
    "gospa",
    "hota",
    "murty",
    "nll",
    "nll_many",
    "read_metrics",
    "read_posterior",
    "read_scenario",
    "score",
    "tgospa",
    "theorem1",
    "theorem1_pmb",
    "trajectory_nll",
    "write_posterior",
    "__version__",
]
