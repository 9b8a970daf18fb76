"""The NetCDF store: the one module that owns nllbench's file schema.

Scenario files hold truth and measurements (and the model that generated
them); posterior files hold one multi-object density per time step. Both are
NetCDF-4 (xarray + netCDF4), readable by any NetCDF tool.

Schema (version 1)
------------------
Sets of varying size per step are *contiguous ragged arrays* (CF 1.8,
section 9.3.3): a count variable over ``step`` with the attribute
``sample_dimension`` names the dimension that concatenates the steps' rows
in step order. Row ``i`` of step ``k`` is at ``sum(count[:k]) + i``.

Dimensions: ``step``; ``state`` (d) and ``state2`` (d, for covariances);
``obs``/``obs2`` (measurement dimension); the sample dimensions below.

Scenario file (``content = "scenario"``)
    truth_count(step) -> truth:  truth_state(truth, state), truth_id(truth)
    meas_count(step) -> meas:    measurement(meas, obs), meas_origin(meas) (-1 = clutter)
    model: F(state, state2), Q(state, state2), H(obs, state), R(obs, obs2),
           birth_weight/birth_r(birth), birth_mean(birth, state), birth_cov(birth, state, state2),
           initial_weight(initial), initial_mean, initial_cov,
           initial_r(initial) (only when the MBM filters start from Bernoullis)
    attributes: scenario, seed, steps, p_detection, p_survival, clutter_rate,
                process_noise, measurement_noise, fov_low, fov_high, truth_seed,
                truth_source (only for a truth read from a file)

Posterior file (``content = "posterior"``), attribute ``family`` one of
``PPP`` (PHD), ``IIDCluster`` (CPHD), ``PMBM`` (with ``subfamily`` PMBM,
PMB, MBM, MBM01 or MB, and ``has_ppp`` 0/1):
    PPP part (PPP and PMBM with has_ppp = 1):
        ppp_count(step) -> ppp: ppp_weight, ppp_mean(ppp, state), ppp_cov(ppp, state, state2), ppp_label
        box_count(step) -> box: box_rate, box_low(box, state), box_high(box, state)
    IIDCluster: card_count(step) -> card: cardinality (pmf over n = 0..N)
                spatial_count(step) -> spatial: spatial_weight, spatial_mean, spatial_cov
    PMBM: bern_count(step) -> bern: bern_r, bern_mean(bern, state), bern_cov(bern, state, state2),
              bern_label (-1 if none); each step's Bernoullis are a pool shared by its hypotheses
          hyp_count(step) -> hyp: hyp_weight (sums to 1 per step), hyp_size
          hyp_size -> member: hyp_member (index into the step's Bernoulli pool, 0-based)
    Estimates extracted by the filter at update time (optional; attributes
    ``estimator`` and ``estimate_at``): estimate_count(step) -> estimate:
        estimate_state(estimate, state), estimate_label(estimate) (-1 if none)
    attributes: filter, filter_parameters (JSON), scenario attributes, seed

Metrics file (``content = "metrics"``), from ``nllbench evaluate``
    nll_value/lower/upper/localization/false/missed/cardinality/mixture/association(step, q),
    nll_exact(step, q); per step: gospa (+ _localization/_missed/_false), ospa,
    n_truth, n_estimates, clear_matches/misses/false_positives/switches/distance_sum,
    theorem1_lhs/rhs/difference/excluded, tgospa_* and calibration counts
    (MEASURE_STEP_VARIABLES); per run: nll_mean(q) (+inf when any
    step is), nll_finite_mean(q), nll_infinite_steps(q), mota, motp, idf1, idp,
    idr, idtp, idfp, idfn, gospa_mean, ospa_mean, clear_total_*,
    theorem1_max_abs_difference, tgospa, hota/deta/assa/loca (+ per alpha),
    reliability counts, NEES and cardinality scores (see _measure_variables);
    attributes: evaluation_settings (JSON) and
    the posterior's provenance.

Every file carries ``nllbench_schema_version``, ``nllbench_version``,
``content`` and ``Conventions``. Writes go to a temporary file
(``.NAME.nllbench-partial``, one name per target) that is renamed into place,
so a failed write leaves no partial file and a killed one leaves one
temporary that the next write of the same target removes. Reads
validate the file and name the variable that is wrong.
"""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from nllbench.densities import PMBM, PPP, Gaussians, IIDCluster, MultiBernoulli, as_pmbm
from nllbench.models import GaussianMixture, Model

SCHEMA_VERSION = "1"
STATE_NAMES_4D = ["x", "y", "vx", "vy"]
_COMPRESS = {"zlib": True, "complevel": 4}


class SchemaError(ValueError):
    """A file does not follow the nllbench NetCDF schema."""


def _version() -> str:
    from nllbench import __version__

    return __version__


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


def _provenance_attrs() -> dict:
    return {"software_versions": json.dumps(software_versions(), sort_keys=True)}


def partial_name(path: str | os.PathLike) -> Path:
    """The one temporary name under which ``path`` is written: ``.NAME.nllbench-partial`` beside it.

    The name is deterministic, so that a run killed during a write (SIGKILL,
    power loss) leaves at most one temporary per target, which the next write
    of that target finds and removes; temporaries cannot accumulate.
    """
    path = Path(path)
    return path.with_name(f".{path.name}.nllbench-partial")


def _remove(path: Path) -> None:
    import shutil

    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    elif path.exists() or path.is_symlink():
        path.unlink()


def _remove_stale(path: Path) -> None:
    """Remove what an interrupted write of ``path`` left: its partial and old names, and the
    random-named temporaries (``.NAME.XXXXXXXX[.tmp]``) of earlier nllbench versions."""
    import re

    for name in (partial_name(path), path.with_name(f".{path.name}.nllbench-old")):
        _remove(name)
    legacy = re.compile(rf"\.{re.escape(path.name)}\.[A-Za-z0-9_]{{8}}(\.tmp)?")
    if path.parent.is_dir():
        for p in path.parent.iterdir():
            if legacy.fullmatch(p.name):
                _remove(p)


