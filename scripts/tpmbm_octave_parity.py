"""Parity of nllbench's trajectory filters with the published MATLAB filters run under GNU Octave.

The same simulated runs (nllbench's scenario, truth and measurements, seeds
``seed, seed + 1, ...``) go through nllbench's filter (``--filter tpmbm``, or
``tpmb`` once nllbench has it) and through the authors' MATLAB functions of
github.com/Agarciafernandez/MTT, folder "TPMBM filter" (``TPMBM_all_update.m``,
``TPMBM_all_pruning.m``, ``TPMBM_all_prediction.m``, ``TPMBM_all_estimate1.m``,
``TPMB_all_projection.m``), driven step by step by nllbench's
``scripts/octave/run_trajectory_filter.m`` with the loop of
``TPMBM_all_filter.m`` / ``TPMB_all_filter.m``. The k-best assignment those
functions call (``kBest2DAssign``, from a third-party library that the
repository holds only as compiled MEX files) is nllbench's own Murty
implementation, ``scripts/octave/kbest2dassign.m``; ``mvnpdf`` (Octave's
statistics package) is ``scripts/octave/mvnpdf.m``.

Per run and side, from the estimates (position, both sides scored by nllbench):

* online GOSPA: at every step the estimate made at that step of the states at
  that step (the set of all trajectories' current states), GOSPA c, p, alpha = 2,
  averaged over the steps;
* trajectory GOSPA per step: the estimated set of all trajectories at the last
  step, GOSPA at every step, averaged over the steps;
* T-GOSPA (``nb.tgospa``, c, p, gamma) of the estimated set of all trajectories at the last step.

The script prints each side's mean over runs with its standard error, and the
paired mean difference (nllbench - MATLAB) with its standard error; it passes
when every |mean difference| <= 2 standard errors of that difference. Exit 1
on a failure, 2 when Octave or the MATLAB folder is missing.

The authors' code is not part of nllbench: pass the folder holding it (a
checkout of github.com/Agarciafernandez/MTT, or its "TPMBM filter" folder).

Run:  python scripts/tpmbm_octave_parity.py PATH/TO/MTT [--filter tpmbm] [--runs 20] [--steps 81]
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

import nllbench as nb
import nllbench.filters as nbf
from nllbench.engine.trajectory_density import estimate_trajectories
from nllbench.filters import PMBMSettings
from nllbench.simulation.scenarios import get_scenario, simulate

OCTAVE_DIR = Path(__file__).resolve().parent / "octave"
MATLAB_FILES = (
    "TPMBM_all_update.m",
    "TPMBM_all_pruning.m",
    "TPMBM_all_prediction.m",
    "TPMBM_all_estimate1.m",
    "TPMB_all_projection.m",
)
#: the published estimators' existence thresholds (TPMBM_all_filter.m, TPMB_all_filter.m)
THRESHOLDS = {"tpmbm": 0.4, "tpmb": 0.5}
#: Runs whose measures differ by at most this (relative to the measure's mean) are the same to rounding:
#: the two sides sum moment matches and weights in other orders (differences of ~1e-8 seen with ``tpmb``).
SAME_TO = 1e-6
#: nllbench's state (x, y, vx, vy) in the published order (x, vx, y, vy)
PERM = np.array([0, 2, 1, 3])
MEASURES = ("online GOSPA", "trajectory GOSPA per step", "T-GOSPA")


def matlab_folder(path: Path) -> Path:
    """The folder holding the published TPMBM files: ``path`` itself or its "TPMBM filter"."""
    for folder in (path, path / "TPMBM filter"):
        if all((folder / f).is_file() for f in MATLAB_FILES):
            return folder
    raise ValueError(f"{path}: expected {', '.join(MATLAB_FILES)} there or in its 'TPMBM filter' folder")


def _mat(a) -> str:
    """An Octave literal of an array (column-major values, then reshape)."""
    a = np.asarray(a, dtype=float)
    if a.ndim < 2:
        a = a.reshape(1, -1)
    vals = " ".join(f"{x:.17g}" for x in a.ravel(order="F"))
    return f"reshape([{vals}], [{' '.join(str(s) for s in a.shape)}])"


def octave_parameters(model, settings: PMBMSettings, lscan: int, threshold: float) -> str:
    """The struct P of run_trajectory_filter.m: nllbench's model and settings in the published layout."""
    ix = np.ix_(PERM, PERM)

    def mixture(g, suffix: str) -> list[str]:
        covs = np.transpose(np.asarray(g.covs)[:, PERM][:, :, PERM], (1, 2, 0))
        return [
            f"P.weights{suffix} = {_mat(np.asarray(g.weights).reshape(1, -1))};",
            f"P.means{suffix} = {_mat(np.asarray(g.means)[:, PERM].T)};",
            f"P.covs{suffix} = {_mat(covs)};",
        ]

    lines = [
        f"P.F = {_mat(model.F[ix])};",
        f"P.Q = {_mat(model.Q[ix])};",
        f"P.H = {_mat(model.H[:, PERM])};",
        f"P.R = {_mat(model.R)};",
        f"P.p_d = {model.p_detection!r};",
        f"P.p_s = {model.p_survival!r};",
        f"P.intensity_clutter = {model.clutter_intensity!r};",
        *mixture(model.initial, "0"),
        *mixture(model.birth, "_b"),
        f"P.gating_threshold = {settings.gate!r};",
        f"P.Nhyp_max = {int(settings.max_hypotheses)};",
        f"P.T_pruning = {settings.hypothesis_floor!r};",
        f"P.T_pruningPois = {settings.ppp_floor!r};",
        f"P.existence_threshold = {settings.existence_floor!r};",
        "P.T_alive = 1e-4;",  # TPMBM_all_filter.m's T_alive (nllbench has no such setting)
        f"P.Lscan = {int(lscan)};",
        f"P.threshold = {threshold!r};",
    ]
    return "\n".join(lines) + "\n"


