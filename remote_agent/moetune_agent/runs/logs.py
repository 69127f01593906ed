# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""A run's logs (PROTOCOL.md section 4): events.jsonl (every run event, seq = line index) and
journal.jsonl (one fsync'd line per finished unit, replayed on resume), both streamed with bounded
lines; and the SIMULATED marker: what a run wrote that says it is simulated."""

from __future__ import annotations

import itertools
import json
import os
import stat
import time
from typing import Any, Dict, Iterator, List, Optional, Tuple

from ..backends import SYNTHETIC
from ..kernel_types import KernelConfig
from ..protocol import dumps
from ..safefile import MAX_LINE_BYTES, MAX_RESULT_BYTES, O_CLOEXEC, open_append, read_text, write_atomic
from ..work import Measurement, Unit

__all__ = [
    "EventLog",
    "EventTail",
    "Journal",
    "count_lines",
    "journal_count",
    "journal_entries",
    "measurement_from_record",
    "measurement_record",
    "parse_event",
    "read_events",
    "run_simulated",
]

SIMULATED_MARK = "SIMULATED"


class LineReader(object):
    """The complete lines of a jsonl file, streamed (memory: one line, at most MAX_LINE_BYTES). Yields
    str per line, or None for a line longer than the limit (damaged: skipped by every reader). After the
    iteration, `end` is the byte length the complete lines cover (a torn last line is left out)."""

    def __init__(self, path: str, max_line: int = MAX_LINE_BYTES):
        self.path = path
        self.max_line = max_line
        self.end = 0

    def __iter__(self):
        try:
            f = open(self.path, "rb")
        except FileNotFoundError:
            return
        with f:
            buf = b""
            pos = 0
            overlong = False
            while True:
                chunk = f.read(1 << 20)
                if not chunk:
                    break
                start = 0
                while True:
                    nl = chunk.find(b"\n", start)
                    if nl < 0:
                        if not overlong:
                            buf += chunk[start:]
                            if len(buf) > self.max_line:
                                overlong, buf = True, b""
                        pos += len(chunk) - start
                        break
                    piece = chunk[start:nl]
                    pos += nl + 1 - start
                    start = nl + 1
                    self.end = pos
                    if overlong or len(buf) + len(piece) > self.max_line:
                        overlong, buf = False, b""
                        yield None
                        continue
                    line, buf = buf + piece, b""
                    yield line.decode("utf-8", "replace")


def parse_event(line: Optional[str]) -> Optional[Dict[str, Any]]:
    """A line of events.jsonl as an event (a JSON object with a string "type"), or None when it is
    damaged (torn by a crash, overwritten, overlong): such a line is skipped and reported, never
    forwarded as a protocol line."""
    if line is None or len(line) > MAX_LINE_BYTES:
        return None
    try:
        ev = json.loads(line)
    except (ValueError, RecursionError):
        return None
    if not isinstance(ev, dict) or not isinstance(ev.get("type"), str):
        return None
    return ev


def truncate_torn_tail(path):
    """A process killed mid-write leaves a partial last line: cut it so appends stay line-aligned."""
    r = LineReader(path)
    for _ in r:
        pass
    end = r.end
    if os.path.exists(path) and os.path.getsize(path) != end:
        with open(path, "r+b") as f:
            f.truncate(end)
            f.flush()
            os.fsync(f.fileno())


class EventLog(object):
    """events.jsonl: every run event, seq = line index; also echoed to an optional Emitter."""

    def __init__(self, run_dir, run_id, simulated, echo=None):
        self.path = os.path.join(run_dir, "events.jsonl")
        truncate_torn_tail(self.path)
        self.seq = sum(1 for _ in LineReader(self.path))
        self.run_id = run_id
        self._simulated = False
        self.run_dir = run_dir
        self.simulated = simulated
        self.echo = echo
        self._f = open_append(self.path)

    @property
    def simulated(self) -> bool:
        return self._simulated

    @simulated.setter
    def simulated(self, value: bool) -> None:
        # Simulated is a property of the run: recorded in the run folder the moment it is known.
        self._simulated = bool(value)
        if value:
            mark_simulated(self.run_dir)

    def emit(self, ev: Dict[str, Any]) -> Dict[str, Any]:
        ev = dict(ev)
        ev["run_id"] = self.run_id
        ev["seq"] = self.seq
        ev["ts"] = round(time.time(), 3)
        if self.simulated:
            ev["simulated"] = True
        line = dumps(ev) + "\n"
        self._f.write(line.encode())
        self._f.flush()
        self.seq += 1
        if self.echo is not None:
            self.echo.emit_line(line)
        return ev

    def close(self):
        try:
            os.fsync(self._f.fileno())
        except OSError:
            pass
        self._f.close()


class EventTail(object):
    """Incremental reader of events.jsonl for attach: skips to line `start` once, then returns only
    complete new lines on each poll (no re-reading of a file that grows to megabytes)."""

    def __init__(self, run_dir, start=0):
        self.path = os.path.join(run_dir, "events.jsonl")
        self.offset = 0
        self.seq = 0
        self.start = max(0, start)
        self._buf = b""
        self._overlong = False

    def poll(self) -> List[Optional[str]]:
        """New complete lines (at most a few MiB per call); None stands for a damaged (overlong) line,
        which still takes its seq."""
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK | O_CLOEXEC)
        except FileNotFoundError:
            return []
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return []
            os.lseek(fd, self.offset, os.SEEK_SET)
            data = os.read(fd, 4 << 20)
        finally:
            os.close(fd)
        self.offset += len(data)
        out: List[Optional[str]] = []
        start = 0
        while True:
            nl = data.find(b"\n", start)
            if nl < 0:
                if not self._overlong:
                    self._buf += data[start:]
                    if len(self._buf) > MAX_LINE_BYTES:
                        self._overlong, self._buf = True, b""
                break
            piece, start = data[start:nl], nl + 1
            if self._overlong or len(self._buf) + len(piece) > MAX_LINE_BYTES:
                line: Optional[str] = None
            else:
                line = (self._buf + piece).decode("utf-8", "replace")
            self._overlong, self._buf = False, b""
            if self.seq >= self.start:
                out.append(line)
            self.seq += 1
        return out


def read_events(run_dir: str, start: int = 0) -> List[Optional[str]]:
    """Complete lines of events.jsonl from line start (None: an overlong, damaged line)."""
    return list(itertools.islice(LineReader(os.path.join(run_dir, "events.jsonl")), max(0, start), None))


def count_lines(path: str) -> int:
    return sum(1 for _ in LineReader(path))


# -- simulated runs -------------------------------------------------------------------------------


def mark_simulated(run_dir: str) -> None:
    path = os.path.join(run_dir, SIMULATED_MARK)
    if not os.path.isfile(path):
        write_atomic(
            path, b"every number of this run comes from the synthetic backend: simulated, " b"never measured on a GPU\n"
        )


def _first_json(path: str) -> Optional[Dict[str, Any]]:
    for line in LineReader(path):
        return parse_event(line) if line is not None else None
    return None


def run_simulated(run_dir: str) -> Optional[str]:
    """Why the run in run_dir is simulated (a sentence), or None when nothing it wrote says so.
    Every file the run writes carries the fact; any one of them is enough."""
    if os.path.lexists(os.path.join(run_dir, SIMULATED_MARK)):
        return "its folder holds the %s marker" % SIMULATED_MARK
    try:
        sp = json.loads(read_text(os.path.join(run_dir, "spec.json"), "") or "{}")
    except (ValueError, RecursionError):
        sp = {}
    if isinstance(sp, dict) and sp.get("backend") == SYNTHETIC:
        return "its spec.json asks for the synthetic backend"
    try:
        res = json.loads(read_text(os.path.join(run_dir, "result.json"), "", MAX_RESULT_BYTES) or "{}")
    except (ValueError, RecursionError):
        res = {}
    if isinstance(res, dict) and res.get("simulated"):
        return "its result.json says simulated"
    ev = _first_json(os.path.join(run_dir, "events.jsonl"))
    if ev and (ev.get("simulated") or ev.get("backend") == SYNTHETIC):
        return "its events.jsonl says simulated"
    j = _first_json(os.path.join(run_dir, "journal.jsonl"))
    if j and j.get("simulated"):
        return "its journal.jsonl says simulated"
    return None


# -- the journal ----------------------------------------------------------------------------------


def cfg_json(cfg: Optional[KernelConfig]) -> Optional[Dict[str, Any]]:
    return cfg.as_dict() if cfg is not None else None


def measurement_record(meas: Measurement, index: int) -> Dict[str, Any]:
    u = meas.unit
    rec = {
        "type": "measurement" if meas.ok else "candidate_error",
        "unit": u.ident(),
        "op": u.op,
        "m": u.m,
        "config": u.cfg.as_dict(),
        "config_down": cfg_json(u.cfg_down),
        "round": u.round,
        "replays": u.replays,
        "gpu": meas.gpu,
        "index": index,
    }
    if u.pair is not None:
        rec["pair"] = u.pair.as_dict()
        if meas.pair_samples_us is not None:
            rec["pair_samples_us"] = list(meas.pair_samples_us)
            rec["pair_median_us"] = meas.pair_median_us
        if meas.pair_error:
            rec["pair_error"] = meas.pair_error
    if meas.ok:
        s = list(meas.samples_us or [])
        med = meas.median_us
        rec.update(
            {
                "median_us": med,
                "min_us": min(s),
                "max_us": max(s),
                "spread": (max(s) - min(s)) / med if med > 0 and len(s) > 1 else 0.0,
                "samples_us": s,
            }
        )
    else:
        rec.update({"kind": meas.error_kind or "other", "message": meas.error or ""})
    if meas.simulated:
        rec["simulated"] = True
    return rec


def measurement_from_record(rec: Dict[str, Any], simulated: bool = False) -> Measurement:
    cd = rec.get("config_down")
    pr = rec.get("pair")
    unit = Unit(
        rec["op"],
        KernelConfig.from_dict(rec["config"]),
        int(rec["m"]),
        int(rec["replays"]),
        int(rec["round"]),
        KernelConfig.from_dict(cd) if cd else None,
        KernelConfig.from_dict(pr) if pr else None,
    )
    if rec.get("type") == "measurement":
        ps = rec.get("pair_samples_us")
        return Measurement(
            unit,
            [float(x) for x in rec["samples_us"]],
            gpu=int(rec.get("gpu", 0)),
            simulated=simulated,
            pair_samples_us=[float(x) for x in ps] if ps is not None else None,
            pair_error=rec.get("pair_error"),
        )
    ps = rec.get("pair_samples_us")
    return Measurement(
        unit,
        None,
        rec.get("kind") or "other",
        rec.get("message"),
        int(rec.get("gpu", 0)),
        simulated,
        pair_samples_us=[float(x) for x in ps] if ps is not None else None,
        pair_error=rec.get("pair_error"),
    )


class Journal(object):
    """journal.jsonl: one fsync'd line per finished unit, append-only; replayed on resume."""

    def __init__(self, run_dir, simulated=False):
        self.path = os.path.join(run_dir, "journal.jsonl")
        self.simulated = simulated
        if simulated:
            mark_simulated(run_dir)
        truncate_torn_tail(self.path)
        self.measurements: List[Measurement] = []
        self.records: List[Dict[str, Any]] = []
        self.damaged = 0
        for rec, meas in journal_entries(self.path, simulated):
            if rec is None:
                self.damaged += 1  # an unreadable line is re-measured, never fatal
                continue
            self.records.append(rec)
            self.measurements.append(meas)
        self.idents = set(m.unit.ident() for m in self.measurements)
        self._f = open_append(self.path)

    def __len__(self):
        return len(self.measurements)

    def append(self, meas: Measurement) -> Dict[str, Any]:
        rec = measurement_record(meas, len(self.measurements))
        self._f.write((dumps(rec) + "\n").encode())
        self._f.flush()
        os.fsync(self._f.fileno())
        self.measurements.append(meas)
        self.records.append(rec)
        self.idents.add(meas.unit.ident())
        return rec

    def close(self):
        self._f.close()


def journal_entries(
    path: str, simulated: bool = False
) -> Iterator[Tuple[Optional[Dict[str, Any]], Optional[Measurement]]]:
    """(record, measurement) per line of a journal; (None, None) for a damaged line (not JSON, not a
    measurement record, overlong)."""
    for line in LineReader(path):
        try:
            rec = json.loads(line) if line is not None else None
            if not isinstance(rec, dict) or rec.get("type") not in ("measurement", "candidate_error"):
                raise ValueError("not a journal record")
            yield rec, measurement_from_record(rec, simulated)
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
            yield None, None


_RECORD_PREFIXES = ('{"type":"measurement",', '{"type":"candidate_error",')


def journal_count(run_dir) -> Tuple[int, int]:
    """(measurements, damaged lines) of a run's journal: a damaged line is never counted as measured.
    By the form Journal.append writes (a compact object whose first key is the record type), not a full
    parse: `runs` lists every run, and parsing each journal cost 0.1 s per 1000 lines; a resumed run
    parses every line and re-measures what does not read back."""
    ok = bad = 0
    for line in LineReader(os.path.join(run_dir, "journal.jsonl")):
        if line is not None and line.startswith(_RECORD_PREFIXES) and line.endswith("}"):
            ok += 1
        else:
            bad += 1
    return ok, bad
