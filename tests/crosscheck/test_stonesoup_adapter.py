"""Stone Soup adapter on output the real library produced in the test (the ``crosscheck`` extra).

Truth paths as the truth table, existence read where Stone Soup keeps it
(a Bernoulli particle filter's state, track metadata), and the calibrated
missed-detection score of JPDA and GNN trackers, which keep no existence.
"""

from __future__ import annotations

import datetime

import numpy as np
import pandas as pd
import pytest

import nllbench as nb
from nllbench.cli import main
from nllbench.measures.evaluate import EvaluationSettings

pytest.importorskip("stonesoup")

from nllbench.store import read_scenario  # noqa: E402
from nllbench.trackers.adapters import tracks_from_stonesoup, truth_from_stonesoup  # noqa: E402
from nllbench.trackers.fitting import fit_score_calibration  # noqa: E402
from nllbench.trackers.scoring import ScoreCalibration  # noqa: E402
from nllbench.trackers.stonesoup_existence import missed_detection_probability  # noqa: E402
from nllbench.trackers.stonesoup_tracker import run_association, truth_paths, truth_table  # noqa: E402

BOX = ((0.0, 0.0), (300.0, 300.0))


@pytest.fixture(scope="module")
def scenarios(tmp_path_factory):
    out = {}
    for seed in (1, 2):
        path = tmp_path_factory.mktemp("sc") / f"seed{seed}.nc"
        args = ["simulate", "--scenario", "williams15", "--seed", str(seed), "--steps", "30", "-o", str(path)]
        assert main(args) == 0
        out[seed] = read_scenario(path)
    return out


@pytest.fixture(scope="module")
def jpda_runs(scenarios):
    return {seed: run_association(data, associator="jpda") for seed, data in scenarios.items()}


# ---------------------------------------------------------------------------
# truth paths


def test_ground_truth_paths_give_the_simulated_truth(scenarios):
    data = scenarios[1]
    paths = truth_paths(data)
    truth = truth_from_stonesoup(paths, mapping=(0, 1, 2, 3), state=("x", "y", "vx", "vy"))
    # id i of the table is Stone Soup path attrs["stonesoup_ids"][i], here the simulated truth id
    ids = np.array([int(s) for s in truth.attrs["stonesoup_ids"]])
    got = truth.assign(id=ids[truth.id.to_numpy()]).sort_values(["frame", "id"]).reset_index(drop=True)
    for k in range(data.steps):
        rows = got[got.frame == k]
        order = np.argsort(data.truth_ids[k])
        assert rows.id.tolist() == np.asarray(data.truth_ids[k])[order].tolist()
        np.testing.assert_array_equal(rows[["x", "y", "vx", "vy"]].to_numpy(), data.truth[k][order])
    positions = truth_from_stonesoup(paths, mapping=(0, 1))
    expected = truth_table(data)
    expected = expected.assign(id=[truth.attrs["stonesoup_ids"].index(str(i)) for i in expected.id])
    expected = expected.sort_values(["frame", "id"]).reset_index(drop=True)
    pd.testing.assert_frame_equal(positions, expected)


def test_truth_paths_refuse_two_states_at_one_time_and_a_short_state():
    from stonesoup.types.groundtruth import GroundTruthPath, GroundTruthState

    t = datetime.datetime(2021, 1, 1)
    twice = GroundTruthPath(
        [GroundTruthState([[0], [0]], timestamp=t), GroundTruthState([[1], [1]], timestamp=t)]
    )
    with pytest.raises(ValueError, match="expected one state per time, got two at 2021-01-01 00:00:00"):
        truth_from_stonesoup([twice], mapping=(0, 1))
    with pytest.raises(ValueError, match=r"mapping \[0, 2\] needs more than the state's 2 components"):
        truth_from_stonesoup([GroundTruthPath([GroundTruthState([[0], [0]], timestamp=t)])])


# ---------------------------------------------------------------------------
# existence kept by the tracker: a Bernoulli particle filter's state, track metadata


