"""The public names of ``nllbench`` for type checkers and readers (PEP 561).

Generated from ``_SOURCES`` in ``__init__.py`` by ``python tests/layout/test_public_api_stub.py``;
do not edit: ``tests/layout/test_public_api_stub.py`` fails when it is out of date.
"""

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
from nllbench.measures.likelihood.theorem1 import Theorem1Result, theorem1, theorem1_pmb
from nllbench.measures.point.metrics import GOSPAResult, gospa
from nllbench.measures.point.pgospa import PGOSPAResult, pgospa
from nllbench.measures.run.presets import preset_settings
from nllbench.measures.scores.proper import (
    EnergyScoreResult,
    IntensityScoreResult,
    cardinality_rps,
    energy_score,
    intensity_score,
)
from nllbench.measures.tracks.hota import HOTAResult, hota
from nllbench.measures.tracks.ptgospa import PTGOSPAResult, ptgospa
from nllbench.measures.tracks.tgospa import TGOSPAResult, tgospa
from nllbench.store import SchemaError, read_metrics, read_posterior, read_scenario, write_posterior
from nllbench.trackers.api import FillIns, ScoreResult, score
from nllbench.trackers.trajectory_tables import TrajectoryNLLResult, trajectory_nll

__version__: str

__all__ = [
    "RankedAssignments",
    "murty",
    "MBM",
    "PMB",
    "PMBM",
    "PPP",
    "GaussianMixtures",
    "Gaussians",
    "IIDCluster",
    "Laplaces",
    "MultiBernoulli",
    "NLLResult",
    "nll",
    "nll_many",
    "SetSamples",
    "sample",
    "HOTAResult",
    "hota",
    "PTGOSPAResult",
    "ptgospa",
    "GOSPAResult",
    "gospa",
    "PGOSPAResult",
    "pgospa",
    "preset_settings",
    "EnergyScoreResult",
    "IntensityScoreResult",
    "cardinality_rps",
    "energy_score",
    "intensity_score",
    "TGOSPAResult",
    "tgospa",
    "Theorem1Result",
    "theorem1",
    "theorem1_pmb",
    "SchemaError",
    "read_metrics",
    "read_posterior",
    "read_scenario",
    "write_posterior",
    "FillIns",
    "ScoreResult",
    "score",
    "TrajectoryNLLResult",
    "trajectory_nll",
    "__version__",
]
