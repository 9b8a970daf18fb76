"""What identity uncertainty is worth: trajectory NLLs with and without a coalescence of objects.

Writes ``identity.csv`` (one row per seed, condition, filter and measure) and
``identity.png`` (the values per run, by condition) into the directory given
(default: the current one). Usage:
``python benchmarks/study_identity.py OUT_DIR [n_seeds]``; about 40 s per seed on 2 shared cores.
"""

from __future__ import annotations

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from nllbench.filters import PMBMSettings  # noqa: E402
from nllbench.pipeline.identity_study import identity_rows  # noqa: E402


def figure(table: pd.DataFrame):
    """Each run's value (symlog axis) per filter and measure, coalescence against separated."""
    table = table.assign(what=table["filter"] + ": " + table["measure"])
    whats = sorted(table["what"].unique())
    fig, ax = plt.subplots(figsize=(9, 4.5))
    for i, (cond, marker) in enumerate((("separated", "o"), ("coalescence", "x"))):
        sub = table[table["condition"] == cond]
        ys = [whats.index(w) + (i - 0.5) * 0.25 for w in sub["what"]]
        ax.scatter(sub["value"], ys, marker=marker, label=cond)
    ax.set_yticks(range(len(whats)), whats)
    ax.set_xscale("symlog", linthresh=1000)
    ax.set_xlabel("trajectory NLL of the true set of trajectories (nats)")
    ax.legend()
    ax.set_title("williams15, clutter 5: what the identity swaps of a coalescence cost")
    fig.tight_layout()
    return fig


def main(out: str = ".", n_seeds: str = "10") -> None:
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    wide = PMBMSettings(max_hypotheses=2000, hypothesis_floor=1e-7)
    table = pd.DataFrame(identity_rows(range(int(n_seeds)), wide=wide))
    table.to_csv(out_dir / "identity.csv", index=False)
    summary = table.groupby(["filter", "measure", "condition"])["value"].agg(
        ["mean", "median", "sem", "count"]
    )
    print(summary.to_string())
    figure(table).savefig(out_dir / "identity.png", dpi=120)


if __name__ == "__main__":
    main(*sys.argv[1:3])
