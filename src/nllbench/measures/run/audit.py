"""The propriety audit: which measures reward honest uncertainty (``docs/audit.md``).

A score S(P, Y) (lower is better) is *proper* when, for truths Y drawn from
a density P, the expected score E_{Y~P} S(P', Y) is smallest at P' = P, and
*strictly proper* when P is the only minimiser (Gneiting and Raftery,
"Strictly proper scoring rules, prediction, and estimation", JASA 102(477),
2007). The audit measures this for every measure nllbench computes: it draws
truths from a known density P, scores P and its perturbations P' (covariances
scaled, existence tempered, means shifted, one Bernoulli added or dropped)
with every measure on the *same* truths (paired samples), and reports each
measure's expected score against the perturbation with its Monte Carlo
standard error, where the minimum lies, and a verdict.

Measures are reused from the package, never re-implemented: the NLL
(:func:`nllbench.engine.nll.nll`), the set energy, intensity and cardinality
scores (:mod:`nllbench.measures.proper`), P-GOSPA against the truth
(:func:`nllbench.measures.pgospa.pgospa`), GOSPA, OSPA, CLEAR MOT, IDF1 and
HOTA of the point estimates (:func:`nllbench.filters.estimates.estimate`,
:mod:`nllbench.measures.metrics`, :mod:`nllbench.measures.hota`), the NEES,
Brier and cardinality panels of :mod:`nllbench.measures.calibration`, and at
trajectory level the trajectory NLL (the engine of
:mod:`nllbench.measures.likelihood.filter_trajectory_nll`), PT-GOSPA and T-GOSPA.

Every score is oriented so that lower is better (``1 - MOTA``,
``1 - IDF1``, ``1 - HOTA``; the NEES calibration as |log(ANEES / d)|, 0 for a
consistent posterior). Measures defined per truth (the NLL, the proper
scores, P-GOSPA, GOSPA, OSPA, the cardinality log score, the trajectory
measures) are averaged over the draws. Measures pooled over a sequence
(MOTA, MOTP, IDF1, HOTA; ANEES, Brier) are computed once on all draws (each
draw one frame, identities unique per draw, so that no identity switch
links two independent draws) and their standard errors come from a
delete-a-block jackknife over the draws.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from nllbench.engine.densities import MultiBernoulli
from nllbench.engine.sampling import sample
from nllbench.engine.transforms import (
    add_bernoulli,
    drop_bernoulli,
    scale_covariances,
    shift_means,
    temper_existence,
)
from nllbench.measures.run.audit_scores import (
    AuditSettings,
    MeasureDraws,
    frame_scores,
    sample_trajectories,
    trajectory_scores,
)

#: Perturbation families and the value that leaves the density as it is.
FAMILIES = {"covariance": 1.0, "existence": 1.0, "shift": 0.0, "cardinality": 0.0}
#: Verdicts, most to least favourable.
VERDICTS = (
    "strictly proper",
    "proper",
    "insensitive",
    "improper (rewards over-confidence)",
    "improper (rewards under-confidence)",
    "improper (rewards over- and under-confidence)",
    "improper (rewards a wrong density)",
    "no-op",
)


@dataclass(frozen=True)
class Perturbation:
    """One perturbation: ``family`` at ``value``; ``side`` is "honest", "over", "under" or "other".

    "over": covariance shrunk (s < 1) or existence pushed towards 0/1
    (tau > 1); "under": the reverse; "other": shifted means, a Bernoulli
    added (+1) or dropped (-1).
    """

    family: str
    value: float
    side: str


def perturbations(settings: AuditSettings) -> tuple[Perturbation, ...]:
    """Every perturbation of the audit, family by family, values ascending."""
    out = []
    for s in sorted(settings.cov_scales):
        out.append(Perturbation("covariance", s, "honest" if s == 1 else ("over" if s < 1 else "under")))
    for t in sorted(settings.tempers):
        out.append(Perturbation("existence", t, "honest" if t == 1 else ("over" if t > 1 else "under")))
    for d in sorted(settings.shifts):
        out.append(Perturbation("shift", d, "honest" if d == 0 else "other"))
    for n in (-1.0, 0.0, 1.0):
        out.append(Perturbation("cardinality", n, "honest" if n == 0 else "other"))
    return tuple(out)


def perturb(density, pert: Perturbation, settings: AuditSettings):
    """``density`` (MultiBernoulli or PMBM of Gaussians) under ``pert``."""
    if pert.side == "honest":
        return density
    if pert.family == "covariance":
        return scale_covariances(density, pert.value)
    if pert.family == "existence":
        return temper_existence(density, pert.value, settings.temper_about)
    if pert.family == "shift":
        delta = np.zeros(density.dim)
        delta[0] = pert.value
        return shift_means(density, delta)
    if pert.family == "cardinality":
        if pert.value < 0:
            return drop_bernoulli(density)
        mean, cov = _most_likely(density)
        offset = np.zeros(density.dim)
        offset[: len(settings.add_offset)] = settings.add_offset[: density.dim]
        return add_bernoulli(density, settings.add_r, mean + offset, cov)
    raise ValueError(f"pert.family: expected one of {tuple(FAMILIES)}, got {pert.family!r}")


def _most_likely(density) -> tuple[np.ndarray, np.ndarray]:
    """Mean and covariance of the most likely Bernoulli of the most likely hypothesis."""
    mb = (
        density
        if isinstance(density, MultiBernoulli)
        else density.hypothesis(int(np.argmax(density.weights)))
    )
    if len(mb) == 0:
        raise ValueError("density: the cardinality probe needs a Bernoulli to place the added one by")
    k = int(np.argmax(mb.r))
    return mb.densities.means[k], mb.densities.covs[k]


def perturb_sequence(sequence, pert: Perturbation, settings: AuditSettings) -> tuple:
    """A trajectory density under ``pert``: frame by frame, with one label added or dropped throughout."""
    if pert.family != "cardinality" or pert.side == "honest":
        return tuple(perturb(mb, pert, settings) for mb in sequence)
    if pert.value < 0:  # the label of the smallest mean existence
        labels = sequence[0].labels
        mean_r = np.mean([mb.r for mb in sequence], axis=0)
        drop = labels[int(np.argmin(mean_r))]
        return tuple(mb.subset(np.flatnonzero(mb.labels != drop)) for mb in sequence)
    label = 1 + int(max(int(mb.labels.max()) for mb in sequence))
    offset = np.zeros(sequence[0].dim)
    offset[: len(settings.add_offset)] = settings.add_offset[: sequence[0].dim]
    out = []
    for mb in sequence:
        mean, cov = _most_likely(mb)
        out.append(add_bernoulli(mb, settings.add_r, mean + offset, cov, label))
    return tuple(out)


# ---------------------------------------------------------------------------
# the study and its verdicts
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class AuditRow:
    """The expected score of one measure at one perturbation of one density.

    ``expected`` E S(P', Y) and ``se`` its standard error; ``delta`` E S(P', Y) - E S(P, Y)
    and ``delta_se`` its paired standard error (0 at the honest value).
    """

    level: str
    density: str
    measure: str
    family: str
    value: float
    side: str
    expected: float
    se: float
    delta: float
    delta_se: float


@dataclass(frozen=True)
class FamilyVerdict:
    """A measure's verdict in one perturbation family of one density.

    ``argmin``: the perturbation value with the smallest expected score (the
    honest value where it ties for the smallest);
    ``better``: the values scoring better than the honest density by more
    than z standard errors (sides in ``better_sides``).
    """

    level: str
    density: str
    measure: str
    family: str
    verdict: str
    argmin: float
    better: tuple = field(default_factory=tuple)
    better_sides: tuple = field(default_factory=tuple)


def paired_rows(
    level: str, density: str, perts: Sequence[Perturbation], scores: Sequence[dict[str, MeasureDraws]]
) -> list[AuditRow]:
    """The rows of one density: each measure's expected score and paired difference per perturbation."""
    rows = []
    for measure in scores[0]:
        for fam, honest in FAMILIES.items():
            idx = [i for i, p in enumerate(perts) if p.family == fam]
            if not idx:  # a study of some families only
                continue
            h = next(i for i in idx if perts[i].value == honest)
            ref = scores[h][measure]
            for i in idx:
                m = scores[i][measure]
                rows.append(
                    AuditRow(
                        level,
                        density,
                        measure,
                        fam,
                        perts[i].value,
                        perts[i].side,
                        m.estimate,
                        _se(m.pseudo),
                        _delta(m.estimate, ref.estimate),
                        _paired_se(m.pseudo, ref.pseudo),
                    )
                )
    return rows


