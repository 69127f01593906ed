# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""The install's file-system steps: timestamped backups beside a replaced file (and their pruning), one install at a
time per folder (FolderLock), and making the target folder."""

from __future__ import annotations

import datetime
import errno
import fcntl
import os
import re
import stat
from typing import List, Optional

from ..protocol import RunError
from ..safefile import O_CLOEXEC, file_kind, fsync_dir, write_temp

__all__ = [
    "LOCK_NAME",
    "FolderLock",
    "backups_of",
    "link_exclusive",
    "make_backup",
    "make_folders",
    "prune_backups",
    "remove_created",
]

# link() is not offered by every file system (FAT, some FUSE and network mounts).
_NO_LINK = (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK)


# -- backups ----------------------------------------------------------------------------------------


def _backup_stamp() -> str:
    return datetime.datetime.now().strftime("%Y%m%d-%H%M%S")


def link_exclusive(tmp: str, target: str) -> bool:
    """Give the finished temporary file the name target only if nothing has it yet (link() fails with
    EEXIST otherwise, even for a dangling symlink). Returns False when target exists. The temporary
    name is removed either way. Where link() is not supported: a last check, then rename."""
    try:
        os.link(tmp, target)
        return True
    except FileExistsError:
        return False
    except OSError as e:
        if e.errno not in _NO_LINK:
            raise
        if os.path.lexists(target):
            return False
        os.replace(tmp, target)  # a narrow race remains only on file systems without hard links
        return True
    finally:
        try:
            os.unlink(tmp)
        except OSError:
            pass


def make_backup(target: str, old: bytes, mode: int) -> str:
    """A timestamped copy of the replaced file beside it: written whole to a temporary file first, then
    linked to a name nobody has, so a failure (disk full) leaves no empty or partial backup."""
    stamp = _backup_stamp()
    # Numbered after every backup of this second, never into a gap that pruning left: a reused lower
    # number would sort as the oldest, and the next prune would remove the newest backup.
    first = 1
    for p in backups_of(target):
        m = _BAK_RE.search(p[len(target) :])
        if m and m.group(1) == stamp:
            first = max(first, int(m.group(2) or 1) + 1)
    tmp = write_temp(target + ".bak", old, mode)
    try:
        for n in range(first, first + 1000):
            b = "%s.bak-%s" % (target, stamp) if n == 1 else "%s.bak-%s-%d" % (target, stamp, n)
            try:
                os.link(tmp, b)
                return b
            except FileExistsError:
                continue
            except OSError as e:
                if e.errno not in _NO_LINK:
                    raise
                if os.path.lexists(b):
                    continue
                os.rename(tmp, b)
                return b
        raise RunError("io", "cannot find a free backup name for %s" % target)
    finally:
        try:
            os.unlink(tmp)
        except OSError:
            pass


_BAK_RE = re.compile(r"\.bak-([0-9]{8}-[0-9]{6})(?:-([0-9]+))?$")


def backups_of(target: str) -> List[str]:
    """Our backups of target (regular files named <target>.bak-<stamp>[-n]), oldest first."""
    folder, base = os.path.split(target)
    found = []
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    for n in names:
        if not n.startswith(base + ".bak-"):
            continue
        m = _BAK_RE.search(n[len(base) :])
        if not m or m.start() != 0:
            continue
        full = os.path.join(folder, n)
        try:
            if not stat.S_ISREG(os.lstat(full).st_mode):
                continue
        except OSError:
            continue
        found.append(((m.group(1), int(m.group(2) or 1)), full))
    return [p for _, p in sorted(found)]


def prune_backups(target: str, keep: int) -> List[str]:
    """Remove all but the newest `keep` backups of target (keep <= 0: remove none). -> removed paths."""
    if keep <= 0:
        return []
    old = backups_of(target)[:-keep]
    removed = []
    for p in old:
        try:
            os.unlink(p)
            removed.append(p)
        except OSError:
            pass
    if removed:
        fsync_dir(os.path.dirname(target))
    return removed


# -- one install at a time per folder ----------------------------------------------------------------

LOCK_NAME = ".moetune-install.lock"


class FolderLock(object):
    """An exclusive flock on <folder>/.moetune-install.lock for the whole install (look, back up, write,
    verify): two installs into one folder never interleave, and the one that finds it held fails at once
    with `locked`, naming the holder, instead of both saying "installed" while one silently won. The
    file is opened O_NOFOLLOW (a planted link is refused), must be a regular file, holds the holder's pid
    and start time, and is removed by the holder while it still holds the lock (a waiter that then gets
    the removed file's lock sees that the name is another inode now and starts over)."""

    def __init__(self, folder: str):
        self.path = os.path.join(folder, LOCK_NAME)
        self.fd: Optional[int] = None

    def _open(self) -> int:
        flags = os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | O_CLOEXEC
        try:
            return os.open(self.path, os.O_RDWR | flags, 0o644)
        except PermissionError:
            return os.open(self.path, os.O_RDONLY | flags)  # another user's lock file: lock it read-only
        except OSError as e:
            if e.errno == errno.ELOOP:
                raise RunError(
                    "symlink_target",
                    "%s is a symbolic link: refusing to use it as the install lock "
                    "(nothing was changed); remove it and install again" % self.path,
                )
            raise

    def acquire(self) -> None:
        for _ in range(50):
            fd = self._open()
            try:
                st = os.fstat(fd)
                if not stat.S_ISREG(st.st_mode):
                    raise RunError(
                        "not_a_file",
                        "%s is %s, not the install lock file: nothing was changed; remove "
                        "it and install again" % (self.path, file_kind(st.st_mode)),
                    )
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError as e:
                    if e.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                        raise
                    holder = os.pread(fd, 256, 0).decode("utf-8", "replace").strip()
                    raise RunError(
                        "locked",
                        "another install-config (%s) is installing into %s right now: this one "
                        "lost the race and changed nothing. Re-run it when that one has finished (its "
                        "own output says what it installed)"
                        % (holder or "its pid is not written yet", os.path.dirname(self.path)),
                    )
                try:
                    now = os.lstat(self.path)
                except FileNotFoundError:
                    now = None
                if now is None or (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino):
                    os.close(fd)  # the holder before us removed this file: lock the one the name has now
                    fd = -1
                    continue
            except BaseException:
                if fd >= 0:
                    os.close(fd)
                raise
            self.fd = fd
            try:  # who holds it, for the sentence of the one that loses (best effort: a read-only fd cannot)
                os.ftruncate(fd, 0)
                os.pwrite(
                    fd,
                    (
                        "pid %d, started %s" % (os.getpid(), datetime.datetime.now().strftime("%Y-%m-%d %H:%M:%S"))
                    ).encode(),
                    0,
                )
            except OSError:
                pass
            return
        raise RunError("locked", "could not take the install lock %s: other installs keep replacing it" % self.path)

    def release(self) -> None:
        if self.fd is None:
            return
        try:
            st, now = os.fstat(self.fd), os.lstat(self.path)
            if (now.st_dev, now.st_ino) == (st.st_dev, st.st_ino):
                os.unlink(self.path)  # while still holding it: leaves the server's folder as it was
        except OSError:
            pass
        os.close(self.fd)
        self.fd = None


# -- the install ------------------------------------------------------------------------------------


def make_folders(folder: str) -> List[str]:
    """os.makedirs that returns the folders it created, outermost first (to undo a failed install)."""
    missing = []
    d = folder
    while not os.path.isdir(d):
        missing.append(d)
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    created = []
    for d in reversed(missing):
        try:
            os.mkdir(d)
        except FileExistsError:
            if not os.path.isdir(d):
                raise
            continue
        created.append(d)
        fsync_dir(os.path.dirname(d))
    return created


def remove_created(created: List[str]) -> None:
    for d in reversed(created):
        try:
            os.rmdir(d)  # only if empty: never a file someone else put there meanwhile
        except OSError:
            return