def _umask() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return umask


@dataclass(frozen=True)
class Output:
    """One output of a command: its path, the option that named it (for errors), file or directory."""

    path: Path
    option: str = "output"
    directory: bool = False


def check_output(path: str | os.PathLike, option: str = "output", directory: bool = False) -> list[Path]:
    """Check that ``path`` can be written, create its missing parents, return the directories created.

    Errors name the user's path and the real cause: a parent that is a file,
    a file where a directory is expected (or the reverse), a directory that
    cannot be created or written (read-only, ``/proc``).
    """
    target = Path(path)
    where = f"{option} {str(path)!r}" if option else repr(str(path))
    if not str(path) or target.name in ("", ".", ".."):
        raise ValueError(f"{where}: expected a path that names a {'directory' if directory else 'file'}")
    for parent in reversed(target.parents):
        if parent.exists() and not parent.is_dir():
            raise ValueError(f"{where}: cannot write there: {str(parent)!r} is a file, not a directory")
    if target.exists() and target.is_dir() != directory:
        found, wanted = ("a directory", "file") if target.is_dir() else ("a file", "directory")
        raise ValueError(f"{where}: expected a {wanted} path, but {str(target)!r} is {found}")
    created = [p for p in reversed(target.parents) if not p.exists()]
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        remove_created_dirs(created)
        raise ValueError(
            f"{where}: cannot create directory {str(target.parent)!r}: {exc.strerror or exc}"
        ) from None
    probe = partial_name(target)
    try:
        _remove_stale(target)
        probe.mkdir() if directory else probe.touch()
        _remove(probe)
    except OSError as exc:
        remove_created_dirs(created)
        cause = exc.strerror or str(exc)
        if exc.errno == errno.ENOENT and target.parent.is_dir():
            cause = f"the directory does not accept new files ({cause})"  # e.g. /proc
        raise ValueError(f"{where}: cannot write in {str(target.parent)!r}: {cause}") from None
    return created


def remove_created_dirs(created: Sequence[Path]) -> None:
    """Remove the directories :func:`check_output` created, deepest first, while they are empty."""
    for d in reversed(created):
        try:
            d.rmdir()
        except OSError:
            break


class committed_together:  # noqa: N801 - used as a context manager, like a function
    """Write all outputs of one command under temporary names; rename them into place together.

    ``with committed_together(Output(a, "-o"), Output(b, "--summary")) as (ta, tb):``
    write to ``ta`` and ``tb``. Every target is checked (:func:`check_output`)
    before anything is computed; on an exception every temporary and every
    directory created for the outputs is removed, so a failed command leaves
    no output at all. Temporaries have deterministic names
    (:func:`partial_name`): a killed run's are removed by the next write of
    the same target.
    """

    def __init__(self, *outputs: Output):
        outputs = tuple(Output(Path(o.path), o.option, o.directory) for o in outputs)
        paths = [o.path.resolve() for o in outputs]
        for i, p in enumerate(paths):
            if p in paths[:i]:
                other = outputs[paths.index(p)].option
                raise ValueError(f"{outputs[i].option} {str(outputs[i].path)!r}: the same path as {other}")
        self.outputs = outputs

    def __enter__(self) -> list[Path]:
        self.created: list[Path] = []
        try:
            for o in self.outputs:
                self.created += check_output(o.path, o.option, o.directory)
        except BaseException:
            remove_created_dirs(self.created)
            raise
        self.tmps = [partial_name(o.path) for o in self.outputs]
        for o, tmp in zip(self.outputs, self.tmps, strict=True):
            if o.directory:
                tmp.mkdir()
        return self.tmps

    def __exit__(self, exc_type, exc, tb) -> bool:
        if exc_type is not None:
            for tmp in self.tmps:
                _remove(tmp)
            remove_created_dirs(self.created)
            return False
        missing = [o.option for o, t in zip(self.outputs, self.tmps, strict=True) if not t.exists()]
        if missing:
            self.__exit__(RuntimeError, None, None)
            raise RuntimeError(f"output {missing[0]} was not written")
        umask = _umask()
        for o, tmp in zip(self.outputs, self.tmps, strict=True):
            os.chmod(tmp, (0o777 if o.directory else 0o666) & ~umask)
            if o.directory and o.path.exists():
                # a directory cannot be replaced in one rename: move the old one aside first
                old = o.path.with_name(f".{o.path.name}.nllbench-old")
                os.replace(o.path, old)
                os.replace(tmp, o.path)
                _remove(old)
            else:
                os.replace(tmp, o.path)
        return False


def atomic_directory(path: str | os.PathLike, option: str = "output directory") -> committed_together:
    """Fill a directory under a temporary name; rename it into place on success.

    ``with atomic_directory("out/batch0") as tmp: write files into tmp``.
    On an exception the temporary directory is removed and nothing appears.
    """
    return _OneDirectory(Output(Path(path), option, directory=True))


class _OneDirectory(committed_together):
    def __enter__(self) -> Path:
        return super().__enter__()[0]


# ---------------------------------------------------------------------------
# ragged helpers
# ---------------------------------------------------------------------------


def _ragged(
    blocks: Sequence[np.ndarray], tail: tuple[int, ...], dtype=float
) -> tuple[np.ndarray, np.ndarray]:
    """Concatenate per-step blocks of shape (n_k, *tail); return (counts, data)."""
    counts = np.array([b.shape[0] for b in blocks], dtype=np.int64)
    if len(blocks) and counts.sum():
        data = np.concatenate([np.asarray(b, dtype=dtype).reshape((-1, *tail)) for b in blocks])
    else:
        data = np.empty((0, *tail), dtype=dtype)
    return counts, data


