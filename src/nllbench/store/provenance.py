"""Provenance: what produced a file (software versions) and which truth it was scored against."""

from __future__ import annotations

import json
from collections.abc import Sequence

import numpy as np


def nllbench_version() -> str:
    """The installed nllbench version (one source: pyproject.toml), as ``nllbench.__version__``."""
    from importlib.metadata import version

    return version("nllbench")


def software_versions() -> dict[str, str]:
    """Versions of Python and the packages that shape nllbench's numbers (for provenance)."""
    import platform
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": platform.python_version()}
    for name in ("nllbench", "numpy", "scipy", "numba", "xarray", "netCDF4"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "unknown"
    return out


def provenance_attrs() -> dict:
    """The provenance attributes of every NetCDF file nllbench writes (software versions as JSON)."""
    return {"software_versions": json.dumps(software_versions(), sort_keys=True)}


def provenance_record(config: dict | None = None, **extra) -> dict:
    """Provenance of a table or figure: software versions, the config slice that made it, ``extra``."""
    return {"software_versions": software_versions(), "config": config or {}, **extra}


def truth_digest(truth: Sequence[np.ndarray], truth_ids: Sequence[np.ndarray]) -> str:
    """SHA-256 (hex) of a truth: per-step counts, states (float64) and ids (int64), little-endian.

    Equal truths give equal digests whatever produced them; any changed
    count, state bit or identity changes it.
    """
    import hashlib

    h = hashlib.sha256()
    counts = np.array([len(x) for x in truth], dtype="<i8")
    states = np.concatenate([np.asarray(x, dtype="<f8").ravel() for x in truth] or [np.empty(0)])
    ids = np.concatenate([np.asarray(i, dtype="<i8").ravel() for i in truth_ids] or [np.empty(0, "<i8")])
    for arr in (counts, states.astype("<f8"), ids.astype("<i8")):
        h.update(np.ascontiguousarray(arr).tobytes())
        h.update(b"|")
    return h.hexdigest()
