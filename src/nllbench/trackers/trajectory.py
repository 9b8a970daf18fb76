"""The trajectory NLL of a labelled tracks table: ``nb.trajectory_nll`` (windows and fits:
:mod:`nllbench.trackers.trajectory_fit`).

Reads the same tidy tables as :func:`nllbench.trackers.scoring.score`
(:mod:`nllbench.trackers.tracks`), with the same existence and covariance
fill-ins (:class:`~nllbench.trackers.scoring.FillIns`); each track ``id`` is a
label, each truth ``id`` a trajectory. The density, its normalisation and the
fill-ins are in ``docs/trajectory.md``; the engine is
:mod:`nllbench.engine.trajectory`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from nllbench.engine.assignment import check_q
from nllbench.engine.densities import Gaussians, log_box_volume
from nllbench.engine.trajectory import (
    TRAJECTORY_TERMS,
    LabelTruthStatistics,
    assignment_sum,
    association_problem_from_weights,
    decompose,
    infeasibility,
    label_truth_statistics,
    trajectory_weights,
)
from nllbench.engine.transforms import POSITION
from nllbench.trackers.build import _covariances, _existence
from nllbench.trackers.fillins import FillIns, _check_box
from nllbench.trackers.inputs import read_tables as _tables
from nllbench.trackers.tracks import DEFAULT_STATE

_MIXTURES = ("refuse", "marginal")


# ---------------------------------------------------------------------------
# the tables as frame-sorted arrays
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class TrajectoryInput:
    """A tracks and a truth table as the engine reads them (N track rows, N_y truth rows, d dims scored).

    frames : (K,) frame numbers scored; labels : (m,) track ids; truths : (n,) truth ids;
    row_frame, row_label : (N,) frame and label indices of each track row, sorted by (frame, label);
    row_wr : (N,) hypothesis weight times r; means (N, d), chol (N, d, d), log_norm (N,): the rows'
    Gaussians; truth_frame, truth_traj : (N_y,) frame and trajectory indices, sorted by frame;
    truth_states : (N_y, d); box : (low, high) (d,) or None; log_volume : log V or None;
    fill_ins : provenance.
    """

    frames: np.ndarray
    labels: np.ndarray
    truths: np.ndarray
    row_frame: np.ndarray
    row_label: np.ndarray
    row_wr: np.ndarray
    means: np.ndarray
    chol: np.ndarray
    log_norm: np.ndarray
    truth_frame: np.ndarray
    truth_traj: np.ndarray
    truth_states: np.ndarray
    box: tuple[np.ndarray, np.ndarray] | None
    log_volume: float | None
    fill_ins: dict


def _fov_box(fov, n_state: int, dims: list[int]):
    """(low, high) of the scored dims from ``fov = (low..., high...)`` given per state column."""
    if fov is None:
        return None
    if not (isinstance(fov, (tuple, list)) and len(fov) == 2):
        raise ValueError(f"fov: expected (low, high), one bound per state column each, got {fov!r}")
    _check_box(fov[0], fov[1])
    low = np.atleast_1d(np.asarray(fov[0], dtype=float))
    high = np.atleast_1d(np.asarray(fov[1], dtype=float))
    if low.shape != (n_state,):
        raise ValueError(
            f"fov: expected {n_state} lower and {n_state} upper bounds (one per state column), got {low.size}"
        )
    return low[dims], high[dims]


def _mixture_rows(t, mixture: str) -> np.ndarray:
    """(N,) hypothesis weight of each row; refuses a frame with several hypotheses unless ``mixture``."""
    if t.hypothesis is None:
        return np.ones(t.frame.size)
    if mixture == "refuse":
        keys = np.unique(np.stack([t.frame, t.hypothesis], axis=1), axis=0)
        frames, counts = np.unique(keys[:, 0], return_counts=True)
        if np.any(counts > 1):
            f = int(frames[np.flatnonzero(counts > 1)[0]])
            raise ValueError(
                f"{t.label}: frame {f} has {int(counts.max())} global hypotheses; the trajectory NLL "
                "scores one Bernoulli per label, and hypotheses are per frame, not per trajectory. "
                "Reduce the table to one hypothesis per frame, or score each label's marginal over "
                "the hypotheses with mixture='marginal'"
            )
    return t.weight


def prepare(
    tracks,
    truth,
    *,
    state=DEFAULT_STATE,
    frames=None,
    full_state: bool = False,
    fill: FillIns | None = None,
    fov=None,
    mixture: str = "refuse",
) -> TrajectoryInput:
    """Validate the tables and lay them out for the engine (see :func:`trajectory_nll`)."""
    if mixture not in _MIXTURES:
        raise ValueError(f"mixture: expected one of {_MIXTURES}, got {mixture!r}")
    fill = FillIns() if fill is None else fill
    if fill.undetected_rate != 0:
        raise ValueError(
            "fill: the per-frame undetected rate does not apply to trajectories; give "
            "undetected=(rate, presence) and fov=(low, high) instead"
        )
    t, y, fr, _ = _tables(tracks, truth, state, frames)
    if fr.size == 0:
        raise ValueError(f"{t.label}, {y.label}: no frames to score (both tables are empty); give frames")
    if t.ids is None:
        raise ValueError(
            f"{t.label}: the trajectory NLL needs labels: expected a column 'id' (one track id per row)"
        )
    if t.component is not None:
        raise ValueError(
            f"{t.label}: the trajectory NLL takes Gaussian tracks, one row per id and frame; columns "
            "'component' / 'component_weight' (Gaussian-mixture tracks) are scored per frame by nb.score"
        )
    live = ~t.placeholder
    weight = _mixture_rows(t, mixture)
    r, r_source = _existence(t, fill)
    covs, cov_source = _covariances(t, fill)
    dims = list(range(len(t.state))) if full_state else list(POSITION)
    box = _fov_box(fov, len(t.state), dims)
    rows = np.flatnonzero(live)
    labels, row_label = np.unique(t.ids[rows], return_inverse=True)
    row_frame = np.searchsorted(fr, t.frame[rows])
    order = np.lexsort((row_label, row_frame))
    rows, row_label, row_frame = rows[order], row_label.reshape(-1)[order], row_frame[order]
    g = Gaussians(
        np.ascontiguousarray(t.means[rows][:, dims]), np.ascontiguousarray(covs[rows][:, dims][:, :, dims])
    )
    truths, truth_traj = np.unique(y.ids, return_inverse=True)
    truth_frame = np.searchsorted(fr, y.frame)
    torder = np.argsort(truth_frame, kind="stable")
    log_volume = None if box is None else float(log_box_volume(box[0][None, :], box[1][None, :])[0])
    prov = {
        "existence": r_source,
        "covariance": cov_source,
        "marginal": "full" if full_state else "position",
        "mixture": "none" if t.hypothesis is None else mixture,
        "labels": "column id",
    }
    if box is not None:
        prov["fov_low"], prov["fov_high"] = [float(a) for a in fov[0]], [float(a) for a in fov[1]]
    if t.ignored:
        prov["ignored_columns"] = list(t.ignored)
    if y.ignored:
        prov["ignored_truth_columns"] = list(y.ignored)
    return TrajectoryInput(
        frames=fr,
        labels=labels,
        truths=truths,
        row_frame=row_frame,
        row_label=row_label,
        row_wr=(weight * r)[rows],
        means=g.means,
        chol=g._chol,
        log_norm=g._log_norm,
        truth_frame=truth_frame[torder],
        truth_traj=truth_traj.reshape(-1)[torder],
        truth_states=np.ascontiguousarray(y.states[torder][:, dims]),
        box=box,
        log_volume=log_volume,
        fill_ins=prov,
    )


def window_statistics(inp: TrajectoryInput, k0: int = 0, k1: int | None = None):
    """(statistics, label indices, truth indices, spans) of frames ``k0:k1`` (indices into ``inp.frames``).

    The labels scored are those with a row in the window, the truths those
    present in it.
    """
    K = inp.frames.size
    k1 = K if k1 is None else k1
    a, b = np.searchsorted(inp.row_frame, [k0, k1])
    c, e = np.searchsorted(inp.truth_frame, [k0, k1])
    labels, row_label = np.unique(inp.row_label[a:b], return_inverse=True)
    truths, traj = np.unique(inp.truth_traj[c:e], return_inverse=True)
    row_frame = inp.row_frame[a:b] - k0
    wr = inp.row_wr[a:b]
    row_label = row_label.reshape(-1)
    new = np.ones(b - a, dtype=bool)
    new[1:] = (row_frame[1:] != row_frame[:-1]) | (row_label[1:] != row_label[:-1])
    starts = np.flatnonzero(new)
    group_r = np.add.reduceat(wr, starts) if starts.size else np.empty(0)
    # hypothesis weights sum to 1 (to 1e-9 per hypothesis, validated): a sum above 1 is rounding
    group_r = np.minimum(group_r, 1.0)
    group_of_row = np.cumsum(new) - 1
    with np.errstate(divide="ignore", invalid="ignore"):
        coef = np.where(wr > 0, np.log(wr) - np.log(group_r[group_of_row]), -math.inf)
    truth_at = np.full((k1 - k0, truths.size), -1, dtype=np.int64)
    truth_at[inp.truth_frame[c:e] - k0, traj.reshape(-1)] = np.arange(e - c)
    stats = label_truth_statistics(
        row_frame[starts],
        row_label[starts],
        group_r,
        np.append(starts, b - a),
        coef,
        inp.means[a:b],
        inp.chol[a:b],
        inp.log_norm[a:b],
        truth_at,
        inp.truth_states[c:e],
        labels.size,
        inp.box,
        inp.log_volume,
    )
    present = truth_at >= 0
    first = np.argmax(present, axis=0)
    last = present.shape[0] - 1 - np.argmax(present[::-1], axis=0)
    fr = inp.frames[k0:k1]
    spans = np.stack([stats.n_present, fr[first], fr[last]], axis=1) if truths.size else np.empty((0, 3))
    return stats, labels, truths, spans.astype(np.int64)


# ---------------------------------------------------------------------------
# the result
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class TrajectoryNLLResult:
    """The trajectory NLL of a labelled output at the true set of trajectories.

    Attributes
    ----------
    value : float
        ``-log f(Y)`` summed over the Q best associations (``+inf``: the truth has likelihood 0).
    lower, upper : float
        Certified bounds on the exact value (``upper == value``).
    exact : float or None
        The exact value (every association), when asked with ``exact=True``.
    complete : bool
        The Q best were every association: ``value`` is exact.
    terms : dict
        localization, presence, false, undetected, association (``docs/trajectory.md``);
        they sum to ``value``.
    q : int
    n_terms : int
        Associations summed.
    frames : (K,) int
    labels : (m,) int
        Track ids scored (those with a row in the frames).
    truths : (n,) int
        Truth trajectory ids.
    spans : (n, 3) int
        Each truth's number of frames |S_j|, first and last frame.
    best : (n,) int
        Index into ``labels`` of each truth's label in the best association, -1: undetected.
    posterior : (n, m + 1) float
        Probability of each truth being explained by each label (last column:
        undetected), marginal over the listed associations with their weights
        normalised to sum to 1.
    shares : (n,) float
        Each truth's own cost in the best association: ``-log w_{l,j}``
        (localization + presence of its pair) or ``-log lambda(Y_j)``.
    impossible : tuple of int
        Truth ids that make the likelihood 0 (none can be explained, alone or jointly).
    impossible_labels : tuple of int
        Track ids with r = 1 at some frame that no truth can take.
    message : str
        Why the value is ``+inf`` ("" otherwise).
    fill_ins : dict
        Provenance: existence, covariances, marginal, mixture, unlisted presence,
        undetected trajectories, box.
    """

    value: float
    lower: float
    upper: float
    exact: float | None
    complete: bool
    terms: dict
    q: int
    n_terms: int
    frames: np.ndarray
    labels: np.ndarray
    truths: np.ndarray
    spans: np.ndarray = field(repr=False)
    best: np.ndarray = field(repr=False)
    posterior: np.ndarray = field(repr=False)
    shares: np.ndarray = field(repr=False)
    impossible: tuple = ()
    impossible_labels: tuple = ()
    message: str = ""
    fill_ins: dict = field(default_factory=dict, repr=False)

    def per_trajectory(self):
        """One row per truth trajectory: which label explained it, how surely, and its share.

        Columns: ``id``, ``frames`` (|S_j|), ``first_frame``, ``last_frame``,
        ``best_label`` (track id, <NA>: undetected in the best association), ``p_best`` (posterior
        probability of that choice), ``p_undetected``, ``share`` and one
        column ``p_label_<id>`` per label with non-zero probability for some
        truth. Probabilities are marginals over the Q best associations,
        normalised (exact when ``complete``).
        """
        import pandas as pd

        m = self.labels.size
        best = pd.array([int(self.labels[b]) if b >= 0 else None for b in self.best.tolist()], dtype="Int64")
        idx = np.where(self.best >= 0, self.best, m)
        cols = {
            "id": self.truths,
            "frames": self.spans[:, 0],
            "first_frame": self.spans[:, 1],
            "last_frame": self.spans[:, 2],
            "best_label": best,
            "p_best": self.posterior[np.arange(self.truths.size), idx] if self.truths.size else np.empty(0),
            "p_undetected": self.posterior[:, m],
            "share": self.shares,
        }
        used = np.flatnonzero(self.posterior[:, :m].any(axis=0))
        for k in used.tolist():
            cols[f"p_label_{int(self.labels[k])}"] = self.posterior[:, k]
        return pd.DataFrame(cols)

    def posterior_table(self):
        """Long form of ``posterior``: (id, label, probability) for every non-zero entry;
        label <NA> is "undetected"."""
        import pandas as pd

        j, k = np.nonzero(self.posterior)
        m = self.labels.size
        lab = pd.array([int(self.labels[c]) if c < m else None for c in k.tolist()], dtype="Int64")
        return pd.DataFrame({"id": self.truths[j], "label": lab, "probability": self.posterior[j, k]})


def _check_parameters(q, undetected, unlisted_presence, box):
    q = check_q(q, "q")
    rate, presence = 0.0, 1.0
    if undetected is not None:
        if not (isinstance(undetected, (tuple, list)) and len(undetected) == 2):
            raise ValueError(f"undetected: expected (rate, presence) or None, got {undetected!r}")
        rate, presence = float(undetected[0]), float(undetected[1])
        if not (math.isfinite(rate) and rate >= 0):
            raise ValueError(f"undetected: expected a finite rate >= 0, got {undetected[0]!r}")
        if not (0 < presence <= 1):
            raise ValueError(f"undetected: expected a presence probability in (0, 1], got {undetected[1]!r}")
        if rate > 0 and box is None:
            raise ValueError("fov: undetected trajectories are uniform on the box; give fov=(low, high)")
    R = float(unlisted_presence)
    if not (0 <= R <= 1):
        raise ValueError(f"unlisted_presence: expected a probability in [0, 1], got {unlisted_presence!r}")
    if R > 0 and box is None:
        raise ValueError("fov: an unlisted label's state is uniform on the box; give fov=(low, high)")
    return int(q), rate, presence, R


def _parameter_provenance(rate, presence, R) -> dict:
    return {
        "unlisted_presence": {"R": R, "state": "uniform on the fov box"},
        "undetected_trajectories": (
            {"kind": "none (zero rate)"}
            if rate == 0
            else {"kind": "Poisson, uniform on the fov box", "rate": rate, "presence": presence}
        ),
    }


def score_statistics(
    stats: LabelTruthStatistics,
    labels: np.ndarray,
    truths: np.ndarray,
    frames: np.ndarray,
    spans: np.ndarray,
    *,
    q: int,
    exact: bool,
    rate: float,
    presence: float,
    unlisted_presence: float,
    fill_ins: dict,
) -> TrajectoryNLLResult:
    """The result for one window's statistics at the given fill-ins."""
    w = trajectory_weights(stats, unlisted_presence, rate, presence)
    prob = association_problem_from_weights(w.log_w, w.alone, w.log_lam, w.total_rate)
    s = assignment_sum(prob, q, exact)
    m, n = labels.size, truths.size
    posterior = s.posterior(m)
    if s.value == math.inf:
        why = infeasibility(prob)
        terms = dict.fromkeys(TRAJECTORY_TERMS, 0.0)
        bad = tuple(int(truths[j]) for j in why.truths)
        bad_labels = tuple(int(labels[k]) for k in why.labels)
        parts = []
        if bad:
            terms["undetected"] = math.inf
            parts.append(
                f"truth trajectories {list(bad)} cannot be explained: no label can take them "
                "(a frame where the label has r = 0, or no row and unlisted presence 0, or r = 1 where "
                "the truth is absent"
                + (", or more truths than the labels that can take them" if why.jointly else "")
                + ") and the undetected-trajectory fill-in gives them density 0"
            )
        if bad_labels:
            terms["false"] = math.inf
            parts.append(
                f"labels {list(bad_labels)} have r = 1 at some frame but cannot all be matched to a "
                "truth trajectory present there"
            )
        message = "; ".join(parts)
        return TrajectoryNLLResult(
            math.inf,
            math.inf,
            math.inf,
            math.inf if exact else None,
            True,
            terms,
            q,
            0,
            frames,
            labels,
            truths,
            spans,
            np.full(n, -1),
            posterior,
            np.full(n, math.nan),
            bad,
            bad_labels,
            message,
            fill_ins,
        )
    cols = s.columns[0]
    best = np.where(cols < m, cols, -1)
    js = np.arange(n)
    shares = np.where(best >= 0, -w.log_w[np.maximum(best, 0), js] if m else 0.0, -w.log_lam) + 0.0
    return TrajectoryNLLResult(
        s.value,
        s.lower,
        s.upper,
        s.exact,
        s.complete,
        decompose(w, cols, s.value),
        q,
        int(s.costs.size),
        frames,
        labels,
        truths,
        spans,
        best,
        posterior,
        shares,
        fill_ins=fill_ins,
    )