def _split(counts: np.ndarray, data: np.ndarray) -> list[np.ndarray]:
    return np.split(data, np.cumsum(counts)[:-1]) if counts.size else []


def _atomic_write(ds, path: str | os.PathLike) -> None:
    """Write ``ds`` to ``path`` through a temporary file in the same directory."""
    path = Path(path)
    # compressed, and no fill value: nllbench files have no missing data
    encoding = {
        name: {**_COMPRESS, "_FillValue": None}
        for name, var in ds.data_vars.items()
        if var.dtype.kind in "fiu"
    }
    with committed_together(Output(path, "")) as (tmp,):
        ds.to_netcdf(tmp, engine="netcdf4", format="NETCDF4", encoding=encoding)


def _open(path: str | os.PathLike, content: str):
    import xarray as xr

    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file")
    try:
        with xr.open_dataset(path, engine="netcdf4", decode_cf=False) as handle:
            ds = handle.load()
    except (OSError, ValueError, RuntimeError) as exc:
        raise SchemaError(f"{path}: not a readable NetCDF file ({exc})") from None
    found = ds.attrs.get("content")
    if found != content:
        raise SchemaError(f"{path}: expected a {content} file (attribute content={content!r}), got {found!r}")
    version = str(ds.attrs.get("nllbench_schema_version", ""))
    if version != SCHEMA_VERSION:
        raise SchemaError(f"{path}: expected nllbench_schema_version {SCHEMA_VERSION}, got {version!r}")
    return ds


def _get(ds, path, name: str, ndim: int | None = None) -> np.ndarray:
    if name not in ds.variables:
        raise SchemaError(f"{path}: variable {name!r} is missing")
    arr = np.asarray(ds[name].values)
    if ndim is not None and arr.ndim != ndim:
        raise SchemaError(f"{path}: variable {name!r}: expected {ndim} dimensions, got shape {arr.shape}")
    if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
        raise SchemaError(f"{path}: variable {name!r}: expected finite values, found NaN or inf")
    return arr


def _get_ragged(
    ds, path, count_name: str, data_name: str, steps: int, ndim: int, integer: bool = False
) -> list[np.ndarray]:
    counts = _get(ds, path, count_name, 1)
    if counts.dtype.kind not in "iu":
        raise SchemaError(f"{path}: variable {count_name!r}: expected integers, got {counts.dtype}")
    if counts.shape[0] != steps:
        raise SchemaError(f"{path}: variable {count_name!r}: expected {steps} steps, got {counts.shape[0]}")
    if np.any(counts < 0):
        raise SchemaError(f"{path}: variable {count_name!r}: expected non-negative counts")
    data = _get(ds, path, data_name, ndim)
    if integer and data.dtype.kind not in "iu":
        raise SchemaError(f"{path}: variable {data_name!r}: expected integers, got {data.dtype}")
    if int(counts.sum()) != data.shape[0]:
        raise SchemaError(
            f"{path}: variable {data_name!r}: expected {int(counts.sum())} rows (sum of {count_name}), "
            f"got {data.shape[0]}"
        )
    return _split(counts.astype(np.int64), data)


def _jsonable(value):
    if isinstance(value, (list, tuple, np.ndarray)):
        return np.asarray(value).tolist()
    return value


def _attrs_out(attrs: dict) -> dict:
    """NetCDF attributes: numbers, strings and numeric lists; None becomes ''."""
    out = {}
    for k, v in attrs.items():
        if v is None:
            out[k] = ""
        elif isinstance(v, (list, tuple, np.ndarray)):
            out[k] = np.asarray(v, dtype=float)
        elif isinstance(v, bool):
            out[k] = int(v)
        else:
            out[k] = v
    return out


# ---------------------------------------------------------------------------
# scenarios
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ScenarioData:
    """A scenario file's content.

    truth : list of (n_k, d) arrays; truth_ids : list of (n_k,) int;
    measurements : list of (z_k, d_z); origins : list of (z_k,) int (-1 = clutter);
    model : Model (None if the file has no model); attrs : dict.
    """

    truth: list[np.ndarray]
    truth_ids: list[np.ndarray]
    measurements: list[np.ndarray]
    origins: list[np.ndarray]
    model: Model | None
    attrs: dict = field(default_factory=dict)

    @property
    def steps(self) -> int:
        return len(self.truth)


#: Attributes that identify a scenario run. A filter's posterior file copies
#: them from its scenario file, so that ``nllbench evaluate`` can refuse a
#: posterior scored against another scenario.
SCENARIO_IDENTITY = (
    "scenario",
    "seed",
    "truth_seed",
    "steps",
    "p_detection",
    "p_survival",
    "clutter_rate",
    "process_noise",
    "measurement_noise",
    "fov_low",
    "fov_high",
    "truth_sha256",
)


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


def scenario_identity(data: ScenarioData) -> dict:
    """The identifying attributes of a scenario file (:data:`SCENARIO_IDENTITY`), for a posterior's attrs.

    A tracker that writes its posterior with these attributes lets
    ``nllbench evaluate`` check that it is scored against its own scenario.
    """
    out = {k: data.attrs[k] for k in SCENARIO_IDENTITY if k in data.attrs}
    out["truth_sha256"] = truth_digest(data.truth, data.truth_ids)
    return out


