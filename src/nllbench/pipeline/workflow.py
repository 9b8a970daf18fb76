"""Helpers for the Snakemake workflow: the sweep's jobs, batches and output paths.

The workflow declares; these functions compute what it needs (which seeds a
batch holds, which metric directories exist, the config slice each job
records), so that the rule files stay free of logic and the logic is tested.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from itertools import product
from pathlib import Path

from nllbench.pipeline.config import tracker_calibration_seeds


def truth_input(config: dict) -> list[str]:
    """The truth file a simulation job reads (a rule input, so that a changed file re-runs it)."""
    truth = config["sweep"].get("truth")
    return [] if truth is None else [str(truth)]


def simulate_provenance(config: dict) -> dict:
    """The sweep keys a simulation depends on beyond the setting (``truth`` only when given)."""
    s = config["sweep"]
    out = {"mb_birth": s.get("mb_birth"), "mb_start": s.get("mb_start")}
    if s.get("truth") is not None:
        out["truth"] = str(s["truth"])
    return out


@dataclass(frozen=True)
class Sweep:
    """The Monte Carlo sweep of a configuration.

    Runs are (scenario, clutter, pd, filter, seed); jobs handle a batch of
    ``seeds_per_job`` consecutive seeds, so that each job's start-up (about a
    second of Python imports) is paid once per batch, not once per run.
    """

    scenarios: tuple[str, ...]
    filters: tuple[str, ...]
    clutter_rates: tuple[float, ...]
    detection_probabilities: tuple[float, ...]
    seeds: int
    seeds_per_job: int
    qs: tuple[int, ...]
    cov_scales: tuple[float, ...]
    probe_q: int
    trackers: tuple[str, ...] = ()

    @classmethod
    def from_config(cls, config: dict) -> Sweep:
        s, e = config["sweep"], config["evaluation"]
        return cls(
            tuple(s["scenarios"]),
            tuple(s["filters"]),
            tuple(s["clutter_rates"]),
            tuple(s["detection_probabilities"]),
            int(s["seeds"]),
            int(s["seeds_per_job"]),
            tuple(int(q) for q in e["q"]),
            tuple(e["cov_scales"]),
            int(e["probe_q"]),
            tuple(sorted(config.get("trackers") or {})),
        )

    @property
    def batches(self) -> list[int]:
        return list(range(-(-self.seeds // self.seeds_per_job)))

    def batch_seeds(self, batch: int) -> list[int]:
        """Seeds of batch ``batch``: [batch * size, min((batch + 1) * size, seeds))."""
        start = batch * self.seeds_per_job
        if not 0 <= start < self.seeds:
            raise ValueError(f"batch: expected 0..{len(self.batches) - 1}, got {batch}")
        return list(range(start, min(start + self.seeds_per_job, self.seeds)))

    def evaluations(self) -> list[tuple[int, float]]:
        """(q, cov_scale) pairs evaluated: every q at scale 1, the probe q at every scale."""
        from nllbench.measures.run.evaluate import evaluation_grid

        return evaluation_grid(self.qs, self.cov_scales, self.probe_q)

    def settings(self) -> list[dict]:
        """Every (scenario, clutter, pd) setting as wildcard values."""
        return [
            {"scenario": sc, "clutter": fmt(c), "pd": fmt(pd)}
            for sc, c, pd in product(self.scenarios, self.clutter_rates, self.detection_probabilities)
        ]


def fmt(x: float) -> str:
    """A number as it appears in paths and wildcards: 10 -> '10', 0.9 -> '0.9'."""
    f = float(x)
    return str(int(f)) if f.is_integer() else repr(f)


def metric_dirs(results: str, sweep: Sweep) -> list[str]:
    """Every evaluation output directory of the sweep: the reference filters', then the trackers'.

    An external tracker's directory is ``tracker-<name>`` where a filter's is
    ``<name>`` (the hyphen keeps the evaluate rule's ``filter`` wildcard off it).
    """
    out = []
    names = [*sweep.filters, *(tracker_dir(t) for t in sweep.trackers)]
    for st in sweep.settings():
        for filt, (q, s), b in product(names, sweep.evaluations(), sweep.batches):
            out.append(
                f"{results}/metrics/{st['scenario']}/clutter{st['clutter']}_pd{st['pd']}/{filt}/"
                f"q{q}_cov{fmt(s)}/batch{b}"
            )
    return out


def config_slice(config: dict, *keys: str, **extra) -> str:
    """JSON of the config values a job depends on (its provenance), plus its own values.

    ``keys`` are dotted paths (``"filter"``, ``"sweep.steps"``). Only what the
    job uses is recorded, so that adding a value to a sweep list changes no
    finished job's parameters and re-runs nothing that does not depend on it.
    """
    out: dict = {}
    for key in keys:
        node, parts = config, key.split(".")
        for part in parts:
            node = node[part]
        out[key] = node
    out.update(extra)
    return json.dumps(out, sort_keys=True)


def estimator_for(config: dict, filter_name: str) -> str:
    """The point-estimation rule of ``filter_name`` (``evaluation.estimators``).

    A validated configuration always has the table: the schema holds its default.
    """
    return config["evaluation"]["estimators"][filter_name]


def simulate_flags(config: dict) -> str:
    """Flags of ``nllbench simulate`` from ``sweep.mb_birth``, ``sweep.mb_start`` and ``sweep.truth``
    (null: the preset's)."""
    s = config["sweep"]
    flags = ""
    if s.get("truth") is not None:
        flags += " --truth " + shlex.quote(str(s["truth"]))
    if s.get("mb_birth") is not None:
        flags += " --mb-birth " + shlex.quote(json.dumps(s["mb_birth"], sort_keys=True))
    if s.get("mb_start") is not None:
        flags += " --mb-start" if s["mb_start"] else " --no-mb-start"
    return flags.strip()


def filter_settings(config: dict, filter_name: str, seeds) -> str:
    """``nllbench filter --settings``: the config's ``filter`` section for one job (JSON).

    The section's keys are the command's option names; the job adds its
    ``filter``, the ``seeds`` it handles (recorded only) and, with
    ``estimate_at: update``, the ``estimator`` and ``existence_threshold``
    the filter extracts its estimates with. This object is the provenance
    stored in every posterior file of the job.
    """
    out = dict(config["filter"], filter=filter_name, seeds=[int(s) for s in seeds])
    if out.get("estimate_at", "posterior") == "update":
        out.update(
            estimator=estimator_for(config, filter_name),
            existence_threshold=config["evaluation"]["existence_threshold"],
        )
    return json.dumps(out, sort_keys=True)


def evaluate_settings(config: dict, filter_name: str, batch: int) -> str:
    """``nllbench evaluate --settings``: the ``evaluation`` section for one (filter, batch) job (JSON).

    The section's keys are the command's option names (``q``, ``cov_scales``,
    ``probe_q``, ``cutoff``, ...); ``estimators`` becomes the filter's
    ``estimator``; ``filter`` and ``batch`` are recorded only. The job writes
    every (Q, covariance scale) directory of :meth:`Sweep.evaluations`; each
    metrics file records this object with its own ``q`` and ``cov_scale``.
    """
    out = {k: v for k, v in config["evaluation"].items() if k != "estimators"}
    out.update(filter=filter_name, estimator=estimator_for(config, filter_name), batch=int(batch))
    return json.dumps(out, sort_keys=True)


def evaluation_outputs(results: str, sweep: Sweep, setting: str) -> list[str]:
    """The metrics directories of one evaluate job (one per (Q, scale) of the sweep), as rule patterns.

    ``setting`` and the ``{filter}`` and ``{batch}`` wildcards stay for Snakemake to fill.
    """
    return [
        f"{results}/metrics/{setting}/{{filter}}/q{q}_cov{fmt(s)}/batch{{batch}}"
        for q, s in sweep.evaluations()
    ]


def evaluation_timing_files(results: str, sweep: Sweep) -> list[str]:
    """The timing CSV of every evaluation job: one per (setting, filter or tracker, batch) and, for a
    tracker (scored per (Q, scale)), per (Q, scale)."""
    out = []
    for st in sweep.settings():
        where = f"{results}/timing/evaluate/{st['scenario']}/clutter{st['clutter']}_pd{st['pd']}"
        for filt, b in product(sweep.filters, sweep.batches):
            out.append(f"{where}/{filt}/batch{b}.csv")
        for t, (q, s), b in product(sweep.trackers, sweep.evaluations(), sweep.batches):
            out.append(f"{where}/{tracker_dir(t)}/q{q}_cov{fmt(s)}/batch{b}.csv")
    return out


# ---------------------------------------------------------------------------------------------
# External trackers (config section ``trackers``; docs/score.md, "Scoring a tracker in the pipeline")


#: Built-in filter names: a tracker may not take one (its rows would merge with the filter's).
def tracker_dir(name: str) -> str:
    """The path component of tracker ``name`` under ``tracks/`` and ``metrics/``: ``tracker-<name>``."""
    return f"tracker-{name}"


def _setting_fields(setting, batch: int | str | None = None) -> dict:
    """scenario, clutter, pd (and batch) of a setting: a dict or Snakemake's wildcards object."""
    out = {
        k: str(setting[k] if isinstance(setting, dict) else getattr(setting, k))
        for k in ("scenario", "clutter", "pd")
    }
    if batch is not None:
        out["batch"] = str(batch)
    return out


def tracker_command(config: dict, name: str, scenario_dir: str, tracks_dir: str, setting: dict, batch) -> str:
    """The shell command that writes tracker ``name``'s tables ``tracks_dir/seed<N>.<format>``.

    ``command`` is the config's template with ``{scenario_dir}``,
    ``{tracks_dir}``, ``{scenario}``, ``{clutter}``, ``{pd}`` and ``{batch}``
    (the directory name, ``batch<b>`` or ``calibration<seed>``) filled in
    (paths shell-quoted). A ``{`` that names another field is an
    error naming the key.
    """
    template = config["trackers"][name]["command"]
    fields = dict(_setting_fields(setting, batch), scenario_dir=shlex.quote(scenario_dir))
    fields["tracks_dir"] = shlex.quote(tracks_dir)
    try:
        return template.format(**fields)
    except (KeyError, IndexError, ValueError) as exc:
        raise ValueError(
            f"config key trackers.{name}.command: expected fields among {sorted(fields)},"
            f" got {template!r} ({exc})"
        ) from None


def tracker_tables(config: dict, name: str, setting: dict, seeds) -> list[str]:
    """The existing tracks tables of a ``tracks:`` pattern tracker, one per seed (in ``seeds`` order).

    The pattern's fields are ``{scenario}``, ``{clutter}``, ``{pd}`` and ``{seed}``.
    """
    pattern = config["trackers"][name]["tracks"]
    out = []
    for seed in seeds:
        try:
            out.append(pattern.format(**_setting_fields(setting), seed=int(seed)))
        except (KeyError, IndexError, ValueError) as exc:
            raise ValueError(
                f"config key trackers.{name}.tracks: expected fields among clutter, pd, scenario, seed,"
                f" got {pattern!r} ({exc})"
            ) from None
    return out


def gather_tracks(tables, seeds, out_dir: str | Path) -> Path:
    """Copy one tracks table per seed into ``out_dir/seed<N>.csv|.parquet`` (atomically).

    The layout ``nllbench score --tracks-dir`` reads. The suffix must be
    ``.csv`` or ``.parquet``; a missing table is an error naming it.
    """
    import shutil

    from nllbench.store import atomic_directory

    tables, seeds = [Path(t) for t in tables], [int(s) for s in seeds]
    if len(tables) != len(seeds):
        raise ValueError(f"gather_tracks: expected one table per seed, got {len(tables)} for {len(seeds)}")
    for t in tables:
        if t.suffix not in (".csv", ".parquet"):
            raise ValueError(f"{t}: expected a .csv or .parquet tracks table, got suffix {t.suffix!r}")
        if not t.is_file():
            raise ValueError(f"{t}: tracks table not found")
    with atomic_directory(out_dir) as tmp:
        for t, seed in zip(tables, seeds, strict=True):
            shutil.copyfile(t, tmp / f"seed{seed}{t.suffix}")
    return Path(out_dir)


def score_flags(config: dict, name: str, calibration: dict | None = None) -> str:
    """Fill-in flags of ``nllbench score`` (batch form) for tracker ``name``.

    The evaluation options come once, as ``--settings`` (:func:`score_settings`;
    no estimator: the tracker's point estimates are its rows with r above the
    existence threshold). ``calibration`` maps each calibration seed to its
    ``(tracks table, scenario file)`` pair, for ``fit_undetected_on`` and
    ``fit_score_on``. Every fill-in comes from the config entry, none implied.
    """
    spec = config["trackers"][name]
    flags = f"--tracker {shlex.quote(name)}"
    flags += " --state " + " ".join(shlex.quote(s) for s in spec["state"])
    if spec.get("undetected_rate") is not None:
        flags += f" --undetected-rate {spec['undetected_rate']}"
    for field, flag in (("fit_undetected_on", "--fit-undetected-on"), ("fit_score_on", "--fit-score-on")):
        if spec.get(field) is not None:
            pair = (calibration or {}).get(int(spec[field]))
            if pair is None:
                raise ValueError(f"trackers.{name}.{field}: no calibration files for seed {spec[field]}")
            flags += f" {flag} " + " ".join(shlex.quote(str(p)) for p in pair)
    if spec.get("fov") is not None:
        flags += " --fov " + " ".join(str(v) for v in spec["fov"])
    if spec.get("default_std") is not None:
        flags += f" --default-std {spec['default_std']}"
    if spec.get("existence_one"):
        flags += " --existence-one"
    return flags + _trajectory_flags(spec, name, calibration)


def _trajectory_flags(spec: dict, name: str, calibration: dict | None) -> str:
    """The trajectory-NLL flags of tracker ``name`` (``--trajectory`` unless ``trajectory: false``)."""
    if not spec.get("trajectory", True):
        return ""
    flags = " --trajectory"
    if spec.get("undetected_trajectories") is not None:
        flags += " --undetected-trajectories " + " ".join(str(v) for v in spec["undetected_trajectories"])
    if spec.get("unlisted_presence") is not None:
        flags += f" --unlisted-presence {spec['unlisted_presence']}"
    seed = spec.get("fit_trajectory_on")
    if seed is not None:
        pair = (calibration or {}).get(int(seed))
        if pair is None:
            raise ValueError(f"trackers.{name}.fit_trajectory_on: no calibration files for seed {seed}")
        flags += " --fit-trajectory-on " + " ".join(shlex.quote(str(p)) for p in pair)
    if spec.get("trajectory_mixture", "refuse") != "refuse":
        flags += f" --trajectory-mixture {spec['trajectory_mixture']}"
    return flags


def score_settings(config: dict, name: str, q, cov_scale, batch) -> str:
    """``nllbench score --settings`` for tracker ``name`` at one (Q, covariance scale) (JSON).

    The ``evaluation`` section as for :func:`evaluate_settings`, for this one
    Q and scale (the exact NLL and the proper scores at the smallest Q at
    scale 1 only, as :func:`nllbench.measures.run.evaluate.grid_settings` asks them
    of the filters), with the tracker's name (``tracker``) and, recorded only,
    its config entry (``entry``) and ``batch``: the provenance stored in its
    metrics files.
    """
    e = config["evaluation"]
    q, cov_scale = int(q), float(cov_scale)
    out = {k: v for k, v in e.items() if k not in ("estimators", "cov_scales", "probe_q")}
    first = q == min(int(x) for x in e["q"]) and cov_scale == 1.0
    exact = bool(e.get("exact")) and first
    proper = bool(e.get("proper_scores", True)) and first  # the validated config holds the key
    out.update(q=[q], cov_scale=cov_scale, exact=exact, proper_scores=proper, tracker=name, batch=int(batch))
    out["entry"] = config["trackers"][name]
    return json.dumps(out, sort_keys=True)


def part_seeds(sweep: Sweep, part: str) -> list[int]:
    """Seeds of a scenario / tracks directory name: ``batch<b>`` (a test batch) or ``calibration<s>``."""
    if part.startswith("batch") and part[5:].isdigit():
        return sweep.batch_seeds(int(part[5:]))
    if part.startswith("calibration") and part[11:].isdigit():
        return [int(part[11:])]
    raise ValueError(f"part: expected batch<b> or calibration<seed>, got {part!r}")


def trackers_of_kind(config: dict, kind: str) -> list[str]:
    """Names of the trackers that run a ``command`` (kind ``"command"``) or read ``tracks`` tables."""
    if kind not in ("command", "tracks"):
        raise ValueError(f"kind: expected 'command' or 'tracks', got {kind!r}")
    return sorted(n for n, spec in (config.get("trackers") or {}).items() if spec.get(kind) is not None)


def name_constraint(names) -> str:
    """A wildcard regex matching exactly ``names`` (none: a regex that matches nothing)."""
    import re

    return "|".join(re.escape(n) for n in names) if names else "(?!)"


def tracker_calibration_files(
    results: str, config: dict, name: str, setting: dict
) -> dict[int, tuple[str, str]]:
    """Calibration seed -> (tracks table, scenario file) of tracker ``name`` in one setting."""
    ext = config["trackers"][name]["format"]
    f = _setting_fields(setting)
    where = f"{f['scenario']}/clutter{f['clutter']}_pd{f['pd']}"
    return {
        s: (
            f"{results}/tracks/{where}/{tracker_dir(name)}/calibration{s}/seed{s}.{ext}",
            f"{results}/scenarios/{where}/calibration{s}/seed{s}.nc",
        )
        for s in tracker_calibration_seeds(config, name)
    }


def calibration_dirs(results: str, config: dict, name: str, setting: dict) -> list[str]:
    """The directories holding tracker ``name``'s calibration files (inputs of its scoring jobs)."""
    pairs = tracker_calibration_files(results, config, name, setting).values()
    return sorted({str(Path(p).parent) for pair in pairs for p in pair})


def main(argv=None) -> int:
    """``python -m nllbench.pipeline.workflow gather-tracks --output-dir D --seeds N... --tables T...``."""
    import argparse

    p = argparse.ArgumentParser(prog="python -m nllbench.pipeline.workflow", description=main.__doc__)
    sub = p.add_subparsers(dest="command", required=True)
    g = sub.add_parser("gather-tracks", help="copy one tracks table per seed into DIR/seed<N>.<suffix>")
    g.add_argument("--output-dir", required=True)
    g.add_argument("--seeds", type=int, nargs="+", required=True)
    g.add_argument("--tables", nargs="+", required=True)
    args = p.parse_args(argv)
    out = gather_tracks(args.tables, args.seeds, args.output_dir)
    print(f"wrote {len(args.tables)} tracks tables to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
