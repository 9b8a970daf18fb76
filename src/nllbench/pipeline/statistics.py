"""The statistics over seeds: summaries with bootstrap intervals, paired comparisons, ranks with ties.

Every function here reads the per-run table (one value per run and measure,
:func:`nllbench.pipeline.collect.runs_frame`) or a table made from it, and
computes the same numbers from the same rows whatever the order the jobs ran
in. Infinite values (NLL +inf for an impossible truth, MOTA -inf with no truth)
are exact everywhere: nothing is averaged into NaN.

Formulas and sources
--------------------
Sample quantile (:func:`quantile`)
    Linear interpolation between the sorted values ``v[0] <= ... <= v[n-1]``:
    with ``h = (n - 1) p``, ``Q(p) = v[floor h] + (h - floor h) (v[ceil h] - v[floor h])``
    (Hyndman and Fan, "Sample quantiles in statistical packages", The American
    Statistician 50(4), 1996, definition 7; numpy's default), with
    ``inf - inf`` never formed. Medians and quartiles use it.
Summary (:func:`summarise`)
    ``mean = sum(x) / n``; ``std = sqrt(sum((x - mean)^2) / (n - 1))`` (0 for
    n = 1); ``sem = std / sqrt(n)``; all three are the infinity when a run is
    infinite.
Percentile bootstrap interval of the mean (:func:`bootstrap_mean_interval`)
    ``B = 4000`` resamples of the n runs with replacement (generator seeded
    with :data:`BOOTSTRAP_SEED`); the interval is ``[Q(alpha/2), Q(1 - alpha/2)]``
    of the B resampled means, ``alpha = 0.05`` (Efron and Tibshirani, *An
    Introduction to the Bootstrap*, 1993, ch. 13).
Paired difference (:func:`paired_difference`, :func:`paired`)
    ``d_i = a_i - b_i`` over the seeds both filters ran, leaving out the seeds
    where both are the same infinity; mean, bootstrap interval and median of d
    as above.
Wilcoxon signed-rank test (:func:`wilcoxon_p`)
    Zero differences dropped (Wilcoxon's own rule), the rest ranked by
    ``|d_i|`` (average ranks for ties); ``W+ = sum of the ranks of d_i > 0``;
    two-sided p-value of W+ from ``scipy.stats.wilcoxon`` (its
    ``method="auto"`` in scipy 1.17: the exact null distribution for n <= 50
    without ties, a permutation test over the 2^n sign flips for n <= 13 with
    ties, else the normal approximation). Wilcoxon, "Individual comparisons by ranking methods",
    Biometrics Bulletin 1(6), 1945. Infinite differences enter through
    :func:`rank_proxy` with their sign and the largest ranks.
Ranks with ties (:func:`ranking`)
    g beats f when the paired bootstrap interval of their difference lies
    entirely on g's better side (:data:`BETTER_LOW`); ``rank(f) = 1 + #{g : g
    beats f}`` (standard competition ranking, "1224"), so filters that no
    interval separates share a rank.
Rank agreement (:func:`rank_agreement`)
    Kendall's tau-b between two measures' orderings of the filters,
    ``tau_b = (P - Q) / sqrt((P + Q + T_x)(P + Q + T_y))`` with P concordant and
    Q discordant pairs and T_x, T_y pairs tied in one ordering only
    (``scipy.stats.kendalltau``; Kendall, Biometrika 30, 1938, and 33, 1945),
    averaged over the settings with at least three filters.

The tables are described column by column in ``docs/statistics.md``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from nllbench.measures.declarations import declared_scores
from nllbench.pipeline.cube import KEYS

BOOTSTRAP_SEED = 20210916  # fixed: the same runs give the same intervals, whatever the job order
BOOTSTRAP_RESAMPLES = 4000
# the direction in which each measure is better (rankings, paired comparisons): every declared score
# with a direction (nllbench.measures.declarations), True where lower is better
BETTER_LOW = {s.name: s.better == "lower" for s in declared_scores() if s.better is not None}
# scores whose ideal is a value, not an end (ANEES: the state dimension; inside-ellipse share:
# 0.95; interval coverage: 0.90): compared in paired.csv, never ranked
PAIRED_ONLY = [s.name for s in declared_scores() if s.ideal]
# measures ranked in the leaderboard (tables/ranking.csv ranks every measure of BETTER_LOW); the NLL and the
# trajectory NLL at the leaderboard's Q, the others at q = 0
RANKED = [s.name for s in declared_scores() if s.leaderboard]
#: Measures that depend on the Murty budget Q (their rows carry it; the others have q = 0).
Q_MEASURES = tuple(s.name for s in declared_scores() if s.q_dependent)


def quantile(values, p: float) -> float:
    """Linear-interpolation quantile (numpy's default) that is exact with infinite values.

    With the sorted values ``v[0] <= ... <= v[n-1]`` and ``h = (n - 1) p``:
    ``Q(p) = v[floor h] + (h - floor h) (v[ceil h] - v[floor h])`` (Hyndman and
    Fan, The American Statistician 50(4), 1996, definition 7).
    ``numpy.quantile`` interpolates ``inf - inf`` into NaN; here two equal
    neighbours give that value and a finite/infinite pair gives the infinite
    one (or the finite one when the position falls on it exactly).

    Parameters
    ----------
    values : (n,) array_like, n >= 1, no NaN
    p : float in [0, 1]
    """
    v = np.sort(np.asarray(values, dtype=float))
    h = (v.size - 1) * p
    lo, hi = int(math.floor(h)), int(math.ceil(h))
    if v[lo] == v[hi] or h == lo:
        return float(v[lo])
    if np.isinf(v[lo]) or np.isinf(v[hi]):
        return float(v[hi] if np.isinf(v[hi]) else v[lo])
    return float(v[lo] + (h - lo) * (v[hi] - v[lo]))


def bootstrap_mean_interval(values, level: float = 0.95, seed: int = BOOTSTRAP_SEED) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean (Efron & Tibshirani 1993, ch. 13).

    ``[Q(alpha/2), Q(1 - alpha/2)]`` of the means of ``B`` resamples,
    ``alpha = 1 - level``, ``B = BOOTSTRAP_RESAMPLES``, ``Q`` as in
    :func:`quantile`. Seeds are resampled with replacement ``BOOTSTRAP_RESAMPLES`` times from a
    generator seeded with ``seed``, so the interval is reproducible. The
    interval lies within [min, max] of the data (never below zero for a
    non-negative quantity); a resample that draws an infinite run has an
    infinite mean, so infinities reach the interval only as often as they
    would reach a rerun.

    Parameters
    ----------
    values : (n,) array_like, no NaN, no mixed signs of infinity
    """
    v = np.asarray(values, dtype=float)
    if v.size == 1:
        return float(v[0]), float(v[0])
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, v.size, size=(BOOTSTRAP_RESAMPLES, v.size))
    means = v[idx].mean(axis=1)  # one sign of infinity at most: an infinite draw gives that infinity
    alpha = (1.0 - level) / 2.0
    return quantile(means, alpha), quantile(means, 1.0 - alpha)


