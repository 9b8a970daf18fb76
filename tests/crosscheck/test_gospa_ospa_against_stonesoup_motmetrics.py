"""Agreement with the peers' implementations (optional test extras: stonesoup, motmetrics).

Install them with ``pip install -e ".[test,crosscheck]"``; without them these
tests are skipped with the reason.
"""

from __future__ import annotations

import numpy as np
import pytest

import nllbench as nb
from nllbench.measures.metrics import clear_mot, identity_scores, ospa


def random_frames(rng, K):
    T, TI, E, EI = [], [], [], []
    for _ in range(K):
        n, m = int(rng.integers(0, 5)), int(rng.integers(0, 5))
        T.append(rng.uniform(0, 5, (n, 2)))
        TI.append(rng.choice(6, n, replace=False))
        E.append(rng.uniform(0, 5, (m, 2)))
        EI.append(rng.choice(7, m, replace=False))
    return T, TI, E, EI


def test_gospa_and_ospa_agree_with_stone_soup():
    ospametric = pytest.importorskip("stonesoup.metricgenerator.ospametric")
    from stonesoup.measures import Euclidean
    from stonesoup.types.state import State

    rng = np.random.default_rng(1)
    g = ospametric.GOSPAMetric(c=2.0, p=1, measure=Euclidean())
    o = ospametric.OSPAMetric(c=2.0, p=1, measure=Euclidean())
    for _ in range(150):
        X = rng.uniform(0, 6, (int(rng.integers(0, 6)), 2))
        Y = rng.uniform(0, 6, (int(rng.integers(0, 6)), 2))
        if not (len(X) or len(Y)):
            continue  # Stone Soup cannot take two empty sets (no timestamp)
        sx = [State(x.reshape(-1, 1)) for x in X]
        sy = [State(y.reshape(-1, 1)) for y in Y]
        ref, _ = g.compute_gospa_metric(sx, sy)
        ours = nb.gospa(X, Y, c=2.0, p=1)
        assert ours.value == pytest.approx(float(ref.value["distance"]), abs=1e-9)
        assert ours.localization == pytest.approx(float(ref.value["localisation"]), abs=1e-9)
        assert ours.missed == pytest.approx(float(ref.value["missed"]), abs=1e-9)
        assert ours.false == pytest.approx(float(ref.value["false"]), abs=1e-9)
        assert ospa(X, Y, c=2.0, p=1).value == pytest.approx(
            float(o.compute_OSPA_distance(sx, sy).value), abs=1e-9
        )


def test_clear_mot_and_idf1_agree_with_py_motmetrics():
    mm = pytest.importorskip("motmetrics")
    rng = np.random.default_rng(2)
    for _ in range(150):
        T, TI, E, EI = random_frames(rng, int(rng.integers(1, 9)))
        acc = mm.MOTAccumulator(auto_id=True)
        for Y, oid, X, hid in zip(T, TI, E, EI, strict=True):
            d = (
                np.linalg.norm(Y[:, None] - X[None], axis=2)
                if len(Y) and len(X)
                else np.empty((len(Y), len(X)))
            )
            acc.update(oid, hid, np.where(d <= 2.0, d, np.nan))
        names = ["mota", "motp", "num_switches", "num_misses", "num_false_positives", "idf1", "num_objects"]
        ref = mm.metrics.create().compute(acc, metrics=names, name="run").iloc[0]
        ours = clear_mot(T, TI, E, EI, threshold=2.0)
        ids = identity_scores(T, TI, E, EI, threshold=2.0)
        assert ours.switches == ref.num_switches and ours.misses == ref.num_misses
        assert ours.false_positives == ref.num_false_positives
        if ours.num_objects:
            assert ours.mota == pytest.approx(ref.mota, abs=1e-12)
            assert ids.idf1 == pytest.approx(ref.idf1, abs=1e-12)
        if ours.matches + ours.switches:
            assert ours.motp == pytest.approx(ref.motp, abs=1e-12)  # fed Euclidean distances
