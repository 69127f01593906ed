# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Never worse than the file the server has, row by row (issue 20, items 3 and 4).

When install-config finds a file at the target, the run's file is merged into it per batch size: a row
is replaced only where this run's head-to-head measured the new config faster than that file's own row
(the run's default was that very file: same bytes, or for results without a recorded hash the same row
at every measured size); rows the run did not measure are kept as they are; a file at the target that is
not what the run measured as default has only unmeasured rows, all kept. Every row's decision goes into
the `diff` / `installed` events (PROTOCOL.md, `merge`).

Files that other models read too: a file name has no K (hidden size), so moetune's own push records of
runs with the same file but another K say that another model reads it; each replaced or added row is then
marked unmeasured for that K (a warning per row, not a refusal: see PROTOCOL.md). Files for a sibling
device name in the same folder (NVIDIA_H200 vs NVIDIA_H200_NVL, -3e, _VF) are named: the server on this
GPU never reads them.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any, Dict, List, Optional, Tuple

from ..protocol import RunError
from ..runs.store import resolve, run_folder_of, runs_dir
from ..safefile import MAX_RESULT_BYTES, MAX_TEXT_BYTES, read_bounded, read_nofollow
from ..serverconfig import configjson, naming
from .siblings import served_range, sibling_files

__all__ = [
    "ADDED",
    "KEPT",
    "KEPT_UNMEASURED",
    "Merge",
    "NOT_ADDED",
    "REPLACED",
    "apply",
    "baseline_text",
    "check_head_to_head",
    "load_result",
    "plan",
]

KEPT = "kept"  # measured: the file's own row was as fast (or the tuned one was not faster)
REPLACED = "replaced"  # measured: the new config beat the file's own row
ADDED = "added"  # a batch size the file has no row for; measured faster than the row used
KEPT_UNMEASURED = "kept_unmeasured"  # the run did not measure this row (against this file): kept as it is
NOT_ADDED = "not_added"  # the run's row for a size the file lacks, not measured faster: left out


def _norm(cfg: Any) -> Optional[Tuple[Any, ...]]:
    if not isinstance(cfg, dict):
        return None
    return tuple(
        cfg.get(k) for k in ("BLOCK_SIZE_M", "BLOCK_SIZE_N", "BLOCK_SIZE_K", "GROUP_SIZE_M", "num_warps", "num_stages")
    ) + (bool(cfg.get("USE_TMA")),)


# -- the source's result --------------------------------------------------------------------------------


def load_result(source: str, home: Optional[str]) -> Optional[Dict[str, Any]]:
    """The moetune result behind an install source (a result.json, a run, or a file inside a run folder),
    or None (a lone config file: nothing was measured)."""
    path = source
    if not os.path.exists(path):
        try:
            path = resolve(source, home)
        except RunError:
            return None
    if os.path.isdir(path):
        path = os.path.join(path, "result.json")
    elif naming.try_parse_name(os.path.basename(path)) is not None:
        run = run_folder_of(path)
        if run is None:
            return None
        path = os.path.join(run, "result.json")
    try:  # non-blocking and bounded (PROTOCOL.md section 7): a FIFO there is no result, never waited on
        data = read_bounded(path, MAX_RESULT_BYTES, "the run's result")
        obj = json.loads(data) if data is not None else None
    except (OSError, ValueError, RunError, RecursionError):
        return None
    return obj if isinstance(obj, dict) and obj.get("format") == "moetune-result" else None


def _file_op(result: Dict[str, Any], name: str) -> str:
    """The head-to-head op whose winners a file of the result holds."""
    cname = naming.try_parse_name(name)
    if cname is not None and cname.down:
        return "down"
    return "both" if list(result.get("ops") or ["both"]) == ["both"] else "up"


def _default_of(result: Dict[str, Any], framework: str, down: bool) -> Dict[str, Any]:
    ds = result.get("default_source") or {}
    if ds.get("framework") not in (None, framework):
        return {"kind": "other_framework", "framework": ds.get("framework")}
    if down:
        return ds.get("down") or {"kind": "heuristic"}
    return ds