def _se(a: np.ndarray) -> float:
    if not np.all(np.isfinite(a)):
        return math.nan
    return float(np.std(a, ddof=1) / math.sqrt(a.size))


def _delta(a: float, b: float) -> float:
    if a == b:  # also +inf == +inf: the same score
        return 0.0
    return a - b


def _paired_se(a: np.ndarray, b: np.ndarray) -> float:
    if np.array_equal(a, b):
        return 0.0
    with np.errstate(invalid="ignore"):
        return _se(a - b)


def family_verdict(rows: Sequence[AuditRow], z: float) -> FamilyVerdict:
    """The verdict of one (density, measure, family) from its rows (one per value, the honest one included).

    * **insensitive**: every perturbation scores exactly as the honest
      density on every draw (the measure does not see the family);
    * **improper**: some perturbation scores better by more than ``z``
      standard errors of the paired difference (rewarding over-confidence,
      under-confidence, or, for shifts and added/dropped Bernoullis, a wrong density);
    * **strictly proper**: every perturbation scores worse by more than ``z`` SE;
    * **proper**: otherwise (the honest density within z SE of the best).

    A difference of +inf (a perturbation the truth is impossible under)
    counts as worse, -inf as better, whatever the standard error.
    """
    first = rows[0]
    others = [r for r in rows if r.side != "honest"]
    argmin = _argmin(rows)
    if all(r.delta == 0.0 and r.delta_se == 0.0 for r in others):
        return FamilyVerdict(first.level, first.density, first.measure, first.family, "insensitive", argmin)
    better = [r for r in others if _significant(r, z) < 0]
    if better:
        sides = {r.side for r in better}
        if sides == {"over"}:
            verdict = VERDICTS[3]
        elif sides == {"under"}:
            verdict = VERDICTS[4]
        elif sides == {"over", "under"}:
            verdict = VERDICTS[5]
        else:
            verdict = VERDICTS[6]
    else:
        verdict = VERDICTS[0] if all(_significant(r, z) > 0 for r in others) else VERDICTS[1]
    return FamilyVerdict(
        first.level,
        first.density,
        first.measure,
        first.family,
        verdict,
        argmin,
        tuple(r.value for r in better),
        tuple(sorted({r.side for r in better})),
    )


