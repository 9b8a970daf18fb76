"""Stone Soup YAML files: only tracking types are built, checked tag by tag before anything is constructed."""

from __future__ import annotations

import datetime

import numpy as np
import pytest

T0 = datetime.datetime(2021, 1, 1)


def _writer_yaml(tmp_path):
    """A YAML file whose second key holds a Stone Soup YAMLWriter aimed at a file of the user's."""
    victim = tmp_path / "precious.csv"
    victim.write_text("frame,id,x,y\n1,1,0.0,0.0\n")
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        f"tracks: []\nwriter: !stonesoup.writer.yaml.YAMLWriter\n- path: {victim}\n- groundtruth_source: 1\n"
    )
    return bad, victim


def test_a_stonesoup_yaml_holding_a_writer_is_refused_by_tag_and_line_and_its_target_is_intact(tmp_path):
    pytest.importorskip("stonesoup")
    from nllbench.trackers.stonesoup_yaml import load_stonesoup_yaml

    bad, victim = _writer_yaml(tmp_path)
    before = victim.read_bytes()
    with pytest.raises(
        ValueError, match=r"bad.yaml', line 2: tag '!stonesoup.writer.yaml.YAMLWriter' is not"
    ):
        load_stonesoup_yaml(bad)
    assert victim.read_bytes() == before


@pytest.mark.parametrize(
    "tag",
    [
        "!stonesoup.reader.yaml.YAMLTrackReader",
        "!pathlib.Path",
        "!stonesoup.types.state.np",  # a name an allowed module imported, not a class defined there
        "!stonesoup.types.track.Track.__init__",
        "!!python/object/apply:os.system",
        "!my.own.Thing",
    ],
)
def test_any_tag_but_a_tracking_types_is_refused_by_name(tmp_path, tag):
    pytest.importorskip("stonesoup")
    from nllbench.trackers.stonesoup_yaml import load_stonesoup_yaml

    path = tmp_path / "t.yaml"
    path.write_text(f"# a comment\n- {tag} [1]\n")
    shown = tag.replace("!!", "tag:yaml.org,2002:")
    with pytest.raises(ValueError, match=r"line 2: tag '" + shown.replace(".", r"\.") + "'"):
        load_stonesoup_yaml(path)


def test_a_track_of_updates_hypotheses_detections_and_models_loads_whole(tmp_path):
    """What a Kalman tracker's tracks hold (as Stone Soup 1.9.1 writes them) passes the tag check."""
    pytest.importorskip("stonesoup")
    from stonesoup.models.measurement.linear import LinearGaussian
    from stonesoup.models.transition.linear import CombinedLinearGaussianTransitionModel, ConstantVelocity
    from stonesoup.serialise import YAML
    from stonesoup.types.detection import Detection, MissedDetection
    from stonesoup.types.hypothesis import SingleProbabilityHypothesis
    from stonesoup.types.numeric import Probability
    from stonesoup.types.prediction import GaussianStatePrediction
    from stonesoup.types.track import Track
    from stonesoup.types.update import GaussianStateUpdate

    from nllbench.trackers.stonesoup_yaml import load_stonesoup_yaml

    model = CombinedLinearGaussianTransitionModel([ConstantVelocity(0.1), ConstantVelocity(0.1)])
    sensor = LinearGaussian(4, (0, 2), np.eye(2))
    states = []
    for k in range(3):
        t = T0 + datetime.timedelta(seconds=k)
        pred = GaussianStatePrediction([[k], [1], [0], [0]], np.eye(4), timestamp=t, transition_model=model)
        det = (
            Detection([[k], [0]], timestamp=t, measurement_model=sensor)
            if k != 1
            else MissedDetection(timestamp=t)
        )
        hyp = SingleProbabilityHypothesis(pred, det, Probability(0.5))
        states.append(GaussianStateUpdate(pred.state_vector, pred.covar, hyp, timestamp=t))
    track = Track(states, id="a")
    path = tmp_path / "tracks.yaml"
    with open(path, "w") as fh:
        YAML().dump({track}, fh)
    loaded = load_stonesoup_yaml(path)
    (back,) = loaded.tracks
    assert back.id == "a" and [s.timestamp for s in back.states] == [s.timestamp for s in states]
    np.testing.assert_array_equal(back.states[2].state_vector, states[2].state_vector)
