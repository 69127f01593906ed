# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Summaries of the profiles MOETUNE_PROFILE_DIR made (moetune_agent/profiling.py): per process, its
milestones and the functions with the most cumulative and own time.

    python3 remote_agent/tools/prof_summary.py FOLDER [--top 30]
"""

from __future__ import annotations

import argparse
import glob
import io
import json
import os
import pstats
import sys


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("folder")
    ap.add_argument("--top", type=int, default=30)
    a = ap.parse_args(argv)
    profs = sorted(glob.glob(os.path.join(a.folder, "*.prof")))
    if not profs:
        print("no profiles in %s" % a.folder)
        return 1
    for p in profs:
        base = p[: -len(".prof")]
        print("=" * 100)
        print(os.path.basename(p))
        try:
            with open(base + ".marks.json", encoding="utf-8") as f:
                marks = json.load(f)
            t0 = marks[0]["ts"]
            print("  milestones: " + ", ".join("%s %+.2f s" % (m["what"], m["ts"] - t0) for m in marks))
        except (OSError, ValueError, IndexError, KeyError):
            pass
        try:
            st = pstats.Stats(p, stream=io.StringIO())
        except (EOFError, ValueError, TypeError, OSError) as e:
            # a process killed while it wrote its profile (before profiling.stop wrote atomically):
            # say so and go on with the others (it used to end the whole summary here)
            print("  unreadable profile (%s: %s): skipped" % (type(e).__name__, e))
            continue
        st.strip_dirs()
        for key in ("cumulative", "tottime"):
            s = io.StringIO()
            st.stream = s
            st.sort_stats(key).print_stats(a.top)
            text = s.getvalue()
            start = text.find("   ncalls")
            print("  -- by %s" % key)
            print(text[start:] if start >= 0 else text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
