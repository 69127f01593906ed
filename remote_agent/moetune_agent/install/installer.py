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

import difflib
import errno
import hashlib
import os
import re
import stat
from typing import List, Optional, Tuple

from .. import options
from ..protocol import EXIT_FAILED, EXIT_OK, RunError
from ..safefile import (
    clean_stale_temps,
    default_mode,
    file_kind,
    fsync_dir,
    is_symlink,
    read_nofollow,
    write_atomic,
    write_temp,
)
from ..serverconfig import naming
from . import rowmerge
from .backups import (
    LOCK_NAME,
    FolderLock,
    link_exclusive,
    make_backup,
    make_folders,
    remove_created,
    backups_of,
    prune_backups,
)
from .sources import (
    PRACTICE_DOUBLE_TEXT,
    TEST_DOUBLE_MARKER,
    TEST_DOUBLE_TEXT,
    load_sources,
    target_folder,
    test_double_marker,
)

__all__ = [
    "DEFAULT_KEEP_BACKUPS",
    "LOCK_NAME",
    "PRACTICE_DOUBLE_TEXT",
    "TEST_DOUBLE_MARKER",
    "TEST_DOUBLE_TEXT",
    "ChangedMeanwhile",
    "backups_of",
    "install_command",
    "prune_backups",
]

DEFAULT_KEEP_BACKUPS = 5


def _perm_error(folder: str, e: OSError) -> RunError:
    user = options.host_env("USER") or str(os.getuid())
    return RunError(
        "permission_denied",
        "cannot write to %s: %s. moetune never uses root: make that folder "
        "writable for %s, or point the server at a folder you own (SGLANG_MOE_CONFIG_DIR / "
        "VLLM_TUNED_CONFIG_FOLDER) and pass it as --root" % (folder, e.strerror or e, user),
    )


class _Plan(object):
    """What installing one file would do (shared by --dry-run and the real install)."""

    def __init__(self, folder: str, name: str, data: bytes, through_symlink: bool):
        if os.path.basename(name) != name or name in ("", ".", ".."):  # load_sources checked it already
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
        if link_exclusive(tmp, target):
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
    backup = make_backup(target, plan.old, mode)
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
                target.append(target_folder(args.framework, args.root, args.python))
                marker.append(test_double_marker(target[0][0]))
            except RunError:
                marker.append(None)  # no target: the simulated refusal is the clearer answer
        return marker[0]

    refusals: Optional[List[str]] = [] if args.dry_run else None
    files = load_sources(args.source, args.framework, home, test_double, refusals)
    folder, may_create = target[0] if target else target_folder(args.framework, args.root, args.python)
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
                created = make_folders(folder)
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
            remove_created(created)  # a failed install into a new folder leaves no empty folder behind
    return EXIT_FAILED if failed else EXIT_OK
