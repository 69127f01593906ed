# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""The safe-file layer every file of the agent goes through (PROTOCOL.md section 7): atomic writes
through exclusive, unpredictable temporaries (O_EXCL | O_NOFOLLOW, 0600 then the final mode), appends
that never follow a symlink, and bounded reads that never block on a FIFO or device. Errors are
RunError with a protocol code (symlink_target, not_a_file, too_large)."""

from __future__ import annotations

import errno
import os
import secrets
import stat
import time
from typing import Callable, Optional

from .protocol import RunError

__all__ = [
    "MAX_CONFIG_BYTES",
    "MAX_LINE_BYTES",
    "MAX_RESULT_BYTES",
    "MAX_TEXT_BYTES",
    "O_CLOEXEC",
    "clean_stale_temps",
    "default_mode",
    "file_kind",
    "fsync_dir",
    "is_symlink",
    "open_append",
    "read_bounded",
    "read_nofollow",
    "read_tail",
    "read_text",
    "temp_name",
    "write_atomic",
    "write_temp",
]


def fsync_dir(path):
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


TMP_MARK = ".moetune-tmp-"
O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def default_mode() -> int:
    """0666 minus the umask: what a plain open() would have created."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def temp_name(path: str) -> str:
    """An unpredictable temporary name beside path; the pid lets a later writer remove a dead one's leftovers."""
    d, base = os.path.split(path)
    return os.path.join(d, ".%s%s%d-%s" % (base, TMP_MARK, os.getpid(), secrets.token_hex(8)))


def write_temp(path: str, data: bytes, mode: int, pause_s: float = 0.0) -> str:
    """Write data to a fresh temporary file beside path and return its name. The file is created
    exclusively (O_EXCL | O_NOFOLLOW, 0600, so a planted link or file is never opened), fsync'd, then
    given its final mode. On any failure nothing is left behind."""
    tmp = temp_name(path)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | O_CLOEXEC, 0o600)
    try:
        view = memoryview(data)
        half = len(data) // 2
        if pause_s:  # test hook (MOETUNE_TEST_INSTALL_PAUSE_S): a half-written temporary file
            os.write(fd, view[:half])
            view = view[half:]
            time.sleep(pause_s)
        while view:
            n = os.write(fd, view)
            view = view[n:]
        os.fchmod(fd, mode)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    os.close(fd)
    return tmp


