"""How the trajectory NLL of a tracker's output and its terms change with the unlisted presence R.

Usage (see docs/trajectory.md, "Choosing R and the undetected trajectories")::

    python examples/trajectory_unlisted_presence.py CAL_TRACKS CAL_TRUTH TRACKS TRUTH \
        --fov 0 0 300 300 [--window 10] [--q 100] [--r 0 0.01 0.05 0.1 0.2 0.5]

The calibration pair fits the score calibration (when the tracks have a ``score`` column) and, by
maximum likelihood, the undetected trajectories (Lambda, rho) and R; the test pair is then scored
at the fitted R and at every R of ``--r`` with the fitted (Lambda, rho).
"""

import argparse

import nllbench as nb
from nllbench.engine.trajectory_nll import TRAJECTORY_TERMS
from nllbench.trackers.api import FillIns, fit_score_calibration
from nllbench.trackers.trajectory_fit import fit_undetected_trajectories


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("cal_tracks")
    p.add_argument("cal_truth")
    p.add_argument("tracks")
    p.add_argument("truth")
    p.add_argument("--fov", nargs=4, type=float, required=True, metavar=("XLOW", "YLOW", "XHIGH", "YHIGH"))
    p.add_argument("--window", type=int, default=None, help="calibration windows of K frames (default: one)")
    p.add_argument("--q", type=int, default=100)
    p.add_argument("--r", nargs="*", type=float, default=[0.0, 0.001, 0.01, 0.05, 0.1, 0.2, 0.5])
    args = p.parse_args()
    fov = (tuple(args.fov[:2]), tuple(args.fov[2:]))
    import pandas as pd

    has_score = "score" in pd.read_csv(args.cal_tracks, nrows=1).columns
    fill = FillIns(calibration=fit_score_calibration(args.cal_tracks, args.cal_truth)) if has_score else None
    fit = fit_undetected_trajectories(
        args.cal_tracks,
        args.cal_truth,
        fov=fov,
        window=args.window,
        q=args.q,
        fill=fill,
        fit_unlisted_presence=True,
    )
    print(
        f"fitted on {args.cal_tracks}: rate {fit['rate']:.4g}, presence {fit['presence']:.4g}, "
        f"R {fit['unlisted_presence']:.4g} ({fit['windows']} windows, {fit['truths']} truths)"
    )
    print(f"{'R':>8} {'value':>10} " + " ".join(f"{t:>12}" for t in TRAJECTORY_TERMS))
    for R in sorted({*args.r, fit["unlisted_presence"]}):
        res = nb.trajectory_nll(
            args.tracks,
            args.truth,
            q=args.q,
            fill=fill,
            fov=fov,
            undetected=(fit["rate"], fit["presence"]),
            unlisted_presence=R,
        )
        mark = "  (fitted)" if R == fit["unlisted_presence"] else ""
        print(f"{R:8.4f} {res.value:10.1f} " + " ".join(f"{v:12.1f}" for v in res.terms.values()) + mark)


if __name__ == "__main__":
    main()
