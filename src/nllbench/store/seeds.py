"""The one rule for the ``seed<N>`` files of a batch's input directory (:func:`seed_files`).

A batch (``nllbench filter``, ``evaluate`` and ``score`` on directories) reads
one file per seed. A file is the file of seed N when its name is ``seed``,
then N in ASCII decimal digits (leading zeros allowed), then one of the
batch's suffixes in any case (``seed7.nc``, ``seed07.CSV``). Anything else
(``seedling.nc``, ``seed1.nc.bak``, ``seed².nc``, a directory) is not a seed
file and is left alone. Two files of one seed (``seed1.csv`` and
``seed01.csv``, or ``seed1.csv`` and ``seed1.parquet``) are an error, not a
silent choice; so is a seed file that is a FIFO, a device or a socket.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from nllbench.store.locks import non_regular_kind

_SEED_STEM = re.compile(r"seed([0-9]+)")


def seed_number(path: str | os.PathLike, suffixes: tuple[str, ...]) -> int | None:
    """N of a ``seed<N>`` file name with one of ``suffixes`` (lower case, any case in the name); else None."""
    p = Path(path)
    match = _SEED_STEM.fullmatch(p.stem)
    if match is None or p.suffix.lower() not in suffixes:
        return None
    return int(match.group(1))


def seed_files(directory: str | os.PathLike, suffixes: tuple[str, ...], where: str, what: str) -> list[Path]:
    """The ``seed<N>`` files of ``directory`` (module docstring), sorted by N; [] when there is none
    (or ``directory`` is no directory).

    ``where`` starts the errors (e.g. ``"--tracks-dir 'runs'"``); ``what`` names
    a file in them (``"table"``: "expected one table per seed").
    """
    if not Path(directory).is_dir():
        return []
    by_seed: dict[int, Path] = {}
    for p in sorted(Path(directory).iterdir()):
        n = seed_number(p, suffixes)
        if n is None or p.is_dir():
            continue
        if kind := non_regular_kind(p):
            raise ValueError(f"{str(p)!r}: expected a regular file, got {kind}")
        if n in by_seed:
            raise ValueError(
                f"{where}: expected one {what} per seed, got {by_seed[n].name} and {p.name} for seed {n}"
            )
        by_seed[n] = p
    return [by_seed[n] for n in sorted(by_seed)]
