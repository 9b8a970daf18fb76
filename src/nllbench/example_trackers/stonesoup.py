"""A real Stone Soup tracker (GM-PHD) on an nllbench scenario file, exported as a tidy tracks table.

Stone Soup (https://github.com/dstl/Stone-Soup, the ``crosscheck`` extra) is
built from its own parts: a Kalman predictor and updater, a PHD updater
(Vo & Ma, IEEE TSP 2006), a Mahalanobis distance hypothesiser wrapped in a
Gaussian-mixture hypothesiser, a pruning / merging reducer and the
``PointProcessMultiTargetTracker``. The model is the scenario file's own
(F, Q, H, R, P_D, P_S, clutter, birth, initial intensity), so the tracker and
nllbench's reference filters see the same problem.

Stone Soup's GM-PHD keeps no existence probability: its tracks' states are
weighted Gaussians, exported with ``score = weight`` (to be calibrated into r
on a held-out run by ``nllbench score --fit-score-on``).
"""

from __future__ import annotations

import datetime
import math

import numpy as np

from nllbench.engine.densities import log_box_volume
from nllbench.trackers.adapters import tracks_from_stonesoup

START = datetime.datetime(2021, 1, 1)


def clutter_density(rate: float, low, high) -> float:
    """rate / V of the field of view [low, high].

    V = prod(high - low) where that is a normal float (bit for bit the plain
    ratio); else through log V (:func:`nllbench.engine.densities.log_box_volume`),
    exact where V overflows or underflows while the density is a float.
    """
    low, high = np.atleast_1d(np.asarray(low, float)), np.atleast_1d(np.asarray(high, float))
    with np.errstate(over="ignore", under="ignore"):
        volume = float(np.prod(high - low))
    if rate == 0:
        return 0.0
    if np.isfinite(volume) and volume >= np.finfo(float).tiny:
        return rate / volume
    log_volume = float(log_box_volume(low[None, :], high[None, :])[0])
    with np.errstate(over="ignore", under="ignore"):
        return float(np.exp(math.log(rate) - log_volume))


def run_gmphd(
    data, *, extraction_threshold: float = 0.5, prune: float = 1e-5, merge: float = 4.0, cap: int = 100
):
    """Run Stone Soup's GM-PHD tracker over a :class:`nllbench.store.ScenarioData`.

    Returns ``(tracks, timestamps)``: every track the tracker held at any
    step (Stone Soup drops tracks whose components vanish) and the time of
    frame k, ``START + k`` seconds.
    """
    from stonesoup.hypothesiser.distance import DistanceHypothesiser
    from stonesoup.hypothesiser.gaussianmixture import GaussianMixtureHypothesiser
    from stonesoup.measures import Mahalanobis
    from stonesoup.mixturereducer.gaussianmixture import GaussianMixtureReducer
    from stonesoup.models.measurement.linear import LinearGaussian
    from stonesoup.models.transition.linear import LinearGaussianTimeInvariantTransitionModel
    from stonesoup.predictor.kalman import KalmanPredictor
    from stonesoup.tracker.pointprocess import PointProcessMultiTargetTracker
    from stonesoup.types.detection import Detection
    from stonesoup.types.state import TaggedWeightedGaussianState
    from stonesoup.updater.kalman import KalmanUpdater
    from stonesoup.updater.pointprocess import PHDUpdater

    m = data.model
    if m is None:
        raise ValueError("data: expected a scenario with a model (F, Q, H, R, birth), got none")
    mapping = tuple(int(np.flatnonzero(row)[0]) for row in m.H)
    if not np.array_equal(m.H, np.eye(m.F.shape[0])[list(mapping)]):
        raise ValueError(f"data: expected a measurement matrix that selects state components, got {m.H}")
    transition = LinearGaussianTimeInvariantTransitionModel(transition_matrix=m.F, covariance_matrix=m.Q)
    measurement = LinearGaussian(ndim_state=m.F.shape[0], mapping=mapping, noise_covar=m.R)
    kalman = KalmanUpdater(measurement)
    predictor = KalmanPredictor(transition)
    updater = PHDUpdater(
        kalman,
        clutter_spatial_density=clutter_density(m.clutter_rate, m.fov_low, m.fov_high),
        prob_detection=m.p_detection,
        prob_survival=m.p_survival,
    )
    hypothesiser = GaussianMixtureHypothesiser(
        DistanceHypothesiser(predictor, kalman, Mahalanobis(), missed_distance=16), order_by_detection=True
    )
    reducer = GaussianMixtureReducer(
        prune_threshold=prune, pruning=True, merge_threshold=merge, merging=True, max_number_components=cap
    )
    if len(m.birth.weights) != 1 or len(m.initial.weights) != 1:
        raise ValueError("data: Stone Soup's tracker takes one birth component; the model has several")
    timestamps = [START + datetime.timedelta(seconds=k) for k in range(data.steps)]
    scans = [
        (t, {Detection(z.reshape(-1, 1), timestamp=t, measurement_model=measurement) for z in Z})
        for t, Z in zip(timestamps, data.measurements, strict=True)
    ]
    # the objects present before the first step enter as the first step's birth (the initial intensity)
    birth = TaggedWeightedGaussianState(
        m.initial.means[0].reshape(-1, 1),
        m.initial.covs[0],
        weight=float(m.initial.weights[0]),
        tag=TaggedWeightedGaussianState.BIRTH,
        timestamp=timestamps[0] - datetime.timedelta(seconds=1),
    )
    tracker = PointProcessMultiTargetTracker(
        detector=scans,
        hypothesiser=hypothesiser,
        updater=updater,
        reducer=reducer,
        birth_component=birth,
        extraction_threshold=extraction_threshold,
    )
    seen = {}
    for k, (_, tracks) in enumerate(tracker):
        for t in tracks:
            seen[t.id] = t
        if k == 0:  # from the second step on, the per-step birth intensity
            tracker.birth_component = TaggedWeightedGaussianState(
                m.birth.means[0].reshape(-1, 1),
                m.birth.covs[0],
                weight=float(m.birth.weights[0]),
                tag=TaggedWeightedGaussianState.BIRTH,
                timestamp=timestamps[0],
            )
    return list(seen.values()), timestamps


