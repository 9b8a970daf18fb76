"""``nb.score``: tidy tables, fill-ins, adapters; values against densities built by hand."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import settings as hyp_settings
from hypothesis import strategies as st
from support.paths import ROOT

import nllbench as nb
from nllbench.measures.evaluate import EvaluationSettings
from nllbench.trackers.scoring import (
    FillIns,
    ScoreCalibration,
    calibration_nll,
    detection_outcomes,
    fit_score_calibration,
    fit_undetected_rate,
    score,
)
from nllbench.trackers.tracks import validate_tracks, validate_truth

EXAMPLES = ROOT / "docs" / "examples"
FOV = ((0.0, 0.0), (50.0, 50.0))


def _random_tables(rng, frames=6, dim_names=("x", "y")):
    """Tracks with r, full covariances and ids; truth near some tracks; some frames empty on one side."""
    tracks, truth = [], []
    for f in range(frames):
        m = int(rng.integers(0, 4)) if f != 2 else 0
        for i in range(m):
            A = rng.normal(size=(2, 2))
            P = A @ A.T + 0.5 * np.eye(2)
            mean = rng.uniform(5, 45, 2)
            tracks.append(
                {
                    "frame": f,
                    "id": i,
                    "r": float(rng.uniform(0.05, 0.95)),
                    "x": mean[0],
                    "y": mean[1],
                    "var_x": P[0, 0],
                    "var_y": P[1, 1],
                    "cov_x_y": P[0, 1],
                }
            )
            if rng.uniform() < 0.7:
                t = mean + rng.normal(scale=0.5, size=2)
                truth.append({"frame": f, "id": 10 + i, "x": t[0], "y": t[1]})
        if f in (2, 4):  # an object no track explains
            t = rng.uniform(5, 45, 2)
            truth.append({"frame": f, "id": 99, "x": t[0], "y": t[1]})
    return pd.DataFrame(tracks), pd.DataFrame(truth, columns=["frame", "id", "x", "y"])


def _by_hand(tracks: pd.DataFrame, truth: pd.DataFrame, frame: int, rate: float):
    """The PMB of one frame and its truth set, built directly from the rows."""
    t = tracks[tracks.frame == frame]
    covs = (
        np.stack([np.array([[a, c], [c, b]]) for a, b, c in zip(t.var_x, t.var_y, t.cov_x_y, strict=True)])
        if len(t)
        else np.empty((0, 2, 2))
    )
    mb = nb.MultiBernoulli.gaussian(t.r.to_numpy(), t[["x", "y"]].to_numpy().reshape(-1, 2), covs)
    ppp = nb.PPP.uniform(rate, FOV[0], FOV[1]) if rate > 0 else None
    y = truth[truth.frame == frame][["x", "y"]].to_numpy().reshape(-1, 2)
    return nb.PMBM(ppp, (mb,), np.ones(1)), y


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_values_equal_nll_of_densities_built_by_hand(seed):
    rng = np.random.default_rng(seed)
    tracks, truth = _random_tables(rng)
    settings = EvaluationSettings(qs=(1, 3, 50))
    res = nb.score(tracks, truth, frames="union", fill=nb.FillIns(0.7, *FOV), settings=settings)
    assert res.frames.tolist() == sorted(set(tracks.frame) | set(truth.frame))
    for k, f in enumerate(res.frames.tolist()):
        density, y = _by_hand(tracks, truth, f, 0.7)
        for j, q in enumerate(settings.qs):
            expected = nb.nll(density, y, q=q)
            assert res.metrics.nll["value"][k, j] == pytest.approx(expected.value, rel=1e-12, abs=1e-12)
            assert res.metrics.nll["lower"][k, j] == pytest.approx(expected.lower, rel=1e-12, abs=1e-12)
            terms = sum(res.metrics.nll[t][k, j] for t in expected.terms())
            assert terms == pytest.approx(res.metrics.nll["value"][k, j], abs=1e-9)
        gospa = nb.gospa(density.hypotheses[0].means[density.hypotheses[0].r > 0.4], y)
        assert res.metrics.gospa[k] == pytest.approx(gospa.value)


def test_empty_frames_have_closed_forms():
    tracks = pd.DataFrame({"frame": [0, 0], "id": [1, 2], "r": [0.3, 0.6], "x": [1.0, 2.0], "y": [1.0, 2.0]})
    truth = pd.DataFrame({"frame": [1, 1], "id": [1, 2], "x": [3.0, 4.0], "y": [5.0, 6.0]})
    rate, vol = 2.0, 50.0 * 50.0
    res = score(
        tracks,
        truth,
        frames="union",
        fill=FillIns(rate, *FOV, default_std=1.0),
        settings=EvaluationSettings(qs=(1,)),
    )
    nll = res.metrics.nll["value"][:, 0]
    # frame 0: no truth -> Lambda - sum log(1 - r); frame 1: no track -> PPP closed form
    assert nll[0] == pytest.approx(rate - math.log(0.7) - math.log(0.4))
    assert nll[1] == pytest.approx(rate - 2 * math.log(rate / vol))
    # an explicit frame list adds frames with no rows anywhere: an empty set, NLL = Lambda
    res = score(
        tracks,
        truth,
        frames=[0, 1, 5],
        fill=FillIns(rate, *FOV, default_std=1.0),
        settings=EvaluationSettings(qs=(1,)),
    )
    assert res.metrics.nll["value"][2, 0] == pytest.approx(rate)
    with pytest.raises(ValueError, match=r"tracks: row 1, column 'frame': frame 0 is not among --frames"):
        score(tracks, truth, frames=[1], fill=FillIns(default_std=1.0))


def test_mixture_file_equals_mbm_built_by_hand():
    res = score(
        EXAMPLES / "tracks_mixture.csv",
        EXAMPLES / "truth.csv",
        frames=[0, 1, 2, 3],
        fill=FillIns(0.5, (0, 0), (100, 100)),
        settings=EvaluationSettings(qs=(20,)),
    )
    ppp = nb.PPP.uniform(0.5, (0, 0), (100, 100))
    h0 = nb.MultiBernoulli.gaussian(
        [0.9, 0.4], [[10.2, 20.1], [40.0, 41.5]], [np.diag([0.5, 0.5]), np.diag([2.0, 1.0])]
    )
    h1 = nb.MultiBernoulli.gaussian([0.8], [[10.5, 19.8]], [np.diag([0.8, 0.8])])
    expected = nb.nll(nb.PMBM(ppp, (h0, h1), [0.7, 0.3]), [[10.0, 20.0]], q=20)
    assert res.metrics.nll["value"][0, 0] == pytest.approx(expected.value, rel=1e-12)
    # frame 1: hypothesis 1 holds no Bernoulli (a placeholder row)
    h0 = nb.MultiBernoulli.gaussian([0.95], [[11.1, 20.9]], [np.diag([0.4, 0.4])])
    expected = nb.nll(nb.PMBM(ppp, (h0, nb.MultiBernoulli.empty(2)), [0.6, 0.4]), [[11.0, 21.0]], q=20)
    assert res.metrics.nll["value"][1, 0] == pytest.approx(expected.value, rel=1e-12)


def test_every_example_file_is_valid_and_parquet_round_trips(tmp_path):
    for name in ("tracks.csv", "tracks_mixture.csv", "tracks_score.csv"):
        df = pd.read_csv(EXAMPLES / name)
        df.to_parquet(tmp_path / "t.parquet", index=False)
        a = validate_tracks(EXAMPLES / name)
        b = validate_tracks(tmp_path / "t.parquet")
        np.testing.assert_array_equal(a.means, b.means)
        assert (a.covs is None) == (b.covs is None)
    validate_truth(EXAMPLES / "truth.csv")


def test_existence_one_is_explicit_and_warns_of_infinity():
    tracks = pd.DataFrame({"frame": [0], "id": [1], "x": [1.0], "y": [1.0]})
    truth = pd.DataFrame({"frame": [0, 1], "id": [1, 1], "x": [1.0, 9.0], "y": [1.0, 9.0]})
    with pytest.raises(ValueError, match="no column 'r' or 'score'"):
        score(tracks, truth, frames="union", fill=FillIns(default_std=1.0))
    with pytest.warns(UserWarning, match="makes that frame's NLL infinite"):
        res = score(
            tracks,
            truth,
            frames="union",
            fill=FillIns(default_std=1.0, existence_one=True),
            settings=EvaluationSettings(qs=(1,)),
        )
    assert res.metrics.nll["value"][0, 0] == pytest.approx(-math.log(1 / (2 * math.pi)))
    assert res.metrics.nll["value"][1, 0] == math.inf  # a missed object with no PPP
    assert res.fill_ins["existence"] == "r = 1 (assumed)"


def test_covariance_needs_columns_or_default_std():
    tracks = pd.DataFrame({"frame": [0], "r": [0.5], "x": [1.0], "y": [1.0]})
    truth = pd.DataFrame({"frame": [0], "id": [1], "x": [1.5], "y": [0.5]})
    with pytest.raises(ValueError, match=r"--default-std"):
        score(tracks, truth)
    with pytest.warns(UserWarning, match="no column 'id'"):
        res = score(tracks, truth, fill=FillIns(default_std=2.0), settings=EvaluationSettings(qs=(1,)))
    mb = nb.MultiBernoulli.gaussian([0.5], [[1.0, 1.0]], [4.0 * np.eye(2)])
    assert res.metrics.nll["value"][0, 0] == pytest.approx(nb.nll(mb, [[1.5, 0.5]]).value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "frame,r,x,y\n0,0.5,1,1\n1,1.5,1,1\n",
            r"t.csv: row 2 \(line 3\), column 'r': expected a probability",
        ),
        ("frame,r,x,y\n0,0.5,1,1\n1.5,0.5,1,1\n", r"row 2 \(line 3\), column 'frame': expected an integer"),
        ("frame,r,x\n0,0.5,1\n", r"t.csv: column 'y' is missing"),
        ("frame,r,x,y\n0,0.5,1,abc\n", r"row 1 \(line 2\), column 'y': expected a number, got 'abc'"),
        ("frame,r,x,y,var_x\n0,0.5,1,1,1\n", r"column 'var_y' is missing"),
        (
            "frame,r,x,y,var_x,var_y\n0,0.5,1,1,1,-1\n",
            r"row 1 \(line 2\), column 'var_x': expected a positive definite",
        ),
        (
            "frame,r,x,y,var_x,var_y,cov_y_x\n0,0.5,1,1,1,1,0\n",
            r"column 'cov_y_x': expected cov_<a>_<b> with a before b",
        ),
        ("frame,r,score,x,y\n0,0.5,1,1,1\n", r"expected column 'r' or column 'score', got both"),
        (
            "frame,id,r,x,y\n0,1,0.5,1,1\n0,1,0.5,2,2\n",
            r"row 2 \(line 3\), column 'id': expected one row per id",
        ),
        (
            "frame,hypothesis,weight,r,x,y\n0,0,0.5,0.5,1,1\n0,0,0.4,0.5,1,1\n",
            r"row 2 \(line 3\), column 'weight'",
        ),
        (
            "frame,hypothesis,weight,r,x,y\n0,0,0.5,0.5,1,1\n0,1,0.4,0.5,1,1\n",
            r"frame 0: expected weights summing to 1",
        ),
        ("frame,hypothesis,r,x,y\n0,0,0.5,1,1\n", r"'hypothesis' and 'weight' go together"),
        ("frame,r,x,y\n0,0.5,,\n", r"row 1 \(line 2\), column 'x'"),
        ("frame,r,x,y\n0,0.5,inf,1\n", r"row 1 \(line 2\), column 'x': expected a finite number"),
    ],
)
def test_track_errors_name_file_row_and_column(tmp_path, text, message):
    path = tmp_path / "t.csv"
    path.write_text(text)
    with pytest.raises(ValueError, match=message):
        validate_tracks(path)


def test_truth_errors_and_state_checks(tmp_path):
    path = tmp_path / "g.csv"
    path.write_text("frame,id,x,y\n0,1,1,1\n0,1,2,2\n")
    with pytest.raises(ValueError, match=r"g.csv: row 2 \(line 3\), column 'id'"):
        validate_truth(path)
    path.write_text("frame,x,y\n0,1,1\n")
    with pytest.raises(ValueError, match=r"column 'id' is missing"):
        validate_truth(path)
    with pytest.raises(ValueError, match="reserved"):
        validate_truth(EXAMPLES / "truth.csv", state=("x", "r"))
    with pytest.raises(ValueError, match=r"expected a \.csv or \.parquet file"):
        validate_truth(tmp_path / "g.txt")
    with pytest.raises(ValueError, match="expected at least 2 columns"):
        score(
            pd.DataFrame({"frame": [0], "r": [0.5], "x": [1.0]}),
            pd.DataFrame({"frame": [0], "id": [0], "x": [1.0]}),
            state=("x",),
            fill=FillIns(default_std=1.0),
        )


def test_fitted_rate_is_the_argmin():
    rng = np.random.default_rng(5)
    tracks, truth = _random_tables(rng, frames=8)
    fill = FillIns(0.0, *FOV)
    settings = EvaluationSettings(qs=(50,))
    fit = fit_undetected_rate(tracks, truth, frames="union", fill=fill, settings=settings)
    rate = fit["rate"]
    assert 0 < rate <= fit["bracket"][1]
    kw = dict(frames="union", fill=fill, settings=settings)
    at = calibration_nll(tracks, truth, rate, **kw)
    assert at == pytest.approx(fit["calibration_nll"])
    for factor in (0.98, 0.995, 1.005, 1.02):
        assert calibration_nll(tracks, truth, rate * factor, **kw) >= at - 1e-9


def test_fitted_rate_closed_form_when_objects_are_far_from_every_track():
    # objects far from every (tiny-covariance) track are explained by the PPP only, so
    # L(rate) = K rate - N log rate + const and the maximum-likelihood rate is N / K
    tracks = pd.DataFrame({"frame": [0, 1, 2, 3], "r": 0.5, "x": 1.0, "y": 1.0, "var_x": 1e-4, "var_y": 1e-4})
    truth = pd.DataFrame(
        {"frame": [0, 0, 2], "id": [1, 2, 1], "x": [40.0, 30.0, 20.0], "y": [40.0, 10.0, 30.0]}
    )
    settings = EvaluationSettings(qs=(1,))
    fit = fit_undetected_rate(tracks, truth, frames="union", fill=FillIns(0.0, *FOV), settings=settings)
    assert fit["rate"] == pytest.approx(3 / 4, rel=1e-6)


def test_score_calibration_solves_the_likelihood_equations():
    rng = np.random.default_rng(3)
    tracks, truth = _random_tables(rng, frames=30)
    tracks = tracks.drop(columns="r")
    o = detection_outcomes(validate_tracks(tracks.assign(r=0.5)), validate_truth(truth), 2.0)
    tracks["score"] = o * 1.0 + rng.normal(size=len(tracks))
    cal = fit_score_calibration(tracks, truth, frames="union")
    p = cal(tracks["score"].to_numpy())
    # logistic maximum likelihood: sum (p - o) = 0 and sum (p - o) x = 0
    assert np.sum(p - o) == pytest.approx(0.0, abs=1e-6)
    assert np.sum((p - o) * tracks["score"]) == pytest.approx(0.0, abs=1e-6)
    separated = tracks.assign(score=o)
    with pytest.raises(ValueError, match="separate matched from unmatched rows perfectly"):
        fit_score_calibration(separated, truth, frames="union")
    res = score(
        tracks,
        truth,
        frames="union",
        fill=FillIns(0.3, *FOV, default_std=None, calibration=cal),
        settings=EvaluationSettings(qs=(1,)),
    )
    assert res.fill_ins["existence"] == "score calibration"
    assert ScoreCalibration(0.0, 1.0)(np.array([0.0]))[0] == 0.5


def test_motchallenge_errors(tmp_path):
    from nllbench.trackers.adapters import read_motchallenge

    path = tmp_path / "m.txt"
    path.write_text("1,1,10,10,5,5,1,-1,-1,-1\n2,1,10,10,0,5,1,-1,-1,-1\n")
    with pytest.raises(ValueError, match=r"m.txt: line 2, column 'bb_width': expected a positive width"):
        read_motchallenge(path)
    path.write_text("1,1,10,10\n")
    with pytest.raises(ValueError, match="expected 6 to 10"):
        read_motchallenge(path)


def test_empty_tables_and_unusable_fill_ins(tmp_path):
    (tmp_path / "t.csv").write_text("frame,r,x,y\n")
    (tmp_path / "g.csv").write_text("frame,id,x,y\n")
    fill = FillIns(1.0, *FOV, default_std=1.0)
    with pytest.raises(ValueError, match="no frames to score"):
        score(tmp_path / "t.csv", tmp_path / "g.csv", fill=fill)
    with pytest.warns(UserWarning, match="no column 'id'"):
        res = score(
            tmp_path / "t.csv",
            tmp_path / "g.csv",
            frames=[0, 1],
            fill=fill,
            settings=EvaluationSettings(qs=(1,)),
        )
    assert res.metrics.nll["value"][:, 0].tolist() == [1.0, 1.0]  # empty truth, empty tracks: NLL = Lambda
    tracks = pd.DataFrame({"frame": [0], "r": [0.5], "x": [1.0], "y": [1.0]})
    with pytest.raises(ValueError, match="silently unused"):
        score(
            tracks,
            pd.DataFrame({"frame": [0], "id": [0], "x": [1.0], "y": [1.0]}),
            fill=FillIns(default_std=1.0, calibration=ScoreCalibration(0.0, 1.0)),
        )
    sure = pd.DataFrame({"frame": [0, 1], "r": [1.0, 1.0], "x": [1.0, 1.0], "y": [1.0, 1.0]})
    truth = pd.DataFrame({"frame": [0], "id": [0], "x": [1.0], "y": [1.0]})
    with pytest.raises(ValueError, match="infinite at every rate"):
        fit_undetected_rate(
            sure,
            truth,
            frames="union",
            fill=FillIns(0.0, *FOV, default_std=1.0),
            settings=EvaluationSettings(qs=(1,)),
        )


def test_fitted_rate_counts_frames_with_no_rows():
    # two empty frames among four: they pull the rate down, as the closed form N / K says
    tracks = pd.DataFrame(
        {"frame": [0], "r": [0.5], "x": [1.0], "y": [1.0], "var_x": [1e-4], "var_y": [1e-4]}
    )
    truth = pd.DataFrame({"frame": [0, 1], "id": [1, 1], "x": [40.0, 30.0], "y": [40.0, 10.0]})
    settings = EvaluationSettings(qs=(1,))
    union = fit_undetected_rate(tracks, truth, frames="union", fill=FillIns(0.0, *FOV), settings=settings)
    every = fit_undetected_rate(
        tracks, truth, frames=[0, 1, 2, 3], fill=FillIns(0.0, *FOV), settings=settings
    )
    assert union["rate"] == pytest.approx(2 / 2, rel=1e-6)
    assert every["rate"] == pytest.approx(2 / 4, rel=1e-6)


def test_full_state_nll_on_four_columns():
    rng = np.random.default_rng(7)
    state = ("x", "y", "vx", "vy")
    means = rng.uniform(0, 10, (3, 4))
    tracks = pd.DataFrame(means, columns=list(state)).assign(frame=0, r=[0.9, 0.5, 0.2])
    for a in state:
        tracks[f"var_{a}"] = 0.5
    tracks["cov_x_vx"] = 0.1
    truth = pd.DataFrame(means[:2] + 0.1, columns=list(state)).assign(frame=0, id=[1, 2])
    fov = (0, 0, -5, -5), (10, 10, 5, 5)
    tracks["id"] = [1, 2, 3]
    # the velocities are uniform on [0, 10], partly outside the box's [-5, 5]: named, and still exact
    with pytest.warns(UserWarning, match="2 truth objects in 1 frame lie outside the fov box"):
        full = score(
            tracks,
            truth,
            state=state,
            fill=FillIns(0.4, *fov),
            settings=EvaluationSettings(qs=(10,), marginal="full"),
        )
    with pytest.warns(UserWarning, match="outside the fov box"):
        pos = score(
            tracks, truth, state=state, fill=FillIns(0.4, *fov), settings=EvaluationSettings(qs=(10,))
        )
    P = 0.5 * np.eye(4)
    P[0, 2] = P[2, 0] = 0.1
    mb = nb.MultiBernoulli.gaussian([0.9, 0.5, 0.2], means, np.stack([P] * 3))
    density = nb.PMBM(nb.PPP.uniform(0.4, *fov), (mb,), [1.0])
    assert full.metrics.nll["value"][0, 0] == pytest.approx(
        nb.nll(density, means[:2] + 0.1, q=10).value, rel=1e-12
    )
    from nllbench.engine.transforms import marginal

    expected = nb.nll(marginal(density, (0, 1)), means[:2, :2] + 0.1, q=10).value
    assert pos.metrics.nll["value"][0, 0] == pytest.approx(expected, rel=1e-12)


@hyp_settings(max_examples=25, deadline=None)
@given(
    rows=st.lists(
        st.tuples(
            st.integers(0, 4),
            st.floats(0, 1),
            st.floats(-1e6, 1e6),
            st.floats(-1e6, 1e6),
            st.floats(1e-6, 1e6),
            st.floats(1e-6, 1e6),
        ),
        max_size=12,
    ),
    suffix=st.sampled_from([".csv", ".parquet"]),
)
def test_tables_round_trip_through_files(tmp_path_factory, rows, suffix):
    """encode (DataFrame -> file) then decode (file -> densities) gives the densities of the DataFrame."""
    df = pd.DataFrame(rows, columns=["frame", "r", "x", "y", "var_x", "var_y"]).astype({"frame": "int64"})
    path = tmp_path_factory.mktemp("rt") / f"t{suffix}"
    df.to_csv(path, index=False) if suffix == ".csv" else df.to_parquet(path, index=False)
    a, b = validate_tracks(df), validate_tracks(path)
    for name in ("frame", "means", "r", "covs"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    frames = np.arange(5)
    from nllbench.trackers.tracks import densities

    for da, db in zip(
        densities(a, frames, a.r, a.covs, None), densities(b, frames, b.r, b.covs, None), strict=True
    ):
        np.testing.assert_array_equal(da.hypotheses[0].r, db.hypotheses[0].r)
        np.testing.assert_array_equal(da.hypotheses[0].means, db.hypotheses[0].means)
