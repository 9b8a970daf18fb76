"""The data commands: ``simulate`` (scenario files) and ``filter`` (a reference filter's posteriors)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from nllbench.cli.common import (
    NON_NEGATIVE,
    POSITIVE,
    PROBABILITY,
    Progress,
    add_batch_io,
    add_deferred_parser,
    add_settings_option,
    batch_mode,
    check_text_file,
    checked_outputs,
    json_option,
    not_a_file,
    provenance_of,
    seed_files,
    warner,
    write_timing,
)
from nllbench.options import (
    MAX_BATCH_STEPS,
    MAX_CLUTTER_MEASUREMENTS,
    MAX_SEED,
    MAX_STEPS,
    add_options,
    from_args,
    integer,
    number,
    refuse_repeats,
)

#: What the batch directories of simulate and filter hold (recorded in their markers).
SCENARIO_FILES, POSTERIOR_FILES = "scenario files", "posterior files"
#: What ``simulate --truth`` expects.
TRUTH_CSV = "a text CSV with columns step, id, x, y, vx, vy"


def _simulate(args: argparse.Namespace) -> int:
    from nllbench.pipeline.runs import simulate_file

    overrides = {
        "clutter_rate": args.clutter_rate,
        "p_detection": args.pd,
        "p_survival": args.ps,
        "steps": args.steps,
        "process_noise": args.process_noise,
        "measurement_noise": args.measurement_noise,
    }
    if args.truth_seed is not None:
        overrides["truth_seed"] = None if args.truth_seed < 0 else args.truth_seed
    if args.mb_birth is not None:
        overrides["mb_birth"] = json_option(args.mb_birth, "--mb-birth")
    if args.mb_start is not None:
        overrides["mb_start"] = args.mb_start
    truth = args.truth
    if truth is not None and args.truth_seed is not None:
        raise ValueError("simulate: --truth gives the truth; --truth-seed cannot be used with it")
    if truth is not None:
        if not Path(truth).is_file():
            raise ValueError(f"--truth {truth!r}: expected {TRUTH_CSV}, got {not_a_file(truth)}")
        check_text_file(truth, "--truth", TRUTH_CSV)
    config = provenance_of(args)
    inputs = [("--truth", truth)]
    if not batch_mode(args, ("output",), ("output_dir",), "simulate"):
        if args.seeds:
            raise ValueError("simulate: --seeds needs --output-dir (a batch); use --seed with -o")
        check_simulation_work(args, [args.seed], overrides)
        targets = ("-o", args.output, False), ("--timing", args.timing, False)
        with checked_outputs(*targets, inputs=inputs) as (out, timing):
            sim, sec = simulate_file(args.scenario, args.seed, out, overrides, config, truth)
            write_timing(timing, [{"item": f"seed{args.seed}", "seconds": sec}])
        n = sum(len(x) for x in sim.truth)
        z = sum(len(x) for x in sim.measurements)
        print(
            f"wrote {args.output}: {args.scenario}, {len(sim.truth)} steps, {n} object-steps, "
            f"{z} measurements, seed {args.seed}"
        )
        return 0
    seeds = args.seeds if args.seeds else [args.seed]
    check_simulation_work(args, seeds, overrides)
    timing = []
    targets = ("--output-dir", args.output_dir, SCENARIO_FILES), ("--timing", args.timing, False)
    with checked_outputs(*targets, inputs=inputs) as (tmp, tt):
        for seed in seeds:
            _, sec = simulate_file(args.scenario, seed, tmp / f"seed{seed}.nc", overrides, config, truth)
            timing.append({"item": f"seed{seed}", "seconds": sec})
        write_timing(tt, timing)
    print(f"wrote {len(seeds)} scenario file{'s' if len(seeds) > 1 else ''} to {args.output_dir}")
    return 0


def check_simulation_work(args: argparse.Namespace, seeds: list[int], overrides: dict) -> None:
    """Refuse, before any work, a simulation beyond the documented limits (:mod:`nllbench.options`).

    Each seed is given once (one file ``seed<N>.nc`` each); steps x seeds is at
    most :data:`~nllbench.options.MAX_BATCH_STEPS`; steps x clutter rate (the
    mean number of clutter measurements of one run) at most
    :data:`~nllbench.options.MAX_CLUTTER_MEASUREMENTS`. The steps are
    ``--steps``, else the truth file's (``--truth``), else the preset's.
    """
    from nllbench.simulation.scenarios import get_scenario, read_truth_csv

    refuse_repeats(seeds, "--seeds", "seed", " (one file each)")
    scenario = get_scenario(args.scenario, **overrides)
    steps, source = scenario.steps, f"the {args.scenario} preset's"
    if args.steps is not None:
        source = "--steps"
    elif args.truth is not None:
        try:
            steps, source = len(read_truth_csv(args.truth)[0]), "the --truth file's"
        except ValueError as exc:
            raise ValueError(f"--truth {exc}") from None
    if steps * len(seeds) > MAX_BATCH_STEPS:
        raise ValueError(
            f"--seeds: {len(seeds)} seeds x {steps} steps ({source}) = {steps * len(seeds)} steps to"
            f" simulate; expected at most {MAX_BATCH_STEPS} per command: split the seeds over several batches"
        )
    rate = scenario.model.clutter_rate
    if steps * rate > MAX_CLUTTER_MEASUREMENTS:
        option = (
            "--clutter-rate"
            if args.clutter_rate is not None
            else f"the {args.scenario} preset's clutter rate"
        )
        raise ValueError(
            f"{option}: {rate:g} clutter measurements per step x {steps} steps ({source}) = {steps * rate:g}"
            f" per run; expected at most {MAX_CLUTTER_MEASUREMENTS:g} on average"
        )


def parsed_filter_settings(args):
    """(PHDSettings, PMBMSettings, FilterRunSettings) of ``nllbench filter`` from its options."""
    from nllbench.filters import PHDSettings, PMBMSettings
    from nllbench.settings import FilterRunSettings

    return (
        from_args(PHDSettings, args, "phd_"),
        from_args(PMBMSettings, args),
        from_args(FilterRunSettings, args),
    )


def _filter(args: argparse.Namespace) -> int:
    from nllbench.pipeline.runs import filter_file

    if args.filter is None:
        raise ValueError("filter: --filter is required (or the --settings key filter)")
    phd, pmbm, run = parsed_filter_settings(args)
    options = dict(
        max_cardinality=run.cphd_max_card,
        phd=phd,
        pmbm=pmbm,
        config=provenance_of(args),
        warn=warner("filter"),
        estimate_at=run.estimate_at,
        estimator=run.estimator,
        existence_threshold=run.existence_threshold,
    )
    if not batch_mode(args, ("scenario_file", "output"), ("input_dir", "output_dir"), "filter"):
        from nllbench.store import read_scenario

        targets = ("-o", args.output, False), ("--timing", args.timing, False)
        with checked_outputs(*targets, inputs=[("SCENARIO_FILE", args.scenario_file)]) as (out, timing):
            steps = read_scenario(args.scenario_file).steps
            progress = Progress(args.filter, steps, enabled=not args.quiet)
            posts, sec = filter_file(args.scenario_file, args.filter, out, progress=progress, **options)
            write_timing(timing, [{"item": Path(args.scenario_file).stem, "seconds": sec}])
        what = "a trajectory posterior" if args.filter in ("tpmbm", "tpmb") else f"{len(posts)} steps"
        print(f"wrote {args.output}: {args.filter}, {what} of {steps} steps in {sec:.2f} s")
        return 0
    files = seed_files(args.input_dir)
    timing = []
    targets = ("--output-dir", args.output_dir, POSTERIOR_FILES), ("--timing", args.timing, False)
    with checked_outputs(*targets, inputs=[("--input-dir", args.input_dir)]) as (tmp, tt):
        for i, f in enumerate(files):
            _, sec = filter_file(f, args.filter, tmp / f.name, **options)
            timing.append({"item": f.stem, "seconds": sec})
            if not args.quiet:
                print(
                    f"[{args.filter}] {i + 1}/{len(files)} {f.name} ({sec:.2f} s)",
                    file=sys.stderr,
                    flush=True,
                )
        write_timing(tt, timing)
    print(f"wrote {len(files)} posterior files to {args.output_dir}")
    return 0


def _add_simulate_parser(sub) -> None:
    sim = sub.add_parser(
        "simulate",
        help="simulate a scenario preset to a NetCDF file",
        description="Simulate a scenario preset (truth and measurements) to a NetCDF scenario file (-o), or"
        " one file per seed (--seeds ... --output-dir). Presets (nllbench.simulation.scenarios):"
        " williams15: 300 x 300 field of view, P_D 0.9, 10 clutter per scan, 4 objects that coalesce,"
        " 81 steps (the reference MATLAB code); williams15_mb: the same with a multi-Bernoulli birth;"
        " chalmers: [-1000, 1000]^2, P_D 0.98, 12 objects, 100 steps. Options left out take the"
        f" preset's values. Limits: --steps <= {MAX_STEPS:,}, steps x seeds <= {MAX_BATCH_STEPS:,},"
        f" steps x clutter rate <= {MAX_CLUTTER_MEASUREMENTS:,}.",
    )
    sim.add_argument(
        "--scenario",
        required=True,
        choices=["williams15", "williams15_mb", "chalmers"],
        help="the scenario preset (described above)",
    )
    sim.add_argument(
        "--seed", type=integer(0, MAX_SEED), default=0, help="seed of the measurement (and truth) generator"
    )
    sim.add_argument(
        "--seeds",
        type=integer(0, MAX_SEED),
        nargs="+",
        help="batch: one file seed<N>.nc per seed in --output-dir (each seed once)",
    )
    sim.add_argument(
        "--clutter-rate", type=NON_NEGATIVE, help="expected clutter per scan (default: the preset's)"
    )
    sim.add_argument(
        "--pd", type=number(0, 1, open_low=True), help="detection probability (default: the preset's)"
    )
    sim.add_argument("--ps", type=PROBABILITY, help="survival probability (default: the preset's)")
    sim.add_argument(
        "--steps",
        type=integer(1, MAX_STEPS),
        help="number of time steps (default: the preset's, or the --truth file's last step)",
    )
    sim.add_argument(
        "--process-noise", type=POSITIVE, help="q of the constant-velocity model (default: the preset's)"
    )
    sim.add_argument(
        "--measurement-noise",
        type=POSITIVE,
        help="std of each position measurement (default: the preset's)",
    )
    sim.add_argument(
        "--truth-seed", type=integer(-1, MAX_SEED), help="seed of the truth (-1: draw it from --seed)"
    )
    sim.add_argument(
        "--truth", help="CSV of the truth (columns step, id, x, y, vx, vy; steps from 1): simulate around it"
    )
    sim.add_argument(
        "--mb-birth",
        help='multi-Bernoulli birth, JSON: [{"r": 0.005, "mean": [x, y, vx, vy], "std": [4 numbers]}, ...]'
        ' ("cov": a 4 x 4 matrix may replace "std")',
    )
    sim.add_argument(
        "--mb-start",
        action=argparse.BooleanOptionalAction,
        help="the MBM filters start from the birth Bernoullis, with no PPP (default: the preset's)",
    )
    add_batch_io(
        sim, "output NetCDF file (one run)", "batch: directory of seed<N>.nc files (written atomically)"
    )
    sim.set_defaults(func=_simulate)


def _add_filter_parser(sub) -> None:
    # its options come from the filters' settings classes: imported only when 'filter' is parsed
    add_deferred_parser(
        sub, "filter", _add_filter_arguments, help="run a reference filter on a scenario file"
    )


def _add_filter_arguments(flt: argparse.ArgumentParser) -> None:
    from nllbench.filters import PHDSettings, PMBMSettings
    from nllbench.settings import FilterRunSettings

    flt.add_argument("scenario_file", nargs="?", help="NetCDF scenario file from 'nllbench simulate'")
    flt.add_argument(
        "--filter",
        choices=["phd", "cphd", "pmb", "pmbm", "mbm", "mbm01", "tpmbm", "tpmb"],
        help="the filter (required: here or as the --settings key filter); tpmbm and tpmb (the trajectory"
        " PMBM and PMB filters for the set of all trajectories) write one trajectory posterior file, the"
        " density of the whole run's set of trajectories (docs/trajectory_filters.md)",
    )
    flt.add_argument("--input-dir", help="batch: directory of seed<N>.nc scenario files")
    add_batch_io(flt, "output NetCDF posterior file (one run)", "batch: directory for the posterior files")
    add_settings_option(flt, "seeds")
    add_options(flt, PMBMSettings)
    add_options(flt, PHDSettings, "phd_")
    add_options(flt, FilterRunSettings)
    flt.add_argument("-q", "--quiet", action="store_true", help="no progress output")
    flt.set_defaults(func=_filter)


def add_parsers(sub) -> None:
    """``simulate`` and ``filter``."""
    _add_simulate_parser(sub)
    _add_filter_parser(sub)
