"""nrl-tracker's trackers as tidy tracks tables (:mod:`nllbench.trackers.tracks`).

nrl-tracker (PyPI ``nrl-tracker``, imported as ``pytcl``; a Python port of the
U.S. Naval Research Laboratory's Tracker Component Library, D. F. Crouse) is
an optional dependency (the ``crosscheck`` extra), imported inside the
functions that need it. What its trackers keep (version 2.11.1,
``pytcl.trackers``), and what becomes of it here:

* **Bernoulli filter** (``bernoulli_predict`` / ``bernoulli_update``; Ristic,
  Vo, Vo and Farina, IEEE TSP 61(13), 2013): a ``BernoulliState(r, x, P)``,
  the existence probability and one Gaussian. :func:`tracks_from_bernoulli`
  writes ``r`` as it is.
* **MHT** (``MHTTracker``, track-oriented, N-scan pruning): its
  ``hypothesis_tree`` keeps the global hypotheses (``Hypothesis.probability``,
  ``track_ids``) and the track branches (``MHTTrack``: mean, covariance, the
  log-likelihood-ratio ``score``, ``status``, ``parent_id``). It keeps no
  existence probability. :func:`mht_frame` reads one scan,
  :func:`tracks_from_mht` writes every hypothesis with its weight, the
  track's id (its family: the branch a measurement started) and the branch's
  ``score`` (to be calibrated) or ``r = expit(score)``.
* **GNN** (``MultiTargetTracker``): ``Track``s with mean, covariance and
  status, but neither existence, score nor hypotheses;
  :func:`tracks_from_gnn` writes the tracks only.

:func:`run_mht` runs the MHT on an nllbench scenario file with the
scenario's own model. ``docs/score.md`` ("nrl-tracker") has the details.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

EXISTENCE = ("score", "log_odds")


def _names(mapping, state) -> tuple[list[int], list[str]]:
    mapping = [int(i) for i in mapping]
    names = [str(s) for s in state]
    if len(mapping) != len(names) or not names:
        raise ValueError(f"state: expected {len(mapping)} names for mapping {mapping}, got {names}")
    return mapping, names


def _frame_numbers(frames, n: int, what: str) -> np.ndarray:
    """Frame numbers of ``n`` scans: ``frames`` (distinct integers, one per scan) or 0, 1, ..."""
    if frames is None:
        return np.arange(n, dtype=np.int64)
    out = np.asarray(frames)
    if out.ndim != 1 or out.size != n or (out.size and not np.issubdtype(out.dtype, np.integer)):
        raise ValueError(f"frames: expected {n} integers (one per {what}), got {frames!r}")
    if np.unique(out).size != n:
        raise ValueError(f"frames: expected distinct frame numbers, got {frames!r}")
    return out.astype(np.int64)


def _block(mean, cov, mapping: list[int], where: str) -> tuple[np.ndarray, np.ndarray]:
    """The ``mapping`` components of a mean (n,) and covariance (n, n)."""
    x = np.asarray(mean, dtype=float).reshape(-1)
    P = np.asarray(cov, dtype=float)
    if P.shape != (x.size, x.size) or max(mapping) >= x.size or min(mapping) < -x.size:
        raise ValueError(
            f"{where}: expected a mean (n,) and covariance (n, n) holding components {mapping}, "
            f"got shapes {x.shape} and {P.shape}"
        )
    return x[mapping], P[np.ix_(mapping, mapping)]


def _table(rows: list[dict], head: list[str], names: list[str]):
    """DataFrame of ``rows`` with columns ``head``, the state, ``var_`` and ``cov_`` columns."""
    import pandas as pd

    cols = [*head, *names, *(f"var_{a}" for a in names)]
    cols += [f"cov_{a}_{b}" for i, a in enumerate(names) for b in names[i + 1 :]]
    return pd.DataFrame(rows, columns=cols)


def _gaussian_cells(x: np.ndarray, P: np.ndarray, names: list[str]) -> dict:
    cells = dict(zip(names, x.tolist(), strict=True))
    for i, a in enumerate(names):
        cells[f"var_{a}"] = float(P[i, i])
        for j in range(i + 1, len(names)):
            cells[f"cov_{a}_{names[j]}"] = float(P[i, j])
    return cells


def tracks_from_bernoulli(
    states: Sequence,
    frames: Sequence[int] | None = None,
    *,
    mapping: Sequence[int] = (0, 2),
    state: Sequence[str] = ("x", "y"),
    track_id: int = 0,
):
    """Tidy tracks table of an nrl-tracker Bernoulli filter, one row per frame.

    Parameters
    ----------
    states : sequence of ``pytcl.trackers.BernoulliState`` (``r``, ``x`` (n,), ``P`` (n, n))
        The posterior of each frame (after ``bernoulli_update``).
    frames : frame number of each state (default 0, 1, ...).
    mapping : indices of ``state`` in the filter's state vector (default (0, 2): x and y of
        an [x, vx, y, vy] state, the order of nrl-tracker's examples).
    state : column names for those components.
    track_id : the ``id`` of every row (the filter has one object).

    Returns
    -------
    pandas.DataFrame
        ``frame, id, r, <state>, var_<a>, cov_<a>_<b>``; ``r`` is the state's ``r``
        (the filter's existence probability, Ristic et al. 2013, eq. (87)), also 0 or 1.
    """
    mapping, names = _names(mapping, state)
    states = list(states)
    fr = _frame_numbers(frames, len(states), "state")
    rows = []
    for k, s in zip(fr.tolist(), states, strict=True):
        r = float(s.r)
        if not 0.0 <= r <= 1.0:
            raise ValueError(f"states: frame {k}: expected an existence probability r in [0, 1], got {r!r}")
        x, P = _block(s.x, s.P, mapping, f"states: frame {k}")
        rows.append({"frame": k, "id": int(track_id), "r": r, **_gaussian_cells(x, P, names)})
    return _table(rows, ["frame", "id", "r"], names)


def tracks_from_gnn(
    scans: Sequence[Sequence],
    frames: Sequence[int] | None = None,
    *,
    mapping: Sequence[int] = (0, 2),
    state: Sequence[str] = ("x", "y"),
    confirmed_only: bool = False,
):
    """Tidy tracks table of nrl-tracker's GNN ``MultiTargetTracker``: tracks only.

    Parameters
    ----------
    scans : one list of ``pytcl.trackers.Track`` per frame (what ``process`` returns)
    frames, mapping, state : as for :func:`tracks_from_bernoulli`
    confirmed_only : keep only tracks whose status is CONFIRMED

    Returns
    -------
    pandas.DataFrame
        ``frame, id, <state>, var_<a>, cov_<a>_<b>`` with ``id`` the tracker's
        ``Track.id``. The tracker keeps no existence probability and no score
        (its M-of-N status is a decision, not a probability), so there is
        neither column: score it with a fill-in (e.g. ``--existence-one``).
    """
    mapping, names = _names(mapping, state)
    scans = [list(s) for s in scans]
    fr = _frame_numbers(frames, len(scans), "scan")
    rows = []
    for k, tracks in zip(fr.tolist(), scans, strict=True):
        for t in sorted(tracks, key=lambda t: int(t.id)):
            if confirmed_only and getattr(t.status, "value", t.status) != "confirmed":
                continue
            x, P = _block(t.state, t.covariance, mapping, f"scans: frame {k}, track {t.id}")
            rows.append({"frame": k, "id": int(t.id), **_gaussian_cells(x, P, names)})
    return _table(rows, ["frame", "id"], names)


@dataclass(frozen=True)
class MHTFrame:
    """One scan of an nrl-tracker ``MHTTracker``: its global hypotheses and their track branches.

    H hypotheses, heaviest first (ties in the tracker's order); M rows, one per
    (hypothesis, branch in it), by hypothesis then family.

    weights : (H,) the hypotheses' ``probability`` (the tracker normalises them to sum to 1)
    hypothesis : (M,) int, the index in ``weights`` of each row's hypothesis
    family : (M,) int, the track: the id of the branch's root, the branch a
        measurement started (``parent_id`` -1); the same in every scan and hypothesis
    branch : (M,) int, the branch's own ``MHTTrack.id`` (one association history)
    means : (M, n); covs : (M, n, n); scores : (M,) ``MHTTrack.score``, the
        branch's log-likelihood ratio
    confirmed : (M,) bool, status CONFIRMED (else TENTATIVE)
    """

    weights: np.ndarray
    hypothesis: np.ndarray
    family: np.ndarray
    branch: np.ndarray
    means: np.ndarray
    covs: np.ndarray
    scores: np.ndarray
    confirmed: np.ndarray


def mht_frame(tracker) -> MHTFrame:
    """Read the current scan of a ``pytcl.trackers.MHTTracker`` (call it after each ``process``).

    The hypotheses and branches come from ``tracker.hypothesis_tree``
    (``hypotheses`` and ``tracks``); a branch's family is found by walking
    ``parent_id`` to the root (the tree keeps every ancestor of a live branch).
    """
    tree = tracker.hypothesis_tree
    hyps = list(tree.hypotheses)
    n = int(tracker.state_dim)
    if not hyps:
        raise ValueError("tracker: expected at least one global hypothesis, got none")
    p = np.array([float(h.probability) for h in hyps])
    order = np.argsort(-p, kind="stable")
    rows = []
    for rank, h in enumerate(order.tolist()):
        members = []
        for tid in hyps[h].track_ids:
            t = tree.tracks[tid]
            root = t
            while root.parent_id >= 0:
                root = tree.tracks[root.parent_id]
            members.append((int(root.id), t))
        families = [f for f, _ in members]
        if len(set(families)) != len(families):
            raise ValueError(f"tracker: hypothesis {hyps[h].id} holds two branches of one track family")
        rows += [(rank, f, t) for f, t in sorted(members, key=lambda m: m[0])]
    return MHTFrame(
        weights=p[order],
        hypothesis=np.array([r for r, _, _ in rows], dtype=np.int64),
        family=np.array([f for _, f, _ in rows], dtype=np.int64),
        branch=np.array([int(t.id) for _, _, t in rows], dtype=np.int64),
        means=np.array([np.asarray(t.state, float).reshape(-1) for _, _, t in rows]).reshape(-1, n),
        covs=np.array([np.asarray(t.covariance, float) for _, _, t in rows]).reshape(-1, n, n),
        scores=np.array([float(t.score) for _, _, t in rows]),
        confirmed=np.array([getattr(t.status, "value", t.status) == "confirmed" for _, _, t in rows], bool),
    )


def tracks_from_mht(
    scans: Sequence[MHTFrame],
    frames: Sequence[int] | None = None,
    *,
    mapping: Sequence[int] = (0, 2),
    state: Sequence[str] = ("x", "y"),
    hypotheses: str = "all",
    tracks: str = "all",
    existence: str = "score",
):
    """Tidy tracks table of an nrl-tracker MHT from its scans (:func:`mht_frame`).

    Parameters
    ----------
    scans : one :class:`MHTFrame` per frame
    frames, mapping, state : as for :func:`tracks_from_bernoulli`
    hypotheses : ``"all"``: every global hypothesis, numbered 0, 1, ... by
        decreasing weight, with its probability as ``weight``; ``"best"``: the
        heaviest one only, without hypothesis columns.
    tracks : ``"all"`` branches, or ``"confirmed"`` ones only.
    existence : ``"score"``: the branch's log-likelihood ratio as ``score``, to be
        calibrated into r (``--fit-score-on``); ``"log_odds"``: ``r = expit(score)``,
        the track score read as the log odds of a true track (Blackman, "Multiple
        hypothesis tracking for multiple target tracking", IEEE AES Magazine 19(1), 2004).

    Returns
    -------
    pandas.DataFrame
        ``frame, [hypothesis, weight,] id, score | r, <state>, var_<a>, cov_<a>_<b>``;
        ``id`` is the track family. A hypothesis left without a branch is a row
        with only ``frame``, ``hypothesis`` and ``weight``.
    """
    from scipy.special import expit

    mapping, names = _names(mapping, state)
    if hypotheses not in ("all", "best"):
        raise ValueError(f"hypotheses: expected 'all' or 'best', got {hypotheses!r}")
    if tracks not in ("all", "confirmed"):
        raise ValueError(f"tracks: expected 'all' or 'confirmed', got {tracks!r}")
    if existence not in EXISTENCE:
        raise ValueError(f"existence: expected one of {EXISTENCE}, got {existence!r}")
    scans = list(scans)
    fr = _frame_numbers(frames, len(scans), "scan")
    column = "score" if existence == "score" else "r"
    head = ["frame", *(["hypothesis", "weight"] if hypotheses == "all" else []), "id", column]
    rows = []
    for k, scan in zip(fr.tolist(), scans, strict=True):
        n_hyp = 1 if hypotheses == "best" else scan.weights.size
        for h in range(n_hyp):
            keep = scan.hypothesis == h
            if tracks == "confirmed":
                keep &= scan.confirmed
            lead = {"frame": k}
            if hypotheses == "all":
                lead.update(hypothesis=h, weight=float(scan.weights[h]))
                if not keep.any():  # a hypothesis without a branch: its weight alone
                    rows.append(dict(lead))
            for i in np.flatnonzero(keep).tolist():
                x, P = _block(
                    scan.means[i], scan.covs[i], mapping, f"scans: frame {k}, branch {scan.branch[i]}"
                )
                value = float(scan.scores[i]) if existence == "score" else float(expit(scan.scores[i]))
                rows.append(
                    {**lead, "id": int(scan.family[i]), column: value, **_gaussian_cells(x, P, names)}
                )
    df = _table(rows, head, names)
    if hypotheses == "all":
        df["hypothesis"] = df["hypothesis"].astype(np.int64)
        df["id"] = df["id"].astype("Int64")
    return df


def mht_model(data, *, new_track_weight: float | None = None) -> dict:
    """The ``MHTTracker`` arguments for a scenario's model (a :class:`nllbench.store.ScenarioData`).

    F, Q, H, R as they are; ``clutter_density`` = clutter rate / field-of-view
    area; ``detection_prob`` = P_D; ``new_track_weight`` (added to the clutter
    density as the likelihood of a measurement no track takes) by default the
    density of new-object measurements, P_D * birth rate / area; the initial
    covariance of a track (whose mean is ``pinv(H) z``: the measured position,
    zero velocity) is R on the measured components and the birth intensity's
    covariance (moment-matched over its components) on the others.
    """
    from nllbench.example_trackers.stonesoup import clutter_density

    m = data.model
    if m is None:
        raise ValueError("data: expected a scenario with a model (F, Q, H, R, birth), got none")
    n = m.F.shape[0]
    selected = [int(np.flatnonzero(row)[0]) for row in m.H]
    if not np.array_equal(m.H, np.eye(n)[selected]):
        raise ValueError(f"data: expected a measurement matrix that selects state components, got {m.H}")
    w = np.asarray(m.birth.weights, float)
    rate = float(w.sum())
    if rate > 0:
        mean = (w / rate) @ m.birth.means
        spread = np.einsum("k,ki,kj->ij", w / rate, m.birth.means - mean, m.birth.means - mean)
        birth_cov = np.einsum("k,kij->ij", w / rate, m.birth.covs) + spread
    else:
        birth_cov = np.einsum("kij->ij", m.birth.covs) / max(len(w), 1)
    unmeasured = np.eye(n) - m.H.T @ m.H
    init_cov = m.H.T @ m.R @ m.H + unmeasured @ birth_cov @ unmeasured
    beta_fa = clutter_density(m.clutter_rate, m.fov_low, m.fov_high)
    if new_track_weight is None:
        new_track_weight = clutter_density(m.p_detection * rate, m.fov_low, m.fov_high)
    return {
        "F": m.F,
        "Q": m.Q,
        "H": m.H,
        "R": m.R,
        "init_covariance": init_cov,
        "detection_prob": float(m.p_detection),
        "clutter_density": float(beta_fa),
        "new_track_weight": float(new_track_weight),
    }


def run_mht(
    data,
    *,
    max_hypotheses: int = 100,
    n_scan: int = 3,
    gate_probability: float = 0.99,
    confirm_threshold: int = 3,
    delete_threshold: int = 5,
    min_hypothesis_prob: float = 1e-6,
    new_track_weight: float | None = None,
) -> list[MHTFrame]:
    """Run nrl-tracker's ``MHTTracker`` over a scenario's measurements; one :class:`MHTFrame` per step.

    The model is the scenario's (:func:`mht_model`); the other arguments are
    ``pytcl.trackers.MHTConfig``'s (its defaults). Step k is one ``process``
    call with ``dt = 1`` (the scenarios' sampling period), read after it.
    """
    from pytcl.trackers import MHTConfig, MHTTracker

    model = mht_model(data, new_track_weight=new_track_weight)
    config = MHTConfig(
        n_scan=int(n_scan),
        max_hypotheses=int(max_hypotheses),
        detection_prob=model["detection_prob"],
        clutter_density=model["clutter_density"],
        gate_probability=float(gate_probability),
        confirm_threshold=int(confirm_threshold),
        delete_threshold=int(delete_threshold),
        min_hypothesis_prob=float(min_hypothesis_prob),
        new_track_weight=model["new_track_weight"],
    )
    n, d = model["H"].shape[1], model["H"].shape[0]
    tracker = MHTTracker(
        n,
        d,
        model["F"],
        model["H"],
        model["Q"],
        model["R"],
        config=config,
        init_covariance=model["init_covariance"],
    )
    out = []
    for Z in data.measurements:
        tracker.process([np.asarray(z, float) for z in Z], dt=1.0)
        out.append(mht_frame(tracker))
    return out


def mht_tracks_table(
    data, *, hypotheses: str = "all", tracks: str = "all", existence: str = "score", **options
):
    """Tidy tracks table (frame k = step k; positions x, y) of :func:`run_mht` on a scenario."""
    scans = run_mht(data, **options)
    position = [int(np.flatnonzero(row)[0]) for row in data.model.H]
    return tracks_from_mht(
        scans, mapping=position, state=("x", "y"), hypotheses=hypotheses, tracks=tracks, existence=existence
    )