def octave_run(folder: Path, name: str, params: str, measurements) -> tuple[list, tuple, float]:
    """One run of the published filter under Octave: (online estimates, final trajectories, seconds)."""
    cells = ", ".join(_mat(Z.T) if Z.shape[0] else "zeros(2, 0)" for Z in measurements)
    K = len(measurements)
    with tempfile.TemporaryDirectory() as tmp:
        tmp_dir = Path(tmp)
        # the published code calls kBest2DAssign: a shim onto nllbench's kbest2dassign
        (tmp_dir / "kBest2DAssign.m").write_text(
            "function [a, b, c] = kBest2DAssign(C, k)\n  [a, b, c] = kbest2dassign(C, k);\nend\n"
        )
        out = tmp_dir / "estimates.txt"
        script = tmp_dir / "run.m"
        script.write_text(
            f"addpath('{tmp_dir}');\naddpath('{OCTAVE_DIR}');\naddpath('{folder.resolve()}');\n"
            "warning('off', 'all');\n"
            f"{params}z_t = {{{cells}}};\n"
            f"run_trajectory_filter('{name}', P, z_t, '{out}');\n"
        )
        t0 = time.perf_counter()
        res = subprocess.run(
            ["octave-cli", "--no-gui", "--quiet", "--no-init-file", str(script)],
            capture_output=True,
            text=True,
            check=False,
        )
        seconds = time.perf_counter() - t0
        if res.returncode != 0:
            raise RuntimeError(f"octave failed ({res.returncode}): {res.stderr[-2000:]}")
        rows = np.loadtxt(out, ndmin=2) if out.stat().st_size else np.zeros((0, 6))
    rows = rows[np.isfinite(rows[:, 4]) & np.isfinite(rows[:, 5])]  # the published code's NaN holes
    online = [rows[(rows[:, 0] == 0) & (rows[:, 1] == k + 1)][:, 4:6] for k in range(K)]
    final = rows[rows[:, 0] == 1]
    states = [final[final[:, 3] == k + 1][:, 4:6] for k in range(K)]
    labels = [final[final[:, 3] == k + 1][:, 2].astype(np.int64) for k in range(K)]
    return online, (states, labels), seconds


