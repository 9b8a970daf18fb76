"""Posterior files: one multi-object density per time step (``content = "posterior"``).

Attribute ``family`` is ``PPP`` (PHD), ``IIDCluster`` (CPHD) or ``PMBM``
(with ``subfamily`` PMBM, PMB, MBM, MBM01 or MB, and ``has_ppp`` 0/1). Each
step's Bernoullis are a pool shared by its global hypotheses, which list
their members as indices into it. Layout in ``docs/store.md``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np

from nllbench.engine.densities import (
    PMBM,
    PPP,
    GaussianMixtures,
    Gaussians,
    IIDCluster,
    MultiBernoulli,
    as_pmbm,
)
from nllbench.store._netcdf import (
    POSTERIOR_MIXTURE_VERSION,
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
    pool_covariances,
    ragged,
    unpool_covariances,
    with_pooled,
    write_dataset,
)

#: Every variable of a posterior file (all schema versions): its dimensions, in order, and kind of
#: values, checked on reading before any value is used (:func:`~nllbench.store._netcdf.check_declared`;
#: docs/store.md). Covariances are also declared in their pooled form (:func:`with_pooled`). Which of
#: them a file must hold depends on its family; the readers name a missing one.
POSTERIOR_VARIABLES: dict[str, Declared] = with_pooled(
    {
        "step": Declared(("step",), "integer"),
        "state": Declared(("state",), "text"),
        "ppp_count": Declared(("step",), "integer"),
        "ppp_weight": Declared(("ppp",), "float"),
        "ppp_mean": Declared(("ppp", "state"), "float"),
        "ppp_cov": Declared(("ppp", "state", "state2"), "float"),
        "ppp_label": Declared(("ppp",), "integer"),
        "box_count": Declared(("step",), "integer"),
        "box_rate": Declared(("box",), "float"),
        "box_low": Declared(("box", "state"), "float"),
        "box_high": Declared(("box", "state"), "float"),
        "card_count": Declared(("step",), "integer"),
        "cardinality": Declared(("card",), "float"),
        "spatial_count": Declared(("step",), "integer"),
        "spatial_weight": Declared(("spatial",), "float"),
        "spatial_mean": Declared(("spatial", "state"), "float"),
        "spatial_cov": Declared(("spatial", "state", "state2"), "float"),
        "bern_count": Declared(("step",), "integer"),
        "bern_r": Declared(("bern",), "float"),
        "bern_mean": Declared(("bern", "state"), "float"),
        "bern_cov": Declared(("bern", "state", "state2"), "float"),
        "bern_label": Declared(("bern",), "integer"),
        "bern_components": Declared(("bern",), "integer"),
        "component_weight": Declared(("component",), "float"),
        "component_mean": Declared(("component", "state"), "float"),
        "component_cov": Declared(("component", "state", "state2"), "float"),
        "hyp_count": Declared(("step",), "integer"),
        "hyp_weight": Declared(("hyp",), "float"),
        "hyp_size": Declared(("hyp",), "integer"),
        "hyp_member": Declared(("member",), "integer"),
        "estimate_count": Declared(("step",), "integer"),
        "estimate_state": Declared(("estimate", "state"), "float"),
        "estimate_label": Declared(("estimate",), "integer"),
    }
)


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
    pc, pw = ragged([p.weights for p in ppps], ())
    _, pm = ragged([p.gaussians.means for p in ppps], (d,))
    _, pP = ragged([p.gaussians.covs for p in ppps], (d, d))
    labels = [p.labels if p.labels is not None else np.full(p.weights.shape[0], -1) for p in ppps]
    _, pl = ragged(labels, (), np.int64)
    bc, br = ragged([p.rates for p in ppps], ())
    _, bl = ragged([p.lows for p in ppps], (d,))
    _, bh = ragged([p.highs for p in ppps], (d,))
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


def _unique_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of ``rows`` (N, w) in lexicographic order, and each row's index among them.

    What ``np.unique(rows, axis=0, return_inverse=True)`` returns, by one
    ``np.lexsort`` of the columns (that path sorts rows as structured records
    and took about a third of a PMBM filter job's time).
    """
    if rows.shape[0] == 0:
        return rows, np.empty(0, dtype=np.int64)
    order = np.lexsort(rows.T[::-1])  # first column is the primary key
    ordered = rows[order]
    first = np.ones(rows.shape[0], dtype=bool)
    first[1:] = np.any(ordered[1:] != ordered[:-1], axis=1)
    inverse = np.empty(rows.shape[0], dtype=np.int64)
    inverse[order] = np.cumsum(first) - 1
    return ordered[first], inverse


