"""Helpers for the Snakemake workflow: the sweep's jobs, batches and output paths.

The workflow declares; these functions compute what it needs (which seeds a
batch holds, which metric directories exist, the config slice each job
records), so that the rule files stay free of logic and the logic is tested.
"""

from __future__ import annotations

import copy
import json
import math
import shlex
from dataclasses import dataclass
from itertools import product
from pathlib import Path


def _finite_number(checker, instance) -> bool:
    """JSON-schema type ``number`` without NaN and infinity (YAML ``.nan``/``.inf`` parse as floats)."""
    return isinstance(instance, (int, float)) and not isinstance(instance, bool) and math.isfinite(instance)


def _key(path) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _describe(error) -> str:
    """One validation error as 'config key <dotted path>: <what is wrong>'."""
    where = _key(error.absolute_path)
    if error.validator == "required":
        missing = [k for k in error.validator_value if k not in error.instance]
        return "config: missing key " + ", ".join(f"{where}.{k}" if where else k for k in missing)
    if error.validator == "additionalProperties":
        return f"config key {where or '(top level)'}: {error.message}"
    if error.validator == "type" and isinstance(error.instance, float) and not math.isfinite(error.instance):
        return f"config key {where}: expected a finite number, got {error.instance}"
    return f"config key {where}: {error.message}"


def _fill_defaults(node, schema) -> None:
    """Add the schema's ``default`` of every absent optional key, in every object present.

    Objects keyed by user names (``additionalProperties`` a schema, e.g. the
    ``trackers`` entries) get the defaults of that schema in every entry.
    """
    if not isinstance(node, dict):
        return
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict):
        for key in set(node) - set(schema.get("properties", {})):
            _fill_defaults(node[key], extra)
    for key, sub in schema.get("properties", {}).items():
        if key not in node and "default" in sub:
            node[key] = copy.deepcopy(sub["default"])
        if key in node:
            _fill_defaults(node[key], sub)


def validated_config(config: dict, schema_path: str | Path) -> dict:
    """The configuration checked against the JSON schema, with the schema's defaults filled in.

    Numbers must be finite (``.nan`` and ``.inf`` are refused); a missing
    required key is named with its dotted path (``sweep.filters``); optional
    keys take the ``default`` written in the schema or, for the keys of
    ``filter`` and ``evaluation`` backed by a settings dataclass, that
    dataclass's default (:func:`nllbench.settings.config_defaults`). Raises
    ValueError listing every problem; then the ``trackers`` entries are
    checked against the sweep (:func:`check_trackers`).
    """
    import jsonschema
    import yaml

    schema = yaml.safe_load(Path(schema_path).read_text())
    base = jsonschema.Draft202012Validator
    types = base.TYPE_CHECKER.redefine("number", _finite_number)
    validator = jsonschema.validators.extend(base, type_checker=types)(schema)
    errors = sorted(validator.iter_errors(config), key=lambda e: [str(p) for p in e.absolute_path])
    if errors:
        raise ValueError("invalid configuration:\n  " + "\n  ".join(_describe(e) for e in errors))
    out = copy.deepcopy(config)
    _fill_defaults(out, schema)
    _fill_dataclass_defaults(out)
    check_sweep(out)
    check_trackers(out)
    return out


def check_sweep(config: dict) -> None:
    """Refuse what the schema cannot judge alone, before any job runs (ValueError naming the key).

    ``results`` must name a directory (not empty or blank: every output would
    be planned at the file system root); ``sweep.mb_birth`` must build a
    valid birth (finite means, symmetric positive-definite covariances).
    """
    from nllbench.simulation.scenarios import mb_birth_mixture

    if not str(config["results"]).strip():
        raise ValueError(f"config key results: expected a directory, got {config['results']!r}")
    entries = config["sweep"].get("mb_birth")
    if entries is not None:
        try:
            mb_birth_mixture(entries)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"config key sweep.{exc}") from None
    check_truth_file(config)


