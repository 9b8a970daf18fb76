"""Trajectory posterior files (``content = "trajectory_posterior"``): one density over sets of trajectories.

The file holds the trajectory PMBM posterior of the last step
(:class:`nllbench.engine.trajectory_density.TrajectoryPMBM`): it is the
density of the whole set of trajectories of the run, so no per-step copy is
needed. Its size grows linearly in the steps (one node per alive branch and
step). Only the nodes that a Bernoulli or an undetected component reaches
(through its parents) are written, re-indexed in order. Layout in
``docs/trajectory_filters.md`` ("The file").

Dimensions: ``node``, ``bern``, ``track``, ``hyp``, ``ppp``, ``state``, ``state2``.
Attributes: ``time``, ``updated`` (0/1), ``p_survival``, ``p_detection``, plus the caller's.
"""

from __future__ import annotations

import json
import os

import numpy as np

from nllbench.engine.trajectory_density import TrajectoryPMBM
from nllbench.store._netcdf import (
    STATE_NAMES_4D,
    Declared,
    SchemaError,
    attrs_out,
    check_declared,
    get,
    header,
    jsonable,
    load,
    write_dataset,
)

CONTENT = "trajectory_posterior"

#: Every variable of a trajectory posterior file: dimensions in order and kind of values.
TRAJECTORY_POSTERIOR_VARIABLES: dict[str, Declared] = {
    "state": Declared(("state",), "text"),
    "F": Declared(("state", "state2"), "float"),
    "Q": Declared(("state", "state2"), "float"),
    "node_time": Declared(("node",), "integer"),
    "node_parent": Declared(("node",), "integer"),
    "node_mean": Declared(("node", "state"), "float"),
    "node_cov": Declared(("node", "state", "state2"), "float"),
    "bern_start": Declared(("bern",), "integer"),
    "bern_r_last": Declared(("bern",), "float"),
    "bern_t_last": Declared(("bern",), "integer"),
    "bern_cut": Declared(("bern",), "integer"),
    "bern_node": Declared(("bern",), "integer"),
    "bern_track": Declared(("bern",), "integer"),
    "track_label": Declared(("track",), "integer"),
    "hyp_log_weight": Declared(("hyp",), "float"),
    "hyp_assoc": Declared(("hyp", "track"), "integer"),
    "ppp_start": Declared(("ppp",), "integer"),
    "ppp_weight": Declared(("ppp",), "float"),
    "ppp_node": Declared(("ppp",), "integer"),
    "ppp_cut": Declared(("ppp",), "integer"),
}


def reachable_nodes(parent: np.ndarray, referenced: np.ndarray) -> np.ndarray:
    """Sorted indices of the nodes ``referenced`` and all their ancestors (``parent`` -1: a root)."""
    keep = np.zeros(parent.shape[0], dtype=bool)
    frontier = np.unique(referenced)
    while frontier.size:
        frontier = frontier[~keep[frontier]]
        keep[frontier] = True
        frontier = np.unique(parent[frontier])
        frontier = frontier[frontier >= 0]
    return np.flatnonzero(keep)


def _compacted(density: TrajectoryPMBM) -> TrajectoryPMBM:
    """The same density with only the reachable nodes, re-indexed."""
    keep = reachable_nodes(density.node_parent, np.concatenate([density.node, density.ppp_node]))
    remap = np.full(density.node_parent.shape[0] + 1, -1)
    remap[keep] = np.arange(keep.size)
    fields = {k: getattr(density, k) for k in density.__dataclass_fields__}
    fields.update(
        node_time=density.node_time[keep],
        node_parent=remap[density.node_parent[keep]],
        node_mean=density.node_mean[keep],
        node_cov=density.node_cov[keep],
        node=remap[density.node],
        ppp_node=remap[density.ppp_node],
    )
    return TrajectoryPMBM(**fields)


