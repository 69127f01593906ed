# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Issue 22: one line per row of user_path_bench.py's JSON files (what tools/prewarm_device.sh writes, also
inside a .tar.gz of them), with where its seconds went, so a device call's figures are read the same way
every time:

    python3 remote_agent/tools/rows_table.py FILE_OR_TAR... [--results RESULTS.tar.gz]

Columns: wall, start-up (backend_start), strategy and the compile waits inside it (first phase / all),
head-to-head, units, kernels compiled by the pool, head-to-head units run as fillers while the pool
compiled (the early head-to-head), screening units sized by their call / their launches, the geometric
mean of the per-size speedups over the server's default, and, with the runs' result.json files (a tar of
them, matched by path), the head-to-head rounds over all keys and the most at one key."""

from __future__ import annotations

import argparse
import io
import json
import math
import sys
import tarfile
from typing import Dict, Iterator, List, Optional, Tuple


def _jsons(path: str) -> Iterator[Tuple[str, dict]]:
    if path.endswith((".tar.gz", ".tgz", ".tar")):
        with tarfile.open(path) as tar:
            for m in tar.getmembers():
                if m.isfile() and m.name.endswith(".json"):
                    f = tar.extractfile(m)
                    if f is not None:
                        yield m.name, json.load(io.TextIOWrapper(f, encoding="utf-8"))
    else:
        with open(path, encoding="utf-8") as f:
            yield path, json.load(f)


def _results(path: Optional[str]) -> Dict[str, dict]:
    """result.json files by their path on the device (a tar made with absolute paths drops the '/')."""
    out: Dict[str, dict] = {}
    if path:
        for name, doc in _jsons(path):
            out["/" + name.lstrip("/")] = doc
    return out


def geomean(values: List[float]) -> Optional[float]:
    vals = [v for v in values if v and v > 0]
    return math.exp(sum(math.log(v) for v in vals) / len(vals)) if vals else None


def row_line(label: str, row: dict, results: Dict[str, dict]) -> str:
    st = row.get("stages_s") or {}
    t = row.get("timings") or {}
    pc = t.get("precompile") or {}
    kg = t.get("kept_graphs") or {}
    waits = pc.get("waits") or []
    first_wait = waits[0][1] if waits else None
    sp = geomean(list((row.get("speedups") or {}).values()))
    rounds = "-"
    res = results.get(row.get("result_path") or "")
    if res:
        per = [int(p.get("rounds") or 0) for p in res.get("per_batch") or []]
        if per:
            rounds = "%d/%d" % (sum(per), max(per))

    def f(v, fmt="%.1f"):
        return "-" if v is None else fmt % v
    return "%-22s %-10s %6s %5s %6s %5s/%-5s %5s %6s %5s %4s %9s %8s %6s%s" % (
        label[:22], row.get("row", "?"), f(row.get("wall_s")), f(st.get("backend_start")), f(st.get("strategy")),
        f(first_wait), f(pc.get("wait_s")), f(st.get("head-to-head")), row.get("units", "-"),
        pc.get("submitted", "-"), pc.get("fillers", "-"),
        "%s/%s" % (kg.get("sized_units", "-"), kg.get("sized_launches", "-")), f(sp, "%.4f"), rounds,
        "  CAPPED" if row.get("capped") else ("" if row.get("status") == "ok" else "  " + str(row.get("status"))))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("files", nargs="+", help="row JSON files or tars of them")
    ap.add_argument("--results", help="a tar of the rows' result.json files")
    a = ap.parse_args(argv)
    results = _results(a.results)
    print("%-22s %-10s %6s %5s %6s %11s %5s %6s %5s %4s %9s %8s %6s" % (
        "file", "row", "wall", "start", "strat", "wait 1st/all", "h2h", "units", "kern", "fill", "sized u/l",
        "geomean", "rounds"))
    n = 0
    for path in a.files:
        for name, doc in _jsons(path):
            for row in doc.get("rows") or []:
                label = name.rsplit("/", 1)[-1].replace(".json", "")
                print(row_line(label, row, results))
                n += 1
    if not n:
        print("no rows found", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