def _stats(v: np.ndarray, where: dict) -> dict:
    """Summary statistics of one group of runs (see :func:`summarise`).

    ``mean = sum(v) / n``, ``std = sqrt(sum((v - mean)^2) / (n - 1))`` (0 when
    n = 1), ``sem = std / sqrt(n)``; each is the runs' infinity when one is
    infinite (``where`` names the group in the error for mixed signs).
    """
    n = v.size
    n_inf = int(np.isinf(v).sum())
    if n_inf and len(set(np.sign(v[np.isinf(v)]).tolist())) > 1:
        raise ValueError(f"runs: both +inf and -inf values for {where}")
    if n_inf:
        mean = std = sem = math.inf * float(np.sign(v[np.isinf(v)][0]))
    else:
        mean = float(v.mean())
        std = float(v.std(ddof=1)) if n > 1 else 0.0
        sem = std / math.sqrt(n) if n > 1 else 0.0
    lo, hi = bootstrap_mean_interval(v)
    finite = v[np.isfinite(v)]
    if finite.size:
        f_lo, f_hi = bootstrap_mean_interval(finite)
        f_stats = dict(
            finite_mean=float(finite.mean()),
            finite_median=quantile(finite, 0.5),
            finite_q25=quantile(finite, 0.25),
            finite_q75=quantile(finite, 0.75),
            finite_ci95_low=f_lo,
            finite_ci95_high=f_hi,
        )
    else:
        f_stats = dict.fromkeys(
            [
                "finite_mean",
                "finite_median",
                "finite_q25",
                "finite_q75",
                "finite_ci95_low",
                "finite_ci95_high",
            ],
            math.nan,
        )
    return dict(
        n=n,
        n_infinite=n_inf,
        mean=mean,
        std=std,
        sem=sem,
        ci95_low=lo,
        ci95_high=hi,
        median=quantile(v, 0.5),
        q25=quantile(v, 0.25),
        q75=quantile(v, 0.75),
        min=float(v.min()),
        max=float(v.max()),
        **f_stats,
    )


