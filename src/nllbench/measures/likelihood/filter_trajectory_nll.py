"""The trajectory NLL of a labelled filter's posteriors (the reference PMB, PMBM, MBM, MBM01).

A sequence of PMBM-family posteriors whose Bernoullis carry track labels is
read as the trajectory NLL reads a labelled tracks table with mixture
hypotheses, reduced by ``mixture="marginal"`` (``docs/trajectory.md``,
"Mixtures" and "The reference filters"): each label is one trajectory
Bernoulli with, at step t,

    r_{l,t} = sum_h w_h r_{h,l,t}            (0 for a hypothesis without the label)
    p_{l,t} = sum_h w_h r_{h,l,t} N(m_{h,l,t}, P_{h,l,t}) / r_{l,t}

(the position marginal, or the whole state, as the per-frame NLL). A
Bernoulli that several hypotheses share (the same single-target hypothesis)
enters once with the sum of their weights. The evaluation's calibration probes
apply first, as for the per-frame NLL: existence tempered, covariances scaled.

The fill-ins come from the filter's own Poisson part: the unlisted presence R
gives the PPP's expected number of undetected objects to the labels without a
row (:func:`unlisted_presence_from_ppp`; 0 for the MBM and MBM01, which have
none), and there are no undetected trajectories (Lambda = 0), so the PPP's
objects are not counted twice.
PHD and CPHD posteriors (intensities, no labelled Bernoullis) have no
trajectory density: :func:`posterior_trajectory_runs` says so instead of a number.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from nllbench.engine.densities import PMBM, Gaussians, MultiBernoulli, log_box_volume
from nllbench.engine.transforms import POSITION
from nllbench.measures.likelihood.trajectory_windows import (
    TrajectoryInput,
    TrajectoryRun,
    TrajectoryScoring,
    score_window,
    window_statistics,
)

#: Why a posterior sequence has no trajectory NLL: no Bernoullis (an intensity or i.i.d. cluster).
NOT_LABELLED = (
    "not applicable: the posterior has no labelled Bernoullis (a PHD/CPHD intensity has no track labels)"
)


def not_applicable_reason(posteriors) -> str:
    """``""`` when every step is a PMBM-family density whose Bernoullis all carry labels, else why not."""
    for k, d in enumerate(posteriors):
        if isinstance(d, MultiBernoulli):
            d = PMBM.pmb(None, d)
        if not isinstance(d, PMBM):
            return NOT_LABELLED
        hyps = [mb for mb in d.hypotheses if len(mb)]
        if any(mb.labels is None for mb in hyps) or (
            hyps and np.concatenate([mb.labels for mb in hyps]).min() < 0
        ):
            return (
                f"not applicable: step {k}: Bernoullis without track labels "
                "(the trajectory NLL scores one trajectory Bernoulli per label)"
            )
    return ""


def _step_rows(k: int, d: PMBM, dims: list[int]) -> np.ndarray:
    """(N_k, 2 + 1 + d + d^2 + 1) rows [step, label, r, mean, cov, hypothesis weight] of step ``k``.

    One row per Bernoulli of every hypothesis; a label twice in one hypothesis is an error.
    """
    sizes = np.array([len(mb) for mb in d.hypotheses])
    hyps = [mb for mb in d.hypotheses if len(mb)]
    dd = len(dims)
    if not hyps:
        return np.empty((0, 4 + dd + dd * dd))
    labels = np.concatenate([mb.labels for mb in hyps])
    hyp = np.repeat(np.arange(sizes.size), sizes)
    _check_one_per_label(k, hyp, labels)
    means = np.concatenate([mb.densities.means for mb in hyps])[:, dims]
    covs = np.concatenate([mb.densities.covs for mb in hyps])[:, dims][:, :, dims]
    n = labels.size
    return np.column_stack(
        [
            np.full(n, float(k)),
            labels.astype(np.float64),
            np.concatenate([mb.r for mb in hyps]),
            means,
            covs.reshape(n, dd * dd),
            np.repeat(d.weights, sizes),
        ]
    )


def _step_keys(k: int, d: PMBM, dims: list[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Step ``k``'s Bernoullis as (keys (P, 2 + 1 + d + d^2), rows (M,), weights (M,)).

    ``keys``: rows [step, label, r, mean, cov]; member m of the step's hypotheses (hypothesis by
    hypothesis) is ``keys[rows[m]]`` with its hypothesis' weight ``weights[m]``. Gaussian
    Bernoullis are read from the shared pool (:attr:`PMBM.pool`, :attr:`PMBM.members`): one key
    per Bernoulli some hypothesis holds, however many hold it, instead of one row per member
    (a Williams-2015 PMBM run: about 12,900 keys for 269,000 members). Other densities: one key
    per member (:func:`_step_rows`). A label twice in one hypothesis is an error.
    """
    pool = d.pool
    if type(pool.densities) is not Gaussians or pool.labels is None:
        rows = _step_rows(k, d, dims)
        return rows[:, :-1], np.arange(rows.shape[0]), rows[:, -1]
    members = d.members
    sizes = np.array([m.size for m in members], dtype=np.int64)
    index = np.concatenate(members) if members else np.empty(0, dtype=np.int64)
    dd = len(dims)
    if index.size == 0:
        return np.empty((0, 3 + dd + dd * dd)), np.empty(0, dtype=np.int64), np.empty(0)
    labels = pool.labels[index]
    _check_one_per_label(k, np.repeat(np.arange(sizes.size), sizes), labels)
    used, rows = np.unique(index, return_inverse=True)
    means = pool.densities.means[used][:, dims]
    covs = pool.densities.covs[used][:, dims][:, :, dims]
    keys = np.column_stack(
        [
            np.full(used.size, float(k)),
            pool.labels[used].astype(np.float64),
            pool.r[used],
            means,
            covs.reshape(used.size, dd * dd),
        ]
    )
    return keys, rows.reshape(-1), np.repeat(d.weights, sizes)


