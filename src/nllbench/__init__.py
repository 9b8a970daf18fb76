"""nllbench: the negative log-likelihood of multi-object tracking posteriors.

Implements Pinto, Xia, Svensson, Wymeersch, "An Uncertainty-Aware Performance
Measure for Multi-Object Tracking", IEEE Signal Processing Letters, 2021.
"""

from importlib import metadata as _metadata

from nllbench.engine.assignment import RankedAssignments, murty
from nllbench.engine.densities import (
    MBM,
    PMB,
    PMBM,
    PPP,
    GaussianMixtures,
    Gaussians,
    IIDCluster,
    Laplaces,
    MultiBernoulli,
)
from nllbench.engine.nll import NLLResult, nll, nll_many
from nllbench.engine.sampling import SetSamples, sample
from nllbench.measures.hota import HOTAResult, hota
from nllbench.measures.metrics import GOSPAResult, gospa
from nllbench.measures.presets import preset_settings
from nllbench.measures.proper import (
    EnergyScoreResult,
    IntensityScoreResult,
    cardinality_rps,
    energy_score,
    intensity_score,
)
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
    "EnergyScoreResult",
    "GOSPAResult",
    "HOTAResult",
    "FillIns",
    "GaussianMixtures",
    "Gaussians",
    "IIDCluster",
    "IntensityScoreResult",
    "Laplaces",
    "MultiBernoulli",
    "NLLResult",
    "RankedAssignments",
    "SchemaError",
    "ScoreResult",
    "SetSamples",
    "TGOSPAResult",
    "Theorem1Result",
    "TrajectoryNLLResult",
    "cardinality_rps",
    "energy_score",
    "gospa",
    "hota",
    "intensity_score",
    "murty",
    "nll",
    "nll_many",
    "preset_settings",
    "read_metrics",
    "read_posterior",
    "read_scenario",
    "sample",
    "score",
    "tgospa",
    "theorem1",
    "theorem1_pmb",
    "trajectory_nll",
    "write_posterior",
    "__version__",
]