def _models(data):
    """Stone Soup's transition and measurement models of a scenario's model, and the state mapping."""
    from stonesoup.models.measurement.linear import LinearGaussian
    from stonesoup.models.transition.linear import LinearGaussianTimeInvariantTransitionModel

    m = data.model
    if m is None:
        raise ValueError("data: expected a scenario with a model (F, Q, H, R, birth), got none")
    mapping = tuple(int(np.flatnonzero(row)[0]) for row in m.H)
    if not np.array_equal(m.H, np.eye(m.F.shape[0])[list(mapping)]):
        raise ValueError(f"data: expected a measurement matrix that selects state components, got {m.H}")
    transition = LinearGaussianTimeInvariantTransitionModel(transition_matrix=m.F, covariance_matrix=m.Q)
    measurement = LinearGaussian(ndim_state=m.F.shape[0], mapping=mapping, noise_covar=m.R)
    return transition, measurement, mapping


def run_association(
    data,
    *,
    associator: str = "jpda",
    gate: float = 0.9999,
    missed_distance: float = 3.0,
    min_points: int = 3,
    delete_after: int = 3,
):
    """Run a Stone Soup JPDA or GNN tracker over a :class:`nllbench.store.ScenarioData`.

    Built from Stone Soup's parts as its tutorials build them: Kalman
    predictor and updater with the scenario's model; for ``"jpda"`` a
    ``PDAHypothesiser`` (the scenario's P_D and clutter density, gate
    probability ``gate``) and the ``JPDAwithEHM`` associator (the JPDA's
    exact association probabilities, Maskell's efficient hypothesis
    management) in a ``MultiTargetMixtureTracker``; for ``"gnn"`` a
    Mahalanobis ``DistanceHypothesiser`` (``missed_distance``) and
    ``GNNWith2DAssignment`` in a ``MultiTargetTracker``. Tracks start from a
    ``MultiMeasurementInitiator`` (GNN on held tracks, ``min_points`` updates,
    prior = the scenario's birth component) and end by an
    ``UpdateTimeStepsDeleter`` (``delete_after`` steps without an update).

    Returns ``(tracks, timestamps)``: every track the tracker released, with
    all its states, and the time of frame k, ``START + k`` seconds. Neither
    tracker keeps an existence: export with ``existence="missed_detection"``.
    """
    from stonesoup.dataassociator.neighbour import GNNWith2DAssignment
    from stonesoup.dataassociator.probability import JPDAwithEHM
    from stonesoup.deleter.time import UpdateTimeStepsDeleter
    from stonesoup.hypothesiser.distance import DistanceHypothesiser
    from stonesoup.hypothesiser.probability import PDAHypothesiser
    from stonesoup.initiator.simple import MultiMeasurementInitiator
    from stonesoup.measures import Mahalanobis
    from stonesoup.predictor.kalman import KalmanPredictor
    from stonesoup.tracker.simple import MultiTargetMixtureTracker, MultiTargetTracker
    from stonesoup.types.detection import Detection
    from stonesoup.types.state import GaussianState
    from stonesoup.updater.kalman import KalmanUpdater

    if associator not in ("jpda", "gnn"):
        raise ValueError(f"associator: expected 'jpda' or 'gnn', got {associator!r}")
    m = data.model
    transition, measurement, _ = _models(data)
    predictor, updater = KalmanPredictor(transition), KalmanUpdater(measurement)
    gnn = GNNWith2DAssignment(
        DistanceHypothesiser(predictor, updater, Mahalanobis(), missed_distance=missed_distance)
    )
    timestamps = [START + datetime.timedelta(seconds=k) for k in range(data.steps)]
    scans = [
        (t, {Detection(z.reshape(-1, 1), timestamp=t, measurement_model=measurement) for z in Z})
        for t, Z in zip(timestamps, data.measurements, strict=True)
    ]
    deleter = UpdateTimeStepsDeleter(time_steps_since_update=delete_after)
    initiator = MultiMeasurementInitiator(
        prior_state=GaussianState(m.birth.means[0].reshape(-1, 1), m.birth.covs[0]),
        measurement_model=measurement,
        deleter=deleter,
        data_associator=gnn,
        updater=updater,
        min_points=min_points,
    )
    if associator == "jpda":
        pda = PDAHypothesiser(
            predictor,
            updater,
            clutter_spatial_density=clutter_density(m.clutter_rate, m.fov_low, m.fov_high),
            prob_detect=m.p_detection,
            prob_gate=gate,
        )
        tracker = MultiTargetMixtureTracker(
            initiator=initiator,
            deleter=deleter,
            detector=scans,
            data_associator=JPDAwithEHM(pda),
            updater=updater,
        )
    else:
        tracker = MultiTargetTracker(
            initiator=initiator, deleter=deleter, detector=scans, data_associator=gnn, updater=updater
        )
    seen = {}
    for _, tracks in tracker:
        for t in tracks:
            seen[t.id] = t
    return list(seen.values()), timestamps


