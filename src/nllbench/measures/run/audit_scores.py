"""Scoring for the propriety audit (:mod:`nllbench.measures.run.audit`): every measure at many truths.

The known densities of the audit (synthetic MB / PMB / MBM, a reference
filter's posterior, a labelled trajectory density), the truths drawn from
them, and every measure's scores at those truths as :class:`MeasureDraws`:
an estimate of the expected score with its pseudo-values over the draws
(per-draw scores, or delete-a-block jackknife pseudo-values for measures
pooled over a sequence), from which the audit takes paired standard errors.
Every measure is the package's own; nothing is re-implemented here.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from nllbench.engine.densities import PMBM, PPP, MultiBernoulli
from nllbench.engine.nll import nll
from nllbench.engine.transforms import (
    marginal,
)
from nllbench.filters.estimates import DEFAULT_EXISTENCE_THRESHOLD, estimate
from nllbench.measures.calibration import CalibrationCounts, cardinality_score, step_counts
from nllbench.measures.point.metrics import clear_mot, gospa, identity_scores, ospa
from nllbench.measures.point.pgospa import pgospa
from nllbench.measures.scores.proper import cardinality_rps, energy_score, intensity_score
from nllbench.measures.tracks.hota import hota
from nllbench.measures.tracks.ptgospa import ptgospa
from nllbench.measures.tracks.tgospa import tgospa

#: Frame-level measures, in report order (all oriented: lower is better).
FRAME_MEASURES = (
    "nll",
    "energy",
    "intensity",
    "cardinality_rps",
    "pgospa",
    "gospa",
    "ospa",
    "1-mota",
    "motp",
    "1-idf1",
    "1-hota",
    "nees",
    "brier",
    "cardinality_log",
)
#: Trajectory-level measures.
TRAJECTORY_MEASURES = ("trajectory_nll", "ptgospa", "tgospa")
#: Identities of draw i are i * ID_STRIDE + j: unique across draws.
ID_STRIDE = 10_000


@dataclass(frozen=True)
class AuditSettings:
    """What the audit draws, perturbs and scores.

    Attributes
    ----------
    n_draws : int >= 8
        Truths drawn from each density.
    seed : int >= 0
        Seeds the truth draws and the energy score's samples (``docs/audit.md``).
    cov_scales : tuple of float > 0
        Covariance scales s (P -> s P); must hold 1.
    tempers : tuple of float > 0
        Existence tempering exponents tau about ``temper_about`` (tau > 1
        towards 0/1, tau < 1 towards ``temper_about``); must hold 1.
    temper_about : float in (0, 1)
    shifts : tuple of float
        Mean shifts (state units, along the first state axis); must hold 0.
    add_r : float in (0, 1]
        Existence of the added Bernoulli.
    add_offset : tuple of float
        Where it is added: the most likely Bernoulli's mean plus this offset
        (its covariance is that Bernoulli's).
    c, p : float
        Cut-off and order of GOSPA, OSPA, P-GOSPA, T-GOSPA and PT-GOSPA.
    threshold : float
        Distance threshold of MOTA, MOTP, IDF1 and HOTA.
    kernel_cov : float
        Kernel covariance s I of the energy and intensity scores.
    energy_samples : int >= 2
        Samples of each density per energy score.
    nll_q : int >= 1
        Murty budget of the NLL and the trajectory NLL.
    blocks : int >= 2
        Blocks of the jackknife of the pooled measures.
    z : float > 0
        A difference counts when it exceeds z standard errors.
    """

    n_draws: int = 400
    seed: int = 0
    cov_scales: tuple = (0.125, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0)
    tempers: tuple = (0.125, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0)
    temper_about: float = 0.5
    shifts: tuple = (0.0, 0.25, 0.5, 1.0, 2.0)
    add_r: float = 0.5
    add_offset: tuple = (4.0, 0.0)
    c: float = 2.0
    p: float = 1.0
    threshold: float = 2.0
    kernel_cov: float = 1.0
    energy_samples: int = 100
    nll_q: int = 1000
    blocks: int = 20
    z: float = 2.0

    def __post_init__(self) -> None:
        for name, honest in (("cov_scales", 1.0), ("tempers", 1.0), ("shifts", 0.0)):
            values = tuple(float(x) for x in getattr(self, name))
            if honest not in values or len(set(values)) != len(values):
                raise ValueError(f"{name}: expected distinct values including {honest}, got {values!r}")
            object.__setattr__(self, name, values)
        if min(self.cov_scales) <= 0 or min(self.tempers) <= 0:
            raise ValueError("cov_scales, tempers: expected positive values")
        if not (isinstance(self.n_draws, int) and self.n_draws >= 8):
            raise ValueError(f"n_draws: expected an integer >= 8, got {self.n_draws!r}")
        if not (isinstance(self.blocks, int) and 2 <= self.blocks <= self.n_draws):
            raise ValueError(f"blocks: expected an integer in [2, n_draws], got {self.blocks!r}")
        if not 0 < self.temper_about < 1:
            raise ValueError(f"temper_about: expected a probability in (0, 1), got {self.temper_about!r}")
        if not 0 < self.add_r <= 1:
            raise ValueError(f"add_r: expected a probability in (0, 1], got {self.add_r!r}")
        if not self.z > 0:
            raise ValueError(f"z: expected a positive number, got {self.z!r}")
        object.__setattr__(self, "add_offset", tuple(float(x) for x in self.add_offset))


# ---------------------------------------------------------------------------
# densities
# ---------------------------------------------------------------------------


def synthetic_density(name: str):
    """A small known density of the audit: ``"mb"``, ``"pmb"`` or ``"mbm"`` (2-D, Gaussian).

    * ``mb``: three Bernoullis, r = 0.9, 0.6, 0.25, apart (4 to 6 units) with
      different covariances.
    * ``pmb``: the same with a Poisson part (rate 0.3, a Gaussian N((0, 5), 4 I)).
    * ``mbm``: two hypotheses (weights 0.7, 0.3) that disagree on where the
      second object is and whether a third exists.
    """
    covs = np.array([[[0.5, 0.1], [0.1, 0.3]], [[1.0, 0.0], [0.0, 1.0]], [[0.3, 0.0], [0.0, 0.6]]])
    means = np.array([[0.0, 0.0], [5.0, 0.0], [2.0, 4.0]])
    mb = MultiBernoulli.gaussian([0.9, 0.6, 0.25], means, covs, labels=[1, 2, 3])
    if name == "mb":
        return mb
    if name == "pmb":
        return PMBM.pmb(PPP.gaussian([0.3], [[0.0, 5.0]], [4.0 * np.eye(2)]), mb)
    if name == "mbm":
        other = MultiBernoulli.gaussian([0.9, 0.8], [[0.0, 0.0], [5.0, 1.5]], covs[:2], labels=[1, 2])
        return PMBM(None, (mb, other), np.array([0.7, 0.3]))
    raise ValueError(f"name: expected 'mb', 'pmb' or 'mbm', got {name!r}")


def filter_posterior(
    filter_name: str,
    scenario: str,
    step: int,
    seed: int,
    max_hypotheses: int = 20,
    r_floor: float = 0.02,
    weight_floor: float = 0.01,
):
    """The position marginal of a reference filter's posterior at ``step``, made auditable.

    The scenario is simulated with ``numpy.random.default_rng(seed)`` for
    ``step + 1`` steps and the filter (``pmbm``, ``pmb``, ``mbm`` or
    ``mbm01``) run on it with at most ``max_hypotheses`` global hypotheses.
    The posterior is then :func:`floored`: a Bernoulli or hypothesis rarer
    than a few draws in a few hundred would make every probe that removes it
    look better on the draws that do not contain it (``docs/audit.md``, "Rare events").
    """
    from nllbench.filters import PMBMSettings, run_filter
    from nllbench.simulation.scenarios import get_scenario, simulate

    if filter_name not in ("pmbm", "pmb", "mbm", "mbm01"):
        raise ValueError(
            f"filter: expected a PMBM-family filter (pmbm, pmb, mbm, mbm01), got {filter_name!r}"
        )
    if not (isinstance(step, int) and step >= 0):
        raise ValueError(f"step: expected a non-negative integer, got {step!r}")
    sc = get_scenario(scenario, steps=step + 1)
    sim = simulate(sc, np.random.default_rng(seed))
    posts = run_filter(
        filter_name,
        sim.measurements[: step + 1],
        sc.model,
        pmbm_settings=PMBMSettings(max_hypotheses=max_hypotheses),
    )
    return floored(marginal(posts[step]), r_floor, weight_floor)


def floored(density, r_floor: float, weight_floor: float):
    """``density`` without Bernoullis of r < ``r_floor`` and hypotheses of weight < ``weight_floor``.

    The remaining weights are renormalised; the PPP is kept. The result is
    the audit's known density: truths are drawn from it, not from ``density``.
    """
    if not (0 <= r_floor < 1 and 0 <= weight_floor < 1):
        raise ValueError(
            f"r_floor, weight_floor: expected numbers in [0, 1), got {r_floor!r}, {weight_floor!r}"
        )
    if isinstance(density, MultiBernoulli):
        return density.subset(np.flatnonzero(density.r >= r_floor))
    keep = np.flatnonzero(density.weights >= weight_floor)
    if keep.size == 0:
        keep = np.array([int(np.argmax(density.weights))])
    hyps = tuple(density.hypothesis(int(h)) for h in keep)
    hyps = tuple(mb.subset(np.flatnonzero(mb.r >= r_floor)) for mb in hyps)
    w = density.weights[keep]
    return PMBM(density.ppp, hyps, w / w.sum())


# ---------------------------------------------------------------------------
# paired Monte Carlo: per-draw values and jackknife pseudo-values
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class MeasureDraws:
    """A measure's estimate of E S(P', Y) and its pseudo-values over B units of the draws.

    ``pseudo`` (B,): per-draw scores (a per-truth measure, B = n draws) or
    delete-a-block jackknife pseudo-values (a pooled measure, B blocks); the
    standard error of ``estimate`` is std(pseudo) / sqrt(B), and that of a
    difference between two perturbations the same of the difference of their
    pseudo-values (paired: the same truths).
    """

    estimate: float
    pseudo: np.ndarray


def mean_draws(values) -> MeasureDraws:
    """A per-truth measure: the mean of its per-draw values."""
    a = np.asarray(values, dtype=float)
    return MeasureDraws(float(a.mean()), a)


def jackknife_draws(pooled: Callable[[np.ndarray], float], n: int, blocks: int) -> MeasureDraws:
    """A pooled measure ``pooled(indices of draws) -> value``: value on all, block-jackknife pseudo-values.

    pseudo_b = B theta - (B - 1) theta_(-b) (Quenouille-Tukey), theta_(-b)
    the value without block b of ``blocks`` contiguous blocks.
    """
    all_idx = np.arange(n)
    theta = pooled(all_idx)
    parts = np.array_split(all_idx, blocks)
    left = np.array([pooled(np.setdiff1d(all_idx, b, assume_unique=True)) for b in parts])
    B = len(parts)
    with np.errstate(invalid="ignore"):
        pseudo = B * theta - (B - 1) * left
    return MeasureDraws(float(theta), pseudo)


def _counts_pooled(records: np.ndarray, fn: Callable[[np.ndarray], float]) -> Callable[[np.ndarray], float]:
    """A pooled measure from additive per-draw records (n, k): ``fn`` of their sum over the draws."""
    return lambda idx: fn(records[idx].sum(axis=0))


def _ratio(num: float, den: float) -> float:
    return num / den if den > 0 else math.nan


# ---------------------------------------------------------------------------
# frame level
# ---------------------------------------------------------------------------


def frame_scores(density, truths: Sequence[np.ndarray], settings: AuditSettings) -> dict[str, MeasureDraws]:
    """Every frame-level measure at the truths (each (n_i, d)), as :class:`MeasureDraws`.

    ``density``: one density (every truth drawn from it) or a list of one
    density per truth (a filter's posterior per step against the step's truth).
    """
    n = len(truths)
    s = settings
    dens = list(density) if isinstance(density, (list, tuple)) else [density] * n
    if len(dens) != n:
        raise ValueError(f"density: expected one density per truth ({n}), got {len(dens)}")
    cache: dict[int, object] = {}
    ests = [cache.setdefault(id(d), estimate(d, DEFAULT_EXISTENCE_THRESHOLD)) for d in dens]
    vals: dict[str, list] = {k: [] for k in ("nll", "energy", "intensity", "cardinality_rps", "pgospa")}
    vals.update({"gospa": [], "ospa": [], "cardinality_log": []})
    calib, identity = [], []
    for i, (d, est, y) in enumerate(zip(dens, ests, truths, strict=True)):
        res = nll(d, y, q=s.nll_q)
        vals["nll"].append(res.value)
        rng = np.random.default_rng([s.seed, 1, i])  # the same forecast samples for every perturbation
        vals["energy"].append(energy_score(d, y, s.kernel_cov, n_samples=s.energy_samples, seed=rng).value)
        vals["intensity"].append(intensity_score(d, y, s.kernel_cov).value)
        vals["cardinality_rps"].append(cardinality_rps(d, y.shape[0]))
        vals["pgospa"].append(pgospa(y, d, c=s.c, p=s.p).value)
        vals["gospa"].append(gospa(est.states, y, c=s.c, p=s.p).value)
        vals["ospa"].append(ospa(est.states, y, c=s.c, p=s.p).value)
        card = cardinality_score(d, y.shape[0])
        vals["cardinality_log"].append(card.log_score)
        calib.append(_calibration_record(step_counts(d, y, res, card), y.shape[1]))
        ids = i * ID_STRIDE + np.arange(y.shape[0])
        eids = i * ID_STRIDE + np.arange(est.states.shape[0])
        r = identity_scores([y], [ids], [est.states], [eids], s.threshold)
        identity.append((r.idtp, y.shape[0], est.states.shape[0]))
    out = {k: mean_draws(v) for k, v in vals.items()}
    out.update(_sequence_scores(truths, [e.states for e in ests], s))
    ident = np.asarray(identity, dtype=float)
    out["1-idf1"] = jackknife_draws(
        _counts_pooled(ident, lambda t: 1.0 - _ratio(2.0 * t[0], t[1] + t[2])), n, s.blocks
    )
    cal = np.asarray(calib, dtype=float)
    out["nees"] = jackknife_draws(_counts_pooled(cal, _nees_deviation), n, s.blocks)
    out["brier"] = jackknife_draws(_counts_pooled(cal, lambda t: _ratio(t[3], t[4])), n, s.blocks)
    return {k: out[k] for k in FRAME_MEASURES}


def _calibration_record(counts: CalibrationCounts, d: int) -> tuple:
    """(NEES sum, NEES degrees of freedom, pairs, Brier sum, Bernoullis) of one draw: they add."""
    return (counts.nees_sum, counts.nees_dof, counts.nees_pairs, counts.brier_sum, counts.bernoullis)


def _nees_deviation(t: np.ndarray) -> float:
    """|log(ANEES / d)| of summed records: 0 when the average NEES is its consistent value d."""
    if t[2] <= 0:
        return math.nan
    anees_per_dof = t[0] / t[1]  # ANEES / d
    return abs(math.log(anees_per_dof)) if anees_per_dof > 0 else math.inf


def _sequence_scores(truths, states: list, s: AuditSettings) -> dict[str, MeasureDraws]:
    """MOTA, MOTP and HOTA of the point estimates (one (m_i, d) array per draw) over the draws.

    Every draw is a frame; identities are unique per draw (no switch between
    independent draws). CLEAR MOT's per-frame counts give the block sums;
    HOTA is recomputed without each block.
    """
    n = len(truths)
    tids = [i * ID_STRIDE + np.arange(y.shape[0]) for i, y in enumerate(truths)]
    eids = [i * ID_STRIDE + np.arange(x.shape[0]) for i, x in enumerate(states)]
    est = list(states)
    mot = clear_mot(list(truths), tids, est, eids, s.threshold)
    counts = np.column_stack(
        [
            mot.frame_misses + mot.frame_false_positives + mot.frame_switches,
            [y.shape[0] for y in truths],
            mot.frame_distance_sum,
            mot.frame_matches,
        ]
    ).astype(float)

    def hota_of(idx: np.ndarray) -> float:
        return (
            1.0
            - hota(
                [truths[i] for i in idx],
                [tids[i] for i in idx],
                [est[i] for i in idx],
                [eids[i] for i in idx],
                s.threshold,
            ).hota
        )

    return {
        "1-mota": jackknife_draws(_counts_pooled(counts, lambda t: _ratio(t[0], t[1])), n, s.blocks),
        "motp": jackknife_draws(_counts_pooled(counts, lambda t: _ratio(t[2], t[3])), n, s.blocks),
        "1-hota": jackknife_draws(hota_of, n, s.blocks),
    }


# ---------------------------------------------------------------------------
# trajectory level
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class TrajectoryTruth:
    """One draw of a set of trajectories: per frame (n_k, d) states and (n_k,) identities."""

    states: tuple
    ids: tuple


def synthetic_trajectory_density(frames: int = 4):
    """A known density on sets of trajectories: three labelled Bernoullis per frame (2-D).

    Label l is present at frame t with probability r_{l,t}, independently over
    frames, with state N(m_{l,t}, P_l) (the trajectory NLL's density,
    ``docs/trajectory.md``): one object moving right (r = 0.9), one moving
    up (r = 0.7) and a doubtful one (r = 0.3).
    """
    covs = np.array([[[0.5, 0.1], [0.1, 0.3]], [[1.0, 0.0], [0.0, 1.0]], [[0.3, 0.0], [0.0, 0.6]]])
    out = []
    for t in range(frames):
        means = np.array([[0.0 + t, 0.0], [5.0, 0.0 + t], [2.0, 5.0]])
        out.append(MultiBernoulli.gaussian([0.9, 0.7, 0.3], means, covs, labels=[1, 2, 3]))
    return tuple(out)


def sample_trajectories(sequence, n: int, seed) -> list[TrajectoryTruth]:
    """``n`` draws of the true trajectories from a sequence of labelled Gaussian MBs (one per frame).

    Each label is present at each frame with its r, independently; present,
    its state is drawn from its Gaussian; its identity is its label.
    """
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        states, ids = [], []
        for mb in sequence:
            g = mb.densities
            here = rng.random(len(mb)) < mb.r
            z = rng.standard_normal((int(here.sum()), mb.dim))
            states.append(g.means[here] + np.einsum("kij,kj->ki", g._chol[here], z))
            ids.append(mb.labels[here].astype(np.int64))
        out.append(TrajectoryTruth(tuple(states), tuple(ids)))
    return out


def trajectory_scores(
    sequence, draws: Sequence[TrajectoryTruth], settings: AuditSettings
) -> dict[str, MeasureDraws]:
    """The trajectory NLL, PT-GOSPA and T-GOSPA of a labelled MB sequence at each draw."""
    from nllbench.measures.likelihood.filter_trajectory_nll import posterior_input
    from nllbench.measures.likelihood.trajectory_windows import score_statistics, window_statistics

    s = settings
    posts = [PMBM.pmb(None, mb) for mb in sequence]
    dims = list(range(sequence[0].dim))
    means = [mb.densities.means for mb in sequence]
    labels = [mb.labels for mb in sequence]
    covs = [mb.densities.covs for mb in sequence]
    rs = [mb.r for mb in sequence]
    keep = [mb.r > DEFAULT_EXISTENCE_THRESHOLD for mb in sequence]
    vals = {k: [] for k in TRAJECTORY_MEASURES}
    for draw in draws:
        inp = posterior_input(posts, draw.states, draw.ids, dims=dims, box=None)
        stats, lab, tru, spans = window_statistics(inp)
        res = score_statistics(
            stats,
            inp.labels[lab],
            inp.truths[tru],
            inp.frames,
            spans,
            q=s.nll_q,
            exact=False,
            rate=0.0,
            presence=1.0,
            unlisted_presence=0.0,
            fill_ins={},
        )
        vals["trajectory_nll"].append(res.value)
        vals["ptgospa"].append(
            ptgospa(
                draw.states,
                draw.ids,
                means,
                labels,
                c=s.c,
                p=s.p,
                estimate_existence=rs,
                estimate_covariances=covs,
            ).value
        )
        vals["tgospa"].append(
            tgospa(
                draw.states,
                draw.ids,
                [m[k] for m, k in zip(means, keep, strict=True)],
                [lab_[k] for lab_, k in zip(labels, keep, strict=True)],
                c=s.c,
                p=s.p,
            ).value
        )
    return {k: mean_draws(v) for k, v in vals.items()}
