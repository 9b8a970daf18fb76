"""3-D and bird's-eye scenes: the distance columns, the av2 / nuScenes / Mahalanobis presets.

Each preset is checked on small cases computed by hand, by brute force
(explicit inverses, whitened coordinates) and against the peers' code where
it runs offline: TrackEval's CLEAR (the ``crosscheck`` extra), py-motmetrics
fed the nuScenes devkit's distance matrix, and the Argoverse 2 package's own
tracking evaluation (``av2``; not an extra, since ``pip install av2`` pulls in
torch: that comparison is a slow test skipped without it).
"""

from __future__ import annotations

import json
import math
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from support.bev_cases import ONE, XYZ, random_frames, scored, spd, tables

import nllbench as nb
from nllbench.filters.estimates import estimate
from nllbench.measures._sequences import distances
from nllbench.measures.evaluate import EvaluationSettings, evaluate_run
from nllbench.measures.hota import ALPHAS
from nllbench.measures.metrics import clear_mot, identity_scores
from nllbench.measures.presets import PRESETS, chi_square_gate, preset_settings, preset_values
from nllbench.store import read_metrics, write_metrics

# --- distances --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("d", [1, 2, 3, 4])
def test_mahalanobis_distance_against_the_explicit_inverse(d):
    rng = np.random.default_rng(d)
    for _ in range(20):
        n, m = int(rng.integers(1, 5)), int(rng.integers(1, 5))
        X, M, P = rng.normal(0, 3, (n, d)), rng.normal(0, 3, (m, d)), spd(rng, m, d)
        ours = distances(X, M, np.linalg.cholesky(P))
        diff = X[:, None, :] - M[None, :, :]
        ref = np.sqrt(np.einsum("nmi,mij,nmj->nm", diff, np.linalg.inv(P), diff))
        np.testing.assert_allclose(ours, ref, rtol=1e-12, atol=0)


def test_mahalanobis_with_identity_and_scaled_covariances_is_euclidean():
    rng = np.random.default_rng(0)
    X, M = rng.normal(size=(4, 3)), rng.normal(size=(5, 3))
    euclid = distances(X, M)
    np.testing.assert_allclose(distances(X, M, np.broadcast_to(np.eye(3), (5, 3, 3))), euclid, rtol=1e-15)
    chol = np.broadcast_to(2.0 * np.eye(3), (5, 3, 3))  # P = 4 I
    np.testing.assert_allclose(distances(X, M, chol), euclid / 2.0, rtol=1e-15)
    assert distances(np.zeros((1, 2)), np.array([[3.0, 4.0]]), np.eye(2)[None])[0, 0] == 5.0
    assert distances(np.zeros((0, 2)), M[:, :2], np.eye(2)[None].repeat(5, 0)).shape == (0, 5)


def test_mahalanobis_at_huge_and_tiny_magnitudes_is_exact_or_inf_never_nan():
    big = distances(np.array([[1.5e308]]), np.array([[-1.5e308]]), np.array([[[1e150]]]))
    assert big[0, 0] == pytest.approx(3e158, rel=1e-15)  # the difference overflows; halved, then doubled
    tiny = distances(np.array([[3e-200, 4e-200]]), np.zeros((1, 2)), np.array([[[1e-100, 0], [0, 1e-100]]]))
    assert tiny[0, 0] == pytest.approx(5e-100, rel=1e-15)  # z^2 would underflow
    over = distances(np.array([[1e300, 1e300]]), np.zeros((1, 2)), np.array([[[1e-10, 0], [0, 1e-10]]]))
    assert over[0, 0] == math.inf  # beyond the largest float
    corr = np.linalg.cholesky(np.array([[1.0, 0.999], [0.999, 1.0]]))[None] * 1e-10
    both = distances(np.array([[1.7e308, -1.7e308]]), np.zeros((1, 2)), corr)
    assert both[0, 0] == math.inf and not np.isnan(both).any()