def write_trajectory_posterior(density: TrajectoryPMBM, path: str | os.PathLike, attrs: dict | None = None):
    """Write ``density`` (only its reachable nodes) with the caller's ``attrs`` (dicts as JSON)."""
    import xarray as xr

    c = _compacted(density)
    d = c.F.shape[0]
    data = {
        "F": (("state", "state2"), c.F),
        "Q": (("state", "state2"), c.Q),
        "node_time": (("node",), c.node_time.astype(np.int64)),
        "node_parent": (("node",), c.node_parent.astype(np.int64)),
        "node_mean": (("node", "state"), c.node_mean),
        "node_cov": (("node", "state", "state2"), c.node_cov),
        "bern_start": (("bern",), c.start.astype(np.int64)),
        "bern_r_last": (("bern",), c.r_last.astype(float)),
        "bern_t_last": (("bern",), c.t_last.astype(np.int64)),
        "bern_cut": (("bern",), c.cut.astype(np.int64)),
        "bern_node": (("bern",), c.node.astype(np.int64)),
        "bern_track": (("bern",), c.track.astype(np.int64)),
        "track_label": (("track",), c.track_labels.astype(np.int64)),
        "hyp_log_weight": (("hyp",), c.log_weights.astype(float)),
        "hyp_assoc": (("hyp", "track"), c.assoc.astype(np.int64)),
        "ppp_start": (("ppp",), c.ppp_start.astype(np.int64)),
        "ppp_weight": (("ppp",), c.ppp_weight.astype(float)),
        "ppp_node": (("ppp",), c.ppp_node.astype(np.int64)),
        "ppp_cut": (("ppp",), c.ppp_cut.astype(np.int64)),
    }
    meta = {
        **header(CONTENT),
        "time": int(c.time),
        "updated": int(c.updated),
        "p_survival": float(c.p_survival),
        "p_detection": float(c.p_detection),
    }
    for k, v in (attrs or {}).items():
        meta[k] = json.dumps(v, sort_keys=True) if isinstance(v, dict) else v
    names = STATE_NAMES_4D if d == 4 else [f"x{i}" for i in range(d)]
    ds = xr.Dataset(data, coords={"state": names}, attrs=attrs_out(meta))
    write_dataset(ds, path)


def read_trajectory_posterior(path: str | os.PathLike) -> tuple[TrajectoryPMBM, dict]:
    """Read and validate a trajectory posterior file: (density, attributes)."""
    ds = load(path, CONTENT)
    check_declared(ds, path, TRAJECTORY_POSTERIOR_VARIABLES)
    attrs = {k: jsonable(v) for k, v in ds.attrs.items()}
    for name in ("time", "updated", "p_survival", "p_detection"):
        if name not in attrs:
            raise SchemaError(f"{path}: attribute {name!r} is missing")
    values = {name: get(ds, path, name) for name in TRAJECTORY_POSTERIOR_VARIABLES if name != "state"}
    try:
        density = TrajectoryPMBM(
            int(attrs["time"]),
            bool(int(attrs["updated"])),
            values["F"],
            values["Q"],
            float(attrs["p_survival"]),
            float(attrs["p_detection"]),
            values["node_time"].astype(np.int64),
            values["node_parent"].astype(np.int64),
            values["node_mean"],
            values["node_cov"],
            values["bern_start"].astype(np.int64),
            values["bern_r_last"],
            values["bern_t_last"].astype(np.int64),
            values["bern_cut"].astype(np.int64),
            values["bern_node"].astype(np.int64),
            values["bern_track"].astype(np.int64),
            values["track_label"].astype(np.int64),
            values["hyp_assoc"].astype(np.int64),
            values["hyp_log_weight"],
            values["ppp_start"].astype(np.int64),
            values["ppp_weight"],
            values["ppp_node"].astype(np.int64),
            values["ppp_cut"].astype(np.int64),
        )
    except (ValueError, TypeError) as exc:
        raise SchemaError(f"{path}: trajectory posterior: {exc}") from None
    return density, attrs
