# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Winners -> the servers' config files and result.json (PROTOCOL.md section 5)."""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..kernel_types import KernelConfig
from ..safefile import write_atomic
from ..serverconfig import configjson
from ..serverconfig.naming import file_names
from ..work import Measurement

__all__ = ["build_result", "latest_score", "share_block_m", "write_files", "write_result"]


def _median(xs):
    s = sorted(xs)
    n = len(s)
    if not n:
        return None
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def latest_score(measured: Sequence[Measurement], op: str, m: int, cfg: KernelConfig) -> Optional[float]:
    """Median over the highest round that timed (op, m, cfg)."""
    by_round: Dict[int, List[float]] = {}
    for meas in measured:
        u = meas.unit
        if meas.ok and u.op == op and u.m == m and u.cfg == cfg and u.cfg_down is None:
            by_round.setdefault(u.round, []).append(meas.median_us)
    if not by_round:
        return None
    return _median(by_round[max(by_round)])


def share_block_m(
    winners: Dict[Tuple[str, int], KernelConfig], measured: Sequence[Measurement], batch_sizes: Sequence[int]
) -> Tuple[Dict[Tuple[str, int], KernelConfig], List[int]]:
    """SGLang asserts that up and down share BLOCK_SIZE_M per key. Where the winners disagree, pick the
    BLOCK_SIZE_M that minimises up + down among measured configs. Returns (winners, fixed sizes)."""
    out = dict(winners)
    fixed = []
    for m in batch_sizes:
        up, down = winners.get(("up", m)), winners.get(("down", m))
        if up is None or down is None or up.BLOCK_SIZE_M == down.BLOCK_SIZE_M:
            continue
        # Median over the highest round per config, computed in one pass (a sweep has ~10^4 entries).
        rounds: Dict[Tuple[str, KernelConfig], Dict[int, List[float]]] = {}
        for meas in measured:
            u = meas.unit
            if not meas.ok or u.m != m or u.op not in ("up", "down") or u.cfg_down is not None or u.round < 0:
                continue
            rounds.setdefault((u.op, u.cfg), {}).setdefault(u.round, []).append(meas.median_us)
        best: Dict[Tuple[str, int], Tuple[float, KernelConfig]] = {}
        for (op, cfg), by_round in rounds.items():
            s = _median(by_round[max(by_round)])
            k = (op, cfg.BLOCK_SIZE_M)
            if k not in best or s < best[k][0]:
                best[k] = (s, cfg)
        choices = [
            (best[("up", bm)][0] + best[("down", bm)][0], bm)
            for (op, bm) in best
            if op == "up" and ("down", bm) in best
        ]
        if choices:
            _, bm = min(choices)
            out[("up", m)] = best[("up", bm)][1]
            out[("down", m)] = best[("down", bm)][1]
            fixed.append(m)
    return out, fixed


def write_files(
    run_dir: str,
    spec: Dict[str, Any],
    device_name: str,
    winners: Dict[Tuple[str, int], KernelConfig],
    triton_version: Optional[str],
) -> List[Dict[str, Any]]:
    names = file_names(spec, device_name)
    up_op = "both" if spec["ops"] == "up" else "up"
    per_kind = {"sglang": up_op, "vllm": up_op}
    if spec["ops"] == "up+down":
        per_kind["sglang_down"] = "down"
    files = []
    for kind in ("sglang", "sglang_down", "vllm"):
        if kind not in names:
            continue
        op = per_kind[kind]
        entries = {m: cfg for (o, m), cfg in winners.items() if o == op}
        if not entries:
            continue
        dialect = "vllm" if kind == "vllm" else "sglang"
        text = configjson.format_config_text(entries, dialect, triton_version if dialect == "vllm" else None)
        folder = os.path.join(run_dir, dialect)
        os.makedirs(folder, exist_ok=True)
        path = os.path.join(folder, names[kind])
        data = text.encode()
        write_atomic(path, data)
        files.append(
            {
                "framework": dialect,
                "kind": kind,
                "file_name": names[kind],
                "path": path,
                "sha256": hashlib.sha256(data).hexdigest(),
                "entries": {str(m): entries[m].as_dict() for m in sorted(entries)},
            }
        )
    return files


