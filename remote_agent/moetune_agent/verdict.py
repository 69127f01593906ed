# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""The headroom check's verdict: each size's gain in a class (none, small, large), neighbouring sizes of one class
joined into M ranges, and the verdict's kind and sentence built from them."""

from __future__ import annotations

import math
from typing import List, Optional, Sequence

__all__ = ["LARGE_FROM", "NONE_BELOW", "gain_class", "verdict"]


NONE_BELOW = 1.02  # gain classes for the verdict
LARGE_FROM = 1.10


# -- the verdict -------------------------------------------------------------------------------------------
def gain_class(gain: Optional[float]) -> str:
    if gain is None:
        return "unknown"
    if gain < NONE_BELOW:
        return "none"
    return "small" if gain < LARGE_FROM else "large"


def _range_text(lo: int, hi: int, first: int, last: int) -> str:
    if lo == hi:
        return "M = %d" % lo
    if hi == last and lo != first:
        return "M >= %d" % lo
    if lo == first and hi != last:
        return "M <= %d" % hi
    return "M %d-%d" % (lo, hi)


def _geomean(xs: Sequence[float]) -> float:
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def verdict(rows: Sequence[dict]) -> dict:
    """-> {"kind": "worth_tuning" | "some_gain" | "little_to_gain" | "unknown", "text", "ranges": [...]}."""
    rows = sorted((r for r in rows), key=lambda r: r["m"])
    if not rows:
        return {"kind": "unknown", "text": "nothing could be timed", "ranges": []}
    first, last = rows[0]["m"], rows[-1]["m"]
    ranges: List[dict] = []
    for r in rows:
        cls = gain_class(r.get("gain"))
        if ranges and ranges[-1]["class"] == cls:
            ranges[-1]["m_to"] = r["m"]
            ranges[-1]["sizes"].append(r["m"])
            if r.get("gain") is not None:
                ranges[-1]["gains"].append(r["gain"])
        else:
            ranges.append(
                {
                    "class": cls,
                    "m_from": r["m"],
                    "m_to": r["m"],
                    "sizes": [r["m"]],
                    "gains": [r["gain"]] if r.get("gain") is not None else [],
                }
            )
    for rg in ranges:
        gs = rg.pop("gains")
        rg["gain"] = round(_geomean(gs), 4) if gs else None
        rg["gain_min"] = round(min(gs), 4) if gs else None
        rg["gain_max"] = round(max(gs), 4) if gs else None
        rg["label"] = _range_text(rg["m_from"], rg["m_to"], first, last)
    classes = {rg["class"] for rg in ranges}
    parts = []
    for rg in ranges:
        if rg["class"] == "large" or rg["class"] == "small":
            parts.append("about %.2fx at %s" % (rg["gain"], rg["label"]))
        elif rg["class"] == "none":
            parts.append("nothing at %s" % rg["label"])
        else:
            parts.append("not measured at %s" % rg["label"])
    if "large" in classes:
        kind = "worth_tuning"
        text = "worth tuning: " + ", ".join(parts)
    elif "small" in classes:
        kind = "some_gain"
        text = "some gain: " + ", ".join(parts)
    elif classes == {"none"}:
        kind = "little_to_gain"
        worst = max(r["gain"] for r in rows)
        text = (
            "little to gain: the server's config is within %d%% of the best screened at every batch "
            "size (at most %.2fx)" % (round((NONE_BELOW - 1.0) * 100), worst)
        )
    else:
        kind = "unknown"
        text = "could not time the server's config at any batch size"
    return {"kind": kind, "text": text, "ranges": ranges}
