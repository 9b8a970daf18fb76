"""Atomic outputs: every file and directory nllbench writes appears whole or not at all.

A target is written under one temporary name beside it
(``.NAME.nllbench-partial``, :func:`partial_name`) and renamed into place
when complete, so a failed write leaves no partial file and a killed one
leaves one temporary that the next write of the same target removes.
:class:`committed_together` does this for all outputs of one command at
once; :func:`atomic_directory`, :func:`write_text` and :func:`save_figure`
are its one-output forms.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


def partial_name(path: str | os.PathLike) -> Path:
    """The one temporary name under which ``path`` is written: ``.NAME.nllbench-partial`` beside it.

    The name is deterministic, so that a run killed during a write (SIGKILL,
    power loss) leaves at most one temporary per target, which the next write
    of that target finds and removes; temporaries cannot accumulate.
    """
    path = Path(path)
    return path.with_name(f".{path.name}.nllbench-partial")


def _remove(path: Path) -> None:
    import shutil

    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    elif path.exists() or path.is_symlink():
        path.unlink()


def _remove_stale(path: Path) -> None:
    """Remove what an interrupted write of ``path`` left: its partial and old names, and the
    random-named temporaries (``.NAME.XXXXXXXX[.tmp]``) of earlier nllbench versions."""
    import re

    for name in (partial_name(path), path.with_name(f".{path.name}.nllbench-old")):
        _remove(name)
    legacy = re.compile(rf"\.{re.escape(path.name)}\.[A-Za-z0-9_]{{8}}(\.tmp)?")
    if path.parent.is_dir():
        for p in path.parent.iterdir():
            if legacy.fullmatch(p.name):
                _remove(p)


def _umask() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return umask


@dataclass(frozen=True)
class Output:
    """One output of a command: its path, the option that named it (for errors), file or directory."""

    path: Path
    option: str = "output"
    directory: bool = False


def check_output(path: str | os.PathLike, option: str = "output", directory: bool = False) -> list[Path]:
    """Check that ``path`` can be written, create its missing parents, return the directories created.

    Errors name the user's path and the real cause: a parent that is a file,
    a file where a directory is expected (or the reverse), a directory that
    cannot be created or written (read-only, ``/proc``).
    """
    target = Path(path)
    where = f"{option} {str(path)!r}" if option else repr(str(path))
    if not str(path) or target.name in ("", ".", ".."):
        raise ValueError(f"{where}: expected a path that names a {'directory' if directory else 'file'}")
    for parent in reversed(target.parents):
        if parent.exists() and not parent.is_dir():
            raise ValueError(f"{where}: cannot write there: {str(parent)!r} is a file, not a directory")
    if target.exists() and target.is_dir() != directory:
        found, wanted = ("a directory", "file") if target.is_dir() else ("a file", "directory")
        raise ValueError(f"{where}: expected a {wanted} path, but {str(target)!r} is {found}")
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
        _remove_stale(target)
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


class committed_together:  # noqa: N801 - used as a context manager, like a function
    """Write all outputs of one command under temporary names; rename them into place together.

    ``with committed_together(Output(a, "-o"), Output(b, "--summary")) as (ta, tb):``
    write to ``ta`` and ``tb``. Every target is checked (:func:`check_output`)
    before anything is computed; on an exception every temporary and every
    directory created for the outputs is removed, so a failed command leaves
    no output at all. Temporaries have deterministic names
    (:func:`partial_name`): a killed run's are removed by the next write of
    the same target.
    """

    def __init__(self, *outputs: Output):
        outputs = tuple(Output(Path(o.path), o.option, o.directory) for o in outputs)
        paths = [o.path.resolve() for o in outputs]
        for i, p in enumerate(paths):
            if p in paths[:i]:
                other = outputs[paths.index(p)].option
                raise ValueError(f"{outputs[i].option} {str(outputs[i].path)!r}: the same path as {other}")
        self.outputs = outputs

    def __enter__(self) -> list[Path]:
        self.created: list[Path] = []
        try:
            for o in self.outputs:
                self.created += check_output(o.path, o.option, o.directory)
        except BaseException:
            remove_created_dirs(self.created)
            raise
        self.tmps = [partial_name(o.path) for o in self.outputs]
        for o, tmp in zip(self.outputs, self.tmps, strict=True):
            if o.directory:
                tmp.mkdir()
        return self.tmps

    def __exit__(self, exc_type, exc, tb) -> bool:
        if exc_type is not None:
            for tmp in self.tmps:
                _remove(tmp)
            remove_created_dirs(self.created)
            return False
        missing = [o.option for o, t in zip(self.outputs, self.tmps, strict=True) if not t.exists()]
        if missing:
            self.__exit__(RuntimeError, None, None)
            raise RuntimeError(f"output {missing[0]} was not written")
        umask = _umask()
        for o, tmp in zip(self.outputs, self.tmps, strict=True):
            os.chmod(tmp, (0o777 if o.directory else 0o666) & ~umask)
            if o.directory and o.path.exists():
                # a directory cannot be replaced in one rename: move the old one aside first
                old = o.path.with_name(f".{o.path.name}.nllbench-old")
                os.replace(o.path, old)
                os.replace(tmp, o.path)
                _remove(old)
            else:
                os.replace(tmp, o.path)
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
