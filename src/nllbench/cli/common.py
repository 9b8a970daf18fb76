"""What the commands share: number types, output checks, progress, batch forms and ``--settings``.

* :func:`checked_outputs`: every output of a command checked first, committed together at the end;
* :class:`Progress`: a long run's progress on stderr;
* :func:`batch_mode`, :func:`seed_files`, :func:`add_batch_io`, :func:`write_timing`: the one-run
  and batch forms of simulate, filter and evaluate;
* :func:`provenance_of`, :func:`add_settings_option`, :func:`settings_defaults`: the
  ``--settings`` object (the workflow's config slice) as option defaults, and the provenance.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from contextlib import contextmanager
from pathlib import Path

from nllbench.options import number

#: argparse types of the options that are no settings field: (0, inf), [0, inf), [0, 1].
POSITIVE = number(0, open_low=True)
NON_NEGATIVE = number(0)
PROBABILITY = number(0, 1)


@contextmanager
def checked_outputs(*targets: tuple[str, str | None, bool]):
    """Every output of a command, given as (option, path or None, is a directory).

    Yields the temporary path of each given target (None for absent ones).
    All targets are checked before anything is computed and are renamed into
    place together at the end; a failure leaves none of them
    (:class:`nllbench.store.committed_together`).
    """
    from nllbench.store import Output, committed_together

    given = [Output(Path(path), option, directory) for option, path, directory in targets if path]
    with committed_together(*given) as tmps:
        it = iter(tmps)
        yield [next(it) if path else None for _, path, _ in targets]


class Progress:
    """Progress of a long run on stderr: a live line on a terminal, else every 10%."""

    def __init__(self, label: str, total: int, enabled: bool = True):
        self.label, self.total, self.enabled = label, total, enabled
        self.tty = sys.stderr.isatty()
        self.start = time.perf_counter()
        self.next_pct = 10

    def __call__(self, k: int) -> None:
        if not self.enabled:
            return
        done = k + 1
        elapsed = time.perf_counter() - self.start
        line = f"[{self.label}] step {done}/{self.total} ({elapsed:.1f} s)"
        if self.tty:
            print("\r" + line, end="" if done < self.total else "\n", file=sys.stderr, flush=True)
        elif 100 * done >= self.next_pct * self.total or done == self.total:
            print(line, file=sys.stderr, flush=True)
            while 100 * done >= self.next_pct * self.total:
                self.next_pct += 10


def provenance_of(args: argparse.Namespace) -> dict | None:
    """The --provenance JSON, else the --settings object (the workflow's configuration slice), parsed."""
    if not getattr(args, "provenance", None):
        return json.loads(args.settings) if getattr(args, "settings", None) else None
    try:
        value = json.loads(args.provenance)
    except json.JSONDecodeError as exc:
        raise ValueError(f"--provenance: expected a JSON object, got {args.provenance!r} ({exc})") from None
    if not isinstance(value, dict):
        raise ValueError(f"--provenance: expected a JSON object, got {args.provenance!r}")
    return value


def write_timing(path: str | None, rows: list[dict]) -> None:
    """The timing rows of a command (--timing) as CSV, when a path is given."""
    if path:
        from nllbench.store import write_summary_csv

        write_summary_csv(rows, path)


def batch_mode(args, single: tuple[str, ...], batch: tuple[str, ...], command: str) -> bool:
    """True for the batch form; checks that exactly one form's arguments are given, completely."""
    s = " ".join(a.upper() if a in ("posterior", "scenario_file") else "--" + a for a in single)
    b = " ".join("--" + a.replace("_", "-") for a in batch)
    usage = f"{command}: give either {s} (one run) or {b} (a batch)"
    has_single = [getattr(args, a) is not None for a in single]
    has_batch = [getattr(args, a) is not None for a in batch]
    if any(has_single) and any(has_batch):
        raise ValueError(usage + ", not both")
    if all(has_batch):
        return True
    if all(has_single):
        return False
    raise ValueError(usage)


def json_option(text: str, option: str):
    """The value of a JSON option, or a ValueError naming the option."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{option}: expected JSON, got {text!r} ({exc})") from None


def warner(command: str):
    """A function printing ``nllbench COMMAND: warning: MESSAGE`` on stderr."""
    return lambda msg: print(f"nllbench {command}: warning: {msg}", file=sys.stderr)


def seed_files(directory: str) -> list[Path]:
    """The seed<N>.nc files of a batch's input directory, by seed."""
    files = sorted(
        Path(directory).glob("seed*.nc"), key=lambda p: int(p.stem[4:]) if p.stem[4:].isdigit() else -1
    )
    if not files:
        raise ValueError(f"{directory}: no seed*.nc files found")
    return files


def add_batch_io(parser: argparse.ArgumentParser, output: str, output_dir: str) -> None:
    """-o (one run), --output-dir and --timing (a batch), --provenance."""
    parser.add_argument("-o", "--output", help=output)
    parser.add_argument("--output-dir", help=output_dir)
    parser.add_argument("--timing", help="batch: CSV of compute seconds per item")
    parser.add_argument("--provenance", help="JSON object stored in the files (e.g. the config slice)")


def add_settings_option(parser: argparse.ArgumentParser, *recorded: str) -> None:
    """``--settings``: a JSON object of this command's options (the workflow's config slice).

    Its keys are option names with underscores (``max_hypotheses`` for
    ``--max-hypotheses``); ``recorded`` keys (and ``filter`` where the command
    has no such option) are recorded only. Options given on the command line
    win over the object's values. The object is the provenance stored in the
    outputs (unless ``--provenance`` is given).
    """
    parser.add_argument(
        "--settings", help="JSON object of option values (e.g. the workflow's config slice), recorded"
    )
    parser.set_defaults(recorded_settings=("filter", *recorded))


def _option_value(action: argparse.Action, key: str, value):
    """A --settings value checked and converted as the option ``action`` would parse it."""
    where = f"--settings key {key}"
    if value is None:
        return None
    if action.nargs == 0:  # a switch: store_true / store_const / --x/--no-x
        if isinstance(action, argparse.BooleanOptionalAction) or action.const is True:
            if not isinstance(value, bool):
                raise ValueError(f"{where}: expected true or false, got {value!r}")
            return value
        if value not in (action.default, action.const):
            raise ValueError(f"{where}: expected {action.default!r} or {action.const!r}, got {value!r}")
        return value
    many = action.nargs in ("+", "*")
    if many and not isinstance(value, list):
        raise ValueError(f"{where}: expected a list, got {value!r}")
    if isinstance(value, (dict, list)) and not many:
        raise ValueError(f"{where}: expected one value, got {value!r}")
    out = []
    for item in value if many else [value]:
        if isinstance(item, (bool, dict, list)):
            raise ValueError(f"{where}: expected a number or a string, got {item!r}")
        try:
            item = action.type(str(item)) if action.type else item
        except argparse.ArgumentTypeError as exc:
            raise ValueError(f"{where}: {exc}") from None
        if action.choices is not None and item not in action.choices:
            raise ValueError(f"{where}: expected one of {list(action.choices)}, got {item!r}")
        out.append(item)
    return out if many else out[0]


def settings_defaults(parser: argparse.ArgumentParser, args: argparse.Namespace) -> dict:
    """The --settings object of ``args`` as option defaults of its command's parser (checked)."""
    value = json_option(args.settings, "--settings")
    if not isinstance(value, dict):
        raise ValueError(f"--settings: expected a JSON object, got {args.settings!r}")
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    actions: dict = {}
    for a in sub.choices[args.command]._actions:  # the first option of a dest (--marginal, not --full-state)
        if a.option_strings:
            actions.setdefault(a.dest, a)
    out = {}
    for key, v in value.items():
        if key in actions and key not in ("settings", "provenance", "help"):
            out[key] = _option_value(actions[key], key, v)
        elif key not in args.recorded_settings:
            options = sorted(k for k in actions if k not in ("settings", "provenance", "help"))
            raise ValueError(
                f"--settings key {key}: expected one of {options} or {list(args.recorded_settings)}"
            )
    return out
