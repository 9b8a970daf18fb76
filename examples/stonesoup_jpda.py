"""A Stone Soup JPDA (or GNN) tracker scored with a fitted existence: the missed-detection weight, calibrated.

Usage (see docs/score.md, "Stone Soup: JPDA and GNN, a fitted existence")::

    python examples/stonesoup_jpda.py CAL.nc TEST.nc [--associator jpda|gnn] [--window 1] [-o TRACKS.csv]

Runs the tracker (:func:`nllbench.example_trackers.stonesoup.run_association`)
on a calibration and a test scenario file, exports both with
``score = 1 - P(missed detection)`` (:mod:`nllbench.trackers.stonesoup_existence`),
fits on the calibration run the score -> r map and the undetected rate, and
scores the test run three ways, each with its own fitted undetected rate:

* ``fitted``: r = expit(a + b score), the logistic map fitted on the calibration run;
* ``constant``: r = the share of calibration rows matched to a truth (the
  score ignored: what the score adds is the difference to this);
* ``existence_one``: r = 1 (any false or missed object makes a frame's NLL infinite).

Prints the mean NLL per step (largest Q) of each and the differences.
``-o`` writes the test run's tracks table (``nllbench score ... --fit-score-on``
takes it). Needs Stone Soup (``pip install -e '.[crosscheck]'``).
"""

import argparse
import math
import warnings

import numpy as np

import nllbench as nb
from nllbench.example_trackers.stonesoup import association_tracks_table, truth_table
from nllbench.measures.evaluate import EvaluationSettings
from nllbench.store import read_scenario
from nllbench.trackers.fitting import detection_outcomes, fit_score_calibration, fit_undetected_rate
from nllbench.trackers.inputs import read_tables


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("calibration", help="calibration scenario file (nllbench simulate)")
    p.add_argument("test", help="test scenario file")
    p.add_argument("--associator", choices=["jpda", "gnn"], default="jpda")
    p.add_argument("--window", type=int, default=1, help="states averaged in the missed-detection score")
    p.add_argument("--q", type=int, default=10, help="Murty budget of the NLL")
    p.add_argument("-o", "--output", help="write the test run's tracks table (.csv or .parquet)")
    args = p.parse_args()
    cal_data, test_data = read_scenario(args.calibration), read_scenario(args.test)
    cal = association_tracks_table(cal_data, associator=args.associator, window=args.window)
    test = association_tracks_table(test_data, associator=args.associator, window=args.window)
    cal_truth, test_truth = truth_table(cal_data), truth_table(test_data)
    if args.output:
        test.to_parquet(args.output, index=False) if args.output.endswith(".parquet") else test.to_csv(
            args.output, index=False
        )
    m = test_data.model
    box = (tuple(m.fov_low), tuple(m.fov_high))
    settings = EvaluationSettings(qs=(args.q,))
    calibration = fit_score_calibration(cal, cal_truth, frames=list(range(cal_data.steps)))
    t, y, _, _ = read_tables(cal, cal_truth, ("x", "y"), list(range(cal_data.steps)))
    share = float(np.mean(detection_outcomes(t, y, 2.0)))
    print(
        f"{args.associator}: calibration rows {len(cal)}, matched share {share:.3f}; "
        f"r = expit({calibration.intercept:.3f} + {calibration.slope:.3f} score)"
    )
    runs = {
        "fitted": (test, nb.FillIns(0.0, *box, calibration=calibration)),
        "constant": (test.drop(columns="score").assign(r=share), nb.FillIns(0.0, *box)),
        "existence_one": (test.drop(columns="score"), nb.FillIns(0.0, *box, existence_one=True)),
    }
    cal_tables = {
        "fitted": cal,
        "constant": cal.drop(columns="score").assign(r=share),
        "existence_one": cal.drop(columns="score"),
    }
    out, rates, values = {}, {}, {}
    for name, (table, fill) in runs.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # existence_one's warning of infinite NLL
            rate_fill = nb.FillIns(0.0, *box, calibration=fill.calibration, existence_one=fill.existence_one)
            try:
                rate = fit_undetected_rate(
                    cal_tables[name],
                    cal_truth,
                    frames=list(range(cal_data.steps)),
                    fill=rate_fill,
                    settings=settings,
                )["rate"]
            except ValueError:  # infinite at every rate (r = 1 and a false track): the constant's rate
                rate = rates["constant"]
            rates[name] = rate
            fill = nb.FillIns(rate, *box, calibration=fill.calibration, existence_one=fill.existence_one)
            res = nb.score(
                table, test_truth, frames=list(range(test_data.steps)), fill=fill, settings=settings
            )
        v = res.metrics.nll["value"][:, -1]
        out[name], values[name] = float(np.mean(v)), v
        print(
            f"  {name:14s} undetected rate {rate:.3f}: mean NLL per step (Q = {args.q}) "
            f"{out[name]:.3f} ({int(np.sum(~np.isfinite(v)))} of {v.size} steps infinite)"
        )
    for base in ("constant", "existence_one"):
        d = out["fitted"] - out[base]
        finite = np.isfinite(values[base])
        on = float(np.mean(values["fitted"][finite] - values[base][finite])) if finite.any() else math.nan
        print(
            f"  fitted - {base}: {d:.3f}; on the {int(finite.sum())} steps where {base} is finite: {on:.3f}"
        )


if __name__ == "__main__":
    main()
