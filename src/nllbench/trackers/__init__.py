"""Scoring any tracker: tidy track tables, fill-ins, readers of every input format
(:mod:`~nllbench.trackers.formats`: tables, scenario files, MOTChallenge, Stone Soup YAML);
the trajectory NLL of a labelled tracks table.

The modules' former paths (:data:`MOVED`) keep working: importing one gives
the moved module itself (:mod:`nllbench._moved`).
"""

#: Each module's former name under ``nllbench.trackers`` -> its path now.
MOVED = {
    "run": "score_tables",
    "output": "metrics_file",
    "scoring": "api",
    "trajectory_run": "trajectory_options",
    "trajectory": "trajectory_tables",
    "stonesoup_tracker": "nllbench.example_trackers.stonesoup",
    "nrl": "nllbench.example_trackers.nrl",
}
