"""Figures from stored tables: they read results and compute no measure.

Each ``fig_*`` function takes tables (pandas DataFrames written by
:mod:`nllbench.aggregate`, or the example files written by ``nllbench example
--out-dir``) and returns a ``matplotlib.figure.Figure``; :func:`save` writes
PNG and PDF with provenance in their metadata.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

# the direction in which each measure is better, for rankings
BETTER_LOW = {"nll": True, "gospa_mean": True, "ospa_mean": True, "mota": False, "motp": True, "idf1": False}
MEASURE_LABEL = {
    "nll": "NLL",
    "gospa_mean": "GOSPA",
    "ospa_mean": "OSPA",
    "mota": "MOTA",
    "motp": "MOTP",
    "idf1": "IDF1",
}


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import seaborn as sns

    sns.set_theme(style="whitegrid", context="paper")
    return plt, sns


def save(fig, path: str | Path, provenance: dict | None = None) -> list[Path]:
    """Write ``path`` (.png) and the same stem as .pdf, atomically, with provenance metadata."""
    import os

    from nllbench.io import software_versions

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    desc = json.dumps({"software_versions": software_versions(), "config": provenance or {}}, sort_keys=True)
    out = []
    for suffix, meta in ((".png", {"Description": desc}), (".pdf", {"Subject": desc, "CreationDate": None})):
        target = path.with_suffix(suffix)
        tmp = target.with_name(f".{target.name}.tmp{suffix}")
        fig.savefig(tmp, dpi=150, bbox_inches="tight", metadata=meta)
        os.replace(tmp, target)
        out.append(target)
    return out


def _pick(summary, **filters):
    sel = summary
    for k, v in filters.items():
        sel = sel[sel[k] == v]
    return sel


def _errorbars(ax, data, x: str, label_col: str = "filter"):
    for name, g in data.groupby(label_col, sort=True):
        g = g.sort_values(x)
        finite = np.isfinite(g["mean"].to_numpy())
        if not finite.any():
            continue
        gx, gm = g[x].to_numpy()[finite], g["mean"].to_numpy()[finite]
        err = np.vstack([gm - g["ci95_low"].to_numpy()[finite], g["ci95_high"].to_numpy()[finite] - gm])
        inf_note = int((~finite).sum())
        label = f"{name} (+{inf_note} infinite)" if inf_note else str(name)
        ax.errorbar(gx, gm, yerr=err, marker="o", capsize=3, label=label)


def fig_vs_clutter(summary, q: int):
    """NLL and GOSPA against the clutter rate, per filter, with 95 % intervals over seeds."""
    plt, _ = _plt()
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    for ax, (measure, qq, title) in zip(
        axes, (("nll", q, f"NLL (Q = {q}, position)"), ("gospa_mean", 0, "GOSPA (c = 2, p = 1)")), strict=True
    ):
        _errorbars(ax, _pick(summary, measure=measure, q=qq, cov_scale=1.0), "clutter")
        ax.set_xlabel("clutter rate (per scan)")
        ax.set_title(title)
    axes[0].set_ylabel("mean over steps, mean over seeds")
    axes[1].legend(fontsize=7)
    return fig


def fig_decomposition(summary, q: int):
    """Mean NLL terms (localisation, missed, false, association, ...) per filter and clutter rate."""
    plt, _ = _plt()
    terms = [
        "nll_localization",
        "nll_missed",
        "nll_false",
        "nll_cardinality",
        "nll_mixture",
        "nll_association",
    ]
    data = summary[(summary["q"] == q) & (summary["cov_scale"] == 1.0) & summary["measure"].isin(terms)]
    settings = sorted(data["clutter"].unique())
    fig, axes = plt.subplots(1, len(settings), figsize=(4 * len(settings), 4), squeeze=False)
    for ax, clutter in zip(axes[0], settings, strict=True):
        sub = data[data["clutter"] == clutter]
        filters = sorted(sub["filter"].unique())
        bottom_pos = np.zeros(len(filters))
        bottom_neg = np.zeros(len(filters))
        for term in terms:
            vals = np.array(
                [float(sub[(sub["filter"] == f) & (sub["measure"] == term)]["mean"].sum()) for f in filters]
            )
            vals = np.where(np.isfinite(vals), vals, np.nan)  # an infinite term is drawn as missing
            base = np.where(vals >= 0, bottom_pos, bottom_neg)
            ax.bar(filters, vals, bottom=base, label=term.removeprefix("nll_"))
            bottom_pos += np.where(vals >= 0, np.nan_to_num(vals), 0)
            bottom_neg += np.where(vals < 0, np.nan_to_num(vals), 0)
        ax.set_title(f"clutter {clutter:g}")
        ax.tick_params(axis="x", rotation=45)
    axes[0][0].set_ylabel(f"mean NLL term (Q = {q})")
    axes[0][-1].legend(fontsize=7)
    return fig


def fig_nll_vs_q(summary, timing):
    """NLL against Q (and the exact value where computable); evaluation time against Q."""
    plt, _ = _plt()
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    nll = summary[(summary["measure"] == "nll") & (summary["cov_scale"] == 1.0)]
    clutter = sorted(nll["clutter"].unique())[0]
    nll = nll[nll["clutter"] == clutter]
    _errorbars(axes[0], nll, "q")
    exact = summary[
        (summary["measure"] == "nll_exact") & (summary["cov_scale"] == 1.0) & (summary["clutter"] == clutter)
    ]
    for _, row in exact.iterrows():
        if np.isfinite(row["mean"]):
            axes[0].axhline(row["mean"], ls=":", lw=1, color="gray")
    axes[0].set_xlabel("Q (associations per hypothesis)")
    axes[0].set_ylabel(f"NLL (clutter {clutter:g}); dotted: exact")
    if len(timing):
        t = timing[timing["cov_scale"] == 1.0] if "cov_scale" in timing else timing
        col = "nll_seconds" if "nll_seconds" in t else "seconds"
        t = t.groupby(["filter", "q"], as_index=False)[col].mean()
        for name, g in t.groupby("filter", sort=True):
            axes[1].plot(g["q"], g[col], marker="o", label=name)
        axes[1].set_yscale("log")
    for ax in axes:
        ax.set_xscale("log")
        qs = sorted(summary[summary["measure"] == "nll"]["q"].unique())
        ax.set_xticks(qs, [str(int(q)) for q in qs])
        ax.minorticks_off()
    axes[1].set_xlabel("Q")
    axes[1].set_ylabel("NLL evaluation time per run (s)")
    axes[1].legend(fontsize=7)
    return fig


def probe_q(summary) -> int:
    """The Q at which the covariance-scale probes were evaluated."""
    probed = summary[(summary["measure"] == "nll") & (summary["cov_scale"] != 1.0)]["q"].unique()
    if probed.size == 0:
        raise ValueError("summary: no covariance-scale probe (cov_scale != 1) was evaluated")
    return int(probed.max())


def fig_calibration(summary, q: int | None = None):
    """NLL and GOSPA against the covariance scale s (the point estimates do not move)."""
    plt, _ = _plt()
    q = probe_q(summary) if q is None else q
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    clutter = sorted(summary["clutter"].unique())[0]
    sub = summary[summary["clutter"] == clutter]
    _errorbars(axes[0], _pick(sub, measure="nll", q=q), "cov_scale")
    _errorbars(axes[1], _pick(sub, measure="gospa_mean", q=0), "cov_scale")
    scales = sorted(sub[sub["measure"] == "gospa_mean"]["cov_scale"].unique())
    for ax, title in zip(axes, (f"NLL (Q = {q})", "GOSPA"), strict=True):
        ax.set_xscale("log")
        ax.set_xticks(scales, [f"{x:g}" for x in scales])
        ax.minorticks_off()
        ax.set_xlabel("covariance scale s")
        ax.set_title(f"{title}, clutter {clutter:g}")
    axes[1].legend(fontsize=7)
    return fig


def fig_theorem1(steps):
    """Both sides of Theorem 1 at every evaluated step (parity plot)."""
    plt, _ = _plt()
    lhs = steps[steps["measure"] == "theorem1_lhs"]["value"].to_numpy()
    rhs = steps[steps["measure"] == "theorem1_rhs"]["value"].to_numpy()
    diff = steps[steps["measure"] == "theorem1_difference"]["value"].to_numpy()
    fig, ax = plt.subplots(figsize=(5, 5))
    ax.scatter(rhs, lhs, s=6, alpha=0.5)
    if lhs.size:
        lo, hi = float(min(lhs.min(), rhs.min())), float(max(lhs.max(), rhs.max()))
        ax.plot([lo, hi], [lo, hi], color="black", lw=0.8)
    worst = float(np.max(np.abs(diff))) if diff.size else 0.0
    ax.set_xlabel("right-hand side: V(1-rho) + GOSPA-like assignment cost")
    ax.set_ylabel("NLL of the theorem's PMB (Q = 1)")
    ax.set_title(f"Theorem 1: {lhs.size} steps, max |difference| = {worst:.1e}")
    return fig


def rank_agreement(summary, q: int):
    """Mean Kendall tau between the filter rankings of each pair of measures, over settings."""
    from scipy.stats import kendalltau

    measures = list(BETTER_LOW)
    taus = {(a, b): [] for a in measures for b in measures}
    base = summary[summary["cov_scale"] == 1.0]
    for _, g in base.groupby(["scenario", "clutter", "pd"], sort=True):
        table = {}
        for m in measures:
            sub = g[(g["measure"] == m) & (g["q"] == (q if m == "nll" else 0))].sort_values("filter")
            vals = sub["finite_mean"].to_numpy() if m == "nll" else sub["mean"].to_numpy()
            if m == "nll":  # a filter with infinite runs ranks last
                vals = np.where(sub["n_infinite"].to_numpy() > 0, np.inf, vals)
            table[m] = vals if BETTER_LOW[m] else -vals
        n = {len(v) for v in table.values()}
        if len(n) != 1 or n.pop() < 3:
            continue
        for a in measures:
            for b in measures:
                tau = kendalltau(table[a], table[b]).statistic
                if np.isfinite(tau):
                    taus[(a, b)].append(tau)
    mat = np.array([[np.mean(taus[(a, b)]) if taus[(a, b)] else np.nan for b in measures] for a in measures])
    return measures, mat


def fig_rank_agreement(summary, q: int):
    """Heat map of rank agreement (Kendall tau) between measures across filters and settings."""
    plt, sns = _plt()
    measures, mat = rank_agreement(summary, q)
    fig, ax = plt.subplots(figsize=(6, 5))
    labels = [MEASURE_LABEL[m] for m in measures]
    sns.heatmap(
        mat,
        vmin=-1,
        vmax=1,
        cmap="vlag",
        annot=True,
        fmt=".2f",
        xticklabels=labels,
        yticklabels=labels,
        ax=ax,
    )
    ax.set_title(f"Agreement of filter rankings (Kendall tau; NLL at Q = {q})")
    return fig


def _ellipse(ax, mean, cov, **kw) -> float:
    """Draw the 2-sigma ellipse; return its largest half-axis (for the view limits)."""
    from matplotlib.patches import Ellipse

    vals, vecs = np.linalg.eigh(cov)
    angle = np.degrees(np.arctan2(vecs[1, 1], vecs[0, 1]))
    w, h = 2 * 2 * np.sqrt(vals[1]), 2 * 2 * np.sqrt(vals[0])  # 2-sigma
    ax.add_patch(Ellipse(mean, w, h, angle=angle, fill=False, **kw))
    return float(2 * np.sqrt(vals[1]))


def fig_example(example_dir: str | Path):
    """The paper's Fig. 1 / Fig. 2: Bernoullis (r and 2-sigma ellipses), PPP 2-sigma region, truth, table."""
    import pandas as pd

    from nllbench.io import read_posterior

    plt, _ = _plt()
    d = Path(example_dir)
    truth = pd.read_csv(d / "truth.csv")[["x", "y"]].to_numpy()
    table = pd.read_csv(d / "table.csv")
    trackers = list(table["tracker"])
    fig, axes = plt.subplots(1, len(trackers), figsize=(5 * len(trackers), 5.6))
    colors = {"M1": "tab:blue", "M2": "tab:red"}
    for ax, name in zip(np.atleast_1d(axes), trackers, strict=True):
        density = read_posterior(d / f"{name}.nc")[0]
        mb = density.hypotheses[int(np.argmax(density.weights))]
        lo, hi = truth.min(axis=0) - 1, truth.max(axis=0) + 1
        for r, m, P in zip(mb.r, mb.densities.means, mb.densities.covs, strict=True):
            half = _ellipse(ax, m, P, color=colors.get(name, "tab:green"), lw=1.5)
            lo, hi = np.minimum(lo, m - half), np.maximum(hi, m + half)
            ax.plot(*m, "o", color=colors.get(name, "tab:green"), ms=4)
            ax.annotate(f"r = {r:.2f}", m, xytext=(6, 6), textcoords="offset points", fontsize=8)
        if density.ppp is not None:
            for m, P in zip(density.ppp.gaussians.means, density.ppp.gaussians.covs, strict=True):
                half = _ellipse(ax, m, P, color="gray", lw=1.2, ls="--")
                lo, hi = np.minimum(lo, m - half), np.maximum(hi, m + half)
        ax.plot(truth[:, 0], truth[:, 1], "*", color="black", ms=12)
        row = table[table["tracker"] == name].iloc[0]
        ax.set_title(
            f"{name}: NLL {row['nll']:.1f}, GOSPA {row['gospa']:.2f}, "
            f"MOTA {row['mota']:.2f}, MOTP {row['motp']:.2f}",
            fontsize=9,
        )
        ax.set_aspect("equal")
        ax.set_xlim(lo[0] - 0.5, hi[0] + 0.5)
        ax.set_ylim(lo[1] - 0.5, hi[1] + 0.5)
    return fig
