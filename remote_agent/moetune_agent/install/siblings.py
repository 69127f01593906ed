# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Where a config row sits among its neighbours: the batch sizes a row serves (served_range), the model part of a
device name, whether two devices are siblings, and the sibling devices' config files beside a target (PROTOCOL.md
merge)."""

from __future__ import annotations

import os
import re
from typing import Dict, List, Optional, Tuple

from ..serverconfig import naming

__all__ = ["device_model", "is_sibling_device", "served_range", "sibling_files"]


_SEP = re.compile(r"[_\- ]+")


def served_range(keys: List[int], m: int) -> Tuple[int, Optional[int]]:
    """The token counts M for which the server picks key m among keys (nearest, the smaller on a tie):
    (first, last), last None = every larger M."""
    ks = sorted(set(int(k) for k in keys) | {m})
    i = ks.index(m)
    lo = 1 if i == 0 else (ks[i - 1] + m) // 2 + 1
    hi = None if i == len(ks) - 1 else (m + ks[i + 1]) // 2
    return lo, hi


def device_model(device_name: str) -> Optional[Tuple[str, ...]]:
    """The tokens of a device name up to and including its first one holding a digit (the model:
    NVIDIA_H200_NVL -> ('nvidia', 'h200')), lower case; None when no token holds a digit."""
    out = []
    for tok in _SEP.split(device_name or ""):
        if not tok:
            continue
        out.append(tok.lower())
        if any(c in "0123456789" for c in tok):
            return tuple(out)
    return None


def is_sibling_device(a: str, b: str) -> bool:
    """Two different device names of one GPU model (H200 and H200_NVL, H20 and H20-3e, MI300X and
    MI300X_VF): a server on one never reads the other's files. H20 and H200 are different models."""
    if a == b:
        return False
    ma, mb = device_model(a), device_model(b)
    return ma is not None and ma == mb


def sibling_files(folder: str, name: str) -> List[Dict[str, str]]:
    """Files in folder of the same shape as config name `name` but a sibling device name."""
    me = naming.try_parse_name(name)
    if me is None:
        return []
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    out = []
    for n in names:
        other = naming.try_parse_name(n)
        if other is None or not n.endswith(".json"):
            continue
        same_shape = (other.E, other.N, other.dtype, other.block_shape, other.per_channel_quant, other.down) == (
            me.E,
            me.N,
            me.dtype,
            me.block_shape,
            me.per_channel_quant,
            me.down,
        )
        if same_shape and is_sibling_device(me.device_name, other.device_name):
            out.append({"file_name": n, "device_name": other.device_name})
    return out