def check_truth_file(config: dict) -> None:
    """``sweep.truth`` must be a readable truth CSV that fits ``sweep.steps`` (errors name the key)."""
    from nllbench.simulation.scenarios import read_truth_csv

    truth = config["sweep"].get("truth")
    if truth is None:
        return
    if not Path(truth).is_file():
        raise ValueError(f"config key sweep.truth: expected a truth CSV file, got {truth!r} (no such file)")
    try:
        read_truth_csv(truth, config["sweep"].get("steps"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ValueError(f"config key sweep.truth: {exc}") from None


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


def _fill_dataclass_defaults(config: dict) -> None:
    """Add the default of every absent dataclass-backed key of ``filter`` and ``evaluation``.

    The settings dataclasses hold these defaults, the schema none
    (:func:`nllbench.settings.config_defaults`), so that each default lives in one place.
    """
    from nllbench.settings import SECTIONS, config_defaults

    for section in SECTIONS:
        node = config.setdefault(section, {})
        for key, default in config_defaults(section).items():
            node.setdefault(key, copy.deepcopy(default))


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
        from nllbench.measures.evaluate import evaluation_grid

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
BUILTIN_FILTERS = ("phd", "cphd", "pmb", "pmbm", "mbm", "mbm01")


def tracker_dir(name: str) -> str:
    """The path component of tracker ``name`` under ``tracks/`` and ``metrics/``: ``tracker-<name>``."""
    return f"tracker-{name}"


def tracker_calibration_seeds(config: dict, name: str) -> list[int]:
    """The calibration seeds of tracker ``name`` (``fit_undetected_on``, ``fit_score_on``), sorted."""
    spec = config["trackers"][name]
    return sorted({int(spec[k]) for k in ("fit_undetected_on", "fit_score_on") if spec.get(k) is not None})


def check_trackers(config: dict) -> None:
    """Refuse tracker entries the schema cannot judge alone (ValueError naming the key).

    A tracker name may not be a built-in filter's; a calibration seed must lie
    outside the test seeds 0 .. sweep.seeds - 1 (the fitted fill-ins would
    otherwise have seen the test set); an undetected-object intensity needs
    its box ``fov`` with one low and one high bound per state column.
    """
    trackers = config.get("trackers") or {}
    seeds = int(config["sweep"]["seeds"]) if trackers else 0
    for name, spec in trackers.items():
        key = f"config key trackers.{name}"
        if name in BUILTIN_FILTERS:
            raise ValueError(f"{key}: expected a name that is not a built-in filter's, got {name!r}")
        for field in ("fit_undetected_on", "fit_score_on"):
            seed = spec.get(field)
            if seed is not None and int(seed) < seeds:
                raise ValueError(
                    f"{key}.{field}: expected a calibration seed outside the test seeds 0..{seeds - 1}"
                    f" (>= sweep.seeds = {seeds}), got {seed}"
                )
        undetected = spec.get("undetected_rate") is not None or spec.get("fit_undetected_on") is not None
        fov, state = spec.get("fov"), spec["state"]
        if undetected and fov is None:
            raise ValueError(f"{key}.fov: the undetected-object intensity needs its box, got none")
        if fov is not None and len(fov) != 2 * len(state):
            raise ValueError(
                f"{key}.fov: expected {2 * len(state)} numbers (a low, then a high, per state column"
                f" {state}), got {len(fov)}"
            )
        if fov is not None:
            low, high = fov[: len(state)], fov[len(state) :]
            bad = [c for c, lo, hi in zip(state, low, high, strict=True) if not lo < hi]
            if bad:
                raise ValueError(
                    f"{key}.fov: expected each low below its high, got low {low} and high {high}"
                    f" (column {bad[0]})"
                )
        if spec.get("tracks") is not None:
            check_tracks_pattern(config, name)


def check_tracks_pattern(config: dict, name: str) -> None:
    """A ``tracks:`` pattern must tell apart every run it stands for.

    Without ``{seed}`` every seed's truth would be scored against one table
    (likewise ``{scenario}``, ``{clutter}``, ``{pd}`` when the sweep has several).
    """
    import string

    pattern = config["trackers"][name]["tracks"]
    sweep = config["sweep"]
    try:
        fields = {f for _, f, _, _ in string.Formatter().parse(pattern) if f is not None}
    except ValueError as exc:
        raise ValueError(f"config key trackers.{name}.tracks: {exc}, got {pattern!r}") from None
    runs = {
        "seed": int(sweep["seeds"]) + len(tracker_calibration_seeds(config, name)),
        "scenario": len(sweep["scenarios"]),
        "clutter": len(sweep["clutter_rates"]),
        "pd": len(sweep["detection_probabilities"]),
    }
    for field, count in runs.items():
        if count > 1 and field not in fields:
            raise ValueError(
                f"config key trackers.{name}.tracks: the sweep has {count} values of {field}, so the"
                f" pattern must contain {{{field}}} (else one table is scored against every {field}),"
                f" got {pattern!r}"
            )


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
    return flags


def score_settings(config: dict, name: str, q, cov_scale, batch) -> str:
    """``nllbench score --settings`` for tracker ``name`` at one (Q, covariance scale) (JSON).

    The ``evaluation`` section as for :func:`evaluate_settings`, for this one
    Q and scale (the exact NLL at the smallest Q at scale 1 only), with the
    tracker's name (``tracker``) and, recorded only, its config entry
    (``entry``) and ``batch``: the provenance stored in its metrics files.
    """
    e = config["evaluation"]
    q, cov_scale = int(q), float(cov_scale)
    out = {k: v for k, v in e.items() if k not in ("estimators", "cov_scales", "probe_q")}
    exact = bool(e.get("exact")) and q == min(int(x) for x in e["q"]) and cov_scale == 1.0
    out.update(q=[q], cov_scale=cov_scale, exact=exact, tracker=name, batch=int(batch))
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