def write_scenario(sim, path: str | os.PathLike, config: dict | None = None) -> None:
    """Write a :class:`nllbench.scenarios.Simulation` (truth, measurements, model) to NetCDF.

    ``config`` (e.g. the workflow's configuration slice) is stored as a JSON attribute.
    """
    import xarray as xr

    K = len(sim.truth)
    tc, tx = _ragged(sim.truth, (4,))
    _, tid = _ragged(sim.truth_ids, (), np.int64)
    mc, mz = _ragged(sim.measurements, (2,))
    _, mo = _ragged(sim.origins, (), np.int64)
    m = sim.scenario.model
    ds = xr.Dataset(
        {
            "truth_count": (("step",), tc, {"sample_dimension": "truth", "long_name": "objects per step"}),
            "truth_state": (("truth", "state"), tx, {"long_name": "true object state"}),
            "truth_id": (("truth",), tid, {"long_name": "object identity (stable over time)"}),
            "meas_count": (("step",), mc, {"sample_dimension": "meas", "long_name": "measurements per step"}),
            "measurement": (("meas", "obs"), mz, {"long_name": "position measurement"}),
            "meas_origin": (("meas",), mo, {"long_name": "truth_id of the source object, -1 for clutter"}),
            "F": (("state", "state2"), m.F),
            "Q": (("state", "state2"), m.Q),
            "H": (("obs", "state"), m.H),
            "R": (("obs", "obs2"), m.R),
            "birth_weight": (("birth",), m.birth.weights),
            "birth_r": (("birth",), m.birth_r),
            "birth_mean": (("birth", "state"), m.birth.means),
            "birth_cov": (("birth", "state", "state2"), m.birth.covs),
            "initial_weight": (("initial",), m.initial.weights),
            "initial_mean": (("initial", "state"), m.initial.means),
            "initial_cov": (("initial", "state", "state2"), m.initial.covs),
            **({"initial_r": (("initial",), m.initial_r)} if m.initial_r is not None else {}),
        },
        coords={"step": np.arange(K), "state": STATE_NAMES_4D, "obs": ["x", "y"]},
        attrs=_attrs_out(
            {
                "content": "scenario",
                "nllbench_schema_version": SCHEMA_VERSION,
                "nllbench_version": _version(),
                **_provenance_attrs(),
                "Conventions": "CF-1.8",
                "seed": sim.seed,
                **sim.scenario.parameters(),
                "truth_sha256": truth_digest(sim.truth, sim.truth_ids),
                **({"config": json.dumps(config, sort_keys=True)} if config is not None else {}),
            }
        ),
    )
    _atomic_write(ds, path)


def read_scenario(path: str | os.PathLike) -> ScenarioData:
    """Read and validate a scenario file."""
    ds = _open(path, "scenario")
    K = int(ds.sizes.get("step", 0))
    truth = _get_ragged(ds, path, "truth_count", "truth_state", K, 2)
    ids = _get_ragged(ds, path, "truth_count", "truth_id", K, 1, integer=True)
    meas = _get_ragged(ds, path, "meas_count", "measurement", K, 2)
    origins = _get_ragged(ds, path, "meas_count", "meas_origin", K, 1, integer=True)
    model = None
    if "F" in ds.variables:
        try:
            model = Model(
                F=_get(ds, path, "F", 2),
                Q=_get(ds, path, "Q", 2),
                H=_get(ds, path, "H", 2),
                R=_get(ds, path, "R", 2),
                p_survival=float(ds.attrs["p_survival"]),
                p_detection=float(ds.attrs["p_detection"]),
                clutter_rate=float(ds.attrs["clutter_rate"]),
                fov_low=np.atleast_1d(ds.attrs["fov_low"]),
                fov_high=np.atleast_1d(ds.attrs["fov_high"]),
                birth=GaussianMixture(
                    _get(ds, path, "birth_weight", 1),
                    _get(ds, path, "birth_mean", 2),
                    _get(ds, path, "birth_cov", 3),
                ),
                birth_r=_get(ds, path, "birth_r", 1),
                initial=GaussianMixture(
                    _get(ds, path, "initial_weight", 1),
                    _get(ds, path, "initial_mean", 2),
                    _get(ds, path, "initial_cov", 3),
                ),
                initial_r=_get(ds, path, "initial_r", 1) if "initial_r" in ds.variables else None,
            )
        except KeyError as exc:
            raise SchemaError(f"{path}: attribute {exc.args[0]!r} is missing") from None
        except (ValueError, TypeError) as exc:
            raise SchemaError(f"{path}: model: {exc}") from None
    attrs = {k: _jsonable(v) for k, v in ds.attrs.items()}
    return ScenarioData(
        truth, [i.astype(np.int64) for i in ids], meas, [o.astype(np.int64) for o in origins], model, attrs
    )


# ---------------------------------------------------------------------------
# posteriors
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Posterior(Sequence):
    """A posterior file's content: one density per step (a sequence).

    densities : list of PPP, IIDCluster or PMBM; attrs : dict;
    estimates : list of (states (k, d), labels (k,)) per step, extracted by
        the filter at update time (attribute ``estimator``), or None.
    """

    densities: list
    attrs: dict = field(default_factory=dict)
    estimates: list[tuple[np.ndarray, np.ndarray]] | None = None

    def __getitem__(self, k):
        return self.densities[k]

    def __len__(self) -> int:
        return len(self.densities)

    def __iter__(self) -> Iterator:
        return iter(self.densities)

    @property
    def family(self) -> str:
        return str(self.attrs.get("family", ""))


