# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Regenerates moetune_agent/strategies/screen.py's CATALOGUE: the configs that won (or came within 1% of the
winner) in every H200 landscape recorded in this repository, with the tokens per expert at which they won.

Sources (all moetune's own measurements, remote_agent/bench/recordings and tests/data):
  * tests/data/h200_qwen3_exhaustive.json.gz, h200_fp8block_exhaustive.json.gz: exhaustive, 5 sizes;
    the 3 fastest configs per size (recorded medians);
  * bench/recordings/h200-strategies/qwen3_h200.json, fp8block_h200.json: the fast strategy's 18-size winners (the
    exhaustive winner where one was measured and the fast one regretted more than 1%);
  * bench/recordings/h200-server-kernel/server_up_result.json: a fast tune of SGLang's own kernel (sglang_head),
    18 sizes.

    python3 remote_agent/bench/headroom_catalogue.py [--exclude qwen3|fp8block]   # prints the Python literal
"""

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from replay import RECORDINGS, ReplayBackend, load_recording  # noqa: E402

STRATEGIES = os.path.join(HERE, "recordings", "h200-strategies")
SERVER_KERNEL = os.path.join(HERE, "recordings", "h200-server-kernel")


def _t(m, shape):
    return round(float(m) * shape["topk"] / shape["E"], 4)


def _wbytes(dtype):
    return 1 if dtype in ("fp8_w8a8", "int8_w8a8", "int8_w8a16", "int4_w4a16") else 2


def entries(exclude=None):
    """[(config key, tokens per expert, weight bytes, source)], deduplicated per (key, t, bytes)."""
    out = []
    for name, path in sorted(RECORDINGS.items()):
        if name == exclude:
            continue
        rec = load_recording(path)
        be = ReplayBackend(rec)
        for m in sorted(int(x) for x in rec["samples"]):
            ranked = sorted(rec["samples"][str(m)], key=lambda k: be.truth(m, _cfg(k)))
            for k in ranked[:3]:
                out.append((k, _t(m, rec["shape"]), _wbytes(rec["shape"]["dtype"]), "exhaustive:" + name))
    for name, fname in (("qwen3", "qwen3_h200.json"), ("fp8block", "fp8block_h200.json")):
        if name == exclude:
            continue
        with open(os.path.join(STRATEGIES, fname), encoding="utf-8") as f:
            d = json.load(f)
        shape = d["shape_fields"] if "shape_fields" in d else d["shape"]
        for row in d["table"]:
            k = row["fast_cfg"]
            if row.get("exh_cfg") and (row.get("regret") or 1.0) > 1.01:
                k = row["exh_cfg"]
            out.append((k, _t(row["m"], shape), _wbytes(shape.get("dtype")), "fast:" + name))
    if exclude != "qwen3":
        with open(os.path.join(SERVER_KERNEL, "server_up_result.json"), encoding="utf-8") as f:
            d = json.load(f)
        for w in d["winners"]:
            from moetune_agent.kernel_types import KernelConfig
            out.append((KernelConfig.from_dict(w["config"]).key(), _t(w["m"], d["shape"]),
                        _wbytes(d["shape"].get("dtype")), "server:qwen3"))
    seen = set()
    uniq = []
    for e in out:
        if e[:3] not in seen:
            seen.add(e[:3])
            uniq.append(e)
    return uniq


def _cfg(k):
    from moetune_agent.kernel_types import KernelConfig
    return KernelConfig.from_key(k)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--exclude", default=None)
    a = ap.parse_args()
    es = entries(a.exclude)
    print("CATALOGUE = (")
    for k, t, wb, src in es:
        print("    (%r, %r, %d, %r)," % (k, t, wb, src))
    print(")")
    sys.stderr.write("%d entries\n" % len(es))


if __name__ == "__main__":
    main()
