"""Metrics files: one evaluated run (``content = "metrics"``), written by ``nllbench evaluate`` and ``score``.

Schema version 3 (docs/store.md): classic NetCDF with one named variable per
measure, each with the CF ``long_name`` and ``units`` declared in
:data:`~nllbench.measures.names.METRICS_VARIABLES`: the NLL and its terms per
step and Q, the per-step measures
(:data:`~nllbench.measures.names.METRIC_STEP_VARIABLES`), the run-level
scores, and the evaluation settings as a JSON attribute. Files of schema 1
(NetCDF-4, one variable per measure) and 2 (NetCDF-4, packed) read the same.
"""

from __future__ import annotations

import json
import os

import numpy as np

from nllbench.measures.declarations import COORDINATES, MEASURES, STEP, measures_of, stepwise_measures
from nllbench.measures.names import (
    METRIC_STEP_VARIABLES,
    METRICS_VARIABLES,
    NLL_STEP,
    OPTIONAL_VARIABLES,
    POINT_RUN,
    PROPER_RUN,
    PROPER_STEP,
    TRAJECTORY_RUN,
    TRAJECTORY_WINDOW,
)
from nllbench.store._netcdf import (
    Declared,
    SchemaError,
    attrs_out,
    check_declared,
    describe_kind,
    header,
    open_dataset,
    write_classic,
)

#: The dimensions (names, in order) of each metrics variable that has any, as its measure declares
#: them; every other variable of :data:`~nllbench.measures.names.METRICS_VARIABLES` is a scalar.
#: The same in every schema version.
_NONSCALAR_DIMS: dict[str, tuple[str, ...]] = {
    v.name: v.dims for v in (*COORDINATES, *(v for m in MEASURES for v in m.variables)) if v.dims
}
#: Every variable of a metrics file as read (:func:`read_metrics`, any schema version): its
#: dimensions, in order, and kind of values in memory (floats; counts and flags as integers), the
#: kind from :data:`~nllbench.measures.names.METRICS_VARIABLES`. Checked on reading
#: (:func:`~nllbench.store._netcdf.check_declared`) and on writing (:func:`encode_variables`).
METRICS_DECLARED: dict[str, Declared] = {
    name: Declared(_NONSCALAR_DIMS.get(name, ()), "float" if var.kind == "float" else "integer")
    for name, var in METRICS_VARIABLES.items()
}


def write_metrics(metrics, path: str | os.PathLike, attrs: dict | None = None) -> None:
    """Write a :class:`nllbench.measures.run.evaluate.RunMetrics` to a metrics file (schema version 3).

    One named variable per measure, as :func:`read_metrics` returns them:
    ``nll_<term>(step, q)`` for value, lower, upper and the decomposition,
    ``nll_exact(step, q)`` (a 0/1 flag), the per-step measures over ``step``
    (:data:`METRIC_STEP_VARIABLES`), run-level scalars (``mota``, ``motp``,
    ``idf1``, ...; ``nll_mean(q)``, ``nll_infinite_steps(q)``) and the HOTA
    and calibration arrays. Each variable carries the CF ``long_name`` and
    ``units`` that :data:`~nllbench.measures.names.METRICS_VARIABLES`
    declares. The file is classic NetCDF (64-bit offset): in a file of a few
    thousand numbers the per-variable overhead of NetCDF-4/HDF5 would
    outweigh the data. +inf values are stored as +inf (an impossible truth),
    never dropped; counts are stored as int (as double beyond 2**24), so that
    summing files cannot wrap (:func:`encode_variables`). Layout in ``docs/store.md``.
    """
    data = {**_nll_variables(metrics), **_point_variables(metrics), **_run_variables(metrics)}
    data.update(_measure_variables(metrics))
    data.update(_proper_variables(metrics))
    data.update(_trajectory_variables(metrics))
    data.update(_pgospa_variables(metrics))
    data.update(_stepwise_variables(metrics, data))
    data["step"] = (("step",), np.arange(metrics.steps))
    data["q"] = (("q",), np.array(metrics.qs, dtype=np.int64))
    # scipy's classic writer without xarray: the same bytes, xarray and pandas left unimported
    write_classic(encode_variables(data), classic_attrs(attrs_out(_metrics_attrs(metrics, attrs))), path)