def _family(densities: Sequence) -> tuple[str, str, bool]:
    if not densities:
        raise ValueError("densities: expected at least one step, got none")
    kinds = {type(d) for d in densities}
    if len(kinds) != 1:
        raise ValueError(
            f"densities: expected one family for every step, got {sorted(k.__name__ for k in kinds)}"
        )
    d0 = densities[0]
    if isinstance(d0, MultiBernoulli):
        return "PMBM", "MB", False
    if isinstance(d0, PMBM):
        has_ppp = {d.ppp is not None for d in densities}
        if len(has_ppp) != 1:
            raise ValueError("densities: expected every step with a PPP or every step without one")
        subs = {d.family for d in densities}
        sub = subs.pop() if len(subs) == 1 else ("PMBM" if has_ppp == {True} else "MBM")
        return "PMBM", sub, has_ppp.pop()
    if isinstance(d0, PPP):
        return "PPP", "PPP", True
    if isinstance(d0, IIDCluster):
        return "IIDCluster", "IIDCluster", False
    raise TypeError(f"densities: expected PPP, IIDCluster, MultiBernoulli or PMBM, got {type(d0).__name__}")


def _ppp_vars(ppps: Sequence[PPP], d: int) -> dict:
    pc, pw = _ragged([p.weights for p in ppps], ())
    _, pm = _ragged([p.gaussians.means for p in ppps], (d,))
    _, pP = _ragged([p.gaussians.covs for p in ppps], (d, d))
    labels = [p.labels if p.labels is not None else np.full(p.weights.shape[0], -1) for p in ppps]
    _, pl = _ragged(labels, (), np.int64)
    bc, br = _ragged([p.rates for p in ppps], ())
    _, bl = _ragged([p.lows for p in ppps], (d,))
    _, bh = _ragged([p.highs for p in ppps], (d,))
    return {
        "ppp_count": (
            ("step",),
            pc,
            {"sample_dimension": "ppp", "long_name": "Gaussian PPP components per step"},
        ),
        "ppp_weight": (("ppp",), pw, {"long_name": "component weight (expected number of objects)"}),
        "ppp_mean": (("ppp", "state"), pm),
        "ppp_cov": (("ppp", "state", "state2"), pP),
        "ppp_label": (("ppp",), pl, {"long_name": "component tag, -1 if none"}),
        "box_count": (("step",), bc, {"sample_dimension": "box", "long_name": "uniform PPP boxes per step"}),
        "box_rate": (("box",), br),
        "box_low": (("box", "state"), bl),
        "box_high": (("box", "state"), bh),
    }


def _bernoulli_pool(density: PMBM) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, list[np.ndarray]]:
    """Deduplicated Bernoullis of all hypotheses and each hypothesis' members."""
    rows, members = [], []
    d = density.dim
    for mb in density.hypotheses:
        if not isinstance(mb.densities, Gaussians):
            raise ValueError("densities: only Gaussian Bernoulli densities can be stored")
        lab = mb.labels if mb.labels is not None else np.full(len(mb), -1)
        rows.append(
            np.concatenate(
                [mb.r[:, None], mb.densities.means, mb.densities.covs.reshape(len(mb), d * d), lab[:, None]],
                axis=1,
            )
        )
    allrows = np.concatenate(rows) if rows else np.empty((0, 2 + d + d * d))
    if allrows.shape[0]:
        pool, inverse = np.unique(allrows, axis=0, return_inverse=True)
        inverse = inverse.ravel()
    else:
        pool, inverse = allrows, np.empty(0, dtype=np.int64)
    start = 0
    for mb in density.hypotheses:
        members.append(inverse[start : start + len(mb)])
        start += len(mb)
    r = pool[:, 0]
    means = pool[:, 1 : 1 + d]
    covs = pool[:, 1 + d : 1 + d + d * d].reshape(-1, d, d)
    labels = pool[:, -1].astype(np.int64)
    return r, means, covs, labels, members


def write_posterior(
    densities: Sequence,
    path: str | os.PathLike,
    attrs: dict | None = None,
    state_names: Sequence[str] | None = None,
    estimates: Sequence | None = None,
) -> None:
    """Write one density per step (all of one family) to a posterior file.

    ``attrs`` (filter name, parameters, scenario, seed, ...) are stored as
    global attributes; dicts are stored as JSON strings. ``estimates`` (one
    object with ``states`` (k, d) and ``labels`` (k,) per step, e.g.
    :class:`nllbench.estimates.Estimates`) are the filter's own point
    estimates; give the rule in ``attrs["estimator"]``.
    """
    import xarray as xr

    family, sub, has_ppp = _family(densities)
    densities = [as_pmbm(d) for d in densities]
    d = densities[0].dim
    if any(x.dim != d for x in densities):
        raise ValueError("densities: expected the same state dimension at every step")
    K = len(densities)
    if family == "PPP":
        data = _ppp_vars(densities, d)
    elif family == "IIDCluster":
        data = _iid_cluster_vars(densities, d)
    else:
        data = _ppp_vars([x.ppp for x in densities], d) if has_ppp else {}
        data.update(_mixture_vars(densities, d))
    if estimates is not None:
        data.update(_estimate_vars(estimates, K, d))
    names = (
        list(state_names)
        if state_names is not None
        else (STATE_NAMES_4D if d == 4 else [f"x{i}" for i in range(d)])
    )
    meta = _posterior_meta(family, sub, has_ppp, attrs)
    ds = xr.Dataset(data, coords={"step": np.arange(K), "state": names}, attrs=_attrs_out(meta))
    _atomic_write(ds, path)


def _posterior_meta(family: str, sub: str, has_ppp: bool, attrs: dict | None) -> dict:
    """A posterior file's global attributes: schema, versions, family, then the caller's ``attrs``."""
    meta = {
        "content": "posterior",
        "nllbench_schema_version": SCHEMA_VERSION,
        "nllbench_version": _version(),
        **_provenance_attrs(),
        "Conventions": "CF-1.8",
        "family": family,
        "subfamily": sub,
        "has_ppp": int(has_ppp),
    }
    for k, v in (attrs or {}).items():
        meta[k] = json.dumps(v, sort_keys=True) if isinstance(v, dict) else v
    return meta


