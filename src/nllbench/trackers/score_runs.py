"""Scoring runs given as files, as ``nllbench score`` does: one run (:func:`score_pair`) or a batch of
runs (:func:`score_batch`), each read in its format (:func:`read_run`) and scored with the NLL, or,
for a MOTChallenge pair whose NLL lacks a fill-in or leaves it out (``measures``), with TrackEval's
measures only (:func:`score_pair_without_nll`). A batch of MOTChallenge sequences also gives their
combined result (TrackEval's ``COMBINED_SEQ``; ``docs/score.md``, "MOTChallenge files as the benchmark
scores them").
"""

from __future__ import annotations

from pathlib import Path

from nllbench.trackers.formats import ReadOptions, input_format, read_inputs

#: The sequence name of the combined row of a MOTChallenge batch's summary.
COMBINED = "COMBINED"


def nll_left_out(measures: str | None) -> str | None:
    """Why ``measures`` (comma-separated names, None: all) leaves the NLL's run out, in words; or None."""
    if measures is None or "nll" in {n.strip() for n in measures.split(",")}:
        return None
    return "nll in --measures (TrackEval's measures only were asked)"


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


def score_pair_without_nll(pair, frames, tracker: str):
    """(summary row, BoxMeasures) of a MOTChallenge pair scored without the NLL, on ``frames`` (None or
    ``"union"``: the pair's); the row's ``not_applicable`` is ``"nll"``."""
    from nllbench.trackers.motchallenge import box_summary, pair_measures

    measures = pair_measures(pair, None if frames in (None, "union") else frames)
    steps = len(pair.frames) if frames in (None, "union") else len(frames)
    row = {"filter": tracker, "steps": steps, **box_summary(measures), "not_applicable": "nll"}
    return row, measures


def is_stonesoup(path, read: ReadOptions) -> bool:
    """Whether ``path`` is read as Stone Soup YAML with ``read`` (a suffix no reader claims: no)."""
    try:
        return input_format(path, read.format) == "stonesoup"
    except ValueError:
        return False


def check_stonesoup_existence(path, tracks, fill, read: ReadOptions) -> None:
    """Refuse Stone Soup tracks that carry no existence (no r, no score) and no fill-in for it, pointing
    to ``--stonesoup-existence`` (a JPDA / GNN tracker keeps none: ``missed_detection`` gives a score)."""
    if path is None or not is_stonesoup(path, read):
        return
    columns = set(getattr(tracks, "columns", ()))
    if columns & {"r", "score"} or fill.constant_existence is not None or fill.existence_one:
        return
    raise ValueError(
        f"{path}: no column 'r' or 'score': the tracks carry no existence_probability, "
        f"{read.stonesoup.metadata_key!r} metadata or weight (--stonesoup-existence "
        f"{read.stonesoup.existence}); give --stonesoup-existence missed_detection (a score, to calibrate "
        "with --fit-score-on) or --fit-constant-existence-on TRACKS TRUTH, or --existence-one"
    )


def read_run(tracks, truth, fill, read: ReadOptions):
    """((tracks, truth), MOTPair or None) of a run (:func:`nllbench.trackers.formats.read_inputs`),
    Stone Soup tracks without an existence refused (with the option that gives one)."""
    tables, pair = read_inputs(tracks, truth, read)
    check_stonesoup_existence(tracks, tables[0], fill, read)
    return tables, pair


def write_box_file(path, names, measures, tracker: str) -> None:
    """The MOTChallenge measures file: each sequence's and the combined (TrackEval's COMBINED_SEQ)."""
    from nllbench.measures.boxes import combine_sequences
    from nllbench.store.boxes import write_box_measures

    write_box_measures(path, names, [*measures, combine_sequences(measures)], {"filter": tracker})


def combined_row(rows: list[dict], measures: list, tracker: str, qs) -> dict:
    """The summary row of the sequences combined as TrackEval combines them (``COMBINED_SEQ``).

    The NLL per Q (``nll_q<Q>``) is the mean over every frame of every sequence
    (each sequence's mean weighted by its frames), when every sequence has it.
    """
    from nllbench.measures.boxes import combine_sequences
    from nllbench.trackers.motchallenge import box_summary

    steps = sum(int(r["steps"]) for r in rows)
    out = {"sequence": COMBINED, "filter": tracker, "steps": steps}
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