def _other_k(target: str, name: str, result: Dict[str, Any], home: Optional[str]) -> List[Dict[str, Any]]:
    """K's of other runs whose push (moetune's record, not undone) put a file of this name at target."""
    k_here = (result.get("shape") or {}).get("K")
    real = os.path.realpath(target)
    found: Dict[int, Dict[str, Any]] = {}
    try:
        folders = sorted(os.listdir(runs_dir(home)))
    except OSError:
        return []
    for run_id in folders:
        if run_id == result.get("run_id"):
            continue
        rdir = os.path.join(runs_dir(home), run_id)
        rec_path = os.path.join(rdir, "push.json")
        try:  # another run's files: non-blocking and bounded (a FIFO there is skipped, never waited on)
            rec = json.loads(read_bounded(rec_path, MAX_TEXT_BYTES, "push record") or b"null")
            spec = json.loads(read_bounded(os.path.join(rdir, "spec.json"), MAX_TEXT_BYTES, "spec") or b"null")
        except (OSError, ValueError, RunError, RecursionError):
            continue
        if not isinstance(rec, dict) or not isinstance(spec, dict):
            continue
        # Version 2 keeps every push of the run ({"pushes": [record, ...]}); version 1 is one record.
        pushes = rec.get("pushes") if rec.get("version") == 2 else [rec]
        hit = any(
            isinstance(p, dict)
            and not p.get("undone_at")
            and any(
                isinstance(fi, dict)
                and fi.get("file_name") == name
                and not fi.get("unchanged")
                and os.path.realpath(str(fi.get("target") or "")) == real
                for fi in p.get("files") or []
            )
            for p in pushes
            if isinstance(pushes, list)
        )
        k = spec.get("K")
        if hit and isinstance(k, int) and k != k_here and k not in found:
            found[k] = {
                "K": k,
                "run_id": run_id,
                "topk": spec.get("topk"),
                "source": "moetune's push record %s" % rec_path,
            }
    return [found[k] for k in sorted(found)]


# -- the merge ------------------------------------------------------------------------------------------


class Merge(object):
    """What installing one file of a result does to the file at the target, row by row."""

    def __init__(self) -> None:
        self.mode = "whole"  # "new" (no file there), "merged" (per row), "whole" (nothing to merge with)
        self.measured_default: Optional[bool] = None
        self.note = ""
        self.rows: List[Dict[str, Any]] = []
        self.other_k: List[Dict[str, Any]] = []
        self.siblings: List[Dict[str, str]] = []
        self.text: Optional[str] = None  # the bytes to install (None: the source's own text)
        self.baseline: Optional[str] = None  # what the run timed its configs against, in words

    def event(self) -> Dict[str, Any]:
        return {
            "mode": self.mode,
            "measured_default": self.measured_default,
            "note": self.note,
            "rows": self.rows,
            "other_k": self.other_k,
            "siblings": self.siblings,
            "baseline": self.baseline,
        }


def baseline_text(result: Dict[str, Any], framework: str, down: bool) -> Optional[str]:
    """What the run's head-to-head timed its configs against (its default_source), in words: the server's
    default is called so only when it is the built-in one; a file is named."""
    ds = _default_of(result, framework, down)
    kind = ds.get("kind")
    if kind == "file":
        return "the file %s (what the server read when the run measured)" % (ds.get("path") or ds.get("file_name"))
    if kind == "up_config":
        return "the server's up config (it has no down file)"
    if kind == "heuristic":
        return "the server's built-in default"
    if kind == "other_framework":
        return "%s's default" % ds.get("framework")
    return None


def _status(
    old: Optional[bytes], target: str, result: Dict[str, Any], framework: str, op: str, down: bool
) -> Tuple[str, str]:
    """-> ("new" | "measured" | "unmeasured" | "invalid", sentence) for the file at target."""
    if old is None:
        return "new", "no file at %s: the whole file is new" % target
    try:
        entries, _ = configjson.read_as_server(old.decode("utf-8"))
    except (configjson.ConfigFileError, UnicodeDecodeError) as e:
        return "invalid", (
            "the server cannot read the file at %s either (%s): it is replaced whole (a backup "
            "is kept)" % (target, e)
        )
    ds = _default_of(result, framework, down)
    if ds.get("kind") == "other_framework":
        return "unmeasured", (
            "the run measured %s's default, not %s's: no row of %s was measured"
            % (ds.get("framework"), framework, target)
        )
    if ds.get("kind") != "file":
        return "unmeasured", (
            "the run's default was the server's %s, not this file (it was put there after "
            "the run measured, or the server did not read it): none of its rows was measured"
            % ("up config" if ds.get("kind") == "up_config" else "built-in heuristic")
        )
    where = ds.get("path") or ds.get("file_name")
    digest = hashlib.sha256(old).hexdigest()
    if ds.get("sha256"):
        if ds["sha256"] != digest:
            return "unmeasured", (
                "the file at %s is not the one the run measured as default (%s, sha256 %s..., "
                "this one %s...): none of its rows was measured" % (target, where, ds["sha256"][:12], digest[:12])
            )
        same = ds.get("path") and os.path.realpath(ds["path"]) == os.path.realpath(target)
        return "measured", (
            "the run's default was this very file"
            if same
            else "the run's default was %s, with the same bytes as this file" % where
        )
    # No hash recorded (an older agent): the measured default at every size must be this file's row.
    rows = [h for h in result.get("head_to_head") or [] if isinstance(h, dict)]
    if not rows:
        return "unmeasured", "the run recorded no head-to-head: none of the rows of %s was measured" % target
    for h in rows:
        dflt = ((h.get("default") or {}).get("configs") or {}).get(op)
        row = entries[configjson.nearest_key(entries, int(h["m"]))]
        if _norm(dflt) != _norm(row):
            return "unmeasured", (
                "the run's default at m=%d is not the row of the file at %s (the file "
                "changed since the run): none of its rows was measured" % (int(h["m"]), target)
            )
    return "measured", "the run's default was %s, and it matches this file at every measured size" % where