def trajectory_nll(
    tracks,
    truth,
    *,
    q: int = 10,
    exact: bool = False,
    undetected=None,
    fov=None,
    unlisted_presence: float = 0.0,
    frames=None,
    full_state: bool = False,
    state=DEFAULT_STATE,
    fill: FillIns | None = None,
    mixture: str = "refuse",
) -> TrajectoryNLLResult:
    """The trajectory NLL: ``-log f(Y)`` of the true set of trajectories under a labelled tracks table.

    Parameters
    ----------
    tracks, truth : path (.csv / .parquet), DataFrame or validated table (as for :func:`nllbench.score`);
        the tracks need an ``id`` column (the labels)
    q : int
        Murty budget: the Q best associations of truths to labels are summed.
    exact : bool
        Also compute the exact value (subset DP per connected component; refused beyond ~2e8 operations).
    undetected : (rate, presence) or None
        Undetected trajectories: a Poisson process of mean ``rate`` (Lambda), each member present at
        each frame with probability ``presence`` (rho) given at least one frame, uniform on ``fov``.
        None: none (a truth no label explains then makes the value ``+inf``).
    fov : (low, high) or None
        The box, one bound per state column (as ``score``'s ``--fov``); needed for ``undetected`` and
        ``unlisted_presence``.
    unlisted_presence : float
        R: at a frame where a label has no row it is present with probability R, uniform on the box.
    frames : frames scored, as for :func:`nllbench.score`: a list, ``"union"``, or None (both
        tables' frames, which must then be the same: a frame in only one table is refused, named)
    full_state : bool
        Score the whole state (default: the position marginal, like ``score``).
    state : state column names
    fill : FillIns or None
        Existence (r, score calibration, r = 1) and covariance fill-ins, as for ``score``; its
        per-frame undetected rate must be 0. None: ``FillIns()``.
    mixture : {"refuse", "marginal"}
        A table with several global hypotheses per frame is refused, or (``"marginal"``) each label
        is scored by its marginal over them: ``r_{l,t} = sum_h w_h r_{l,t,h}`` and the state density
        the mixture ``sum_h w_h r_{l,t,h} p_{l,t,h} / r_{l,t}``.

    Returns
    -------
    TrajectoryNLLResult
    """
    inp = prepare(
        tracks, truth, state=state, frames=frames, full_state=full_state, fill=fill, fov=fov, mixture=mixture
    )
    q, rate, presence, R = _check_parameters(q, undetected, unlisted_presence, inp.box)
    stats, lab, tru, spans = window_statistics(inp)
    prov = {**inp.fill_ins, **_parameter_provenance(rate, presence, R), "q": q}
    return score_statistics(
        stats,
        inp.labels[lab],
        inp.truths[tru],
        inp.frames,
        spans,
        q=q,
        exact=exact,
        rate=rate,
        presence=presence,
        unlisted_presence=R,
        fill_ins=prov,
    )
