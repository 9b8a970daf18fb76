"""``nllbench score`` on MOTChallenge files: the pair read as TrackEval reads it, what the NLL needs,
the combined result of a batch (``docs/score.md``, "MOTChallenge files as the benchmark scores them")."""

from __future__ import annotations

import argparse
from pathlib import Path

from nllbench.cli.common import POSITIVE


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


def one_run_boxes(args: argparse.Namespace, options: dict, pair, frames, outputs, trajectory, needs) -> dict:
    """One run's MOTChallenge measures without the NLL (which ``needs`` that): the measures file to -o,
    the summary row to its CSV (``outputs``: their paths and --per-frame's); the row. --per-frame and
    --trajectory need the NLL."""
    from nllbench.store import write_summary_csv

    out, summary, per_frame = outputs
    if per_frame is not None or trajectory is not None:
        raise ValueError(f"score: --per-frame and the trajectory NLL need the NLL, which needs {needs}")
    row, measures = boxes_only(args, options, pair, frames)
    write_boxes(out, [Path(args.tracks).stem], [measures], args)
    write_summary_csv(row, summary)
    return row


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


def without_nll(args: argparse.Namespace) -> str | None:
    """Why the NLL's run is left out by ``--measures`` (in words), or None."""
    text = getattr(args, "measures", None)
    if text is None or "nll" in {n.strip() for n in text.split(",")}:
        return None
    return "nll in --measures (TrackEval's measures only were asked)"


def boxes_only(args: argparse.Namespace, options: dict, pair, frames):
    """(summary row, BoxMeasures) of a MOTChallenge pair scored without the NLL (its fill-ins missing),
    on ``frames`` (None or ``"union"``: the pair's)."""
    from nllbench.trackers.motchallenge import box_summary, pair_measures

    measures = pair_measures(pair, None if frames in (None, "union") else frames)
    steps = len(pair.frames) if frames in (None, "union") else len(frames)
    row = {"filter": options["tracker"], "steps": steps, **box_summary(measures), "not_applicable": "nll"}
    return row, measures


def write_boxes(path, names, measures, args) -> None:
    """The MOTChallenge measures file: each sequence's and the combined (TrackEval's COMBINED_SEQ)."""
    from nllbench.measures.boxes import combine_sequences
    from nllbench.store.boxes import write_box_measures

    write_box_measures(path, names, [*measures, combine_sequences(measures)], {"filter": args.tracker})


#: The sequence name of the combined row of a MOTChallenge batch's summary.
COMBINED = "COMBINED"


def combined_row(rows: list[dict], measures: list, args, qs) -> dict:
    """The summary row of the sequences combined as TrackEval combines them (``COMBINED_SEQ``).

    The NLL per Q (``nll_q<Q>``) is the mean over every frame of every sequence
    (each sequence's mean weighted by its frames), when every sequence has it.
    """
    from nllbench.measures.boxes import combine_sequences
    from nllbench.trackers.motchallenge import box_summary

    steps = sum(int(r["steps"]) for r in rows)
    out = {"sequence": COMBINED, "filter": args.tracker, "steps": steps}
    out.update(box_summary(combine_sequences(measures)))
    for q in qs:
        key = f"nll_q{q}"
        if all(isinstance(r.get(key), float) for r in rows) and steps:
            out[key] = sum(r[key] * int(r["steps"]) for r in rows) / steps
    return out


def aligned_rows(rows: list[dict]) -> list[dict]:
    """Rows with every key any of them has (in order of first appearance), missing cells empty."""
    keys = list(dict.fromkeys(k for r in rows for k in r))
    return [{k: r.get(k, "") for k in keys} for r in rows]


def check_stonesoup_existence(args: argparse.Namespace, path, tracks, fill, stonesoup: bool) -> None:
    """Refuse Stone Soup tracks that carry no existence (no r, no score) and no fill-in for it, pointing
    to ``--stonesoup-existence`` (a JPDA / GNN tracker keeps none: ``missed_detection`` gives a score)."""
    if path is None or not stonesoup:
        return
    columns = set(getattr(tracks, "columns", ()))
    if columns & {"r", "score"} or fill.constant_existence is not None or fill.existence_one:
        return
    raise ValueError(
        f"{path}: no column 'r' or 'score': the tracks carry no existence_probability, "
        f"{args.stonesoup_metadata_key!r} metadata or weight (--stonesoup-existence "
        f"{args.stonesoup_existence}); give --stonesoup-existence missed_detection (a score, to calibrate "
        "with --fit-score-on) or --fit-constant-existence-on TRACKS TRUTH, or --existence-one"
    )


def nll_needs(tracks, fill) -> str | None:
    """What the NLL of a tracks table still needs (existence, covariances), in words; None if nothing.

    The box measures of MOTChallenge files need neither: without them a
    MOTChallenge run gives TrackEval's measures and says this.
    """
    columns = set(getattr(tracks, "columns", ()))
    needs = []
    if "r" not in columns:
        if "score" in columns and fill.calibration is None:
            needs.append(
                "existence probabilities: the confidence column is a score; calibrate it with "
                "--fit-score-on TRACKS TRUTH (or --mot-conf r if it is one)"
            )
        elif "score" not in columns and fill.constant_existence is None and not fill.existence_one:
            needs.append(
                "existence probabilities: --fit-constant-existence-on TRACKS TRUTH or --existence-one"
            )
    if not any(str(c).startswith("var_") for c in columns) and fill.default_std is None:
        needs.append("covariances: --mot-box-std-fraction F or --default-std S")
    return "; ".join(needs) or None


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
