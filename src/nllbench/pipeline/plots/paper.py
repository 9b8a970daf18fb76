"""Report section 1, the paper: the examples' figures (Fig. 1 and Fig. 2 of Pinto et al., IEEE SPL 2021)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

import nllbench.pipeline.plots.style as style


def _ellipse(ax, mean, cov, **kw) -> float:
    """Draw the 2-sigma ellipse; return its largest half-axis (for the view limits)."""
    from matplotlib.patches import Ellipse

    vals, vecs = np.linalg.eigh(cov)
    angle = np.degrees(np.arctan2(vecs[1, 1], vecs[0, 1]))
    w, h = 2 * 2 * np.sqrt(vals[1]), 2 * 2 * np.sqrt(vals[0])  # 2-sigma
    ax.add_patch(Ellipse(mean, w, h, angle=angle, fill=False, **kw))
    return float(2 * np.sqrt(vals[1]))


def fig_example(example_dir: str | Path):
    """The paper's Fig. 1 / Fig. 2: Bernoullis (r and 2-sigma ellipses), PPP 2-sigma region, truth, table.

    Panels share both axes with equal aspect, so equal covariances look equal.
    """
    import pandas as pd
    from matplotlib.lines import Line2D

    from nllbench.store import read_posterior

    plt, _ = style.pyplot()
    d = Path(example_dir)
    truth = pd.read_csv(d / "truth.csv")[["x", "y"]].to_numpy()
    table = pd.read_csv(d / "table.csv")
    trackers = list(table["tracker"])
    fig, axes = plt.subplots(
        1,
        len(trackers),
        figsize=(3.6 * len(trackers), 4.4),
        sharex=True,
        sharey=True,
        constrained_layout=True,
    )
    colors = {"M1": "#0072B2", "M2": "#D55E00"}
    lo, hi = truth.min(axis=0) - 1, truth.max(axis=0) + 1
    for ax, name in zip(np.atleast_1d(axes), trackers, strict=True):
        color = colors.get(name, "#009E73")
        density = read_posterior(d / f"{name}.nc")[0]
        mb = density.hypotheses[int(np.argmax(density.weights))]
        for r, m, P in zip(mb.r, mb.densities.means, mb.densities.covs, strict=True):
            half = _ellipse(ax, m, P, color=color, lw=1.5)
            lo, hi = np.minimum(lo, m - half), np.maximum(hi, m + half)
            ax.plot(*m, "o", color=color, ms=4)
            ax.annotate(f"r = {r:.2f}", m, xytext=(6, 6), textcoords="offset points", fontsize=8)
        if density.ppp is not None:
            for m, P in zip(density.ppp.gaussians.means, density.ppp.gaussians.covs, strict=True):
                half = _ellipse(ax, m, P, color="gray", lw=1.2, ls="--")
                lo, hi = np.minimum(lo, m - half), np.maximum(hi, m + half)
        ax.plot(truth[:, 0], truth[:, 1], "*", color="black", ms=12)
        row = table[table["tracker"] == name].iloc[0]
        ax.set_title(
            f"{name}: NLL {row['nll']:.2f}, GOSPA {row['gospa']:.2f}\n"
            f"MOTA {row['mota']:.2f}, MOTP {row['motp']:.2f}",
            fontsize=9,
        )
        ax.set_xlabel("x (position units)")
        handles = [
            Line2D([], [], marker="*", ls="none", color="black", ms=10, label="ground truth"),
            Line2D([], [], marker="o", ls="none", color=color, ms=4, label=f"{name} Bernoulli mean"),
            Line2D([], [], color=color, lw=1.5, label=f"{name} Bernoulli 2-sigma ellipse"),
        ]
        if density.ppp is not None:
            handles.append(Line2D([], [], color="gray", lw=1.2, ls="--", label="PPP 2-sigma region"))
        # below the panel, under its x label: never over an ellipse or the PPP's region
        ax.legend(handles=handles, fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.14), frameon=False)
    first = np.atleast_1d(axes)[0]
    first.set_ylabel("y (position units)")
    for ax in np.atleast_1d(axes):
        ax.set_aspect("equal", adjustable="box")
    first.set_xlim(lo[0] - 0.5, hi[0] + 0.5)
    first.set_ylim(lo[1] - 0.5, hi[1] + 0.5)
    return fig
