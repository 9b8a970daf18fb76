"""Score a tracks file and write its metrics file (and per-frame table): :func:`score_file`.

What the command line (``nllbench score``) and the workflow call: the run is
labelled by its scenario, both output files are checked before scoring and
committed together.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from nllbench.measures.likelihood.trajectory_windows import trajectory_attrs
from nllbench.measures.run.evaluate import EvaluationSettings
from nllbench.measures.selection import BOX_MEASURES
from nllbench.trackers.fillins import FillIns
from nllbench.trackers.score_tables import score, score_attrs
from nllbench.trackers.tracks import DEFAULT_STATE

_SCENARIO_KEYS = ("scenario", "seed", "clutter_rate", "p_detection", "p_survival", "steps")


def _same_scenario(truth, scenario_file) -> None:
    """A scenario-file truth and a --scenario-file that labels the run must be the same scenario."""
    from nllbench.store import read_scenario, scenario_identity, scenario_mismatches

    diffs = scenario_mismatches(scenario_identity(read_scenario(truth)), read_scenario(scenario_file))
    if diffs:
        text = "; ".join(f"{k}: truth {a!r}, scenario file {b!r}" for k, (a, b) in diffs.items())
        raise ValueError(
            f"scenario_file {str(scenario_file)!r}: expected the scenario of the truth {str(truth)!r} "
            f"(it labels the run), but they differ in {text}"
        )


def _file_name(table) -> str:
    """The file name of a path, or of a table read from a file (``attrs["file"]``)."""
    if isinstance(table, (str, os.PathLike)):
        return Path(table).name
    return Path(str(getattr(table, "attrs", {}).get("file", "(table)"))).name


def score_file(
    tracks,
    truth,
    output,
    *,
    state=DEFAULT_STATE,
    frames=None,
    fill: FillIns = FillIns(),
    settings: EvaluationSettings = EvaluationSettings(),
    tracker: str = "external",
    scenario_file=None,
    seed: int | None = None,
    config: dict | None = None,
    per_frame=None,
    trajectory=None,
    boxes=None,
    progress=None,
    read=None,
    measures=None,
):
    """Score a tracks file against a truth file (CSV / Parquet, or a scenario .nc); write a metrics file.

    A truth given as a scenario file (``.nc``) is that scenario's truth, and
    labels the run like ``scenario_file``; with a scenario, the frames default
    to its steps 0..K-1, so that step k is the scenario's step k as for the
    reference filters (``frames="union"`` too: every step is a frame, also one
    with neither truth nor tracks). The run's seed (``seed``, else the scenario's, else 0)
    seeds the energy score's samples, as ``nllbench evaluate`` does.
    ``trajectory``: :class:`~nllbench.trackers.trajectory_options.TrajectoryOptions`
    to also compute the trajectory NLL (stored in the metrics file and the summary), or None.
    ``boxes``: the :class:`~nllbench.trackers.motchallenge.MOTPair` the tables were read from
    (MOTChallenge files): HOTA, CLEAR and Identity are then TrackEval's, on the boxes' IoU.
    ``progress``, ``read``, ``measures``: as for :func:`~nllbench.trackers.score_tables.score` (with
    ``boxes``, the measures of the point estimates that the boxes replace are not computed).
    Returns (one-row summary, :class:`~nllbench.trackers.score_tables.ScoreResult`).
    """
    from nllbench.store import Output, committed_together, read_scenario, run_seed, write_metrics

    extra: dict = {"tracks_file": _file_name(tracks), "truth_file": _file_name(truth)}
    if isinstance(truth, (str, os.PathLike)) and Path(truth).suffix == ".nc":
        if scenario_file is not None:
            _same_scenario(truth, scenario_file)
        scenario_file = scenario_file or truth
    if scenario_file is not None:
        attrs = read_scenario(scenario_file).attrs
        extra.update(
            {k: attrs[k] for k in _SCENARIO_KEYS if k in attrs}, scenario_file=Path(scenario_file).name
        )
        if frames is None or frames == "union":  # every step (a row beyond them is named by score)
            frames = list(range(int(attrs.get("steps", 0)))) or frames
    if seed is not None:
        extra["seed"] = seed
    if config is not None:
        extra["config"] = json.dumps(config, sort_keys=True)
    targets = [Output(Path(output), "output")]
    if per_frame is not None:
        targets.append(Output(Path(per_frame), "per_frame"))
    # both files checked before scoring and committed together: a failure leaves neither
    with committed_together(*targets) as tmps:
        result = score(
            tracks,
            truth,
            state=state,
            frames=frames,
            fill=fill,
            settings=settings,
            trajectory=trajectory,
            seed=run_seed(extra),
            progress=progress,
            read=read,
            measures=measures,
            replaced=BOX_MEASURES if boxes is not None else frozenset(),
        )
        if boxes is not None:
            from nllbench.trackers.motchallenge import with_box_measures

            result = with_box_measures(result, boxes)
        attrs = score_attrs(result, tracker, {**extra, **trajectory_attrs(result.metrics.trajectory)})
        write_metrics(result.metrics, tmps[0], attrs)
        if per_frame is not None:
            result.per_frame().to_csv(tmps[1], index=False)
    row = {
        **{k: extra.get(k, "") for k in ("scenario", "seed", "clutter_rate", "p_detection")},
        "filter": tracker,
        "marginal": settings.marginal,
        "cov_scale": settings.cov_scale,
        "temper": settings.temper,
        **result.summary(),
    }
    return row, result
