"""Atomic, owned, exclusive outputs: every file and directory nllbench writes appears whole or not
at all, nllbench replaces only what it wrote itself, and one output has one writer at a time.

A target is written under a temporary name beside it that is unique to the
writer (``.NAME.nllbench-partial.PID-TOKEN``, :func:`partial_name`) and
renamed into place when complete, so a failed write leaves no partial file
and two writers never share a temporary. A writer holds an exclusive lock
on each of its targets while it writes: an advisory ``flock`` on the lock
file ``.NAME.nllbench-lock`` beside the target (:func:`lock_name`), which
records who holds it (pid, host, command, start). A second command writing
the same target is refused before any work, naming the holder
(:class:`~nllbench.store.locks.OutputBusy`); the kernel releases a lock when its process dies, so
a killed run never blocks the next one, and the lock file it leaves is
removed by the next writer. A temporary whose target's lock no live writer
holds was left by a killed run; the next command that writes into that
directory removes it. A target that is itself a temporary (a file written
inside a command's temporary directory, or a command's temporary handed to
a library writer) is written directly: the enclosing temporary already
makes it atomic, so temporaries never nest.

Directories: every output directory carries a marker file
:data:`MARKER` (``.nllbench-output``; JSON, with what the directory holds
when the command says so). An existing directory is replaced only when it
is empty or carries the marker, and not by outputs of another kind (a
directory of posterior files is not replaced by tables); a directory
holding anything else is refused before any work, naming what is in the way.
Only regular files and directories are replaced: a symbolic link, a device
node, a FIFO, a socket or a mount point given as an output is refused
(:func:`non_regular_kind`). A file that a command names after another
output (the ``<output>.summary.csv`` beside a metrics file, the .pdf and
caption beside a figure: ``Output.beside``) is replaced only when nllbench
wrote it together with that output (both carry the same modification time
to the nanosecond, set when they are renamed into place) and it has not
been changed since; a user's own file there is refused. Outputs are also
refused when they are, contain or lie inside one of the command's inputs
(:class:`committed_together`, ``inputs=``). A write that fills the disk
(``ENOSPC``, or NetCDF's ``HDF error`` with the disk full) is reported
naming the output; the temporaries are removed and the old output stays.

No byte of a finished output is lost when one is replaced: an existing
directory is swapped with its finished replacement in one step where Linux
can (``renameat2`` with ``RENAME_EXCHANGE``), so the output path always
holds a whole directory, the old one or the new one. Elsewhere the old one
is moved aside to ``.NAME.nllbench-old.PID-TOKEN`` (its previous finished
output, never a partial one) and the new one renamed into place; if the
writer dies between those two renames, the next command that writes or
reads the path puts the old copy back, and no clean-up removes an aside
copy while its path is missing (:mod:`nllbench.store.exchange`). A file is
replaced in one rename.

:class:`committed_together` does this for all outputs of one command at
once; :func:`atomic_directory`, :func:`write_text` and :func:`save_figure`
are its one-output forms.

Testing hook: with the environment variable :data:`HOLD_ENV` naming a FIFO,
a command waits, after taking its locks and before writing anything, until
the FIFO is opened for writing and closed (once per process); the tests use
it to make two commands overlap deterministically.
"""

from __future__ import annotations

import errno
import json
import os
import re
import secrets
import shutil
import stat
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from nllbench.store.exchange import (
    ASIDE,
    OLD_SUFFIX,
    TOKEN,
    replace_directory,
    restore_input,
    restore_replaced,
)
from nllbench.store.locks import (
    LOCK_FILE,
    DiskFull,
    TargetLock,
    check_regular_input,
    disk_full_cause,
    full_disk_error,
    hold_for_tests,
    lock_output,
    non_regular_kind,
)

MARKER = ".nllbench-output"
"""Name of the marker file in every directory nllbench writes (JSON: writer, version, option)."""

PARTIAL_SUFFIX = ".nllbench-partial"
_TEMPORARY = re.compile(
    rf"\.(?P<name>.+)(?:{re.escape(PARTIAL_SUFFIX)}|{re.escape(OLD_SUFFIX)})\.(?P<token>{TOKEN})"
)


