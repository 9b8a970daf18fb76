"""Replacing a finished output directory without ever losing it: the exchange, and its fallback.

:func:`replace_directory` is how :mod:`nllbench.store.atomic` puts a new
directory in place of an existing one. Where it can, one
:func:`exchange_directories` swaps them: Linux's ``renameat2(2)`` with
``RENAME_EXCHANGE``, called through :mod:`ctypes` (glibc 2.28 and later; the
system call by its number where the C library lacks the symbol); after the
swap the output path holds the new directory and the temporary name the
old one, and at no instant is the output path missing. Where the kernel or
the file system cannot exchange (``EINVAL``, ``ENOSYS``, ``EOPNOTSUPP``:
Linux before 3.15, some network and FUSE file systems, any other system),
the old directory is moved aside to ``.NAME.nllbench-old.PID-TOKEN``
(:func:`aside_name`; the previous finished output of ``NAME``, never a
partial one) and the new one renamed into place. A writer killed between
those two renames leaves the output path missing and its old copy aside:
the next command that writes or reads the path puts the copy back
(:func:`restore_replaced`, :func:`restore_input`), and nothing removes it
while the path is missing.
"""

from __future__ import annotations

import ctypes
import errno
import functools
import os
import platform
import re
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

from nllbench.store.locks import TargetLock

OLD_SUFFIX = ".nllbench-old"

#: A writer's token in a temporary's name: ``PID-RANDOM`` (8 hex digits).
TOKEN = r"[0-9]+-[0-9a-f]{8}"

#: The name of a target's previous finished directory moved aside (:func:`aside_name`), target as ``name``.
ASIDE = re.compile(rf"\.(?P<name>.+){re.escape(OLD_SUFFIX)}\.(?P<token>{TOKEN})")

RENAME_EXCHANGE = 2
"""``renameat2`` flag: swap the two names atomically (both must exist)."""

_AT_FDCWD = -100

# The renameat2 system call's number where glibc has no wrapper (linux/arch/*/syscall tables).
_SYSCALL_NUMBER = {
    "x86_64": 316,
    "amd64": 316,
    "i386": 353,
    "i686": 353,
    "aarch64": 276,
    "arm64": 276,
    "riscv64": 276,
    "loongarch64": 276,
    "armv7l": 382,
    "armv6l": 382,
    "ppc64le": 357,
    "ppc64": 357,
    "s390x": 347,
}

#: errno values meaning "this kernel or file system cannot exchange": take the other route.
UNSUPPORTED = frozenset({errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP})


@functools.cache
def _renameat2() -> Callable[[int, bytes, int, bytes, int], int] | None:
    """The C function ``renameat2`` (or a call of the system call), None where there is neither."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None
    function = getattr(libc, "renameat2", None)
    if function is not None:
        function.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
        function.restype = ctypes.c_int
        return function
    number = _SYSCALL_NUMBER.get(platform.machine().lower())
    syscall = getattr(libc, "syscall", None)
    if number is None or syscall is None:
        return None
    syscall.restype = ctypes.c_long

    def by_number(olddirfd: int, old: bytes, newdirfd: int, new: bytes, flags: int) -> int:
        args = (ctypes.c_int(olddirfd), ctypes.c_char_p(old), ctypes.c_int(newdirfd), ctypes.c_char_p(new))
        return syscall(ctypes.c_long(number), *args, ctypes.c_uint(flags))

    return by_number


def exchange_directories(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """Swap the directories (or files) at ``a`` and ``b`` atomically; both must exist.

    Returns True when swapped, False when this system cannot swap them in
    one step (nothing was changed: :data:`UNSUPPORTED`). Any other failure
    (a missing path, no permission, an I/O error) raises :class:`OSError`
    naming both paths, and nothing was changed either.
    """
    function = _renameat2()
    if function is None:
        return False
    if function(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in UNSUPPORTED:
        return False
    raise OSError(code, os.strerror(code), os.fspath(a), None, os.fspath(b))


def aside_name(path: str | os.PathLike, token: str) -> Path:
    """Where the previous finished directory ``path`` waits while it is replaced without an exchange:
    ``.NAME.nllbench-old.TOKEN`` beside it (never the name of a partial output)."""
    path = Path(path)
    return path.with_name(f".{path.name}{OLD_SUFFIX}.{token}")


def _aside_copies(path: Path) -> list[Path]:
    """The directories moved aside from ``path`` (:func:`aside_name`), the last one moved first."""
    try:
        entries = list(os.scandir(path.parent))
    except OSError:
        return []
    found = []
    for entry in entries:
        m = ASIDE.fullmatch(entry.name)
        if m and m.group("name") == path.name and entry.is_dir(follow_symlinks=False):
            try:
                found.append((entry.stat(follow_symlinks=False).st_ctime_ns, entry.name))
            except OSError:
                continue
    return [path.with_name(name) for _, name in sorted(found, reverse=True)]


def restore_replaced(path: str | os.PathLike, held: bool = False) -> bool:
    """Put back the previous finished directory of ``path`` that a killed writer left aside.

    A directory replaced without an exchange (:func:`exchange_directories`
    unsupported) is moved aside to :func:`aside_name` before the new one is
    renamed into place; a writer killed between the two renames leaves
    ``path`` missing and the old directory aside. When ``path`` is missing
    and such a copy exists, it is renamed back (the last one moved aside,
    if several). Unless the caller holds ``path``'s lock (``held``), the
    lock is taken first and nothing is done while a live writer holds it
    or where the file system cannot lock. True when a copy was put back.
    """
    path = Path(path)
    if os.path.lexists(path) or not _aside_copies(path):
        return False
    lock = None
    if not held:
        try:
            lock, _ = TargetLock.try_take(path, record=False)
        except (OSError, ValueError):
            return False
        if lock is None:
            return False
    try:
        copies = [] if os.path.lexists(path) else _aside_copies(path)
        if not copies:
            return False
        try:
            os.rename(copies[0], path)
        except OSError:
            return False
        return True
    finally:
        if lock is not None:
            lock.release()


def restore_input(path: str | os.PathLike) -> None:
    """Put back a missing input (or the missing directory above it) that a killed writer left aside
    (:func:`restore_replaced`), so a command reading an output finds its previous finished copy."""
    path = Path(path)
    for p in (path, *path.parents):
        if os.path.lexists(p) or restore_replaced(p):
            return


def replace_directory(tmp: Path, path: Path, token: str) -> None:
    """Put the finished directory ``tmp`` in place of the existing directory ``path``, never losing both.

    Where the kernel and file system can, one ``renameat2`` exchange swaps
    them (:func:`exchange_directories`): ``path`` holds the old directory
    up to the instant it holds the new one, and the old one, now under the
    temporary's name, is removed. Elsewhere a directory cannot be replaced
    in one rename: the old one is moved aside (:func:`aside_name`), the new
    one into place, the old one removed. If the second rename fails the old
    one is moved back; if the process dies between the two, the next
    command writing or reading ``path`` puts it back (:func:`restore_replaced`).
    """
    if exchange_directories(tmp, path):
        shutil.rmtree(tmp, ignore_errors=True)
        return
    old = aside_name(path, token)
    os.replace(path, old)
    try:
        os.replace(tmp, path)
    except BaseException:
        if not os.path.lexists(path):
            os.replace(old, path)
        raise
    shutil.rmtree(old, ignore_errors=True)