def score_run(tables, pair, target, *, fill, frames=None, measures=None, progress=None, **score_kw):
    """One read run scored: (summary row, ScoreResult or None, BoxMeasures or None, what the NLL needs
    or None).

    A MOTChallenge pair (``pair``) whose NLL needs a fill-in (:func:`nll_needs`) or is left out by
    ``measures`` (:func:`nll_left_out`) gives TrackEval's measures only (:func:`score_pair_without_nll`)
    and writes nothing; else the metrics file ``target`` is written by
    :func:`nllbench.trackers.metrics_file.score_file` with ``score_kw``.
    """
    from nllbench.trackers.metrics_file import score_file

    needs = nll_needs(tables[0], fill) if pair is not None else None
    if needs or (pair is not None and nll_left_out(measures)):
        row, boxes = score_pair_without_nll(pair, frames, score_kw.get("tracker", "external"))
        return row, None, boxes, needs
    row, result = score_file(
        *tables,
        target,
        frames=frames,
        fill=fill,
        boxes=pair,
        progress=progress,
        measures=measures,
        **score_kw,
    )
    return row, result, result.boxes, None


def score_pair(
    tracks,
    truth,
    target,
    *,
    fill,
    read: ReadOptions,
    summary=None,
    per_frame=None,
    trajectory=None,
    per_window=None,
    per_trajectory=None,
    frames=None,
    measures=None,
    progress=None,
    **score_kw,
):
    """One run of files (any format) scored: the metrics file ``target`` and the summary CSV ``summary``
    (when given) written; (summary row, ScoreResult or None, what the NLL needs or None).

    With ``trajectory`` (:class:`~nllbench.trackers.trajectory_options.TrajectoryOptions`), the
    trajectory NLL's tables per window and per trajectory go to the CSVs ``per_window`` and
    ``per_trajectory`` (None: not written). A MOTChallenge pair scored without the NLL
    (:func:`score_run`) writes TrackEval's measures to ``target`` instead (:func:`write_box_file`);
    ``per_frame`` and ``trajectory`` then are refused, as they need the NLL.
    ``score_kw`` go to :func:`nllbench.trackers.metrics_file.score_file`.
    """
    from nllbench.store import write_summary_csv

    tables, pair = read_run(tracks, truth, fill, read)
    needs = nll_needs(tables[0], fill) if pair is not None else None
    why = needs or (nll_left_out(measures) if pair is not None else None)
    if why:
        if per_frame is not None or trajectory is not None:
            raise ValueError(f"score: --per-frame and the trajectory NLL need the NLL, which needs {why}")
    row, result, boxes, needs = score_run(
        tables,
        pair,
        target,
        fill=fill,
        frames=frames,
        measures=measures,
        progress=progress,
        read=read,
        per_frame=per_frame,
        trajectory=trajectory,
        **score_kw,
    )
    if result is None:
        write_box_file(target, [Path(tracks).stem], [boxes], score_kw.get("tracker", "external"))
    if summary is not None:
        write_summary_csv(row, summary)
    if result is not None and trajectory is not None:
        write_trajectory_tables(result, per_window, per_trajectory)
    return row, result, needs


def write_trajectory_tables(result, per_window, per_trajectory) -> None:
    """The per-window and per-trajectory CSVs of a run scored with the trajectory NLL (None: not asked)."""
    run = result.metrics.trajectory
    if per_window is not None:
        run.per_window().to_csv(per_window, index=False)
    if per_trajectory is not None:
        run.per_trajectory().to_csv(per_trajectory, index=False)


def batch_item(name, tracks, truth, target, fill, read, frames, measures, progress, score_kw):
    """One run of a batch: (summary row, ScoreResult or None, BoxMeasures or None, NLL needs or None,
    seconds, [(warning message, category)]). Errors name the run's files; the caller says the warnings,
    naming the run (a worker process cannot)."""
    import time
    import warnings

    t0, cpu0 = time.perf_counter(), time.process_time()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UserWarning)
        try:
            tables, pair = read_run(tracks, truth, fill, read)
            read_seconds = time.process_time() - cpu0
            row, result, boxes, needs = score_run(
                tables,
                pair,
                target,
                fill=fill,
                frames=frames,
                measures=measures,
                progress=None if progress is None else progress(name),
                read=read,
                **score_kw,
            )
        except ValueError as exc:  # a table read from a MOT or YAML file is named "tracks" / "truth"
            raise ValueError(f"{tracks} (run {name}, truth {truth}): {exc}") from None
    said = [(str(w.message), w.category) for w in caught]
    seconds = {"seconds": time.perf_counter() - t0, "nll_seconds": 0.0}
    if result is not None:
        seconds = {"seconds": result.metrics.seconds, "nll_seconds": result.metrics.nll_seconds}
    proper = result.metrics.proper if result is not None else None
    cpu = time.process_time() - cpu0
    seconds.update(
        cpu_seconds=cpu,
        read_cpu_seconds=read_seconds,
        box_cpu_seconds=boxes.seconds if boxes is not None else 0.0,
        proper_seconds=proper.seconds if proper is not None else 0.0,
    )
    parts = [result.metrics.cpu_seconds if result is not None else {}]
    seconds.update(cpu_parts(cpu, read_seconds, [*parts, boxes.cpu_seconds if boxes is not None else {}]))
    return row, result, boxes, needs, seconds, said


