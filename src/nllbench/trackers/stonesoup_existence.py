"""Existence of Stone Soup track states: read where the tracker keeps it, or a score from its hypotheses.

Stone Soup (https://github.com/dstl/Stone-Soup, checked on 1.9) keeps an
existence probability in one place of its own: the ``existence_probability``
attribute of ``BernoulliParticleState`` (and its ``...Prediction`` /
``...Update``), written by the Bernoulli particle predictor and updater
(Ristic et al., IEEE TSP 61(13), 2013). Anything else a user's tracker
records per state lives in the track's metadata (``Track.metadatas[i]``, the
metadata as of state i). :func:`state_existence` reads these two, in that
order, and refuses a state where they disagree.

Trackers built on single-hypothesis or probabilistic data association (GNN
with ``GNNWith2DAssignment``, JPDA with ``JPDA`` / ``JPDAwithEHM`` in
``MultiTargetTracker`` / ``MultiTargetMixtureTracker``) keep no existence.
What they keep is the association of each update, ``state.hypothesis``:
:func:`missed_detection_probability` reads from it the posterior probability
that the object was missed at that step, and :func:`detection_scores` turns
it into a per-state score ``1 - mean(m)`` over the track's last ``window``
states, to be mapped to r by a logistic calibration fitted on a held-out run
(:func:`nllbench.trackers.fitting.fit_score_calibration`, ``nllbench score
--fit-score-on``). The score is no probability of existence by itself.
"""

from __future__ import annotations

import math

import numpy as np


def _where(track, state) -> str:
    return f"track {track.id}, state at {state.timestamp}"


def _probability(value, what: str) -> float:
    try:
        p = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{what}: expected an existence probability (a number), got {value!r}") from None
    if not (math.isfinite(p) and 0.0 <= p <= 1.0):
        raise ValueError(f"{what}: expected an existence probability in [0, 1], got {p!r}")
    return p


def state_existence(track, index: int, metadata_key: str | None = "existence_probability") -> float | None:
    """The existence probability a tracker kept for ``track.states[index]``, or None.

    Read, in this order of precedence:

    1. the state's attribute ``existence_probability`` when it is not None
       (``BernoulliParticleState`` and its prediction / update types);
    2. ``track.metadatas[index][metadata_key]`` (the track's metadata as of
       that state; ``metadata_key=None`` skips it).

    A state that carries both with different values is ambiguous and is
    refused (``ValueError`` naming the track, the time and both values);
    equal values are read once. Values must lie in [0, 1].
    """
    state = track.states[index]
    where = _where(track, state)
    attr = getattr(state, "existence_probability", None)
    r = None if attr is None else _probability(attr, f"{where}: existence_probability")
    if metadata_key is None:
        return r
    metadatas = getattr(track, "metadatas", None)
    if metadatas is None or len(metadatas) != len(track.states):
        if metadata_key in (getattr(track, "metadata", None) or {}):
            raise ValueError(
                f"track {track.id}: metadata key {metadata_key!r} is in the track's metadata but the track "
                "keeps no metadata per state (Track.metadatas), so it cannot be given to a state"
            )
        return r
    if metadata_key not in metadatas[index]:
        return r
    meta = _probability(metadatas[index][metadata_key], f"{where}: metadata[{metadata_key!r}]")
    if r is not None and meta != r:
        raise ValueError(
            f"{where}: ambiguous existence: the state's existence_probability is {r!r} and its metadata "
            f"[{metadata_key!r}] is {meta!r}; give metadata_key=None to read the state's attribute only"
        )
    return meta


def scalar_weight(state) -> float | None:
    """A state's own scalar ``weight`` (``WeightedGaussianState``, GM-PHD's ``TaggedWeightedGaussianState``).

    None where there is none; a particle state's ``weight`` is an array of
    particle weights, not a weight of the state, and is not read.
    """
    w = getattr(state, "weight", None)
    if w is None or np.ndim(w) != 0:
        return None
    return float(w)


def missed_detection_probability(state) -> float:
    """Posterior probability that the object was missed at this state's step, from ``state.hypothesis``.

    * ``MultipleHypothesis`` (JPDA: ``MultiTargetMixtureTracker`` appends the
      associator's hypotheses with every update): the summed probability of
      the hypotheses without a measurement (Stone Soup's ``MissedDetection``)
      over the summed probability of all (the JPDA associator normalises them
      to 1 already: Bar-Shalom et al., IEEE Control Systems 29(6), 2009);
    * a single hypothesis (GNN's chosen association; the detection an
      initiator started the track from): 0 if it has a measurement, else 1;
    * no hypothesis (a ``...Prediction`` appended for a missed step: GNN's
      miss, or a JPDA step where no detection outweighed the miss, for which
      ``MultiTargetMixtureTracker`` keeps no hypotheses): 1.
    """
    hyp = getattr(state, "hypothesis", None)
    if hyp is None:
        return 1.0
    singles = getattr(hyp, "single_hypotheses", None)
    if singles is None:
        return 0.0 if getattr(hyp, "measurement", None) else 1.0
    probs = []
    for h in singles:
        p = getattr(h, "probability", None)
        if p is None:
            raise ValueError(
                f"state at {state.timestamp}: expected probability hypotheses (JPDA / PDA), got a "
                f"{type(h).__name__} without a probability in its MultipleHypothesis"
            )
        probs.append((float(p), not h))
    total = sum(p for p, _ in probs)
    if not total > 0:
        raise ValueError(f"state at {state.timestamp}: the hypotheses' probabilities sum to {total!r}")
    return sum(p for p, missed in probs if missed) / total


def detection_scores(track, window: int = 1) -> np.ndarray:
    """(len(track.states),) scores ``1 - mean(m_j)`` over the states j of the last ``window`` steps up to i.

    ``m_j`` is :func:`missed_detection_probability` of state j; fewer than
    ``window`` states at a track's start average over those there are.
    """
    if isinstance(window, bool) or not isinstance(window, (int, np.integer)) or window < 1:
        raise ValueError(f"window: expected a positive integer, got {window!r}")
    m = np.array([missed_detection_probability(s) for s in track.states], dtype=float)
    return np.array([1.0 - float(np.mean(m[max(i + 1 - int(window), 0) : i + 1])) for i in range(m.size)])
