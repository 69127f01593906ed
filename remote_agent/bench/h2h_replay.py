# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""The head-to-head's rules replayed on recorded GPU runs (issue 22): how many units each rule asks for
and whether it picks the same config at every batch size.

    python3 remote_agent/bench/h2h_replay.py [--json OUT.json]

The recorded runs are the full tunes of `bench/headroom_bench.py` whose journals and results are kept in
recordings/h200-bytecode-warm/call2_headroom_files.tar.gz and recordings/h200-early-facts/call1_headroom_files
.tar.gz (H200; SGLang main's kernel through the server backend, moetune's own kernel bf16 and fp8 block).
Each run's head-to-head is driven again through strategies.headtohead.HeadToHead phase by phase, every
unit it asks for answered with the measurement the run recorded for it (same config, size, round and
pairing), once with the rule before stop 34 (even_spread 0) and once with the default rules. A unit the
run never timed (a rule that wants more rounds than the run made) ends that replay with a note. Units are
counted exactly; "gpu_s" is the timed GPU work of those units, a MODEL: (warm-up + timed replays) x 10 calls x
the two sides' medians (triton_backend's warmup_replays and GRAPH_CALLS), as the backend times them.
"""

import argparse
import gzip
import io
import json
import os
import sys
import tarfile
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
AGENT_ROOT = os.path.dirname(HERE)
sys.path.insert(0, AGENT_ROOT)

from moetune_agent.backends.triton_backend import GRAPH_CALLS, warmup_replays  # noqa: E402  # pylint: disable=wrong-import-position
from moetune_agent.kernel_types import KernelConfig  # noqa: E402  # pylint: disable=wrong-import-position
from moetune_agent.runs.logs import journal_entries  # noqa: E402  # pylint: disable=wrong-import-position
from moetune_agent.strategies.headtohead import H2H_ROUND, HeadToHead  # noqa: E402  # pylint: disable=wrong-import-position

RECORDED = (("h200-bytecode-warm", "call2_headroom_files.tar.gz"), ("h200-early-facts", "call1_headroom_files.tar.gz"))
TAGS = ("qwen3_server", "qwen3_triton", "fp8block_triton")


def _unit_key(u):
    return (u.op, u.cfg.key(), u.m, u.round, u.pair.key() if u.pair else None)


def load_run(tar_path, tag):
    """(head-to-head measurements, the result's head_to_head rows) of one recorded run, or None."""
    with tarfile.open(tar_path) as tf:
        names = tf.getnames()
        jn, rn = "hr/%s_journal.jsonl.gz" % tag, "hr/%s_result.json" % tag
        if jn not in names or rn not in names:
            return None
        journal = gzip.decompress(tf.extractfile(jn).read())
        result = json.load(io.TextIOWrapper(tf.extractfile(rn), encoding="utf-8"))
    with tempfile.NamedTemporaryFile(suffix=".jsonl") as f:
        f.write(journal)
        f.flush()
        meas = [m for rec, m in journal_entries(f.name) if m is not None and m.unit.round >= H2H_ROUND]
    return meas, result["head_to_head"]


def contenders_of(rows):
    """(ops, sizes, defaults, tuned contenders) as the run's head-to-head had them."""
    ops = tuple(rows[0]["ops"])
    defaults, tuned = {}, {}
    for r in rows:
        for side in r["contenders"]:
            for op, d in side["configs"].items():
                cfg = KernelConfig(**d)
                if side["default"]:
                    defaults[(op, r["m"])] = cfg
                elif cfg not in tuned.setdefault((op, r["m"]), []):
                    tuned[(op, r["m"])].append(cfg)
    return ops, [r["m"] for r in rows], defaults, tuned


def gpu_s(meas):
    total = 0.0
    for m in meas:
        warm = warmup_replays(m.unit.replays)
        sides = (m.median_us if m.ok else 0.0) + (m.pair_median_us or 0.0)
        total += (warm + m.unit.replays) * GRAPH_CALLS * sides * 1e-6
    return total


def replay(meas, rows, even_spread=None):
    """-> {"units", "gpu_s", "complete", "per_m": {m: (rounds, decision, chosen key)}}."""
    ops, sizes, defaults, tuned = contenders_of(rows)
    kw = {} if even_spread is None else {"even_spread": even_spread}
    h = HeadToHead(ops, sizes, defaults, tuned, paired=True, **kw)
    by_key = {}
    for m in meas:
        by_key.setdefault(_unit_key(m.unit), m)
    got, complete = [], True
    while True:
        units = h.next_units(got)
        if not units:
            break
        found = [by_key[_unit_key(u)] for u in units if _unit_key(u) in by_key]
        if len(found) < len(units):
            complete = False
            break
        got.extend(found)
    per_m = {}
    for m, d in h.decisions(got).items():
        ch = d.get("chosen")
        per_m[m] = (d["rounds"], d["decision"], ch["contender"].key() if ch else None)
    return {"units": len(got), "gpu_s": round(gpu_s(got), 2), "complete": complete, "per_m": per_m}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    out = []
    for folder, tar_name in RECORDED:
        path = os.path.join(HERE, "recordings", folder, tar_name)
        for tag in TAGS:
            run = load_run(path, tag)
            if run is None:
                continue
            meas, rows = run
            before, now = replay(meas, rows, even_spread=0.0), replay(meas, rows)
            same = sum(1 for m in before["per_m"] if before["per_m"][m][2] == now["per_m"][m][2])
            print("%s/%s %s: units %d -> %d (%.0f%% fewer), modelled GPU work %.1f -> %.1f s; the same config "
                  "chosen at %d of %d sizes%s" % (folder, tar_name, tag, before["units"], now["units"],
                                                  100.0 * (1 - now["units"] / max(1, before["units"])),
                                                  before["gpu_s"], now["gpu_s"], same, len(before["per_m"]),
                                                  "" if before["complete"] and now["complete"] else
                                                  " (INCOMPLETE: a rule asked for a unit the run never timed)"))
            for m in sorted(before["per_m"]):
                b, n = before["per_m"][m], now["per_m"][m]
                if b[0] != n[0] or b[2] != n[2]:
                    print("    m=%5d rounds %d -> %d, %s -> %s%s" % (m, b[0], n[0], b[1], n[1],
                                                                    "" if b[2] == n[2] else "  CHANGED CHOICE"))
            out.append({"run": "%s/%s" % (folder, tag), "before": before, "now": now, "same_choice": same})
    if a.json:
        with open(a.json, "w", encoding="utf-8") as f:
            json.dump(out, f, indent=1, default=list)
    return 0 if out else 1


if __name__ == "__main__":
    sys.exit(main())