def new_token() -> str:
    """A writer's token, ``PID-RANDOM`` (8 hex digits): makes its temporaries' names its own."""
    return f"{os.getpid()}-{secrets.token_hex(4)}"


def partial_name(path: str | os.PathLike, token: str | None = None) -> Path:
    """The temporary name under which ``path`` is written: ``.NAME.nllbench-partial.TOKEN`` beside it.

    ``token`` (:func:`new_token`; a fresh one when not given) makes the name
    the writer's own, so two commands writing the same target never share a
    temporary, and it is a name no user would choose. The temporary of a
    temporary is itself (:func:`is_temporary`): temporaries never nest.
    """
    path = Path(path)
    if is_temporary(path):
        return path
    return path.with_name(f".{path.name}{PARTIAL_SUFFIX}.{token or new_token()}")


def is_temporary(path: str | os.PathLike) -> bool:
    """True for a name nllbench writes under (``.NAME.nllbench-partial.TOKEN``) or moves aside to
    (``-old.TOKEN``), and for anything inside a directory of that name."""
    return any(_TEMPORARY.fullmatch(part) for part in Path(path).parts)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    elif path.exists() or path.is_symlink():
        path.unlink()


def _clear(target: Path, temporaries: Sequence[Path]) -> None:
    """Remove a dead writer's ``temporaries`` of ``target`` (its lock is held); with ``target``
    missing, its previous finished directory left aside is put back, never removed."""
    restore_replaced(target, held=True)
    missing = not os.path.lexists(target)
    for entry in temporaries:
        if not (missing and ASIDE.fullmatch(entry.name)):
            _remove(entry)


def remove_stale_temporaries(directory: str | os.PathLike, target: str | os.PathLike | None = None) -> None:
    """Remove what killed runs left in ``directory``: temporaries and lock files of dead writers.

    The temporaries of ``target`` go at once (the caller gives it only while
    it holds its lock: they are a killed run's); those of every other target
    only when no live writer holds that target's lock (it can be taken at
    once), so a command starting beside a running one never takes its
    temporaries. Where the file system cannot lock, nothing is removed. Names that are not
    nllbench's (``.NAME.nllbench-partial.PID-TOKEN``, ``-old.PID-TOKEN``,
    ``.NAME.nllbench-lock``) are never touched. A target's previous finished
    directory moved aside (``-old.PID-TOKEN``) is removed only while the
    target itself exists: when the target is missing, the copy is put back
    in its place instead (:func:`restore_replaced`).
    """
    directory = Path(directory)
    if not directory.is_dir():
        return
    by_target: dict[str, list[Path]] = {}
    for entry in directory.iterdir():
        found = _TEMPORARY.fullmatch(entry.name) or LOCK_FILE.fullmatch(entry.name)
        if found:
            by_target.setdefault(found.group("name"), []).append(entry)
    own = None if target is None else Path(target).name
    for name, entries in by_target.items():
        temporaries = [e for e in entries if _TEMPORARY.fullmatch(e.name)]
        if name == own:
            _clear(directory / name, temporaries)
            continue
        try:
            lock, _ = TargetLock.try_take(directory / name, record=False)
        except (OSError, ValueError):
            continue
        if lock is None:
            continue
        try:
            _clear(directory / name, temporaries)
        finally:
            lock.release()


def _umask() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return umask


@dataclass(frozen=True)
class Output:
    """One output of a command: its path, the option that named it (for errors), file or directory,
    for a directory what it holds (``kind``, e.g. "posterior files"; recorded in its marker), and for
    a file named after another output (the summary beside a metrics file) that output's path
    (``beside``): such a file is replaced only when nllbench wrote it with that output."""

    path: Path
    option: str = "output"
    directory: bool = False
    kind: str = ""
    beside: Path | None = None


def _where(path, option: str) -> str:
    return f"{option} {str(path)!r}" if option else repr(str(path))


def _listing(path: Path, most: int = 3) -> str:
    names = sorted(p.name for p in path.iterdir())
    shown = ", ".join(names[:most]) + (f" and {len(names) - most} more" if len(names) > most else "")
    return f"{len(names)} entr{'y' if len(names) == 1 else 'ies'}: {shown}"


