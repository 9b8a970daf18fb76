"""One writer per output, and only files and directories: the locks and checks behind
:mod:`nllbench.store.atomic`.

* :func:`lock_output`: the exclusive lock of an output, an advisory ``flock``
  on ``.NAME.nllbench-lock`` beside it (:func:`lock_name`) recording its
  holder (pid, host, command, start); another live holder is refused by name
  (:class:`OutputBusy`). The kernel releases a lock when its process dies;
  the file left behind is taken over (and removed) by the next writer.
* :func:`non_regular_kind`, :func:`check_regular_input`: device nodes,
  FIFOs, sockets (and, for outputs, symbolic links) are neither read nor
  replaced: a FIFO blocks its reader forever.
* :func:`disk_full_cause`, :class:`DiskFull`: a write that filled the disk
  (``ENOSPC``, ``EDQUOT``, or NetCDF's "HDF error" with the disk full),
  reported naming the output.
* :func:`hold_for_tests`: the testing hook :data:`HOLD_ENV`.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import re
import socket
import stat
import sys
import time
from collections.abc import Sequence
from pathlib import Path

LOCK_SUFFIX = ".nllbench-lock"

#: Environment variable naming a FIFO a command waits on after taking its locks (tests only).
HOLD_ENV = "NLLBENCH_TEST_HOLD_FIFO"

#: The name of a lock file, with the name of its target as group ``name``.
LOCK_FILE = re.compile(rf"\.(?P<name>.+){re.escape(LOCK_SUFFIX)}")

_UNNAMED_TRIES = 40  # times 50 ms: how long a lock held by an unrecorded holder is waited for
_FREE_WHEN_FULL = 16 << 20  # bytes left below which a NetCDF "HDF error" is taken for a full disk


def lock_name(path: str | os.PathLike) -> Path:
    """The lock file of ``path``'s writer: ``.NAME.nllbench-lock`` beside it."""
    path = Path(path)
    return path.with_name(f".{path.name}{LOCK_SUFFIX}")


def non_regular_kind(path: str | os.PathLike, follow: bool = True) -> str:
    """What stands at ``path`` when it is neither a regular file nor a directory ("" otherwise).

    "a FIFO (named pipe)", "a character device", "a block device", "a socket";
    with ``follow=False`` also "a symbolic link". A missing path, or one
    that cannot be examined, gives "".
    """
    try:
        mode = os.stat(path).st_mode if follow else os.lstat(path).st_mode
    except (OSError, ValueError):
        return ""
    kinds = (
        (stat.S_ISLNK, "a symbolic link"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    )
    return next((what for test, what in kinds if test(mode)), "")


class OutputBusy(ValueError):
    """Another live command holds the lock of an output (the message names it and its holder)."""


def _holder_record() -> dict:
    return {
        "nllbench_lock": 1,
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "command": " ".join(["nllbench", *sys.argv[1:]]) if sys.argv else "nllbench",
        "since": time.strftime("%Y-%m-%d %H:%M:%S %z"),
    }


def _read_holder(fd: int) -> dict:
    """The lock file's record ({} when empty, unreadable, or cut short by a killed writer)."""
    try:
        record = json.loads(os.pread(fd, 1 << 16, 0).decode("utf-8", errors="replace"))
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) and record.get("nllbench_lock") == 1 else {}


def _foreign(fd: int) -> bool:
    """True for a lock file holding something nllbench never writes there (not a JSON object)."""
    head = os.pread(fd, 64, 0).lstrip()
    return bool(head) and not head.startswith(b"{")


def _describe(holder: dict | None) -> str:
    if not holder:
        return "another nllbench command"
    return (
        f"another nllbench command (pid {holder.get('pid')} on host {holder.get('host')}, "
        f"since {holder.get('since')}: {holder.get('command')})"
    )


class TargetLock:
    """The exclusive lock of one target: ``flock`` on its lock file (:func:`lock_name`).

    :meth:`try_take` gives the lock, or the holder's record when another
    process holds it ({} while it has not recorded itself), or neither when
    the file system cannot lock (some network file systems). The lock file is
    removed on release while the lock is held; a taker checks that the file
    it locked is still the one at the path, so removal never lets two
    writers in.
    """

    def __init__(self, fd: int, path: Path):
        self.fd, self.path = fd, path

    @classmethod
    def try_take(cls, target: Path, record: bool = True) -> tuple[TargetLock | None, dict | None]:
        """(lock, None), or (None, holder record) when held, or (None, None) when locks are unsupported."""
        path = lock_name(target)
        while True:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _read_holder(fd)
                os.close(fd)
                return None, holder
            except OSError:  # ENOLCK, EOPNOTSUPP: no locks on this file system
                os.close(fd)
                return None, None
            try:
                same = os.path.samestat(os.fstat(fd), os.lstat(path))
            except OSError:
                same = False
            if not same:  # removed (or replaced) by its last holder after we opened it: again
                os.close(fd)
                continue
            lock = cls(fd, path)
            if record:
                if _foreign(fd):
                    lock.release(remove=False)
                    raise ValueError(
                        f"{str(path)!r}: expected an nllbench lock file (JSON) or nothing, got other data; "
                        "remove it yourself"
                    )
                text = json.dumps(_holder_record(), sort_keys=True).encode() + b"\n"
                try:
                    os.ftruncate(fd, 0)
                    os.pwrite(fd, text, 0)
                except BaseException:  # a full disk: no lock left behind in this process
                    lock.release()
                    raise
            return lock, None

    def release(self, remove: bool = True) -> None:
        if self.fd is None:
            return
        if remove:
            try:
                if os.path.samestat(os.fstat(self.fd), os.lstat(self.path)):
                    self.path.unlink()
            except OSError:
                pass
        os.close(self.fd)
        self.fd = None