def _iid_cluster_vars(densities: Sequence[IIDCluster], d: int) -> dict:
    """Ragged variables of i.i.d. cluster posteriors: cardinality pmf and spatial mixture per step."""
    cc, card = _ragged([x.cardinality for x in densities], ())
    sc, sw = _ragged([x.weights for x in densities], ())
    _, sm = _ragged([x.gaussians.means for x in densities], (d,))
    _, sP = _ragged([x.gaussians.covs for x in densities], (d, d))
    return {
        "card_count": (
            ("step",),
            cc,
            {"sample_dimension": "card", "long_name": "N + 1 (pmf length)"},
        ),
        "cardinality": (("card",), card, {"long_name": "pmf of the number of objects, n = 0..N"}),
        "spatial_count": (("step",), sc, {"sample_dimension": "spatial"}),
        "spatial_weight": (("spatial",), sw, {"long_name": "spatial mixture weight (sums to 1)"}),
        "spatial_mean": (("spatial", "state"), sm),
        "spatial_cov": (("spatial", "state", "state2"), sP),
    }


def _mixture_vars(densities: Sequence[PMBM], d: int) -> dict:
    """Ragged variables of multi-Bernoulli mixtures: each step's pool of distinct Bernoullis and its
    global hypotheses as weights and member lists (indices into that pool)."""
    pools = [_bernoulli_pool(x) for x in densities]
    bc, br = _ragged([p[0] for p in pools], ())
    _, bm = _ragged([p[1] for p in pools], (d,))
    _, bP = _ragged([p[2] for p in pools], (d, d))
    _, bl = _ragged([p[3] for p in pools], (), np.int64)
    hc, hw = _ragged([x.weights for x in densities], ())
    sizes = [np.array([m.size for m in p[4]], dtype=np.int64) for p in pools]
    _, hs = _ragged(sizes, (), np.int64)
    members = [np.concatenate(p[4]) if p[4] else np.empty(0, dtype=np.int64) for p in pools]
    _, hm = _ragged(members, (), np.int64)
    return {
        "bern_count": (
            ("step",),
            bc,
            {"sample_dimension": "bern", "long_name": "Bernoullis per step"},
        ),
        "bern_r": (("bern",), br, {"long_name": "existence probability"}),
        "bern_mean": (("bern", "state"), bm),
        "bern_cov": (("bern", "state", "state2"), bP),
        "bern_label": (("bern",), bl, {"long_name": "track label, -1 if none"}),
        "hyp_count": (
            ("step",),
            hc,
            {"sample_dimension": "hyp", "long_name": "global hypotheses per step"},
        ),
        "hyp_weight": (("hyp",), hw),
        "hyp_size": (
            ("hyp",),
            hs,
            {"sample_dimension": "member", "long_name": "Bernoullis per hypothesis"},
        ),
        "hyp_member": (("member",), hm, {"long_name": "index into the step's Bernoullis"}),
    }


def _estimate_vars(estimates: Sequence, K: int, d: int) -> dict:
    if len(estimates) != K:
        raise ValueError(f"estimates: expected {K} steps like the densities, got {len(estimates)}")
    ec, es = _ragged([np.asarray(e.states, dtype=float).reshape(-1, d) for e in estimates], (d,))
    _, el = _ragged([np.asarray(e.labels, dtype=np.int64) for e in estimates], (), np.int64)
    if el.shape[0] != es.shape[0]:
        raise ValueError("estimates: expected one label per estimated state")
    return {
        "estimate_count": (
            ("step",),
            ec,
            {"sample_dimension": "estimate", "long_name": "point estimates per step (filter's own)"},
        ),
        "estimate_state": (("estimate", "state"), es),
        "estimate_label": (("estimate",), el, {"long_name": "track label, -1 if none"}),
    }


def _read_estimates(ds, path, K: int, d: int) -> list[tuple[np.ndarray, np.ndarray]] | None:
    if "estimate_count" not in ds.variables:
        return None
    states = _get_ragged(ds, path, "estimate_count", "estimate_state", K, 2)
    labels = _get_ragged(ds, path, "estimate_count", "estimate_label", K, 1, integer=True)
    return [(x.reshape(-1, d), lab.astype(np.int64)) for x, lab in zip(states, labels, strict=True)]


def _read_ppps(ds, path, K: int) -> list[PPP]:
    w = _get_ragged(ds, path, "ppp_count", "ppp_weight", K, 1)
    m = _get_ragged(ds, path, "ppp_count", "ppp_mean", K, 2)
    P = _get_ragged(ds, path, "ppp_count", "ppp_cov", K, 3)
    lab = _get_ragged(ds, path, "ppp_count", "ppp_label", K, 1, integer=True)
    br = _get_ragged(ds, path, "box_count", "box_rate", K, 1)
    bl = _get_ragged(ds, path, "box_count", "box_low", K, 2)
    bh = _get_ragged(ds, path, "box_count", "box_high", K, 2)
    d = int(ds.sizes["state"])
    out = []
    for k in range(K):
        labels = lab[k].astype(np.int64)
        try:
            out.append(
                PPP(
                    w[k],
                    Gaussians(m[k].reshape(-1, d), P[k].reshape(-1, d, d)),
                    br[k],
                    bl[k].reshape(-1, d),
                    bh[k].reshape(-1, d),
                    labels=None if np.all(labels == -1) and labels.size else labels,
                )
            )
        except (ValueError, TypeError) as exc:
            raise SchemaError(f"{path}: PPP at step {k}: {exc}") from None
    return out


