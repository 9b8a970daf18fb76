"""The trajectory NLL of frame-sorted arrays: the engine's layout, one window's result, a run's windows.

What the trajectory NLL of a labelled tracks table
(:func:`nllbench.trackers.trajectory_tables.trajectory_nll`, which reads and validates the tables)
and of a labelled filter's posteriors (:mod:`nllbench.measures.likelihood.filter_trajectory_nll`,
the pipeline's) share once both are arrays:

* :class:`TrajectoryInput`: the rows and truths sorted by frame, with their Gaussians;
* :func:`window_statistics`: the engine's parameter-free statistics of a window of frames;
* :func:`score_statistics` (:func:`score_window`: an intractable exact value flagged, not raised):
  the value, bounds, terms and per-trajectory posterior at the fill-ins of a
  :class:`TrajectoryScoring`, a :class:`TrajectoryNLLResult`;
* :class:`TrajectoryRun`: a run's windows and their sum, as stored in metrics files and tables
  (:func:`trajectory_attrs`: its metrics-file attributes).

The density, its normalisation and the fill-ins are in ``docs/trajectory.md``; the engine is
:mod:`nllbench.engine.trajectory_nll`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields

import numpy as np

from nllbench.engine.trajectory_nll import (
    TRAJECTORY_TERMS,
    LabelTruthStatistics,
    assignment_sum,
    association_problem_from_weights,
    decompose,
    infeasibility,
    label_truth_statistics,
    trajectory_weights,
)

# ---------------------------------------------------------------------------
# the frame-sorted arrays
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
# one window's result
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


@dataclass(frozen=True)
class TrajectoryScoring:
    """What scoring a window takes beyond its statistics: the budget and the checked fill-ins.

    Attributes
    ----------
    q : int
        Murty budget: the Q best associations of truths to labels are summed.
    rate, presence : float
        The undetected trajectories: Poisson mean Lambda (0: none) and per-frame presence rho.
    unlisted_presence : float
        R: a label's presence at a frame where it has no row (uniform on the box).
    fill_ins : dict
        The provenance kept with each result (the tables' fill-ins, the parameters, Q, ...).
    """

    q: int
    rate: float
    presence: float
    unlisted_presence: float
    fill_ins: dict = field(default_factory=dict)

    def with_fill_ins(self, **more) -> TrajectoryScoring:
        """The same scoring with ``more`` added to (after) its provenance."""
        return TrajectoryScoring(
            self.q, self.rate, self.presence, self.unlisted_presence, {**self.fill_ins, **more}
        )

    @classmethod
    def of(cls, scoring: TrajectoryScoring | None, keywords: dict) -> TrajectoryScoring:
        """``scoring``, or one built from the keywords of the older call (``q=..., rate=..., ...``).

        Raises TypeError for both at once, a missing or an unknown keyword.
        """
        given = {k: v for k, v in keywords.items() if v is not None}
        if scoring is not None:
            if not isinstance(scoring, TrajectoryScoring):
                raise TypeError(f"scoring: expected a TrajectoryScoring, got {type(scoring).__name__}")
            if given:
                raise TypeError(f"scoring: given with the keywords {sorted(given)}; give one or the other")
            return scoring
        names = [f.name for f in fields(cls)]
        unknown = sorted(set(given) - set(names))
        if unknown:
            raise TypeError(f"unexpected keywords {unknown}: expected scoring= or {names}")
        missing = [n for n in names if n not in given]
        if missing:
            raise TypeError(f"expected scoring= or the keywords {names}; missing {missing}")
        return cls(**given)


def score_statistics(
    stats: LabelTruthStatistics,
    labels: np.ndarray,
    truths: np.ndarray,
    frames: np.ndarray,
    spans: np.ndarray,
    scoring: TrajectoryScoring | None = None,
    *,
    exact: bool,
    **keywords,
) -> TrajectoryNLLResult:
    """The result for one window's statistics at the fill-ins of ``scoring``.

    The older call, the fields of :class:`TrajectoryScoring` as keywords
    (``q=..., rate=..., presence=..., unlisted_presence=..., fill_ins=...``), still works.
    """
    scoring = TrajectoryScoring.of(scoring, keywords)
    q, rate, presence, fill_ins = scoring.q, scoring.rate, scoring.presence, scoring.fill_ins
    unlisted_presence = scoring.unlisted_presence
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


def score_window(
    stats, labels, truths, frames, spans, scoring: TrajectoryScoring | None = None, *, exact: bool, **keywords
) -> tuple[TrajectoryNLLResult, str]:
    """:func:`score_statistics`, the exact value refused without failing.

    Returns (result, note): with ``exact`` and a component beyond the exact
    computation's limit, the result without the exact value and the reason
    (``""`` otherwise), so that an intractable exact value is flagged, never guessed.
    """
    scoring = TrajectoryScoring.of(scoring, keywords)
    try:
        return score_statistics(stats, labels, truths, frames, spans, scoring, exact=exact), ""
    except ValueError as exc:
        if not exact:
            raise
        return score_statistics(stats, labels, truths, frames, spans, scoring, exact=False), str(exc)


def windows_table(results: list[TrajectoryNLLResult]):
    """One row per window: first and last frame, sizes, value, bounds, exact value and terms."""
    import pandas as pd

    rows = []
    for i, res in enumerate(results):
        rows.append(
            {
                "window": i,
                "first_frame": int(res.frames[0]),
                "last_frame": int(res.frames[-1]),
                "frames": int(res.frames.size),
                "truths": int(res.truths.size),
                "labels": int(res.labels.size),
                "trajectory_nll": res.value,
                "trajectory_nll_lower": res.lower,
                "trajectory_nll_upper": res.upper,
                "trajectory_nll_exact": math.nan if res.exact is None else res.exact,
                **{f"trajectory_nll_{k}": v for k, v in res.terms.items()},
            }
        )
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------
# a run: its windows
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class TrajectoryRun:
    """The trajectory NLL of one run: one result per window of consecutive frames, and their sum.

    Attributes
    ----------
    windows : tuple of TrajectoryNLLResult
        One per window, in frame order (one window: the whole run).
    q : int
        Murty budget of every window.
    fill_ins : dict
        How the undetected trajectories (rate, presence), the unlisted
        presence R and the box were chosen (given, fitted, or derived from a
        filter's PPP), and the existence and covariance fill-ins.
    exact_note : str
        Why the exact value is missing although it was asked for ("" otherwise).
    """

    windows: tuple
    q: int
    fill_ins: dict = field(default_factory=dict)
    exact_note: str = ""

    @property
    def value(self) -> float:
        """Sum of the windows' values (``+inf`` when one is)."""
        return float(sum(w.value for w in self.windows))

    @property
    def lower(self) -> float:
        return float(sum(w.lower for w in self.windows))

    @property
    def upper(self) -> float:
        return float(sum(w.upper for w in self.windows))

    @property
    def exact(self) -> float | None:
        """Sum of the windows' exact values; None unless every window has one."""
        if not self.windows or any(w.exact is None for w in self.windows):
            return None
        return float(sum(w.exact for w in self.windows))

    @property
    def complete(self) -> bool:
        """The Q best associations were every association in every window."""
        return all(w.complete for w in self.windows)

    @property
    def terms(self) -> dict:
        """Each term of the decomposition summed over the windows (they sum to :attr:`value`)."""
        return {t: float(sum(w.terms[t] for w in self.windows)) for t in TRAJECTORY_TERMS}

    def summary(self) -> dict:
        """The run-level row: ``trajectory_nll``, its bounds and terms, Q, windows, the exact value if any."""
        row = {
            "trajectory_nll": self.value,
            "trajectory_nll_lower": self.lower,
            "trajectory_nll_upper": self.upper,
            **{f"trajectory_nll_{t}": v for t, v in self.terms.items()},
            "trajectory_nll_q": self.q,
            "trajectory_nll_windows": len(self.windows),
        }
        if self.exact is not None:  # absent when not asked or intractable (then exact_note says why)
            row["trajectory_nll_exact"] = self.exact
        return row

    def per_window(self):
        """One row per window (:func:`windows_table`)."""
        return windows_table(list(self.windows))

    def per_trajectory(self):
        """Each window's :meth:`~nllbench.trackers.trajectory_tables.TrajectoryNLLResult.per_trajectory`
        rows, with the window's index first (``window``); a truth present in two windows has a row in each.

        The ``p_label_<id>`` columns are the union over windows (0 where a
        window gives that label no probability for the truth).
        """
        import pandas as pd

        frames = []
        for i, w in enumerate(self.windows):
            df = w.per_trajectory()
            df.insert(0, "window", np.full(len(df), i, dtype=np.int64))
            frames.append(df)
        if not frames:
            return pd.DataFrame(columns=["window", "id"])
        out = pd.concat(frames, ignore_index=True)
        labels = [c for c in out.columns if c.startswith("p_label_")]
        out[labels] = out[labels].fillna(0.0)
        fixed = [c for c in out.columns if not c.startswith("p_label_")]
        ordered = sorted(labels, key=lambda c: int(c.removeprefix("p_label_")))
        return out[fixed + ordered]

    def messages(self) -> list[str]:
        """Why a window's value is ``+inf`` (its frames and the engine's message), one per such window."""
        return [
            f"frames {int(w.frames[0])}-{int(w.frames[-1])}: {w.message}"
            for w in self.windows
            if w.value == math.inf and w.message
        ]


def trajectory_attrs(run) -> dict:
    """Metrics-file attributes of a run's trajectory NLL: its fill-ins (JSON), or why there is none.

    ``run``: a :class:`TrajectoryRun` (``trajectory_fill_ins``; ``trajectory_exact_note`` when the
    exact value was asked for but intractable; ``trajectory_infinite`` naming what makes it
    ``+inf``), a str (``trajectory_nll``: why it does not apply), or None (nothing).
    """
    if run is None:
        return {}
    if isinstance(run, str):
        return {"trajectory_nll": run}
    out: dict = {"trajectory_fill_ins": run.fill_ins}
    if run.exact_note:
        out["trajectory_exact_note"] = run.exact_note
    if run.messages():
        out["trajectory_infinite"] = "; ".join(run.messages())
    return out
