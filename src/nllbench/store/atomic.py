"""Atomic, owned outputs: every file and directory nllbench writes appears whole or not at all,
and nllbench replaces only what it wrote itself.

A target is written under one temporary name beside it
(``.NAME.nllbench-partial``, :func:`partial_name`) and renamed into place
when complete, so a failed write leaves no partial file. A writer holds a
shared advisory lock (``flock``) on each directory it writes into; when no
writer holds a directory, its temporaries were left by killed runs and the
next command that writes there removes them. A target that is itself a
temporary (a file written inside a command's temporary directory, or a
command's temporary handed to a library writer) is written directly: the
enclosing temporary already makes it atomic, so temporaries never nest.

Directories: every output directory carries a marker file
:data:`MARKER` (``.nllbench-output``; JSON, with what the directory holds
when the command says so). An existing directory is replaced only when it
is empty or carries the marker, and not by outputs of another kind (a
directory of posterior files is not replaced by tables); a directory
holding anything else is refused before any work, naming what is in the way. Outputs are
also refused when they are, contain or lie inside one of the command's
inputs (:class:`committed_together`, ``inputs=``).

:class:`committed_together` does this for all outputs of one command at
once; :func:`atomic_directory`, :func:`write_text` and :func:`save_figure`
are its one-output forms.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

MARKER = ".nllbench-output"
"""Name of the marker file in every directory nllbench writes (JSON: writer, version, option)."""

PARTIAL_SUFFIX = ".nllbench-partial"
OLD_SUFFIX = ".nllbench-old"

_TEMPORARY = re.compile(rf"\..+({re.escape(PARTIAL_SUFFIX)}|{re.escape(OLD_SUFFIX)})")
_LEGACY = r"\.{name}\.[A-Za-z0-9_]{{8}}(\.tmp)?"  # random-named temporaries of earlier versions


def partial_name(path: str | os.PathLike) -> Path:
    """The one temporary name under which ``path`` is written: ``.NAME.nllbench-partial`` beside it.

    The name is deterministic, so that a run killed during a write (SIGKILL,
    power loss) leaves at most one temporary per target, which the next
    command writing into that directory finds and removes. The temporary of
    a temporary is itself (:func:`is_temporary`): temporaries never nest.
    """
    path = Path(path)
    if is_temporary(path):
        return path
    return path.with_name(f".{path.name}{PARTIAL_SUFFIX}")


def is_temporary(path: str | os.PathLike) -> bool:
    """True for a name nllbench writes under (``.NAME.nllbench-partial``) or moves aside to (``-old``),
    and for anything inside a directory of that name."""
    return any(_TEMPORARY.fullmatch(part) for part in Path(path).parts)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    elif path.exists() or path.is_symlink():
        path.unlink()


def _directory_lock(directory: Path, exclusive: bool) -> int | None:
    """A lock on ``directory`` (shared: blocking; exclusive: only if free at once), or None.

    Every writer holds the shared lock of the directories it writes into
    while it writes; a directory whose exclusive lock can be taken has no
    live writer, so every temporary in it was left by a killed run. Where
    the file system cannot lock directories (some network file systems)
    this gives None and no other writer's temporary is ever removed.
    """
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB if exclusive else fcntl.LOCK_SH)
    except OSError:
        os.close(fd)
        return None
    return fd


def _release(fd: int | None) -> None:
    if fd is not None:
        os.close(fd)


def remove_stale_temporaries(directory: str | os.PathLike, target: str | os.PathLike | None = None) -> None:
    """Remove what killed runs left in ``directory``.

    The target's own temporaries (``target``'s partial and old names, and the
    random-named ``.NAME.XXXXXXXX[.tmp]`` of earlier versions) go at once;
    every other ``.NAME.nllbench-partial`` / ``-old`` only when no live
    nllbench writer holds the directory (its exclusive lock can be taken),
    so a command starting beside a running one never takes its temporaries.
    """
    directory = Path(directory)
    if not directory.is_dir():
        return
    own: set[str] = set()
    legacy = None
    if target is not None:
        target = Path(target)
        own = {partial_name(target).name, f".{target.name}{OLD_SUFFIX}"}
        legacy = re.compile(_LEGACY.format(name=re.escape(target.name)))
    fd = _directory_lock(directory, exclusive=True)
    try:
        for entry in list(directory.iterdir()):
            mine = entry.name in own or (legacy is not None and legacy.fullmatch(entry.name))
            if mine or (fd is not None and _TEMPORARY.fullmatch(entry.name)):
                _remove(entry)
    finally:
        _release(fd)


def _umask() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return umask


@dataclass(frozen=True)
class Output:
    """One output of a command: its path, the option that named it (for errors), file or directory,
    and for a directory what it holds (``kind``, e.g. "posterior files"; recorded in its marker)."""

    path: Path
    option: str = "output"
    directory: bool = False
    kind: str = ""


def _where(path, option: str) -> str:
    return f"{option} {str(path)!r}" if option else repr(str(path))


def _listing(path: Path, most: int = 3) -> str:
    names = sorted(p.name for p in path.iterdir())
    shown = ", ".join(names[:most]) + (f" and {len(names) - most} more" if len(names) > most else "")
    return f"{len(names)} entr{'y' if len(names) == 1 else 'ies'}: {shown}"


def written_by_nllbench(path: str | os.PathLike) -> bool:
    """True for an existing directory that nllbench may replace: empty, or carrying :data:`MARKER`.

    A directory that holds only temporaries of killed nllbench runs counts as empty.
    """
    path = Path(path)
    if (path / MARKER).is_file():
        return True
    return all(_TEMPORARY.fullmatch(p.name) for p in path.iterdir())


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
    posterior files replaced by tables) is refused too. The error names the
    path, what is in it and what to do; nothing is touched.
    """
    path = Path(path)
    if not path.is_dir() or path.is_symlink():
        if path.is_symlink():
            raise ValueError(
                f"{_where(path, option)}: is a symbolic link; give the directory itself or a new path"
            )
        return
    where = _where(path, option)
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