def _check_one_per_label(k: int, hyp: np.ndarray, labels: np.ndarray) -> None:
    """Refuse a label on two Bernoullis of one hypothesis (``hyp``, ``labels``: per member)."""
    if not labels.size or labels.min() < 0:
        return
    pairs = np.sort(hyp * (int(labels.max()) + 1) + labels)
    if np.any(pairs[1:] == pairs[:-1]):
        h = int(pairs[np.flatnonzero(pairs[1:] == pairs[:-1])[0]] // (int(labels.max()) + 1))
        raise ValueError(
            f"posteriors: step {k}, hypothesis {h}: a label appears on two Bernoullis; expected one "
            "Bernoulli per label and hypothesis"
        )


def _pooled_rows(posteriors, dims: list[int]):
    """Every Bernoulli of every hypothesis and step, with the same ones merged (weights summed).

    Returns (frame (N,), label (N,), weight (N,), r (N,), means (N, d), covs (N, d, d)) over the
    ``dims`` scored; a row is one distinct (step, label, r, mean, covariance), in the byte order
    of its key. A weight is summed over the members in the order step, hypothesis, member
    (:func:`_step_keys`): the same sums, bit for bit, as over one row per member.
    """
    dd = len(dims)
    parts = [_step_keys(k, d, dims) for k, d in enumerate(posteriors)]
    if not parts or sum(p[1].size for p in parts) == 0:
        empty = np.empty(0)
        none = np.empty(0, dtype=np.int64)
        return none, none, empty, empty, np.empty((0, dd)), np.empty((0, dd, dd))
    offsets = np.cumsum([0] + [p[0].shape[0] for p in parts])
    keys = np.ascontiguousarray(np.concatenate([p[0] for p in parts]))
    rows = np.concatenate([p[1] + o for p, o in zip(parts, offsets, strict=False)])
    # the same single-target hypothesis in several global hypotheses: byte-equal keys, one row
    view = keys.view(np.dtype((np.void, keys.dtype.itemsize * keys.shape[1]))).ravel()
    _, first, inverse = np.unique(view, return_index=True, return_inverse=True)
    weight = np.bincount(inverse.ravel()[rows], weights=np.concatenate([p[2] for p in parts]))
    u = keys[first]
    return (
        u[:, 0].astype(np.int64),
        u[:, 1].astype(np.int64),
        weight,
        u[:, 2],
        u[:, 3 : 3 + dd],
        u[:, 3 + dd :].reshape(-1, dd, dd),
    )


def unlisted_presence_from_ppp(posteriors, stats, box) -> tuple[float, dict]:
    """(R, record): the unlisted presence that gives the filter's PPP mass to the labels without a row.

    The PPP at step t holds the objects the filter has not detected yet,
    ``mu_t`` of them in expectation (its total rate). In the filter's own
    model such an object is one it creates a label for when it detects it, so
    it belongs to a label that has no Bernoulli at t. R is chosen so that, over
    the window, the labels without a row are expected to hold as many objects
    as the PPP:

        R * sum_t u_t = sum_t mu_t,     R = sum_t mu_t / sum_t u_t

    (``u_t``: the labels of the window without a row at step t), capped at 1.
    The state there is uniform on the box, where the PPP is a Gaussian mixture:
    R keeps the PPP's count, not its shape. R = 0 without a PPP (MBM, MBM01:
    their posterior says nothing exists outside its Bernoullis), without a box
    (the full state is scored), or without an unlisted frame; the record says why.
    """
    if box is None:
        return 0.0, {"R": 0.0, "why": "no box: the full state is scored"}
    ppps = [getattr(d, "ppp", None) for d in posteriors]
    if all(p is None for p in ppps):
        return 0.0, {
            "R": 0.0,
            "why": "the filter has no Poisson part (nothing exists outside its Bernoullis)",
        }
    mass = float(sum(p.total_rate for p in ppps if p is not None))
    unlisted = int(np.sum(stats.free))
    record = {"ppp_mass_sum": mass, "unlisted_label_frames": unlisted, "state": "uniform on the fov box"}
    if unlisted == 0 or mass <= 0:
        return 0.0, {**record, "R": 0.0, "why": "no unlisted label frame" if unlisted == 0 else "no PPP mass"}
    R = min(1.0, mass / unlisted)
    return R, {
        **record,
        "R": R,
        "kind": "the PPP's mass per unlisted (label, step)" + (", capped at 1" if R == 1.0 else ""),
    }


def posterior_input(
    posteriors,
    truth,
    truth_ids,
    *,
    dims,
    box,
    cov_scale: float = 1.0,
    pooled=None,
) -> TrajectoryInput:
    """The engine's layout of a labelled posterior sequence (frames 0..K-1) and its truth.

    ``pooled``: :func:`_pooled_rows` of the (tempered) posteriors over ``dims``, if already made;
    the covariances are multiplied by ``cov_scale``.
    """
    frame, label, weight, r, means, covs = pooled if pooled is not None else _pooled_rows(posteriors, dims)
    K = len(posteriors)
    labels, row_label = np.unique(label, return_inverse=True)
    row_label = row_label.reshape(-1)
    order = np.lexsort((row_label, frame))
    g = Gaussians._trusted(np.ascontiguousarray(means[order]), np.ascontiguousarray(cov_scale * covs[order]))
    ids = [np.asarray(i, dtype=np.int64).reshape(-1) for i in truth_ids]
    all_ids = np.concatenate(ids) if ids else np.empty(0, dtype=np.int64)
    truths, traj = np.unique(all_ids, return_inverse=True)
    truth_frame = np.repeat(np.arange(K), [i.size for i in ids])
    d_full = posteriors[0].dim if K else len(dims)
    # a frame without truth: (0, d) (reshape(0, -1) is refused by numpy)
    states = [
        np.asarray(x, dtype=float).reshape(i.size, -1 if i.size else d_full)
        for x, i in zip(truth, ids, strict=True)
    ]
    truth_states = np.concatenate(states)[:, dims] if all_ids.size else np.empty((0, len(dims)))
    if all_ids.size and np.concatenate(states).shape[1] != d_full:
        raise ValueError(f"truth: expected states of dimension {d_full} like the posterior")
    log_volume = None if box is None else float(log_box_volume(box[0][None, :], box[1][None, :])[0])
    return TrajectoryInput(
        frames=np.arange(K, dtype=np.int64),
        labels=labels,
        truths=truths,
        row_frame=frame[order],
        row_label=row_label[order],
        row_wr=(weight * r)[order],
        means=g.means,
        chol=g._chol,
        log_norm=g._log_norm,
        truth_frame=truth_frame,
        truth_traj=traj.reshape(-1),
        truth_states=np.ascontiguousarray(truth_states),
        box=box,
        log_volume=log_volume,
        fill_ins={},
    )


def posterior_trajectory_runs(posteriors, truth, truth_ids, fov_low, fov_high, settings) -> list | str:
    """The trajectory NLL of a labelled filter's run for each evaluation settings, or why there is none.

    Parameters
    ----------
    posteriors : sequence of PMBM-family densities (one per step, K steps)
    truth, truth_ids : per step, (n_k, d) states and (n_k,) identities
    fov_low, fov_high : the scene's position box (the undetected trajectories are uniform on it)
    settings : sequence of :class:`~nllbench.measures.run.evaluate.EvaluationSettings`
        As for :func:`~nllbench.measures.run.evaluate.evaluate_runs` (they may differ in ``qs``,
        ``cov_scale`` and ``exact``); each gets its value at its largest Q, with the exact
        value when it asks for one (left out, with the reason, where intractable).

    Returns
    -------
    list of TrajectoryRun (one window of all steps), aligned with ``settings``; or a str saying why the
    posteriors have no trajectory NLL (PHD / CPHD; :data:`NOT_LABELLED`).
    """
    from nllbench.measures.run.evaluate import probed

    settings = list(settings)
    why = not_applicable_reason(posteriors)
    if why:
        return why
    first = settings[0]
    full = first.marginal == "full"
    dims = list(range(posteriors[0].dim)) if full else list(POSITION)
    box = None
    if not full:
        box = (np.asarray(fov_low, dtype=float)[: len(dims)], np.asarray(fov_high, dtype=float)[: len(dims)])
    dens = [
        probed(d if isinstance(d, PMBM) else PMBM.pmb(None, d), replace(first, cov_scale=1.0))
        for d in posteriors
    ]
    pooled = _pooled_rows(dens, dims)
    inputs: dict[float, tuple] = {}
    out = []
    for s in settings:
        if s.cov_scale not in inputs:
            inp = posterior_input(
                dens, truth, truth_ids, dims=dims, box=box, cov_scale=s.cov_scale, pooled=pooled
            )
            inputs[s.cov_scale] = (inp, window_statistics(inp))
        inp, (stats, lab, tru, spans) = inputs[s.cov_scale]
        q = int(max(s.qs))
        if not out:  # R counts (label, step) pairs without a row: the same at every covariance scale
            R, r_record = unlisted_presence_from_ppp(dens, stats, box)
        prov = {
            "labels": "the filter's track labels",
            "mixture": "marginal over the global hypotheses (per label and step)",
            "marginal": "full" if full else "position",
            "undetected_trajectories": {
                "kind": "none (zero rate)",
                "why": "the PPP's undetected objects go to the labels without a row (unlisted presence)",
            },
            "unlisted_presence": r_record,
            "q": q,
        }
        if box is not None:
            prov["fov_low"], prov["fov_high"] = box[0].tolist(), box[1].tolist()
        res, note = score_window(
            stats,
            inp.labels[lab],
            inp.truths[tru],
            inp.frames,
            spans,
            TrajectoryScoring(q, rate=0.0, presence=1.0, unlisted_presence=R, fill_ins=prov),
            exact=bool(s.exact),
        )
        out.append(TrajectoryRun((res,), q, prov, note))
    return out