def measurement_json(rec: Dict[str, Any]) -> Dict[str, Any]:
    ok = rec.get("type") == "measurement"
    return {
        "op": rec["op"],
        "m": rec["m"],
        "config": rec["config"],
        "config_down": rec.get("config_down"),
        "round": rec["round"],
        "replays": rec["replays"],
        "median_us": rec.get("median_us") if ok else None,
        "min_us": rec.get("min_us") if ok else None,
        "max_us": rec.get("max_us") if ok else None,
        "spread": rec.get("spread") if ok else None,
        "samples_us": rec.get("samples_us") if ok else None,
        "gpu": rec.get("gpu", 0),
        "error_kind": None if ok else rec.get("kind"),
        "error": None if ok else rec.get("message"),
    }


def build_result(
    ctx: Dict[str, Any],
    records: Sequence[Dict[str, Any]],
    measured: Sequence[Measurement],
    winners: Dict[Tuple[str, int], KernelConfig],
    defaults: Dict[Tuple[str, int], Tuple[KernelConfig, Optional[float]]],
    roofline: Dict[Tuple[str, int], Optional[float]],
    files: List[Dict[str, Any]],
    timings: Dict[str, Any],
    winner_us: Optional[Dict[Tuple[str, int], Optional[float]]] = None,
    head_to_head: Optional[List[Dict[str, Any]]] = None,
) -> Dict[str, Any]:
    """winner_us: the winners' latencies (the head-to-head medians) where known, else their latest
    round's median. head_to_head: per batch size the final interleaved comparison (its medians, spread
    and rounds); per_batch's figures are then that comparison's (default median / chosen median)."""
    ops = ctx["ops"]
    sizes = ctx["batch_sizes"]
    win = []
    for op in ops:
        for m in sizes:
            cfg = winners.get((op, m))
            if cfg is not None:
                us = (winner_us or {}).get((op, m))
                win.append(
                    {
                        "op": op,
                        "m": m,
                        "config": cfg.as_dict(),
                        "median_us": us if us is not None else latest_score(measured, op, m, cfg),
                        "default": cfg == defaults[(op, m)][0] if (op, m) in defaults else None,
                    }
                )
    dft = [
        {"op": op, "m": m, "config": defaults[(op, m)][0].as_dict(), "median_us": defaults[(op, m)][1]}
        for op in ops
        for m in sizes
        if (op, m) in defaults
    ]
    roof = [{"op": op, "m": m, "us": roofline.get((op, m))} for op in ops for m in sizes]
    per_batch = []
    for m in sizes:

        def total(vals):
            return None if any(v is None for v in vals) or not vals else sum(vals)

        best = total([w["median_us"] for w in win if w["m"] == m])
        dflt = total([defaults[(op, m)][1] if (op, m) in defaults else None for op in ops])
        rl = total([roofline.get((op, m)) for op in ops])
        row = {
            "m": m,
            "best_us": best,
            "default_us": dflt,
            "speedup": (dflt / best) if best and dflt else None,
            "roofline_us": rl,
            "roofline_fraction": (rl / best) if best and rl else None,
        }
        h = next((r for r in head_to_head or [] if r["m"] == m), None)
        if h is not None:
            row.update(
                best_us=h["median_us"],
                default_us=h["default_median_us"],
                speedup=h["speedup"],
                chosen_default=h["chosen_default"],
                decision=h["decision"],
                rounds=h["rounds"],
                roofline_fraction=(rl / h["median_us"]) if rl and h["median_us"] else None,
            )
        per_batch.append(row)
    out = {"format": "moetune-result", "version": 1}
    out.update(ctx)
    out.update(
        {
            "measurements": [
                measurement_json(r) for r in records if r["round"] >= -1 and not r["op"].startswith("check:")
            ],
            "winners": win,
            "default": dft,
            "roofline": roof,
            "per_batch": per_batch,
            "timings": timings,
            "files": files,
            "head_to_head": list(head_to_head or []),
        }
    )
    return out


def write_result(run_dir: str, result: Dict[str, Any]) -> Tuple[str, str]:
    path = os.path.join(run_dir, "result.json")
    data = (json.dumps(result, indent=1, allow_nan=False) + "\n").encode()
    write_atomic(path, data)
    return path, hashlib.sha256(data).hexdigest()
