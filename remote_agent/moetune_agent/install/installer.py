# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""`install-config`: put tuned config files where the server reads them, safely.

Target: SGLang's <config root>/triton_<installed Triton>/ (created when missing), vLLM's
VLLM_TUNED_CONFIG_FOLDER or its package's configs/ folder; --root overrides the root (or names the
triton_X_Y_Z folder itself). A file that differs is only replaced with --replace, after a timestamped
backup beside it (the last --keep-backups are kept); the write is atomic (an exclusively created
temporary file with an unpredictable name in the same folder, fsync, rename, fsync folder) so a reader or
a kill never sees half a file; a new file is put in place with link(), so of two installs racing for one
name only one wins; the result is read back and compared. A symlink at the target is refused unless
--through-symlink names it as wanted. Never needs root. Paths only ever go through Python's file APIs:
no shell, so any character in a path is inert.
"""

from __future__ import annotations

import datetime
import difflib
import errno
import fcntl
import hashlib
import json
import os
import re
import stat
from typing import Callable, List, Optional, Tuple

from .. import options
from ..protocol import EXIT_FAILED, EXIT_OK, RunError
from ..runs.logs import run_simulated
from ..runs.store import resolve, run_folder_of
from ..safefile import (
    MAX_CONFIG_BYTES,
    MAX_RESULT_BYTES,
    O_CLOEXEC,
    clean_stale_temps,
    default_mode,
    file_kind,
    fsync_dir,
    is_symlink,
    read_bounded,
    read_nofollow,
    write_atomic,
    write_temp,
)
from ..serverconfig import configjson, naming
from . import rowmerge

DEFAULT_KEEP_BACKUPS = 5
# link() is not offered by every file system (FAT, some FUSE and network mounts).
_NO_LINK = (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK)


# A fake server tree made by a test fixture carries this file (exact name and text) at its top: only into such a
# tree may a simulated run be installed, so nothing a real host has or does (an environment variable, a
# device name) lets simulated numbers reach a real server.
TEST_DOUBLE_MARKER = ".moetune-test-double"
TEST_DOUBLE_TEXT = (
    b"moetune test double: this folder tree is a test fixture's fake server; "
    b"simulated results may be installed into it\n"
)
# The app's practice server (a sandbox host the user creates in one click) is the same kind of double, made by
# the app in a fresh folder of its own data folder (src/remote/hosts/practiceserver.cpp writes these bytes): its own
# fake SGLang tree, config folders and log, which no real server reads.
PRACTICE_DOUBLE_TEXT = (
    b"moetune practice server (sandbox): this folder tree is a practice double of an inference "
    b"server, made by the moetune app in its own data folder; simulated results may be "
    b"installed into it\n"
)
MARKER_READ_BYTES = max(len(TEST_DOUBLE_TEXT), len(PRACTICE_DOUBLE_TEXT)) + 1  # a longer file matches neither
_SIMULATED_REFUSAL = (
    "refusing to install numbers that were never measured on a GPU (only a test fixture's fake "
    "server tree, marked by a %s file at its top, accepts them; so does the app's practice "
    "server)" % TEST_DOUBLE_MARKER
)


def test_double_marker(folder: str) -> Optional[str]:
    """The marker file that makes folder (or a folder above it) a test fixture's fake server tree, else None.
    It must be a regular file (not a link) owned by this user holding exactly TEST_DOUBLE_TEXT (a test fixture's
    tree) or PRACTICE_DOUBLE_TEXT (the app's practice server)."""
    d = os.path.abspath(folder)
    while True:
        p = os.path.join(d, TEST_DOUBLE_MARKER)
        try:
            st = os.lstat(p)
            if (
                stat.S_ISREG(st.st_mode)
                and st.st_uid == os.getuid()
                and read_nofollow(p, MARKER_READ_BYTES) in (TEST_DOUBLE_TEXT, PRACTICE_DOUBLE_TEXT)
            ):
                return p
        except (OSError, RunError):
            pass
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


def _load_sources(
    source: str,
    framework: str,
    home: Optional[str],
    test_double: Callable[[], Optional[str]],
    refusals: Optional[List[str]] = None,
) -> List[Tuple[str, str]]:
    """-> [(file name in the target dialect, exact text)]. Raises RunError. test_double() -> the marker of the
    target tree when it is a test fixture's (asked only for a simulated source). refusals (a dry run): the
    simulated refusal is appended there instead of raised, so the preview still shows the folder and the diff
    (every file of it then says refused: simulated; the real install still raises)."""

    def refuse_simulated(message: str) -> None:
        if refusals is None:
            raise RunError("simulated", message)
        refusals.append(message)

    path = source
    if not os.path.exists(path):
        try:
            path = resolve(source, home)
        except RunError:
            raise RunError("not_found", "%s: no such file, run id or run folder" % source)
    if os.path.isdir(path):
        path = os.path.join(path, "result.json")
        if not os.path.isfile(path):
            raise RunError("not_found", "%s has no result.json (has the run finished?)" % os.path.dirname(path))
    run_dir = run_folder_of(path)
    if run_dir is not None:
        why = run_simulated(run_dir)
        if why and not test_double():
            refuse_simulated("%s comes from the simulated run %s (%s): %s" % (path, run_dir, why, _SIMULATED_REFUSAL))
    base = os.path.basename(path)
    cname = naming.try_parse_name(base)
    try:
        raw = read_bounded(path, MAX_CONFIG_BYTES if cname is not None else MAX_RESULT_BYTES, "the source")
    except RunError as e:
        raise RunError("invalid_config" if e.code == "too_large" else e.code, "%s; nothing was installed" % e.message)
    except OSError as e:
        raise RunError(
            "permission_denied" if isinstance(e, PermissionError) else "io",
            "cannot read %s: %s" % (path, e.strerror or e),
        )
    if raw is None:
        raise RunError("not_found", "cannot read %s: no such file" % path)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise RunError(
            "invalid_config", "%s is not UTF-8 text (%s): neither a config file nor a result.json" % (path, e)
        )
    if cname is None:
        try:
            obj = json.loads(text)
        except RecursionError:
            raise RunError("invalid_config", "%s nests too deeply to be a moetune result" % path)
        except ValueError as e:
            raise RunError("invalid_config", "%s is neither a config file name nor JSON: %s" % (path, e))
        if not isinstance(obj, dict) or obj.get("format") != "moetune-result":
            raise RunError(
                "invalid_config",
                '%s is not a moetune result (no "format":"moetune-result") and '
                "its name is not a server config name (E=..,N=..,device_name=...json)" % path,
            )
        if obj.get("simulated") and not test_double() and not refusals:
            refuse_simulated("%s holds simulated results (synthetic backend): %s" % (path, _SIMULATED_REFUSAL))
        out = _result_files(path, obj, framework)
        if not out:
            raise RunError("not_found", "%s has no %s config file" % (path, framework))
        return out
    # A single server config file.
    try:
        configjson.parse_config_text(text)
    except configjson.ConfigFileError as e:
        raise RunError("invalid_config", "%s: %s" % (path, e))
    if cname.device_name == "SIMULATED_GPU":
        raise RunError(
            "simulated",
            "%s was produced by the synthetic backend (device SIMULATED_GPU): "
            "refusing to install simulated results" % path,
        )
    if framework == "vllm" and (cname.down or cname.per_channel_quant):
        raise RunError(
            "invalid_config", "%s is an SGLang-only file (_down / per_channel_quant): vLLM never " "reads it" % base
        )
    # The server looks the name up in its own dialect ("[128, 128]" vs "[128,128]"); vLLM names an
    # int8_w8a8 layer without a dtype part (naming.server_config_name), so an SGLang-style name is renamed.
    if framework == "vllm" and cname.dtype == "int8_w8a8":
        cname = naming.ConfigName(cname.E, cname.N, cname.device_name, None, cname.block_shape)
    name = cname.file_name(framework)
    try:
        naming.check_file_name(name, framework)
    except naming.ConfigNameError as e:
        raise RunError("invalid_config", "%s: %s; nothing was installed" % (path, e))
    return [(name, text)]


def _bad(path: str, what: str) -> RunError:
    return RunError("invalid_config", "%s is not a valid moetune result: %s; nothing was installed" % (path, what))


def _result_files(path: str, obj: dict, framework: str) -> List[Tuple[str, str]]:
    """The files of a result.json for framework, each name and content checked as a server file: the name
    exactly a config name in that server's spelling (never a path), the entries through the same validator
    as a config file. Raises RunError(invalid_config) naming the bad file; nothing is installed then."""
    files = obj.get("files")
    if files is None:
        files = []
    if not isinstance(files, list):
        raise _bad(path, '"files" must be a list')
    tv = obj.get("triton_version")
    if tv is not None and (not isinstance(tv, str) or len(tv) > 64 or any(ord(c) < 32 for c in tv)):
        raise _bad(path, '"triton_version" must be null or a short version string')
    out: List[Tuple[str, str]] = []
    for i, f in enumerate(files):
        if not isinstance(f, dict):
            raise _bad(path, "files[%d] must be an object" % i)
        if f.get("framework") not in naming.DIALECTS:
            raise _bad(path, 'files[%d]: "framework" must be "sglang" or "vllm"' % i)
        if f.get("framework") != framework:
            continue
        name = f.get("file_name")
        try:
            naming.check_file_name(name, framework)
        except naming.ConfigNameError as e:
            raise _bad(path, "files[%d]: %s" % (i, e))
        if any(name == n for n, _ in out):
            raise _bad(path, "files[%d]: %s appears twice" % (i, name))
        try:
            entries, _ = configjson.check_entries(f.get("entries"))
            text_f = configjson.format_config_text(entries, framework, tv if framework == "vllm" else None)
            configjson.parse_config_text(text_f)  # what is installed passes the config file parser too
        except configjson.ConfigFileError as e:
            raise _bad(path, "files[%d] (%s): %s" % (i, name, e))
        out.append((name, text_f))
    return out


def _target_folder(framework: str, root: Optional[str], python: Optional[str]) -> Tuple[str, bool]:
    """-> (folder, may_create)."""
    if root:
        root = os.path.abspath(root)
        if framework == "sglang" and not os.path.basename(root.rstrip("/")).startswith("triton_"):
            tv = _triton_version(python)
            return os.path.join(root, naming.triton_folder(tv)), True
        return root, framework == "sglang"
    from ..probe import framework_facts, python_facts

    facts = python_facts(python)
    if facts.get("error"):
        raise RunError("not_found", facts["error"])
    fw = framework_facts(framework, facts)
    if framework == "sglang":
        if not fw["config_root"]:
            raise RunError(
                "not_found",
                "SGLang is not importable from %s and SGLANG_MOE_CONFIG_DIR is not set: "
                "pass --python (the server's interpreter) or --root" % facts.get("executable"),
            )
        if not fw["triton_folder"]:
            raise RunError(
                "not_found",
                "Triton is not installed for %s, so the triton_X_Y_Z folder is unknown: "
                "pass --python or --root .../triton_X_Y_Z" % facts.get("executable"),
            )
        return os.path.join(fw["config_root"], fw["triton_folder"]), True
    folder = fw["user_folder"] or fw["config_root"]
    if not folder:
        raise RunError(
            "not_found",
            "vLLM is not importable from %s and VLLM_TUNED_CONFIG_FOLDER is not set: "
            "pass --python or --root" % facts.get("executable"),
        )
    return folder, False


def _triton_version(python: Optional[str]) -> str:
    from ..probe import python_facts

    tv = (python_facts(python).get("triton") or {}).get("version")
    if not tv or naming.parse_triton_version(tv) is None:
        raise RunError(
            "not_found",
            "Triton is not installed for %s, so the triton_X_Y_Z folder is unknown: pass "
            "--python or --root .../triton_X_Y_Z" % (python or "this interpreter"),
        )
    return tv


def _perm_error(folder: str, e: OSError) -> RunError:
    user = options.host_env("USER") or str(os.getuid())
    return RunError(
        "permission_denied",
        "cannot write to %s: %s. moetune never uses root: make that folder "
        "writable for %s, or point the server at a folder you own (SGLANG_MOE_CONFIG_DIR / "
        "VLLM_TUNED_CONFIG_FOLDER) and pass it as --root" % (folder, e.strerror or e, user),
    )


# -- backups ----------------------------------------------------------------------------------------


def _backup_stamp() -> str:
    return datetime.datetime.now().strftime("%Y%m%d-%H%M%S")


def _link_exclusive(tmp: str, target: str) -> bool:
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


def _make_backup(target: str, old: bytes, mode: int) -> str:
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


def _makedirs(folder: str) -> List[str]:
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


def _remove_created(created: List[str]) -> None:
    for d in reversed(created):
        try:
            os.rmdir(d)  # only if empty: never a file someone else put there meanwhile
        except OSError:
            return


class _Plan(object):
    """What installing one file would do (shared by --dry-run and the real install)."""

    def __init__(self, folder: str, name: str, data: bytes, through_symlink: bool):
        if os.path.basename(name) != name or name in ("", ".", ".."):  # _load_sources checked it already
            raise RunError("invalid_config", "%r is not a file name: nothing was installed" % (name,))
        self.name = name
        self.data = data
        self.target = os.path.join(folder, name)
        self.link = is_symlink(self.target)
        self.refused: Optional[str] = None
        self.why: Optional[str] = None
        self.backup: Optional[str] = None
        if self.link:
            if not through_symlink:
                self.refused = "symlink_target"
            else:
                # The user named the link as wanted: write the file it points to (itself never a link).
                self.target = os.path.realpath(self.target)
        self.old: Optional[bytes] = None
        if self.refused is None:
            # Looked at before opening: a FIFO, socket or device there is never opened (a FIFO's open blocks).
            try:
                st = os.lstat(self.target)
                if not stat.S_ISREG(st.st_mode) and not stat.S_ISLNK(st.st_mode):
                    self.refused = "not_a_file"
                    self.why = file_kind(st.st_mode)
            except FileNotFoundError:
                pass
            except OSError as e:
                raise RunError(
                    "permission_denied" if isinstance(e, PermissionError) else "io",
                    "cannot look at %s: %s" % (self.target, e),
                )
        if self.refused is None:
            try:
                self.old = read_nofollow(self.target)
            except RunError as e:
                self.refused = e.code
                self.why = e.message
            except OSError as e:
                raise RunError(
                    "permission_denied" if isinstance(e, PermissionError) else "io",
                    "cannot read the existing %s: %s" % (self.target, e),
                )
        self.exists = self.old is not None or self.link or self.refused == "not_a_file"
        self.changed = self.old != data


def _refusal_message(plan: _Plan) -> str:
    if plan.refused == "symlink_target":
        return (
            "%s is a symbolic link (to %s): nothing was changed. A planted link could point anywhere; if you "
            "made it on purpose, re-run with --through-symlink to replace the file it points to"
            % (plan.target, os.readlink(plan.target) if plan.link else "?")
        )
    if plan.refused == "exists":
        return (
            "%s already exists with different contents; nothing was changed. Re-run with --replace to "
            "replace it (a timestamped backup is kept), or --dry-run to see the diff" % plan.target
        )
    if plan.refused == "not_a_file":
        what = plan.why or "not a regular file"
        todo = (
            "move that directory away (or remove it with rmdir if it is empty)"
            if what == "a directory"
            else "remove it or move it away"
        )
        return (
            "%s is %s, not a config file: nothing was changed, and the server cannot read a config from it "
            "either. Look at what it is, %s, then install again" % (plan.target, what, todo)
        )
    if plan.refused == "too_large":
        return (
            "%s is larger than any config file (%s): nothing was changed. Look at what it is and move it away, "
            "then install again" % (plan.target, plan.why)
        )
    return "%s cannot be replaced (%s%s)" % (plan.target, plan.refused, ": " + plan.why if plan.why else "")


class ChangedMeanwhile(Exception):
    """The file at the target is no longer the one the plan read (another program wrote it meanwhile)."""


def _still_as_read(plan: _Plan) -> bool:
    """Compare before replace: the target still holds exactly the bytes the plan read (or is still absent)."""
    try:
        now = read_nofollow(plan.target)
    except RunError:
        return False
    return now == plan.old


def _write_one(plan: _Plan, replace: bool, pause: float) -> Tuple[str, Optional[str]]:
    """-> ("installed" | "unchanged" | "exists", backup path). Raises OSError / RunError, and
    ChangedMeanwhile when the file at the target is not what the plan read: nothing is replaced then (a
    version saved in between would be in neither the backup nor the new file)."""
    target, data = plan.target, plan.data
    clean_stale_temps(target)
    clean_stale_temps(target + ".bak")  # a writer killed while making its backup
    if plan.old is None:
        tmp = write_temp(target, data, default_mode(), pause)
        if _link_exclusive(tmp, target):
            fsync_dir(os.path.dirname(target))
            return "installed", None
        # Another program created the name since we looked: nothing is replaced.
        try:
            if read_nofollow(target) == data:
                return "unchanged", None  # it wrote these very bytes
        except RunError:
            pass
        raise ChangedMeanwhile()
    if not plan.changed:
        return "unchanged", None
    if not _still_as_read(plan):
        raise ChangedMeanwhile()
    try:
        mode = stat.S_IMODE(os.lstat(target).st_mode)
    except OSError:
        mode = default_mode()
    backup = _make_backup(target, plan.old, mode)
    plan.backup = backup  # from here on a failure must name it (it stays: it holds the old file)

    def last_look() -> None:
        # As close to the rename as a rename allows (the lock keeps other installs out; this catches an
        # editor or another tool that saved the file meanwhile).
        if not _still_as_read(plan):
            try:
                os.unlink(backup)  # nothing was replaced: the backup would only stand for a file that is gone
                plan.backup = None
            except OSError:
                pass
            raise ChangedMeanwhile()

    write_atomic(target, data, mode, pause, before_replace=last_look)
    return "installed", backup


def _sha(data: Optional[bytes]) -> Optional[str]:
    return None if data is None else hashlib.sha256(data).hexdigest()


def _expectations(values: Optional[List[str]], what: str) -> Optional[dict]:
    """--expect-old / --expect-new NAME=SHA256 (NAME=absent for --expect-old): the preview's plan, by file
    name (a name holds "=", a sha256 never does: split at the last one). None when not given."""
    if not values:
        return None
    out = {}
    for v in values:
        name, sep, digest = v.rpartition("=")
        if not sep or not name or not (digest == "absent" and what == "old" or re.fullmatch(r"[0-9a-f]{64}", digest)):
            raise RunError(
                "usage",
                "--expect-%s %r: give FILE_NAME=SHA256%s" % (what, v, " or FILE_NAME=absent" if what == "old" else ""),
            )
        out[name] = None if digest == "absent" else digest
    return out


def _plan_mismatch(plan: _Plan, old_want: dict, new_want: dict) -> Optional[str]:
    """Why the plan made now is not the plan that was previewed (None: it is exactly that plan)."""
    if plan.name not in old_want or plan.name not in new_want:
        return (
            "%s was not in the preview: the preview and the install disagree on the files (re-run the "
            "preview)" % plan.target
        )
    old_now = _sha(plan.old)
    if old_now != old_want[plan.name]:
        return (
            "%s changed between the preview and the push (%s when previewed, %s now): nothing was "
            "installed. Preview again to see what is there now"
            % (
                plan.target,
                "absent" if old_want[plan.name] is None else "sha256 %s..." % old_want[plan.name][:12],
                "absent" if old_now is None else "sha256 %s..." % old_now[:12],
            )
        )
    if _sha(plan.data) != new_want[plan.name]:
        return (
            "the bytes the push would write into %s are not the previewed ones (the run or moetune's "
            "push records changed since the preview): nothing was installed. Preview again" % plan.target
        )
    return None


def install_command(args, out) -> int:
    home = getattr(args, "home", None)
    keep = getattr(args, "keep_backups", DEFAULT_KEEP_BACKUPS)
    through = bool(getattr(args, "through_symlink", False))
    pause = options.test_hooks(False).install_pause_s  # test hook: kill mid-write
    old_want = _expectations(getattr(args, "expect_old", None), "old")
    new_want = _expectations(getattr(args, "expect_new", None), "new")
    if (old_want is None) != (new_want is None):
        raise RunError("usage", "--expect-old and --expect-new go together (the preview's plan, file by file)")
    target: List[Tuple[str, bool]] = []
    marker: List[Optional[str]] = []

    def test_double() -> Optional[str]:
        if not marker:
            try:
                target.append(_target_folder(args.framework, args.root, args.python))
                marker.append(test_double_marker(target[0][0]))
            except RunError:
                marker.append(None)  # no target: the simulated refusal is the clearer answer
        return marker[0]

    refusals: Optional[List[str]] = [] if args.dry_run else None
    files = _load_sources(args.source, args.framework, home, test_double, refusals)
    folder, may_create = target[0] if target else _target_folder(args.framework, args.root, args.python)
    for name, _ in files:
        try:
            naming.check_path_fits(folder, name)
        except naming.ConfigNameError as e:
            raise RunError("invalid_config", "%s; nothing was installed" % e)
    failed = False
    created: List[str] = []
    wrote_any = False
    lock = FolderLock(folder)
    # Missing when this install began: reported as created_folder even when a concurrent install made it
    # first and then lost (it cannot remove a folder that holds this one's file), so an undo removes it.
    missing_at_start = not os.path.isdir(folder)
    try:
        if not args.dry_run and not os.path.isdir(folder) and may_create:
            # Created before the lock can live in it (removed again when nothing gets installed).
            try:
                created = _makedirs(folder)
            except PermissionError as e:
                raise _perm_error(os.path.dirname(folder), e)
            except OSError as e:
                raise RunError("io", "cannot create %s: %s" % (folder, e))
        if not args.dry_run and os.path.isdir(folder):
            try:
                lock.acquire()
            except PermissionError as e:
                raise _perm_error(folder, e)
            except OSError as e:
                raise RunError("io", "cannot take the install lock %s: %s" % (lock.path, e))
        # Every file's plan first (under the lock): with the preview's plan given, all of them are checked
        # before anything is written, so the push installs exactly what was previewed or nothing.
        plans = []
        for name, text in files:
            plan = _Plan(folder, name, text.encode("utf-8"), through)
            merge = rowmerge.apply(plan, args.source, args.framework, home)  # never worse, row by row
            if plan.refused is None and plan.exists and plan.changed and not args.replace:
                plan.refused = "exists"
            if plan.refused is None and not os.path.isdir(folder) and not may_create:
                plan.refused = "not_found"
            if refusals:
                plan.refused = "simulated"
            plans.append((plan, merge))
        if args.dry_run:
            for plan, merge in plans:
                text = plan.data.decode("utf-8")
                old_lines = plan.old.decode("utf-8", "replace").splitlines(True) if plan.old is not None else []
                diff = "".join(
                    difflib.unified_diff(
                        old_lines,
                        text.splitlines(True),
                        fromfile=plan.target if plan.exists else "/dev/null",
                        tofile=plan.target,
                    )
                )
                out.emit(
                    {
                        "type": "diff",
                        "framework": args.framework,
                        "file_name": plan.name,
                        "target": plan.target,
                        "exists": plan.exists,
                        "changed": plan.changed,
                        "symlink": plan.link,
                        "would_backup": "%s.bak-<timestamp>" % plan.target
                        if plan.exists and plan.changed and args.replace and plan.refused is None
                        else None,
                        "refused": plan.refused,
                        "diff": diff,
                        "merge": merge.event(),
                        # the plan a push hands back (--expect-old / --expect-new): what is there, what goes
                        "old_sha256": _sha(plan.old) if plan.exists else None,
                        "new_sha256": _sha(plan.data),
                        "refused_message": refusals[0]
                        if refusals
                        else (_refusal_message(plan) if plan.refused not in (None, "not_found") else None),
                    }
                )
            return EXIT_OK
        if old_want is not None:
            names = set(p.name for p, _ in plans)
            why = [w for w in (_plan_mismatch(p, old_want, new_want) for p, _ in plans) if w]
            why += [
                "%s was previewed but the source has no such file now: nothing was installed" % os.path.join(folder, n)
                for n in sorted(set(old_want) - names)
            ]
            if why:
                for w in why:
                    out.error("changed_since_preview", w, path=folder)
                return EXIT_FAILED
        for plan, merge in plans:
            data = plan.data
            if plan.refused == "not_found":
                raise RunError("not_found", "the config folder %s does not exist" % folder)
            if plan.refused is not None:
                out.error(
                    "invalid_config" if plan.refused == "too_large" else plan.refused,
                    _refusal_message(plan),
                    path=plan.target,
                )
                failed = True
                continue
            created_now = folder if (created or missing_at_start) and not wrote_any else None
            previous = _sha(plan.old)
            try:
                what, backup = _write_one(plan, args.replace, pause)
            except ChangedMeanwhile:
                out.error(
                    "changed_meanwhile",
                    "%s changed while this install ran (another program wrote it after "
                    "it was read): nothing was replaced, and what is there now is kept. Look at it, then "
                    "install again" % plan.target,
                    path=plan.target,
                )
                failed = True
                if old_want is not None:
                    break  # the previewed plan cannot be installed whole: the rest is not started
                continue
            except OSError as e:
                left = (
                    "the previous file is untouched, and its backup %s, made before the failure, is kept; no "
                    "temporary file was left" % plan.backup
                    if plan.backup
                    else "the previous file, if any, is untouched, and no backup or temporary file was left"
                )
                if isinstance(e, PermissionError) or e.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
                    err = _perm_error(os.path.dirname(plan.target), e)
                    raise RunError(err.code, "%s (%s)" % (err.message, left))
                raise RunError("io", "writing %s failed: %s (%s)" % (plan.target, e, left))
            if what == "exists":
                plan.refused = "exists"
                out.error(
                    "exists",
                    "%s was created with different contents by another install while this one "
                    "ran; nothing was changed. Re-run with --replace to replace it (a timestamped backup is "
                    "kept), or --dry-run to see the diff" % plan.target,
                    path=plan.target,
                )
                failed = True
                continue
            wrote_any = wrote_any or what == "installed"
            back = read_nofollow(plan.target)
            if back != data:
                out.error(
                    "verify_failed",
                    "read-back of %s differs from what was written%s"
                    % (plan.target, "; the previous version is in %s" % backup if backup else ""),
                    path=plan.target,
                )
                failed = True
                continue
            pruned = prune_backups(plan.target, keep) if backup else []
            out.emit(
                {
                    "type": "installed",
                    "framework": args.framework,
                    "file_name": plan.name,
                    "target": plan.target,
                    "backup": backup,
                    "created_folder": created_now,
                    "unchanged": what == "unchanged",
                    "bytes": len(data),
                    "sha256": hashlib.sha256(back or b"").hexdigest(),
                    "previous_sha256": previous,  # null: there was no file (undo removes it)
                    "backups_kept": len(backups_of(plan.target)),
                    "backups_pruned": pruned,
                    "keep_backups": keep,
                    # set only when simulated numbers went into a test fixture's tree: its marker file
                    "test_double": marker[0] if marker else None,
                    "merge": merge.event(),
                }
            )
    finally:
        lock.release()
        if created and not wrote_any:
            _remove_created(created)  # a failed install into a new folder leaves no empty folder behind
    return EXIT_FAILED if failed else EXIT_OK
