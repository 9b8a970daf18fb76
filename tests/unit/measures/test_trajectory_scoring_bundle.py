"""The trajectory NLL's scoring parameters as one frozen record (``TrajectoryScoring``); the older
keyword call of ``score_statistics`` / ``score_window`` gives the very same result."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest

from nllbench.measures.likelihood.trajectory_windows import (
    TrajectoryScoring,
    score_statistics,
    score_window,
    window_statistics,
)
from nllbench.trackers.trajectory_tables import input_and_scoring

TRACKS = pd.DataFrame(
    {
        "frame": [0, 0, 1, 1, 2],
        "id": [1, 2, 1, 2, 1],
        "r": [0.9, 0.6, 0.8, 0.5, 0.7],
        "x": [0.0, 3.0, 0.5, 3.2, 1.0],
        "y": [0.0, 1.0, 0.2, 1.1, 0.4],
        "var_x": [1.0, 0.5, 1.0, 0.5, 1.2],
        "var_y": [1.0, 0.5, 1.0, 0.5, 1.2],
    }
)
TRUTH = pd.DataFrame(
    {"frame": [0, 1, 2, 0, 1], "id": [5, 5, 5, 6, 6], "x": [0.1, 0.4, 1.1, 2.9, 3.3], "y": 0.0}
)
BOX = ((-1.0, -1.0), (5.0, 5.0))


@pytest.fixture(scope="module")
def window():
    inp, scoring = input_and_scoring(
        TRACKS, TRUTH, q=4, undetected=(0.5, 0.6), unlisted_presence=0.1, fov=BOX, state=("x", "y")
    )
    stats, lab, tru, spans = window_statistics(inp)
    return (stats, inp.labels[lab], inp.truths[tru], inp.frames, spans), scoring


def test_prepared_gives_a_frozen_record(window):
    _, scoring = window
    assert isinstance(scoring, TrajectoryScoring)
    assert (scoring.q, scoring.rate, scoring.presence, scoring.unlisted_presence) == (4, 0.5, 0.6, 0.1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        scoring.q = 5


def test_the_keyword_call_and_the_record_give_the_same_result(window):
    args, scoring = window
    by_record = score_statistics(*args, scoring, exact=True)
    by_keywords = score_statistics(
        *args, exact=True, **{f.name: getattr(scoring, f.name) for f in dataclasses.fields(scoring)}
    )
    assert math.isfinite(by_record.value)
    assert by_record.value == by_keywords.value and by_record.exact == by_keywords.exact
    assert by_record.terms == by_keywords.terms and by_record.fill_ins == by_keywords.fill_ins
    np.testing.assert_array_equal(by_record.posterior, by_keywords.posterior)
    res, note = score_window(*args, scoring=scoring, exact=True)
    assert res.value == by_record.value and note == ""
    res, note = score_window(
        *args, exact=False, q=4, rate=0.5, presence=0.6, unlisted_presence=0.1, fill_ins={}
    )
    assert res.value == by_record.value and res.fill_ins == {}


def test_with_fill_ins_adds_after_and_leaves_the_record_as_it_was(window):
    _, scoring = window
    more = scoring.with_fill_ins(window=3)
    assert list(more.fill_ins) == [*scoring.fill_ins, "window"] and "window" not in scoring.fill_ins
    assert dataclasses.replace(more, fill_ins=scoring.fill_ins) == scoring


def test_record_and_keywords_together_missing_or_unknown_keywords_are_refused(window):
    args, scoring = window
    with pytest.raises(TypeError, match="give one or the other"):
        score_statistics(*args, scoring, exact=False, q=3)
    with pytest.raises(TypeError, match=r"missing \['presence', 'unlisted_presence', 'fill_ins'\]"):
        score_statistics(*args, exact=False, q=3, rate=0.0)
    with pytest.raises(TypeError, match=r"unexpected keywords \['budget'\]"):
        score_statistics(*args, exact=False, budget=3)
    with pytest.raises(TypeError, match="scoring: expected a TrajectoryScoring, got dict"):
        score_statistics(*args, {"q": 3}, exact=False)
