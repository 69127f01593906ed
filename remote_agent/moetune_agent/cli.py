# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""moetune-agent command line: every command prints hello first and done last (PROTOCOL.md)."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from typing import List, Optional

from . import options, safefile, spec as spec_mod
from .detach import spawn_detached
from .backends import SYNTHETIC
from .protocol import EXIT_FAILED, EXIT_OK, EXIT_RUN_FAILED, EXIT_USAGE, Emitter, RunError, result_lines
from .runs import logs, store

__all__ = ["main"]


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError("%s: %s" % (self.prog, message))

    def _print_message(self, message, file=None):
        # stdout carries protocol lines only: help text goes to stderr.
        if message:
            sys.stderr.write(message)


def _parser():
    p = _Parser(prog="moetune-agent", description="moetune's agent on the GPU host (PROTOCOL.md)")
    p.add_argument("--home", help="run store (default $MOETUNE_HOME or ~/.cache/moetune)")
    sub = p.add_subparsers(dest="command")
    sub.add_parser("version")
    pr = sub.add_parser("probe")
    pr.add_argument("--python", help="interpreter whose packages to inspect (a venv's python)")
    t = sub.add_parser("tune")
    t.add_argument("spec")
    t.add_argument("--foreground", action="store_true")
    t.add_argument("--new", action="store_true", help="never resume a dead run with the same spec")
    r = sub.add_parser("resume")
    r.add_argument("run")
    r.add_argument("--foreground", action="store_true")
    a = sub.add_parser("attach")
    a.add_argument("run")
    a.add_argument("--from", dest="start", type=int, default=0)
    a.add_argument("--no-follow", action="store_true")
    c = sub.add_parser("cancel")
    c.add_argument("run")
    sub.add_parser("runs")
    rs = sub.add_parser("result")
    rs.add_argument("run")
    ic = sub.add_parser("install-config")
    ic.add_argument("source")
    ic.add_argument("--framework", required=True, choices=("sglang", "vllm"))
    ic.add_argument("--python")
    ic.add_argument("--root")
    ic.add_argument("--replace", action="store_true")
    ic.add_argument("--dry-run", action="store_true")
    ic.add_argument(
        "--keep-backups",
        type=int,
        default=5,
        metavar="N",
        help="backups of a replaced file to keep (the newest N; 0 keeps all)",
    )
    ic.add_argument(
        "--through-symlink",
        action="store_true",
        help="the target name is a symlink you made: replace the file it points to",
    )
    ic.add_argument(
        "--expect-old",
        action="append",
        metavar="FILE=SHA256|absent",
        help="the preview's plan: the file there is still this (else nothing is installed)",
    )
    ic.add_argument(
        "--expect-new",
        action="append",
        metavar="FILE=SHA256",
        help="the preview's plan: the bytes to install are still these (else nothing is installed)",
    )
    im = sub.add_parser("import-run", help="make a finished run of this host from a result.json tuned elsewhere")
    im.add_argument("source")
    im.add_argument("--from-host")
    im.add_argument("--from-run")
    hr = sub.add_parser("headroom", help="how much a tune would gain, in seconds (synchronous)")
    hr.add_argument("spec")
    rn = sub.add_parser("_run")  # internal: the detached run process
    rn.add_argument("run_dir")
    return p