def read_posterior(path: str | os.PathLike) -> Posterior:
    """Read and validate a posterior file: one density per step, ready for ``nb.nll``."""
    ds = _open(path, "posterior")
    K = int(ds.sizes.get("step", 0))
    family = ds.attrs.get("family")
    attrs = {k: _jsonable(v) for k, v in ds.attrs.items()}
    if "state" not in ds.sizes:
        raise SchemaError(f"{path}: dimension 'state' is missing")
    d = int(ds.sizes["state"])
    estimates = _read_estimates(ds, path, K, d)
    if family == "PPP":
        return Posterior(_read_ppps(ds, path, K), attrs, estimates)
    if family == "IIDCluster":
        card = _get_ragged(ds, path, "card_count", "cardinality", K, 1)
        sw = _get_ragged(ds, path, "spatial_count", "spatial_weight", K, 1)
        sm = _get_ragged(ds, path, "spatial_count", "spatial_mean", K, 2)
        sP = _get_ragged(ds, path, "spatial_count", "spatial_cov", K, 3)
        out = []
        for k in range(K):
            try:
                out.append(
                    IIDCluster(
                        card[k], sw[k], gaussians=Gaussians(sm[k].reshape(-1, d), sP[k].reshape(-1, d, d))
                    )
                )
            except (ValueError, TypeError) as exc:
                raise SchemaError(f"{path}: variable 'cardinality'/'spatial_*' at step {k}: {exc}") from None
        return Posterior(out, attrs, estimates)
    if family == "PMBM":
        has_ppp = ds.attrs.get("has_ppp")
        if has_ppp not in (0, 1):
            raise SchemaError(f"{path}: attribute 'has_ppp': expected 0 or 1, got {has_ppp!r}")
        ppps = _read_ppps(ds, path, K) if int(has_ppp) else [None] * K
        br = _get_ragged(ds, path, "bern_count", "bern_r", K, 1)
        bm = _get_ragged(ds, path, "bern_count", "bern_mean", K, 2)
        bP = _get_ragged(ds, path, "bern_count", "bern_cov", K, 3)
        bl = _get_ragged(ds, path, "bern_count", "bern_label", K, 1, integer=True)
        hw = _get_ragged(ds, path, "hyp_count", "hyp_weight", K, 1)
        hs = _get_ragged(ds, path, "hyp_count", "hyp_size", K, 1)
        hm_all = _get(ds, path, "hyp_member", 1)
        sizes_all = np.concatenate(hs) if hs else np.empty(0, dtype=np.int64)
        for name, arr in (("hyp_member", hm_all), ("hyp_size", sizes_all)):
            if arr.size and (arr.dtype.kind not in "iu" or arr.min() < 0):
                raise SchemaError(f"{path}: variable {name!r}: expected non-negative integers")
        if int(np.sum(sizes_all)) != hm_all.shape[0]:
            raise SchemaError(
                f"{path}: variable 'hyp_member': expected {int(np.sum(sizes_all))} rows (sum of hyp_size), "
                f"got {hm_all.shape[0]}"
            )
        members = _split(sizes_all.astype(np.int64), hm_all)
        out = []
        h0 = 0
        for k in range(K):
            H = hw[k].shape[0]
            hyps = []
            try:
                # validated once per step; hypotheses are trusted subsets of it
                pool = MultiBernoulli(br[k], Gaussians(bm[k].reshape(-1, d), bP[k].reshape(-1, d, d)))
                labels = bl[k].astype(np.int64)
                for h in range(H):
                    idx = members[h0 + h].astype(np.int64)
                    if idx.size and (idx.min() < 0 or idx.max() >= br[k].shape[0]):
                        raise SchemaError(
                            f"{path}: variable 'hyp_member' at step {k}: index out of range "
                            f"0..{br[k].shape[0] - 1}"
                        )
                    lab = labels[idx]
                    hyps.append(pool.subset(idx, None if np.all(lab == -1) and lab.size else lab))
                out.append(PMBM(ppps[k], tuple(hyps), hw[k]))
            except SchemaError:
                raise
            except (ValueError, TypeError) as exc:
                raise SchemaError(f"{path}: PMBM at step {k}: {exc}") from None
            h0 += H
        return Posterior(out, attrs, estimates)
    raise SchemaError(f"{path}: attribute 'family': expected PPP, IIDCluster or PMBM, got {family!r}")


# ---------------------------------------------------------------------------
# evaluation results
# ---------------------------------------------------------------------------

#: Per-step trajectory-GOSPA decomposition and calibration counts of a metrics file
#: (part of :data:`METRIC_STEP_VARIABLES`; run-level ones in :func:`_measure_variables`).
MEASURE_STEP_VARIABLES = (
    "tgospa_localization",
    "tgospa_missed",
    "tgospa_false",
    "tgospa_switches",
    "calibration_bernoullis",
    "calibration_explained",
    "calibration_r_sum",
    "calibration_brier_sum",
    "calibration_unassociated",
    "nees_pairs",
    "nees_sum",
    "nees_inside95",
    "cardinality_mean",
    "cardinality_low90",
    "cardinality_high90",
    "cardinality_covered90",
    "cardinality_log_score",
)

#: Per-step variables of a metrics file (dimension ``step``).
METRIC_STEP_VARIABLES = (
    "gospa",
    "gospa_localization",
    "gospa_missed",
    "gospa_false",
    "ospa",
    "n_truth",
    "n_estimates",
    "clear_matches",
    "clear_misses",
    "clear_false_positives",
    "clear_switches",
    "clear_distance_sum",
    *MEASURE_STEP_VARIABLES,
    "theorem1_lhs",
    "theorem1_rhs",
    "theorem1_difference",
    "theorem1_excluded",
)


