"""``nllbench score --trajectory``: the trajectory NLL beside the per-frame scoring (``docs/trajectory.md``).

The options, their checks, the fit of the fill-ins on a calibration set, the
per-window and per-trajectory tables and the printed lines; :mod:`nllbench.cli.score`
calls these.
"""

from __future__ import annotations

import argparse
import json

from nllbench.cli.common import NON_NEGATIVE, PROBABILITY
from nllbench.options import MAX_STEPS, integer

#: Options that only mean something with --trajectory (dest, flag).
_NEEDS_TRAJECTORY = (
    ("undetected_trajectories", "--undetected-trajectories"),
    ("unlisted_presence", "--unlisted-presence"),
    ("fit_trajectory_on", "--fit-trajectory-on"),
    ("fit_window", "--fit-window"),
    ("window", "--window"),
    ("per_window", "--per-window"),
    ("per_trajectory", "--per-trajectory"),
)


def add_trajectory_options(parser: argparse.ArgumentParser) -> None:
    """The trajectory-NLL options of ``score`` (an argument group)."""
    g = parser.add_argument_group(
        "trajectory NLL",
        "the likelihood of the true set of trajectories (docs/trajectory.md in nllbench's source)",
    )
    g.add_argument(
        "--trajectory",
        action="store_true",
        help="also the trajectory NLL (trajectory_nll; trajectory_nll_exact with --exact); needs track ids",
    )
    g.add_argument(
        "--undetected-trajectories",
        type=NON_NEGATIVE,
        nargs=2,
        metavar=("RATE", "PRESENCE"),
        help="fill-in: Poisson undetected trajectories of mean RATE, present at each frame with probability"
        " PRESENCE, uniform on --fov (default: none)",
    )
    g.add_argument(
        "--unlisted-presence",
        type=PROBABILITY,
        metavar="R",
        help="fill-in: a label is present with probability R where it has no row, uniform on --fov"
        " (default 0; fitted with --fit-trajectory-on unless given)",
    )
    g.add_argument(
        "--fit-trajectory-on",
        nargs=2,
        metavar=("TRACKS", "TRUTH"),
        help="fill-in: maximum-likelihood RATE, PRESENCE (and R unless --unlisted-presence)"
        " on a calibration set",
    )
    g.add_argument(
        "--fit-window",
        type=integer(1, MAX_STEPS),
        metavar="K",
        help="frames per calibration window of --fit-trajectory-on (default: --window, else 10)",
    )
    g.add_argument(
        "--window",
        type=integer(1, MAX_STEPS),
        metavar="K",
        help="score consecutive windows of K frames (the last may be shorter); trajectory_nll is their sum",
    )
    g.add_argument("--per-window", metavar="FILE", help="CSV with one row per window (value, bounds, terms)")
    g.add_argument(
        "--per-trajectory",
        metavar="FILE",
        help="CSV with one row per truth trajectory (and window): its best label, probabilities, share",
    )
    g.add_argument(
        "--trajectory-mixture",
        choices=("refuse", "marginal"),
        default="refuse",
        help="a table with several hypotheses per frame: refuse it, or score each label's marginal"
        " over them (default: refuse)",
    )


def check_trajectory_args(args: argparse.Namespace, batch: bool) -> None:
    """Refuse trajectory options without --trajectory, clashing fill-ins, and tables that are for one run."""
    if not args.trajectory:
        given = [flag for dest, flag in _NEEDS_TRAJECTORY if getattr(args, dest) is not None]
        if args.trajectory_mixture != "refuse":
            given.append("--trajectory-mixture")
        if given:
            raise ValueError(f"score: {', '.join(given)} need --trajectory")
        return
    if args.undetected_trajectories is not None and args.fit_trajectory_on:
        raise ValueError("score: give --undetected-trajectories or --fit-trajectory-on, not both")
    if args.undetected_trajectories is not None:
        rate, presence = args.undetected_trajectories
        if not 0 < presence <= 1:
            raise ValueError(
                f"--undetected-trajectories: expected PRESENCE in (0, 1], got {presence!r} "
                "(the probability that an undetected trajectory is present at a frame)"
            )
    rate = 0.0 if args.undetected_trajectories is None else args.undetected_trajectories[0]
    needs_box = args.fit_trajectory_on or (args.unlisted_presence or 0) > 0 or rate > 0
    if needs_box and args.fov is None:
        raise ValueError(
            "score: the undetected trajectories and the unlisted presence are uniform on a box: "
            "give --fov LOW... HIGH..."
        )
    if args.fit_window is not None and not args.fit_trajectory_on:
        raise ValueError("score: --fit-window is for --fit-trajectory-on")
    if batch and (args.per_window or args.per_trajectory):
        raise ValueError("score: --per-window and --per-trajectory are for one run")