def disk_full_cause(exc: BaseException | None, directories: Sequence[Path]) -> str:
    """Why ``exc`` means the disk is full ("" when it does not): ENOSPC or EDQUOT anywhere in its chain,
    or NetCDF's "HDF error" with (almost) no space left in one of ``directories``."""
    chain, seen = [], set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        chain.append(exc)
        exc = exc.__cause__ or exc.__context__
    for e in chain:
        if isinstance(e, OSError) and e.errno in (errno.ENOSPC, errno.EDQUOT):
            return "no space left on device" if e.errno == errno.ENOSPC else "disk quota exceeded"
    hdf = next((str(e) for e in chain if "HDF error" in str(e)), "")
    if hdf:
        for d in directories:
            try:
                vfs = os.statvfs(d)
            except OSError:
                continue
            if vfs.f_bavail * vfs.f_frsize < _FREE_WHEN_FULL:
                return f"{hdf} with {vfs.f_bavail * vfs.f_frsize // 1024} KiB left on the device"
    return ""


class DiskFull(OSError):
    """A write of an output filled the disk (the message names the output and the directory)."""


def full_disk_error(where: str, directory: Path, why: str) -> DiskFull:
    err = DiskFull(
        f"{where}: the disk is full ({why}) in {str(directory)!r}; nothing was written or replaced. "
        "Free some space, or write elsewhere"
    )
    err.errno = errno.ENOSPC
    return err


def check_regular_input(path: str | os.PathLike, option: str) -> None:
    """Refuse an input that is neither a regular file nor a directory, or a directory holding one
    (a FIFO blocks its reader forever), naming ``option`` and what it is."""
    path = Path(path)
    where = f"{option} {str(path)!r}" if option else repr(str(path))
    if what := non_regular_kind(path):
        raise ValueError(f"{where}: expected a regular file or a directory, got {what}")
    if os.path.isdir(path):  # False, not an error, for a name too long or holding a NUL byte
        try:
            entries = sorted(os.scandir(path), key=lambda e: e.name)
        except OSError:
            return  # the command's reader names an unreadable directory
        for entry in entries:
            if what := non_regular_kind(entry.path):
                raise ValueError(
                    f"{where}: holds {entry.name!r}, {what}; expected regular files "
                    "(reading it could block forever)"
                )


_held_once = False


def hold_for_tests() -> None:
    """Wait on the FIFO named by :data:`HOLD_ENV`, once per process (tests force an overlap with it)."""
    global _held_once
    fifo = os.environ.get(HOLD_ENV)
    if fifo and not _held_once:
        _held_once = True
        with open(fifo, "rb") as fh:
            fh.read()


def lock_output(path: Path, where: str) -> TargetLock | None:
    """Take the exclusive lock of the output ``path`` (named ``where`` in errors) for this process.

    Gives the lock, or None where the file system cannot lock. Raises
    :class:`OutputBusy` naming the holder when another live process holds
    it (a holder that has not recorded itself yet is waited for up to 2 s),
    :class:`DiskFull` when the lock file cannot be written for a full disk,
    ValueError for any other reason the lock file cannot be created.
    """
    try:
        for _ in range(_UNNAMED_TRIES):
            lock, holder = TargetLock.try_take(path)
            if lock is not None or holder is None or holder:
                break
            time.sleep(0.05)  # held by a writer not yet recorded, or briefly by another's clean-up
    except OSError as exc:
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            raise full_disk_error(where, path.parent, exc.strerror.lower()) from None
        raise ValueError(
            f"{where}: cannot create its lock file {str(lock_name(path))!r}: {exc.strerror or exc}"
        ) from None
    if lock is None and holder is not None:
        raise OutputBusy(
            f"{where}: {_describe(holder)} is writing it; wait for it to finish, or write elsewhere "
            f"(a lock ends with its process: {str(lock_name(path))!r})"
        )
    return lock