def summarise(runs):
    """Summary statistics over seeds, per setting and measure.

    Columns: the keys, ``measure``, ``n`` (runs), ``n_infinite`` (runs whose
    value is infinite), ``mean``, ``std``, ``sem``, ``ci95_low``/``ci95_high``
    (seeded percentile bootstrap interval of the mean, see
    :func:`bootstrap_mean_interval`), ``median``, ``q25``/``q75`` (the
    interquartile range), ``min``, ``max``, and the same over the finite runs
    only (``finite_mean``, ``finite_median``, ``finite_q25``, ``finite_q75``,
    ``finite_ci95_low``, ``finite_ci95_high``; empty when every run is
    infinite). With an infinite run, ``mean``, ``std`` and ``sem`` are that
    infinity; quantiles are exact order statistics (finite while fewer than
    that share of runs is infinite). Nothing is NaN except the finite-only
    columns of an all-infinite group.
    """
    import pandas as pd

    rows = []
    for key, group in runs.groupby(KEYS + ["measure"], sort=True, dropna=False):
        v = group["value"].to_numpy(dtype=float)
        where = dict(zip(KEYS + ["measure"], key, strict=True))
        if np.isnan(v).any():
            raise ValueError(f"runs: NaN value for {where}")
        rows.append({**where, **_stats(v, where)})
    return pd.DataFrame(rows)


PAIR_KEYS = ["scenario", "clutter", "pd", "cov_scale", "temper", "marginal", "q", "measure"]


def rank_proxy(d: np.ndarray) -> np.ndarray:
    """Infinite differences replaced by finite values beyond every finite one, signs kept.

    ``+-inf`` becomes ``+-(2 max |d_finite| + 1)`` (``+-3`` when no difference
    is finite). The Wilcoxon signed-rank statistic depends only on the signs and the ranks
    of |d|, which this replacement preserves.
    """
    finite = d[np.isfinite(d)]
    big = 2.0 * (float(np.abs(finite).max()) if finite.size else 1.0) + 1.0
    return np.where(np.isinf(d), np.sign(d) * big, d)


def paired_difference(a, b) -> dict:
    """Paired comparison of two filters' runs on the same seeds.

    Parameters
    ----------
    a, b : (n,) array_like
        One value per seed, in the same seed order.

    Returns
    -------
    dict
        ``n_seeds``; ``n_both_infinite`` (seeds where both are infinite with
        the same sign: their difference is undefined and left out);
        ``n_compared`` (the rest); ``mean_difference`` (mean of a - b over the
        compared seeds, +-inf when one side is infinite on some seed; NaN, undefined,
        when a is +inf on one seed and b on another: the interval is then (-inf, +inf)),
        ``ci95_low``/``ci95_high`` (seeded percentile bootstrap of that mean),
        ``median_difference``, ``a_lower`` / ``b_lower`` (seeds where a (b) is
        strictly lower) and ``wilcoxon_p`` (two-sided Wilcoxon signed-rank
        test, ``scipy.stats.wilcoxon``, zero differences dropped; 1 when
        every compared difference is zero; NaN only when no seed is compared).
    """
    row, signed = _paired_without_test(a, b)
    return {**row, "wilcoxon_p": wilcoxon_p([signed])[0]}