def test_chi_square_gate_closed_forms():
    from scipy.stats import norm

    for p in (0.5, 0.9, 0.99, 0.999):
        assert chi_square_gate(p, 2) == pytest.approx(math.sqrt(-2.0 * math.log1p(-p)), rel=1e-12)
        assert chi_square_gate(p, 1) == pytest.approx(norm.ppf(0.5 + p / 2), rel=1e-12)
    for bad in (0.0, 1.0, -0.1, float("nan")):
        with pytest.raises(ValueError, match="probability"):
            chi_square_gate(bad, 2)
    with pytest.raises(ValueError, match="dims"):
        chi_square_gate(0.9, 0)


# --- presets ----------------------------------------------------------------------------------------------


def test_presets_set_the_documented_fields_and_refuse_conflicts():
    av2 = preset_settings("av2")
    assert (av2.threshold, av2.hota_threshold, av2.distance_dims) == (1.0, 2.0, 2)
    assert (av2.clear_rule, av2.distance, av2.strict_threshold) == ("trackeval", "euclidean", False)
    nus = preset_settings("nuscenes")
    assert (nus.threshold, nus.strict_threshold, nus.clear_rule) == (2.0, True, "motmetrics")
    mah = preset_settings("mahalanobis")
    assert mah.distance == "mahalanobis" and mah.threshold == pytest.approx(3.0348542587702925)
    assert mah.hota_threshold == 2 * mah.threshold
    mah3 = preset_settings("mahalanobis", distance_dims=3)
    assert mah3.threshold == pytest.approx(chi_square_gate(0.99, 3))
    assert preset_settings("mahalanobis", EvaluationSettings(distance_dims=3)).threshold == mah3.threshold
    # what the preset does not set is kept; what it sets may be overridden on purpose
    kept = preset_settings("av2", EvaluationSettings(cutoff=5.0, qs=(3,)))
    assert kept.cutoff == 5.0 and kept.qs == (3,)
    assert preset_settings("av2", threshold=0.5).threshold == 0.5
    with pytest.raises(ValueError, match=r"threshold: preset 'av2' sets 1\.0, the settings give 3\.0"):
        preset_settings("av2", EvaluationSettings(threshold=3.0))
    with pytest.raises(ValueError, match="preset: expected one of"):
        preset_settings("kitti")
    with pytest.raises(ValueError, match="thresh: expected an EvaluationSettings field"):
        preset_settings("av2", thresh=1.0)
    with pytest.raises(TypeError, match="settings: expected EvaluationSettings"):
        preset_settings("av2", {"threshold": 1.0})
    assert set(PRESETS) == {"av2", "nuscenes", "mahalanobis"}
    assert all(preset_values(p) for p in PRESETS)


@pytest.mark.parametrize(
    ("field", "value", "error"),
    [
        ("distance", "cosine", ValueError),
        ("clear_rule", "hungarian", ValueError),
        ("distance_dims", 0, ValueError),
        ("distance_dims", 2.5, ValueError),
        ("distance_dims", True, ValueError),
        ("strict_threshold", "yes", TypeError),
    ],
)
def test_bad_settings_are_refused_by_name(field, value, error):
    with pytest.raises(error, match=f"{field}: expected"):
        EvaluationSettings(**{field: value})


# --- bird's-eye versus 3-D ------------------------------------------------------------------------------