#: The on-disk format of metrics files since schema version 3 (classic NetCDF, 64-bit offsets).
METRICS_FORMAT = "NETCDF3_64BIT"
#: The integer type of classic NetCDF a count is stored in: int (32 bits), for counts within
#: +-:data:`_SUMMABLE`, so that readers which keep the stored type when adding files (xarray, MATLAB)
#: cannot wrap a sum of up to 128 of them; larger counts are stored as double (exact up to 2**53).
#: Not short or byte: two MOT17-sized counts in short (53,621 = 26,768 + 26,853) wrap when added.
_CLASSIC_INTEGERS = (np.int32,)
#: The largest count stored as int: 2**24 (2**31 / 128).
_SUMMABLE = 2**24
#: Integers are exact in float64 up to this magnitude.
_EXACT_INTEGER = 2**53
#: Global attribute naming the integer attributes written as decimal text (outside the int range).
INTEGER_TEXT_ATTRIBUTE = "integer_attributes_as_text"


def encode_variables(data: dict) -> dict:
    """Each metrics variable as stored: its declared attributes and its on-disk type.

    ``data`` maps a name of :data:`METRICS_VARIABLES` to ``(dims, values)``.
    Floats stay float64; a flag (0/1) is a byte with CF ``flag_values`` and
    ``flag_meanings``; a count is stored as int within +-2**24
    (:data:`_CLASSIC_INTEGERS`: a sum of 128 files cannot wrap), and as float64 beyond
    (exact within +-2**53; larger counts are refused). The reader restores the
    in-memory types (int64 counts, int8 flags) from the declared kind, so the
    stored width does not matter to it.
    """
    out = {}
    for name, (dims, values) in data.items():
        declared = METRICS_VARIABLES.get(name)
        if declared is None:
            raise ValueError(f"metrics variable {name!r}: not declared in nllbench.measures.names")
        want = METRICS_DECLARED[name].dims
        if tuple(dims) != want:
            raise ValueError(f"metrics variable {name!r}: expected dimensions {want}, got {tuple(dims)}")
        arr = np.asarray(values)
        if declared.kind == "float":
            if arr.dtype.kind != "f":
                raise TypeError(f"metrics variable {name!r}: expected floats, got dtype {arr.dtype}")
            stored = arr.astype(np.float64)
        elif declared.kind == "flag":
            if arr.dtype.kind not in "biu" or not np.isin(arr, (0, 1)).all():
                raise ValueError(f"metrics variable {name!r}: expected 0/1 flags, got {arr}")
            stored = arr.astype(np.int8)
        else:
            stored = _stored_count(name, arr)
        out[name] = (dims, stored, declared_attrs(name))
    return out


def _stored_count(name: str, arr: np.ndarray) -> np.ndarray:
    """A count as int within +-2**24, else as float64."""
    if arr.dtype.kind not in "biu":
        raise TypeError(f"metrics variable {name!r}: expected integer counts, got dtype {arr.dtype}")
    low, high = (int(arr.min()), int(arr.max())) if arr.size else (0, 0)
    for dtype in _CLASSIC_INTEGERS:
        if -_SUMMABLE <= low and high <= _SUMMABLE:  # far from the type's bounds and fill value
            return arr.astype(dtype)
    if max(high, -low) > _EXACT_INTEGER:
        bad = high if high > _EXACT_INTEGER else low
        raise ValueError(f"metrics variable {name!r}: expected integers within +-2**53, got {bad}")
    return arr.astype(np.float64)


def classic_attrs(attrs: dict) -> dict:
    """Global attributes classic NetCDF can hold, exactly: integers beyond int32 as decimal text.

    Classic NetCDF has no 64-bit integer type. An integer attribute (a seed,
    say) outside int32 is written as its decimal digits and named in
    :data:`INTEGER_TEXT_ATTRIBUTE`; :func:`read_metrics` gives it back as int64.
    Integers beyond int64 are refused, as NetCDF-4 files refuse them.
    """
    out, as_text = {}, []
    for key, value in attrs.items():
        if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
            number = int(value)
            if not -(2**63) <= number < 2**63:
                raise ValueError(f"attribute {key!r}: expected an integer within int64, got {number}")
            if -(2**31) <= number < 2**31:
                out[key] = np.int32(number)
            else:
                out[key] = str(number)
                as_text.append(key)
        else:
            out[key] = value
    if as_text:
        out[INTEGER_TEXT_ATTRIBUTE] = " ".join(as_text)
    return out