def association_tracks_table(data, *, window: int = 1, **options):
    """Tidy tracks table (frame, id, score, x, y, ...) of :func:`run_association`; score = 1 - missed."""
    tracks, timestamps = run_association(data, **options)
    return tracks_from_stonesoup(
        tracks, timestamps, mapping=(0, 1), state=("x", "y"), existence="missed_detection", window=window
    )


def truth_paths(data):
    """The scenario's truth as Stone Soup ``GroundTruthPath`` s (id = truth id, state k at ``START + k``)."""
    from stonesoup.types.groundtruth import GroundTruthPath, GroundTruthState

    paths = {}
    for k, (X, ids) in enumerate(zip(data.truth, data.truth_ids, strict=True)):
        t = START + datetime.timedelta(seconds=k)
        for x, i in zip(X, ids, strict=True):
            path = paths.setdefault(int(i), GroundTruthPath(id=str(int(i))))
            path.append(GroundTruthState(np.asarray(x, float).reshape(-1, 1), timestamp=t))
    return [paths[i] for i in sorted(paths)]


def gmphd_tracks_table(data, **options):
    """Tidy tracks table (frame, id, score, x, y, var_x, var_y, cov_x_y) of :func:`run_gmphd`."""
    tracks, timestamps = run_gmphd(data, **options)
    return tracks_from_stonesoup(tracks, timestamps, mapping=(0, 1), state=("x", "y"))


def truth_table(data):
    """Tidy truth table (frame, id, x, y) of a scenario file's truth (positions)."""
    import pandas as pd

    rows = [
        {"frame": k, "id": int(i), "x": float(x[0]), "y": float(x[1])}
        for k, (X, ids) in enumerate(zip(data.truth, data.truth_ids, strict=True))
        for x, i in zip(X, ids, strict=True)
    ]
    return pd.DataFrame(rows, columns=["frame", "id", "x", "y"])
