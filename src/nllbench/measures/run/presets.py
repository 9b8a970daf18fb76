"""Named evaluation conventions: the driving benchmarks' bird's-eye centre distance and a chi-square gate.

A preset sets the fields of :class:`~nllbench.measures.run.evaluate.EvaluationSettings`
that say how an estimate is compared with a truth; everything else (NLL
budgets, GOSPA cut-off, probes, ...) is left as given.

``"av2"``: the Argoverse 2 tracking evaluation (PyPI ``av2`` 0.3,
``av2/evaluation/tracking/eval.py``), which runs TrackEval's HOTA and CLEAR
on the similarity ``S = max(0, 1 - d / 2 m)`` with d the Euclidean distance of
the box centres' x, y (``TrackEvalDataset._calculate_similarities``,
``ZERO_DISTANCE = 2``) and CLEAR's default similarity threshold 0.5:

* distance on x, y (``distance_dims = 2``), Euclidean;
* HOTA similarity reaching 0 at 2 m (``hota_threshold = 2``);
* CLEAR MOT (and IDF1, which av2 does not report) matching at S >= 0.5, i.e.
  d <= 1 m (``threshold = 1``), with TrackEval's matching rule
  (``clear_rule = "trackeval"``). MOTP is reported as the mean distance in
  metres; av2's MOTP (a mean similarity) is ``1 - motp / 2``.

``"nuscenes"``: the nuScenes tracking evaluation (PyPI ``nuscenes-devkit``,
``nuscenes/eval/tracking``; Caesar et al., "nuScenes: A multimodal dataset for
autonomous driving", CVPR 2020), configuration ``tracking_nips_2019``:
``dist_fcn = center_distance`` (Euclidean distance of the box centres' x, y)
and ``dist_th_tp = 2.0``, with distances ``>= 2`` removed before the
py-motmetrics accumulator (``TrackingEvaluation.accumulate``):

* distance on x, y, Euclidean;
* CLEAR MOT and IDF1 matching at d < 2 m (``threshold = 2``,
  ``strict_threshold = True``) with py-motmetrics' rule (``"motmetrics"``).

nuScenes' headline AMOTA and AMOTP average over recall thresholds of the
tracks' confidence scores; they are not computed here (the rest of
nllbench's measures score one set of estimates per frame). nuScenes reports no
HOTA: its zero distance is left at the default (``threshold``, 2 m).

``"mahalanobis"``: a covariance-aware comparison (no peer offers one): the
Mahalanobis distance of the true state from each estimate under the
estimate's covariance on the distance columns, for CLEAR MOT, IDF1 and HOTA.
If the estimate's covariance is right, d^2 is chi-square distributed with
``distance_dims`` degrees of freedom, so the gate is its quantile,

* ``threshold = sqrt(chi2.ppf(probability, distance_dims))`` (:func:`chi_square_gate`;
  probability 0.99: 3.035 for 2 columns, 3.368 for 3),
* ``hota_threshold = 2 * threshold``, so that HOTA's similarity is 0.5 at the
  gate (the av2 ratio: a 2 m zero distance with a 1 m CLEAR gate).

GOSPA, OSPA and trajectory GOSPA keep the Euclidean distance (they are
metrics; see :mod:`nllbench.measures.run.evaluate`).
"""

from __future__ import annotations

import math
from dataclasses import fields, replace

from nllbench.measures.run.evaluate import EvaluationSettings

#: The names :func:`preset_settings` knows.
PRESETS = ("av2", "nuscenes", "mahalanobis")

#: Gate probability of the ``"mahalanobis"`` preset.
GATE_PROBABILITY = 0.99


def chi_square_gate(probability: float, dims: int) -> float:
    """sqrt of the chi-square quantile: the Mahalanobis distance within which a fraction ``probability``
    of true states falls when the estimate's covariance is right (``dims`` degrees of freedom).

    For 2 dims this is sqrt(-2 log(1 - probability)).

    Examples
    --------
    >>> round(chi_square_gate(0.99, 2), 6) == round((-2 * math.log(0.01)) ** 0.5, 6)
    True
    """
    from scipy.stats import chi2

    p = float(probability)
    if not 0.0 < p < 1.0:
        raise ValueError(f"probability: expected a number in (0, 1), got {probability!r}")
    if isinstance(dims, bool) or not isinstance(dims, int) or dims < 1:
        raise ValueError(f"dims: expected a positive integer, got {dims!r}")
    return math.sqrt(float(chi2.ppf(p, dims)))


def preset_values(name: str, distance_dims: int = 2) -> dict:
    """The settings fields preset ``name`` sets (``"mahalanobis"``: the gate for ``distance_dims``)."""
    if name == "av2":
        return dict(
            distance="euclidean",
            distance_dims=2,
            threshold=1.0,
            hota_threshold=2.0,
            clear_rule="trackeval",
            strict_threshold=False,
        )
    if name == "nuscenes":
        return dict(
            distance="euclidean",
            distance_dims=2,
            threshold=2.0,
            clear_rule="motmetrics",
            strict_threshold=True,
        )
    if name == "mahalanobis":
        gate = chi_square_gate(GATE_PROBABILITY, distance_dims)
        return dict(
            distance="mahalanobis",
            threshold=gate,
            hota_threshold=2.0 * gate,
            clear_rule="motmetrics",
            strict_threshold=False,
        )
    raise ValueError(f"preset: expected one of {PRESETS}, got {name!r}")


def preset_settings(name: str, settings: EvaluationSettings | None = None, **overrides) -> EvaluationSettings:
    """``settings`` (default: the defaults) with the fields of preset ``name``, then ``overrides``.

    A field that ``settings`` sets to something other than its default and
    the preset sets differently is an error naming it (pass it in
    ``overrides`` to change a preset's value on purpose). The
    ``"mahalanobis"`` gate is computed for the ``distance_dims`` of
    ``overrides``, else of ``settings``.

    Examples
    --------
    >>> s = preset_settings("av2")
    >>> s.threshold, s.hota_threshold, s.distance_dims, s.clear_rule
    (1.0, 2.0, 2, 'trackeval')
    """
    base = EvaluationSettings() if settings is None else settings
    if not isinstance(base, EvaluationSettings):
        raise TypeError(f"settings: expected EvaluationSettings, got {type(base).__name__}")
    known = {f.name for f in fields(EvaluationSettings)}
    for key in overrides:
        if key not in known:
            raise ValueError(f"{key}: expected an EvaluationSettings field ({', '.join(sorted(known))})")
    values = preset_values(name, overrides.get("distance_dims", base.distance_dims))
    default = EvaluationSettings()
    for key, value in values.items():
        given = getattr(base, key)
        if key not in overrides and given != getattr(default, key) and given != value:
            raise ValueError(
                f"{key}: preset {name!r} sets {value!r}, the settings give {given!r} "
                f"(pass {key}=... to preset_settings to override the preset)"
            )
    return replace(base, **{**values, **overrides})