def write_metrics(metrics, path: str | os.PathLike, attrs: dict | None = None) -> None:
    """Write a :class:`nllbench.evaluate.RunMetrics` to a metrics file.

    Layout: ``nll_<term>(step, q)`` for value, lower, upper and the
    decomposition, ``nll_exact(step, q)`` (0/1), per-step measures over
    ``step`` (:data:`METRIC_STEP_VARIABLES`), and run-level scalars (``mota``,
    ``motp``, ``idf1``, ...; ``nll_mean(q)``, ``nll_infinite_steps(q)``).
    +inf NLL values are stored as +inf (an impossible truth), never dropped.
    """
    import xarray as xr

    data = {}
    for term, arr in metrics.nll.items():
        data[f"nll_{term}"] = (("step", "q"), arr)
    data["nll_exact"] = (("step", "q"), metrics.nll_exact.astype(np.int8))
    c = metrics.clear
    per_step = {
        "gospa": metrics.gospa,
        "gospa_localization": metrics.gospa_localization,
        "gospa_missed": metrics.gospa_missed,
        "gospa_false": metrics.gospa_false,
        "ospa": metrics.ospa,
        "n_truth": metrics.n_truth,
        "n_estimates": metrics.n_estimates,
        "clear_matches": c.frame_matches,
        "clear_misses": c.frame_misses,
        "clear_false_positives": c.frame_false_positives,
        "clear_switches": c.frame_switches,
        "clear_distance_sum": c.frame_distance_sum,
        "theorem1_lhs": metrics.theorem1_lhs,
        "theorem1_rhs": metrics.theorem1_rhs,
        "theorem1_difference": metrics.theorem1_difference,
        "theorem1_excluded": metrics.theorem1_excluded,
    }
    for name, arr in per_step.items():
        data[name] = (("step",), np.asarray(arr))
    if metrics.nll_exact_value is not None:
        data["nll_exact_value"] = (("step",), metrics.nll_exact_value)
        data["nll_exact_available"] = (("step",), metrics.nll_exact_available.astype(np.int8))
    summary = metrics.summary()
    values = metrics.nll["value"]
    data["nll_mean"] = (("q",), np.array([summary[f"nll_q{q}"] for q in metrics.qs]))
    data["nll_finite_mean"] = (("q",), np.array([summary[f"nll_finite_mean_q{q}"] for q in metrics.qs]))
    data["nll_infinite_steps"] = (("q",), (~np.isfinite(values)).sum(axis=0).astype(np.int64))
    for name in ("mota", "motp", "idf1", "gospa_mean", "ospa_mean", "theorem1_max_abs_difference"):
        key = {"gospa_mean": "gospa", "ospa_mean": "ospa"}.get(name, name)
        data[name] = ((), float(summary[key]))
    for name in ("switches", "matches", "misses", "false_positives", "num_objects"):
        data[f"clear_total_{name}"] = ((), int(getattr(c, name)))
    ident = metrics.identity
    for name in ("idp", "idr"):
        data[name] = ((), float(getattr(ident, name)))
    for name in ("idtp", "idfp", "idfn"):
        data[name] = ((), int(getattr(ident, name)))
    data.update(_measure_variables(metrics))
    s = metrics.settings
    meta = {
        "content": "metrics",
        "nllbench_schema_version": SCHEMA_VERSION,
        "nllbench_version": _version(),
        **_provenance_attrs(),
        "Conventions": "CF-1.8",
        "evaluation_settings": json.dumps(
            {k: (list(v) if isinstance(v, tuple) else v) for k, v in s.__dict__.items()}, sort_keys=True
        ),
        "nll_marginal": s.marginal,
    }
    for k, v in (attrs or {}).items():
        meta.setdefault(k, json.dumps(v, sort_keys=True) if isinstance(v, dict) else v)
    ds = xr.Dataset(
        data,
        coords={"step": np.arange(metrics.steps), "q": np.array(metrics.qs, dtype=np.int64)},
        attrs=_attrs_out(meta),
    )
    _atomic_write(ds, path)


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
    from nllbench.calibration import PIT_BINS, RELIABILITY_BINS

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


def read_calibration_counts(ds):
    """The pooled :class:`~nllbench.calibration.CalibrationCounts` of a metrics dataset (add over runs)."""
    from nllbench.calibration import CalibrationCounts

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


def read_metrics(path: str | os.PathLike):
    """Read a metrics file as an ``xarray.Dataset`` (validated: content, version, variables, no NaN)."""
    ds = _open(path, "metrics")
    required = (
        "nll_value",
        "nll_lower",
        "nll_upper",
        "nll_exact",
        "nll_mean",
        "nll_finite_mean",
        "nll_infinite_steps",
        *(f"nll_{t}" for t in ("localization", "false", "missed", "cardinality", "mixture", "association")),
        *METRIC_STEP_VARIABLES,
        "mota",
        "motp",
        "idf1",
        "gospa_mean",
        "ospa_mean",
        "theorem1_max_abs_difference",
        "clear_total_switches",
    )
    for name in required:
        if name not in ds.variables:
            raise SchemaError(f"{path}: variable {name!r} is missing")
        values = np.asarray(ds[name].values)
        if values.dtype.kind == "f" and np.isnan(values).any():
            raise SchemaError(f"{path}: variable {name!r}: NaN found (values are numbers or +-inf)")
    if "evaluation_settings" not in ds.attrs:
        raise SchemaError(f"{path}: attribute 'evaluation_settings' is missing")
    return ds


def write_summary_csv(rows: dict | Sequence[dict], path: str | os.PathLike) -> None:
    """Write summary rows (header + one line per dict) to a CSV file, atomically."""
    import csv

    rows = [rows] if isinstance(rows, dict) else list(rows)
    path = Path(path)
    with committed_together(Output(path, "")) as (tmp,), open(tmp, "w", newline="") as fh:
        fields = list(rows[0]) if rows else []
        writer = csv.DictWriter(fh, fieldnames=fields)
        writer.writeheader()
        for row in rows:
            writer.writerow({k: _jsonable(v) for k, v in row.items()})
