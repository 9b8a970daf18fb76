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
import os
import sys
import time
from collections.abc import Sequence
from contextlib import contextmanager
from pathlib import Path

from nllbench.options import number

#: argparse types of the options that are no settings field: (0, inf), [0, inf), [0, 1].
POSITIVE = number(0, open_low=True)
NON_NEGATIVE = number(0)
PROBABILITY = number(0, 1)


@contextmanager
def checked_outputs(
    *targets: tuple,
    inputs: Sequence[tuple[str, str | os.PathLike | None]] = (),
):
    """Every output of a command, given as (option, path or None, False for a file or, for a
    directory, what it holds: True or a kind such as ``"posterior files"``), and for a file whose
    name the command made from another output's (the default ``--summary``), that output's path.

    A directory that nllbench wrote with outputs of another kind is not
    replaced (:func:`nllbench.store.check_replaceable`), nor is a file named
    after another output that nllbench did not write with it
    (:func:`nllbench.store.check_beside`). Another live command writing one
    of the outputs is refused, naming it (:class:`nllbench.store.OutputBusy`).

    Yields the temporary path of each given target (None for absent ones).
    ``inputs`` are the (option or argument name, path or None) of everything the
    command reads. All targets are checked before anything is computed: an
    output that is, contains or lies inside an input is refused naming both
    (:func:`nllbench.store.check_not_an_input`), and so is an existing
    directory that nllbench did not write. The targets are renamed into place
    together at the end; a failure leaves none of them
    (:class:`nllbench.store.committed_together`).
    """
    from nllbench.store import Output, committed_together

    for option, path, directory, *_ in targets:
        if path is not None:  # "" or "." would name no output
            names_a_file(path, option, "directory" if directory else "file")
            if not directory and Path(path).is_dir():  # said first: before what the directory holds
                raise ValueError(
                    f"{option} {str(path)!r}: expected a file path, but {str(path)!r} is a directory"
                )
    given = [
        Output(
            Path(path),
            option,
            bool(directory),
            directory if isinstance(directory, str) else "",
            Path(beside[0]) if beside and beside[0] is not None else None,
        )
        for option, path, directory, *beside in targets
        if path is not None
    ]
    _check_not_nested(given)
    read = [(option, path) for option, path in inputs if path is not None]
    with committed_together(*given, inputs=read) as tmps:
        it = iter(tmps)
        yield [next(it) if target[1] is not None else None for target in targets]


def _check_not_nested(outputs) -> None:
    """Refuse an output inside a directory output: the directory is replaced whole at the end."""
    for d in outputs:
        if not d.directory:
            continue
        outer = Path(os.path.realpath(d.path))
        for o in outputs:
            inner = Path(os.path.realpath(o.path))
            if o is not d and outer in inner.parents:
                raise ValueError(
                    f"{o.option} {str(o.path)!r}: lies inside the output directory {d.option} "
                    f"{str(d.path)!r}, which is replaced whole; write it elsewhere"
                )


def files_in(option: str, directory: str | None, names: Sequence[str]) -> list[tuple[str, Path]]:
    """(option, path) of the files ``names`` a command reads from ``directory`` (none when not given).

    The inputs of a command that reads a few known files of a directory
    written by another command (``--tables``, ``--example-dir``): an output
    beside them in that directory is allowed, an output equal to one of them is not.
    """
    return [] if directory is None else [(option, Path(directory) / name) for name in names]


#: What the directories that commands read from were written by (for the errors of :func:`require_files`).
WRITTEN_BY = {
    "--tables": "the tables written by 'nllbench aggregate'",
    "--example-dir": "a directory written by 'nllbench example N --out-dir'",
    "--example-dirs": "a directory written by 'nllbench example N --out-dir'",
}


def require_files(inputs: Sequence[tuple[str, str | os.PathLike]]) -> None:
    """Every (option, file) of ``inputs`` exists; else a ValueError naming the option and what is missing.

    A file of a directory option (:data:`WRITTEN_BY`) is named with its
    directory and what should have written it.
    """
    for option, path in inputs:
        path = Path(path)
        if path.is_file():
            continue
        if option in WRITTEN_BY:
            where, expected = f"{option} {str(path.parent)!r}", WRITTEN_BY[option]
            if not path.parent.is_dir():
                found = "a file" if path.parent.exists() else "no such directory"
                raise ValueError(f"{where}: expected {expected}, got {found}")
            raise ValueError(f"{where}: expected {expected}, but {path.name} is missing")
        raise ValueError(f"{option} {str(path)!r}: expected a file, got {not_a_file(path)}")


def names_a_file(path: str, option: str, what: str = "file") -> str:
    """``path`` if its last component names a ``what`` (file, directory); else a ValueError naming it."""
    if not str(path) or Path(path).name in ("", ".", ".."):
        raise ValueError(f"{option} {str(path)!r}: expected a path that names a {what}")
    return path


def not_a_file(path: str | os.PathLike) -> str:
    """What stands at ``path`` when it is not what was expected: "a directory", "a file" or "no such file"."""
    path = Path(path)
    return "a directory" if path.is_dir() else ("a file" if path.exists() else "no such file")