def check_head_to_head(result: Dict[str, Any]) -> None:
    """The result's head_to_head as the merge reads it: a list of objects, each with "m" a batch size and
    "default" (when there) an object whose "configs" is an object. RunError(invalid_config) otherwise."""
    rows = result.get("head_to_head")
    if rows is None:
        return
    if not isinstance(rows, list):
        raise RunError(
            "invalid_config", 'the run\'s result is damaged: "head_to_head" must be a list; ' "nothing was installed"
        )
    for i, h in enumerate(rows):
        m = h.get("m") if isinstance(h, dict) else None
        dflt = h.get("default") if isinstance(h, dict) else None
        if (
            isinstance(m, bool)
            or not isinstance(m, int)
            or m < 1
            or not isinstance(dflt or {}, dict)
            or not isinstance((dflt or {}).get("configs") or {}, dict)
        ):
            raise RunError(
                "invalid_config",
                "the run's result is damaged: head_to_head[%d] must be an object "
                'with "m" (a batch size) and "default" an object; nothing '
                "was installed" % i,
            )


def plan(
    old: Optional[bytes],
    target: str,
    name: str,
    text: str,
    framework: str,
    result: Optional[Dict[str, Any]],
    home: Optional[str] = None,
    coupled: Optional[List[Tuple[Optional[bytes], str, str]]] = None,
) -> Merge:
    """The merge of the result's file `name` (exact text `text`) into `old` (the bytes at target, None
    if absent). coupled: the other files of the same joint decision (up+down: the other file's
    (old bytes, target, name)) - a pair is replaced only where every file of it was measured."""
    mg = Merge()
    mg.siblings = sibling_files(os.path.dirname(target), name)
    if result is None:
        mg.note = "a lone config file holds no measurement: %s" % (
            "it is installed whole" if old is None else "it replaces the file there whole (a backup is kept)"
        )
        return mg
    check_head_to_head(result)
    op = _file_op(result, name)
    new_entries, _ = configjson.parse_config_text(text)
    down = op == "down"
    mg.baseline = baseline_text(result, framework, down)
    status, why = _status(old, target, result, framework, op, down)
    statuses = [status]
    for c_old, c_target, c_name in coupled or []:
        c_op = _file_op(result, c_name)
        statuses.append(_status(c_old, c_target, result, framework, c_op, c_op == "down")[0])
    mg.other_k = _other_k(target, name, result, home) if old is not None else []
    h2h = {int(h["m"]): h for h in result.get("head_to_head") or [] if isinstance(h, dict) and "m" in h}
    ks = [k["K"] for k in mg.other_k]

    def measured_row(m: int, decision: str, old_cfg, new_cfg, note: str = "") -> Dict[str, Any]:
        h = h2h.get(m) or {}
        row = {
            "m": m,
            "decision": decision,
            "gain": h.get("speedup") if h else None,
            "default_us": h.get("default_median_us"),
            "tuned_us": h.get("median_us"),
            "rounds": h.get("rounds"),
            "h2h_decision": h.get("decision"),
            "old": old_cfg,
            "new": new_cfg,
            "note": note,
            "unmeasured_k": ks if decision in (REPLACED, ADDED) else [],
        }
        return row

    if status in ("new", "invalid"):
        mg.mode = "new" if status == "new" else "whole"
        mg.note = why
        mg.measured_default = None
        for m in sorted(new_entries):
            mg.rows.append(measured_row(m, ADDED, None, new_entries[m]))
        return mg

    # Read as the server reads it (a key "01" is 1, a key written twice keeps its last value): every row
    # the server has is a row here, and every one not replaced is written back as it is.
    old_entries, _ = configjson.read_as_server(old.decode("utf-8"))
    mg.mode = "merged"
    mg.measured_default = status == "measured"
    pair_ok = all(s in ("measured", "new") for s in statuses)
    mg.note = (
        why
        if pair_ok or status != "measured"
        else (why + "; but the other file of the up/down pair at this target was not measured, so no pair is replaced")
    )
    merged: Dict[int, Any] = dict(old_entries)
    for m in sorted(set(old_entries) | set(new_entries)):
        h = h2h.get(m)
        in_old = m in old_entries
        if m not in new_entries or h is None:
            if in_old:
                mg.rows.append(
                    measured_row(m, KEPT_UNMEASURED, old_entries[m], None, "the run did not measure this batch size")
                )
            else:
                mg.rows.append(measured_row(m, NOT_ADDED, None, new_entries[m], "no head-to-head at this size"))
            continue
        if not mg.measured_default or not pair_ok:
            if in_old:
                mg.rows.append(
                    measured_row(
                        m, KEPT_UNMEASURED, old_entries[m], new_entries[m], "the run did not measure this file's row"
                    )
                )
            else:
                mg.rows.append(measured_row(m, NOT_ADDED, None, new_entries[m], "measured against another default"))
            continue
        serving = old_entries[configjson.nearest_key(old_entries, m)]
        dflt = ((h.get("default") or {}).get("configs") or {}).get(op)
        if _norm(dflt) != _norm(serving):
            dec = KEPT_UNMEASURED if in_old else NOT_ADDED
            mg.rows.append(
                measured_row(
                    m, dec, old_entries.get(m), new_entries[m], "the run's default at this size was not this file's row"
                )
            )
            continue
        faster = h.get("decision") == "tuned_faster" and not h.get("chosen_default")
        failed = h.get("decision") == "default_failed" and not h.get("chosen_default")
        if (faster or failed) and _norm(new_entries[m]) != _norm(serving):
            note = "the file's row failed to run in the head-to-head" if failed else ""
            if in_old:
                mg.rows.append(measured_row(m, REPLACED, old_entries[m], new_entries[m], note))
            else:
                lo, hi = served_range(list(old_entries), m)
                mg.rows.append(
                    measured_row(
                        m,
                        ADDED,
                        None,
                        new_entries[m],
                        (
                            "a new key: the server then takes it for M %d-%s, measured at M=%d only"
                            % (lo, "up" if hi is None else str(hi), m)
                        )
                        + ("; " + note if note else ""),
                    )
                )
                mg.rows[-1]["serves"] = [lo, hi]
            merged[m] = new_entries[m]
            continue
        if in_old:
            mg.rows.append(measured_row(m, KEPT, old_entries[m], new_entries[m]))
        else:
            mg.rows.append(
                measured_row(
                    m,
                    NOT_ADDED,
                    None,
                    new_entries[m],
                    "the row the server uses there (M=%d) was as fast" % configjson.nearest_key(old_entries, m),
                )
            )
    tv = None
    if framework == "vllm":
        _, tv = configjson.parse_config_text(text)
    kept_as_is = tuple(m for m in merged if m in old_entries and merged[m] is old_entries[m])
    mg.text = configjson.format_config_text(merged, framework, tv, kept_as_is)
    if not any(r["decision"] in (REPLACED, ADDED) for r in mg.rows):
        mg.text = old.decode("utf-8")  # nothing measured faster: the file stays byte for byte
    return mg


