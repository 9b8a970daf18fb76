"""The trajectory NLL of a labelled tracks table: ``nb.trajectory_nll`` (windows and fits:
:mod:`nllbench.trackers.trajectory_fit`).

Reads the same tidy tables as :func:`nllbench.trackers.api.score`
(:mod:`nllbench.trackers.tracks`), with the same existence and covariance
fill-ins (:class:`~nllbench.trackers.api.FillIns`); each track ``id`` is a
label, each truth ``id`` a trajectory. The density, its normalisation and the
fill-ins are in ``docs/trajectory.md``; the engine is
:mod:`nllbench.engine.trajectory`. This module reads and lays out the tables
(:func:`trajectory_input`); what follows from the arrays (the window statistics, the
result, a run's windows) is :mod:`nllbench.measures.likelihood.trajectory_windows`, shared with
the reference filters' posteriors (:mod:`nllbench.measures.likelihood.filter_trajectory_nll`).
"""

from __future__ import annotations

import math

import numpy as np

from nllbench.engine.assignment import check_q
from nllbench.engine.densities import Gaussians, log_box_volume
from nllbench.engine.transforms import POSITION, temper_probabilities
from nllbench.measures.likelihood.trajectory_windows import (
    TrajectoryInput,
    TrajectoryNLLResult,
    TrajectoryScoring,
    score_statistics,
    window_statistics,
)
from nllbench.trackers.build import table_covariances, table_existence
from nllbench.trackers.fillins import FillIns, check_box
from nllbench.trackers.inputs import read_tables as _tables
from nllbench.trackers.tracks import DEFAULT_STATE

_MIXTURES = ("refuse", "marginal")


# ---------------------------------------------------------------------------
# the tables as frame-sorted arrays
# ---------------------------------------------------------------------------


def _fov_box(fov, n_state: int, dims: list[int]):
    """(low, high) of the scored dims from ``fov = (low..., high...)`` given per state column."""
    if fov is None:
        return None
    if not (isinstance(fov, (tuple, list)) and len(fov) == 2):
        raise ValueError(f"fov: expected (low, high), one bound per state column each, got {fov!r}")
    check_box(fov[0], fov[1])
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
                "the hypotheses with mixture='marginal' (nllbench score: --trajectory-mixture marginal)"
            )
    return t.weight


def trajectory_input(
    tracks,
    truth,
    *,
    state=DEFAULT_STATE,
    frames=None,
    full_state: bool = False,
    fill: FillIns | None = None,
    fov=None,
    mixture: str = "refuse",
    cov_scale: float = 1.0,
    temper: tuple[float, float] | None = None,
) -> TrajectoryInput:
    """Validate the tables and lay them out for the engine (see :func:`trajectory_nll`).

    ``cov_scale`` and ``temper`` = (tau, about) are the evaluation's calibration probes
    (:func:`nllbench.measures.run.evaluate.probed`): every covariance times ``cov_scale``, every
    existence probability tempered about ``about`` (:func:`nllbench.engine.transforms.temper_existence`).
    """
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
    r, r_source = table_existence(t, fill)
    covs, cov_source = table_covariances(t, fill)
    if temper is not None and temper[0] != 1.0:
        r = temper_probabilities(r, *temper)
    covs = covs if cov_scale == 1.0 else cov_scale * covs
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


def check_trajectory_parameters(q, undetected, unlisted_presence, box):
    """``(q, rate, presence, R)`` checked: Murty budget, undetected trajectories, unlisted presence.

    ``box`` is the scored fov box or None (then neither undetected trajectories nor R > 0 can be placed).
    """
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


def input_and_scoring(
    tracks, truth, *, q, undetected, unlisted_presence, **kw
) -> tuple[TrajectoryInput, TrajectoryScoring]:
    """The tables laid out (:func:`trajectory_input` with ``kw``) and the checked parameters, in that order.

    Returns ``(inp, scoring)``: ``scoring`` (:class:`TrajectoryScoring`) holds ``q``,
    ``rate``, ``presence``, ``unlisted_presence`` (R) and ``fill_ins`` (the
    provenance: the tables' fill-ins, the parameters and Q; callers add keys with
    :meth:`~TrajectoryScoring.with_fill_ins`).
    """
    inp = trajectory_input(tracks, truth, **kw)
    q, rate, presence, R = check_trajectory_parameters(q, undetected, unlisted_presence, inp.box)
    prov = {**inp.fill_ins, **_parameter_provenance(rate, presence, R), "q": q}
    return inp, TrajectoryScoring(q, rate, presence, R, prov)


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
    inp, scoring = input_and_scoring(
        tracks,
        truth,
        q=q,
        undetected=undetected,
        unlisted_presence=unlisted_presence,
        state=state,
        frames=frames,
        full_state=full_state,
        fill=fill,
        fov=fov,
        mixture=mixture,
    )
    stats, lab, tru, spans = window_statistics(inp)
    return score_statistics(stats, inp.labels[lab], inp.truths[tru], inp.frames, spans, scoring, exact=exact)
