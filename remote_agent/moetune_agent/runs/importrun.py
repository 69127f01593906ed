# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""`import-run`: a finished run's result.json tuned on another host becomes a run of this host's store.

A fleet tunes each config once, on one host of a group, and rolls the result out to every host of the
group. Each of those hosts then pushes, restarts, proves and undoes through the same single-host path as a
run tuned there (install-config RUN, its push history beside the run, Undo from that history), so the
result needs a run folder on each host: this command makes one. The folder is marked as imported
(imported.json: where it was tuned, the source's sha256) and is "finished" from the start; it holds no
journal and never runs. Importing the same bytes again returns the run made the first time, so a retried
rollout does not pile up copies."""

from __future__ import annotations

import hashlib
import json
import os
import re
from typing import Any, Dict, Optional

from ..protocol import RunError
from ..safefile import MAX_RESULT_BYTES, read_bounded, write_atomic
from . import store

__all__ = ["import_run", "IMPORT_MARK"]

IMPORT_MARK = "imported.json"
_LABEL = re.compile(r"^[A-Za-z0-9._@:-]{1,128}$")

# The result's facts that say what the run was; copied into the imported run's spec.json so `runs` shows
# the same shape and a simulated source stays simulated (runs.logs.run_simulated reads spec and result).
_SPEC_KEYS = ("framework", "backend", "device_name", "strategy", "ops", "batch_sizes", "triton_version")


def _check_label(value: Optional[str], what: str) -> str:
    if value is None:
        return ""
    if not _LABEL.match(value):
        raise RunError("usage", "%s %r: use at most 128 letters, digits and . _ @ : -" % (what, value))
    return value


def import_run(
    source: str, from_host: Optional[str], from_run: Optional[str], home: Optional[str] = None
) -> Dict[str, Any]:
    """-> {run_id, run_dir, reused, sha256}. Raises RunError(not_found | invalid_config | usage)."""
    from_host = _check_label(from_host, "--from-host")
    from_run = _check_label(from_run, "--from-run")
    try:
        raw = read_bounded(source, MAX_RESULT_BYTES, "the result")
    except OSError as e:
        raise RunError(
            "not_found" if isinstance(e, FileNotFoundError) else "io", "cannot read %s: %s" % (source, e.strerror or e)
        )
    if raw is None:
        raise RunError("not_found", "cannot read %s: no such file" % source)
    try:
        obj = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise RunError("invalid_config", "%s is not a moetune result: %s; nothing was imported" % (source, e))
    if not isinstance(obj, dict) or obj.get("format") != "moetune-result" or not isinstance(obj.get("files"), list):
        raise RunError(
            "invalid_config",
            '%s is not a moetune result (no "format":"moetune-result" with ' '"files"); nothing was imported' % source,
        )
    digest = hashlib.sha256(raw).hexdigest()
    runs = store.private_runs_dir(home)
    for d in store.list_runs(home):
        try:
            with open(os.path.join(d, IMPORT_MARK), "rb") as f:
                mark = json.loads(f.read(1 << 16))
        except (OSError, ValueError):
            continue
        if isinstance(mark, dict) and mark.get("sha256") == digest and os.path.isfile(os.path.join(d, "result.json")):
            return {"run_id": os.path.basename(d), "run_dir": d, "reused": True, "sha256": digest}
    rid = store.new_run_id(digest)
    run_dir = store.private_dir(os.path.join(runs, rid), "the run folder")
    spec = {k: obj[k] for k in _SPEC_KEYS if k in obj}
    shape = obj.get("shape")
    if isinstance(shape, dict):
        spec.update({k: v for k, v in shape.items() if k not in spec})
    spec["imported"] = True
    mark = {
        "sha256": digest,
        "from_host": from_host or None,
        "from_run": from_run or obj.get("run_id"),
        "source_run_id": obj.get("run_id"),
    }
    write_atomic(os.path.join(run_dir, "result.json"), raw)
    write_atomic(os.path.join(run_dir, IMPORT_MARK), (json.dumps(mark, indent=1) + "\n").encode())
    store.set_state(run_dir, "finished")
    # spec.json last: store.resolve() and `runs` see the run only once it is whole.
    write_atomic(os.path.join(run_dir, "spec.json"), (json.dumps(spec, indent=1) + "\n").encode())
    return {"run_id": rid, "run_dir": run_dir, "reused": False, "sha256": digest}
