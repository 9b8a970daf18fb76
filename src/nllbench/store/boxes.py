"""The MOTChallenge measures file: TrackEval's fields per sequence and combined (``motchallenge.nc``).

Classic NetCDF (CDF-2) like the metrics files, readable by any NetCDF
reader: dimensions ``sequence`` (the sequences in order, then ``COMBINED``;
their names are the global attribute ``sequences``, a JSON list) and
``alpha`` (HOTA's 19 thresholds). One variable per TrackEval field, named
as TrackEval names it with ``(0)`` written ``_0`` (``HOTA_0``, ``LocA_0``,
``HOTALocA_0``): the floats per sequence (HOTA's by their mean over alpha),
the counts as 32-bit integers, and HOTA's per-alpha fields as
``<field>_alpha`` (sequence, alpha).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence

import numpy as np

from nllbench.store._netcdf import write_classic
from nllbench.store.provenance import software_versions

#: The name of the combined result in the ``sequences`` attribute (TrackEval's ``COMBINED_SEQ``).
COMBINED = "COMBINED"


def _variable_name(field: str) -> str:
    return field.replace("(0)", "_0")


def write_box_measures(path: str | os.PathLike, names: Sequence[str], measures: Sequence, attrs=None) -> None:
    """Write the :class:`~nllbench.measures.boxes.BoxMeasures` of each sequence of ``names`` and the
    combined one (``measures`` has one more element than ``names``: the combined, last) to ``path``."""
    from nllbench.measures.boxes import ALPHAS, COUNT_FIELDS, FLOAT_FIELDS, HOTA_ARRAYS, HOTA_COUNTS

    if len(measures) != len(names) + 1:
        raise ValueError(
            f"measures: expected {len(names) + 1} (the sequences and combined), got {len(measures)}"
        )
    variables: dict = {"alpha": (("alpha",), np.asarray(ALPHAS, dtype=float), {"long_name": "HOTA alpha"})}
    for field in FLOAT_FIELDS:
        values = np.array([float(m.fields[field]) for m in measures])
        variables[_variable_name(field)] = (("sequence",), values, {"long_name": f"TrackEval {field}"})
    for field in COUNT_FIELDS:
        if field in HOTA_COUNTS:
            continue
        values = np.array([int(m.fields[field]) for m in measures], dtype=np.int32)
        variables[field] = (("sequence",), values, {"long_name": f"TrackEval {field}"})
    for field in (*HOTA_ARRAYS, *HOTA_COUNTS):
        values = np.stack([np.asarray(m.alpha[field]) for m in measures])
        values = values.astype(np.int32 if field in HOTA_COUNTS else np.float64)
        variables[f"{field}_alpha"] = (
            ("sequence", "alpha"),
            values,
            {"long_name": f"TrackEval {field} per alpha"},
        )
    out = {
        "content": "motchallenge",
        "sequences": json.dumps([*names, COMBINED]),
        "software_versions": json.dumps(software_versions(), sort_keys=True),
        **(attrs or {}),
    }
    write_classic(variables, out, path)


def read_box_measures(path: str | os.PathLike) -> dict:
    """``{sequence: {field: value}}`` of a file of :func:`write_box_measures` (per-alpha fields as arrays)."""
    from scipy.io import netcdf_file

    with netcdf_file(str(path), "r", mmap=False) as nc:
        if nc._attributes.get("content", b"") not in (b"motchallenge", "motchallenge"):
            raise ValueError(f"{path}: expected a MOTChallenge measures file (content motchallenge)")
        names = json.loads(_text(nc._attributes["sequences"]))
        out = {n: {} for n in names}
        for name, var in nc.variables.items():
            if var.dimensions[:1] != ("sequence",):
                continue
            data = np.array(var.data)
            field = name.replace("_0", "(0)") if name.endswith("_0") else name
            for i, n in enumerate(names):
                value = data[i]
                out[n][field] = value if value.ndim else value.item()
    return out


def _text(value) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
