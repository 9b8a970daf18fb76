"""The runs of a ``nllbench score`` batch: one run (its row, result, timing and warnings), and the runs
in order, one by one or over ``--jobs`` worker processes."""

from __future__ import annotations

import argparse

from nllbench.cli.score_mot import boxes_only, nll_needs, without_nll


def batch_item(args, options, name, tracks, truth, target, fill, trajectory, frames, read):
    """One run of a batch: (summary row, ScoreResult or None, BoxMeasures or None, NLL needs or None,
    seconds, [(warning message, category)]). Errors name the run's files; the caller says the warnings,
    naming the run (a worker process of ``--jobs`` cannot)."""
    import time
    import warnings

    from nllbench.cli.progress import ProgressLine
    from nllbench.trackers.api import score_file

    t0, cpu0 = time.perf_counter(), time.process_time()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UserWarning)
        try:
            tables, pair = read(args, tracks, truth, fill)
            read = time.process_time() - cpu0
            needs = nll_needs(tables[0], fill) if pair is not None else None
            if needs or (pair is not None and without_nll(args)):
                row, boxes = boxes_only(args, options, pair, frames)
                result = None
            else:
                row, result = score_file(
                    *tables,
                    target,
                    frames=frames,
                    fill=fill,
                    trajectory=trajectory,
                    boxes=pair,
                    progress=ProgressLine(f"score {name}", args.progress),
                    measures=getattr(args, "measures", None),
                    **options,
                )
                boxes = result.boxes
        except ValueError as exc:  # a table read from a MOT or YAML file is named "tracks" / "truth"
            raise ValueError(f"{tracks} (run {name}, truth {truth}): {exc}") from None
    said = [(str(w.message), w.category) for w in caught]
    seconds = {"seconds": time.perf_counter() - t0, "nll_seconds": 0.0}
    if result is not None:
        seconds = {"seconds": result.metrics.seconds, "nll_seconds": result.metrics.nll_seconds}
    proper = result.metrics.proper if result is not None else None
    seconds.update(
        cpu_seconds=time.process_time() - cpu0,
        read_cpu_seconds=read,
        box_cpu_seconds=boxes.seconds if boxes is not None else 0.0,
        proper_seconds=proper.seconds if proper is not None else 0.0,
    )
    return row, result, boxes, needs, seconds, said


def run_one(work):
    return batch_item(*work)


def run_items(work: list, jobs: int):
    """The batch's runs, in order: one by one, or over ``jobs`` worker processes."""
    if jobs <= 1 or len(work) <= 1:
        return map(run_one, work)
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    context = multiprocessing.get_context(
        "fork" if "fork" in multiprocessing.get_all_start_methods() else None
    )
    with ProcessPoolExecutor(max_workers=min(jobs, len(work)), mp_context=context) as pool:
        return list(pool.map(run_one, work))


def jobs_of(args: argparse.Namespace, runs: int) -> int:
    """``--jobs``, default the cores this process may use (at most the runs)."""
    import os

    jobs = getattr(args, "jobs", None)
    if jobs is None:
        jobs = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(int(jobs), runs))
