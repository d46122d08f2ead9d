"""The one safe writer of every output file (``econ export``, ``econ quotes check --output``, scenario saves).

A file is written as a hidden temporary file in the target's own folder
(``.NAME.<pid>.<hex>.tmp``), flushed and fsynced, then published with one atomic rename (or a hard
link when an existing file must not be replaced), and the folder is fsynced. A reader therefore sees
the previous file or the new one, never a truncated one, whatever happens to the writing process
(``tests/ground/test_reliability_write.py`` kills it with SIGKILL mid-write).

- An existing target is replaced only with ``force=True`` (the CLI's ``--force``); otherwise the
  write is refused *before* any work, and again at publication time (a file that appeared meanwhile
  is not clobbered: :func:`os.link` fails on an existing name).
- The temporary file is removed on every exit path Python sees: an error, Ctrl-C, SIGTERM (turned
  into ``SystemExit`` for the duration of the write, when the process runs the default handler).
  SIGKILL cannot be caught: the next write to the same target removes temporary files whose
  writing process is gone (pid embedded in the name), and older-style ``.NAME.<hex>.tmp`` leftovers
  after :data:`STALE_TEMP_AGE_S`.
- Every operating-system failure becomes one :class:`~econ.errors.InvalidInputError` naming the path
  and the cause in words: a folder given as the target, a missing parent folder, no permission, a
  read-only file system, a full disk or quota, a name longer than the file system allows.

Atomic publication by rename within one folder: POSIX ``rename(2)``; durability of the rename needs
an fsync of the folder (``fsync(2)``, Linux ext4/xfs documentation).
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import signal
import stat
import threading
import time
from pathlib import Path

from econ.errors import EconError, InvalidInputError

STALE_TEMP_AGE_S = 3600.0
"""A temporary file without a pid in its name is removed by the next write once it is this old. [s]"""

_NAME_MAX_FALLBACK = 255  # bytes; Linux NAME_MAX (limits.h) when pathconf is unavailable

_REASONS = {
    errno.ENOENT: "the folder does not exist",
    errno.ENOTDIR: "a part of the path is a file, not a folder",
    errno.EISDIR: "it is a folder; give a file name",
    errno.EACCES: "no permission to write there",
    errno.EPERM: "no permission to write there",
    errno.EROFS: "the file system is read-only",
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk quota is exhausted",
    errno.EFBIG: "the file is larger than the file system allows",
    errno.ENAMETOOLONG: "the file name is longer than the file system allows",
    errno.ELOOP: "too many symbolic links in the path",
    errno.EXDEV: "the temporary file and the target are on different file systems",
    errno.EIO: "an input/output error of the storage device",
}


def describe_os_error(exc: OSError) -> str:
    """A short English reason for an :class:`OSError` (``"the disk is full"``), without a traceback."""
    reason = _REASONS.get(exc.errno)
    detail = exc.strerror or str(exc)
    return f"{reason} ({detail})" if reason and detail and detail != reason else (reason or detail)


def _name_max(folder: Path) -> int:
    try:
        return int(os.pathconf(folder, "PC_NAME_MAX"))
    except (OSError, ValueError, AttributeError):
        return _NAME_MAX_FALLBACK


def _force_text(force_hint: str) -> str:
    return f"add {force_hint} to replace it" if force_hint.startswith("-") else f"pass {force_hint} to replace it"


def check_target(path, force: bool = False, *, force_hint: str = "force=True", what: str = "output file") -> Path:
    """Fail early, before any work, if ``path`` cannot be written.

    Parameters
    ----------
    path : str or Path
        The file to write.
    force : bool
        Whether an existing file may be replaced.
    force_hint : str
        How the caller's user asks for ``force`` (``"--force"`` on the CLI), quoted in the refusal.
    what : str
        What the file is, in messages (``"output file"``, ``"scenario file"``).

    Returns
    -------
    Path
        ``Path(path)``.

    Raises
    ------
    InvalidInputError
        The path is empty, names a folder, its folder is missing or is a file, its name is too long
        for the file system, it exists and ``force`` is false, or its folder takes no new file (no
        permission, a read-only file system: probed by creating and removing a temporary file there).

    Notes
    -----
    Temporary files that killed writers left in the folder are removed here (:func:`clean_stale_temps`).
    """
    text = str(path)
    if not text or text.strip() == "" or "\x00" in text:
        raise InvalidInputError(f"{what} name {text!r} is empty or holds a NUL character")
    path = Path(path)
    parent = path.parent
    try:
        name_bytes = len(os.fsencode(path.name))
    except UnicodeError:
        raise InvalidInputError(f"{what} name {path.name!r} cannot be encoded for this file system") from None
    limit = _name_max(parent) if _isdir(parent) else _NAME_MAX_FALLBACK
    if name_bytes > limit:
        raise InvalidInputError(f"{what} name is {name_bytes} bytes long; this file system allows at most {limit} "
                                f"({path.name[:40]}...)")
    try:
        st = os.stat(path)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        if exc.errno != errno.ENOTDIR:
            raise InvalidInputError(f"cannot write {what} {text!r}: {describe_os_error(exc)}") from None
        st = None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise InvalidInputError(f"{what} {text!r} is a folder; give a file name")
    try:
        pst = os.stat(parent)
    except FileNotFoundError:
        raise InvalidInputError(f"output folder {str(parent)!r} of {text!r} does not exist") from None
    except OSError as exc:
        raise InvalidInputError(f"output folder {str(parent)!r} of {text!r}: {describe_os_error(exc)}") from None
    if not stat.S_ISDIR(pst.st_mode):
        raise InvalidInputError(f"output folder {str(parent)!r} of {text!r} is a file, not a folder")
    clean_stale_temps(path)  # a killed writer's leftovers go on the next run, whatever that run does next
    if st is not None and not force:
        raise InvalidInputError(f"{what} {text!r} exists; not overwriting it ({_force_text(force_hint)})")
    probe = path.with_name(_temp_name(path)[0])
    try:  # the folder takes a file: a read-only folder or file system fails here, before any work
        os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o600))
    except OSError as exc:
        raise InvalidInputError(f"cannot write {what} {text!r}: {describe_os_error(exc)}") from None
    with contextlib.suppress(OSError):
        os.unlink(probe)
    return path


def _isdir(p: Path) -> bool:
    try:
        return stat.S_ISDIR(os.stat(p).st_mode)
    except (OSError, ValueError):
        return False


def _temp_name(path: Path) -> tuple[str, str]:
    """(temporary file name, its prefix): ``.NAME.<pid>.<hex>.tmp``, NAME shortened to fit NAME_MAX."""
    suffix = f".{os.getpid()}.{secrets.token_hex(6)}.tmp"
    limit = _name_max(path.parent)
    name = path.name
    while len(os.fsencode(f".{name}{suffix}")) > limit and name:
        name = name[:-1]
    return f".{name}{suffix}", f".{name}."


_TEMP_TAIL = re.compile(r"^(?:(\d+)\.)?[0-9a-f]{12}\.tmp$")


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return True  # someone else's process, or not a pid: keep the file
    return True


def clean_stale_temps(path) -> list[Path]:
    """Remove the temporary files a killed writer left beside ``path``; return those removed.

    Removed: regular files of this user named ``.X.<pid>.<12 hex>.tmp`` (any target X of the folder) whose pid is
    not running, and ``.NAME.<12 hex>.tmp`` (no pid) older than :data:`STALE_TEMP_AGE_S`. Anything else is left
    alone; errors are ignored (cleaning is a courtesy, never a reason to fail a write).
    """
    path = Path(path)
    _, prefix = _temp_name(path)
    removed = []
    any_target = re.compile(r"^\..+\.(\d+)\.[0-9a-f]{12}\.tmp$")  # any target's, named with its writer's pid
    try:
        entries = list(os.scandir(path.parent))
    except OSError:
        return removed
    now = time.time()
    uid = os.getuid() if hasattr(os, "getuid") else None
    for e in entries:
        m = (_TEMP_TAIL.match(e.name[len(prefix):]) if e.name.startswith(prefix) else None) or any_target.match(e.name)
        if not m:
            continue
        try:
            st = e.stat(follow_symlinks=False)
            if not stat.S_ISREG(st.st_mode) or (uid is not None and st.st_uid != uid):
                continue
            pid = m.group(1)
            stale = (not _pid_alive(int(pid))) if pid else (now - st.st_mtime > STALE_TEMP_AGE_S)
            if stale:
                os.unlink(e.path)
                removed.append(Path(e.path))
        except OSError:
            continue
    return removed


@contextlib.contextmanager
def _sigterm_as_exit():
    """While writing, SIGTERM raises SystemExit (so ``finally`` removes the temporary file)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    try:
        previous = signal.getsignal(signal.SIGTERM)
    except (ValueError, OSError):  # pragma: no cover
        yield
        return
    if previous is not signal.SIG_DFL:
        yield
        return

    def _exit(signum, frame):  # noqa: ARG001 - signal handler signature
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, _exit)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def write_bytes(data: bytes, path, *, force: bool = False, force_hint: str = "force=True",
                what: str = "output file") -> Path:
    """Write ``data`` to ``path`` atomically (temporary file in the same folder, fsync, rename).

    Parameters
    ----------
    data : bytes
    path : str or Path
    force : bool
        Replace an existing file (atomically). Without it an existing file is never touched.
    force_hint, what : str
        As in :func:`check_target`.

    Returns
    -------
    Path written.

    Raises
    ------
    InvalidInputError
        As :func:`check_target`, and for a failed write (full disk, no permission, ...): the message
        names the path and the reason; no partial file is left, and a replaced file is intact.
    """
    path = check_target(path, force, force_hint=force_hint, what=what)
    clean_stale_temps(path)
    tmp_name, _ = _temp_name(path)
    tmp = path.with_name(tmp_name)
    exists_msg = f"{what} {str(path)!r} exists; not overwriting it ({_force_text(force_hint)})"
    created = False
    try:
        with _sigterm_as_exit():
            try:
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)
                created = True  # umask applies to 0o666, unlike mkstemp's 0600
                with os.fdopen(fd, "wb") as fh:
                    fh.write(data)
                    fh.flush()
                    os.fsync(fh.fileno())
                if force:
                    os.replace(tmp, path)
                else:
                    try:
                        os.link(tmp, path)
                    except FileExistsError:
                        raise InvalidInputError(exists_msg) from None
                    except OSError:  # a file system without hard links: check, then rename
                        if path.exists():
                            raise InvalidInputError(exists_msg) from None
                        os.replace(tmp, path)
                _fsync_dir(path.parent)
            except EconError:
                raise
            except OSError as exc:
                raise InvalidInputError(f"cannot write {what} {str(path)!r}: {describe_os_error(exc)}; "
                                        f"nothing was written{' and the previous file is intact' if force else ''}"
                                        ) from None
    finally:
        if created:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
    return path


def write_text(text: str, path, *, force: bool = False, force_hint: str = "force=True",
               what: str = "output file") -> Path:
    """:func:`write_bytes` of ``text`` encoded as UTF-8."""
    return write_bytes(text.encode("utf-8"), path, force=force, force_hint=force_hint, what=what)


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory fds
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


__all__ = ["check_target", "write_bytes", "write_text", "clean_stale_temps", "describe_os_error",
           "STALE_TEMP_AGE_S"]
