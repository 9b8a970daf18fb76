"""How a settings dataclass field becomes a command-line option and a config key.

A field that a user sets carries its option in its metadata (:func:`option`):
help text, type, bounds or choices. From that metadata

* :func:`add_options` builds the command-line options (``--gate``,
  ``--phd-prune``, ``--q``, ...): type, bounds, help and default are never
  re-typed in the command line;
* :func:`options_of` lists the fields with an option under their config keys
  (:func:`nllbench.settings.config_defaults` takes their defaults from it);
* :func:`from_args` builds the dataclass from parsed options.

This module needs only :mod:`argparse` and :mod:`dataclasses`: the settings
dataclasses of every layer (filters, measures) declare their fields with it,
and :mod:`nllbench.settings`, above them, collects them.
"""

from __future__ import annotations

import argparse
import dataclasses
import math

#: Largest Murty budget Q an option or config key accepts. Ranking keeps up to Q assignments
#: per step: Q = 10**6 took 98 s and 0.9 GB for a 4-step Williams run, Q = 10**9 exhausts memory.
MAX_Q = 10**6
#: Largest CPHD cardinality bound: the CPHD prediction builds (N+1) x (N+1) arrays; N = 10**4
#: needs several GB, N = 1000 about 8 MB each.
MAX_CPHD_CARD = 1000
#: Largest cap on kept components or hypotheses ((C)PHD components, PMBM global hypotheses).
MAX_CAP = 10**6
#: Longest run ``nllbench simulate`` writes (steps of one file; a truth file's last step): 10**5
#: Williams steps took 50 s and 0.45 GB; the memory grows with the steps.
MAX_STEPS = 10**5
#: Most steps one ``simulate`` batch writes (steps x seeds), about 1.4 hours of simulation.
MAX_BATCH_STEPS = 10**7
#: Most clutter measurements one simulated run holds on average (steps x clutter rate):
#: 10**7 took 22 s, 0.86 GB and a 136 MB file.
MAX_CLUTTER_MEASUREMENTS = 10**7
#: Largest 64-bit signed integer: integers nllbench records (seeds, frames) are stored as such.
MAX_INT64 = 2**63 - 1
#: Largest seed: seeds are recorded as 64-bit signed integers in every file nllbench writes.
MAX_SEED = MAX_INT64


def integer(low: int | None = None, high: int | None = None):
    """argparse type: an integer in [``low``, ``high``] (None: unbounded); argparse names the option."""
    span = f">= {low}" if high is None else (f"<= {high}" if low is None else f"in [{low}, {high}]")

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if (low is not None and value < low) or (high is not None and value > high):
            raise argparse.ArgumentTypeError(f"expected an integer {span}, got {text!r}")
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
    number; ``low`` and ``high`` of an integer), ``choices`` (a "choice"), ``many`` (a
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
        return integer(meta.get("low"), meta.get("high"))
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


def refuse_repeats(values, option: str, noun: str, why: str = "") -> None:
    """Raise ``ValueError`` naming ``option`` and the first value given twice (``why``: what each is for).

    A list a user typed with a value twice is a typo, named, never dropped
    silently: "--seeds: seed 0 is given twice; expected each seed once (one
    file each)". Values are compared as numbers (``1`` and ``1.0`` are the same scale).
    """
    seen: set = set()
    for value in values:
        if value in seen:
            shown = int(value) if isinstance(value, float) and value.is_integer() else value
            raise ValueError(f"{option}: {noun} {shown} is given twice; expected each {noun} once{why}")
        seen.add(value)