def _nll_variables(metrics) -> dict:
    """The NLL per step and Q (value, bounds, terms), whether it was exact, and the exact NLL."""
    data = {f"nll_{term}": (("step", "q"), arr) for term, arr in metrics.nll.items()}
    data["nll_exact"] = (("step", "q"), metrics.nll_exact.astype(np.int8))
    return data


def _point_variables(metrics) -> dict:
    """Per-step variables of the point and Theorem 1 sections (GOSPA, OSPA, counts, CLEAR MOT frame
    counts, the Theorem 1 check, in declaration order) and the exact NLL."""
    c = metrics.clear
    clear = {
        "clear_matches": c.frame_matches,
        "clear_misses": c.frame_misses,
        "clear_false_positives": c.frame_false_positives,
        "clear_switches": c.frame_switches,
        "clear_distance_sum": c.frame_distance_sum,
    }
    data = {}
    for m in (*measures_of("point"), *measures_of("theorem1")):
        arrays = {**clear, **metrics.stepwise.get(m.name, {})}
        for name in m.names(STEP):
            if name in arrays:
                data[name] = (STEP, np.asarray(arrays[name]))
    if metrics.nll_exact_value is not None:
        data["nll_exact_value"] = (("step",), metrics.nll_exact_value)
        data["nll_exact_available"] = (("step",), metrics.nll_exact_available.astype(np.int8))
    return data


def _stepwise_variables(metrics, written: dict) -> dict:
    """The variables of every stepwise measure (``MeasureDeclaration.step``) not in ``written``: its
    per-step arrays and its run-level values (``MeasureDeclaration.run``), with their declared dimensions."""
    data = {}
    run = metrics.run_values()
    for m in stepwise_measures():
        arrays = metrics.stepwise.get(m.name)
        if arrays is None:  # it does not apply to the run: absent, never NaN
            continue
        for v in m.variables:
            if v.name in written:
                continue
            if v.name in arrays:
                data[v.name] = (v.dims, np.asarray(arrays[v.name]))
            elif v.name in run:
                data[v.name] = (v.dims, np.asarray(run[v.name]))
    return data


def _run_variables(metrics) -> dict:
    """Run-level NLL summaries per Q and the Q-independent run scores (CLEAR MOT, identity, means)."""
    summary = metrics.summary()
    values = metrics.nll["value"]
    data = {
        "nll_mean": (("q",), np.array([summary[f"nll_q{q}"] for q in metrics.qs])),
        "nll_finite_mean": (("q",), np.array([summary[f"nll_finite_mean_q{q}"] for q in metrics.qs])),
        "nll_infinite_steps": (("q",), (~np.isfinite(values)).sum(axis=0).astype(np.int64)),
    }
    declared = metrics.run_values()  # the stepwise measures' own: written by _stepwise_variables
    for name in (n for n in POINT_RUN if n not in declared):
        key = {"gospa_mean": "gospa", "ospa_mean": "ospa"}.get(name, name)
        data[name] = ((), float(summary[key]))
    c, ident = metrics.clear, metrics.identity
    for name in ("switches", "matches", "misses", "false_positives", "num_objects"):
        data[f"clear_total_{name}"] = ((), int(getattr(c, name)))
    for name in ("idp", "idr"):
        data[name] = ((), float(getattr(ident, name)))
    for name in ("idtp", "idfp", "idfn"):
        data[name] = ((), int(getattr(ident, name)))
    return data


def _metrics_attrs(metrics, attrs: dict | None) -> dict:
    """Header, the evaluation settings (JSON) and the caller's ``attrs`` (the posterior's provenance)."""
    s = metrics.settings
    meta = {
        **header("metrics"),
        "evaluation_settings": json.dumps(
            {k: (list(v) if isinstance(v, tuple) else v) for k, v in s.__dict__.items()}, sort_keys=True
        ),
        "nll_marginal": s.marginal,
    }
    if getattr(metrics, "proper", None) is not None:
        meta["proper_scores"] = json.dumps(metrics.proper.settings(), sort_keys=True)
    for k, v in (attrs or {}).items():
        meta.setdefault(k, json.dumps(v, sort_keys=True) if isinstance(v, dict) else v)
    return meta