def test_height_offset_counts_in_3d_not_in_the_birds_eye_view():
    """One object, one track 0.5 m off in x and 3 m off in z, in 4 frames: every measure by hand."""
    K = 4
    T, E = tables([(k, 1, 0.0, 0.0, 0.0) for k in range(K)], [(k, 7, 0.5, 0.0, 3.0) for k in range(K)])
    bev = scored(E, T, range(K), settings=preset_settings("av2", ONE))
    # BEV distance 0.5: matched (<= 1 m); HOTA similarity 1 - 0.5 / 2 = 0.75, so alpha 0.05..0.75 count
    assert bev.clear.mota == 1.0 and bev.clear.motp == 0.5 and bev.identity.idf1 == 1.0
    assert bev.hota.hota == pytest.approx(15 / 19, abs=1e-15)
    assert bev.hota.loca == pytest.approx((15 * 0.75 + 4) / 19, abs=1e-15)  # LocA is 1 where nothing counts
    np.testing.assert_allclose(bev.gospa, 0.5)  # cut-off 2: a localisation error of 0.5
    assert bev.tgospa.value == pytest.approx(4 * 0.5)
    # 3-D distance sqrt(0.25 + 9) = 3.04: a miss and a false track in every frame
    d3 = scored(E, T, range(K), settings=preset_settings("av2", ONE, distance_dims=3))
    assert d3.clear.mota == -1.0 and d3.clear.misses == K and d3.clear.false_positives == K
    assert d3.identity.idf1 == 0.0 and d3.hota.hota == 0.0
    np.testing.assert_allclose(d3.gospa, 2.0)  # c / 2 + c / 2
    # the default settings on x, y, z states are the bird's-eye distance already (the first two columns)
    default = scored(E, T, range(K), settings=EvaluationSettings(qs=(1,), threshold=1.0, hota_threshold=2.0))
    assert default.hota.hota == bev.hota.hota and default.clear.mota == bev.clear.mota


def test_the_distance_columns_change_the_matching_and_the_switches():
    """Frame 1: the only track left is 0.5 m from A in x, y but 4 m above it.

    Bird's-eye: A takes track 20 (a switch from 10), B is missed: MOTA 1 - (1 + 0 + 1) / 4.
    3-D: A and B are missed and 20 is a false track: MOTA 1 - (2 + 1) / 4.
    """
    T, E = tables(
        [(0, 1, 0.0, 0.0, 0.0), (0, 2, 5.0, 0.0, 0.0), (1, 1, 0.0, 0.0, 0.0), (1, 2, 5.0, 0.0, 0.0)],
        [(0, 10, 0.0, 0.0, 0.0), (0, 20, 5.0, 0.0, 0.0), (1, 20, 0.5, 0.0, 4.0)],
    )
    for rule in ("motmetrics", "trackeval"):
        bev = scored(E, T, [0, 1], settings=preset_settings("av2", ONE, clear_rule=rule)).clear
        assert (bev.switches, bev.misses, bev.false_positives, bev.mota) == (1, 1, 0, 0.5)
        d3 = scored(
            E, T, [0, 1], settings=preset_settings("av2", ONE, clear_rule=rule, distance_dims=3)
        ).clear
        assert (d3.switches, d3.misses, d3.false_positives, d3.mota) == (0, 2, 1, 0.25)


def test_distance_dims_beyond_the_state_is_refused():
    T, E = tables([(0, 1, 0.0, 0.0, 0.0)], [(0, 7, 0.0, 0.0, 0.0)])
    with pytest.raises(ValueError, match=r"distance_dims: expected at most 3 \(the state dimension\), got 4"):
        scored(E, T, [0], settings=EvaluationSettings(qs=(1,), distance_dims=4))


def test_distance_dims_equal_to_the_state_gives_the_full_euclidean_distance():
    rng = np.random.default_rng(3)
    rows_t = [(k, i, *rng.uniform(0, 4, 3)) for k in range(5) for i in range(3)]
    rows_e = [
        (k, 10 + i, *(np.array(rows_t[3 * k + i][2:]) + rng.normal(0, 1.2, 3)))
        for k in range(5)
        for i in range(3)
    ]
    T, E = tables(rows_t, rows_e)
    m = scored(E, T, range(5), settings=EvaluationSettings(qs=(1,), distance_dims=3))
    truth = [T[T.frame == k][list(XYZ)].to_numpy() for k in range(5)]
    tids = [T[T.frame == k]["id"].to_numpy() for k in range(5)]
    est = [E[E.frame == k][list(XYZ)].to_numpy() for k in range(5)]
    eids = [E[E.frame == k]["id"].to_numpy() for k in range(5)]
    ref = clear_mot(truth, tids, est, eids, 2.0)
    assert (m.clear.matches, m.clear.misses, m.clear.switches) == (ref.matches, ref.misses, ref.switches)
    assert m.clear.false_positives == ref.false_positives and m.clear.motp == pytest.approx(
        ref.motp, rel=1e-14
    )
    assert m.clear.misses + m.clear.switches > 0  # the 3-D noise is large enough to matter
    assert m.hota.hota == pytest.approx(nb.hota(truth, tids, est, eids, 2.0).hota, rel=1e-14)
    gospa = [nb.gospa(e, t).value for e, t in zip(est, truth, strict=True)]
    np.testing.assert_allclose(m.gospa, gospa, rtol=1e-14)