def _leftover(entry: Path) -> bool:
    """A killed run's temporary or lock file; not a previous finished directory whose target is missing."""
    aside = ASIDE.fullmatch(entry.name)
    if aside and not os.path.lexists(entry.with_name(aside.group("name"))):
        return False
    return bool(_TEMPORARY.fullmatch(entry.name) or LOCK_FILE.fullmatch(entry.name))


def written_by_nllbench(path: str | os.PathLike) -> bool:
    """True for an existing directory that nllbench may replace: empty, or carrying :data:`MARKER`.

    A directory that holds only temporaries and lock files of killed nllbench runs counts as empty.
    """
    path = Path(path)
    if (path / MARKER).is_file():
        return True
    return all(_leftover(p) for p in path.iterdir())


def _marker_kind(path: Path) -> str:
    """What the directory's marker says it holds ("" when it does not say or cannot be read)."""
    try:
        record = json.loads((path / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ""
    return str(record.get("holds", "")) if isinstance(record, dict) else ""


def check_replaceable(path: str | os.PathLike, option: str = "output directory", kind: str = "") -> None:
    """Refuse to replace an existing directory that nllbench did not write, or cannot remove.

    With ``kind`` (what the new directory will hold), a directory whose marker
    says it holds something else (a command's outputs of another kind:
    posterior files replaced by tables) is refused too, and so is a mount
    point (a rename cannot replace it). The error names the path, what is in
    it and what to do; nothing is touched.
    """
    path = Path(path)
    if not path.is_dir() or path.is_symlink():
        if path.is_symlink():
            raise ValueError(
                f"{_where(path, option)}: is a symbolic link; give the directory itself or a new path"
            )
        return
    where = _where(path, option)
    if os.path.ismount(path):
        raise ValueError(
            f"{where}: is a mount point, which nllbench cannot replace (it renames a finished directory "
            "into place); give a new directory inside it"
        )
    if not written_by_nllbench(path):
        raise ValueError(
            f"{where}: refusing to replace a directory that nllbench did not write "
            f"(it holds {_listing(path)}; no {MARKER} marker). Give a new or empty directory, "
            "or remove this one yourself"
        )
    found = _marker_kind(path)
    if kind and found and found != kind:
        raise ValueError(
            f"{where}: refusing to replace a directory of {found} (written by nllbench) with {kind}. "
            "Give a new or empty directory, or remove this one yourself"
        )
    if not os.access(path, os.W_OK | os.X_OK):
        raise ValueError(f"{where}: cannot replace it: the directory is not writable")


def check_beside(path: str | os.PathLike, beside: str | os.PathLike, option: str = "output") -> None:
    """Refuse to replace ``path``, a file named after the output ``beside``, unless nllbench wrote both.

    nllbench gives all files of one command the same modification time (to
    the nanosecond) when it renames them into place; a file at ``path``
    whose time differs from ``beside``'s (a user's own file, or one changed
    since) is refused, naming it and how to replace it deliberately.
    """
    path, beside = Path(path), Path(beside)
    try:
        found = os.lstat(path)
    except FileNotFoundError:
        return
    try:
        ours = os.lstat(beside)
        paired = stat.S_ISREG(found.st_mode) and found.st_mtime_ns == ours.st_mtime_ns
    except OSError:
        paired = False
    if not paired:
        raise ValueError(
            f"{_where(path, option)}: refusing to replace a file beside {str(beside)!r} that nllbench "
            "did not write with it (or that was changed since); name it explicitly to replace it, "
            "or move it away"
        )


def _inside(inner: Path, outer: Path) -> bool:
    return inner != outer and outer in inner.parents


def check_not_an_input(outputs: Sequence[Output], inputs: Sequence[tuple[str, str | os.PathLike]]) -> None:
    """Refuse an output that is, contains or lies inside one of the inputs (named by their options),
    and an input that is neither a regular file nor a directory, or a directory input that holds such
    a file (a FIFO would block its reader).

    Paths are compared after resolving symbolic links and ``..``; an existing
    file is also compared by identity (a hard link is the same file). A
    missing input that a killed writer left aside is put back first
    (:func:`restore_input`).
    """
    for opt, p in inputs:
        if p is not None:
            if not os.path.lexists(p):  # a finished output a killed writer left aside comes back
                restore_input(p)
            check_regular_input(p, opt)
    real_inputs = [(opt, Path(p), Path(os.path.realpath(p))) for opt, p in inputs if p is not None]
    for o in outputs:
        out = Path(os.path.realpath(o.path))
        for opt, given, real in real_inputs:
            same = out == real
            if not same and out.exists() and real.exists():
                try:
                    same = os.path.samefile(out, real)
                except OSError:
                    same = False
            if same:
                why = f"is the same path as the input {_where(given, opt)}"
            elif _inside(real, out):
                why = f"contains the input {_where(given, opt)}"
            elif _inside(out, real) and real.is_dir():
                why = f"lies inside the input directory {_where(given, opt)}"
            else:
                continue
            raise ValueError(f"{_where(o.path, o.option)}: {why}; choose an output path outside the inputs")


def _check_existing(o: Output) -> None:
    """Refuse to replace what stands at ``o.path`` unless nllbench may: no device node, FIFO, socket,
    symbolic link or mount point; a directory nllbench wrote (of the same kind); a file beside
    another output only when nllbench wrote them together."""
    target, where = o.path, _where(o.path, o.option)
    what = non_regular_kind(target, follow=False)
    if what == "a symbolic link":
        wanted = "directory" if o.directory else "file"
        raise ValueError(f"{where}: is a symbolic link; give the {wanted} itself or a new path")
    if what:
        raise ValueError(
            f"{where}: expected a regular file or a new path, got {what}; nllbench replaces only "
            "files and directories"
        )
    if target.exists() and target.is_dir() != o.directory:
        found, wanted = ("a directory", "file") if target.is_dir() else ("a file", "directory")
        raise ValueError(f"{where}: expected a {wanted} path, but {str(target)!r} is {found}")
    if o.directory:
        check_replaceable(target, o.option, o.kind)
    elif target.exists() and os.path.ismount(target):
        raise ValueError(f"{where}: is a mount point, which nllbench cannot replace; give another path")
    if o.beside is not None:
        check_beside(target, o.beside, o.option)


def check_output(
    path: str | os.PathLike,
    option: str = "output",
    directory: bool = False,
    kind: str = "",
    beside: str | os.PathLike | None = None,
) -> list[Path]:
    """Check that ``path`` can be written, create its missing parents, return the directories created.

    Errors name the user's path and the real cause: a parent that is a file,
    a file where a directory is expected (or the reverse), a directory that
    nllbench did not write (:func:`check_replaceable`), a device node, FIFO,
    socket, symbolic link or mount point, a file ``beside`` another output
    that nllbench did not write with it (:func:`check_beside`), a directory
    that cannot be created or written (read-only, ``/proc``), a full disk.
    """
    target = Path(path)
    where = _where(path, option)
    if not str(path) or target.name in ("", ".", ".."):
        raise ValueError(f"{where}: expected a path that names a {'directory' if directory else 'file'}")
    for parent in reversed(target.parents):
        if parent.exists() and not parent.is_dir():
            raise ValueError(f"{where}: cannot write there: {str(parent)!r} is a file, not a directory")
    _check_existing(Output(target, option, directory, kind, None if beside is None else Path(beside)))
    created = [p for p in reversed(target.parents) if not p.exists()]
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        remove_created_dirs(created)
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            raise full_disk_error(where, target.parent, exc.strerror.lower()) from None
        raise ValueError(
            f"{where}: cannot create directory {str(target.parent)!r}: {exc.strerror or exc}"
        ) from None
    probe = partial_name(target)
    try:
        probe.mkdir() if directory else probe.touch()
        _remove(probe)
    except OSError as exc:
        remove_created_dirs(created)
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            raise full_disk_error(where, target.parent, exc.strerror.lower()) from None
        cause = exc.strerror or str(exc)
        if exc.errno == errno.ENOENT and target.parent.is_dir():
            cause = f"the directory does not accept new files ({cause})"  # e.g. /proc
        raise ValueError(f"{where}: cannot write in {str(target.parent)!r}: {cause}") from None
    return created


def remove_created_dirs(created: Sequence[Path]) -> None:
    """Remove the directories :func:`check_output` created, deepest first, while they are empty."""
    for d in reversed(created):
        try:
            d.rmdir()
        except OSError:
            break


def _marker_text(option: str, kind: str = "") -> str:
    from nllbench.store.provenance import nllbench_version

    record = {"written_by": "nllbench", "version": nllbench_version(), "option": option}
    if kind:
        record["holds"] = kind
    return json.dumps(record, sort_keys=True) + "\n"


class committed_together:  # noqa: N801 - used as a context manager, like a function
    """Write all outputs of one command under temporary names; rename them into place together.

    ``with committed_together(Output(a, "-o"), Output(b, "--summary"), inputs=[("--truth", t)])
    as (ta, tb):`` write to ``ta`` and ``tb``. Before anything is computed,
    every target is checked (:func:`check_output`: an existing directory is
    replaced only if nllbench wrote it, only regular files and directories
    are replaced) and so is every output against the ``inputs`` (option,
    path) pairs (:func:`check_not_an_input`). Then the exclusive lock of
    every target is taken (a target another live command writes is refused
    naming it, :class:`OutputBusy`), the checks are repeated under the locks,
    and the temporaries that killed runs left beside the targets are removed.
    On an exception every temporary and every directory created for the
    outputs is removed, so a failed command leaves no output at all (a full
    disk is reported naming the outputs). Temporaries have names unique to
    this writer (:func:`partial_name`). A target that is itself a temporary
    is written directly (its enclosing temporary is renamed into place by
    its owner). Every directory output receives the :data:`MARKER` file;
    all file outputs get the same modification time (:func:`check_beside`).
    """

    def __init__(self, *outputs: Output, inputs: Sequence[tuple[str, str | os.PathLike]] = ()):
        outputs = tuple(
            Output(Path(o.path), o.option, o.directory, o.kind, None if o.beside is None else Path(o.beside))
            for o in outputs
        )
        paths = [o.path.resolve() for o in outputs]
        for i, p in enumerate(paths):
            if p in paths[:i]:
                other = outputs[paths.index(p)].option
                raise ValueError(f"{outputs[i].option} {str(outputs[i].path)!r}: the same path as {other}")
        check_not_an_input(outputs, inputs)
        self.outputs = outputs

    def __enter__(self) -> list[Path]:
        self.created: list[Path] = []
        self.locks: list[TargetLock] = []
        self.tmps: list[Path] = []
        self.token = new_token()
        self.direct = [is_temporary(o.path) for o in self.outputs]
        mine = [o for o, d in zip(self.outputs, self.direct, strict=True) if not d]
        try:
            for o in mine:
                self.created += check_output(o.path, o.option, o.directory, o.kind, o.beside)
            locked = [self._lock(o) for o in mine]
            for o in mine:  # a killed writer's previous finished directory comes back first
                restore_replaced(o.path, held=True)
            for o in mine:  # again under the locks: a writer that finished meanwhile changed them
                _check_existing(o)
            for o, held in zip(mine, locked, strict=True):  # without a lock, no target's are known dead
                remove_stale_temporaries(o.path.parent, o.path if held else None)
            if mine:
                hold_for_tests()
            self.tmps = [partial_name(o.path, self.token) for o in self.outputs]
            for o, tmp, direct in zip(self.outputs, self.tmps, self.direct, strict=True):
                if o.directory:
                    tmp.mkdir(exist_ok=direct)
                    if not (direct and (tmp / MARKER).exists()):  # the enclosing command's marker stays
                        (tmp / MARKER).write_text(_marker_text(o.option, o.kind), encoding="utf-8")
        except BaseException as exc:
            full = self._abandon(exc)
            if full is not None:
                raise full from None
            raise
        return self.tmps

    def _lock(self, o: Output) -> bool:
        """Take the lock of ``o``; False where the file system cannot lock."""
        lock = lock_output(o.path, _where(o.path, o.option))
        if lock is not None:
            self.locks.append(lock)
        return lock is not None

    def _unlock(self) -> None:
        for lock in self.locks:
            lock.release()
        self.locks = []

    def _abandon(self, exc: BaseException | None) -> OSError | None:
        """Remove every temporary and created directory, release the locks; the disk-full error if any."""
        full = ""  # reported by the outermost writer only, naming the user's outputs
        if exc is not None and not isinstance(exc, DiskFull) and not all(self.direct):
            full = disk_full_cause(exc, sorted({o.path.parent for o in self.outputs}))
        if len(self.tmps) == len(self.outputs):
            for tmp, direct in zip(self.tmps, self.direct, strict=True):
                if not direct:
                    _remove(tmp)
        self._unlock()
        remove_created_dirs(self.created)
        if not full:
            return None
        outputs = [o for o, direct in zip(self.outputs, self.direct, strict=True) if not direct]
        where = " and ".join(_where(o.path, o.option) for o in outputs)
        return full_disk_error(where, outputs[0].path.parent, full)

    def __exit__(self, exc_type, exc, tb) -> bool:
        if exc_type is not None:
            full = self._abandon(exc)
            if full is not None:
                raise full from None
            return False
        missing = [o.option for o, t in zip(self.outputs, self.tmps, strict=True) if not t.exists()]
        if missing:
            self._abandon(None)
            raise RuntimeError(f"output {missing[0]} was not written")
        umask = _umask()
        now = time.time_ns()
        try:
            for o, tmp, direct in zip(self.outputs, self.tmps, self.direct, strict=True):
                if direct:
                    continue
                os.chmod(tmp, (0o777 if o.directory else 0o666) & ~umask)
                if not o.directory:
                    os.utime(tmp, ns=(now, now))  # files written together: see check_beside
                if o.directory and o.path.exists():
                    replace_directory(tmp, o.path, self.token)
                else:
                    os.replace(tmp, o.path)
        except BaseException as exc:
            full = self._abandon(exc)
            if full is not None:
                raise full from None
            raise
        finally:
            self._unlock()
        return False


def atomic_directory(path: str | os.PathLike, option: str = "output directory") -> committed_together:
    """Fill a directory under a temporary name; rename it into place on success.

    ``with atomic_directory("out/batch0") as tmp: write files into tmp``.
    On an exception the temporary directory is removed and nothing appears.
    """
    return _OneDirectory(Output(Path(path), option, directory=True))


class _OneDirectory(committed_together):
    def __enter__(self) -> Path:
        return super().__enter__()[0]


def atomic_file(path: str | os.PathLike, option: str = "") -> committed_together:
    """Write one file under its temporary name; rename it into place on success.

    ``with atomic_file(path) as tmp: write to tmp``. On an exception the
    temporary is removed and ``path`` is left as it was.
    """
    return _OneFile(Output(Path(path), option))


class _OneFile(committed_together):
    def __enter__(self) -> Path:
        return super().__enter__()[0]


def write_text(path: str | os.PathLike, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically; return the path."""
    with atomic_file(path) as tmp:
        Path(tmp).write_text(text, encoding="utf-8")
    return Path(path)


def save_figure(
    fig, path: str | os.PathLike, metadata: dict[str, dict] | None = None, caption: str | None = None
) -> list[Path]:
    """Save a matplotlib figure as ``path`` (.png) and the same stem as .pdf, both atomically.

    ``metadata`` maps a suffix (".png", ".pdf") to matplotlib's ``metadata``
    argument for that format. With ``caption``, the text is also written as
    ``<stem>.caption.txt``. All files are renamed into place together; the
    ones named after ``path`` (the other format, the caption) are replaced
    only when nllbench wrote them with it (:func:`check_beside`).
    """
    path = Path(path)
    primary = path if path.suffix in (".png", ".pdf") else path.with_suffix(".png")
    targets = [path.with_suffix(".png"), path.with_suffix(".pdf")]
    if caption:
        targets.append(path.with_suffix(".caption.txt"))
    outputs = [Output(t, "", beside=None if t == primary else primary) for t in targets]
    with committed_together(*outputs) as tmps:
        for target, tmp in zip(targets[:2], tmps, strict=False):
            fmt = target.suffix[1:]
            meta = (metadata or {}).get(target.suffix)
            fig.savefig(tmp, format=fmt, dpi=150, bbox_inches="tight", metadata=meta)
        if caption:
            tmps[2].write_text(caption, encoding="utf-8")
    return targets
