# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""Run folders (PROTOCOL.md section 4): ids, state, pid liveness, the journal and the event log,
and the one safe atomic write every file of the agent goes through."""

from __future__ import annotations

import datetime
import errno
import json
import os
import secrets
import stat
import time
from typing import Any, Dict, Iterator, List, Optional, Tuple

from .backends.base import KernelConfig
from .protocol import dumps
from .work import Measurement, Unit

STATES = ("starting", "running", "finished", "failed", "cancelled")
TERMINAL = ("finished", "failed", "cancelled")


class RunError(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message


def home_dir(override: Optional[str] = None) -> str:
    if override:
        return os.path.abspath(override)
    env = os.environ.get("MOETUNE_HOME")
    if env:
        return os.path.abspath(env)
    return os.path.join(os.path.expanduser("~"), ".cache", "moetune")


def runs_dir(home=None):
    return os.path.join(home_dir(home), "runs")


def new_run_id(spec_hash: str, home: Optional[str] = None) -> str:
    base = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%d-%H%M%S") + "-" + spec_hash[:6]
    rid, n = base, 1
    while os.path.exists(os.path.join(runs_dir(home), rid)):
        n += 1
        rid = "%s-%d" % (base, n)
    return rid


def resolve(run: str, home: Optional[str] = None) -> str:
    """A run id or a run folder path -> the run folder (absolute). Raises RunError(run_not_found)."""
    if run and ("/" in run or run in (".", "..")):
        path = os.path.abspath(run)
    else:
        if not run or run.startswith("."):
            raise RunError("run_not_found", "no run called %r" % (run,))
        path = os.path.join(runs_dir(home), run)
    if not os.path.isfile(os.path.join(path, "spec.json")):
        raise RunError("run_not_found", "no run at %s (no spec.json); `runs` lists the runs" % path)
    return path


def fsync_dir(path):
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


TMP_MARK = ".moetune-tmp-"
SIMULATED_MARK = "SIMULATED"
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def default_mode() -> int:
    """0666 minus the umask: what a plain open() would have created."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def temp_name(path: str) -> str:
    """An unpredictable temporary name beside path; the pid lets a later writer remove a dead one's leftovers."""
    d, base = os.path.split(path)
    return os.path.join(d, ".%s%s%d-%s" % (base, TMP_MARK, os.getpid(), secrets.token_hex(8)))


def write_temp(path: str, data: bytes, mode: int, pause_s: float = 0.0) -> str:
    """Write data to a fresh temporary file beside path and return its name. The file is created
    exclusively (O_EXCL | O_NOFOLLOW, 0600, so a planted link or file is never opened), fsync'd, then
    given its final mode. On any failure nothing is left behind."""
    tmp = temp_name(path)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | _O_CLOEXEC, 0o600)
    try:
        view = memoryview(data)
        half = len(data) // 2
        if pause_s:  # test hook (MOETUNE_TEST_INSTALL_PAUSE_S): a half-written temporary file
            os.write(fd, view[:half])
            view = view[half:]
            time.sleep(pause_s)
        while view:
            n = os.write(fd, view)
            view = view[n:]
        os.fchmod(fd, mode)
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    os.close(fd)
    return tmp


def open_append(path: str):
    """An append-only binary file object that never opens through a symlink (O_NOFOLLOW)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | _O_CLOEXEC, default_mode())
    return os.fdopen(fd, "ab")


def is_symlink(path: str) -> bool:
    try:
        return stat.S_ISLNK(os.lstat(path).st_mode)
    except OSError:
        return False


def write_atomic(path: str, data: bytes, mode: Optional[int] = None, pause_s: float = 0.0) -> None:
    """Replace path by data atomically (a reader or a kill sees the old or the new file, whole).
    A symlink at path is refused (RunError symlink_target): rename() would replace the link, not what it
    points to, and following it would let whoever planted it choose the file we overwrite."""
    if is_symlink(path):
        raise RunError("symlink_target", "%s is a symbolic link: refusing to write through it" % path)
    tmp = write_temp(path, data, default_mode() if mode is None else mode, pause_s)
    try:
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    fsync_dir(os.path.dirname(path) or ".")


def read_nofollow(path: str) -> Optional[bytes]:
    """The bytes of a regular file, never through a symlink; None when it does not exist.
    Raises RunError(symlink_target) for a link, OSError otherwise."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | _O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise RunError("symlink_target", "%s is a symbolic link: refusing to follow it" % path)
        raise
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise RunError("invalid_config", "%s is not a regular file" % path)
        chunks = []
        while True:
            b = os.read(fd, 1 << 20)
            if not b:
                break
            chunks.append(b)
        return b"".join(chunks)
    finally:
        os.close(fd)