def nllbench_run(name: str, measurements, model, settings: PMBMSettings, threshold: float):
    """One run of nllbench's filter ``name``: (online estimates, final trajectories, seconds)."""
    runner = getattr(nbf, f"run_{name}", None)
    if name not in nbf.TRAJECTORY_FILTERS or runner is None:
        raise ValueError(
            f"filter: nllbench has no trajectory filter {name!r} (it has {nbf.TRAJECTORY_FILTERS})"
        )
    t0 = time.perf_counter()
    steps = runner(measurements, model, settings)
    seconds = time.perf_counter() - t0
    online = []
    for k, state in enumerate(steps.states):
        est, _ = estimate_trajectories(state.to_density(model), threshold)
        online.append(est[k][:, :2])
    est, labels = estimate_trajectories(steps.states[-1].to_density(model), threshold)
    return online, ([e[:, :2] for e in est], labels), seconds


def run_measures(truth, ids, online, final, c: float, p: float, gamma: float) -> np.ndarray:
    """(online mean GOSPA, trajectory mean GOSPA per step, T-GOSPA) of one run's estimates."""
    pos = [X[:, :2] for X in truth]
    on = np.mean([nb.gospa(E, X, c=c, p=p).value for E, X in zip(online, pos, strict=True)])
    states, labels = final
    per_step = np.mean([nb.gospa(E, X, c=c, p=p).value for E, X in zip(states, pos, strict=True)])
    tg = nb.tgospa(pos, ids, states, labels, c=c, p=p, gamma=gamma).value
    return np.array([on, per_step, tg])