# --- the av2 convention: TrackEval's CLEAR ----------------------------------------------------------------


def test_trackeval_rule_maximises_similarity_not_the_number_of_matches():
    """Truths A = 0, B = 1, C = 2 and estimates x = 0, y = 1, z = -1 on a line, gate 1 m.

    py-motmetrics takes the most matches: A-z, B-x, C-y (3 pairs, distances 1, 1, 1).
    TrackEval maximises sum (1 - d / 2): A-x and B-y (2.0) beat those three (1.5): C and z left over.
    """
    truth, est = [np.array([[0.0, 0], [1, 0], [2, 0]])], [np.array([[0.0, 0], [1, 0], [-1, 0]])]
    tid, eid = [np.array([1, 2, 3])], [np.array([7, 8, 9])]
    mm = clear_mot(truth, tid, est, eid, 1.0, rule="motmetrics")
    te = clear_mot(truth, tid, est, eid, 1.0, rule="trackeval")
    assert (mm.matches, mm.misses, mm.false_positives, mm.motp) == (3, 0, 0, 1.0)
    assert (te.matches, te.misses, te.false_positives, te.motp) == (2, 1, 1, 0.0)


def test_trackeval_rule_continues_the_previous_frames_match_only():
    """py-motmetrics keeps an object's last match from any earlier frame; TrackEval only from the previous
    frame that had both objects and estimates.

    Object 1 is matched to 7 in frame 0 and absent in frame 1; in frame 2 estimates 7 (0.5 m) and 8
    (0.1 m) are both in the 1 m gate. py-motmetrics keeps 7 (no switch); TrackEval, whose frame 1
    held another object and estimate, has nothing to continue and takes the nearer 8: a switch. With
    frame 1 empty on both sides TrackEval skips it, continues 7 and agrees.
    """
    truth = [np.zeros((1, 2)), np.array([[10.0, 0.0]]), np.zeros((1, 2))]
    tid = [np.array([1]), np.array([2]), np.array([1])]
    est = [np.zeros((1, 2)), np.array([[10.0, 0.0]]), np.array([[0.5, 0.0], [0.1, 0.0]])]
    eid = [np.array([7]), np.array([9]), np.array([7, 8])]
    mm = clear_mot(truth, tid, est, eid, 1.0, rule="motmetrics")
    te = clear_mot(truth, tid, est, eid, 1.0, rule="trackeval")
    assert (mm.matches, mm.switches, mm.false_positives, mm.motp) == (3, 0, 1, 0.5 / 3)
    assert (te.matches, te.switches, te.false_positives) == (2, 1, 1)
    assert te.motp == pytest.approx(0.1 / 3, rel=1e-15)
    empty = [np.zeros((0, 2))]
    for rule in ("motmetrics", "trackeval"):
        r = clear_mot(
            [truth[0], *empty, truth[2]], [tid[0], np.empty(0, int), tid[2]],
            [est[0], *empty, est[2]], [eid[0], np.empty(0, int), eid[2]], 1.0, rule=rule,
        )  # fmt: skip
        assert (r.matches, r.switches, r.false_positives) == (2, 0, 1), rule


# --- the nuScenes convention --------------------------------------------------------------------------------


def test_nuscenes_gate_is_strict():
    """A track exactly 2 m away (x, y) matches with d <= 2 (py-motmetrics default) and not with d < 2."""
    T, E = tables([(0, 1, 0.0, 0.0, 0.0)], [(0, 7, 1.2, 1.6, 9.0)])  # 1.2^2 + 1.6^2 = 4 exactly
    assert math.hypot(1.2, 1.6) == 2.0
    assert scored(E, T, [0], settings=EvaluationSettings(qs=(1,))).clear.matches == 1
    nus = scored(E, T, [0], settings=ONE, preset="nuscenes")
    assert (nus.clear.matches, nus.clear.misses, nus.identity.idf1) == (0, 1, 0.0)


