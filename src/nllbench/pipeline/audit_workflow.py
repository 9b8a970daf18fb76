"""The propriety audit in the workflow: which outputs its job writes and the slice it is handed.

The workflow's configuration may hold an ``audit`` section with the keys of an
audit configuration (``config/audit/audit.yaml``: ``settings``, ``densities``,
``trajectories``, ``filters``; ``docs/audit.md``). Absent or null, no audit job
is planned. The audit rule (``workflow/rules/audit.smk``) passes the section
to ``nllbench audit --config-json``; these helpers check it when the workflow
is parsed (errors name the key, before any job runs) and list the job's files.
"""

from __future__ import annotations

import json

from nllbench.pipeline.report_items import audit_items


def audit_section(config: dict) -> dict | None:
    """The configuration's ``audit`` section, or None where it has none (absent or null)."""
    section = config.get("audit")
    if section is None:
        return None
    if not isinstance(section, dict):
        raise ValueError(f"config key audit: expected a mapping or null, got {type(section).__name__}")
    return section


def audit_config_json(config: dict) -> str:
    """``nllbench audit --config-json``: the ``audit`` section as JSON, checked.

    The section must configure part 1 (at least one of ``densities`` or
    ``trajectories``): its figure and verdict table are the report's items.
    Raises ValueError naming the key (``config key audit.settings: ...``).
    """
    from nllbench.pipeline.audit import plan_from_config

    section = audit_section(config)
    if section is None:
        raise ValueError("config key audit: expected a mapping, got none (no audit is configured)")
    try:
        plan = plan_from_config(section)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"config key audit: {exc}") from None
    if not plan.densities:
        raise ValueError(
            "config key audit: expected at least one entry in densities or trajectories "
            "(the report shows part 1's figure and verdict table)"
        )
    return json.dumps(section, sort_keys=True)


def audit_has_filters(config: dict) -> bool:
    """Whether the audit runs part 2 (reference filters): it then also writes their figure and tables."""
    section = audit_section(config)
    return bool(section and section.get("filters"))


#: The file of each audit report item (:data:`nllbench.pipeline.report_items.AUDIT_ITEMS`).
ITEM_FILES = {"audit": "audit.png", "verdicts": "verdicts.html", "filters": "filters.png"}


def audit_targets(results: str, config: dict) -> list[str]:
    """The audit's files that ``rule all`` asks for (its report items): none without an ``audit`` section."""
    return [f"{results}/audit/{ITEM_FILES[item.figure]}" for item in audit_items(config)]
