"""The identity study in the workflow: its jobs' files and the slice of the configuration they are handed.

The workflow's configuration may hold an ``identity`` section (keys of
:func:`nllbench.pipeline.identity_study.plan_from_config`: ``seeds``,
``clutter_rate``, ``steps``, ``q``, ``filters``; ``docs/trajectory_filters.md``).
Absent or null, no identity job is planned. The rules
(``workflow/rules/identity.smk``) pass the section to ``nllbench identity-run``
(one job per seed) and ``nllbench identity`` (tables, figure, page); these
helpers check it when the workflow is parsed (errors name the key, before any
job runs) and list the jobs' files. Each seed's job also writes, when the
study has trajectory filters, their final posteriors
(``identity_runs/posteriors/seed<N>/<condition>_<name>.nc``) and the runs they
were computed on (``identity_runs/scenarios/seed<N>/<condition>.nc``), for
``nllbench evaluate-trajectory``.
"""

from __future__ import annotations

import json

from nllbench.pipeline.report_items import identity_items


def identity_section(config: dict) -> dict | None:
    """The configuration's ``identity`` section, or None where it has none (absent or null)."""
    section = config.get("identity")
    if section is None:
        return None
    if not isinstance(section, dict):
        raise ValueError(f"config key identity: expected a mapping or null, got {type(section).__name__}")
    return section


def identity_config_json(config: dict) -> str:
    """``nllbench identity --config-json``: the ``identity`` section as JSON, checked.

    Raises ValueError naming the key (``config key identity.filters[2].filter: ...``).
    """
    from nllbench.pipeline.identity_study import plan_from_config

    section = identity_section(config)
    if section is None:
        raise ValueError("config key identity: expected a mapping, got none (no identity study configured)")
    try:
        plan_from_config(section)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"config key {exc}") from None
    return json.dumps(section, sort_keys=True)


def identity_seeds(config: dict) -> list[int]:
    """The seeds of the study (one job each): none without an ``identity`` section."""
    from nllbench.pipeline.identity_study import plan_from_config

    section = identity_section(config)
    return [] if section is None else list(plan_from_config(section).seeds)


#: The file of each identity report item (:data:`nllbench.pipeline.report_items.IDENTITY_ITEMS`).
ITEM_FILES = {"identity": "identity.png", "identity_table": "table.html"}


def identity_targets(results: str, config: dict) -> list[str]:
    """The files ``rule all`` asks for (the report items); none without an ``identity`` section."""
    return [f"{results}/identity/{ITEM_FILES[item.figure]}" for item in identity_items(config)]


def identity_run_files(results: str, config: dict) -> dict[str, list[str]]:
    """Each seed's files besides its rows, as patterns with the ``{seed}`` wildcard: ``posteriors`` (one
    per condition and trajectory filter) and ``scenarios`` (one per condition); both empty without
    trajectory filters (or without an ``identity`` section)."""
    from nllbench.pipeline.identity_study import CONDITIONS, plan_from_config, posterior_file, scenario_file

    section = identity_section(config)
    names = (
        []
        if section is None
        else [f.name for f in plan_from_config(section).filters if f.kind == "trajectory"]
    )
    if not names:
        return {"posteriors": [], "scenarios": []}
    base = f"{results}/identity_runs"
    return {
        "posteriors": [
            f"{base}/posteriors/seed{{seed}}/{posterior_file(c, n)}" for c in CONDITIONS for n in names
        ],
        "scenarios": [f"{base}/scenarios/seed{{seed}}/{scenario_file(c)}" for c in CONDITIONS],
    }


def identity_run_options(output) -> str:
    """``nllbench identity-run``'s ``--posterior-dir`` and ``--scenario-dir`` from a job's outputs (the
    directories of its files, :func:`identity_run_files`); empty where it writes none."""
    import shlex
    from pathlib import Path

    if not output.posteriors:
        return ""
    posterior_dir, scenario_dir = Path(output.posteriors[0]).parent, Path(output.scenarios[0]).parent
    return (
        f"--posterior-dir {shlex.quote(str(posterior_dir))} --scenario-dir {shlex.quote(str(scenario_dir))}"
    )
