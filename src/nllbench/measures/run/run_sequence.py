"""The whole-run measures of a run's point estimates: identities made unique, then CLEAR MOT, IDF1,
trajectory GOSPA and HOTA over every step at once (:func:`nllbench.measures.run.evaluate.evaluate_runs`)."""

from __future__ import annotations

import numpy as np

from nllbench.measures.point.metrics import clear_mot, identity_scores
from nllbench.measures.tracks.hota import hota
from nllbench.measures.tracks.tgospa import tgospa


def fresh_identities(labels: np.ndarray, fresh: int) -> tuple[np.ndarray, int]:
    """Give a fresh negative identity to every estimate with no label (< 0) or a repeated one.

    A label that an earlier estimate of the same step already carries (a PHD
    component split over measurements) cannot name two tracks. ``labels`` is
    changed in place; returns it and the next unused fresh identity.
    """
    seen = set()
    for i, label in enumerate(labels.tolist()):  # the labels as given (before any is replaced)
        if label < 0 or label in seen:
            labels[i] = fresh
            fresh -= 1
        else:
            seen.add(label)
    return labels, fresh


def sequence_measures(
    truth_pts, truth_ids, est_pts, est_ids, est_covs, settings, skip=frozenset(), clock=None
):
    """The whole-run measures on the distance columns: CLEAR MOT, identity scores, trajectory GOSPA, HOTA.

    ``truth_pts``, ``est_pts``: (K,) sequences of (n_k, d) points; ``truth_ids``, ``est_ids``: their
    (n_k,) identities; ``settings``: the run's
    :class:`~nllbench.measures.run.evaluate.EvaluationSettings` (threshold, cut-off, p, gamma, HOTA zero,
    CLEAR MOT rule). Returns ``(ClearMOTResult, IdentityResult, TGOSPAResult, HOTAResult)``.

    ``est_covs`` (the estimates' covariance blocks per step, or None) make the
    matching measures' distance Mahalanobis; trajectory GOSPA stays Euclidean. A measure named in
    ``skip`` (``clear_mot``, ``identity``, ``tgospa``, ``hota``) is not computed: None in its place.
    ``clock``: a :class:`~nllbench.measures.run.cpu_clock.CPUClock` charged each measure computed, or None.
    """
    charge = clock.charge if clock is not None else lambda name: None
    gate = settings.threshold
    if settings.strict_threshold:  # d < t is d <= the float below t
        gate = float(np.nextafter(gate, 0.0))
    cm = ids = tg = ho = None
    if "clear_mot" not in skip:
        cm = clear_mot(
            truth_pts, truth_ids, est_pts, est_ids, gate, rule=settings.clear_rule, estimate_covs=est_covs
        )
        charge("clear_mot")
    if "identity" not in skip:
        ids = identity_scores(truth_pts, truth_ids, est_pts, est_ids, gate, estimate_covs=est_covs)
        charge("identity")
    if "tgospa" not in skip:
        tg = tgospa(
            truth_pts, truth_ids, est_pts, est_ids, settings.cutoff, settings.p, settings.tgospa_gamma
        )
        charge("tgospa")
    if "hota" not in skip:
        zero = settings.hota_threshold or settings.threshold
        ho = hota(truth_pts, truth_ids, est_pts, est_ids, zero, estimate_covs=est_covs)
        charge("hota")
    return cm, ids, tg, ho