def apply(plan_obj, source: str, framework: str, home: Optional[str]) -> Merge:
    """installer.py's one call: merges into plan_obj (its old bytes, target, name, data) and makes the
    plan install the merged bytes."""
    result = load_result(source, home)
    text = plan_obj.data.decode("utf-8")
    coupled = []
    cname = naming.try_parse_name(plan_obj.name)
    if (
        result is not None
        and cname is not None
        and framework == "sglang"
        and list(result.get("ops") or []) == ["up", "down"]
    ):
        other = naming.ConfigName(
            cname.E, cname.N, cname.device_name, cname.dtype, cname.block_shape, cname.per_channel_quant, not cname.down
        ).file_name("sglang")
        if any(f.get("file_name") == other for f in result.get("files") or []):
            o_target = os.path.join(os.path.dirname(plan_obj.target), other)
            try:
                o_old = read_nofollow(o_target)
            except (RunError, OSError):
                o_old = None
            coupled.append((o_old, o_target, other))
    mg = plan(
        None if plan_obj.refused == "symlink_target" else plan_obj.old,
        plan_obj.target,
        plan_obj.name,
        text,
        framework,
        result,
        home,
        coupled,
    )
    if mg.text is not None and mg.text != text:
        plan_obj.data = mg.text.encode("utf-8")
        plan_obj.changed = plan_obj.old != plan_obj.data
    return mg
