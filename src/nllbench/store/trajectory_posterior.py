"""Trajectory posterior files (``content = "trajectory_posterior"``): one density over sets of trajectories.

The file holds the trajectory PMBM posterior of the last step
(:class:`nllbench.engine.trajectory_density.TrajectoryPMBM`): it is the
density of the whole set of trajectories of the run, so no per-step copy is
needed. Its size grows linearly in the steps (one node per alive branch and
step). Only the nodes that a Bernoulli or an undetected component reaches
(through its parents) are written, re-indexed in order. Layout in
``docs/trajectory_filters.md`` ("The file").

Dimensions: ``node``, ``bern``, ``track``, ``hyp``, ``ppp``, ``state``, ``state2``, and ``seg``
(with ``bern_prefix``, only when the density has ended-prefix segments: the trajectory PMB).
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

#: Variables written only when the density has ended-prefix segments (the trajectory PMB filter's
#: posterior); a file without them is read with every ``prefix`` -1.
TRAJECTORY_SEGMENT_VARIABLES: dict[str, Declared] = {
    "bern_prefix": Declared(("bern",), "integer"),
    "seg_t0": Declared(("seg",), "integer"),
    "seg_t1": Declared(("seg",), "integer"),
    "seg_parent": Declared(("seg",), "integer"),
    "seg_beta": Declared(("seg",), "float"),
    "seg_ended": Declared(("seg",), "float"),
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
    """The same density with only the reachable nodes and prefix segments, re-indexed."""
    keep = reachable_nodes(density.node_parent, np.concatenate([density.node, density.ppp_node]))
    remap = np.full(density.node_parent.shape[0] + 1, -1)
    remap[keep] = np.arange(keep.size)
    fields = {k: getattr(density, k) for k in density.__dataclass_fields__}
    segs = reachable_nodes(density.seg_parent, density.prefix[density.prefix >= 0])
    seg_remap = np.full(density.seg_parent.shape[0] + 1, -1)
    seg_remap[segs] = np.arange(segs.size)
    fields.update(
        prefix=seg_remap[density.prefix],
        seg_t0=density.seg_t0[segs],
        seg_t1=density.seg_t1[segs],
        seg_parent=seg_remap[density.seg_parent[segs]],
        seg_beta=density.seg_beta[segs],
        seg_ended=density.seg_ended[segs],
    )
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
    if c.seg_t0.size:
        data.update(
            bern_prefix=(("bern",), c.prefix.astype(np.int64)),
            seg_t0=(("seg",), c.seg_t0.astype(np.int64)),
            seg_t1=(("seg",), c.seg_t1.astype(np.int64)),
            seg_parent=(("seg",), c.seg_parent.astype(np.int64)),
            seg_beta=(("seg",), c.seg_beta.astype(float)),
            seg_ended=(("seg",), c.seg_ended.astype(float)),
        )
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
    check_declared(ds, path, {**TRAJECTORY_POSTERIOR_VARIABLES, **TRAJECTORY_SEGMENT_VARIABLES})
    attrs = {k: jsonable(v) for k, v in ds.attrs.items()}
    for name in ("time", "updated", "p_survival", "p_detection"):
        if name not in attrs:
            raise SchemaError(f"{path}: attribute {name!r} is missing")
    values = {name: get(ds, path, name) for name in TRAJECTORY_POSTERIOR_VARIABLES if name != "state"}
    present = [name for name in TRAJECTORY_SEGMENT_VARIABLES if name in ds.variables]
    if present and len(present) != len(TRAJECTORY_SEGMENT_VARIABLES):
        missing = sorted(set(TRAJECTORY_SEGMENT_VARIABLES) - set(present))
        raise SchemaError(f"{path}: variables {missing} are missing (the prefix segments come together)")
    segments = {}
    if present:
        seg = {name: get(ds, path, name) for name in TRAJECTORY_SEGMENT_VARIABLES}
        segments = dict(
            prefix=seg["bern_prefix"].astype(np.int64),
            seg_t0=seg["seg_t0"].astype(np.int64),
            seg_t1=seg["seg_t1"].astype(np.int64),
            seg_parent=seg["seg_parent"].astype(np.int64),
            seg_beta=seg["seg_beta"],
            seg_ended=seg["seg_ended"],
        )
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
            **segments,
        )
    except (ValueError, TypeError) as exc:
        raise SchemaError(f"{path}: trajectory posterior: {exc}") from None
    return density, attrs