def _bernoulli_pool(density: PMBM, mixture: bool = False) -> tuple:
    """Deduplicated Bernoullis of all hypotheses and each hypothesis' members.

    The rows of every hypothesis' Bernoullis in turn (:func:`_bernoulli_rows`),
    deduplicated; a pooled PMBM's rows are gathered from its pool. Returns
    ``(r, densities, labels, members)``: ``densities`` is ``(means, covs)``
    or, with ``mixture``, ``(counts, weights, means, covs)`` of the components.
    """
    d = density.dim
    mbs = [density.pool] if density.is_pooled else list(density.hypotheses)
    slots = max((_n_components(mb).max(initial=1) for mb in mbs), default=1) if mixture else 0
    if density.is_pooled:
        members = density.members
        sizes = [m.size for m in members]
        allrows = _bernoulli_rows(density.pool, slots)[np.concatenate(members)]
    else:
        sizes = [len(mb) for mb in density.hypotheses]
        rows = [_bernoulli_rows(mb, slots) for mb in density.hypotheses]
        width = 2 + d + d * d if not mixture else 3 + slots * (1 + d + d * d)
        allrows = np.concatenate(rows) if rows else np.empty((0, width))
    pool_rows, inverse = _unique_rows(allrows)
    members = np.split(inverse, np.cumsum(sizes)[:-1])
    r = pool_rows[:, 0]
    labels = pool_rows[:, -1].astype(np.int64)
    if not mixture:
        means = pool_rows[:, 1 : 1 + d]
        covs = pool_rows[:, 1 + d : 1 + d + d * d].reshape(-1, d, d)
        return r, (means, covs), labels, members
    counts = pool_rows[:, 1].astype(np.int64)
    blocks = pool_rows[:, 2:-1].reshape(pool_rows.shape[0], slots, 1 + d + d * d)
    comps = blocks[np.arange(slots)[None, :] < counts[:, None]]  # row-major: Bernoulli by Bernoulli
    return r, (counts, comps[:, 0], comps[:, 1 : 1 + d], comps[:, 1 + d :].reshape(-1, d, d)), labels, members


def _n_components(mb: MultiBernoulli) -> np.ndarray:
    """(m,) components of each Bernoulli's density (1 for a Gaussian)."""
    return mb.densities.counts if isinstance(mb.densities, GaussianMixtures) else np.ones(len(mb), np.int64)


def _bernoulli_rows(mb: MultiBernoulli, slots: int = 0) -> np.ndarray:
    """Each Bernoulli as one row: r, its density, its label (-1 if none).

    ``slots = 0``: (m, 2 + d + d^2), the density a Gaussian's mean and
    covariance (flat). ``slots > 0`` (a mixture file): (m, 3 + slots (1 + d + d^2)),
    the density its number of components, then per component its weight,
    mean and covariance, zero-padded to ``slots`` components (a Gaussian: one
    component of weight 1).
    """
    dens = mb.densities
    if not isinstance(dens, (Gaussians, GaussianMixtures)):
        raise ValueError(
            f"densities: only Gaussian Bernoulli densities (Gaussians or Gaussian mixtures) can be "
            f"stored, got {type(dens).__name__}"
        )
    d, m = mb.dim, len(mb)
    lab = mb.labels if mb.labels is not None else np.full(m, -1)
    if slots == 0:
        return np.concatenate([mb.r[:, None], dens.means, dens.covs.reshape(m, d * d), lab[:, None]], axis=1)
    gm = GaussianMixtures.single(dens) if isinstance(dens, Gaussians) else dens
    width = 1 + d + d * d
    comps = np.concatenate(
        [gm.weights[:, None], gm.components.means, gm.components.covs.reshape(-1, d * d)], axis=1
    )
    blocks = np.zeros((m, slots, width))
    slot = np.arange(comps.shape[0]) - np.repeat(gm.offsets[:-1], gm.counts)
    blocks[gm.owner, slot] = comps
    return np.concatenate(
        [mb.r[:, None], gm.counts[:, None].astype(float), blocks.reshape(m, slots * width), lab[:, None]],
        axis=1,
    )