def paired_summary(ours: np.ndarray, theirs: np.ndarray) -> tuple[list[str], bool]:
    """Lines of the report and whether every measure's mean difference is within 2 standard errors."""
    n = ours.shape[0]
    se = lambda a: float(np.std(a, ddof=1) / math.sqrt(n)) if n > 1 else math.inf  # noqa: E731
    lines, ok = [], True
    for j, name in enumerate(MEASURES):
        d = ours[:, j] - theirs[:, j]
        mean_d, se_d = float(d.mean()), se(d)
        scale = max(1.0, abs(float(theirs[:, j].mean())))
        # within 2 SE, or the same in every run to rounding (where an SE of ~1e-9 means nothing)
        same = float(np.abs(d).max()) <= SAME_TO * scale
        good = abs(mean_d) <= 2 * se_d or same
        ok &= good
        lines.append(
            f"  {name:<26} nllbench {ours[:, j].mean():9.4f} +- {se(ours[:, j]):.4f}   "
            f"MATLAB {theirs[:, j].mean():9.4f} +- {se(theirs[:, j]):.4f}   "
            f"difference {mean_d:+.3g} +- {se_d:.3g} "
            f"({'same to rounding' if same else 'within 2 SE' if good else 'OUTSIDE 2 SE'}; "
            f"{int(np.sum(np.abs(d) > 1e-9))} of {n} runs differ, largest {float(np.abs(d).max()):.2g})"
        )
    return lines, ok


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "mtt", type=Path, help="checkout of github.com/Agarciafernandez/MTT (or its 'TPMBM filter')"
    )
    ap.add_argument("--filter", default="tpmbm", choices=sorted(THRESHOLDS))
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0, help="first seed (runs use seed, seed + 1, ...)")
    ap.add_argument("--scenario", default="williams15")
    ap.add_argument("--steps", type=int, default=None, help="run length (default: the scenario's)")
    ap.add_argument("--clutter", type=float, default=None, help="clutter rate (default: the scenario's)")
    ap.add_argument("--lscan", type=int, default=5, help="the published filters' L-scan window (5)")
    ap.add_argument("--max-hypotheses", type=int, default=None, help="both sides (default 200)")
    ap.add_argument("--c", type=float, default=10.0, help="GOSPA / T-GOSPA cut-off (published: 10)")
    ap.add_argument("--p", type=float, default=2.0, help="GOSPA / T-GOSPA order (published: 2)")
    ap.add_argument("--gamma", type=float, default=1.0, help="T-GOSPA switch cost (published: 1)")
    ap.add_argument("--jobs", type=int, default=1, help="Octave runs at once")
    args = ap.parse_args()
    if shutil.which("octave-cli") is None:
        print("octave-cli not found (apt-get install octave)", file=sys.stderr)
        return 2
    try:
        folder = matlab_folder(args.mtt)
    except ValueError as err:
        print(err, file=sys.stderr)
        return 2
    if args.filter not in nbf.TRAJECTORY_FILTERS or not hasattr(nbf, f"run_{args.filter}"):
        print(
            f"--filter: nllbench has no trajectory filter {args.filter!r} yet "
            f"(it has {', '.join(nbf.TRAJECTORY_FILTERS)}; the MATLAB side is ready)",
            file=sys.stderr,
        )
        return 2
    if args.runs < 2:
        print(f"--runs: expected at least 2 runs for a standard error, got {args.runs}", file=sys.stderr)
        return 2
    scenario = get_scenario(args.scenario, steps=args.steps, clutter_rate=args.clutter)
    model = scenario.model
    settings = PMBMSettings()
    if args.max_hypotheses is not None:
        settings = PMBMSettings(max_hypotheses=args.max_hypotheses)
    if args.filter == "tpmb":  # the published order: project right after the update, then prune
        settings = dataclasses.replace(settings, project_before_cap=True)
    threshold = THRESHOLDS[args.filter]
    params = octave_parameters(model, settings, args.lscan, threshold)
    sims = [
        simulate(scenario, np.random.default_rng(s), seed=s) for s in range(args.seed, args.seed + args.runs)
    ]
    print(
        f"{args.filter}: {args.runs} runs of {args.scenario} ({scenario.steps} steps, clutter "
        f"{model.clutter_rate:g}, seeds {args.seed}-{args.seed + args.runs - 1}); gate {settings.gate:g}, "
        f"{settings.max_hypotheses} hypotheses, floors {settings.hypothesis_floor:g} / "
        f"{settings.existence_floor:g} / {settings.ppp_floor:g}, MATLAB L-scan {args.lscan}, "
        f"estimate threshold {threshold:g}; GOSPA c {args.c:g}, p {args.p:g}; T-GOSPA gamma {args.gamma:g}"
    )
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = [pool.submit(octave_run, folder, args.filter, params, sim.measurements) for sim in sims]
        ours, theirs, t_ours, t_theirs = [], [], [], []
        for sim, fut in zip(sims, futures, strict=True):
            on, fin, secs = nllbench_run(args.filter, sim.measurements, model, settings, threshold)
            t_ours.append(secs)
            ours.append(run_measures(sim.truth, sim.truth_ids, on, fin, args.c, args.p, args.gamma))
            on, fin, secs = fut.result()
            t_theirs.append(secs)
            theirs.append(run_measures(sim.truth, sim.truth_ids, on, fin, args.c, args.p, args.gamma))
            print(
                f"  seed {sim.seed}: nllbench {np.array2string(ours[-1], precision=3)} ({t_ours[-1]:.1f} s), "
                f"MATLAB {np.array2string(theirs[-1], precision=3)} ({t_theirs[-1]:.1f} s in Octave)",
                flush=True,
            )
    lines, ok = paired_summary(np.array(ours), np.array(theirs))
    print(f"mean over {args.runs} runs +- standard error (paired difference: nllbench - MATLAB):")
    print("\n".join(lines))
    print(
        f"time per run: nllbench {np.mean(t_ours):.2f} s, MATLAB under Octave {np.mean(t_theirs):.1f} s "
        "(the Octave time includes its start-up)"
    )
    print("PASS" if ok else "FAIL (a mean difference outside 2 standard errors)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
