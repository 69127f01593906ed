"""`install-config`: put tuned config files where the server reads them, safely.

Target: SGLang's <config root>/triton_<installed Triton>/ (created when missing), vLLM's
VLLM_TUNED_CONFIG_FOLDER or its package's configs/ folder; --root overrides the root (or names the
triton_X_Y_Z folder itself). A file that differs is only replaced with --replace, after a timestamped
backup beside it; the write is atomic (temporary file in the same folder, fsync, rename, fsync folder)
so a reader or a kill never sees half a file; the result is read back and compared. Never needs root.
Paths only ever go through Python's file APIs: no shell, so any character in a path is inert.
"""

import datetime
import difflib
import errno
import hashlib
import json
import os
import shutil
import time
from typing import List, Optional, Tuple

from . import configjson, naming
from .protocol import EXIT_FAILED, EXIT_OK
from .runs import RunError, fsync_dir, read_text, resolve

TMP_MARK = ".moetune-tmp-"


def _load_sources(source, framework, home):
    # type: (str, str, Optional[str]) -> List[Tuple[str, str]]
    """-> [(file name in the target dialect, exact text)]. Raises RunError."""
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
    text = read_text(path)
    if text is None:
        raise RunError("permission_denied" if os.path.exists(path) else "not_found", "cannot read %s" % path)
    base = os.path.basename(path)
    cname = naming.try_parse_name(base)
    if cname is None:
        try:
            obj = json.loads(text)
        except ValueError as e:
            raise RunError("invalid_config", "%s is neither a config file name nor JSON: %s" % (path, e))
        if not isinstance(obj, dict) or obj.get("format") != "moetune-result":
            raise RunError("invalid_config", "%s is not a moetune result (no \"format\":\"moetune-result\") and "
                           "its name is not a server config name (E=..,N=..,device_name=...json)" % path)
        # MOETUNE_TEST_ALLOW_SIMULATED_INSTALL: test hook for the end-to-end tests' fake server only.
        if obj.get("simulated") and not os.environ.get("MOETUNE_TEST_ALLOW_SIMULATED_INSTALL"):
            raise RunError("simulated", "%s holds simulated results (synthetic backend): refusing to install "
                           "numbers that were never measured on a GPU" % path)
        out = []
        tv = obj.get("triton_version")
        for f in obj.get("files") or []:
            if f.get("framework") != framework:
                continue
            entries = {int(k): v for k, v in (f.get("entries") or {}).items()}
            try:
                text_f = configjson.format_config_text(entries, framework, tv if framework == "vllm" else None)
            except configjson.ConfigFileError as e:
                raise RunError("invalid_config", "%s: file %s: %s" % (path, f.get("file_name"), e))
            out.append((f["file_name"], text_f))
        if not out:
            raise RunError("not_found", "%s has no %s config file" % (path, framework))
        return out
    # A single server config file.
    try:
        configjson.parse_config_text(text)
    except configjson.ConfigFileError as e:
        raise RunError("invalid_config", "%s: %s" % (path, e))
    if cname.device_name == "SIMULATED_GPU":
        raise RunError("simulated", "%s was produced by the synthetic backend (device SIMULATED_GPU): "
                       "refusing to install simulated results" % path)
    if framework == "vllm" and (cname.down or cname.per_channel_quant):
        raise RunError("invalid_config", "%s is an SGLang-only file (_down / per_channel_quant): vLLM never "
                       "reads it" % base)
    # The server looks the name up in its own dialect ("[128, 128]" vs "[128,128]").
    return [(cname.file_name(framework), text)]


def _target_folder(framework, root, python):
    # type: (str, Optional[str], Optional[str]) -> Tuple[str, bool]
    """-> (folder, may_create)."""
    if root:
        root = os.path.abspath(root)
        if framework == "sglang" and not os.path.basename(root.rstrip("/")).startswith("triton_"):
            tv = _triton_version(python)
            return os.path.join(root, naming.triton_folder(tv)), True
        return root, framework == "sglang"
    from .probe import framework_facts, python_facts
    facts = python_facts(python)
    if facts.get("error"):
        raise RunError("not_found", facts["error"])
    fw = framework_facts(framework, facts)
    if framework == "sglang":
        if not fw["config_root"]:
            raise RunError("not_found", "SGLang is not importable from %s and SGLANG_MOE_CONFIG_DIR is not set: "
                           "pass --python (the server's interpreter) or --root" % facts.get("executable"))
        if not fw["triton_folder"]:
            raise RunError("not_found", "Triton is not installed for %s, so the triton_X_Y_Z folder is unknown: "
                           "pass --python or --root .../triton_X_Y_Z" % facts.get("executable"))
        return os.path.join(fw["config_root"], fw["triton_folder"]), True
    folder = fw["user_folder"] or fw["config_root"]
    if not folder:
        raise RunError("not_found", "vLLM is not importable from %s and VLLM_TUNED_CONFIG_FOLDER is not set: "
                       "pass --python or --root" % facts.get("executable"))
    return folder, False