def _bernoulli_track(steps=8, metadata=None):
    """A Stone Soup Bernoulli particle filter on one object with clutter; detections may carry metadata."""
    from stonesoup.models.measurement.linear import LinearGaussian
    from stonesoup.models.transition.linear import CombinedLinearGaussianTransitionModel, ConstantVelocity
    from stonesoup.predictor.particle import BernoulliParticlePredictor
    from stonesoup.resampler.particle import SystematicResampler
    from stonesoup.sampler.detection import GaussianDetectionParticleSampler, SwitchingDetectionSampler
    from stonesoup.sampler.particle import ParticleSampler
    from stonesoup.types.detection import Clutter, Detection, MissedDetection
    from stonesoup.types.hypothesis import SingleProbabilityHypothesis
    from stonesoup.types.multihypothesis import MultipleHypothesis
    from stonesoup.types.state import BernoulliParticleState
    from stonesoup.types.track import Track
    from stonesoup.updater.particle import BernoulliParticleUpdater

    rng = np.random.default_rng(3)
    np.random.seed(3)  # noqa: NPY002 (Stone Soup's samplers draw from numpy's global generator)
    t0 = datetime.datetime(2021, 1, 1)
    transition = CombinedLinearGaussianTransitionModel([ConstantVelocity(0.05), ConstantVelocity(0.05)])
    measurement = LinearGaussian(ndim_state=4, mapping=(0, 2), noise_covar=np.eye(2))
    n = 300
    backup = ParticleSampler(
        distribution_func=np.random.multivariate_normal,
        params={"mean": [20.0, 1.0, 20.0, 0.5], "cov": np.diag([25.0, 1.0, 25.0, 1.0]), "size": n},
        ndim_state=4,
    )
    predictor = BernoulliParticlePredictor(
        transition,
        birth_probability=0.05,
        survival_probability=0.95,
        birth_sampler=SwitchingDetectionSampler(GaussianDetectionParticleSampler(n), backup),
    )
    updater = BernoulliParticleUpdater(
        measurement,
        resampler=SystematicResampler(),
        clutter_rate=2,
        clutter_distribution=1 / 60.0**2,
        detection_probability=0.9,
        nsurv_particles=n,
    )
    prior = backup.sample()
    state = BernoulliParticleState(
        prior.state_vector, log_weight=np.full(n, -np.log(n)), existence_probability=0.5, timestamp=t0
    )
    track, truth = Track(), []
    x = np.array([20.0, 1.0, 20.0, 0.5])
    for k in range(1, steps + 1):
        t = t0 + datetime.timedelta(seconds=k)
        x = x + np.array([x[1], 0, x[3], 0])
        truth.append((t, x.copy()))
        meta = None if metadata is None else {"existence_probability": metadata(k)}
        dets = {
            Clutter(rng.uniform(0, 60, (2, 1)), timestamp=t, measurement_model=measurement) for _ in range(2)
        }
        if k % 4:  # missed at every 4th step
            dets.add(
                Detection((x[[0, 2]] + rng.normal(size=2)).reshape(-1, 1), t, measurement, metadata=meta)
            )
        prediction = predictor.predict(state, timestamp=t)
        # probability hypotheses (equal): Stone Soup's Track sorts them to copy detection metadata
        hyps = [SingleProbabilityHypothesis(prediction, d, probability=1.0) for d in dets] or [
            SingleProbabilityHypothesis(prediction, MissedDetection(timestamp=t), probability=1.0)
        ]
        state = updater.update(MultipleHypothesis(hyps))
        track.append(state)
    return track, truth


def test_bernoulli_particle_filter_existence_is_read_from_its_states():
    from stonesoup.types.groundtruth import GroundTruthPath, GroundTruthState

    track, truth = _bernoulli_track()
    path = GroundTruthPath([GroundTruthState(x.reshape(-1, 1), timestamp=t) for t, x in truth])
    df = tracks_from_stonesoup([track], truth=[path])
    assert "score" not in df.columns
    own = [float(s.existence_probability) for s in track.states]
    assert df["r"].tolist() == own  # bit for bit the tracker's own
    assert len(set(own)) > 1 and 0 < min(own) and max(own) < 1
    assert df.x.tolist() == pytest.approx([float(s.mean[0]) for s in track.states])
    res = nb.score(df, truth_from_stonesoup([path]), fill=nb.FillIns(0.01, (0, 0), (60, 60)))
    assert np.isfinite(res.metrics.nll["value"]).all()