def _median(v: np.ndarray) -> float:
    """The median of ``v`` (:func:`quantile`), NaN when its two middle values are -inf and +inf."""
    s, n = np.sort(v), v.size
    if n % 2 == 0 and s[n // 2 - 1] == -math.inf and s[n // 2] == math.inf:
        return math.nan
    return quantile(v, 0.5)


def _paired_without_test(a, b) -> tuple[dict, np.ndarray | None]:
    """:func:`paired_difference` but the test: (row without ``wilcoxon_p``, the non-zero
    differences to test, ranks kept by :func:`rank_proxy`; None when no seed is compared)."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    both = np.isinf(a) & np.isinf(b) & (np.sign(a) == np.sign(b))
    d = a[~both] - b[~both]
    out = dict(n_seeds=int(a.size), n_both_infinite=int(both.sum()), n_compared=int(d.size))
    if d.size == 0:
        return {
            **out,
            **dict.fromkeys(["mean_difference", "ci95_low", "ci95_high", "median_difference"], math.nan),
            "a_lower": 0,
            "b_lower": 0,
        }, None
    infinite = d[np.isinf(d)]
    if (infinite > 0).any() and (infinite < 0).any():
        # each side is infinitely worse on some seed: the mean difference is undefined (inf - inf), and
        # no interval can exclude zero; the signed ranks (median, Wilcoxon) still compare them
        stats = {"mean": math.nan, "ci95_low": -math.inf, "ci95_high": math.inf, "median": _median(d)}
    else:
        stats = _stats(d, {"pair": "difference"})
    row = {
        **out,
        "mean_difference": stats["mean"],
        "ci95_low": stats["ci95_low"],
        "ci95_high": stats["ci95_high"],
        "median_difference": stats["median"],
        "a_lower": int((d < 0).sum()),
        "b_lower": int((d > 0).sum()),
    }
    return row, rank_proxy(d[d != 0])


def wilcoxon_p(samples: list) -> list[float]:
    """Two-sided Wilcoxon signed-rank p-values (``scipy.stats.wilcoxon``, zero differences already
    dropped) of each sample: NaN for None, 1 for an empty one.

    The statistic is ``W+ = sum of the ranks of |d_i| over d_i > 0`` (average
    ranks for ties; Wilcoxon, Biometrics Bulletin 1(6), 1945); scipy 1.17's
    ``method="auto"`` gives the p-value from the exact null distribution (n <= 50,
    no ties), a permutation test over the 2^n sign flips (n <= 13 with ties) or
    the normal approximation (otherwise).

    Samples of equal length, with or without tied magnitudes, are tested in
    one vectorised call (``axis=1``), which gives the same p-values as one call
    each (checked in the tests) at a fraction of the time: scipy's per-call
    overhead was most of the aggregation's paired table.
    """
    from scipy.stats import wilcoxon

    out = [math.nan if x is None else 1.0 for x in samples]
    groups: dict[tuple[int, bool], list[int]] = {}
    for i, x in enumerate(samples):
        if x is not None and x.size:
            # tied |d| make scipy use a permutation test for the whole call: kept apart
            tied = np.unique(np.abs(x)).size < x.size
            groups.setdefault((x.size, tied), []).append(i)
    for idx in groups.values():
        p = wilcoxon(np.stack([samples[i] for i in idx]), zero_method="wilcox", axis=1).pvalue
        for i, v in zip(idx, np.atleast_1d(p), strict=True):
            out[i] = float(v)
    return out


def paired(runs):
    """Paired differences between every two filters, per setting and measure (tables/paired.csv).

    Runs of different filters with the same seed share the truth and the
    measurements, so their difference removes the scenario's own variation.
    Rows: one per (setting, measure, filter_a < filter_b) over the seeds both
    filters ran; columns as returned by :func:`paired_difference`.
    """
    import pandas as pd

    rows, samples = [], []
    measures = runs[runs["measure"].isin(list(BETTER_LOW) + PAIRED_ONLY)]
    for key, group in measures.groupby(PAIR_KEYS, sort=True, dropna=False):
        wide = group.pivot(index="seed", columns="filter", values="value")
        names = sorted(wide.columns)
        for i, fa in enumerate(names):
            for fb in names[i + 1 :]:
                both = wide[[fa, fb]].dropna()
                if both.empty:
                    continue
                row = dict(zip(PAIR_KEYS, key, strict=True), filter_a=fa, filter_b=fb)
                summary, signed = _paired_without_test(both[fa].to_numpy(), both[fb].to_numpy())
                row.update(summary)
                rows.append(row)
                samples.append(signed)
    for row, p in zip(rows, wilcoxon_p(samples), strict=True):
        row["wilcoxon_p"] = p
    cols = PAIR_KEYS + ["filter_a", "filter_b", "n_seeds", "n_both_infinite", "n_compared"]
    cols += [
        "mean_difference",
        "ci95_low",
        "ci95_high",
        "median_difference",
        "a_lower",
        "b_lower",
        "wilcoxon_p",
    ]
    return pd.DataFrame(rows, columns=cols)


def ranking(pairs):
    """Rank filters per setting and measure; filters whose paired interval covers 0 tie.

    A filter is beaten by another when the paired bootstrap interval of their
    difference lies entirely on the other's better side (both ends beyond
    zero). Its ``rank`` is 1 + the number of filters that beat it (competition
    ranking), so filters that no interval separates share a rank. Infinite
    differences count as separated. Columns: the setting keys, ``measure``,
    ``filter``, ``rank``, ``beaten_by`` and ``beats`` (space-separated names),
    ``tied_with``.
    """
    import pandas as pd

    rows = []
    ranked = pairs[pairs["measure"].isin(list(BETTER_LOW))]
    for key, group in ranked.groupby(PAIR_KEYS, sort=True, dropna=False):
        low = BETTER_LOW[key[-1]]
        names = sorted(set(group["filter_a"]) | set(group["filter_b"]))
        beaten_by: dict[str, list[str]] = {f: [] for f in names}
        for r in group.itertuples():
            a_better = r.ci95_high < 0 if low else r.ci95_low > 0
            b_better = r.ci95_low > 0 if low else r.ci95_high < 0
            if a_better:
                beaten_by[r.filter_b].append(r.filter_a)
            elif b_better:
                beaten_by[r.filter_a].append(r.filter_b)
        for f in names:
            beats = [g for g in names if f in beaten_by[g]]
            tied = [g for g in names if g != f and g not in beats and g not in beaten_by[f]]
            rows.append(
                {
                    **dict(zip(PAIR_KEYS, key, strict=True)),
                    "filter": f,
                    "rank": 1 + len(beaten_by[f]),
                    "beaten_by": " ".join(sorted(beaten_by[f])),
                    "beats": " ".join(beats),
                    "tied_with": " ".join(tied),
                }
            )
    cols = PAIR_KEYS + ["filter", "rank", "beaten_by", "beats", "tied_with"]
    return pd.DataFrame(rows, columns=cols).sort_values(PAIR_KEYS + ["rank", "filter"], kind="stable")


def rank_agreement(summary, q: int, measures: Sequence[str]):
    """Mean Kendall tau between the filter rankings of each pair of ``measures``, over settings.

    Per (scenario, clutter, pd) at covariance scale 1, each measure ranks the
    filters by its summary mean (the NLL at ``q`` by its finite mean, a filter
    with infinite runs last; better-is-higher measures negated), and
    ``scipy.stats.kendalltau`` compares every two rankings on the filters both
    measures have (P-GOSPA, say, has no PHD/CPHD filter). Returns the
    measures present in ``summary`` (in the given order) and the matrix of
    mean tau over settings (NaN where no setting has three such filters).
    """
    from scipy.stats import kendalltau

    present = set(summary["measure"])
    measures = [m for m in measures if m in present]  # metrics files before T-GOSPA/HOTA lack them
    taus = {(a, b): [] for a in measures for b in measures}
    base = summary[summary["cov_scale"] == 1.0]
    for _, g in base.groupby(["scenario", "clutter", "pd"], sort=True):
        table = {}
        for m in measures:
            sub = g[(g["measure"] == m) & (g["q"] == (q if m == "nll" else 0))].sort_values("filter")
            vals = sub["finite_mean"].to_numpy() if m == "nll" else sub["mean"].to_numpy()
            if m == "nll":  # a filter with infinite runs ranks last
                vals = np.where(sub["n_infinite"].to_numpy() > 0, np.inf, vals)
            keys = zip(*(sub[c] for c in ("filter", "temper", "marginal") if c in sub), strict=True)
            table[m] = dict(zip(keys, vals if BETTER_LOW[m] else -vals, strict=True))
        for a in measures:
            for b in measures:
                common = sorted(set(table[a]) & set(table[b]))
                if len(common) < 3:
                    continue
                tau = kendalltau([table[a][f] for f in common], [table[b][f] for f in common]).statistic
                if np.isfinite(tau):
                    taus[(a, b)].append(tau)
    mat = np.array([[np.mean(taus[(a, b)]) if taus[(a, b)] else np.nan for b in measures] for a in measures])
    return measures, mat