def _inside(inner: Path, outer: Path) -> bool:
    return inner != outer and outer in inner.parents


def check_not_an_input(outputs: Sequence[Output], inputs: Sequence[tuple[str, str | os.PathLike]]) -> None:
    """Refuse an output that is, contains or lies inside one of the inputs (named by their options).

    Paths are compared after resolving symbolic links and ``..``; an existing
    file is also compared by identity (a hard link is the same file).
    """
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


def check_output(
    path: str | os.PathLike, option: str = "output", directory: bool = False, kind: str = ""
) -> list[Path]:
    """Check that ``path`` can be written, create its missing parents, return the directories created.

    Errors name the user's path and the real cause: a parent that is a file,
    a file where a directory is expected (or the reverse), a directory that
    nllbench did not write (:func:`check_replaceable`), a directory that
    cannot be created or written (read-only, ``/proc``). Temporaries that
    killed runs left in the target's directory are removed
    (:func:`remove_stale_temporaries`).
    """
    target = Path(path)
    where = _where(path, option)
    if not str(path) or target.name in ("", ".", ".."):
        raise ValueError(f"{where}: expected a path that names a {'directory' if directory else 'file'}")
    for parent in reversed(target.parents):
        if parent.exists() and not parent.is_dir():
            raise ValueError(f"{where}: cannot write there: {str(parent)!r} is a file, not a directory")
    if target.exists() and target.is_dir() != directory:
        found, wanted = ("a directory", "file") if target.is_dir() else ("a file", "directory")
        raise ValueError(f"{where}: expected a {wanted} path, but {str(target)!r} is {found}")
    if directory:
        check_replaceable(target, option, kind)
    created = [p for p in reversed(target.parents) if not p.exists()]
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        remove_created_dirs(created)
        raise ValueError(
            f"{where}: cannot create directory {str(target.parent)!r}: {exc.strerror or exc}"
        ) from None
    probe = partial_name(target)
    try:
        remove_stale_temporaries(target.parent, target)
        probe.mkdir() if directory else probe.touch()
        _remove(probe)
    except OSError as exc:
        remove_created_dirs(created)
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
    replaced only if nllbench wrote it) and so is every output against the
    ``inputs`` (option, path) pairs (:func:`check_not_an_input`). On an
    exception every temporary and every directory created for the outputs
    is removed, so a failed command leaves no output at all. Temporaries
    have deterministic names (:func:`partial_name`); while they are written
    their directories are held by a shared lock, and a killed run's are
    removed by the next command writing into the same directory. A target
    that is itself a temporary is written directly (its enclosing temporary
    is renamed into place by its owner).
    Every directory output receives the :data:`MARKER` file.
    """

    def __init__(self, *outputs: Output, inputs: Sequence[tuple[str, str | os.PathLike]] = ()):
        outputs = tuple(Output(Path(o.path), o.option, o.directory, o.kind) for o in outputs)
        paths = [o.path.resolve() for o in outputs]
        for i, p in enumerate(paths):
            if p in paths[:i]:
                other = outputs[paths.index(p)].option
                raise ValueError(f"{outputs[i].option} {str(outputs[i].path)!r}: the same path as {other}")
        check_not_an_input(outputs, inputs)
        self.outputs = outputs

    def __enter__(self) -> list[Path]:
        self.created: list[Path] = []
        self.locks: list[int] = []
        self.direct = [is_temporary(o.path) for o in self.outputs]
        try:
            for o, direct in zip(self.outputs, self.direct, strict=True):
                if not direct:
                    self.created += check_output(o.path, o.option, o.directory, o.kind)
        except BaseException:
            remove_created_dirs(self.created)
            raise
        parents = sorted(
            {o.path.parent.resolve() for o, d in zip(self.outputs, self.direct, strict=True) if not d}
        )
        self.locks = [fd for fd in (_directory_lock(p, exclusive=False) for p in parents) if fd is not None]
        self.tmps = [partial_name(o.path) for o in self.outputs]
        for o, tmp, direct in zip(self.outputs, self.tmps, self.direct, strict=True):
            if o.directory:
                tmp.mkdir(exist_ok=direct)
                if not (direct and (tmp / MARKER).exists()):  # the enclosing command's marker stays
                    (tmp / MARKER).write_text(_marker_text(o.option, o.kind), encoding="utf-8")
        return self.tmps

    def _unlock(self) -> None:
        for fd in self.locks:
            _release(fd)
        self.locks = []

    def __exit__(self, exc_type, exc, tb) -> bool:
        if exc_type is not None:
            for tmp, direct in zip(self.tmps, self.direct, strict=True):
                if not direct:
                    _remove(tmp)
            self._unlock()
            remove_created_dirs(self.created)
            return False
        missing = [o.option for o, t in zip(self.outputs, self.tmps, strict=True) if not t.exists()]
        if missing:
            self.__exit__(RuntimeError, None, None)
            raise RuntimeError(f"output {missing[0]} was not written")
        umask = _umask()
        try:
            for o, tmp, direct in zip(self.outputs, self.tmps, self.direct, strict=True):
                if direct:
                    continue
                os.chmod(tmp, (0o777 if o.directory else 0o666) & ~umask)
                if o.directory and o.path.exists():
                    # a directory cannot be replaced in one rename: move the old one aside first
                    old = o.path.with_name(f".{o.path.name}{OLD_SUFFIX}")
                    os.replace(o.path, old)
                    os.replace(tmp, o.path)
                    _remove(old)
                else:
                    os.replace(tmp, o.path)
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


def save_figure(fig, path: str | os.PathLike, metadata: dict[str, dict] | None = None) -> list[Path]:
    """Save a matplotlib figure as ``path`` (.png) and the same stem as .pdf, both atomically.

    ``metadata`` maps a suffix (".png", ".pdf") to matplotlib's ``metadata``
    argument for that format. Both files are renamed into place together.
    """
    path = Path(path)
    targets = [path.with_suffix(".png"), path.with_suffix(".pdf")]
    with committed_together(*(Output(t, "") for t in targets)) as tmps:
        for target, tmp in zip(targets, tmps, strict=True):
            fmt = target.suffix[1:]
            meta = (metadata or {}).get(target.suffix)
            fig.savefig(tmp, format=fmt, dpi=150, bbox_inches="tight", metadata=meta)
    return targets