def clean_stale_temps(path: str) -> None:
    """Remove temporaries of path left by writers that died (SIGKILL mid-write): only regular files of
    ours whose writer's pid is gone."""
    folder, base = os.path.split(path)
    prefix = ".%s%s" % (base, TMP_MARK)
    try:
        names = os.listdir(folder or ".")
    except OSError:
        return
    for n in names:
        if not n.startswith(prefix):
            continue
        pid = n[len(prefix):].split("-", 1)[0]
        if not pid.isdigit() or os.path.exists("/proc/%s" % pid):
            continue
        full = os.path.join(folder, n)
        try:
            st = os.lstat(full)
            if stat.S_ISREG(st.st_mode) and st.st_uid == os.getuid():
                os.unlink(full)
        except OSError:
            pass


def read_text(path, default=None):
    try:
        with open(path, "r", encoding="utf-8") as f:
            return f.read()
    except (OSError, UnicodeDecodeError):
        return default


def set_state(run_dir, state):
    write_atomic(os.path.join(run_dir, "state"), (state + "\n").encode())


def get_state(run_dir):
    return (read_text(os.path.join(run_dir, "state"), "") or "").strip() or "starting"


def get_pid(run_dir: str) -> Optional[int]:
    t = (read_text(os.path.join(run_dir, "pid"), "") or "").strip()
    return int(t) if t.isdigit() else None


def pid_alive(pid: Optional[int], run_dir: Optional[str] = None) -> bool:
    """True when pid runs and (if run_dir is given and /proc is readable) is that run's process,
    so a recycled pid after a reboot is not mistaken for the run."""
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    try:
        with open("/proc/%d/stat" % pid, "rb") as f:
            if f.read().rsplit(b")", 1)[-1].split()[0] == b"Z":
                return False  # a zombie has finished its work
    except OSError:
        pass
    if run_dir is not None:
        try:
            with open("/proc/%d/cmdline" % pid, "rb") as f:
                cmd = f.read()
            return os.path.basename(run_dir.rstrip("/")).encode() in cmd
        except OSError:
            return True
    return True


def run_alive(run_dir):
    return pid_alive(get_pid(run_dir), run_dir)


def effective_state(run_dir):
    """The state word, or "dead" for a starting/running run whose process is gone."""
    st = get_state(run_dir)
    if st not in TERMINAL and not run_alive(run_dir):
        return "dead"
    return st