#: Leading bytes of binary formats given where a text file is expected, and what they are.
_BINARY_MAGIC = (
    (b"\x89HDF\r\n\x1a\n", "an HDF5 file (NetCDF-4)"),
    (b"CDF\x01", "a NetCDF (classic) file"),
    (b"CDF\x02", "a NetCDF (64-bit offset) file"),
    (b"CDF\x05", "a NetCDF (64-bit data) file"),
    (b"\x1f\x8b", "gzip-compressed data"),
    (b"BZh", "bzip2-compressed data"),
    (b"\xfd7zXZ\x00", "xz-compressed data"),
    (b"\x28\xb5\x2f\xfd", "zstd-compressed data"),
    (b"PK\x03\x04", "a zip archive (e.g. .xlsx)"),
    (b"PAR1", "a Parquet file"),
)


def check_text_file(path: str | os.PathLike, option: str, expected: str) -> None:
    """Refuse a file that is not UTF-8 text (NetCDF, HDF5, gzip, zip, Parquet, other binary data).

    The error names ``option``, the path, what the file is and what was
    ``expected`` (e.g. "a text CSV with columns step, id, x, y, vx, vy").
    A file that cannot be opened is left to the command's reader, which names it.
    """
    import codecs

    where = f"{option} {str(path)!r}"
    try:
        fh = open(path, "rb")  # noqa: SIM115 - read in chunks below
    except OSError:
        return
    with fh:
        head = fh.read(1 << 16)
        for magic, what in _BINARY_MAGIC:
            if head.startswith(magic):
                raise ValueError(f"{where}: expected {expected}, got {what}")
        decoder = codecs.getincrementaldecoder("utf-8")()
        offset, chunk = 0, head
        while True:
            try:
                decoder.decode(chunk, final=not chunk)
            except UnicodeDecodeError as exc:
                raise ValueError(
                    f"{where}: expected {expected}, got binary data (not UTF-8 text: "
                    f"byte 0x{exc.object[exc.start]:02x} near byte {offset + exc.start})"
                ) from None
            if b"\x00" in chunk:
                at = offset + chunk.index(b"\x00")
                raise ValueError(f"{where}: expected {expected}, got binary data (a NUL byte at byte {at})")
            if not chunk:
                return
            offset += len(chunk)
            chunk = fh.read(1 << 20)


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
    """The seed<N>.nc files of a batch's input directory, by seed (:func:`nllbench.store.seed_files`)."""
    from nllbench.store import seed_files as seeds

    files = seeds(directory, (".nc",), str(directory), "file")
    if not files:
        raise ValueError(f"{directory}: no seed*.nc files found")
    return files


def add_batch_io(parser: argparse.ArgumentParser, output: str, output_dir: str) -> None:
    """-o (one run), --output-dir and --timing (a batch), --provenance."""
    parser.add_argument("-o", "--output", help=output)
    parser.add_argument("--output-dir", help=output_dir)
    parser.add_argument("--timing", help="batch: CSV of compute seconds per item")
    parser.add_argument("--provenance", help="JSON object stored in the files (e.g. the config slice)")


class DeferredParser(argparse.ArgumentParser):
    """A command's parser whose arguments are added when it is first used (:func:`add_deferred_parser`).

    Any read of its actions (parsing it, its help, a walk over its options)
    adds them first, so it behaves as the parser built at once; a command
    whose options come from modules that other commands do not need (the
    filter's settings classes) costs nothing until it is chosen.
    """

    def __init__(self, *args, **kwargs) -> None:
        self._pending = None
        super().__init__(*args, **kwargs)

    @property
    def _actions(self) -> list:
        pending, self._pending = self._pending, None
        if pending is not None:
            pending(self)
        return self.__dict__["_actions"]

    @_actions.setter
    def _actions(self, value: list) -> None:
        self.__dict__["_actions"] = value

    @property
    def deferred(self) -> bool:
        """Whether its arguments are still to be added."""
        return self._pending is not None


def add_deferred_parser(sub, name: str, add_arguments, **kwargs) -> DeferredParser:
    """``sub.add_parser(name, **kwargs)``, with ``add_arguments(parser)`` run on the parser's first use."""
    parser_class = sub._parser_class
    sub._parser_class = DeferredParser
    try:
        parser = sub.add_parser(name, **kwargs)
    finally:
        sub._parser_class = parser_class
    parser._pending = add_arguments
    return parser


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


#: Said on stderr by a command that will compile the kernels (none in numba's cache yet).
FIRST_COMPILATION = (
    "nllbench {command}: compiling nllbench's numerical kernels on this first use (about a minute of CPU, "
    "once: they are cached afterwards; 'nllbench warmup' compiles them all ahead)"
)


def say_first_compilation(command: str) -> None:
    """Say on stderr that the kernels compile now, when none is cached (a first run after installing)."""
    import sys

    from nllbench.engine.assignment import kernels_cached

    if kernels_cached() is False:
        print(FIRST_COMPILATION.format(command=command), file=sys.stderr)