# --- Mahalanobis ------------------------------------------------------------------------------------------


def test_mahalanobis_prefers_the_track_whose_covariance_covers_the_truth():
    """Truth at 0; track 1 at 1 m with std 0.1 (d_M = 10), track 2 at 3 m with std 3 (d_M = 1)."""
    T = pd.DataFrame([(0, 1, 0.0, 0.0, 0.0)], columns=["frame", "id", *XYZ])
    E = pd.DataFrame(
        [(0, 1, 0.9, 1.0, 0.0, 0.0, 0.01, 0.01, 0.01), (0, 2, 0.9, 3.0, 0.0, 0.0, 9.0, 9.0, 9.0)],
        columns=["frame", "id", "r", *XYZ, "var_x", "var_y", "var_z"],
    )
    euclid = scored(E, T, [0], settings=EvaluationSettings(qs=(1,), threshold=3.5))
    assert euclid.clear.motp == 1.0  # track 1, 1 m away
    mah = scored(E, T, [0], settings=ONE, preset="mahalanobis")
    assert mah.clear.motp == pytest.approx(1.0) and mah.clear.matches == 1  # track 2, d_M = 3 / 3
    assert mah.identity.idtp == 1
    # HOTA similarity 1 - 1 / (2 * 3.035): track 2 again (track 1 is at d_M = 10, beyond the zero distance)
    sim = 1.0 - 1.0 / (2 * chi_square_gate(0.99, 2))
    counted = ALPHAS <= sim  # no alpha within an ulp of sim here
    np.testing.assert_array_equal(mah.hota.tp, counted)
    np.testing.assert_array_equal(mah.hota.fp, 2 - counted)  # track 1 is never matched
    np.testing.assert_allclose(mah.hota.loca_alpha, np.where(counted, sim, 1.0), rtol=1e-15)
    assert mah.gospa[0] == euclid.gospa[0] == 2.0  # GOSPA stays Euclidean: 1 m, and c / 2 for track 2


@pytest.mark.parametrize("seed", range(8))
def test_mahalanobis_with_a_shared_covariance_is_euclidean_in_whitened_coordinates(seed):
    """d_M(x, m) = ||A^-1 (x - m)|| for P = A A^T: every matching measure equals its Euclidean value there."""
    rng = np.random.default_rng(seed)
    T, TI, E, EI = random_frames(rng, int(rng.integers(2, 10)), box=3.0)
    P = spd(rng, 1, 2)[0]
    A = np.linalg.cholesky(P)
    white = [np.linalg.solve(A, x.T).T if len(x) else x for x in T]
    white_e = [np.linalg.solve(A, x.T).T if len(x) else x for x in E]
    covs = [np.broadcast_to(P, (len(x), 2, 2)) for x in E]
    for rule in ("motmetrics", "trackeval"):
        a = clear_mot(T, TI, E, EI, 1.5, rule=rule, estimate_covs=covs)
        b = clear_mot(white, TI, white_e, EI, 1.5, rule=rule)
        assert (a.matches, a.misses, a.false_positives, a.switches) == (
            b.matches,
            b.misses,
            b.false_positives,
            b.switches,
        )
        assert a.motp == pytest.approx(b.motp, rel=1e-12)
    assert identity_scores(T, TI, E, EI, 1.5, estimate_covs=covs) == identity_scores(
        white, TI, white_e, EI, 1.5
    )
    ha, hb = nb.hota(T, TI, E, EI, 3.0, estimate_covs=covs), nb.hota(white, TI, white_e, EI, 3.0)
    np.testing.assert_array_equal(ha.tp, hb.tp)
    np.testing.assert_allclose(ha.hota_alpha, hb.hota_alpha, rtol=0, atol=1e-12)
    np.testing.assert_allclose(ha.loca_alpha, hb.loca_alpha, rtol=0, atol=1e-12)