def _has_mixtures(densities: Sequence[PMBM]) -> bool:
    """True when some step's Bernoullis have Gaussian-mixture densities (a version-3 file)."""
    for x in densities:
        mbs = [x.pool] if x.is_pooled else x.hypotheses
        if any(isinstance(mb.densities, GaussianMixtures) for mb in mbs):
            return True
    return False


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
    :class:`nllbench.filters.estimates.Estimates`) are the filter's own point
    estimates; give the rule in ``attrs["estimator"]``.
    """
    import xarray as xr

    family, sub, has_ppp = _family(densities)
    densities = [as_pmbm(d) for d in densities]
    d = densities[0].dim
    if any(x.dim != d for x in densities):
        raise ValueError("densities: expected the same state dimension at every step")
    K = len(densities)
    mixture = False
    if family == "PPP":
        data = _ppp_vars(densities, d)
    elif family == "IIDCluster":
        data = _iid_cluster_vars(densities, d)
    else:
        data = _ppp_vars([x.ppp for x in densities], d) if has_ppp else {}
        mixture = _has_mixtures(densities)
        data.update(_mixture_vars(densities, d, mixture))
    if estimates is not None:
        data.update(_estimate_vars(estimates, K, d))
    names = (
        list(state_names)
        if state_names is not None
        else (STATE_NAMES_4D if d == 4 else [f"x{i}" for i in range(d)])
    )
    meta = _posterior_meta(family, sub, has_ppp, attrs)
    if mixture:  # Gaussian-mixture Bernoullis: the component variables of version 3
        meta["nllbench_schema_version"] = POSTERIOR_MIXTURE_VERSION
        meta["bernoulli_density"] = "gaussian_mixture"
    ds = xr.Dataset(data, coords={"step": np.arange(K), "state": names}, attrs=attrs_out(meta))
    write_dataset(pool_covariances(ds), path)


def _posterior_meta(family: str, sub: str, has_ppp: bool, attrs: dict | None) -> dict:
    """A posterior file's global attributes: schema, versions, family, then the caller's ``attrs``."""
    meta = {
        **header("posterior"),
        "family": family,
        "subfamily": sub,
        "has_ppp": int(has_ppp),
    }
    for k, v in (attrs or {}).items():
        meta[k] = json.dumps(v, sort_keys=True) if isinstance(v, dict) else v
    return meta


def _iid_cluster_vars(densities: Sequence[IIDCluster], d: int) -> dict:
    """Ragged variables of i.i.d. cluster posteriors: cardinality pmf and spatial mixture per step."""
    cc, card = ragged([x.cardinality for x in densities], ())
    sc, sw = ragged([x.weights for x in densities], ())
    _, sm = ragged([x.gaussians.means for x in densities], (d,))
    _, sP = ragged([x.gaussians.covs for x in densities], (d, d))
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


def _mixture_vars(densities: Sequence[PMBM], d: int, mixture: bool = False) -> dict:
    """Ragged variables of multi-Bernoulli mixtures: each step's pool of distinct Bernoullis and its
    global hypotheses as weights and member lists (indices into that pool). With ``mixture``, the
    Bernoulli densities are Gaussian mixtures: per Bernoulli its number of components, then the
    components (weight, mean, covariance) of every Bernoulli in turn."""
    pools = [_bernoulli_pool(x, mixture) for x in densities]
    bc, br = ragged([p[0] for p in pools], ())
    _, bl = ragged([p[2] for p in pools], (), np.int64)
    hc, hw = ragged([x.weights for x in densities], ())
    sizes = [np.array([m.size for m in p[3]], dtype=np.int64) for p in pools]
    _, hs = ragged(sizes, (), np.int64)
    members = [np.concatenate(p[3]) if p[3] else np.empty(0, dtype=np.int64) for p in pools]
    _, hm = ragged(members, (), np.int64)
    if mixture:
        _, bk = ragged([p[1][0] for p in pools], (), np.int64)
        _, cw = ragged([p[1][1] for p in pools], ())
        _, cm = ragged([p[1][2] for p in pools], (d,))
        _, cP = ragged([p[1][3] for p in pools], (d, d))
        density = {
            "bern_components": (
                ("bern",),
                bk,
                {"sample_dimension": "component", "long_name": "Gaussian components of each Bernoulli"},
            ),
            "component_weight": (
                ("component",),
                cw,
                {"long_name": "component weight (sum to 1 per Bernoulli)"},
            ),
            "component_mean": (("component", "state"), cm),
            "component_cov": (("component", "state", "state2"), cP),
        }
    else:
        _, bm = ragged([p[1][0] for p in pools], (d,))
        _, bP = ragged([p[1][1] for p in pools], (d, d))
        density = {"bern_mean": (("bern", "state"), bm), "bern_cov": (("bern", "state", "state2"), bP)}
    return {
        "bern_count": (
            ("step",),
            bc,
            {"sample_dimension": "bern", "long_name": "Bernoullis per step"},
        ),
        "bern_r": (("bern",), br, {"long_name": "existence probability"}),
        **density,
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
    ec, es = ragged([np.asarray(e.states, dtype=float).reshape(-1, d) for e in estimates], (d,))
    _, el = ragged([np.asarray(e.labels, dtype=np.int64) for e in estimates], (), np.int64)
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
    states = get_ragged(ds, path, "estimate_count", "estimate_state", K, 2)
    labels = get_ragged(ds, path, "estimate_count", "estimate_label", K, 1, integer=True)
    return [(x.reshape(-1, d), lab.astype(np.int64)) for x, lab in zip(states, labels, strict=True)]


def _read_ppps(ds, path, K: int) -> list[PPP]:
    w = get_ragged(ds, path, "ppp_count", "ppp_weight", K, 1)
    m = get_ragged(ds, path, "ppp_count", "ppp_mean", K, 2)
    P = get_ragged(ds, path, "ppp_count", "ppp_cov", K, 3)
    lab = get_ragged(ds, path, "ppp_count", "ppp_label", K, 1, integer=True)
    br = get_ragged(ds, path, "box_count", "box_rate", K, 1)
    bl = get_ragged(ds, path, "box_count", "box_low", K, 2)
    bh = get_ragged(ds, path, "box_count", "box_high", K, 2)
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
    ds = load(path, "posterior")
    check_declared(ds, path, POSTERIOR_VARIABLES)
    ds = unpool_covariances(ds, path)
    K = int(ds.sizes.get("step", 0))
    family = ds.attrs.get("family")
    attrs = {k: jsonable(v) for k, v in ds.attrs.items()}
    if "state" not in ds.sizes:
        raise SchemaError(f"{path}: dimension 'state' is missing")
    d = int(ds.sizes["state"])
    estimates = _read_estimates(ds, path, K, d)
    if family == "PPP":
        return Posterior(_read_ppps(ds, path, K), attrs, estimates)
    if family == "IIDCluster":
        card = get_ragged(ds, path, "card_count", "cardinality", K, 1)
        sw = get_ragged(ds, path, "spatial_count", "spatial_weight", K, 1)
        sm = get_ragged(ds, path, "spatial_count", "spatial_mean", K, 2)
        sP = get_ragged(ds, path, "spatial_count", "spatial_cov", K, 3)
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
        br = get_ragged(ds, path, "bern_count", "bern_r", K, 1)
        bern_densities = _read_bernoulli_densities(ds, path, K, d)
        bl = get_ragged(ds, path, "bern_count", "bern_label", K, 1, integer=True)
        hw = get_ragged(ds, path, "hyp_count", "hyp_weight", K, 1)
        hs = get_ragged(ds, path, "hyp_count", "hyp_size", K, 1)
        hm_all = get(ds, path, "hyp_member", 1)
        sizes_all = np.concatenate(hs) if hs else np.empty(0, dtype=np.int64)
        for name, arr in (("hyp_member", hm_all), ("hyp_size", sizes_all)):
            if arr.size and (arr.dtype.kind not in "iu" or arr.min() < 0):
                raise SchemaError(f"{path}: variable {name!r}: expected non-negative integers")
        if int(np.sum(sizes_all)) != hm_all.shape[0]:
            raise SchemaError(
                f"{path}: variable 'hyp_member': expected {int(np.sum(sizes_all))} rows (sum of hyp_size), "
                f"got {hm_all.shape[0]}"
            )
        offsets = np.concatenate([[0], np.cumsum(sizes_all, dtype=np.int64)])
        hm_all = hm_all.astype(np.int64, copy=False)
        out = []
        h0 = 0
        for k in range(K):
            H, P = hw[k].shape[0], br[k].shape[0]
            # the step's members, one array (views of it per hypothesis): the hypotheses share the pool
            index = hm_all[offsets[h0] : offsets[h0 + H]]
            if index.size and index.max() >= P:
                raise SchemaError(f"{path}: variable 'hyp_member' at step {k}: index out of range 0..{P - 1}")
            starts = offsets[h0 : h0 + H + 1] - offsets[h0]
            try:
                # validated once per step; the hypotheses index it
                pool = MultiBernoulli(br[k], bern_densities(k), bl[k].astype(np.int64))
                members = [index[a:b] for a, b in zip(starts[:-1], starts[1:], strict=True)]
                out.append(PMBM.pooled(ppps[k], pool, members, hw[k]))
            except (ValueError, TypeError) as exc:
                raise SchemaError(f"{path}: PMBM at step {k}: {exc}") from None
            h0 += H
        return Posterior(out, attrs, estimates)
    raise SchemaError(f"{path}: attribute 'family': expected PPP, IIDCluster or PMBM, got {family!r}")


def _read_bernoulli_densities(ds, path, K: int, d: int):
    """``density(k)``: step k's Bernoulli densities, Gaussians or (version 3) GaussianMixtures.

    Raises :class:`SchemaError` for a component count that is not a positive
    integer or component rows that do not add up; the densities themselves
    (weights summing to 1 per Bernoulli, covariances) are checked when built.
    """
    kind = ds.attrs.get("bernoulli_density", "gaussian")
    if kind == "gaussian":
        bm = get_ragged(ds, path, "bern_count", "bern_mean", K, 2)
        bP = get_ragged(ds, path, "bern_count", "bern_cov", K, 3)
        return lambda k: Gaussians(bm[k].reshape(-1, d), bP[k].reshape(-1, d, d))
    if kind != "gaussian_mixture":
        raise SchemaError(
            f"{path}: attribute 'bernoulli_density': expected 'gaussian' or 'gaussian_mixture', got {kind!r}"
        )
    counts = get_ragged(ds, path, "bern_count", "bern_components", K, 1, integer=True)
    per_bern = np.concatenate(counts) if counts else np.empty(0, dtype=np.int64)
    if per_bern.size and per_bern.min() < 1:
        raise SchemaError(f"{path}: variable 'bern_components': expected positive integers (components)")
    cw = get(ds, path, "component_weight", 1)
    cm = get(ds, path, "component_mean", 2)
    cP = get(ds, path, "component_cov", 3)
    total = int(per_bern.sum())
    for name, arr in (("component_weight", cw), ("component_mean", cm), ("component_cov", cP)):
        if arr.shape[0] != total:
            raise SchemaError(
                f"{path}: variable {name!r}: expected {total} rows (sum of bern_components), "
                f"got {arr.shape[0]}"
            )
    step_start = np.concatenate([[0], np.cumsum([int(c.sum()) for c in counts], dtype=np.int64)])

    def density(k: int) -> GaussianMixtures:
        a, b = step_start[k], step_start[k + 1]
        offsets = np.concatenate([[0], np.cumsum(counts[k], dtype=np.int64)])
        return GaussianMixtures(cw[a:b], cm[a:b].reshape(-1, d), cP[a:b].reshape(-1, d, d), offsets)

    return density
