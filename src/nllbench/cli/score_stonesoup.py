"""``nllbench score``'s options for Stone Soup YAML inputs (``docs/score.md``, "Stone Soup YAML files")."""

from __future__ import annotations

from nllbench.options import MAX_INT64, integer
from nllbench.trackers.formats.stonesoup import frame_grid  # noqa: F401 - its home is the library

STONESOUP_DEFAULTS = dict(
    stonesoup_existence="auto",
    stonesoup_metadata_key="existence_probability",
    stonesoup_no_metadata=False,
    stonesoup_window=1,
    stonesoup_mapping=None,
    stonesoup_truth_mapping=None,
    stonesoup_frame_times=None,
)


def add_stonesoup_options(sc) -> None:
    """``score``'s options for Stone Soup YAML inputs (``docs/score.md``, "Stone Soup YAML files")."""
    sc.add_argument(
        "--stonesoup-existence",
        choices=("auto", "missed_detection", "none"),
        default="auto",
        help="Stone Soup tracks' existence: auto (existence_probability, metadata, weight), "
        "missed_detection (JPDA/GNN: a score to calibrate) or none",
    )
    sc.add_argument(
        "--stonesoup-metadata-key",
        default="existence_probability",
        help="track-metadata key read as r by --stonesoup-existence auto",
    )
    sc.add_argument(
        "--stonesoup-no-metadata", action="store_true", help="do not read r from the tracks' metadata"
    )
    sc.add_argument(
        "--stonesoup-window",
        type=integer(1, MAX_INT64),
        default=1,
        help="states averaged by --stonesoup-existence missed_detection",
    )
    sc.add_argument(
        "--stonesoup-mapping",
        type=integer(0, MAX_INT64),
        nargs="+",
        help="state-vector index of each --state column (default 0 2: x, y of [x, vx, y, vy]);"
        " the covariance is its block",
    )
    sc.add_argument(
        "--stonesoup-truth-mapping",
        type=integer(0, MAX_INT64),
        nargs="+",
        help="the same for the ground truth paths (default: --stonesoup-mapping)",
    )
    sc.add_argument(
        "--stonesoup-frame-times",
        nargs=2,
        metavar=("FIRST_TIME", "PERIOD_SECONDS"),
        help="frame k at FIRST_TIME (ISO 8601) + k * PERIOD (default: a YAMLWriter file's scan times, "
        "else the truth paths' timestamps)",
    )