def open_append(path: str):
    """An append-only binary file object that never opens through a symlink (O_NOFOLLOW)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | O_CLOEXEC, default_mode())
    return os.fdopen(fd, "ab")


def is_symlink(path: str) -> bool:
    try:
        return stat.S_ISLNK(os.lstat(path).st_mode)
    except OSError:
        return False


def write_atomic(
    path: str,
    data: bytes,
    mode: Optional[int] = None,
    pause_s: float = 0.0,
    before_replace: Optional[Callable[[], None]] = None,
) -> None:
    """Replace path by data atomically (a reader or a kill sees the old or the new file, whole).
    A symlink at path is refused (RunError symlink_target): rename() would replace the link, not what it
    points to, and following it would let whoever planted it choose the file we overwrite.
    before_replace, when given, runs after the new bytes are on disk and just before the rename: the last
    look a caller can take (install-config checks the file is still what it read); if it raises, nothing
    is replaced and the temporary file is removed."""
    if is_symlink(path):
        raise RunError("symlink_target", "%s is a symbolic link: refusing to write through it" % path)
    tmp = write_temp(path, data, default_mode() if mode is None else mode, pause_s)
    try:
        if before_replace is not None:
            before_replace()
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    fsync_dir(os.path.dirname(path) or ".")


# Size limits of what the agent reads back (PROTOCOL.md section 7): every read is bounded, so a
# planted /dev/zero, a sparse 10 GB file or a line without an end costs a refusal, not the memory.
MAX_LINE_BYTES = 1 << 20  # one line of events.jsonl / journal.jsonl
MAX_RESULT_BYTES = 64 << 20  # a result.json (a long run's is a few MB)
MAX_CONFIG_BYTES = 4 << 20  # a server config file (a real one is a few KB)
MAX_TEXT_BYTES = 16 << 20  # any other file of a run folder read whole (spec.json, state, pid)


def _mib(n: int) -> str:
    return "%g MiB" % (n / float(1 << 20))


def file_kind(mode: int) -> str:
    """What a non-regular file is, in words (for the error sentences)."""
    for test, what in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISLNK, "a symbolic link"),
    ):
        if test(mode):
            return what
    return "not a regular file"


def read_bounded(path: str, limit: int, what: str = "file", nofollow: bool = False) -> Optional[bytes]:
    """The bytes of the regular file path, at most limit of them; None when it does not exist.
    Opened O_NONBLOCK, so a FIFO, socket or device at the name never blocks us; anything but a regular
    file is refused by its fstat before a byte is read. Raises RunError: symlink_target (nofollow and a
    link), not_a_file, too_large; OSError otherwise."""
    flags = os.O_RDONLY | os.O_NONBLOCK | O_CLOEXEC | (os.O_NOFOLLOW if nofollow else 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except OSError as e:
        if e.errno == errno.ELOOP and nofollow:
            raise RunError("symlink_target", "%s is a symbolic link: refusing to follow it" % path)
        if e.errno == errno.ENXIO:  # a socket, or a FIFO opened for writing without a reader
            raise RunError("not_a_file", "%s %s is a socket, not a file" % (what, path))
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise RunError("not_a_file", "%s %s is %s, not a file" % (what, path, file_kind(st.st_mode)))
        if st.st_size > limit:
            raise RunError(
                "too_large", "%s %s is %d bytes, more than the limit of %s" % (what, path, st.st_size, _mib(limit))
            )
        chunks = []
        total = 0
        while True:
            b = os.read(fd, min(1 << 20, limit + 1 - total))
            if not b:
                break
            chunks.append(b)
            total += len(b)
            if total > limit:  # it grew while we read
                raise RunError("too_large", "%s %s is more than the limit of %s" % (what, path, _mib(limit)))
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_nofollow(path: str, limit: int = MAX_CONFIG_BYTES) -> Optional[bytes]:
    """The bytes of a regular file, never through a symlink, never opening a FIFO or device for more than
    its fstat; None when it does not exist. Raises RunError (symlink_target, not_a_file, too_large) or OSError."""
    return read_bounded(path, limit, "the file", nofollow=True)


def clean_stale_temps(path: str) -> None:
    """Remove temporaries of path left by writers that died (SIGKILL mid-write): only regular files of
    ours whose writer's pid is gone."""
    folder, base = os.path.split(path)
    prefix = ".%s%s" % (base, TMP_MARK)
    try:
        names = os.listdir(folder or ".")
    except OSError:
        return
    for n in names:
        if not n.startswith(prefix):
            continue
        pid = n[len(prefix) :].split("-", 1)[0]
        if not pid.isdigit() or os.path.exists("/proc/%s" % pid):
            continue
        full = os.path.join(folder, n)
        try:
            st = os.lstat(full)
            if stat.S_ISREG(st.st_mode) and st.st_uid == os.getuid():
                os.unlink(full)
        except OSError:
            pass


def read_text(path, default=None, limit=MAX_TEXT_BYTES):
    """A regular file's text (at most limit bytes), else default: missing, unreadable, not UTF-8, too
    large, or not a regular file (a FIFO there never blocks)."""
    try:
        data = read_bounded(path, limit)
        return default if data is None else data.decode("utf-8")
    except (OSError, UnicodeDecodeError, RunError):
        return default


def read_tail(path: str, nbytes: int) -> str:
    """The last nbytes of a regular file as text ("" when it cannot be read): a 300 MB stderr.log costs
    nbytes, not its size."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | O_CLOEXEC)
    except OSError:
        return ""
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return ""
        os.lseek(fd, max(0, st.st_size - nbytes), os.SEEK_SET)
        return os.read(fd, nbytes).decode("utf-8", "replace")
    except OSError:
        return ""
    finally:
        os.close(fd)
