"""Reading a tidy table file and checking its cells: the file's kind (text CSV, Parquet, or
something else named), numbers, integers, missing cells and magnitudes.

Errors name the file, the row (1-based data row; the CSV line is one more, for the header)
and the column; :mod:`nllbench.trackers.tracks` builds the tables on these checks.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

#: The columns of a tracks table that are not state columns (state names may not take them).
TRACK_COLUMNS = ("frame", "id", "r", "score", "hypothesis", "weight", "component", "component_weight")


def read_table(source, name: str = "table"):
    """A pandas DataFrame from a CSV or Parquet path (by suffix), or a DataFrame as it is.

    Returns ``(df, label)``, the label naming the source in error messages.
    A file that cannot be read, a CSV row with more cells than the header
    and a repeated column name are errors naming the file (and line). Blank
    lines at the end of a CSV file are dropped; blank lines before a data
    line are kept (as empty rows, then reported), so that row and line
    numbers in every later error are the file's own.
    """
    import pandas as pd

    if isinstance(source, pd.DataFrame):
        _distinct_columns([str(c) for c in source.columns], name)
        return source.reset_index(drop=True), name
    if not isinstance(source, (str, os.PathLike)):
        raise TypeError(f"{name}: expected a path or a pandas DataFrame, got {type(source).__name__}")
    path = Path(source)
    label = str(path)
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".parquet", ".pq"):
        raise ValueError(f"{name}: expected a .csv or .parquet file, got {label!r}")
    if suffix == ".csv":
        _text_file(path, label, name)
    try:
        if suffix == ".csv":
            trailing = _check_csv_layout(path, label)
            df = pd.read_csv(path, index_col=False, skip_blank_lines=False)
            df = df.iloc[: len(df) - trailing]
        else:
            df = pd.read_parquet(path)
            _distinct_columns([str(c) for c in df.columns], label)
    except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise ValueError(f"{name} {label!r}: cannot read it as a table: {exc}") from None
    except ValueError as exc:
        if str(exc).startswith(label):
            raise
        raise ValueError(f"{name} {label!r}: cannot read it as a table: {exc}") from None
    return df, label


#: Leading bytes of file kinds that are not text, and their names (for the error of a table reader).
_MAGIC = (
    (b"\x1f\x8b", "gzip-compressed data"),
    (b"PK\x03\x04", "a zip archive"),
    (b"BZh", "bzip2-compressed data"),
    (b"\xfd7zXZ\x00", "xz-compressed data"),
    (b"(\xb5/\xfd", "zstd-compressed data"),
    (b"\x89HDF\r\n\x1a\n", "an HDF5 / NetCDF-4 file"),
    (b"CDF\x01", "a NetCDF-3 file"),
    (b"CDF\x02", "a NetCDF-3 file"),
    (b"PAR1", "a Parquet file"),
)


def file_kind(path) -> str | None:
    """What a file that should be text is instead (e.g. ``"gzip-compressed data"``), or None if it is text.

    By its first bytes: a known magic number (:data:`_MAGIC`), else a NUL
    byte or bytes that are not UTF-8 in the first 64 KiB. A file that cannot
    be opened is None (the reader reports it).
    """
    try:
        with open(path, "rb") as fh:
            head = fh.read(1 << 16)
    except OSError:
        return None
    for magic, kind in _MAGIC:
        if head.startswith(magic):
            return kind
    if b"\x00" in head:
        return "binary data (a NUL byte)"
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 3:  # not merely a character cut at the end of the chunk read
            return f"bytes that are not UTF-8 text (byte {exc.start}: 0x{head[exc.start]:02x})"
    return None


def _text_file(path: Path, label: str, name: str) -> None:
    """A .csv file must be text: else an error saying what the file is instead."""
    kind = file_kind(path)
    if kind is not None:
        raise ValueError(
            f"{name} {label!r}: expected a CSV text file, got {kind} (it is not text); "
            "decompress or convert it first"
        )


def _check_csv_layout(path: Path, label: str) -> int:
    """A header of distinct names; no row with more cells than the header (pandas would shift it).

    Returns the number of blank lines at the end of the file.
    """
    import csv

    # utf-8-sig like pandas' default (a byte-order mark is not part of a name); pandas decodes for real
    with open(path, newline="", encoding="utf-8-sig", errors="replace") as fh:
        reader = csv.reader(fh)
        header = next(reader, None)
        if header is None:
            raise ValueError(f"{label}: expected a header line, got an empty file")
        _distinct_columns(header, label)
        trailing = 0
        for row in reader:
            trailing = trailing + 1 if not row else 0
            if len(row) > len(header):
                raise ValueError(
                    f"{label}: line {reader.line_num}: expected at most {len(header)} cells "
                    f"(the header's), got {len(row)}"
                )
    return trailing


def _distinct_columns(columns: list[str], label: str) -> None:
    seen = set()
    for c in columns:
        if c in seen:
            raise ValueError(f"{label}: column {c!r} appears twice; expected distinct column names")
        seen.add(c)


def cell_at(label: str, row: int, column: str) -> str:
    """'file: row R (line L), column 'c'' for the 0-based data row ``row``."""
    line = f" (line {row + 2})" if label.lower().endswith(".csv") else ""
    return f"{label}: row {row + 1}{line}, column {column!r}"


def float_column(df, column: str, label: str, allow_nan: bool = False) -> np.ndarray:
    """Column ``column`` as floats; finite unless ``allow_nan`` (then NaN but never inf).

    Numeric columns, and text cells holding numbers (CSV), are read; a column
    of booleans, dates, durations or complex numbers is an error.
    """
    import pandas as pd

    _numeric_dtype(df, column, label)
    raw = pd.to_numeric(df[column], errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    bad = np.isnan(raw) & df[column].notna().to_numpy()
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{cell_at(label, i, column)}: expected a number, got {str(df[column].iloc[i])!r}")
    bad = np.isinf(raw) | (np.isnan(raw) if not allow_nan else False)
    if np.any(bad):
        i = int(np.flatnonzero(bad)[0])
        got = missing_cell(df, column, label, i) if np.isnan(raw[i]) else repr(str(df[column].iloc[i]))
        raise ValueError(f"{cell_at(label, i, column)}: expected a finite number, got {got}")
    return raw


#: Spellings of a CSV cell that pandas reads as missing and that mean "not a number" (not "no value").
_NAN_TEXT = ("nan", "-nan", "+nan", "1.#qnan", "-1.#qnan", "1.#ind", "-1.#ind")


def missing_cell(df, column: str, label: str, row: int) -> str:
    """How to name the missing value of data row ``row``: "an empty cell", or "NaN" when it is one.

    pandas reads both an empty CSV cell and the text ``nan`` as NaN; the
    file's own cell tells them apart. In a DataFrame or Parquet file a float
    NaN is NaN, and None / a null is an empty cell.
    """
    import math

    if label.lower().endswith(".csv") and Path(label).is_file():
        text = _csv_cell(Path(label), row, column)
        if text is None or not text.strip():
            return "an empty cell"
        if text.strip().lower() in _NAN_TEXT:
            return f"NaN ({text.strip()!r}: not a number)"
        return f"{text.strip()!r} (read as a missing value)"
    value = df[column].iloc[row]
    if isinstance(value, float) and math.isnan(value):
        return "NaN (not a number)"
    return "an empty cell"


def _csv_cell(path: Path, row: int, column: str) -> str | None:
    """The text of data row ``row`` (0-based), column ``column`` of a CSV file, or None if it has none."""
    import csv

    with open(path, newline="", encoding="utf-8-sig", errors="replace") as fh:
        reader = csv.reader(fh)
        header = next(reader, [])
        if column not in header:
            return None
        j = header.index(column)
        for k, record in enumerate(reader):
            if k == row:
                return record[j] if j < len(record) else None
    return None


def _numeric_dtype(df, column: str, label: str) -> None:
    import pandas as pd

    dtype = df[column].dtype
    api = pd.api.types
    if api.is_bool_dtype(dtype) or api.is_datetime64_any_dtype(dtype) or api.is_timedelta64_dtype(dtype):
        raise ValueError(f"{label}: column {column!r}: expected numbers, got a column of dtype {dtype}")
    if api.is_complex_dtype(dtype):
        raise ValueError(f"{label}: column {column!r}: expected real numbers, got a column of dtype {dtype}")


_EXACT = 2**53  # floats hold every integer up to this magnitude, and not all beyond

#: Largest magnitude of a state value: the squared distance of two such points in d <= 40
#: dimensions, (2e150)^2 d <= 1.6e302, stays finite in float64 (max 1.8e308), so every distance
#: and Mahalanobis term of the measures is a number, never an overflow.
MAX_STATE = 1e150


def check_state_magnitude(values: np.ndarray, names, label: str) -> None:
    """(N, d) state values: each finite (or NaN, placeholders) with magnitude at most :data:`MAX_STATE`."""
    with np.errstate(invalid="ignore"):
        bad = np.abs(values) > MAX_STATE
    if bad.any():
        i, j = (int(a[0]) for a in np.nonzero(bad))
        raise ValueError(
            f"{cell_at(label, i, names[j])}: expected a magnitude at most {MAX_STATE:g} (distances "
            f"between larger coordinates overflow float64), got {float(values[i, j])!r}; "
            "rescale the units"
        )


def integer_column(df, column: str, label: str, skip: np.ndarray | None = None) -> np.ndarray:
    """Column ``column`` as int64; rows in ``skip`` (placeholders) may be empty (then -1).

    An integer-typed column is taken as it is (no trip through float, which
    would round values past 2**53); other columns must hold integers of
    magnitude at most 2**53.
    """
    import pandas as pd

    col = df[column]
    if pd.api.types.is_integer_dtype(col.dtype) and not col.isna().any():  # (NA: nullable Int64)
        values = col.to_numpy()
        if values.dtype == np.uint64 and values.size and values.max() > np.iinfo(np.int64).max:
            i = int(np.argmax(values > np.iinfo(np.int64).max))
            raise ValueError(f"{cell_at(label, i, column)}: expected an integer below 2**63, got {values[i]}")
        return values.astype(np.int64)
    if skip is None:
        raw = float_column(df, column, label)
    else:
        raw = float_column(df, column, label, allow_nan=True)
        check_no_nan(raw, ~skip, df, column, label)
        raw = np.where(skip & np.isnan(raw), -1.0, raw)
    bad = raw != np.round(raw)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{cell_at(label, i, column)}: expected an integer, got {str(col.iloc[i])!r}")
    bad = np.abs(raw) > _EXACT
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"{cell_at(label, i, column)}: expected an integer of magnitude at most 2**53 "
            f"(exact in a non-integer column), got {str(col.iloc[i])!r}"
        )
    return raw.astype(np.int64)


def check_state_names(state) -> tuple[str, ...]:
    """The state column names, distinct strings, none a column of the format (:data:`TRACK_COLUMNS`)."""
    names = tuple(str(s) for s in state)
    if not names or len(set(names)) != len(names):
        raise ValueError(f"state: expected distinct column names, got {list(state)!r}")
    clash = [s for s in names if s in TRACK_COLUMNS or s.startswith(("var_", "cov_"))]
    if clash:
        raise ValueError(f"state: column name {clash[0]!r} is reserved; rename the state column")
    return names


def require_columns(df, columns, label: str) -> None:
    """Refuse a table without one of ``columns``, naming the first missing one and the columns it has."""
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(f"{label}: column {missing[0]!r} is missing (columns: {list(df.columns)})")


def check_no_nan(vals, live, df, column: str, label: str) -> None:
    """Refuse a missing value (NaN) of ``vals`` in a ``live`` row, naming its cell (:func:`missing_cell`)."""
    bad = np.isnan(vals) & live
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        got = missing_cell(df, column, label, i)
        raise ValueError(f"{cell_at(label, i, column)}: expected a number, got {got}")
