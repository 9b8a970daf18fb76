"""Windows and fill-in fits of the trajectory NLL: ``trajectory_nll_windows``, ``windows_table``,
``fit_undetected_trajectories`` (maximum likelihood of (Lambda, rho) and optionally R on a calibration set).

The value of one window is :func:`nllbench.trackers.trajectory_tables.trajectory_nll`; ``docs/trajectory.md``
says how to choose the fill-ins.
"""

from __future__ import annotations

import math

import numpy as np

from nllbench.engine.trajectory import (
    assignment_sum,
    association_problem_from_weights,
    trajectory_weights,
)
from nllbench.measures.likelihood.trajectory_windows import windows_table  # noqa: F401 - one row per window, kept here too
from nllbench.trackers.fillins import FillIns
from nllbench.trackers.tracks import DEFAULT_STATE
from nllbench.trackers.trajectory_tables import (
    TrajectoryNLLResult,
    check_trajectory_parameters,
    input_and_scoring,
    score_statistics,
    trajectory_input,
    window_statistics,
)


def _window_bounds(n_frames: int, window) -> list[tuple[int, int]]:
    if window is None:
        return [(0, n_frames)]
    if isinstance(window, bool) or not isinstance(window, (int, np.integer)) or window < 1:
        raise ValueError(f"window: expected a positive number of frames, got {window!r}")
    return [(k, min(k + int(window), n_frames)) for k in range(0, n_frames, int(window))]


def scored_windows(inp, window, score, **kw):
    """``(k0, k1, score(...))`` of each window ``[k0, k1)`` of ``window`` frames (None: one window).

    ``score`` is :func:`~nllbench.measures.likelihood.trajectory_windows.score_statistics` or
    :func:`~nllbench.measures.likelihood.trajectory_windows.score_window`, called with the
    window's statistics, labels, truths, frames and spans and ``kw``.
    """
    for k0, k1 in _window_bounds(inp.frames.size, window):
        stats, lab, tru, spans = window_statistics(inp, k0, k1)
        yield k0, k1, score(stats, inp.labels[lab], inp.truths[tru], inp.frames[k0:k1], spans, **kw)


