# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""The stdout side of the protocol (PROTOCOL.md): one JSON object per line, hello first, done last."""

from __future__ import annotations

import json
import os
import sys
import time

from .backends import SYNTHETIC, packaged_gpu_backends

__all__ = [
    "AGENT_VERSION",
    "EXIT_FAILED",
    "EXIT_OK",
    "EXIT_RUN_FAILED",
    "EXIT_USAGE",
    "Emitter",
    "RunError",
    "capabilities",
    "dumps",
    "now",
    "result_lines",
]

PROTOCOL_VERSION = 1


def _agent_version() -> str:
    """One source: CMake's project(... VERSION x.y.z). build_pyz.py writes it into the archive as
    moetune_agent/_version.py; a checkout reads the root CMakeLists.txt."""
    try:
        from ._version import VERSION  # type: ignore[import]  # generated into the .pyz only

        return VERSION
    except ImportError:
        pass
    import re

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    try:
        with open(os.path.join(root, "CMakeLists.txt"), encoding="utf-8") as f:
            m = re.search(r"project\(\s*moetune\s+VERSION\s+([0-9][0-9.]*)", f.read())
        if m:
            return m.group(1)
    except OSError:
        pass
    return "0.0.0"


AGENT_VERSION = _agent_version()

# Exit statuses (PROTOCOL.md section 1).
EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_RUN_FAILED = 3


class RunError(Exception):
    """A failure the agent reports with a protocol error code (PROTOCOL.md section 5)."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message


def dumps(obj: dict) -> str:
    """One protocol line: compact, ASCII-safe, never containing a raw newline."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=True, allow_nan=False, sort_keys=False)


# A `result` line stays well under the app's 16 MiB line limit: a larger result.json (an exhaustive up+down
# sweep of 40 batch sizes is ~40 MB) is sent as `result_part` lines of at most RESULT_PART_CHARS characters
# of its compact JSON text each (escaped as a JSON string: at most twice that), then a `result` line with
# "result": null, "parts", "chars" and "sha256" of the text (PROTOCOL.md, "result").
RESULT_INLINE_BYTES = 8 << 20
RESULT_PART_CHARS = 4 << 20


def result_lines(run_id: str, path: str, res: dict):
    """The protocol lines of the `result` command for result object `res` (a generator: one part in memory
    beside the text)."""
    import hashlib

    simulated = bool(res.get("simulated"))
    line = dumps({"type": "result", "run_id": run_id, "path": path, "result": res, "simulated": simulated})
    if len(line) <= RESULT_INLINE_BYTES:
        yield line
        return
    del line
    text = dumps(res)
    count = (len(text) + RESULT_PART_CHARS - 1) // RESULT_PART_CHARS
    for i in range(count):
        yield dumps(
            {
                "type": "result_part",
                "run_id": run_id,
                "index": i,
                "count": count,
                "data": text[i * RESULT_PART_CHARS : (i + 1) * RESULT_PART_CHARS],
            }
        )
    yield dumps(
        {
            "type": "result",
            "run_id": run_id,
            "path": path,
            "result": None,
            "parts": count,
            "chars": len(text),
            "sha256": hashlib.sha256(text.encode("ascii")).hexdigest(),
            "simulated": simulated,
        }
    )


def capabilities():
    caps = [
        "probe",
        "tune",
        "resume",
        "attach",
        "cancel",
        "runs",
        "result",
        "result_parts",
        "install-config",
        "import-run",
        "headroom",
        "backend:" + SYNTHETIC,
    ]
    try:
        for name in packaged_gpu_backends():
            caps.append("backend:" + name)
    except Exception:  # a broken optional backend must not break hello
        pass
    if _kernels_packaged():
        caps.append("kernels")
    try:
        from .strategies import STRATEGIES

        caps.extend("strategy:" + s for s in sorted(STRATEGIES))
    except Exception as e:  # reported, never fatal: probe and install-config still work
        sys.stderr.write("moetune-agent: strategies unavailable: %s\n" % e)
    return caps


def _kernels_packaged():
    return module_available("moetune_agent.kernels")


def module_available(name: str) -> bool:
    """Whether `name` can be imported, without importing it (the parent package is imported)."""
    import importlib.util

    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


class Emitter(object):
    """Writes protocol lines to a stream (stdout by default), flushing each one."""

    def __init__(self, stream=None):
        self.stream = stream if stream is not None else sys.stdout
        self.done_sent = False

    def emit(self, obj: dict) -> None:
        self.stream.write(dumps(obj) + "\n")
        self.stream.flush()

    def emit_line(self, line: str) -> None:
        """An already-serialised event (attach copies events.jsonl lines verbatim)."""
        self.stream.write(line.rstrip("\n") + "\n")
        self.stream.flush()

    def hello(self):
        self.emit(
            {
                "type": "hello",
                "protocol": PROTOCOL_VERSION,
                "agent_version": AGENT_VERSION,
                "capabilities": capabilities(),
                "python": "%d.%d.%d" % sys.version_info[:3],
                "pid": os.getpid(),
            }
        )

    def error(self, code, message, **extra):
        ev = {"type": "error", "code": code, "message": message}
        ev.update(extra)
        self.emit(ev)
        sys.stderr.write("moetune-agent: error: %s\n" % message)

    def log(self, level, message):
        self.emit({"type": "log", "level": level, "message": message})

    def done(self, status, **extra):
        ev = {"type": "done", "status": status}
        ev.update(extra)
        self.emit(ev)
        self.done_sent = True


def now():
    return time.time()
