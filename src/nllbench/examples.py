"""The paper's Examples 1 and 2, with reconstructed parameters.

The paper (Section IV) fixes the ground truth, the extracted estimates and
the results, but its figures (and so the means, covariances and existence
probabilities) are not published. The parameters below are a
*reconstruction*, chosen by nllbench to satisfy everything the text states:

Example 1 -- Y = {(2, 5), (6, 3)}; two-Bernoulli Gaussian MBs.
  * estimates (Bernoulli means) X_M1 = {(3, 5), (7, 4)}, X_M2 = {(1, 5), (5, 2)};
  * M1's Bernoulli near A is more certain of existence (r 0.95 vs 0.5);
  * M1's Bernoulli near B is elongated along the direction of its error
    (-1, -1), M2's is elongated across its error (1, 1), so M1 explains B
    much better;
  * NLL about 4.6 (M1) and 16.3 (M2); MOTA 1, MOTP (1 + sqrt 2) / 2 and
    GOSPA 1 + sqrt 2 for both.

Example 2 -- Y = {(2, 5), (7, 6)}.
  * M1: PMB, one Bernoulli at (2, 6) and a Gaussian PPP of total rate 1
    (the "+ 1" in the paper's expression) whose 2-sigma ellipse covers B;
  * M2: a single Bernoulli at (2, 4) with the same r and covariance, so A is
    localised equally well, and no PPP, so |Y| = 2 is impossible;
  * NLL about 8.2 (M1) and +inf (M2); MOTA 0.5, MOTP 1, GOSPA 2 for both.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from nllbench.engine.densities import PMBM, PPP, MultiBernoulli, as_pmbm
from nllbench.engine.nll import NLLResult, nll
from nllbench.filters.estimates import estimate
from nllbench.measures.point.metrics import ClearMOTFrame, GOSPAResult, clear_mot_frame, gospa

#: Settings of the paper's comparison: cut-off / threshold 2, p = 1, alpha = 2.
PAPER_CUTOFF = 2.0
PAPER_P = 1.0


def _rotated(angle_deg: float, major: float, minor: float) -> np.ndarray:
    """Covariance with variances ``major`` along ``angle_deg`` and ``minor`` across."""
    t = np.deg2rad(angle_deg)
    R = np.array([[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]])
    return R @ np.diag([major, minor]) @ R.T


@dataclass(frozen=True)
class PaperExample:
    """One of the paper's illustrative examples.

    Attributes
    ----------
    number : int
    truth : (n, 2) float
    trackers : dict name -> PMBM
        The trackers' posteriors (reconstructed).
    paper_nll : dict name -> float
        The NLL values the paper reports (rounded there to one decimal).
    """

    number: int
    truth: np.ndarray
    trackers: dict[str, PMBM]
    paper_nll: dict[str, float]


def example1() -> PaperExample:
    """Example 1: two MB trackers that point-estimate measures cannot tell apart."""
    truth = np.array([[2.0, 5.0], [6.0, 3.0]])
    m1 = MultiBernoulli.gaussian([0.95, 0.9], [[3.0, 5.0], [7.0, 4.0]], [np.eye(2), _rotated(45.0, 2.0, 0.3)])
    m2 = MultiBernoulli.gaussian(
        [0.5, 0.9], [[1.0, 5.0], [5.0, 2.0]], [np.eye(2), _rotated(-45.0, 5.0, 0.085)]
    )
    return PaperExample(
        1,
        truth,
        {"M1": as_pmbm(m1), "M2": as_pmbm(m2)},
        {"M1": 4.6, "M2": 16.3},
    )


def example2() -> PaperExample:
    """Example 2: a PMB that can explain a missed object against an MB that cannot."""
    truth = np.array([[2.0, 5.0], [7.0, 6.0]])
    cov = 0.5 * np.eye(2)
    m1 = PMBM.pmb(
        PPP.gaussian([1.0], [[5.0, 5.0]], [20.0 * np.eye(2)]),
        MultiBernoulli.gaussian([0.9], [[2.0, 6.0]], [cov]),
    )
    m2 = as_pmbm(MultiBernoulli.gaussian([0.9], [[2.0, 4.0]], [cov]))
    return PaperExample(2, truth, {"M1": m1, "M2": m2}, {"M1": 8.2, "M2": np.inf})


EXAMPLES = {1: example1, 2: example2}


def get_example(number: int) -> PaperExample:
    if number not in EXAMPLES:
        raise ValueError(f"number: expected one of {sorted(EXAMPLES)}, got {number!r}")
    return EXAMPLES[number]()


@dataclass(frozen=True)
class ExampleRow:
    """All measures for one tracker of an example."""

    tracker: str
    estimates: np.ndarray
    nll_q1: NLLResult
    nll_exact: NLLResult
    gospa: GOSPAResult
    clear: ClearMOTFrame
    paper_nll: float


def evaluate_example(number: int) -> list[ExampleRow]:
    """NLL (Q = 1, as in the paper's formula, and exact), GOSPA, MOTA, MOTP per tracker."""
    ex = get_example(number)
    rows = []
    for name, density in ex.trackers.items():
        x = estimate(density, rule="best_hypothesis").states  # r > 0.4 in the best hypothesis
        rows.append(
            ExampleRow(
                name,
                x,
                nll(density, ex.truth, q=1),
                nll(density, ex.truth, method="exact"),
                gospa(x, ex.truth, c=PAPER_CUTOFF, p=PAPER_P),
                clear_mot_frame(x, ex.truth, threshold=PAPER_CUTOFF),
                ex.paper_nll[name],
            )
        )
    return rows


def format_example(number: int) -> str:
    """A plain-text table of :func:`evaluate_example`."""
    ex = get_example(number)
    rows = evaluate_example(number)
    truth = ", ".join(f"({a:g}, {b:g})" for a, b in ex.truth)
    lines = [
        f"Example {number} (Pinto et al. 2021; parameters reconstructed by nllbench)",
        f"ground truth Y = {{{truth}}}; GOSPA c = {PAPER_CUTOFF:g}, p = {PAPER_P:g}, alpha = 2; "
        f"MOTA/MOTP threshold {PAPER_CUTOFF:g}, Euclidean",
        "",
        f"{'tracker':8}{'NLL':>9}{'paper':>8}{'NLL exact':>11}{'local.':>9}{'missed':>9}"
        f"{'false':>8}{'assoc.':>9}{'GOSPA':>8}{'loc':>7}{'miss':>6}{'false':>7}{'MOTA':>7}{'MOTP':>8}",
    ]
    for r in rows:
        n = r.nll_q1
        lines.append(
            f"{r.tracker:8}{n.value:9.2f}{r.paper_nll:8.1f}{r.nll_exact.value:11.3f}"
            f"{n.localization:9.3f}{n.missed:9.3f}{n.false:8.3f}{n.association:9.3f}"
            f"{r.gospa.value:8.3f}{r.gospa.localization:7.3f}{r.gospa.missed:6.1f}{r.gospa.false:7.1f}"
            f"{r.clear.mota:7.2f}{r.clear.motp:8.3f}"
        )
    for r in rows:
        est = ", ".join(f"({a:g}, {b:g})" for a, b in r.estimates)
        lines.append(f"estimates {r.tracker}: {{{est}}}")
    return "\n".join(lines)


def write_example(number: int, out_dir, text: str | None = None) -> None:
    """Write the example's posteriors (one NetCDF per tracker), truth.csv, table.csv and example.txt."""
    from nllbench.store import atomic_directory, write_posterior, write_rows_csv, write_text

    ex = get_example(number)
    rows = evaluate_example(number)
    with atomic_directory(out_dir) as tmp:
        for name, density in ex.trackers.items():
            write_posterior([density], tmp / f"{name}.nc", {"example": number, "tracker": name})
        write_rows_csv(["x", "y"], ex.truth.tolist(), tmp / "truth.csv")
        table = [
            [
                r.tracker,
                r.nll_q1.value,
                r.nll_exact.value,
                r.paper_nll,
                r.gospa.value,
                r.clear.mota,
                r.clear.motp,
            ]
            for r in rows
        ]
        header = ["tracker", "nll", "nll_exact", "paper_nll", "gospa", "mota", "motp"]
        write_rows_csv(header, table, tmp / "table.csv")
        write_text(tmp / "example.txt", (text or format_example(number)) + "\n")
