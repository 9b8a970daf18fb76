"""``nllbench score`` on MOTChallenge files: its options, ``--measures`` checked, the MOTChallenge
measures printed (the scoring: :mod:`nllbench.trackers.score_runs`; ``docs/score.md``, "MOTChallenge
files as the benchmark scores them")."""

from __future__ import annotations

import argparse

from nllbench.cli.common import POSITIVE
from nllbench.trackers.score_runs import COMBINED


def print_combined(row: dict) -> None:
    """The MOTChallenge measures of a summary row (as TrackEval names them)."""
    if "HOTA" not in row:
        return
    print(
        f"  {row.get('sequence', 'MOTChallenge')}: HOTA {row['HOTA']:.4f}  DetA {row['DetA']:.4f}  "
        f"AssA {row['AssA']:.4f}  MOTA {row['MOTA']:.4f}  MOTP {row['MOTP']:.4f}  IDF1 {row['IDF1']:.4f}  "
        f"IDSW {row['IDSW']}  (IoU, as TrackEval)"
    )


def print_batch(rows: list[dict], directory) -> None:
    """What a batch wrote, and its combined MOTChallenge measures (when it has them)."""
    metrics = sum(1 for r in rows if r.get("not_applicable") != "nll" and r.get("sequence") != COMBINED)
    extra = " and motchallenge.nc" if rows and rows[-1].get("sequence") == COMBINED else ""
    print(f"wrote {metrics} metrics files, summary.csv{extra} to {directory}")
    print_combined(rows[-1])


def selected_measures(args: argparse.Namespace, boxes: bool):
    """``--measures`` parsed and checked (:func:`nllbench.measures.selection.left_out`), or None when not
    given. ``boxes``: the inputs are MOTChallenge files matched by IoU."""
    from nllbench.measures.selection import left_out, parse_measures

    text = getattr(args, "measures", None)
    if text is None:
        return None
    selected = parse_measures(text, "--measures")
    left_out(selected, boxes=boxes, option="--measures")
    return selected


def add_mot_options(sc) -> None:
    """``score``'s MOTChallenge, constant-existence and preset options."""
    from nllbench.measures.run.presets import PRESETS

    sc.add_argument(
        "--format",
        choices=("auto", "table", "mot", "stonesoup"),
        default="auto",
        help="input format: auto (.txt: MOTChallenge, .yaml/.yml: Stone Soup), table (CSV/Parquet), mot"
        " (MOTChallenge text) or stonesoup (Stone Soup YAML; a .csv/.parquet truth stays a table)",
    )
    sc.add_argument(
        "--mot-conf",
        choices=("score", "r", "ignore"),
        default="score",
        help="MOTChallenge tracks' 7th column: a score to calibrate, r, or ignored (a constant one: absent)",
    )
    sc.add_argument(
        "--mot-matching",
        choices=("iou", "centre"),
        default="iou",
        help="MOTChallenge result and ground truth: iou (as the benchmark and TrackEval: box IoU for "
        "HOTA, CLEAR and Identity, TrackEval's preprocessing) or centre (box centres at a distance, as "
        "--threshold; no preprocessing)",
    )
    sc.add_argument(
        "--mot-box-std-fraction",
        type=POSITIVE,
        help="MOTChallenge fill-in: covariance diag((F * width)^2, (F * height)^2) of the box centre",
    )
    sc.add_argument(
        "--fit-constant-existence-on",
        nargs=2,
        metavar=("TRACKS", "TRUTH"),
        help="fill-in: r = the share of a calibration set's rows that match a truth (as MOTA; MOTChallenge "
        "files: by IoU >= 0.5, as they are scored)",
    )
    sc.add_argument(
        "--measures",
        metavar="NAMES",
        help="comma-separated measures to compute, by their declared names (nll, gospa, hota, clear_mot, "
        "identity, energy_score, ...; default: all). The required ones are always in a metrics file; an "
        "optional one left out is not computed; on MOTChallenge files hota,clear_mot,identity alone "
        "gives TrackEval's measures without the NLL",
    )
    sc.add_argument(
        "--preset",
        choices=PRESETS,
        help="matching convention (av2, nuscenes, mahalanobis); settings given explicitly override it",
    )
