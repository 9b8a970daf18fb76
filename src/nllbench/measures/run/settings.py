"""What an evaluation computes and how: :class:`EvaluationSettings` (the paper's settings are the defaults).

Each measure owns its settings: a small frozen dataclass (:class:`NLLSettings`,
:class:`GOSPASettings`, :class:`MatchingSettings`, ...) that its declaration names
(``MeasureDeclaration.settings_class``, :mod:`nllbench.measures.declarations`), with the
checks of its own fields. :class:`EvaluationSettings` is composed of them and of
:class:`EstimateSettings` (the point estimates and the calibration probes, which every measure
shares): one flat frozen dataclass whose fields are theirs, constructed with the same keyword
fields as ever; :meth:`EvaluationSettings.of` gives a measure its own part. A measure declared
with a settings class adds its fields (flags, config keys) without an edit here.

Each field with an :func:`~nllbench.options.option` is a command-line flag and
a config key; :mod:`nllbench.measures.run.evaluate` runs the measures with them
(and re-exports the class, its historical home).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from nllbench.engine.assignment import check_q
from nllbench.filters.estimates import DEFAULT_EXISTENCE_THRESHOLD, RULES
from nllbench.measures.declarations import MEASURES, resolve
from nllbench.measures.point.metrics import CLEAR_RULES
from nllbench.measures.scores.proper import MAX_SAMPLES
from nllbench.options import MAX_Q, option

#: Distances of the matching measures (:attr:`MatchingSettings.distance`).
DISTANCES = ("euclidean", "mahalanobis")


@dataclass(frozen=True)
class EstimateSettings:
    """The point estimates and the calibration probes, shared by every measure.

    existence_threshold : estimator threshold on r (PMBM family).
    cov_scale, temper : calibration probes applied to every posterior first
        (1 = none): covariances times ``cov_scale``; existence probabilities
        tempered about ``existence_threshold`` (estimates do not move).
    estimator : point-estimation rule (:data:`nllbench.filters.estimates.RULES`;
        None: the family's default).
    estimate_at : "posterior" (estimates from the stored posterior) or
        "update" (the filter's own, extracted before pruning and merging).
    """

    existence_threshold: float = option(
        DEFAULT_EXISTENCE_THRESHOLD, "estimator threshold on r", "number", low=0, high=1, open_high=True
    )
    cov_scale: float = option(
        1.0, "probe: scale every covariance by s", "number", low=0, open_low=True, config=False
    )
    temper: float = option(
        1.0, "probe: temper existence probabilities", "number", low=0, open_low=True, config=False
    )
    estimator: str | None = option(
        None, "point-estimation rule (default: the posterior family's)", "choice", choices=RULES, config=False
    )
    estimate_at: str = "posterior"

    def __post_init__(self) -> None:
        if self.estimator is not None and self.estimator not in RULES:
            raise ValueError(f"estimator: expected one of {RULES} or None, got {self.estimator!r}")
        if self.estimate_at not in ("posterior", "update"):
            raise ValueError(f"estimate_at: expected 'posterior' or 'update', got {self.estimate_at!r}")


@dataclass(frozen=True)
class NLLSettings:
    """The NLL's settings.

    qs : Murty budgets for the NLL (sorted on construction).
    marginal : "position" (x, y) or "full" (the whole state) for the NLL.
    budget : "hypothesis" (the paper) or "global" Murty budget.
    exact : also compute the exact NLL (every association) where the subset
        DP is tractable; steps where it is not are flagged, not guessed.
    """

    qs: tuple[int, ...] = option(
        (1, 10, 100), "Murty budgets for the NLL", "integer", low=1, high=MAX_Q, many=True, name="q"
    )
    marginal: str = option(
        "position", "NLL on the position marginal or the full state", "choice", choices=("position", "full")
    )
    budget: str = option(
        "hypothesis",
        "Murty budget per hypothesis (the paper) or global",
        "choice",
        choices=("hypothesis", "global"),
    )
    exact: bool = option(False, "also the exact NLL where it is tractable", "bool")

    def __post_init__(self) -> None:
        if isinstance(self.qs, (str, bytes)) or not hasattr(self.qs, "__iter__"):
            raise ValueError(
                f"qs: expected a sequence of distinct positive integers, got {self.qs!r} "
                "(allowed: 1 to 2**63 - 1)"
            )
        qs = tuple(check_q(q, f"qs[{i}]") for i, q in enumerate(self.qs))
        if not qs or len(set(qs)) != len(qs):
            raise ValueError(f"qs: expected distinct positive integers, got {self.qs!r}")
        object.__setattr__(self, "qs", tuple(sorted(qs)))
        if self.marginal not in ("position", "full"):
            raise ValueError(f"marginal: expected 'position' or 'full', got {self.marginal!r}")


@dataclass(frozen=True)
class GOSPASettings:
    """GOSPA's and OSPA's cut-off c and order p (also trajectory GOSPA's, and P-GOSPA's)."""

    cutoff: float = option(2.0, "GOSPA/OSPA cut-off c", "number", low=0, open_low=True)
    p: float = option(1.0, "GOSPA/OSPA order p", "number", low=1)


@dataclass(frozen=True)
class MatchingSettings:
    """How CLEAR MOT, the identity measures and HOTA match estimates to objects.

    threshold : CLEAR MOT / identity matching threshold (inclusive).
    distance : "euclidean" or "mahalanobis" (the matching measures' distance; module notes of
        :mod:`nllbench.measures.run.evaluate`).
    distance_dims : the number of leading state columns every distance of the
        point measures is on (2: x, y, the bird's-eye view of a 3-D state).
    clear_rule : CLEAR MOT matching, "motmetrics" (py-motmetrics, nuScenes) or
        "trackeval" (TrackEval, Argoverse 2); see :func:`~nllbench.measures.point.metrics.clear_mot`.
    strict_threshold : CLEAR MOT and identity pairs match when d < ``threshold``
        (the nuScenes devkit) instead of d <= ``threshold``.
    """

    threshold: float = option(2.0, "MOTA/MOTP/IDF1 matching threshold", "number", low=0, open_low=True)
    distance: str = option(
        "euclidean", "distance of CLEAR MOT, IDF1 and HOTA matching (GOSPA stays Euclidean)", "choice",
        choices=DISTANCES, config=False,
    )  # fmt: skip
    distance_dims: int = option(
        2, "leading state columns the point measures' distances are on (2: bird's-eye x, y)", "integer",
        low=1, high=1000, config=False,
    )  # fmt: skip
    clear_rule: str = option(
        "motmetrics", "CLEAR MOT matching rule: py-motmetrics (nuScenes) or TrackEval (Argoverse 2)",
        "choice", choices=CLEAR_RULES, config=False,
    )  # fmt: skip
    strict_threshold: bool = option(
        False, "CLEAR MOT and IDF1 pairs match when d < threshold (nuScenes) instead of d <= threshold",
        "bool", config=False,
    )  # fmt: skip

    def __post_init__(self) -> None:
        if self.distance not in DISTANCES:
            raise ValueError(f"distance: expected one of {DISTANCES}, got {self.distance!r}")
        if self.clear_rule not in CLEAR_RULES:
            raise ValueError(f"clear_rule: expected one of {CLEAR_RULES}, got {self.clear_rule!r}")
        dims = self.distance_dims
        if isinstance(dims, bool) or not isinstance(dims, (int, np.integer)) or dims < 1:
            raise ValueError(f"distance_dims: expected a positive integer, got {dims!r}")
        object.__setattr__(self, "distance_dims", int(dims))
        if not isinstance(self.strict_threshold, (bool, np.bool_)):
            raise TypeError(f"strict_threshold: expected True or False, got {self.strict_threshold!r}")
        object.__setattr__(self, "strict_threshold", bool(self.strict_threshold))


@dataclass(frozen=True)
class Theorem1Settings:
    """The Theorem 1 check: its rho (c = -2 log(1 - rho)) and metric scale (None: where k = rho)."""

    theorem_rho: float = option(
        0.9, "rho of the Theorem 1 check", "number", low=0, high=1, open_low=True, open_high=True
    )
    theorem_scale: float | None = option(
        None, "metric scale of the Theorem 1 check (default: the scale at which k = rho)", "number",
        low=0, open_low=True, config=False,
    )  # fmt: skip


@dataclass(frozen=True)
class TGOSPASettings:
    """Trajectory GOSPA's switch cost gamma (None: ``cutoff``); its cut-off and order are GOSPA's."""

    tgospa_gamma: float | None = option(
        None, "trajectory-GOSPA switch cost (default: --cutoff)", "number", low=0, open_low=True, config=False
    )


@dataclass(frozen=True)
class HOTASettings:
    """The distance at which the HOTA similarity reaches 0 (None: ``threshold``)."""

    hota_threshold: float | None = option(
        None, "distance at which the HOTA similarity reaches 0 (default: --threshold)", "number",
        low=0, open_low=True, config=False,
    )  # fmt: skip


@dataclass(frozen=True)
class ProperScoreSettings:
    """The proper scores beyond the NLL (:mod:`nllbench.measures.scores.proper_run`, docs/scores.md).

    proper_scores : also the set energy score, the intensity score and the
        cardinality RPS per step, on the density and marginal the NLL is evaluated on.
    kernel_cov : s of their kernel covariance R = s I, in the evaluated
        marginal's units squared (None: (cutoff / 2)^2, :attr:`EvaluationSettings.kernel_variance`).
    energy_samples : samples per step of the energy score.
    """

    proper_scores: bool = option(
        True,
        "also the set energy, intensity and cardinality scores (docs/scores.md in nllbench's source)",
        "bool",
    )
    kernel_cov: float | None = option(
        None,
        "kernel covariance s of those scores, R = s I in position units squared (default: (cutoff/2)^2)",
        "number",
        low=0,
        open_low=True,
    )
    energy_samples: int = option(
        100, "samples per step of the energy score", "integer", low=2, high=MAX_SAMPLES
    )

    def __post_init__(self) -> None:
        n = self.energy_samples
        if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or not 2 <= n <= MAX_SAMPLES:
            raise ValueError(f"energy_samples: expected an integer in [2, {MAX_SAMPLES}], got {n!r}")
        k = self.kernel_cov
        if k is not None and (isinstance(k, bool) or not isinstance(k, (int, float, np.number))
                              or not (math.isfinite(k) and k > 0)):  # fmt: skip
            raise ValueError(f"kernel_cov: expected a positive number or None, got {k!r}")


#: The order of the fields of :class:`EvaluationSettings` as first released (flags in ``--help``,
#: config defaults): a frozen record, not a list to extend; fields of measures declared since follow
#: in declaration order.
_RELEASED_ORDER = (
    "qs", "marginal", "cutoff", "p", "threshold", "existence_threshold", "cov_scale", "temper",
    "theorem_rho", "theorem_scale", "budget", "exact", "tgospa_gamma", "hota_threshold", "estimator",
    "estimate_at", "distance", "distance_dims", "clear_rule", "strict_threshold", "proper_scores",
    "kernel_cov", "energy_samples",
)  # fmt: skip


def settings_parts() -> tuple[type, ...]:
    """The settings dataclasses :class:`EvaluationSettings` is composed of, in the order they are
    checked: the measures' (each declared ``settings_class`` once, in declaration order, with the
    proper scores' first, as they were checked before) around :class:`EstimateSettings`."""
    parts = [EstimateSettings]
    for m in MEASURES:
        if m.settings_class:
            cls = resolve(m.settings_class)
            if cls not in parts:
                parts.append(cls)
    # the order of the checks of the first release: proper scores, estimates, NLL, matching
    first = [c for c in (ProperScoreSettings, EstimateSettings, NLLSettings) if c in parts]
    return (*first, *(c for c in parts if c not in first))


def _composed_fields(parts) -> list[tuple]:
    """(name, type, field) of every part's fields: the released ones in their order, then the rest."""
    out, seen = [], {}
    for part in parts:
        for f in dataclasses.fields(part):
            if f.name in seen:
                raise TypeError(
                    f"settings field {f.name!r}: declared by {seen[f.name].__name__} and {part.__name__}"
                )
            seen[f.name] = part
            new = dataclasses.field(default=f.default, default_factory=f.default_factory, metadata=f.metadata)
            out.append((f.name, f.type, new))
    rank = {name: i for i, name in enumerate(_RELEASED_ORDER)}
    return sorted(out, key=lambda t: rank.get(t[0], len(rank)))  # stable: the rest in part order


def _post_init(self) -> None:
    """Each part's checks on its own fields (a part's normalised values, e.g. sorted ``qs``, kept)."""
    for part in type(self).parts:
        names = [f.name for f in dataclasses.fields(part)]
        checked = part(**{n: getattr(self, n) for n in names})
        for n in names:
            object.__setattr__(self, n, getattr(checked, n))


def _of(self, part: type):
    """This evaluation's settings of ``part`` (one of :attr:`parts`, e.g. :class:`GOSPASettings`)."""
    if part not in type(self).parts:
        names = ", ".join(p.__name__ for p in type(self).parts)
        raise ValueError(f"part: expected one of {names}, got {part!r}")
    return part(**{f.name: getattr(self, f.name) for f in dataclasses.fields(part)})


def _kernel_variance(self) -> float:
    """s of the proper scores' kernel covariance R = s I: ``kernel_cov``, or (cutoff / 2)^2.

    The default makes the kernel's standard deviation half the GOSPA
    cut-off c: an estimate at distance c from an object is 2 kernel
    standard deviations away (k = exp(-2) = 0.14), where GOSPA too stops
    counting it as that object (docs/scores.md).
    """
    return float(self.kernel_cov) if self.kernel_cov is not None else (self.cutoff / 2.0) ** 2


def _compose() -> type:
    parts = settings_parts()
    cls = dataclasses.make_dataclass(
        "EvaluationSettings",
        _composed_fields(parts),
        namespace={
            "__module__": __name__,
            "__doc__": _DOC,
            "__post_init__": _post_init,
            "parts": parts,
            "of": _of,
            "kernel_variance": property(_kernel_variance),
        },
        frozen=True,
    )
    cls.__qualname__ = "EvaluationSettings"
    return cls


_DOC = """What to compute and how (defaults: the paper's settings), composed of each measure's settings.

    parts : the settings dataclasses it is composed of (:func:`settings_parts`); ``of(part)`` gives
        one of them.

    qs : Murty budgets for the NLL.
    marginal : "position" (x, y) or "full" (the whole state) for the NLL.
    cutoff, p : GOSPA / OSPA cut-off and order.
    threshold : CLEAR MOT / identity matching threshold (inclusive).
    existence_threshold : estimator threshold on r (PMBM family).
    cov_scale, temper : calibration probes applied to every posterior first
        (1 = none): covariances times ``cov_scale``; existence probabilities
        tempered about ``existence_threshold`` (estimates do not move).
    theorem_rho : rho of the Theorem 1 check (c = -2 log(1 - rho)).
    theorem_scale : its metric scale (None: the scale at which k = rho).
    budget : "hypothesis" (the paper) or "global" Murty budget.
    exact : also compute the exact NLL (every association) where the subset
        DP is tractable; steps where it is not are flagged, not guessed.
    tgospa_gamma : trajectory-GOSPA switch cost (None: ``cutoff``); its
        cut-off and order are ``cutoff`` and ``p``.
    hota_threshold : distance at which the HOTA similarity reaches 0 (None: ``threshold``).
    estimator : point-estimation rule (:data:`nllbench.filters.estimates.RULES`;
        None: the family's default).
    estimate_at : "posterior" (estimates from the stored posterior) or
        "update" (the filter's own, extracted before pruning and merging).
    proper_scores : also the set energy score, the intensity score and the
        cardinality RPS per step (:mod:`nllbench.measures.scores.proper_run`,
        docs/scores.md), on the density and marginal the NLL is evaluated on.
    kernel_cov : s of their kernel covariance R = s I, in the evaluated
        marginal's units squared (None: (cutoff / 2)^2, :attr:`kernel_variance`).
    energy_samples : samples per step of the energy score.
    distance : "euclidean" or "mahalanobis" (the matching measures' distance; module notes).
    distance_dims : the number of leading state columns every distance of the
        point measures is on (2: x, y, the bird's-eye view of a 3-D state).
    clear_rule : CLEAR MOT matching, "motmetrics" (py-motmetrics, nuScenes) or
        "trackeval" (TrackEval, Argoverse 2); see :func:`~nllbench.measures.point.metrics.clear_mot`.
    strict_threshold : CLEAR MOT and identity pairs match when d < ``threshold``
        (the nuScenes devkit) instead of d <= ``threshold``.
"""


#: What to compute and how: the fields of every part (:func:`settings_parts`), flat.
EvaluationSettings = _compose()
