"""One settings path: config slice -> command-line options -> frozen dataclasses.

The frozen settings dataclasses (:class:`nllbench.filters.PMBMSettings`,
:class:`nllbench.filters.PHDSettings`, :class:`FilterRunSettings`,
:class:`nllbench.measures.evaluate.EvaluationSettings`) hold the only defaults. Each
field that a user sets carries its option in its metadata (:func:`option`):
help text, type, bounds or choices. From that metadata

* :func:`add_options` builds the command-line options (``--gate``,
  ``--phd-prune``, ``--q``, ...): type, bounds, help and default are never
  re-typed in the command line;
* :func:`config_defaults` gives the workflow's defaults of every optional
  dataclass-backed config key (the schema states their types and bounds but
  no defaults; a test checks that the schema and the metadata agree);
* :func:`from_args` builds the dataclass from parsed options.

A config key, its option and its dataclass field share one name: the key
``phd_prune`` is the option ``--phd-prune`` and ``PHDSettings.prune`` (prefix
``phd_``); the key ``q`` is ``--q`` and ``EvaluationSettings.qs``
(``name="q"``). The workflow passes a job's config slice once, as
``--settings JSON`` (:mod:`nllbench.cli`), which is also the provenance
stored in its outputs.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
from dataclasses import dataclass


def integer(low: int | None = None):
    """argparse type: an integer, at least ``low``; argparse names the option in the error."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if low is not None and value < low:
            raise argparse.ArgumentTypeError(f"expected an integer >= {low}, got {text!r}")
        return value

    return parse


def number(low: float | None = None, high: float | None = None, *, open_low=False, open_high=False):
    """argparse type: a finite number in [low, high] (``open_*``: that end excluded); never NaN or inf."""
    left = "(-inf" if low is None else ("(" if open_low else "[") + f"{low:g}"
    right = "inf)" if high is None else f"{high:g}" + (")" if open_high else "]")
    span = f"in {left}, {right}"

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        too_low = low is not None and (value <= low if open_low else value < low)
        too_high = high is not None and (value >= high if open_high else value > high)
        if not math.isfinite(value) or too_low or too_high:
            raise argparse.ArgumentTypeError(f"expected a finite number {span}, got {text!r}")
        return value

    return parse


def option(default, help: str, kind: str, **spec):
    """A settings field with its option: ``kind`` is "number", "integer", "bool" or "choice".

    ``spec``: ``low``, ``high``, ``open_low``, ``open_high`` (bounds of a
    number; ``low`` of an integer), ``choices`` (a "choice"), ``many`` (a
    list: ``nargs="+"``), ``name`` (the key and option name when it is not
    the field's), ``config=False`` (an option with no config key).
    """
    if kind not in ("number", "integer", "bool", "choice"):
        raise ValueError(f"kind: expected number, integer, bool or choice, got {kind!r}")
    return dataclasses.field(default=default, metadata={"help": help, "kind": kind, **spec})


def options_of(cls, prefix: str = "") -> dict[str, dataclasses.Field]:
    """Key (``prefix`` + the field's name or its ``name``) -> field, for every field with an option."""
    return {
        prefix + f.metadata.get("name", f.name): f for f in dataclasses.fields(cls) if "help" in f.metadata
    }


def _parser_type(meta):
    if meta["kind"] == "number":
        return number(meta.get("low"), meta.get("high"), open_low=meta.get("open_low", False),
                      open_high=meta.get("open_high", False))  # fmt: skip
    if meta["kind"] == "integer":
        return integer(meta.get("low"))
    return None


def add_options(parser: argparse.ArgumentParser, cls, prefix: str = "", skip=()) -> None:
    """Add one option per field of ``cls`` with an :func:`option` (not those named in ``skip``)."""
    for key, f in options_of(cls, prefix).items():
        if key in skip:
            continue
        meta, flag = f.metadata, "--" + key.replace("_", "-")
        kwargs = dict(dest=key, help=meta["help"], default=f.default)
        if meta["kind"] == "bool":
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, **kwargs)
            continue
        if meta.get("many"):
            kwargs.update(nargs="+", default=list(f.default) if f.default is not None else None)
        if meta["kind"] == "choice":
            kwargs["choices"] = list(meta["choices"])
        else:
            kwargs["type"] = _parser_type(meta)
        parser.add_argument(flag, **kwargs)


def from_args(cls, args: argparse.Namespace, prefix: str = "", **extra):
    """``cls`` from the parsed options of :func:`add_options` (those present), and ``extra``."""
    values = {f.name: getattr(args, key) for key, f in options_of(cls, prefix).items() if hasattr(args, key)}
    values.update(extra)
    return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in values.items()})


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
        None, "CPHD cardinality bound (default: from the scene)", "integer", low=0
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
        choices=("round", "greedy", "map", "best_hypothesis", "map_cardinality"),
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


def filter_classes() -> list[tuple[type, str]]:
    """The settings dataclasses of ``nllbench filter`` and the prefix of their keys."""
    from nllbench.filters import PHDSettings, PMBMSettings

    return [(PMBMSettings, ""), (PHDSettings, "phd_"), (FilterRunSettings, "")]


def evaluation_classes() -> list[tuple[type, str]]:
    """The settings dataclasses of ``nllbench evaluate`` and the prefix of their keys."""
    from nllbench.measures.evaluate import EvaluationSettings

    return [(EvaluationSettings, "")]


#: Config section -> its settings dataclasses (the keys of each section backed by a dataclass field).
SECTIONS = {"filter": filter_classes, "evaluation": evaluation_classes}


def config_defaults(section: str) -> dict:
    """Key -> default of every config key of ``section`` backed by a dataclass field (lists for tuples)."""
    out = {}
    for cls, prefix in SECTIONS[section]():
        for key, f in options_of(cls, prefix).items():
            if f.metadata.get("config", True):
                out[key] = list(f.default) if isinstance(f.default, tuple) else f.default
    return out