def cpu_parts(cpu: float, read: float, parts) -> dict:
    """The ``--timing`` columns of an item's CPU seconds ``cpu`` (of which ``read`` reading it) by part.

    ``parts``: mappings name -> CPU seconds (a run's ``RunMetrics.cpu_seconds``, a ``BoxMeasures``'s),
    summed by name. ``density_cpu_seconds`` and ``estimate_cpu_seconds`` (building the frames' densities,
    finding the point estimates), then ``cpu_seconds_<measure>`` for every declared measure in order
    (empty where not computed, never 0), then ``rest_cpu_seconds``: ``cpu`` less reading and every part
    (writing the files, checks), so that the columns add up to ``cpu``.
    """
    from nllbench.measures.run.cpu_clock import DENSITIES, ESTIMATES
    from nllbench.measures.selection import MEASURE_NAMES

    total: dict = {}
    for part in parts:
        for name, value in part.items():
            total[name] = total.get(name, 0.0) + value
    row = {"density_cpu_seconds": total.get(DENSITIES, ""), "estimate_cpu_seconds": total.get(ESTIMATES, "")}
    row.update({f"cpu_seconds_{name}": total.get(name, "") for name in MEASURE_NAMES})
    row["rest_cpu_seconds"] = cpu - read - sum(v for v in row.values() if v != "")
    return row


def _run_one(work):
    return batch_item(*work)


def run_items(work: list, jobs: int):
    """The batch's runs (:func:`batch_item` of each tuple of ``work``), in order: one by one, or over
    ``jobs`` worker processes."""
    if jobs <= 1 or len(work) <= 1:
        return map(_run_one, work)
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    context = multiprocessing.get_context(
        "fork" if "fork" in multiprocessing.get_all_start_methods() else None
    )
    with ProcessPoolExecutor(max_workers=min(jobs, len(work)), mp_context=context) as pool:
        return list(pool.map(_run_one, work))


def score_batch(
    items,
    directory,
    *,
    mot: bool,
    fill,
    read: ReadOptions,
    settings,
    tracker: str = "external",
    frames=None,
    measures=None,
    jobs: int = 1,
    progress=None,
    **score_kw,
):
    """A batch of runs scored into ``directory``: (summary rows, timing rows, last ScoreResult or None,
    what the NLL needs or None).

    ``items`` holds (name, tracks file, truth file) of each run
    (:func:`nllbench.trackers.formats.batch.batch_runs`, which also says ``mot``); each run writes
    ``<name>.nc`` (its metrics file, unless scored without the NLL) and ``summary.csv`` has a row per
    run. MOTChallenge sequences (``mot``) also give the combined result (TrackEval's COMBINED_SEQ), as
    the last summary row and in ``motchallenge.nc``. ``jobs`` runs are scored at once in worker
    processes; ``progress`` (None, or a picklable callable of the run's name) gives each run's progress
    report. The warnings of a run are warned again, naming it.
    """
    import warnings

    from nllbench.store import write_summary_csv

    directory = Path(directory)
    score_kw = dict(score_kw, settings=settings, tracker=tracker)
    rows, timing, boxes_of, result, needs = [], [], [], None, None
    work = [
        (name, tracks, truth, directory / (name + ".nc"), fill, read, frames, measures, progress, score_kw)
        for name, tracks, truth in items
    ]
    for (name, _, _), done in zip(items, run_items(work, jobs), strict=True):
        row, item_result, boxes, item_needs, seconds, said = done
        for message, category in said:  # said by the batch, naming the run
            warnings.warn(f"{name}: {message}", category, stacklevel=2)
        result = item_result or result
        needs = needs or item_needs
        rows.append({"sequence": name, **row} if mot else row)
        if boxes is not None:
            boxes_of.append(boxes)
        timing.append(
            {
                "item": name,
                "filter": tracker,
                "q": max(settings.qs),
                "cov_scale": settings.cov_scale,
                **seconds,
            }
        )
    if mot and boxes_of:  # (none with mot_matching="centre")
        rows.append(combined_row(rows, boxes_of, tracker, settings.qs))
        write_box_file(directory / "motchallenge.nc", [n for n, _, _ in items], boxes_of, tracker)
    write_summary_csv(aligned_rows(rows), directory / "summary.csv")
    return rows, aligned_rows(timing), result, needs