def _measure_variables(metrics) -> dict:
    """T-GOSPA, HOTA and calibration variables of a metrics file.

    Per step (``step``): :data:`MEASURE_STEP_VARIABLES`. Per run: ``tgospa``
    (value; its per-step terms sum to ``tgospa ** p``), ``tgospa_gamma``,
    ``tgospa_n_switches``, ``tgospa_n_half_switches``; ``hota``, ``deta``,
    ``assa``, ``loca`` (means over alpha) and ``hota_alpha``, ``deta_alpha``,
    ``assa_alpha``, ``loca_alpha``, ``hota_tp``, ``hota_fn``, ``hota_fp``
    over ``alpha``; the pooled calibration counts ``reliability_count``,
    ``reliability_r_sum``, ``reliability_explained`` over ``reliability_bin``
    (lower bin edges), ``nees_pit_count`` over ``nees_pit_bin``,
    ``calibration_brier_sum_total``, ``nees_dof``; and the scores
    ``cardinality_coverage90``, ``cardinality_log_score_mean`` and, only where
    defined (some Bernoulli / some matched pair), ``brier``, ``ece``,
    ``anees``, ``anees_ci95_low``, ``anees_ci95_high``, ``nees_inside95_share``.
    """
    if metrics.tgospa is None or metrics.hota is None or not metrics.calibration:
        return {}
    from nllbench.measures.calibration import PIT_BINS, RELIABILITY_BINS

    tg, ho, steps = metrics.tgospa, metrics.hota, metrics.calibration
    cards = metrics.cardinality
    pooled = metrics.calibration_total()
    per_step = {
        "tgospa_localization": tg.frame_localization,
        "tgospa_missed": tg.frame_missed,
        "tgospa_false": tg.frame_false,
        "tgospa_switches": tg.frame_switches,
        "calibration_bernoullis": [c.bernoullis for c in steps],
        "calibration_explained": [int(c.bin_explained.sum()) for c in steps],
        "calibration_r_sum": [float(c.bin_r_sum.sum()) for c in steps],
        "calibration_brier_sum": [c.brier_sum for c in steps],
        "calibration_unassociated": [c.unassociated for c in steps],
        "nees_pairs": [c.nees_pairs for c in steps],
        "nees_sum": [c.nees_sum for c in steps],
        "nees_inside95": [c.nees_inside for c in steps],
        "cardinality_mean": [c.mean for c in cards],
        "cardinality_low90": [c.low for c in cards],
        "cardinality_high90": [c.high for c in cards],
        "cardinality_covered90": [int(c.covered) for c in cards],
        "cardinality_log_score": [c.log_score for c in cards],
    }
    data = {name: (("step",), np.asarray(values)) for name, values in per_step.items()}
    data["alpha"] = (("alpha",), ho.alphas)
    data["reliability_bin"] = (("reliability_bin",), np.arange(RELIABILITY_BINS) / RELIABILITY_BINS)
    data["nees_pit_bin"] = (("nees_pit_bin",), np.arange(PIT_BINS) / PIT_BINS)
    for name in ("hota_alpha", "deta_alpha", "assa_alpha", "loca_alpha"):
        data[name] = (("alpha",), getattr(ho, name))
    for name in ("tp", "fn", "fp"):
        data[f"hota_{name}"] = (("alpha",), getattr(ho, name))
    data["reliability_count"] = (("reliability_bin",), pooled.bin_count)
    data["reliability_r_sum"] = (("reliability_bin",), pooled.bin_r_sum)
    data["reliability_explained"] = (("reliability_bin",), pooled.bin_explained)
    data["nees_pit_count"] = (("nees_pit_bin",), pooled.pit_count)
    scalars = {
        "tgospa": tg.value,
        "tgospa_gamma": tg.gamma,
        "tgospa_n_switches": tg.n_switches,
        "tgospa_n_half_switches": tg.n_half_switches,
        "hota": ho.hota,
        "deta": ho.deta,
        "assa": ho.assa,
        "loca": ho.loca,
        "calibration_brier_sum_total": pooled.brier_sum,
        "nees_dof": pooled.nees_dof,
        "cardinality_coverage90": pooled.cardinality_coverage,
        "cardinality_log_score_mean": pooled.cardinality_log_score,
        "brier": pooled.brier,
        "ece": pooled.ece,
        "anees": pooled.anees,
        "nees_inside95_share": pooled.nees_inside_share,
    }
    interval = pooled.anees_interval()
    if interval is not None:
        scalars["anees_ci95_low"], scalars["anees_ci95_high"] = interval
    data.update({name: ((), value) for name, value in scalars.items() if value is not None})
    return data


