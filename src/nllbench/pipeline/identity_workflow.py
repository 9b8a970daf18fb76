"""The identity study in the workflow: its jobs' files and the slice of the configuration they are handed.

The workflow's configuration may hold an ``identity`` section (keys of
:func:`nllbench.pipeline.identity_study.plan_from_config`: ``seeds``,
``clutter_rate``, ``steps``, ``q``, ``filters``; ``docs/trajectory_filters.md``).
Absent or null, no identity job is planned. The rules
(``workflow/rules/identity.smk``) pass the section to ``nllbench identity-run``
(one job per seed) and ``nllbench identity`` (tables, figure, page); these
helpers check it when the workflow is parsed (errors name the key, before any
job runs) and list the jobs' files.
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
