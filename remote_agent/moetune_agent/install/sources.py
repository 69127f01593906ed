# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""What install-config installs and where: the test-double marker that lets only a fixture's or the practice
server's tree take simulated numbers, the sources checked as server files (a config file, a run, a result.json),
and the target folder found from the server's interpreter or --root."""

from __future__ import annotations

import json
import os
import stat
from typing import Callable, List, Optional, Tuple

from ..protocol import RunError
from ..runs.logs import run_simulated
from ..runs.store import resolve, run_folder_of
from ..safefile import MAX_CONFIG_BYTES, MAX_RESULT_BYTES, read_bounded, read_nofollow
from ..serverconfig import configjson, naming


__all__ = [
    "PRACTICE_DOUBLE_TEXT",
    "TEST_DOUBLE_MARKER",
    "TEST_DOUBLE_TEXT",
    "load_sources",
    "target_folder",
    "test_double_marker",
]

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


def load_sources(
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


def target_folder(framework: str, root: Optional[str], python: Optional[str]) -> Tuple[str, bool]:
    """-> (folder, may_create)."""
    if root:
        root = os.path.abspath(root)
        if framework == "sglang" and not os.path.basename(root.rstrip("/")).startswith("triton_"):
            tv = _triton_version(python)
            return os.path.join(root, naming.triton_folder(tv)), True
        return root, framework == "sglang"
    from ..hostfacts import framework_facts, python_facts

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
    from ..hostfacts import python_facts

    tv = (python_facts(python).get("triton") or {}).get("version")
    if not tv or naming.parse_triton_version(tv) is None:
        raise RunError(
            "not_found",
            "Triton is not installed for %s, so the triton_X_Y_Z folder is unknown: pass "
            "--python or --root .../triton_X_Y_Z" % (python or "this interpreter"),
        )
    return tv