def _proper_variables(metrics) -> dict:
    """The proper scores of a metrics file, when the run has them (``metrics.proper``).

    Per step (``step``): ``energy_score``, ``energy_score_se``,
    ``intensity_score`` (absent where it has no closed form; the attribute
    ``proper_scores`` says why) and ``cardinality_rps``; per run: their means
    and ``energy_score_mean_se`` (:data:`~nllbench.measures.names.PROPER_RUN`).
    """
    proper = getattr(metrics, "proper", None)
    if proper is None:
        return {}
    per_step = dict(
        zip(PROPER_STEP, (proper.energy, proper.energy_se, proper.intensity, proper.rps), strict=True)
    )
    data = {name: (("step",), values) for name, values in per_step.items() if values is not None}
    data.update({name: ((), value) for name, value in proper.summary().items()})
    return data


def _trajectory_variables(metrics) -> dict:
    """The run's trajectory NLL (``docs/trajectory.md``), when it has one (a labelled output).

    Run-level (nats per run, summed over its windows): :data:`~nllbench.measures.names.TRAJECTORY_RUN`
    (value at Q, bounds, terms), ``trajectory_nll_q``, ``trajectory_nll_complete`` (0/1: every
    association was listed) and, when computed, ``trajectory_nll_exact``; per window (dimension
    ``trajectory_window``): :data:`~nllbench.measures.names.TRAJECTORY_WINDOW`.
    """
    run = getattr(metrics, "trajectory", None)
    if run is None:
        return {}
    row = run.summary()
    data = {name: ((), float(row[name])) for name in TRAJECTORY_RUN}
    data["trajectory_nll_q"] = ((), np.int64(run.q))
    data["trajectory_nll_complete"] = ((), np.int8(run.complete))
    if run.exact is not None:
        data["trajectory_nll_exact"] = ((), float(run.exact))
    windows = {
        "trajectory_window_first_frame": [int(w.frames[0]) for w in run.windows],
        "trajectory_window_last_frame": [int(w.frames[-1]) for w in run.windows],
        "trajectory_window_nll": [w.value for w in run.windows],
        "trajectory_window_nll_lower": [w.lower for w in run.windows],
    }
    for name in TRAJECTORY_WINDOW:
        data[name] = (("trajectory_window",), np.asarray(windows[name]))
    return data


def _pgospa_variables(metrics) -> dict:
    """P-GOSPA per step and PT-GOSPA of the run (``docs/pgospa.md``), when the run has them.

    A PHD/CPHD posterior has neither (absent, never NaN). Per step (``step``): ``pgospa`` and its
    four terms (p-th-power units), the PT-GOSPA terms (their sums over steps add up to
    ``ptgospa ** p``); per run: ``pgospa_mean``, ``ptgospa``, ``ptgospa_n_switches``,
    ``ptgospa_n_half_switches``.
    """
    pg, pt = getattr(metrics, "pgospa", None), getattr(metrics, "ptgospa", None)
    data = {}
    if pg is not None:
        for name in ("value", "localization", "existence_mismatch", "missed", "false"):
            key = "pgospa" if name == "value" else f"pgospa_{name}"
            data[key] = (("step",), np.asarray(getattr(pg, name), dtype=float))
        data["pgospa_mean"] = ((), pg.mean)
    if pt is not None:
        for name in ("localization", "existence_mismatch", "missed", "false", "switches"):
            data[f"ptgospa_{name}"] = (("step",), np.asarray(getattr(pt, f"frame_{name}"), dtype=float))
        data["ptgospa"] = ((), float(pt.value))
        data["ptgospa_n_switches"] = ((), np.int64(pt.n_switches))
        data["ptgospa_n_half_switches"] = ((), np.int64(pt.n_half_switches))
    return data