def main(argv: Optional[List[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    out = Emitter()
    if argv[:1] == ["_run"] and len(argv) == 2:
        from .tunerun.runner import Run

        return Run(argv[1]).main()
    if argv[:1] == ["_prewarm"] and len(argv) == 2:  # internal: the detached prewarm (prewarm.py)
        from .prewarm import main as prewarm_main

        return prewarm_main(argv[1])
    if argv[:1] == ["_headroom"] and len(argv) == 2:  # internal: the check under the spec's interpreter
        from .headroom import inner_main

        return inner_main(argv[1], out)
    out.hello()
    try:
        args = _parser().parse_args(argv)
        if not args.command:
            raise UsageError(
                "usage: moetune-agent <command> [args]; commands: version, probe, tune, resume, "
                "attach, cancel, runs, result, install-config, import-run, headroom"
            )
    except UsageError as e:
        out.error("usage", str(e))
        out.done("failed", exit_code=EXIT_USAGE)
        return EXIT_USAGE
    except SystemExit as e:  # --help
        out.done("ok" if not e.code else "failed", exit_code=int(e.code or 0))
        return int(e.code or 0)
    try:
        rc = _dispatch(args, out)
    except RunError as e:
        out.error(e.code, e.message)
        rc = EXIT_FAILED
    except spec_mod.SpecError as e:
        out.error("spec_invalid", str(e), detail=e.key)
        rc = EXIT_FAILED
    except KeyboardInterrupt:
        out.error("internal", "interrupted")
        rc = EXIT_FAILED
    except Exception as e:
        import traceback

        tb = traceback.format_exc()
        sys.stderr.write(tb)
        out.error("internal", "%s: %s" % (type(e).__name__, e), detail=tb[-2000:])
        rc = EXIT_FAILED
    if not out.done_sent:
        out.done("ok" if rc == EXIT_OK else "failed", exit_code=rc)
    return rc


def _dispatch(args, out):
    cmd = args.command
    if cmd == "version":
        return EXIT_OK
    if cmd == "probe":
        from .probe import probe

        out.emit(dict({"type": "probe"}, **probe(args.python)))
        return EXIT_OK
    if cmd == "tune":
        return _tune(args, out)
    if cmd == "resume":
        run_dir = store.resolve(args.run, args.home)
        if store.run_alive(run_dir):
            raise RunError(
                "run_active",
                "run %s is still running (pid %s); use attach" % (os.path.basename(run_dir), store.get_pid(run_dir)),
            )
        if store.get_state(run_dir) == "finished":
            # Running it again would append a second run_started ... done to a finished run's events.
            rid = os.path.basename(run_dir)
            raise RunError(
                "run_finished",
                "run %s has finished: there is nothing to resume (`result %s` shows "
                "its result, `install-config %s` installs it; `tune --new` tunes the shape again)" % (rid, rid, rid),
            )
        return _start(run_dir, args.foreground, out)
    if cmd == "attach":
        return _attach(store.resolve(args.run, args.home), args.start, not args.no_follow, out)
    if cmd == "cancel":
        return _cancel(store.resolve(args.run, args.home), out)
    if cmd == "runs":
        for d in store.list_run_folders(args.home):
            out.emit(_run_entry(d))
        return EXIT_OK
    if cmd == "result":
        d = store.resolve(args.run, args.home)
        text = safefile.read_text(os.path.join(d, "result.json"), limit=safefile.MAX_RESULT_BYTES)
        if text is None:
            raise RunError(
                "not_found",
                "run %s has no readable result.json yet (state: %s; at most %d MiB)"
                % (os.path.basename(d), store.effective_state(d), safefile.MAX_RESULT_BYTES >> 20),
            )
        try:
            res = json.loads(text)
        except (ValueError, RecursionError) as e:
            raise RunError("invalid_config", "%s is damaged: not JSON (%s)" % (os.path.join(d, "result.json"), e))
        if not isinstance(res, dict):
            raise RunError("invalid_config", "%s is damaged: not a JSON object" % os.path.join(d, "result.json"))
        del text
        for line in result_lines(os.path.basename(d), os.path.join(d, "result.json"), res):
            out.emit_line(line)  # a large result in pieces (protocol.result_lines)
        return EXIT_OK
    if cmd == "install-config":
        from .install.installer import install_command

        return install_command(args, out)
    if cmd == "import-run":
        from .runs.importrun import import_run

        out.emit(dict({"type": "imported"}, **import_run(args.source, args.from_host, args.from_run, args.home)))
        return EXIT_OK
    if cmd == "headroom":
        from .headroom import headroom_command

        return headroom_command(args, out)
    raise UsageError("unknown command %r" % cmd)


def _run_entry(d: str) -> dict:
    """One `run` event; a damaged run folder is listed with state "damaged" and the reason, never fatal."""
    rid = os.path.basename(d)
    try:
        spec_path = os.path.join(d, "spec.json")
        if not os.path.isfile(spec_path):
            raise ValueError("it has no spec.json")
        text = safefile.read_text(spec_path)
        if text is None:
            raise ValueError("its spec.json cannot be read")
        try:
            sp = json.loads(text)
        except (ValueError, RecursionError) as e:
            raise ValueError("its spec.json is not JSON (%s)" % e)
        if not isinstance(sp, dict):
            raise ValueError("its spec.json is not a JSON object")
        pid = store.get_pid(d)
        measured, damaged = logs.journal_count(d)
        ev = {
            "type": "run",
            "run_id": rid,
            "run_dir": d,
            "state": store.effective_state(d),
            "created_at": os.path.getmtime(spec_path),
            "pid": pid,
            "alive": store.run_alive(d),
            "spec": sp,
            "measured": measured,
            "simulated": logs.run_simulated(d) is not None,
        }
        if damaged:
            ev["journal_damaged"] = damaged  # lines of journal.jsonl that are no measurement: never counted
        return ev
    except (OSError, ValueError, TypeError, RunError) as e:
        reason = e.message if isinstance(e, RunError) else str(e)
        if isinstance(e, OSError):
            reason = "%s: %s" % (e.filename or d, e.strerror or e)
        return {
            "type": "run",
            "run_id": rid,
            "run_dir": d,
            "state": "damaged",
            "damaged": reason,
            "created_at": None,
            "pid": None,
            "alive": False,
            "spec": {},
            "measured": 0,
            "simulated": False,
        }


def _tune(args, out):
    sp = spec_mod.load(args.spec)
    from .tunerun.runner import pick_strategy

    pick_strategy(sp["strategy"])  # an unknown strategy fails here, before anything is started
    spec_mod.check_routing_file(sp)
    h = spec_mod.spec_hash(sp)
    if not args.new:
        # A run of the same spec whose process died (crash, reboot) is continued, not restarted.
        for d in store.list_runs(args.home):
            if os.path.basename(d).split("-")[2:3] != [h[:6]]:
                continue
            try:
                other = spec_mod.normalise(json.loads(safefile.read_text(os.path.join(d, "spec.json"), "") or ""))
            except (ValueError, RecursionError, spec_mod.SpecError):
                continue
            if other != sp:
                continue
            state = store.effective_state(d)
            if state == "dead":
                sys.stderr.write("moetune-agent: resuming dead run %s of the same spec\n" % os.path.basename(d))
                return _start(d, args.foreground, out)
            if state in ("starting", "running"):
                # Two sweeps of one shape on the same GPUs would spoil each other's timings.
                raise RunError(
                    "run_active",
                    "run %s with the same spec is already running (pid %s): attach "
                    "to it, cancel it, or pass --new" % (os.path.basename(d), store.get_pid(d)),
                )
    home = store.private_runs_dir(args.home)  # 0700 and checked: refused where others could write (42)
    rid = store.new_run_id(h, args.home)
    run_dir = os.path.join(home, rid)
    if sp.get("device_name") is not None:
        spec_mod.check_file_names(sp, sp["device_name"], run_dir)  # the run folder's path counts too
    os.mkdir(run_dir, 0o700)
    safefile.write_atomic(os.path.join(run_dir, "spec.json"), (json.dumps(sp, indent=1) + "\n").encode())
    store.set_state(run_dir, "starting")
    return _start(run_dir, args.foreground, out)


def _python_for(run_dir):
    sp = json.loads(safefile.read_text(os.path.join(run_dir, "spec.json"), "{}") or "{}")
    py = sp.get("python")
    if py and sp.get("backend") != SYNTHETIC:
        if not os.access(py, os.X_OK):
            raise RunError("not_found", "spec 'python': %s is not an executable interpreter" % py)
        return py
    return sys.executable


def _start(run_dir, foreground, out):
    store.set_state(run_dir, "starting")
    if foreground:
        from .tunerun.runner import Run

        rc = Run(run_dir, echo=out).main()
        out.done_sent = True  # the run's own done event was echoed
        return EXIT_OK if rc == 0 else EXIT_FAILED
    start_seq = logs.count_lines(os.path.join(run_dir, "events.jsonl"))
    python = _python_for(run_dir)
    spawn_detached(python, run_dir)
    # Wait for the run process to announce itself (or fail early), then return: the run goes on.
    # (MOETUNE_AGENT_START_WAIT_S: tests shorten the wait; a cold torch import can take most of a minute.)
    wait_s = options.host().start_wait_s
    deadline = time.time() + wait_s
    seq = start_seq
    ended = False
    ended_at = None
    while time.time() < deadline:
        # The state is written before the final events: read the events once more after seeing it.
        pid = store.get_pid(run_dir)
        ended = store.get_state(run_dir) in store.TERMINAL or (pid is not None and not store.pid_alive(pid))
        for line in logs.read_events(run_dir, seq):
            seq += 1
            ev = logs.parse_event(line)
            if ev is None:
                continue
            if ev.get("type") in ("run_started", "error", "done"):
                out.emit_line(line)
            if ev.get("type") == "run_started":
                out.done("detached", run_id=ev.get("run_id"), exit_code=EXIT_OK)
                return EXIT_OK
            if ev.get("type") == "done":
                out.done_sent = True
                return EXIT_FAILED
        if ended:
            # Its last events may still be on their way: give them a moment before calling it lost.
            ended_at = ended_at or time.time()
            if time.time() - ended_at > 3.0:
                break
        time.sleep(0.05)
    if not ended and store.run_alive(run_dir):
        # Slow, not failed: the run exists and goes on. Saying "did not start" here made clients retry and
        # start a second sweep on the same GPUs; say where it is instead.
        rid = os.path.basename(run_dir.rstrip("/"))
        out.log(
            "warning",
            "run %s (pid %s) has not announced itself within %g s; it is still starting and "
            "goes on: attach %s to follow it, cancel %s to stop it" % (rid, pid, wait_s, rid, rid),
        )
        out.done("detached", run_id=rid, exit_code=EXIT_OK, starting=True)
        return EXIT_OK
    err = safefile.read_tail(os.path.join(run_dir, "stderr.log"), 1500).strip()
    what = "ended before it started working" if ended else "did not start within %g s" % wait_s
    out.error(
        "backend_failed", "the run process %s; its stderr ends with: %s" % (what, err or "(nothing)"), path=run_dir
    )
    return EXIT_FAILED


def _attach(run_dir, start, follow, out):
    seq = max(0, start)
    idle_since = None
    tail = logs.EventTail(run_dir, seq)
    while True:
        lines = tail.poll()
        for i, line in enumerate(lines):
            seq += 1
            ev = logs.parse_event(line)
            if ev is None:
                # Never forwarded: a reader would take the garbage for a protocol line of the run.
                out.log(
                    "warning",
                    "events.jsonl of run %s: line %d (seq %d) is damaged (%s): skipped"
                    % (
                        os.path.basename(run_dir),
                        seq,
                        seq - 1,
                        "longer than %d bytes" % safefile.MAX_LINE_BYTES if line is None else "not a JSON event",
                    ),
                )
                continue
            out.emit_line(line)
            # The run's own done, as the newest event, ends the stream (it is the last line we print).
            if ev.get("type") == "done" and i == len(lines) - 1:
                more = tail.poll()
                if not more:
                    out.done_sent = True
                    return EXIT_OK if ev.get("status") == "ok" else EXIT_RUN_FAILED
                lines.extend(more)
        if lines:
            idle_since = None
            continue
        state = store.effective_state(run_dir)
        if not follow:
            if state == "dead":
                out.error(
                    "run_dead",
                    "run %s's process is gone without finishing; `resume` continues it" % os.path.basename(run_dir),
                )
                return EXIT_FAILED
            out.done("interrupted", run_id=os.path.basename(run_dir), next_seq=seq)
            return EXIT_OK
        if state == "dead" or (state in store.TERMINAL and not store.run_alive(run_dir)):
            idle_since = idle_since or time.time()
            if time.time() - idle_since > 1.0:
                if state == "dead":
                    out.error(
                        "run_dead",
                        "run %s's process is gone without finishing; `resume` continues it" % os.path.basename(run_dir),
                    )
                    return EXIT_FAILED
                out.done(_terminal_status(state), run_id=os.path.basename(run_dir), next_seq=seq)
                return EXIT_OK if state == "finished" else EXIT_RUN_FAILED
        time.sleep(0.1)


def _terminal_status(state):
    return {"finished": "ok"}.get(state, state)


def _cancel(run_dir, out):
    rid = os.path.basename(run_dir)
    pid = store.get_pid(run_dir)
    state = store.get_state(run_dir)
    if state in store.TERMINAL:
        out.emit({"type": "cancelled", "run_id": rid, "signalled": False, "state": state})
        return EXIT_OK
    signalled = False
    if store.pid_alive(pid, run_dir):
        try:
            os.killpg(pid, signal.SIGTERM)  # the run leads its own process group
        except ProcessLookupError:
            os.kill(pid, signal.SIGTERM)  # a foreground run shares its caller's group
        except PermissionError:
            raise RunError("permission_denied", "not allowed to signal run %s (pid %d)" % (rid, pid))
        signalled = True
        deadline = time.time() + 15
        while time.time() < deadline and store.pid_alive(pid, run_dir):
            time.sleep(0.05)
        if store.pid_alive(pid, run_dir):
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
    if store.get_state(run_dir) not in store.TERMINAL:
        # The process was gone (or had to be killed): record the end so attach stops.
        store.set_state(run_dir, "cancelled")
        log = logs.EventLog(run_dir, rid, False)
        log.emit({"type": "done", "status": "cancelled"})
        log.close()
    out.emit({"type": "cancelled", "run_id": rid, "signalled": signalled, "state": store.get_state(run_dir)})
    return EXIT_OK
