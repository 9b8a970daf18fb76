"""Scenario files: truth, measurements and the model that generated them (``content = "scenario"``).

Also the truth alone as CSV (:func:`write_truth_csv`), as ``nllbench simulate --truth`` reads it.

Layout in ``docs/store.md``: ``truth_count(step) -> truth_state, truth_id``;
``meas_count(step) -> measurement, meas_origin`` (-1 = clutter); the model's
matrices and birth / initial mixtures; the scenario's parameters as attributes.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

import numpy as np

from nllbench.simulation.models import GaussianMixture, Model
from nllbench.simulation.scenarios import TRUTH_KEY_COLUMNS
from nllbench.store._netcdf import (
    STATE_NAMES_4D,
    Declared,
    SchemaError,
    attrs_out,
    check_declared,
    get,
    get_ragged,
    header,
    jsonable,
    load,
    ragged,
    write_dataset,
)
from nllbench.store.provenance import truth_digest
from nllbench.store.tables import write_rows_csv

#: Every variable of a scenario file: its dimensions, in order, and kind of values, checked on
#: reading before any value is used (:func:`~nllbench.store._netcdf.check_declared`; docs/store.md).
SCENARIO_VARIABLES: dict[str, Declared] = {
    "step": Declared(("step",), "integer"),
    "state": Declared(("state",), "text"),
    "obs": Declared(("obs",), "text"),
    "truth_count": Declared(("step",), "integer"),
    "truth_state": Declared(("truth", "state"), "float"),
    "truth_id": Declared(("truth",), "integer"),
    "meas_count": Declared(("step",), "integer"),
    "measurement": Declared(("meas", "obs"), "float"),
    "meas_origin": Declared(("meas",), "integer"),
    "F": Declared(("state", "state2"), "float"),
    "Q": Declared(("state", "state2"), "float"),
    "H": Declared(("obs", "state"), "float"),
    "R": Declared(("obs", "obs2"), "float"),
    "birth_weight": Declared(("birth",), "float"),
    "birth_r": Declared(("birth",), "float"),
    "birth_mean": Declared(("birth", "state"), "float"),
    "birth_cov": Declared(("birth", "state", "state2"), "float"),
    "initial_weight": Declared(("initial",), "float"),
    "initial_r": Declared(("initial",), "float"),
    "initial_mean": Declared(("initial", "state"), "float"),
    "initial_cov": Declared(("initial", "state", "state2"), "float"),
}


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


def scenario_identity(data: ScenarioData) -> dict:
    """The identifying attributes of a scenario file (:data:`SCENARIO_IDENTITY`), for a posterior's attrs.

    A tracker that writes its posterior with these attributes lets
    ``nllbench evaluate`` check that it is scored against its own scenario.
    """
    out = {k: data.attrs[k] for k in SCENARIO_IDENTITY if k in data.attrs}
    out["truth_sha256"] = truth_digest(data.truth, data.truth_ids)
    return out


def _same(a, b) -> bool:
    if isinstance(a, str) or isinstance(b, str):
        return str(a) == str(b)
    a, b = np.atleast_1d(np.asarray(a)), np.atleast_1d(np.asarray(b))
    return a.shape == b.shape and bool(np.all(a == b))


def scenario_mismatches(posterior_attrs: dict, data: ScenarioData) -> dict[str, tuple]:
    """Identifying attributes on which a posterior and a scenario disagree: key -> (posterior, scenario).

    Compares every attribute of :data:`nllbench.store.SCENARIO_IDENTITY` that the
    posterior records (preset, seeds, model parameters, field of view) with
    the scenario file's, and the posterior's ``truth_sha256`` with the digest
    of the scenario's truth as read (so an edited truth is caught too).
    """
    expected = scenario_identity(data)
    plain = lambda v: v if isinstance(v, str) else np.asarray(v).tolist()  # noqa: E731 - for messages
    return {
        k: (plain(posterior_attrs[k]), plain(v))
        for k, v in expected.items()
        if k in posterior_attrs and not _same(posterior_attrs[k], v)
    }


def run_seed(attrs: dict) -> int:
    """The run's seed recorded in a posterior or scenario file's attributes (0 when there is none).

    It seeds the samples of the run's energy score (:func:`nllbench.measures.run.evaluate.evaluate_runs`).
    """
    seed = attrs.get("seed")
    return int(seed) if seed is not None and int(seed) >= 0 else 0


def write_scenario(sim, path: str | os.PathLike, config: dict | None = None) -> None:
    """Write a :class:`nllbench.simulation.scenarios.Simulation` (truth, measurements, model) to NetCDF.

    ``config`` (e.g. the workflow's configuration slice) is stored as a JSON attribute.
    """
    import xarray as xr

    K = len(sim.truth)
    tc, tx = ragged(sim.truth, (4,))
    _, tid = ragged(sim.truth_ids, (), np.int64)
    mc, mz = ragged(sim.measurements, (2,))
    _, mo = ragged(sim.origins, (), np.int64)
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
        attrs=attrs_out(
            {
                **header("scenario"),
                "seed": sim.seed,
                **sim.scenario.parameters(),
                "truth_sha256": truth_digest(sim.truth, sim.truth_ids),
                **({"config": json.dumps(config, sort_keys=True)} if config is not None else {}),
            }
        ),
    )
    write_dataset(ds, path)


def read_scenario(path: str | os.PathLike) -> ScenarioData:
    """Read and validate a scenario file."""
    ds = load(path, "scenario")
    check_declared(ds, path, SCENARIO_VARIABLES)
    K = int(ds.sizes.get("step", 0))
    truth = get_ragged(ds, path, "truth_count", "truth_state", K, 2)
    ids = get_ragged(ds, path, "truth_count", "truth_id", K, 1, integer=True)
    meas = get_ragged(ds, path, "meas_count", "measurement", K, 2)
    origins = get_ragged(ds, path, "meas_count", "meas_origin", K, 1, integer=True)
    model = None
    if "F" in ds.variables:
        try:
            model = Model(
                F=get(ds, path, "F", 2),
                Q=get(ds, path, "Q", 2),
                H=get(ds, path, "H", 2),
                R=get(ds, path, "R", 2),
                p_survival=float(ds.attrs["p_survival"]),
                p_detection=float(ds.attrs["p_detection"]),
                clutter_rate=float(ds.attrs["clutter_rate"]),
                fov_low=np.atleast_1d(ds.attrs["fov_low"]),
                fov_high=np.atleast_1d(ds.attrs["fov_high"]),
                birth=GaussianMixture(
                    get(ds, path, "birth_weight", 1),
                    get(ds, path, "birth_mean", 2),
                    get(ds, path, "birth_cov", 3),
                ),
                birth_r=get(ds, path, "birth_r", 1),
                initial=GaussianMixture(
                    get(ds, path, "initial_weight", 1),
                    get(ds, path, "initial_mean", 2),
                    get(ds, path, "initial_cov", 3),
                ),
                initial_r=get(ds, path, "initial_r", 1) if "initial_r" in ds.variables else None,
            )
        except KeyError as exc:
            raise SchemaError(f"{path}: attribute {exc.args[0]!r} is missing") from None
        except (ValueError, TypeError) as exc:
            raise SchemaError(f"{path}: model: {exc}") from None
    attrs = {k: jsonable(v) for k, v in ds.attrs.items()}
    return ScenarioData(
        truth, [i.astype(np.int64) for i in ids], meas, [o.astype(np.int64) for o in origins], model, attrs
    )


def write_truth_csv(path, truth: list[np.ndarray], truth_ids: list[np.ndarray]) -> None:
    """Write per-step truth as the CSV :func:`nllbench.simulation.scenarios.read_truth_csv` reads.

    Steps from 1, full precision; written atomically (:func:`nllbench.store.tables.write_rows_csv`).
    """
    rows = [
        [k + 1, int(i), *(repr(float(v)) for v in x)]
        for k, (X, ids) in enumerate(zip(truth, truth_ids, strict=True))
        for x, i in zip(X, ids, strict=True)
    ]
    write_rows_csv([*TRUTH_KEY_COLUMNS, "x", "y", "vx", "vy"], rows, path)
