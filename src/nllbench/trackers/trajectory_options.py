"""The trajectory NLL of a run's tables (``nllbench score --trajectory``): :func:`trajectory_of_tables`
and :class:`TrajectoryOptions`.

A run is scored as one window of all its frames or as consecutive windows of
K frames (``--window K``); each window's value is
:func:`nllbench.trackers.trajectory_tables.trajectory_nll` of that window, and the
run's value (:class:`nllbench.measures.likelihood.trajectory_windows.TrajectoryRun`) is their sum:
the ``-log`` likelihood of the density that scores the windows independently.
"""

from __future__ import annotations

from dataclasses import dataclass

from nllbench.measures.likelihood.trajectory_windows import TrajectoryRun, score_window


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
    :func:`nllbench.trackers.trajectory_tables.trajectory_nll` on its frames. ``fitted``: the record of
    :func:`~nllbench.trackers.trajectory_fit.fit_undetected_trajectories` when the fill-ins were
    fitted (kept in the run's ``fill_ins``). An exact value that is intractable is left out and
    the reason kept (:attr:`TrajectoryRun.exact_note`). ``cov_scale``, ``temper``: the calibration
    probes (:func:`~nllbench.trackers.trajectory_tables.trajectory_input`).
    """
    from nllbench.trackers.tracks import DEFAULT_STATE
    from nllbench.trackers.trajectory_fit import scored_windows
    from nllbench.trackers.trajectory_tables import input_and_scoring

    inp, scoring = input_and_scoring(
        tracks,
        truth,
        q=q,
        undetected=undetected,
        unlisted_presence=unlisted_presence,
        state=DEFAULT_STATE if state is None else state,
        frames=frames,
        full_state=full_state,
        fill=fill,
        fov=fov,
        mixture=mixture,
        cov_scale=cov_scale,
        temper=temper,
    )
    if window is not None:
        scoring = scoring.with_fill_ins(window=int(window))
    if fitted is not None:
        scoring = scoring.with_fill_ins(fitted=fitted)
    prov = scoring.fill_ins
    out, notes = [], []
    for k0, k1, (res, note) in scored_windows(inp, window, score_window, scoring=scoring, exact=exact):
        out.append(res)
        if note:
            notes.append(f"frames {int(inp.frames[k0])}-{int(inp.frames[k1 - 1])}: {note}")
    return TrajectoryRun(tuple(out), scoring.q, prov, "; ".join(notes))


@dataclass(frozen=True)
class TrajectoryOptions:
    """What ``nllbench score --trajectory`` asks of the trajectory NLL beside the per-frame scoring.

    window : frames per window (None: the whole run as one window)
    undetected : (rate Lambda, presence rho) of the undetected trajectories, or None (none)
    unlisted_presence : R
    mixture : "refuse" or "marginal" (:func:`nllbench.trackers.trajectory_tables.trajectory_nll`)
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