def read_calibration_counts(ds):
    """The pooled :class:`~nllbench.measures.calibration.CalibrationCounts` of a metrics dataset."""
    from nllbench.measures.calibration import CalibrationCounts

    def total(name):
        return ds[name].values.sum()

    return CalibrationCounts(
        ds["reliability_count"].values.astype(np.int64),
        ds["reliability_r_sum"].values.astype(float),
        ds["reliability_explained"].values.astype(np.int64),
        brier_sum=float(ds["calibration_brier_sum_total"].values),
        nees_pairs=int(total("nees_pairs")),
        nees_sum=float(total("nees_sum")),
        nees_dof=int(ds["nees_dof"].values),
        nees_inside=int(total("nees_inside95")),
        pit_count=ds["nees_pit_count"].values.astype(np.int64),
        card_steps=int(ds["step"].size),
        card_covered=int(total("cardinality_covered90")),
        card_log_score_sum=float(total("cardinality_log_score")),
        unassociated=int(total("calibration_unassociated")),
    )


#: Attributes of a schema-2 packed variable: the names stacked along its first dimension, their dtypes.
PACKED_MEMBERS, PACKED_DTYPES = "members", "member_dtypes"


def unpack(ds, path=None):
    """The variables of a schema-2 file, restored from ``ds`` (an ``xarray.Dataset``; a new one).

    Schema 2 stacked the variables of equal dimensions into one float64
    variable per dimension tuple, ``packed_<dims>`` (``packed_run`` for
    scalars) over ``(<that name>_member, *dims)``, with the attributes
    ``members`` (the stacked names, in order) and ``member_dtypes`` (each
    one's numpy dtype; integers were checked exact in float64). This gives
    each back under its name, dimensions, dtype and values, bit for bit.
    """
    packed = [v for v in ds.data_vars if PACKED_MEMBERS in ds.variables[v].attrs]
    restored_vars = {}
    for var in packed:
        variable = ds.variables[var]
        names = str(variable.attrs[PACKED_MEMBERS]).split()
        dtypes = str(variable.attrs.get(PACKED_DTYPES, "")).split()
        values = variable.values
        if not values.shape[0] == len(names) == len(dtypes):
            raise SchemaError(
                f"{path}: variable {var!r}: expected one row per name in {PACKED_MEMBERS!r} and "
                f"{PACKED_DTYPES!r}, got {values.shape[0]} rows, {len(names)} names, {len(dtypes)} dtypes"
            )
        for name, dtype, row in zip(names, dtypes, values, strict=True):
            restored = row.astype(dtype)
            if not np.array_equal(restored, row, equal_nan=True):
                raise SchemaError(f"{path}: variable {name!r} (in {var!r}): expected {dtype} values")
            restored_vars[name] = (variable.dims[1:], restored)
    # one assignment: adding the variables one by one re-merges the dataset each time
    return ds.drop_vars(packed).assign(restored_vars)


def declared_attrs(name: str) -> dict:
    """The CF attributes of metrics variable ``name`` (:data:`METRICS_VARIABLES`), as written."""
    declared = METRICS_VARIABLES[name]
    attrs = {"long_name": declared.long_name}
    if declared.units is not None:
        attrs["units"] = declared.units
    if declared.kind == "flag":
        attrs.update(flag_values=np.array([0, 1], dtype=np.int8), flag_meanings=declared.flag_meanings)
    return attrs


#: The in-memory dtype of each declared kind: what schema 1 and 2 files held, and read_metrics returns.
_MEMORY_DTYPES = {"float": np.dtype(np.float64), "count": np.dtype(np.int64), "flag": np.dtype(np.int8)}