def _argmin(rows: Sequence[AuditRow]) -> float:
    """The value of the smallest expected score; the honest value where it ties for the smallest."""
    values = np.array([r.expected for r in rows])
    values = np.where(np.isnan(values), np.inf, values)
    best = values.min()
    honest = [r for r, x in zip(rows, values, strict=True) if r.side == "honest" and x == best]
    return float(honest[0].value if honest else rows[int(np.argmin(values))].value)


def _significant(row: AuditRow, z: float) -> int:
    """+1 worse, -1 better than the honest density by more than z SE, else 0."""
    d, se = row.delta, row.delta_se
    if math.isinf(d):
        return 1 if d > 0 else -1
    if math.isnan(d) or math.isnan(se):
        return 0
    if se == 0.0:
        return int(np.sign(d))
    return 1 if d > z * se else (-1 if d < -z * se else 0)


def overall_verdict(verdicts: Sequence[FamilyVerdict]) -> str:
    """One measure's verdict over densities and families.

    Improper anywhere: improper (naming what it rewards); else strictly
    proper if strictly proper everywhere; else proper (with the families it
    is insensitive to, when there are). "no-op" verdicts (a probe that
    leaves the density unchanged) are left out.
    """
    verdicts = [v for v in verdicts if v.verdict != "no-op"]
    kinds = {v.verdict for v in verdicts}
    improper = sorted(k for k in kinds if k.startswith("improper"))
    if improper:
        rewards = sorted({k.split("rewards ")[1].rstrip(")") for k in improper})
        return "improper (rewards " + "; ".join(rewards) + ")"
    if kinds == {"strictly proper"}:
        return "strictly proper"
    blind = sorted({v.family for v in verdicts if v.verdict == "insensitive"})
    return "proper" + (f" (insensitive to {', '.join(blind)})" if blind else "")


def study(
    level: str,
    name: str,
    density,
    settings: AuditSettings,
    progress: Callable[[str], None] | None = None,
) -> list[AuditRow]:
    """Draw ``settings.n_draws`` truths from ``density`` and score it and every perturbation on them.

    ``level`` "frame": ``density`` is a MultiBernoulli or PMBM; "trajectory":
    a sequence of labelled Gaussian MBs (:func:`synthetic_trajectory_density`).
    """
    perts = perturbations(settings)
    if level == "frame":
        truths = sample(density, settings.n_draws, np.random.default_rng([settings.seed, 0])).as_list()
        score = lambda d: frame_scores(d, truths, settings)  # noqa: E731
        change = perturb
    elif level == "trajectory":
        truths = sample_trajectories(density, settings.n_draws, [settings.seed, 0])
        score = lambda d: trajectory_scores(d, truths, settings)  # noqa: E731
        change = perturb_sequence
    else:
        raise ValueError(f"level: expected 'frame' or 'trajectory', got {level!r}")
    scores = []
    for pert in perts:
        if progress:
            progress(f"{name}: {pert.family} {pert.value:g}")
        scores.append(score(change(density, pert, settings)))
    return paired_rows(level, name, perts, scores)


