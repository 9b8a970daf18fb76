"""The trajectory NLL of one run, as stored and tabulated: :class:`TrajectoryRun`.

A run is scored as one window of all its frames (the pipeline) or as
consecutive windows of K frames (``nllbench score --trajectory --window K``);
each window's value is :func:`nllbench.trackers.trajectory.trajectory_nll` of
that window. The run's value is their sum: the ``-log`` likelihood of the
density that scores the windows independently. This module also scores a
window's statistics with the exact value when asked and tractable
(:func:`score_window`), which the command line and the pipeline share.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from nllbench.engine.trajectory import TRAJECTORY_TERMS
from nllbench.trackers.trajectory import TrajectoryNLLResult, score_statistics


def score_window(
    stats, labels, truths, frames, spans, *, exact: bool, **kw
) -> tuple[TrajectoryNLLResult, str]:
    """:func:`~nllbench.trackers.trajectory.score_statistics`, the exact value refused without failing.

    Returns (result, note): with ``exact`` and a component beyond the exact
    computation's limit, the result without the exact value and the reason
    (``""`` otherwise), so that an intractable exact value is flagged, never guessed.
    """
    try:
        return score_statistics(stats, labels, truths, frames, spans, exact=exact, **kw), ""
    except ValueError as exc:
        if not exact:
            raise
        return score_statistics(stats, labels, truths, frames, spans, exact=False, **kw), str(exc)


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
        if self.exact is not None:
            row["trajectory_nll_exact"] = self.exact
        elif self.exact_note:  # asked for, intractable: flagged, never guessed
            from nllbench.trackers.checks import NA

            row["trajectory_nll_exact"] = NA
        return row

    def per_window(self):
        """One row per window (:func:`nllbench.trackers.trajectory_fit.windows_table`)."""
        from nllbench.trackers.trajectory_fit import windows_table

        return windows_table(list(self.windows))

    def per_trajectory(self):
        """Each window's :meth:`~nllbench.trackers.trajectory.TrajectoryNLLResult.per_trajectory`
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


def trajectory_of_tables(
    tracks,
    truth,
    *,
    window: int | None = None,
    q: int = 10,
    exact: bool = False,
    undetected=None,
    fov=None,
    unlisted_presence: float = 0.0,
    frames=None,
    full_state: bool = False,
    state=None,
    fill=None,
    mixture: str = "refuse",
    fitted: dict | None = None,
    cov_scale: float = 1.0,
    temper: tuple[float, float] | None = None,
) -> TrajectoryRun:
    """The trajectory NLL of a tracks and a truth table, in windows of ``window`` frames (None: one).

    The arguments are those of :func:`nllbench.trackers.trajectory_fit.trajectory_nll_windows`
    (``state`` None: the default state columns); each window equals
    :func:`nllbench.trackers.trajectory.trajectory_nll` on its frames. ``fitted``: the record of
    :func:`~nllbench.trackers.trajectory_fit.fit_undetected_trajectories` when the fill-ins were
    fitted (kept in the run's ``fill_ins``). An exact value that is intractable is left out and
    the reason kept (:attr:`TrajectoryRun.exact_note`). ``cov_scale``, ``temper``: the calibration
    probes (:func:`~nllbench.trackers.trajectory.prepare`).
    """
    from nllbench.trackers.tracks import DEFAULT_STATE
    from nllbench.trackers.trajectory import (
        _check_parameters,
        _parameter_provenance,
        prepare,
        window_statistics,
    )
    from nllbench.trackers.trajectory_fit import _window_bounds

    inp = prepare(
        tracks,
        truth,
        state=DEFAULT_STATE if state is None else state,
        frames=frames,
        full_state=full_state,
        fill=fill,
        fov=fov,
        mixture=mixture,
        cov_scale=cov_scale,
        temper=temper,
    )
    q, rate, presence, R = _check_parameters(q, undetected, unlisted_presence, inp.box)
    prov = {**inp.fill_ins, **_parameter_provenance(rate, presence, R), "q": q}
    if window is not None:
        prov["window"] = int(window)
    if fitted is not None:
        prov["fitted"] = fitted
    out, notes = [], []
    for k0, k1 in _window_bounds(inp.frames.size, window):
        stats, lab, tru, spans = window_statistics(inp, k0, k1)
        res, note = score_window(
            stats,
            inp.labels[lab],
            inp.truths[tru],
            inp.frames[k0:k1],
            spans,
            q=q,
            exact=exact,
            rate=rate,
            presence=presence,
            unlisted_presence=R,
            fill_ins=prov,
        )
        out.append(res)
        if note:
            notes.append(f"frames {int(inp.frames[k0])}-{int(inp.frames[k1 - 1])}: {note}")
    return TrajectoryRun(tuple(out), q, prov, "; ".join(notes))


@dataclass(frozen=True)
class TrajectoryOptions:
    """What ``nllbench score --trajectory`` asks of the trajectory NLL beside the per-frame scoring.

    window : frames per window (None: the whole run as one window)
    undetected : (rate Lambda, presence rho) of the undetected trajectories, or None (none)
    unlisted_presence : R
    mixture : "refuse" or "marginal" (:func:`nllbench.trackers.trajectory.trajectory_nll`)
    fitted : the record of :func:`~nllbench.trackers.trajectory_fit.fit_undetected_trajectories`
        when ``undetected`` and R were fitted, else None
    """

    window: int | None = None
    undetected: tuple[float, float] | None = None
    unlisted_presence: float = 0.0
    mixture: str = "refuse"
    fitted: dict | None = None

    def run(self, tracks, truth, *, frames, state, fill, settings) -> TrajectoryRun:
        """The trajectory NLL of the tables with the scoring run's fill-ins and settings.

        ``fill``: the per-frame :class:`~nllbench.trackers.fillins.FillIns` (its existence and
        covariance fill-ins and its box are used; its per-frame undetected rate is not, the
        undetected trajectories replace it); ``settings``: Q (the largest), exact, marginal and the
        calibration probes of the per-frame NLL.
        """
        from dataclasses import replace

        fov = None if fill.fov_low is None else (fill.fov_low, fill.fov_high)
        return trajectory_of_tables(
            tracks,
            truth,
            window=self.window,
            q=int(max(settings.qs)),
            exact=bool(settings.exact),
            undetected=self.undetected,
            fov=fov,
            unlisted_presence=self.unlisted_presence,
            frames=frames,
            full_state=settings.marginal == "full",
            state=state,
            fill=replace(fill, undetected_rate=0.0, fitted_rate=None),
            mixture=self.mixture,
            fitted=self.fitted,
            cov_scale=settings.cov_scale,
            temper=(settings.temper, settings.existence_threshold),
        )


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
