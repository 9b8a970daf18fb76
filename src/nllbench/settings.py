"""The collection of settings: every settings dataclass of the command line and the config.

The frozen settings dataclasses (:class:`nllbench.filters.PMBMSettings`,
:class:`nllbench.filters.PHDSettings`, :class:`FilterRunSettings`,
:class:`nllbench.measures.run.evaluate.EvaluationSettings`) hold the only defaults;
each field that a user sets carries its option (:func:`nllbench.options.option`),
from which :mod:`nllbench.options` builds the command-line options and the
dataclass. This module sits above the filters and the measures and sees them
all: :data:`SECTIONS` names the dataclasses of each config section and
:func:`config_defaults` gives the workflow's defaults of every optional
dataclass-backed config key (the schema states their types and bounds but no
defaults; a test checks that the schema and the metadata agree).

A config key, its option and its dataclass field share one name: the key
``phd_prune`` is the option ``--phd-prune`` and ``PHDSettings.prune`` (prefix
``phd_``); the key ``q`` is ``--q`` and ``EvaluationSettings.qs``
(``name="q"``). The workflow passes a job's config slice once, as
``--settings JSON`` (:mod:`nllbench.cli`), which is also the provenance
stored in its outputs.
"""

from __future__ import annotations

from dataclasses import dataclass

from nllbench.filters import PHDSettings, PMBMSettings
from nllbench.filters.estimates import RULES
from nllbench.measures.run.evaluate import EvaluationSettings
from nllbench.options import MAX_CPHD_CARD, option, options_of


@dataclass(frozen=True)
class FilterRunSettings:
    """How a filter run is set up and what it stores, next to the filters' own settings.

    cphd_max_card : CPHD cardinality bound (None: from the scene).
    estimate_at : "posterior" (estimates extracted at evaluation from the
        stored posterior) or "update" (the filter's own, before pruning).
    estimator : point-estimation rule with ``estimate_at="update"``.
    existence_threshold : that estimator's threshold on r.
    """

    cphd_max_card: int | None = option(
        None, "CPHD cardinality bound (default: from the scene)", "integer", low=0, high=MAX_CPHD_CARD
    )
    estimate_at: str = option(
        "posterior",
        "extract point estimates at evaluation (posterior) or at update time, before pruning (update)",
        "choice",
        choices=("posterior", "update"),
    )
    estimator: str | None = option(
        None,
        "estimator rule with --estimate-at update",
        "choice",
        choices=RULES,
        config=False,
    )
    existence_threshold: float = option(
        0.4, "best_hypothesis estimator threshold on r", "number", low=0, high=1, open_high=True, config=False
    )

    def __post_init__(self) -> None:
        if self.estimate_at not in ("posterior", "update"):
            raise ValueError(f"estimate_at: expected 'posterior' or 'update', got {self.estimate_at!r}")
        if self.estimator is not None and self.estimate_at != "update":
            raise ValueError(
                "filter: --estimator needs --estimate-at update (else evaluate chooses the estimator)"
            )


#: Config section -> its settings dataclasses with the prefix of their keys (``nllbench filter``'s
#: and ``nllbench evaluate``'s options; the keys of each section backed by a dataclass field).
SECTIONS: dict[str, tuple[tuple[type, str], ...]] = {
    "filter": ((PMBMSettings, ""), (PHDSettings, "phd_"), (FilterRunSettings, "")),
    "evaluation": ((EvaluationSettings, ""),),
}


def config_defaults(section: str) -> dict:
    """Key -> default of every config key of ``section`` backed by a dataclass field (lists for tuples)."""
    out = {}
    for cls, prefix in SECTIONS[section]:
        for key, f in options_of(cls, prefix).items():
            if f.metadata.get("config", True):
                out[key] = list(f.default) if isinstance(f.default, tuple) else f.default
    return out