def verdicts(rows: Sequence[AuditRow], z: float) -> list[FamilyVerdict]:
    """:func:`family_verdict` of every (level, density, measure, family) in ``rows``.

    A family in which *every* measure of a density is insensitive (even the
    NLL's, which sees any change of the density) leaves that density
    unchanged, e.g. existence tempering of a density whose r are all 0 or 1:
    its verdicts become "no-op" and say nothing about the measures.
    """
    groups: dict[tuple, list[AuditRow]] = {}
    for r in rows:
        groups.setdefault((r.level, r.density, r.measure, r.family), []).append(r)
    out = [family_verdict(g, z) for g in groups.values()]
    seen: dict[tuple, set] = {}
    for v in out:
        seen.setdefault((v.level, v.density, v.family), set()).add(v.verdict)
    noop = {k for k, kinds in seen.items() if kinds == {"insensitive"}}
    return [replace(v, verdict="no-op") if (v.level, v.density, v.family) in noop else v for v in out]


def overall(family_verdicts: Sequence[FamilyVerdict]) -> dict[str, str]:
    """Measure -> :func:`overall_verdict` over its densities and families."""
    by: dict[str, list[FamilyVerdict]] = {}
    for v in family_verdicts:
        by.setdefault(v.measure, []).append(v)
    return {m: overall_verdict(vs) for m, vs in by.items()}


# ---------------------------------------------------------------------------
# closed forms (docs/audit.md, "Derivations")
# ---------------------------------------------------------------------------


def expected_nll_bernoulli(r: float, r_est: float, s: float, d: int) -> float:
    """E_{Y~P} NLL(P', Y) for P one Bernoulli (r, N(m, P)) and P' = (r_est, N(m, s P)), in d dimensions.

    With probability 1 - r the truth is empty (NLL -log(1 - r_est)); else
    y ~ N(m, P) and NLL = -log r_est + (d log(2 pi) + log det(s P) + tr((s P)^-1 P)) / 2. The terms
    that do not depend on (r_est, s) (log det P) are left out, so this is the expectation up to the
    constant r log det(P) / 2:

        -(r log r_est + (1 - r) log(1 - r_est)) + r d (log(2 pi) + log s + 1 / s) / 2,

    a cross-entropy in r_est (smallest at r_est = r) plus a term smallest at s = 1.
    """
    with np.errstate(divide="ignore"):
        bern = -(r * np.log(r_est) if r > 0 else 0.0) - ((1 - r) * np.log1p(-r_est) if r < 1 else 0.0)
    return float(bern + r * d * (math.log(2 * math.pi) + math.log(s) + 1.0 / s) / 2.0)


def expected_pgospa_bernoulli(r: float, r_est: float, s: float, sigma2: float, c: float) -> float:
    """E_{Y~P} P-GOSPA^2 (p = 2, alpha = 2) against P' for one Bernoulli in 2-D with covariance sigma2 I.

    P = (r, N(m, sigma2 I)), P' = (r_est, N(m, s sigma2 I)). With probability
    1 - r the truth is empty and the cost is r_est c^2 / 2 (false). Else the
    truth y is a point at W2^2 = ||y - m||^2 + tr(s sigma2 I) = X + a from P'
    (X ~ Exp(mean 2 sigma2), a = 2 s sigma2), paired when W2 < c:
    r_est min(W2^2, c^2) + (1 - r_est) c^2 / 2. So

        E = (1 - r) r_est c^2 / 2 + r [ r_est g(s) + (1 - r_est) c^2 / 2 ],
        g(s) = E min(X + a, c^2) = a + 2 sigma2 (1 - exp(-(c^2 - a) / (2 sigma2)))  (a < c^2; else c^2),

    linear in r_est (smallest at r_est = 0 or 1, never at r unless the slope
    c^2 (1 - 2 r) / 2 + r g(s) is 0) and increasing in s (smallest as s -> 0).
    """
    a = 2.0 * s * sigma2
    c2 = c * c
    g = c2 if a >= c2 else a + 2.0 * sigma2 * (1.0 - math.exp(-(c2 - a) / (2.0 * sigma2)))
    return float((1 - r) * r_est * c2 / 2 + r * (r_est * g + (1 - r_est) * c2 / 2))


__all__ = [
    "FAMILIES",
    "expected_nll_bernoulli",
    "expected_pgospa_bernoulli",
    "VERDICTS",
    "AuditRow",
    "FamilyVerdict",
    "Perturbation",
    "family_verdict",
    "overall",
    "overall_verdict",
    "paired_rows",
    "perturb",
    "perturb_sequence",
    "perturbations",
    "study",
    "verdicts",
]
