"""``warmup``: compile the numerical kernels once, into numba's on-disk cache.

nllbench's compiled kernels (``numba.njit(cache=True)``: the Murty ranking,
the Gaussian-mixture pass, GOSPA's distances, ...) are compiled the first time
a process calls them and cached beside the sources (``__pycache__``). In a
fresh clone every process that starts before the cache exists compiles them
itself: about 23 CPU s for ``filter`` and 28 CPU s for ``evaluate`` measured
cold, against 1.8 and 2.0 s warm (a .test batch, 2-core machine). Parallel
jobs of a first workflow run would each pay that. ``nllbench warmup`` runs a
tiny study (a 4-step Williams scenario, every reference filter, an evaluation
grid with the exact NLL, the global budget and the full-state NLL) in a
temporary directory, so that every later process loads the kernels from the
cache; the Snakefile runs it once before any job (``onstart``).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import tempfile
import time
from pathlib import Path

#: Said on stderr by a command that will compile the kernels (none in numba's cache yet).
FIRST_COMPILATION = (
    "nllbench {command}: compiling nllbench's numerical kernels on this first use (about a minute of CPU, "
    "once: they are cached afterwards; 'nllbench warmup' compiles them all ahead)"
)


def say_first_compilation(command: str) -> None:
    """Say on stderr that the kernels compile now, when none is cached (a first run after installing)."""
    import sys

    from nllbench.engine.assignment import kernels_cached

    if kernels_cached() is False:
        print(FIRST_COMPILATION.format(command=command), file=sys.stderr)


#: The filters the warm-up runs (every reference filter).
FILTERS = ("phd", "cphd", "pmb", "pmbm", "mbm", "mbm01")


def warm_up(directory: Path) -> None:
    """Run the tiny study in ``directory`` (every command's output is discarded)."""
    from nllbench.cli import main

    def run(*args) -> None:
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            try:
                code = main([str(a) for a in args])
            except SystemExit as exc:  # argparse's own errors
                code = exc.code
        if code != 0:
            command = " ".join(map(str, args))
            last = (out.getvalue().strip().splitlines() or [f"exit status {code}"])[-1]
            raise RuntimeError(f"warmup: 'nllbench {command}' failed: {last}")

    d = Path(directory)
    run("simulate", "--scenario", "williams15", "--steps", "4", "--seeds", "0", "--output-dir", d / "sim")
    for name in FILTERS:
        run("filter", "-q", "--filter", name, "--input-dir", d / "sim", "--output-dir", d / name)
        grid = ["--q", "1", "3", "--cov-scales", "0.5", "1", "--probe-q", "1", "--exact"]
        run("evaluate", "--posterior-dir", d / name, "--scenario-dir", d / "sim", *grid,
            "--output-dir", str(d / f"{name}_q{{q}}_c{{cov}}"))  # fmt: skip
    post, scenario = d / "pmbm" / "seed0.nc", d / "sim" / "seed0.nc"
    full = ["--q", "3", "--budget", "global", "--marginal", "full"]
    run("evaluate", post, scenario, "-o", d / "global.nc", *full)
    _colliding_tgospa()


def _colliding_tgospa() -> None:
    """Trajectory GOSPA where two true trajectories want one estimate: the group solver's kernels,
    which a short evaluate does not reach."""
    import numpy as np

    from nllbench.measures.tgospa import tgospa

    truth = [np.array([[0.0, 0.0], [0.2, 0.0]])] * 4
    estimates = [np.array([[0.1, 0.0]])] * 4
    tgospa(truth, [np.array([1, 2])] * 4, estimates, [np.array([7])] * 4, c=2.0)


def _warmup(args: argparse.Namespace) -> int:
    start_cpu, start = time.process_time(), time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="nllbench-warmup-") as tmp:
        warm_up(Path(tmp))
    print(
        f"warmup: compiled kernels are cached ({time.process_time() - start_cpu:.1f} CPU s,"
        f" {time.perf_counter() - start:.1f} s)"
    )
    return 0


def add_parsers(sub) -> None:
    wu = sub.add_parser(
        "warmup",
        help="compile the numerical kernels once into numba's cache (first run in a fresh clone)",
        description=__doc__.split("\n\n")[1],
    )
    wu.set_defaults(func=_warmup)
