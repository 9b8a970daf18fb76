"""``nb.score`` on py-motmetrics' MOTChallenge files and on real Stone Soup output
(each skipped without it).
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import nllbench as nb
from nllbench.measures.evaluate import EvaluationSettings
from nllbench.trackers.scoring import (
    FillIns,
    score,
)


def test_motchallenge_real_files():
    mm = pytest.importorskip("motmetrics")
    from nllbench.trackers.adapters import read_motchallenge

    data = Path(mm.__file__).parent / "data" / "TUD-Campus"
    truth = read_motchallenge(data / "gt.txt", kind="truth")
    tracks = read_motchallenge(data / "test.txt", conf="ignore", box_std_fraction=0.1)
    raw = pd.read_csv(data / "test.txt", header=None)
    assert len(tracks) == len(raw)
    assert tracks.x[0] == pytest.approx(raw[2][0] + raw[4][0] / 2)
    assert tracks.var_y[0] == pytest.approx((0.1 * raw[5][0]) ** 2)
    fov = (0.0, 0.0), (640.0, 480.0)
    settings = EvaluationSettings(qs=(1, 10), cutoff=50.0, threshold=50.0)
    tracks["r"] = 0.9  # a constant existence probability, as a user would state it
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = score(tracks, truth, fill=FillIns(1.0, *fov), settings=settings)
    assert res.frames[0] == 1 and res.frames.size == len(set(raw[0]) | set(truth.frame))
    k = 3
    f = int(res.frames[k])
    t = tracks[tracks.frame == f]
    mb = nb.MultiBernoulli.gaussian(
        t.r, t[["x", "y"]], np.stack([np.diag(v) for v in t[["var_x", "var_y"]].to_numpy()])
    )
    y = truth[truth.frame == f][["x", "y"]].to_numpy()
    expected = nb.nll(nb.PMBM(nb.PPP.uniform(1.0, *fov), (mb,), [1.0]), y, q=10)
    assert res.metrics.nll["value"][k, 1] == pytest.approx(expected.value, rel=1e-12)
    # MOTA, switches and IDF1 of the box centres agree with py-motmetrics fed the same distances
    acc = mm.MOTAccumulator(auto_id=True)
    for f in res.frames.tolist():
        g, h = truth[truth.frame == f], tracks[tracks.frame == f]
        d = np.linalg.norm(g[["x", "y"]].to_numpy()[:, None] - h[["x", "y"]].to_numpy()[None], axis=2)
        acc.update(g.id.to_numpy(), h.id.to_numpy(), np.where(d <= 50.0, d, np.nan))
    ref = mm.metrics.create().compute(acc, metrics=["mota", "num_switches", "idf1"], name="run").iloc[0]
    assert res.metrics.clear.mota == pytest.approx(ref.mota, abs=1e-12)
    assert res.metrics.clear.switches == ref.num_switches
    assert res.metrics.identity.idf1 == pytest.approx(ref.idf1, abs=1e-12)


def test_stonesoup_existence_probability_becomes_r():
    pytest.importorskip("stonesoup")
    import datetime

    from stonesoup.types.array import StateVectors
    from stonesoup.types.state import BernoulliParticleState
    from stonesoup.types.track import Track

    from nllbench.trackers.adapters import tracks_from_stonesoup

    rng = np.random.default_rng(0)
    t0 = datetime.datetime(2021, 1, 1)
    states = [
        BernoulliParticleState(
            StateVectors(rng.normal(loc=[[k], [0], [2 * k], [0]], size=(4, 300))),
            weight=np.full(300, 1 / 300),
            existence_probability=0.2 + 0.3 * k,
            timestamp=t0 + datetime.timedelta(seconds=k),
        )
        for k in range(3)
    ]
    df = tracks_from_stonesoup([Track(states)], [s.timestamp for s in states])
    assert df["r"].tolist() == pytest.approx([0.2, 0.5, 0.8])
    assert "score" not in df.columns
    assert df.x.tolist() == pytest.approx([float(s.mean[0]) for s in states])
    assert df.y.tolist() == pytest.approx([float(s.mean[2]) for s in states])
    assert df.var_y.tolist() == pytest.approx([float(s.covar[2, 2]) for s in states])
