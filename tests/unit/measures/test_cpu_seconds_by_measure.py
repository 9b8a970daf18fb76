"""The CPU seconds of a run's parts: the clock's laps, and the parts an evaluation charges by name."""

from __future__ import annotations

import time

import numpy as np

from nllbench.examples import example1
from nllbench.measures.evaluate import EvaluationSettings, evaluate_run
from nllbench.measures.run.cpu_clock import DENSITIES, ESTIMATES, CPUClock
from nllbench.measures.selection import MEASURE_NAMES


def _burn(seconds: float) -> None:
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def test_laps_are_charged_to_their_name_and_a_lap_left_out_to_none():
    start = time.process_time()
    clock = CPUClock()
    _burn(0.002)
    clock.charge("a")
    _burn(0.002)
    clock.lap()
    _burn(0.002)
    clock.charge("b")
    clock.charge("a")
    stop = time.process_time()
    assert set(clock.seconds) == {"a", "b"}  # a name never charged is absent
    assert clock.seconds["a"] >= 0.002 and clock.seconds["b"] >= 0.002
    assert clock.seconds["a"] + clock.seconds["b"] + 0.002 <= stop - start


def test_an_evaluation_charges_each_measure_it_computes_and_only_those():
    ex = example1()
    density = ex.trackers["M1"]
    args = ([density], [ex.truth], [np.arange(2)], [0, 0], [10, 10])
    full = evaluate_run(*args)
    computed = set(MEASURE_NAMES) - {"trajectory_nll"}  # attached after the evaluation, by score
    assert set(full.cpu_seconds) == computed | {DENSITIES, ESTIMATES}
    assert all(v >= 0 for v in full.cpu_seconds.values())
    skip = frozenset({"energy_score", "pgospa", "ptgospa", "hota"})
    some = evaluate_run(*args, skip=skip)
    assert set(some.cpu_seconds) == computed - skip | {DENSITIES, ESTIMATES}
    plain = evaluate_run(*args, settings=EvaluationSettings(proper_scores=False))
    assert not {"energy_score", "intensity_score", "cardinality_rps"} & set(plain.cpu_seconds)
    assert not [k for k in full.summary() if "cpu" in k]  # measured: never in the metrics or summary
