"""Report section 4, theory: both sides of the paper's Theorem 1 at every evaluated step."""

from __future__ import annotations

import numpy as np

import nllbench.pipeline.plots.captions as captions
import nllbench.pipeline.plots.style as style


def fig_theorem1(steps):
    """Both sides of Theorem 1 at every evaluated step (parity plot)."""
    plt, _ = style.pyplot()
    lhs = steps[steps["measure"] == "theorem1_lhs"]["value"].to_numpy()
    rhs = steps[steps["measure"] == "theorem1_rhs"]["value"].to_numpy()
    diff = steps[steps["measure"] == "theorem1_difference"]["value"].to_numpy()
    fig, ax = plt.subplots(figsize=(4.2, 4.2), constrained_layout=True)
    ax.scatter(rhs, lhs, s=6, alpha=0.5, color="#0072B2", label="one evaluated step")
    if lhs.size:
        lo, hi = float(min(lhs.min(), rhs.min())), float(max(lhs.max(), rhs.max()))
        ax.plot([lo, hi], [lo, hi], color="black", lw=0.8, label="equality")
    worst = float(np.max(np.abs(diff))) if diff.size else 0.0
    ax.set_xlabel("right-hand side: V(1-rho) + assignment cost (nats)")
    ax.set_ylabel("NLL of the theorem's PMB, Q = 1 (nats)")
    ax.set_title(f"Theorem 1: {style.plural(lhs.size, 'step')}, max |difference| = {worst:.1e}", fontsize=8)
    ax.set_aspect("equal", adjustable="datalim")
    style.legend(ax, loc="upper left")  # the points lie on the diagonal: the upper-left corner is empty
    return style.captioned(fig, captions.theorem1_caption(steps))