def test_existence_from_track_metadata_and_ambiguity_refused():
    from stonesoup.dataassociator.neighbour import GNNWith2DAssignment
    from stonesoup.deleter.time import UpdateTimeStepsDeleter
    from stonesoup.hypothesiser.distance import DistanceHypothesiser
    from stonesoup.initiator.simple import SimpleMeasurementInitiator
    from stonesoup.measures import Mahalanobis
    from stonesoup.models.measurement.linear import LinearGaussian
    from stonesoup.models.transition.linear import CombinedLinearGaussianTransitionModel, ConstantVelocity
    from stonesoup.predictor.kalman import KalmanPredictor
    from stonesoup.tracker.simple import MultiTargetTracker
    from stonesoup.types.detection import Detection
    from stonesoup.types.state import GaussianState
    from stonesoup.updater.kalman import KalmanUpdater

    # a GNN tracker whose detector reports an existence with each detection: Stone Soup copies a
    # detection's metadata into the track's metadata (Track.metadatas, one per state)
    t0 = datetime.datetime(2021, 1, 1)
    transition = CombinedLinearGaussianTransitionModel([ConstantVelocity(0.05), ConstantVelocity(0.05)])
    measurement = LinearGaussian(ndim_state=4, mapping=(0, 2), noise_covar=np.eye(2))
    predictor, updater = KalmanPredictor(transition), KalmanUpdater(measurement)
    scans = []
    for k in range(6):
        t = t0 + datetime.timedelta(seconds=k)
        dets = set()
        for j, (x, y) in enumerate([(10.0 + k, 10.0), (40.0, 30.0 - k)]):
            if (k, j) != (3, 0):  # object 0 missed at step 3: its track keeps the last metadata
                meta = {"existence_probability": round(0.5 + 0.08 * k + 0.01 * j, 6)}
                dets.add(Detection([[x], [y]], timestamp=t, measurement_model=measurement, metadata=meta))
        scans.append((t, dets))
    tracker = MultiTargetTracker(
        initiator=SimpleMeasurementInitiator(
            GaussianState([[0], [0], [0], [0]], np.diag([4, 1, 4, 1])), measurement
        ),
        deleter=UpdateTimeStepsDeleter(3),
        detector=scans,
        data_associator=GNNWith2DAssignment(DistanceHypothesiser(predictor, updater, Mahalanobis(), 10)),
        updater=updater,
    )
    tracks = set()
    for _, current in tracker:
        tracks |= current
    assert len(tracks) == 2
    df = tracks_from_stonesoup(tracks, [t for t, _ in scans])
    assert "r" in df.columns and "score" not in df.columns
    ordered = sorted(tracks, key=lambda t: str(t.id))
    for i, track in enumerate(ordered):
        own = [md["existence_probability"] for md in track.metadatas]
        assert df[df.id == i].r.tolist() == own
    missed = df[(df.frame == 3) & (df.r == df[df.frame == 2].r.min())]
    assert len(missed) == 1  # the missed step keeps its track's metadata of step 2
    # metadata_key=None: not read, and the tracker's Gaussian states have no weight: no column
    assert not {"r", "score"} & set(tracks_from_stonesoup(tracks, [t for t, _ in scans], metadata_key=None))
    # a state that keeps existence_probability and metadata that differ is ambiguous
    bern, truth = _bernoulli_track(steps=3, metadata=lambda k: 0.123)
    with pytest.raises(ValueError, match=r"ambiguous existence: the state's existence_probability is .* "):
        tracks_from_stonesoup([bern], [t for t, _ in truth])
    r = tracks_from_stonesoup([bern], [t for t, _ in truth], metadata_key=None).r.tolist()
    assert r == [float(s.existence_probability) for s in bern.states]
    with pytest.raises(ValueError, match="existence: expected 'auto', 'missed_detection' or 'none'"):
        tracks_from_stonesoup([bern], [t for t, _ in truth], existence="weight")


# ---------------------------------------------------------------------------
# JPDA and GNN keep no existence: the missed-detection weight, calibrated


def _missed_weight_by_hand(state):
    """The JPDA's normalised probability of its MissedDetection hypothesis (0 / 1 without probabilities)."""
    from stonesoup.types.detection import MissedDetection
    from stonesoup.types.multihypothesis import MultipleHypothesis

    h = getattr(state, "hypothesis", None)
    if isinstance(h, MultipleHypothesis):
        p = {id(s): float(s.probability) for s in h}
        miss = sum(p[id(s)] for s in h if isinstance(s.measurement, MissedDetection))
        return miss / sum(p.values())
    return 1.0 if h is None or isinstance(h.measurement, MissedDetection) else 0.0


