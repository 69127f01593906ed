# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Issue 22, the int4 row: space rule 4 (space.dequant_regs_ok: no int4_w4a16 weight tile of more than 64
dequantised elements a thread), on the CPU: what it cuts from a tune's compile work, and what the cut
configs ran at on the recorded GPU tunes.

    python3 remote_agent/bench/dequant_replay.py [--json OUT.json]

1. Recorded tunes. Every int4_w4a16 result.json in the committed recordings' tarballs (the H100 tunes of
   stop 37, M = 1, 64, 1024): per size, the fastest config the rule cuts against the fastest it keeps,
   over every unit the tune timed (screen, sweeps, re-timings). Measurements, not a model.
2. Compile work. The fast strategy driven on the SYNTHETIC backend (a simulated landscape: counts only)
   for int4_w4a16 at the int4 row's 3 sizes, rule off and on: the distinct kernels the pool compiles in
   the first phase and in the whole tune, and their compile seconds ESTIMATED two ways: the log-log
   model of bench/wide_tiles_replay.py, and the mean measured compile time of the sampled kernels on each
   side of the rule (recordings/h200-bytecode-warm/call6_int4_compile.json: 120 kernels on one H200 host).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import sys
import tarfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

import wide_tiles_replay as wtr  # noqa: E402
from moetune_agent import space as space_mod  # noqa: E402
from moetune_agent.kernel_types import KernelConfig  # noqa: E402

SIZES = (1, 64, 1024)


def recorded_tunes() -> list:
    """(tarball member name, result) of every int4_w4a16 result.json in the recordings' tarballs."""
    out, seen = [], set()
    for tb in sorted(glob.glob(os.path.join(HERE, "recordings", "*", "*.tar.gz"))):
        try:
            with tarfile.open(tb) as tf:
                for mem in tf.getmembers():
                    if not mem.name.endswith("result.json"):
                        continue
                    fh = tf.extractfile(mem)
                    if fh is None:
                        continue
                    try:
                        res = json.load(fh)
                    except ValueError:
                        continue
                    if (res.get("shape") or {}).get("dtype") != "int4_w4a16" or res.get("run_id") in seen:
                        continue
                    seen.add(res.get("run_id"))
                    out.append(("%s:%s" % (os.path.relpath(tb, HERE), mem.name), res))
        except (OSError, tarfile.TarError):
            continue
    return out


def cut_against_kept(res: dict) -> list:
    rows = []
    for m in res["batch_sizes"]:
        best = {True: None, False: None}
        for x in res["measurements"]:
            if x.get("m") != m or not x.get("median_us"):
                continue
            c = KernelConfig(**{k: x["config"][k] for k in space_mod.SPACE_KEYS})
            ok = space_mod.dequant_regs_ok(c, "int4_w4a16")
            if best[ok] is None or x["median_us"] < best[ok][0]:
                best[ok] = (x["median_us"], c)
        if best[True] and best[False]:
            rows.append({"m": m, "kept_us": best[True][0], "kept": best[True][1].key(), "cut_us": best[False][0],
                         "cut": best[False][1].key(), "ratio": best[False][0] / best[True][0]})
    return rows


def sampled_means() -> dict:
    with open(wtr.COMPILE_TIMES % "int4", encoding="utf-8") as f:
        rows = [r for r in json.load(f)["rows"] if r.get("error") is None and r.get("s")]
    side: dict = {True: [], False: []}
    for r in rows:
        bm, bn, bk, w, st = r["kernel"]
        side[space_mod.dequant_regs_ok(KernelConfig(bm, bn, bk, 1, w, st), "int4_w4a16")].append(r["s"])
    return {"kept": {"n": len(side[True]), "mean_s": sum(side[True]) / len(side[True]), "sum_s": sum(side[True])},
            "cut": {"n": len(side[False]), "mean_s": sum(side[False]) / len(side[False]), "sum_s": sum(side[False])}}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", help="write every figure here")
    a = ap.parse_args()
    out: dict = {"recorded": [], "compile": {}}
    print("RECORDED int4_w4a16 tunes: fastest config rule 4 cuts / fastest it keeps (measured)")
    tunes = recorded_tunes()
    if not tunes:
        print("no int4_w4a16 result.json in the recordings")
        return 1
    for name, res in tunes:
        rows = cut_against_kept(res)
        out["recorded"].append({"file": name, "device": res.get("device_name"), "rows": rows})
        print("%s (%s)" % (name, res.get("device_name")))
        for r in rows:
            print("  M=%-5d kept %9.1f us %-24s cut %9.1f us %-24s ratio %.2f" % (
                r["m"], r["kept_us"], r["kept"], r["cut_us"], r["cut"], r["ratio"]))
    means = sampled_means()
    out["sampled_compile"] = means
    print()
    print("SAMPLED int4 compile times (one H200 host, 120 kernels): kept %d at %.2f s mean, cut %d at %.2f s mean "
          "(%.0f%% of the seconds)" % (means["kept"]["n"], means["kept"]["mean_s"], means["cut"]["n"],
                                       means["cut"]["mean_s"],
                                       100.0 * means["cut"]["sum_s"] / (means["cut"]["sum_s"] + means["kept"]["sum_s"])))
    print()
    print("COMPILE WORK, int4_w4a16 at %s (synthetic landscape; seconds ESTIMATED: a model)" % (list(SIZES),))
    print("%-5s %6s %8s %11s %9s %6s %8s %10s" % ("rule", "first", "first", "first est s", "first max", "units",
                                                  "kernels", "all est s"))
    model = wtr.fit("int4")
    for name, val in (("off", False), ("on", True)):
        r = wtr.compile_work(wtr.INT4, SIZES, None, model, space_options={"prune_dequant": val})
        out["compile"][name] = r
        print("%-5s %6d %8d %11.1f %9.2f %6d %8d %10.1f" % (
            name, r["first_units"], r["first_kernels"], r["first_s"], r["first_max_s"], r["units"], r["kernels"],
            r["all_s"]))
    if a.json:
        with open(a.json, "w", encoding="utf-8") as fh:
            json.dump(out, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
