"""The configuration: checked against the JSON schema and the sweep before any job runs.

:func:`validated_config` is what the Snakefile calls first: the schema's types
and bounds, finite numbers, the defaults of the schema and of the settings
dataclasses, then what the schema cannot judge alone (:func:`check_sweep`,
:func:`check_trackers`). Every error names the dotted config key.
"""

from __future__ import annotations

import copy
import math
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


BUILTIN_FILTERS = ("phd", "cphd", "pmb", "pmbm", "mbm", "mbm01")
#: Tracker entry keys naming a calibration seed.
CALIBRATION_FIELDS = ("fit_undetected_on", "fit_score_on", "fit_trajectory_on")


def tracker_calibration_seeds(config: dict, name: str) -> list[int]:
    """The calibration seeds of tracker ``name`` (``fit_undetected_on``, ``fit_score_on``,
    ``fit_trajectory_on``), sorted."""
    spec = config["trackers"][name]
    return sorted({int(spec[k]) for k in CALIBRATION_FIELDS if spec.get(k) is not None})


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
        for field in CALIBRATION_FIELDS:
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
        _check_trajectory_entry(spec, key)
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


def _check_trajectory_entry(spec: dict, key: str) -> None:
    """The trajectory-NLL keys of a tracker entry: they need ``trajectory``, and a box where uniform."""
    keys = ("undetected_trajectories", "unlisted_presence", "fit_trajectory_on")
    given = [k for k in keys if spec.get(k) is not None]
    if not spec.get("trajectory", True):
        if given:
            raise ValueError(f"{key}.{given[0]}: is for the trajectory NLL, but trajectory is false")
        return
    rates = spec.get("undetected_trajectories") or [0.0, 1.0]
    if not 0 < rates[1] <= 1:
        raise ValueError(f"{key}.undetected_trajectories: expected a presence in (0, 1], got {rates[1]}")
    boxed = (
        spec.get("fit_trajectory_on") is not None or rates[0] > 0 or (spec.get("unlisted_presence") or 0) > 0
    )
    if boxed and spec.get("fov") is None:
        raise ValueError(
            f"{key}.fov: the undetected trajectories and the unlisted presence are uniform on a box, got none"
        )


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