def test_jpda_score_is_one_minus_its_missed_detection_weight(jpda_runs):
    from stonesoup.types.multihypothesis import MultipleHypothesis

    tracks, stamps = jpda_runs[1]
    df = tracks_from_stonesoup(tracks, stamps, mapping=(0, 1), existence="missed_detection")
    assert "score" in df.columns and "r" not in df.columns
    expected = []
    kinds = set()
    for i, track in enumerate(sorted(tracks, key=lambda t: str(t.id))):
        for s in track.states:
            kinds.add(type(s.hypothesis).__name__ if getattr(s, "hypothesis", None) is not None else None)
            expected.append((stamps.index(s.timestamp), i, 1.0 - _missed_weight_by_hand(s)))
    assert {"MultipleHypothesis", None} <= kinds  # the run had JPDA updates and missed steps
    got = np.array(sorted(zip(df.frame, df.id, df.score, strict=True)))
    np.testing.assert_allclose(got, np.array(sorted(expected)), rtol=0, atol=1e-15)
    jpda = [
        s for t in tracks for s in t.states if isinstance(getattr(s, "hypothesis", None), MultipleHypothesis)
    ]
    inner = [missed_detection_probability(s) for s in jpda]
    assert any(0.0 < m < 1.0 for m in inner)  # genuinely soft association probabilities
    # window=3: the mean over the last three states of each track
    w3 = tracks_from_stonesoup(tracks, stamps, mapping=(0, 1), existence="missed_detection", window=3)
    first = sorted(tracks, key=lambda t: str(t.id))[0]
    m = [1.0 - _missed_weight_by_hand(s) for s in first.states]
    want = [np.mean(m[max(0, j - 2) : j + 1]) for j in range(len(m))]
    assert w3[w3.id == 0].sort_values("frame").score.tolist() == pytest.approx(want)
    with pytest.raises(ValueError, match="window: expected a positive integer, got 0"):
        tracks_from_stonesoup(tracks, stamps, mapping=(0, 1), existence="missed_detection", window=0)


def test_jpda_score_is_calibrated_on_a_run_and_scores_another(scenarios, jpda_runs):
    cal_tracks, cal_stamps = jpda_runs[1]
    cal = tracks_from_stonesoup(cal_tracks, cal_stamps, mapping=(0, 1), existence="missed_detection")
    fit = fit_score_calibration(cal, truth_table(scenarios[1]), frames=list(range(scenarios[1].steps)))
    assert fit.n_rows == len(cal) and 0 < fit.n_detections < len(cal)
    r = fit(cal.score.to_numpy())
    assert np.all((r > 0) & (r < 1)) and np.unique(r).size > 2  # calibrated, and the score varies
    tracks, stamps = jpda_runs[2]
    paths = truth_paths(scenarios[2])
    test = tracks_from_stonesoup(tracks, truth=paths, mapping=(0, 1), existence="missed_detection")
    truth = truth_from_stonesoup(paths, mapping=(0, 1))
    settings = EvaluationSettings(qs=(5,))
    fill = nb.FillIns(0.05, *BOX, calibration=fit)
    res = nb.score(test, truth, frames=list(range(scenarios[2].steps)), fill=fill, settings=settings)
    assert np.isfinite(res.metrics.nll["value"]).all()
    assert res.fill_ins["score_calibration"]["slope"] == fit.slope
    # the same table with r = the calibrated score, built by hand, scores the same
    by_hand = test.drop(columns="score").assign(r=fit(test.score.to_numpy()))
    ref = nb.score(
        by_hand, truth, frames=list(range(scenarios[2].steps)), fill=nb.FillIns(0.05, *BOX), settings=settings
    )
    np.testing.assert_array_equal(res.metrics.nll["value"], ref.metrics.nll["value"])


def test_gnn_score_is_one_on_updates_and_zero_on_missed_steps(scenarios):
    from stonesoup.types.update import Update

    tracks, stamps = run_association(scenarios[1], associator="gnn")
    df = tracks_from_stonesoup(tracks, stamps, mapping=(0, 1), existence="missed_detection")
    updated = [isinstance(s, Update) for t in sorted(tracks, key=lambda t: str(t.id)) for s in t.states]
    assert sorted(set(updated)) == [False, True]
    rows = df.sort_values(["id", "frame"]).score.tolist()
    assert rows == [1.0 if u else 0.0 for u in updated]
    fill = nb.FillIns(0.05, *BOX, calibration=ScoreCalibration(-1.0, 3.0))
    res = nb.score(df, truth_table(scenarios[1]), fill=fill, settings=EvaluationSettings(qs=(5,)))
    assert np.isfinite(res.metrics.nll["value"]).all()