def test_mahalanobis_uses_the_covariance_block_of_the_distance_columns():
    """A huge z variance and a small x, y block: the bird's-eye Mahalanobis distance reads the x, y block."""
    T = pd.DataFrame([(0, 1, 0.0, 0.0, 0.0)], columns=["frame", "id", *XYZ])
    E = pd.DataFrame(
        [(0, 1, 0.9, 0.6, 0.8, 50.0, 0.25, 0.25, 1e6, 0.0)],
        columns=["frame", "id", "r", *XYZ, "var_x", "var_y", "var_z", "cov_x_y"],
    )
    m = scored(E, T, [0], settings=ONE, preset="mahalanobis")
    assert m.clear.motp == pytest.approx(2.0)  # ||(0.6, 0.8)|| / 0.5
    m3 = scored(E, T, [0], settings=preset_settings("mahalanobis", ONE, distance_dims=3))
    assert m3.clear.motp == pytest.approx(math.sqrt(4.0 + 50.0**2 / 1e6))


def test_mahalanobis_needs_covariances():
    mb = nb.MultiBernoulli.gaussian([0.9], [[0.0, 0.0]], np.eye(2)[None])
    truth, ids = [np.zeros((1, 2))], [np.array([1])]
    s = preset_settings("mahalanobis", ONE)
    own = [(np.zeros((1, 2)), np.array([3]))]
    with pytest.raises(ValueError, match="distance: 'mahalanobis' needs the estimates' covariances; step 0"):
        evaluate_run([mb], truth, ids, [-1, -1], [1, 1], s, estimates=own)
    lap = nb.MultiBernoulli.laplace([0.9], [[0.0, 0.0]], 1.0)
    with pytest.raises(ValueError, match="the posterior is not Gaussian"):
        evaluate_run([lap], truth, ids, [-1, -1], [1, 1], replace(s, marginal="full"))
    assert evaluate_run([mb], truth, ids, [-1, -1], [1, 1], s).clear.matches == 1
    with pytest.raises(ValueError, match=r"estimate_covs\[0\]: expected positive-definite"):
        clear_mot(truth, ids, [np.zeros((1, 2))], [np.array([1])], 1.0, estimate_covs=[-np.eye(2)[None]])
    with pytest.raises(ValueError, match=r"estimate_covs\[0\]: expected shape \(1, 2, 2\)"):
        nb.hota(truth, ids, [np.zeros((1, 2))], [np.array([1])], estimate_covs=[np.eye(3)[None]])
    with pytest.raises(ValueError, match="estimate_covs: expected 1 frames"):
        identity_scores(truth, ids, [np.zeros((1, 2))], [np.array([1])], estimate_covs=[])


def test_estimates_carry_their_covariances():
    rng = np.random.default_rng(1)
    P = spd(rng, 3, 2)
    mb = nb.MultiBernoulli.gaussian([0.9, 0.1, 0.8], rng.normal(size=(3, 2)), P)
    est = estimate(mb)
    np.testing.assert_array_equal(est.covs, P[[0, 2]])
    ppp = nb.PPP.gaussian([0.7, 0.2, 1.6], rng.normal(size=(3, 2)), P)
    np.testing.assert_array_equal(estimate(ppp).covs, P[[0, 2, 2]])  # round: the third twice


# --- against the Argoverse 2 package ----------------------------------------------------------------------


def test_preset_settings_are_recorded_in_the_metrics_file(tmp_path):
    T, E = tables([(0, 1, 0.0, 0.0, 0.0)], [(0, 7, 0.5, 0.0, 3.0)])
    write_metrics(scored(E, T, [0], settings=ONE, preset="nuscenes"), tmp_path / "m.nc")
    recorded = json.loads(read_metrics(tmp_path / "m.nc").attrs["evaluation_settings"])
    assert recorded["strict_threshold"] is True and recorded["distance_dims"] == 2
    assert (recorded["threshold"], recorded["clear_rule"], recorded["distance"]) == (
        2.0,
        "motmetrics",
        "euclidean",
    )