#: Warned when the fitted undetected-trajectory rate is 0.
ZERO_RATE_WARNING = (
    "--fit-trajectory-on: the fitted undetected-trajectory rate is 0 (every calibration truth has a track): "
    "a scored truth trajectory that no track explains has probability 0, so the trajectory NLL is infinite "
    "there; give --undetected-trajectories RATE PRESENCE to allow for them"
)


def trajectory_options(args: argparse.Namespace, fill, state, settings, read=None):
    """The :class:`~nllbench.trackers.trajectory_options.TrajectoryOptions` of the command (None without
    --trajectory), with the fill-ins fitted (and printed) when asked.

    ``read(tracks, truth)`` gives the calibration pair as ``score`` reads its inputs (MOTChallenge,
    Stone Soup YAML); errors of the fit name ``--fit-trajectory-on``."""
    import warnings

    from nllbench.trackers.trajectory_options import TrajectoryOptions

    if not args.trajectory:
        return None
    options = dict(window=args.window, mixture=args.trajectory_mixture)
    if not args.fit_trajectory_on:
        undetected = None if args.undetected_trajectories is None else tuple(args.undetected_trajectories)
        R = args.unlisted_presence or 0.0
        return TrajectoryOptions(undetected=undetected, unlisted_presence=R, **options)
    try:
        pair = read(*args.fit_trajectory_on) if read is not None else args.fit_trajectory_on
        fit = _fit(pair, args, fill, settings, state)
    except ValueError as exc:
        raise ValueError(f"--fit-trajectory-on {' '.join(map(str, args.fit_trajectory_on))}: {exc}") from None
    fit["tracks"], fit["truth"] = (str(p) for p in args.fit_trajectory_on)
    print(
        f"fitted undetected trajectories: rate {fit['rate']:.6g}, presence {fit['presence']:.6g}; "
        f"unlisted presence {fit['unlisted_presence']:.6g} (calibration trajectory NLL "
        f"{fit['calibration_nll']:.6g} over {fit['windows']} windows)"
    )
    if fit["rate"] == 0:
        warnings.warn(ZERO_RATE_WARNING, UserWarning, stacklevel=2)
    undetected, R = (fit["rate"], fit["presence"]), fit["unlisted_presence"]
    return TrajectoryOptions(undetected=undetected, unlisted_presence=R, fitted=fit, **options)


def _fit(pair, args: argparse.Namespace, fill, settings, state) -> dict:
    """The undetected trajectories fitted on the calibration ``pair`` (tracks, truth)."""
    from dataclasses import replace

    from nllbench.trackers.trajectory_fit import fit_undetected_trajectories

    return fit_undetected_trajectories(
        *pair,
        fov=(fill.fov_low, fill.fov_high),
        window=args.fit_window or args.window or 10,
        q=int(max(settings.qs)),
        unlisted_presence=args.unlisted_presence or 0.0,
        fit_unlisted_presence=args.unlisted_presence is None,
        full_state=settings.marginal == "full",
        state=state,
        fill=replace(fill, undetected_rate=0.0, fitted_rate=None),
        mixture=args.trajectory_mixture,
    )


def print_trajectory(result) -> None:
    """The trajectory NLL's lines of the printed summary (nothing without it)."""
    run = result.metrics.trajectory
    if run is None:
        return
    windows = f", {len(run.windows)} windows" if len(run.windows) > 1 else ""
    print(
        f"  trajectory NLL (Q={run.q}{windows}): {run.value:.4f} "
        f"[{run.lower:.4f}, {run.upper:.4f}]" + ("" if run.exact is None else f", exact {run.exact:.4f}")
    )
    print("    " + "  ".join(f"{k} {v:.4f}" for k, v in run.terms.items()))
    for message in run.messages():
        print(f"    infinite: {message}")
    if run.exact_note:
        print(f"    exact value not computed: {run.exact_note}")
    shown = {k: run.fill_ins[k] for k in ("undetected_trajectories", "unlisted_presence")}
    print(f"    fill-ins: {json.dumps(shown)}")