def _complete_lines(path: str) -> Tuple[List[str], int]:
    """Complete lines of a jsonl file and the byte length they cover (a torn last line is left out)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return [], 0
    end = data.rfind(b"\n") + 1
    return data[:end].decode("utf-8", "replace").splitlines(), end


def truncate_torn_tail(path):
    """A process killed mid-write leaves a partial last line: cut it so appends stay line-aligned."""
    _, end = _complete_lines(path)
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
        self.seq = len(_complete_lines(self.path)[0])
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

    def poll(self) -> List[str]:
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read()
        except FileNotFoundError:
            return []
        self.offset += len(data)
        data = self._buf + data
        end = data.rfind(b"\n") + 1
        self._buf = data[end:]
        out = []
        for raw in data[:end].splitlines():
            if self.seq >= self.start:
                out.append(raw.decode("utf-8", "replace"))
            self.seq += 1
        return out


def read_events(run_dir: str, start: int = 0) -> List[str]:
    lines, _ = _complete_lines(os.path.join(run_dir, "events.jsonl"))
    return lines[start:]


# -- simulated runs -------------------------------------------------------------------------------

def mark_simulated(run_dir: str) -> None:
    path = os.path.join(run_dir, SIMULATED_MARK)
    if not os.path.isfile(path):
        write_atomic(path, b"every number of this run comes from the synthetic backend: simulated, "
                           b"never measured on a GPU\n")


def _first_json(path: str) -> Optional[Dict[str, Any]]:
    lines, _ = _complete_lines(path)
    for line in lines[:1]:
        try:
            obj = json.loads(line)
        except ValueError:
            return None
        return obj if isinstance(obj, dict) else None
    return None


def run_simulated(run_dir: str) -> Optional[str]:
    """Why the run in run_dir is simulated (a sentence), or None when nothing it wrote says so.
    Every file the run writes carries the fact; any one of them is enough."""
    if os.path.lexists(os.path.join(run_dir, SIMULATED_MARK)):
        return "its folder holds the %s marker" % SIMULATED_MARK
    try:
        sp = json.loads(read_text(os.path.join(run_dir, "spec.json"), "") or "{}")
    except ValueError:
        sp = {}
    if isinstance(sp, dict) and sp.get("backend") == "synthetic":
        return "its spec.json asks for the synthetic backend"
    try:
        res = json.loads(read_text(os.path.join(run_dir, "result.json"), "") or "{}")
    except ValueError:
        res = {}
    if isinstance(res, dict) and res.get("simulated"):
        return "its result.json says simulated"
    ev = _first_json(os.path.join(run_dir, "events.jsonl"))
    if ev and (ev.get("simulated") or ev.get("backend") == "synthetic"):
        return "its events.jsonl says simulated"
    j = _first_json(os.path.join(run_dir, "journal.jsonl"))
    if j and j.get("simulated"):
        return "its journal.jsonl says simulated"
    return None


def run_folder_of(path: str) -> Optional[str]:
    """The run folder that holds path (itself, or up to two levels up: run/<dialect>/<file>), or None."""
    d = os.path.abspath(path)
    if not os.path.isdir(d):
        d = os.path.dirname(d)
    for _ in range(3):
        if os.path.isfile(os.path.join(d, "spec.json")) and (
                os.path.exists(os.path.join(d, "events.jsonl")) or os.path.exists(os.path.join(d, "state"))):
            return d
        parent = os.path.dirname(d)
        if parent == d:
            break
        d = parent
    return None


# -- the journal ----------------------------------------------------------------------------------

def cfg_json(cfg: Optional[KernelConfig]) -> Optional[Dict[str, Any]]:
    return cfg.as_dict() if cfg is not None else None


def measurement_record(meas: Measurement, index: int) -> Dict[str, Any]:
    u = meas.unit
    rec = {"type": "measurement" if meas.ok else "candidate_error", "unit": u.ident(), "op": u.op, "m": u.m,
           "config": u.cfg.as_dict(), "config_down": cfg_json(u.cfg_down), "round": u.round,
           "replays": u.replays, "gpu": meas.gpu, "index": index}
    if meas.ok:
        s = list(meas.samples_us or [])
        med = meas.median_us
        rec.update({"median_us": med, "min_us": min(s), "max_us": max(s),
                    "spread": (max(s) - min(s)) / med if med > 0 and len(s) > 1 else 0.0, "samples_us": s})
    else:
        rec.update({"kind": meas.error_kind or "other", "message": meas.error or ""})
    if meas.simulated:
        rec["simulated"] = True
    return rec


def measurement_from_record(rec: Dict[str, Any], simulated: bool = False) -> Measurement:
    cd = rec.get("config_down")
    unit = Unit(rec["op"], KernelConfig.from_dict(rec["config"]), int(rec["m"]), int(rec["replays"]),
                int(rec["round"]), KernelConfig.from_dict(cd) if cd else None)
    if rec.get("type") == "measurement":
        return Measurement(unit, [float(x) for x in rec["samples_us"]], gpu=int(rec.get("gpu", 0)),
                           simulated=simulated)
    return Measurement(unit, None, rec.get("kind") or "other", rec.get("message"), int(rec.get("gpu", 0)),
                       simulated)


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
        for line in _complete_lines(self.path)[0]:
            try:
                rec = json.loads(line)
                meas = measurement_from_record(rec, simulated)
            except (ValueError, KeyError, TypeError):
                continue  # an unreadable line is re-measured, never fatal
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


def list_runs(home: Optional[str] = None) -> Iterator[str]:
    d = runs_dir(home)
    try:
        names = sorted(os.listdir(d), reverse=True)
    except FileNotFoundError:
        return iter(())
    return iter(os.path.join(d, n) for n in names if os.path.isfile(os.path.join(d, n, "spec.json")))


def list_run_folders(home: Optional[str] = None) -> List[str]:
    """Every folder in the run store, newest first, damaged ones (no spec.json) included."""
    d = runs_dir(home)
    try:
        names = sorted(os.listdir(d), reverse=True)
    except FileNotFoundError:
        return []
    return [os.path.join(d, n) for n in names if not n.startswith(".") and os.path.isdir(os.path.join(d, n))]


def journal_count(run_dir):
    return len(_complete_lines(os.path.join(run_dir, "journal.jsonl"))[0])
