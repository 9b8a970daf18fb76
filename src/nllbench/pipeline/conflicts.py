"""Metrics files that disagree about one run: refused before aggregation, naming both files and the setting.

Two metrics files hold the same run when they agree on the labels a table row
is keyed by: scenario, seed, filter, clutter rate, P_D and the probe
(covariance scale, tempering, marginal). ``nllbench aggregate`` keeps one row
per run, so two such files are harmless when they were computed alike (the
same directory given twice, a copy of it, directories of one evaluation grid
that differ only in their Murty budgets Q and whether the exact NLL was
computed) and silently wrong when they were
not: with GOSPA cut-off 2 in one and 5 in the other, the tables would hold
whichever came first. :func:`find_conflicts` finds the second case from the
files' attributes (:func:`run_record`), a pure function of them;
:func:`read_run_records` reads the attributes of every ``seed*.nc`` file of
the metrics directories.

Compared settings (:func:`settings_of`): every evaluation setting but the
budgets ``qs`` (each NLL row is labelled by its Q), ``exact`` (the exact NLL
is computed once per grid), ``proper_scores`` (computed once per grid; their
kernel and samples are compared only between files that have them) and the
probe (a label of the run), the filter's parameters, a scored tracker's
fill-ins and frames, and the scenario's steps and survival probability. A fill-in
fitted on a calibration set is fitted at each file's own largest Q: between
files of different Q its fitted numbers differ by design, so only what it was
fitted on and how is compared.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from nllbench.measures.run.evaluate import VARYING

#: File attributes that label a run (with the probe below), as named in the tables.
RUN_ATTRIBUTES = (("scenario", "scenario"), ("seed", "seed"), ("filter", "filter"),
                  ("clutter_rate", "clutter"), ("p_detection", "pd"))  # fmt: skip
#: Evaluation settings that label a run (a calibration probe) rather than set how it is scored.
PROBE_SETTINGS = ("cov_scale", "temper", "marginal")
#: Evaluation settings that differ between files of one run without changing any value they share:
#: those the directories of one evaluation grid differ in (``VARYING``: the budgets Q, whether the
#: exact NLL was computed), but the probe, which labels the run.
FREE_SETTINGS = tuple(k for k in VARYING if k not in PROBE_SETTINGS)
#: Settings of the proper scores alone (compared only between files that computed them).
PROPER_SETTINGS = ("kernel_cov", "energy_samples")
#: JSON attributes whose members are compared one by one (``filter_parameters.gate``).
JSON_ATTRIBUTES = ("filter_parameters", "fill_ins")
#: Plain attributes compared as they are.
PLAIN_ATTRIBUTES = ("steps", "p_survival", "frames")


@dataclass(frozen=True)
class RunRecord:
    """One metrics file: its path, the run it holds and the settings it was computed with.

    Attributes
    ----------
    path : Path
        The file, as the user named it (through its directory).
    run : tuple of (str, object)
        (label, value) pairs identifying the run (:data:`RUN_ATTRIBUTES`, :data:`PROBE_SETTINGS`).
    settings : dict
        Setting name -> value (:func:`settings_of`).
    """

    path: Path
    run: tuple
    settings: dict


def _plain(value):
    """A numpy scalar or array attribute as a plain Python value (lists for arrays)."""
    if hasattr(value, "tolist"):
        return value.tolist()
    return value


def _json(text, name: str, path) -> dict:
    try:
        value = json.loads(text) if isinstance(text, str) else text
    except json.JSONDecodeError:
        raise ValueError(f"{path}: attribute {name!r}: expected JSON, got {text!r}") from None
    if not isinstance(value, dict):
        raise ValueError(f"{path}: attribute {name!r}: expected a JSON object, got {text!r}")
    return value


def settings_of(attrs: Mapping, path) -> dict:
    """The settings of one metrics file that must agree between files of one run (see the module)."""
    evaluation = _json(attrs["evaluation_settings"], "evaluation_settings", path)
    # the proper scores' settings say nothing about a file computed without them
    unused = PROPER_SETTINGS if evaluation.get("proper_scores") is False else ()
    out = {k: v for k, v in evaluation.items() if k not in PROBE_SETTINGS + FREE_SETTINGS + unused}
    for name in JSON_ATTRIBUTES:
        if name in attrs:
            for k, v in _json(attrs[name], name, path).items():
                out[f"{name}.{k}"] = v
    for name in PLAIN_ATTRIBUTES:
        if name in attrs:
            out[name] = _plain(attrs[name])
    return out


def run_record(path: str | os.PathLike, attrs: Mapping) -> RunRecord:
    """The :class:`RunRecord` of a metrics file from its global attributes ``attrs``."""
    evaluation = _json(attrs["evaluation_settings"], "evaluation_settings", path)
    run = tuple((label, _plain(attrs.get(name))) for name, label in RUN_ATTRIBUTES)
    run += tuple((name, evaluation.get(name)) for name in PROBE_SETTINGS)
    return RunRecord(Path(path), run, settings_of(attrs, path))


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


def _fitted_q(value):
    """The Murty budget a fitted fill-in was fitted at (its ``fitted.q``), or None."""
    fitted = value.get("fitted") if isinstance(value, dict) else None
    return fitted.get("q") if isinstance(fitted, dict) else None


def _found(value) -> set:
    """Every real number in ``value`` (nested dicts and lists)."""
    if isinstance(value, dict):
        return set().union(*(_found(v) for v in value.values()))
    if isinstance(value, list):
        return set().union(*(_found(v) for v in value))
    return {value} if isinstance(value, float) else set()


def _configuration(value):
    """A fitted fill-in without what the fit found: its ``fitted`` record's real numbers (the fitted
    values, the calibration NLL) and budget ``q``, and every value elsewhere equal to one of them (a
    fitted value also set in the fill-in); a real number the user set is kept."""
    found = _found({k: v for k, v in value["fitted"].items() if k != "q"})

    def strip(x):
        if isinstance(x, dict):
            return {k: strip(v) for k, v in x.items() if not (isinstance(v, float) and v in found)}
        return x

    fitted = {k: v for k, v in value["fitted"].items() if k != "q" and not isinstance(v, float)}
    return {**strip({k: v for k, v in value.items() if k != "fitted"}), "fitted": fitted}


def _fitted_alike(a, b) -> bool:
    """Two fill-ins fitted at different budgets Q (each file's own, a free setting) on the same data
    with the same configuration: their fitted numbers differ by design, not by a setting."""
    qa, qb = _fitted_q(a), _fitted_q(b)
    return qa is not None and qb is not None and qa != qb and _configuration(a) == _configuration(b)


def differing_settings(a: RunRecord, b: RunRecord) -> list[str]:
    """The setting names whose values differ between ``a`` and ``b`` (one absent counts as differing).

    A scored tracker's fill-in fitted at each file's own Q (``fill_ins.NAME`` with ``fitted.q``) may
    differ in what the fit found between files of different Q; what it was fitted on and how must agree.
    """
    missing = object()
    keys = sorted(set(a.settings) | set(b.settings))
    return [
        k
        for k in keys
        if not _same(a.settings.get(k, missing), b.settings.get(k, missing))
        and not _fitted_alike(a.settings.get(k), b.settings.get(k))
        and not (k in PROPER_SETTINGS and (k not in a.settings or k not in b.settings))
    ]


def find_conflicts(records: Sequence[RunRecord]) -> list[tuple[RunRecord, RunRecord, list[str]]]:
    """Every (first file, other file, differing settings) of one run computed with other settings.

    Records of the same file (the same directory given twice, or one file
    reached by two paths) are one record. Each run's first record is compared
    with every later one, in the order given.
    """
    first: dict[tuple, RunRecord] = {}
    seen: set[str] = set()
    out = []
    for r in records:
        real = os.path.realpath(r.path)
        if real in seen:
            continue
        seen.add(real)
        if r.run not in first:
            first[r.run] = r
            continue
        diff = differing_settings(first[r.run], r)
        if diff:
            out.append((first[r.run], r, diff))
    return out


def _show(value) -> str:
    return json.dumps(value) if isinstance(value, (dict, list, str)) or value is None else f"{value!r}"


def check_no_conflicts(records: Sequence[RunRecord], option: str = "METRICS_DIRS") -> None:
    """Refuse files of one run computed with other settings: a ValueError naming both and the settings."""
    conflicts = find_conflicts(records)
    if not conflicts:
        return
    a, b, diff = conflicts[0]
    run = ", ".join(f"{k} {v}" for k, v in a.run)
    shown = "; ".join(f"{k}: {_show(a.settings.get(k))} vs {_show(b.settings.get(k))}" for k in diff[:4])
    more = f" and {len(diff) - 4} more" if len(diff) > 4 else ""
    n = len(conflicts) - 1
    others = f" ({n} more {'run differs' if n == 1 else 'runs differ'} alike)" if n else ""
    raise ValueError(
        f"{option}: {str(a.path)!r} and {str(b.path)!r} hold the same run ({run}) computed with different "
        f"settings: {shown}{more}{others}. The tables would keep one of them: aggregate them separately"
    )


def read_attributes(path: str | os.PathLike) -> dict | None:
    """The global attributes of a NetCDF file, or None when it cannot be read (its reader will say why)."""
    import netCDF4

    try:
        with netCDF4.Dataset(path) as ds:
            return {k: ds.getncattr(k) for k in ds.ncattrs()}
    except (OSError, RuntimeError, ValueError):
        return None


def read_run_records(dirs: Iterable[str | os.PathLike]) -> list[RunRecord]:
    """The :class:`RunRecord` of every readable ``seed*.nc`` metrics file of the directories, in order.

    Files that cannot be read or are no metrics files are left out: the
    aggregation that reads them next names them with its own error.
    """
    out = []
    for d in dirs:
        for f in sorted(Path(d).glob("seed*.nc")):
            attrs = read_attributes(f)
            if attrs is None or attrs.get("content") != "metrics" or "evaluation_settings" not in attrs:
                continue
            try:
                out.append(run_record(f, attrs))
            except ValueError:
                continue  # a malformed attribute: the aggregation's reader names it
    return out
