"""The trajectory NLL: the one-frame reduction, a switch probe and edges (brute-force sweeps:
tests/integration/test_trajectory_nll_against_brute_force.py)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from support import trajectory_bruteforce as bf
from support.trajectory_cases import BOX, random_case, switch_tables

import nllbench as nb
from nllbench.measures.evaluate import EvaluationSettings
from nllbench.trackers.trajectory_fit import trajectory_nll_windows, windows_table


def _close(a, b, rtol=1e-9):
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= rtol * max(1.0, abs(a), abs(b))


def test_one_frame_with_full_presence_is_the_per_frame_nll():
    rng = np.random.default_rng(3)
    for _ in range(30):
        m, n = int(rng.integers(0, 5)), int(rng.integers(0, 5))
        tracks, truth = random_case(rng, m, n, 1, special=rng.random() < 0.3, row_prob=1.0)
        rate = float(rng.choice([0.0, 0.7, 3.0]))
        res = nb.trajectory_nll(tracks, truth, q=10**4, undetected=(rate, 1.0), fov=BOX, frames=[0])
        covs = np.zeros((len(tracks), 2, 2))
        covs[:, 0, 0], covs[:, 1, 1] = tracks["var_x"], tracks["var_y"]
        covs[:, 0, 1] = covs[:, 1, 0] = tracks["cov_x_y"]
        mb = nb.MultiBernoulli.gaussian(
            tracks["r"].to_numpy(), tracks[["x", "y"]].to_numpy().reshape(-1, 2), covs
        )
        ppp = nb.PPP.uniform(rate, BOX[0], BOX[1]) if rate > 0 else None
        frame = nb.nll(nb.PMBM(ppp, (mb,), [1.0]), truth[["x", "y"]].to_numpy().reshape(-1, 2), q=10**4)
        assert _close(res.value, frame.value, 1e-11), (res.value, frame.value)
        if math.isfinite(frame.value):
            assert _close(res.terms["localization"], frame.localization, 1e-11)
            assert _close(res.terms["false"], frame.false, 1e-11)
            assert _close(res.terms["undetected"], frame.missed, 1e-11)
            assert res.terms["presence"] == 0.0
            assert abs(res.terms["association"] - frame.association) < 1e-9


def test_switch_probe_raises_the_trajectory_nll_only():
    fov = ((-5.0, -5.0), (25.0, 10.0))
    same, truth = switch_tables(False)
    swapped, _ = switch_tables(True)
    fill = nb.FillIns(0.5, fov[0], fov[1])
    settings = EvaluationSettings(qs=(100,))
    a = nb.score(same, truth, fill=fill, settings=settings).per_frame()["nll"].to_numpy()
    b = nb.score(swapped, truth, fill=fill, settings=settings).per_frame()["nll"].to_numpy()
    assert np.array_equal(a, b)  # every frame's NLL is blind to the swap
    kw = dict(q=100, exact=True, undetected=(0.5, 0.5), fov=fov)
    before = nb.trajectory_nll(same, truth, **kw)
    after = nb.trajectory_nll(swapped, truth, **kw)
    assert after.value > before.value + 50
    assert after.exact == pytest.approx(after.value)
    # both truths are now explained worst of all by a label they share half their frames with
    assert before.per_trajectory()["best_label"].tolist() == [11, 12]


# ---------------------------------------------------------------------------
# edges
# ---------------------------------------------------------------------------


def _one(r, frames=(0, 1), truth_frames=(0, 1), ident=1):
    tracks = pd.DataFrame(
        {"frame": list(frames), "id": ident, "r": r, "x": 0.0, "y": 0.0, "var_x": 1.0, "var_y": 1.0}
    )
    truth = pd.DataFrame({"frame": list(truth_frames), "id": 9, "x": 0.1, "y": 0.0})
    return tracks, truth


def test_r_zero_and_one_are_exact():
    tracks, truth = _one([1.0, 1.0])
    res = nb.trajectory_nll(tracks, truth, exact=True)
    want = -2 * math.log(1 / (2 * math.pi) * math.exp(-0.005))
    assert res.value == pytest.approx(want, rel=1e-14) and res.exact == pytest.approx(want, rel=1e-14)
    # r = 1 where the truth is absent: the label cannot explain it; with no undetected fill-in: +inf
    tracks, truth = _one([1.0, 1.0], truth_frames=(0,))
    res = nb.trajectory_nll(tracks, truth, frames=[0, 1])
    assert res.value == math.inf and res.terms["false"] == math.inf and res.impossible_labels == (1,)
    assert not any(math.isnan(v) for v in res.terms.values())
    # r = 0 where the truth is present: +inf, the truth named
    tracks, truth = _one([0.0, 0.5])
    res = nb.trajectory_nll(tracks, truth, exact=True)
    assert res.value == math.inf and res.exact == math.inf and res.impossible == (9,)
    assert res.terms["undetected"] == math.inf and "9" in res.message
    # ... unless undetected trajectories can explain it
    res = nb.trajectory_nll(tracks, truth, undetected=(1.0, 0.5), fov=BOX)
    assert math.isfinite(res.value) and res.per_trajectory()["p_undetected"].tolist() == [1.0]


def test_unlisted_presence_explains_frames_without_a_row():
    tracks, truth = _one([0.9], frames=(1,), truth_frames=(0, 1))  # confirmed at frame 1 only
    res0 = nb.trajectory_nll(tracks, truth, frames=[0, 1])
    assert res0.value == math.inf and res0.impossible == (9,)
    res = nb.trajectory_nll(tracks, truth, frames=[0, 1], unlisted_presence=0.5, fov=BOX, exact=True)
    want = -math.log(0.5 / 36) - math.log(0.9 / (2 * math.pi) * math.exp(-0.005))
    assert res.value == pytest.approx(want, rel=1e-13)
    assert res.fill_ins["unlisted_presence"]["R"] == 0.5
    assert bf.trajectory_nll(tracks, truth, [0, 1], box=BOX, R=0.5) == pytest.approx(want, rel=1e-13)


def test_empty_truth_and_empty_tracks():
    tracks, truth = _one([0.3, 0.6])
    empty_truth = truth.iloc[:0]
    with pytest.raises(
        ValueError, match=r"cover different frames: 2 frames have tracks but no truth \(0..1\)"
    ):
        nb.trajectory_nll(tracks, empty_truth)
    res = nb.trajectory_nll(tracks, empty_truth, frames="union", exact=True)
    assert res.value == pytest.approx(-math.log(0.7 * 0.4), rel=1e-14)
    assert res.terms["false"] == res.value and res.per_trajectory().empty
    res = nb.trajectory_nll(tracks.iloc[:0], truth, frames=[0, 1], undetected=(2.0, 0.5), fov=BOX, exact=True)
    want = 2.0 - math.log(2.0 / (1 - 0.25) * (0.5 / 36) ** 2)
    assert res.value == pytest.approx(want, rel=1e-13) and res.terms["undetected"] == res.value
    res = nb.trajectory_nll(tracks.iloc[:0], truth.iloc[:0], frames=[0, 1], undetected=(2.0, 0.5), fov=BOX)
    assert res.value == 2.0


def test_truth_outside_the_box_is_impossible_for_undetected():
    tracks, truth = _one([0.0, 0.0])
    truth.loc[1, "x"] = 99.0
    res = nb.trajectory_nll(tracks, truth, undetected=(1.0, 0.5), fov=BOX)
    assert res.value == math.inf and res.impossible == (9,)


def test_jointly_impossible_truths_are_named():
    tracks = pd.DataFrame(
        {"frame": [0], "id": [1], "r": [0.5], "x": 0.0, "y": 0.0, "var_x": 1.0, "var_y": 1.0}
    )
    truth = pd.DataFrame({"frame": [0, 0], "id": [4, 5], "x": [0.0, 0.2], "y": 0.0})
    res = nb.trajectory_nll(tracks, truth)
    assert res.value == math.inf and len(res.impossible) == 1 and res.impossible[0] in (4, 5)


def test_mixture_refused_or_scored_by_the_label_marginal():
    rows = []
    for h, w in ((0, 0.3), (1, 0.7)):
        rows.append({"frame": 0, "hypothesis": h, "weight": w, "id": 1, "r": 0.8, "x": h * 1.0, "y": 0.0})
        if h == 1:
            rows.append({"frame": 0, "hypothesis": h, "weight": w, "id": 2, "r": 0.4, "x": 3.0, "y": 1.0})
    for h, w in ((0, 1.0),):
        rows.append({"frame": 1, "hypothesis": h, "weight": w, "id": 1, "r": 0.9, "x": 0.5, "y": 0.0})
    tracks = pd.DataFrame(rows).assign(var_x=1.0, var_y=0.5)
    truth = pd.DataFrame({"frame": [0, 1, 0], "id": [3, 3, 4], "x": [0.4, 0.6, 2.9], "y": [0.0, 0.1, 1.2]})
    with pytest.raises(ValueError, match="global hypotheses"):
        nb.trajectory_nll(tracks, truth)
    res = nb.trajectory_nll(tracks, truth, mixture="marginal", q=100, undetected=(0.5, 0.5), fov=BOX)
    want = bf.trajectory_nll(tracks, truth, [0, 1], rate=0.5, presence=0.5, box=BOX)
    assert res.value == pytest.approx(want, rel=1e-12)
    assert res.fill_ins["mixture"] == "marginal"


def test_windows_are_the_frames_scored_one_window_at_a_time():
    rng = np.random.default_rng(5)
    tracks, truth = random_case(rng, 3, 3, 7, special=False)
    kw = dict(q=50, undetected=(0.5, 0.5), fov=BOX, unlisted_presence=0.1)
    results = trajectory_nll_windows(tracks, truth, 3, frames=list(range(7)), **kw)
    assert [r.frames.tolist() for r in results] == [[0, 1, 2], [3, 4, 5], [6]]
    for res in results:
        fr = res.frames.tolist()
        sub_t = tracks[tracks.frame.isin(fr)]
        sub_y = truth[truth.frame.isin(fr)]
        one = nb.trajectory_nll(sub_t, sub_y, frames=fr, **kw)
        assert one.value == pytest.approx(res.value, rel=1e-12)
        assert one.terms == pytest.approx(res.terms, rel=1e-12, abs=1e-12)
    table = windows_table(results)
    assert table["trajectory_nll"].tolist() == [r.value for r in results]
    with pytest.raises(ValueError, match="window"):
        trajectory_nll_windows(tracks, truth, 0)


def test_bad_arguments_name_themselves():
    tracks, truth = _one([0.5, 0.5])
    with pytest.raises(ValueError, match="q"):
        nb.trajectory_nll(tracks, truth, q=0)
    with pytest.raises(ValueError, match="fov"):
        nb.trajectory_nll(tracks, truth, undetected=(1.0, 0.5))
    with pytest.raises(ValueError, match="fov"):
        nb.trajectory_nll(tracks, truth, unlisted_presence=0.2)
    with pytest.raises(ValueError, match="presence"):
        nb.trajectory_nll(tracks, truth, undetected=(1.0, 0.0), fov=BOX)
    with pytest.raises(ValueError, match="unlisted_presence"):
        nb.trajectory_nll(tracks, truth, unlisted_presence=1.5, fov=BOX)
    with pytest.raises(ValueError, match="'id'"):
        nb.trajectory_nll(tracks.drop(columns="id"), truth)
    with pytest.raises(ValueError, match="undetected rate"):
        nb.trajectory_nll(tracks, truth, fill=nb.FillIns(1.0, BOX[0], BOX[1]))
    with pytest.raises(ValueError, match="mixture"):
        nb.trajectory_nll(tracks, truth, mixture="any")


def test_full_state_and_score_calibration_match_brute_force():
    rng = np.random.default_rng(6)
    tracks, truth = random_case(rng, 3, 2, 3, special=False)
    tracks = tracks.assign(
        vx=rng.normal(size=len(tracks)), vy=rng.normal(size=len(tracks)), var_vx=0.5, var_vy=2.0
    )
    truth = truth.assign(vx=rng.normal(size=len(truth)), vy=rng.normal(size=len(truth)))
    state = ("x", "y", "vx", "vy")
    box = ((-1.0, -1.0, -5.0, -5.0), (5.0, 5.0, 5.0, 5.0))
    kw = dict(rate=0.5, presence=0.5, box=box, R=0.2, state=state)
    for full, dims in ((True, (0, 1, 2, 3)), (False, (0, 1))):
        want = bf.trajectory_nll(tracks, truth, [0, 1, 2], dims=dims, **kw)
        res = nb.trajectory_nll(
            tracks,
            truth,
            q=10**5,
            state=state,
            full_state=full,
            undetected=(0.5, 0.5),
            fov=box,
            unlisted_presence=0.2,
            frames=[0, 1, 2],
        )
        assert res.value == pytest.approx(want, rel=1e-10)
        assert res.fill_ins["marginal"] == ("full" if full else "position")
    # a score column through a calibration is the r column it maps to
    from nllbench.trackers.scoring import ScoreCalibration

    cal = ScoreCalibration(0.3, 2.0)
    scored = tracks.drop(columns="r").assign(score=rng.normal(size=len(tracks)))
    kw = dict(state=state, undetected=(0.5, 0.5), fov=box, frames="union")
    a = nb.trajectory_nll(scored, truth, fill=nb.FillIns(calibration=cal), **kw)
    b = nb.trajectory_nll(scored.assign(r=cal(scored["score"])).drop(columns="score"), truth, **kw)
    assert a.value == b.value and a.fill_ins["existence"] == "score calibration"


def test_exact_refuses_a_component_too_large_and_bounds_stay_certified():
    rng = np.random.default_rng(7)
    tracks, truth = random_case(rng, 22, 22, 1, special=False, row_prob=1.0)
    with pytest.raises(ValueError, match="exact: a connected component of 22 truth"):
        nb.trajectory_nll(tracks, truth, exact=True, undetected=(1.0, 1.0), fov=BOX)
    res = nb.trajectory_nll(tracks, truth, q=50, undetected=(1.0, 1.0), fov=BOX)
    assert res.lower < res.value and not res.complete and res.n_terms == 50