def _decoded(name: str, values: np.ndarray, path) -> np.ndarray:
    """A stored variable of a schema-3 file in its in-memory dtype (checked exact)."""
    kind = METRICS_VARIABLES[name].kind
    dtype = _MEMORY_DTYPES[kind]
    if kind == "float":
        if values.dtype.kind != "f":
            raise SchemaError(
                f"{path}: variable {name!r}: expected float values, got {describe_kind(values.dtype)}"
            )
        return values.astype(dtype, copy=False)
    if values.dtype.kind not in "iuf":
        raise SchemaError(
            f"{path}: variable {name!r}: expected integer values, got {describe_kind(values.dtype)}"
        )
    if values.dtype.kind == "f" and not (np.abs(values) <= _EXACT_INTEGER).all():  # also NaN
        raise SchemaError(f"{path}: variable {name!r}: expected integers within +-2**53")
    restored = values.astype(dtype)
    if not np.array_equal(restored, values) or (kind == "flag" and not np.isin(restored, (0, 1)).all()):
        what = "0/1 flags" if kind == "flag" else "integers"
        raise SchemaError(f"{path}: variable {name!r}: expected {what}, got {values.ravel()[:5]}...")
    return restored


def _decode(ds, path):
    """A schema-3 dataset with the in-memory dtypes of schema 2 (int64 counts, int8 flags) and attributes.

    Integer global attributes, int32 in classic NetCDF, come back as int64;
    those written as text (:func:`classic_attrs`) as int64 too.
    """
    import xarray as xr

    attrs = dict(ds.attrs)
    as_text = str(attrs.pop(INTEGER_TEXT_ATTRIBUTE, "")).split()
    for key, value in attrs.items():
        if key in as_text:
            try:
                attrs[key] = np.int64(int(value))
            except (TypeError, ValueError):
                raise SchemaError(f"{path}: attribute {key!r}: expected an integer, got {value!r}") from None
        elif isinstance(value, np.integer):
            attrs[key] = np.int64(value)
    variables = {}
    for name, var in ds.variables.items():
        if name in METRICS_VARIABLES:
            variables[name] = xr.Variable(var.dims, _decoded(name, var.values, path), declared_attrs(name))
        else:
            variables[name] = var
    coords = {name: variables.pop(name) for name in ds.coords}
    return xr.Dataset(variables, coords=coords, attrs=attrs)


def _described(ds):
    """A schema-1 or 2 dataset (no attributes on its variables) with the declared attributes."""
    for name, var in ds.variables.items():
        if name in METRICS_VARIABLES:
            var.attrs = declared_attrs(name)
    return ds


def read_metrics(path: str | os.PathLike):
    """Read a metrics file as an ``xarray.Dataset`` (validated: content, version, variables, no NaN).

    Every schema version gives the same dataset: one variable per measure
    with the dtypes of :data:`_MEMORY_DTYPES` (float64, int64 counts, int8
    flags) and the attributes of :data:`METRICS_VARIABLES`. Schema 3 files
    (classic NetCDF, named variables) are decoded from their stored integer
    widths, schema 2 files unpacked (:func:`unpack`); schema 1 files hold the
    variables as they are.
    """
    ds = open_dataset(path, "metrics")
    version = str(ds.attrs["nllbench_schema_version"])
    ds = _decode(ds, path) if version == "3" else _described(unpack(ds, path))
    check_declared(ds, path, METRICS_DECLARED)
    required = (
        *(f"nll_{t}" for t in NLL_STEP),
        "nll_exact",
        "nll_mean",
        "nll_finite_mean",
        "nll_infinite_steps",
        *METRIC_STEP_VARIABLES,
        *POINT_RUN,
        "clear_total_switches",
    )
    for name in required:
        if name not in ds.variables and name in OPTIONAL_VARIABLES:  # a measure added later: may lack
            continue
        if name not in ds.variables:
            raise SchemaError(f"{path}: variable {name!r} is missing")
        values = np.asarray(ds.variables[name].values)  # the Variable: no DataArray built per check
        if values.dtype.kind == "f" and np.isnan(values).any():
            raise SchemaError(f"{path}: variable {name!r}: NaN found (values are numbers or +-inf)")
    for name in (*PROPER_STEP, *PROPER_RUN):  # optional: present when the run's proper scores were computed
        if name in ds.variables and np.isnan(np.asarray(ds.variables[name].values)).any():
            raise SchemaError(f"{path}: variable {name!r}: NaN found (values are numbers or +-inf)")
    if "evaluation_settings" not in ds.attrs:
        raise SchemaError(f"{path}: attribute 'evaluation_settings' is missing")
    return ds