def _triton_version(python):
    from .probe import python_facts
    tv = ((python_facts(python).get("triton") or {}).get("version"))
    if not tv or naming.parse_triton_version(tv) is None:
        raise RunError("not_found", "Triton is not installed for %s, so the triton_X_Y_Z folder is unknown: pass "
                       "--python or --root .../triton_X_Y_Z" % (python or "this interpreter"))
    return tv


def _perm_error(folder, e):
    user = os.environ.get("USER") or str(os.getuid())
    return RunError("permission_denied", "cannot write to %s: %s. moetune never uses root: make that folder "
                    "writable for %s, or point the server at a folder you own (SGLANG_MOE_CONFIG_DIR / "
                    "VLLM_TUNED_CONFIG_FOLDER) and pass it as --root" % (folder, e.strerror or e, user))


def _backup_path(target):
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    b = "%s.bak-%s" % (target, stamp)
    n = 1
    while os.path.exists(b):
        n += 1
        b = "%s.bak-%s-%d" % (target, stamp, n)
    return b


def _fsync_file(path):
    with open(path, "rb") as f:
        os.fsync(f.fileno())


def atomic_write(folder, name, data):
    # type: (str, str, bytes) -> None
    target = os.path.join(folder, name)
    tmp = os.path.join(folder, ".%s%s%d" % (name, TMP_MARK, os.getpid()))
    pause = float(os.environ.get("MOETUNE_TEST_INSTALL_PAUSE_S", "0") or 0)  # test hook: kill mid-write
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        half = len(data) // 2
        os.write(fd, data[:half])
        if pause:
            time.sleep(pause)
        view = data[half:]
        while view:
            n = os.write(fd, view)
            view = view[n:]
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    os.close(fd)
    os.replace(tmp, target)
    fsync_dir(folder)


def _clean_stale_tmp(folder, name):
    prefix = ".%s%s" % (name, TMP_MARK)
    try:
        for n in os.listdir(folder):
            if n.startswith(prefix):
                pid = n[len(prefix):]
                if pid.isdigit() and not os.path.exists("/proc/%s" % pid):
                    os.unlink(os.path.join(folder, n))
    except OSError:
        pass


def install_command(args, out):
    home = getattr(args, "home", None)
    files = _load_sources(args.source, args.framework, home)
    folder, may_create = _target_folder(args.framework, args.root, args.python)
    failed = False
    for name, text in files:
        data = text.encode("utf-8")
        target = os.path.join(folder, name)
        old = None  # type: Optional[bytes]
        if os.path.exists(target):
            try:
                with open(target, "rb") as f:
                    old = f.read()
            except OSError as e:
                raise RunError("permission_denied", "cannot read the existing %s: %s" % (target, e))
        exists = old is not None
        changed = old != data
        refused = "exists" if exists and changed and not args.replace else None
        if not os.path.isdir(folder) and not may_create:
            refused = refused or "not_found"
        if args.dry_run:
            old_lines = old.decode("utf-8", "replace").splitlines(True) if old is not None else []
            diff = "".join(difflib.unified_diff(old_lines, text.splitlines(True),
                                                fromfile=target if exists else "/dev/null", tofile=target))
            out.emit({"type": "diff", "framework": args.framework, "file_name": name, "target": target,
                      "exists": exists, "changed": changed,
                      "would_backup": "%s.bak-<timestamp>" % target if exists and changed and args.replace else None,
                      "refused": refused, "diff": diff})
            continue
        if refused == "exists":
            out.error("exists", "%s already exists with different contents; nothing was changed. Re-run with "
                      "--replace to replace it (a timestamped backup is kept), or --dry-run to see the diff"
                      % target, path=target)
            failed = True
            continue
        if refused == "not_found":
            raise RunError("not_found", "the config folder %s does not exist" % folder)
        created = None
        if not os.path.isdir(folder):
            try:
                os.makedirs(folder)
                fsync_dir(os.path.dirname(folder))
                created = folder
            except PermissionError as e:
                raise _perm_error(os.path.dirname(folder), e)
            except OSError as e:
                raise RunError("io", "cannot create %s: %s" % (folder, e))
        backup = None
        try:
            _clean_stale_tmp(folder, name)
            if exists and changed:
                backup = _backup_path(target)
                shutil.copy2(target, backup)
                _fsync_file(backup)
            if changed:
                atomic_write(folder, name, data)
        except PermissionError as e:
            raise _perm_error(folder, e)
        except OSError as e:
            if e.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
                raise _perm_error(folder, e)
            raise RunError("io", "writing %s failed: %s (the previous file, if any, is untouched)" % (target, e))
        with open(target, "rb") as f:
            back = f.read()
        if back != data:
            out.error("verify_failed", "read-back of %s differs from what was written%s" %
                      (target, "; the previous version is in %s" % backup if backup else ""), path=target)
            failed = True
            continue
        out.emit({"type": "installed", "framework": args.framework, "file_name": name, "target": target,
                  "backup": backup, "created_folder": created, "unchanged": not changed, "bytes": len(data),
                  "sha256": hashlib.sha256(back).hexdigest()})
    return EXIT_FAILED if failed else EXIT_OK