def trajectory_nll_windows(
    tracks,
    truth,
    window: int,
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
) -> list[TrajectoryNLLResult]:
    """The trajectory NLL of consecutive windows of ``window`` frames (the last may be shorter).

    The frames are those of :func:`trajectory_nll` in increasing order, cut
    into runs of ``window``; each window is scored on its own (its K is its
    length, its labels those with a row in it, its truths those present in it).
    The tables are read once. :func:`windows_table` makes a table of the results.
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
    scoring = scoring.with_fill_ins(window=int(window))
    return [res for _, _, res in scored_windows(inp, window, score_statistics, scoring=scoring, exact=exact)]


# ---------------------------------------------------------------------------
# maximum-likelihood fill-ins on a calibration set
# ---------------------------------------------------------------------------


def _objective(windows, q: int, fit_R: bool, R_fixed: float):
    """Sum over windows of the value at Q, and its gradient in (log Lambda, logit rho[, logit R]).

    The gradient of each window's ``-log`` (sum over the listed associations)
    is minus the expectation, under their normalised weights, of the
    derivative of one association's log-likelihood: ``#undetected / Lambda - 1``
    in Lambda, ``sum_{j undetected} d log lambda(Y_j) / d rho`` in rho, and
    in R the matched pairs' ``free_present / R - free_absent / (1 - R)`` and
    the unmatched labels' ``-free / (1 - R)``.
    """
    from scipy.special import expit

    def value_and_grad(x):
        lam, rho = math.exp(x[0]), float(expit(x[1]))
        R = float(expit(x[2])) if fit_R else R_fixed
        total, g = 0.0, np.zeros(len(x))
        for stats in windows:
            w = trajectory_weights(stats, R, lam, rho)
            prob = association_problem_from_weights(w.log_w, w.alone, w.log_lam, w.total_rate)
            s = assignment_sum(prob, q)
            total += s.value
            if not math.isfinite(s.value):
                return math.inf, g
            m = stats.alone_rows.shape[0]
            P = s.posterior(m)
            und = P[:, m]
            K, sj = stats.n_frames, stats.n_present
            dlog_norm = K * math.exp((K - 1) * math.log1p(-rho)) / -math.expm1(K * math.log1p(-rho))
            dlam_drho = sj / rho - (K - sj) / (1 - rho) - dlog_norm
            g[0] += lam * 1.0 - float(und.sum())  # Lambda * d/dLambda
            g[1] -= rho * (1 - rho) * float(np.sum(und * dlam_drho))
            if fit_R:
                pl = P[:, :m].T  # (m, n)
                matched = np.sum(pl * (stats.free_present / R - stats.free_absent / (1 - R)))
                unmatched = np.sum((1.0 - pl.sum(axis=1)) * stats.free / (1 - R))
                g[2] -= R * (1 - R) * float(matched - unmatched)
        return total, g

    return value_and_grad


def fit_undetected_trajectories(
    tracks,
    truth,
    *,
    fov,
    window: int | None = None,
    q: int = 10,
    unlisted_presence: float = 0.0,
    fit_unlisted_presence: bool = False,
    frames=None,
    full_state: bool = False,
    state=DEFAULT_STATE,
    fill: FillIns | None = None,
    mixture: str = "refuse",
) -> dict:
    """Maximum-likelihood undetected trajectories (Lambda, rho), and optionally R, on a calibration set.

    Minimises the sum of the trajectory NLLs (at Q) of the calibration
    windows (consecutive runs of ``window`` frames; None: all frames as one
    window, which holds a single Poisson count and cannot pin Lambda down)
    over Lambda, rho and, with ``fit_unlisted_presence``, the unlisted
    presence R (else R = ``unlisted_presence``). Each association term has the
    form ``c exp(-W Lambda) Lambda^k`` with ``k <= N`` truths left undetected
    (N truths in W windows), so the derivative in Lambda is at least
    ``W - N / Lambda > 0`` beyond ``N / W``: the optimum lies in ``[0, N / W]``.
    It is found by L-BFGS-B on (log Lambda, logit rho, logit R) with the
    analytic gradient; the edges Lambda = 0, rho = 1 and (fitted) R = 0 are
    compared too.

    Returns
    -------
    dict
        rate, presence, unlisted_presence, calibration_nll, windows, window, truths (N), q,
        fitted (names), presence_identified (False when the rate is 0: rho then changes nothing),
        converged, fov_low, fov_high.
    """
    from scipy.optimize import minimize

    inp = trajectory_input(
        tracks, truth, state=state, frames=frames, full_state=full_state, fill=fill, fov=fov, mixture=mixture
    )
    if inp.box is None:
        raise ValueError("fov: fitting the undetected trajectories needs the box (low, high)")
    q, _, _, R0 = check_trajectory_parameters(q, None, unlisted_presence, inp.box)
    windows = [window_statistics(inp, k0, k1)[0] for k0, k1 in _window_bounds(inp.frames.size, window)]
    n_truths = int(sum(s.n_present.size for s in windows))
    W = len(windows)
    f = _objective(windows, q, fit_unlisted_presence, R0)
    names = ["rate", "presence"] + (["unlisted_presence"] if fit_unlisted_presence else [])
    if n_truths == 0:
        rate, rho, R = 0.0, 1.0, (0.0 if fit_unlisted_presence else R0)
        value = _edge_value(windows, q, rate, rho, R)
        return _fit_record(inp, rate, rho, R, value, W, window, n_truths, q, names, True)
    top = n_truths / W
    x0 = [math.log(0.5 * top), 0.0] + ([0.0] if fit_unlisted_presence else [])
    if not math.isfinite(f(x0)[0]):
        raise ValueError(
            "the calibration windows have likelihood 0 at every fill-in (a truth outside the box, or an "
            "r = 1 label no truth can take); the fill-ins cannot be fitted"
        )
    bounds = [(math.log(top) - 40.0, math.log(top)), (-30.0, 30.0)] + (
        [(-30.0, 30.0)] if fit_unlisted_presence else []
    )
    res = minimize(f, x0, jac=True, method="L-BFGS-B", bounds=bounds, options={"ftol": 1e-13, "gtol": 1e-9})
    from scipy.special import expit

    rate, rho = math.exp(res.x[0]), float(expit(res.x[1]))
    R = float(expit(res.x[2])) if fit_unlisted_presence else R0
    value = float(res.fun)
    # the edges of the parameter box, where the transformed variables cannot reach; each edge from the
    # best point so far, so that a parameter that changes nothing (R without an unlisted frame) ends at it
    edges = (0, 1, 2) if fit_unlisted_presence else (0, 1)
    for k in edges:
        cand = [rate, rho, R]
        cand[k] = (0.0, 1.0, 0.0)[k]
        v = _edge_value(windows, q, *cand)
        if v <= value:
            (rate, rho, R), value = cand, v
    return _fit_record(inp, rate, rho, R, value, W, window, n_truths, q, names, bool(res.success))


def _edge_value(windows, q, rate, rho, R) -> float:
    total = 0.0
    for stats in windows:
        w = trajectory_weights(stats, R, rate, rho)
        prob = association_problem_from_weights(w.log_w, w.alone, w.log_lam, w.total_rate)
        total += assignment_sum(prob, q).value
    return total


def _fit_record(inp, rate, rho, R, value, W, window, n_truths, q, names, converged) -> dict:
    return {
        "rate": rate,
        "presence": rho,
        "unlisted_presence": R,
        "calibration_nll": value,
        "windows": W,
        "window": window,
        "truths": n_truths,
        "q": q,
        "fitted": names,
        # rho only matters through undetected trajectories: with a rate of 0 it is not identified
        "presence_identified": rate > 0,
        "converged": converged,
        "fov_low": inp.fill_ins.get("fov_low"),
        "fov_high": inp.fill_ins.get("fov_high"),
    }
