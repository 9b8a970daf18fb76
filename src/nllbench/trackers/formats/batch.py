"""The runs of a batch: the (name, tracks file, truth file) of each in a folder of tracker outputs.

Two layouts (``docs/score.md``, "Batches"):

* MOTChallenge sequences: every ``<SEQ>.txt`` result in the tracks folder,
  its ground truth ``<truth dir>/<SEQ>.txt`` or, in MOTChallenge's own layout,
  ``<truth dir>/<SEQ>/gt/gt.txt`` (:func:`~nllbench.trackers.formats.mot.mot_truth`);
* seeds: the ``seed<N>`` tables of the tracks folder (:func:`seed_tables`,
  the rule of :func:`nllbench.store.seed_files`), truth ``<truth dir>/seed<N>.nc``.
"""

from __future__ import annotations

from pathlib import Path

from nllbench.trackers.formats.mot import mot_truth
from nllbench.trackers.formats.stonesoup import STONESOUP_SUFFIXES

TABLE_SUFFIXES = (".csv", ".parquet", ".pq")


def seed_tables(directory, stonesoup: bool = False) -> list[Path]:
    """seed<N>.csv / .parquet / .pq files of a directory (any case, as the table reader), by seed.

    With ``stonesoup`` also seed<N>.yaml / .yml (Stone Soup YAML). One table
    per seed: two spellings of one seed (seed1.csv and seed1.parquet, or
    seed1 and seed01) are an error, not a silent choice
    (:func:`nllbench.store.seed_files`).
    """
    from nllbench.store import seed_files

    if not Path(directory).is_dir():
        raise ValueError(f"--tracks-dir {directory!r}: expected a directory of seed<N> tracks tables")
    suffixes = TABLE_SUFFIXES + (STONESOUP_SUFFIXES if stonesoup else ())
    files = seed_files(directory, suffixes, f"--tracks-dir {directory!r}", "table")
    if not files:
        raise ValueError(f"--tracks-dir {directory!r}: no seed<N>.csv or seed<N>.parquet tracks tables found")
    return files


def batch_runs(tracks_dir, truth_dir, fmt: str = "auto") -> tuple[list[tuple[str, Path, Path]], bool]:
    """(name, tracks file, truth file) of each run of a batch, and whether they are MOTChallenge sequences.

    MOTChallenge (``fmt="mot"``, or ``"auto"`` and ``*.txt`` files in
    ``tracks_dir``): every ``<SEQ>.txt`` there with its ground truth (both
    layouts present: refused as ambiguous; neither: refused naming both).
    Else the ``seed<N>`` tables (:func:`seed_tables`; with ``"auto"`` or
    ``"stonesoup"`` also Stone Soup YAML), truth ``<truth_dir>/seed<N>.nc``.
    A folder holding both kinds under ``"auto"`` is refused.
    """
    from nllbench.store import seed_files

    directory = tracks_dir
    if not Path(directory).is_dir():
        raise ValueError(f"--tracks-dir {directory!r}: expected a directory of seed<N> tracks tables")
    texts = sorted(p for p in Path(directory).iterdir() if p.is_file() and p.suffix.lower() == ".txt")
    if fmt == "mot" or (fmt == "auto" and texts):
        if fmt == "auto" and seed_files(directory, TABLE_SUFFIXES, f"--tracks-dir {directory!r}", "table"):
            raise ValueError(
                f"--tracks-dir {directory!r}: expected one kind of tracks file, got MOTChallenge .txt files "
                "and seed<N> tables; give --format mot or --format table"
            )
        if not texts:
            raise ValueError(f"--tracks-dir {directory!r}: no MOTChallenge <sequence>.txt result files found")
        return [(p.stem, p, mot_truth(truth_dir, p.stem)) for p in texts], True
    tables = seed_tables(directory, stonesoup=fmt in ("auto", "stonesoup"))
    return [(f.stem, f, Path(truth_dir) / (f.stem + ".nc")) for f in tables], False
