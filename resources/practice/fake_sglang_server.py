#!/usr/bin/env python3
# SPDX-FileCopyrightText: 2026 The moetune authors
# SPDX-License-Identifier: GPL-3.0-or-later
"""PRACTICE / TEST DOUBLE: a fake SGLang server (resources/practice/fake_sglang_server.py).

It is NOT an inference server. The app installs it into its practice server (the sandbox host of the Hosts
page, src/remote/hosts/practiceserver.cpp) and moetune's end-to-end tests use the same tree. It stands in for
`python -m sglang.launch_server` on a machine without GPUs: installed as `sglang/launch_server.py` of a fake SGLang tree, started through a server profile's
start command, it writes an SGLang-style startup log whose MoE config lines follow SGLang's lookup over
the config files that really exist on disk (docs/servers.md section 1, newest SGLang), once per tensor-
parallel rank, then the readiness line, and then idles until SIGTERM. Its pid file (--pid-file or
$FAKESERVER_PID_FILE) is removed when it stops, so a profile can stop it through that file.

Lookup for one file name (per rank):
  1. <root>/triton_<installed>/<name> exists      -> INFO  "Using MoE kernel config from <path>."
  2. else newest other triton_* folder holding it -> WARNING "Config file not found at <wanted>. Fallback ..."
  3. else                                         -> WARNING "Using default MoE kernel config. ..."
Down file: found -> INFO; missing while up was found -> "Down MoE config file not found at ...; reusing
the tuned up-projection config without TMA. ..."; both missing -> the default warning naming _down.
<root> is $SGLANG_MOE_CONFIG_DIR/configs when set (built-ins not consulted), else the configs/ folder of
this module's tree (srt/layers/moe/fused_moe_triton/configs). Triton is the `triton` importable here.

With --serve-http (or FAKESERVER_HTTP=1) it also answers an OpenAI-compatible API on 127.0.0.1:--port,
as the servers do (docs/servers.md section 10): GET /health, GET /v1/models, POST /v1/completions (streamed
as server-sent events when "stream" is true, else one JSON object). Its latency follows the up config
file it loaded (a made-up rule of this test double, not a model of a GPU): each generated token takes
FAKESERVER_TPOT_MS (default 4) x factor(M), the first one (FAKESERVER_TTFT_MS (default 2) + 0.01 x prompt
tokens) ms x factor(M), where
M is the number of requests in flight padded up to a power of two (as servers pad a batch to a captured
CUDA-graph size) and, like the servers' nearest-key lookup,
    factor(M) = 1 + 0.25 * min(1, |log2(nearest key of the file to M) - log2(M)| / 4)
so a file with a row for the batch the server runs is 1.0 and the default config (no file) is 1.25.
"""

import argparse
import datetime
import http.server
import json
import math
import os
import re
import signal
import sys
import threading
import time

LABEL = ("moetune PRACTICE DOUBLE: fake SGLang server of moetune's practice server (sandbox) and tests, not a real "
         "inference server")
READY = "The server is fired up and ready to roll!"
TAIL = ", you can create them with https://github.com/sgl-project/sglang/tree/main/benchmark/kernels/fused_moe_triton"


def stamp(rank=None):
    t = datetime.datetime.now().strftime("%Y-%m-%d %H:%M:%S")
    return "[%s TP%d]" % (t, rank) if rank is not None else "[%s]" % t


def say(line, rank=None):
    sys.stdout.write("%s %s\n" % (stamp(rank), line))
    sys.stdout.flush()


def triton_version():
    try:
        import triton  # the fake tree's triton: only __version__
        return triton.__version__
    except ImportError:
        return None


def version_tuple(folder):
    m = re.match(r"^triton_(\d+)_(\d+)_(\d+)$", folder)
    return tuple(int(x) for x in m.groups()) if m else None


def config_root():
    env = os.environ.get("SGLANG_MOE_CONFIG_DIR")
    if env:
        return os.path.join(env, "configs")
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.join(here, "srt", "layers", "moe", "fused_moe_triton", "configs")


def file_name(e, n, device, dtype, block, down):
    name = "E=%d,N=%d,device_name=%s" % (e, n, device)
    if dtype:
        name += ",dtype=" + dtype
    if block:
        name += ",block_shape=[%d, %d]" % (block[0], block[1])
    return name + ("_down" if down else "") + ".json"


def lookup(root, installed, name):
    """-> (kind, wanted path, found path, fallback version)"""
    wanted = os.path.join(root, "triton_" + installed.replace(".", "_"), name)
    if os.path.isfile(wanted):
        return "hit", wanted, wanted, None
    try:
        folders = [f for f in os.listdir(root) if version_tuple(f) and os.path.isdir(os.path.join(root, f))]
    except OSError:
        folders = []
    for f in sorted(folders, key=version_tuple, reverse=True):
        p = os.path.join(root, f, name)
        if os.path.isfile(p):
            return "fallback", wanted, p, ".".join(str(x) for x in version_tuple(f))
    return "default", wanted, None, None


def read_json(path):
    try:
        with open(path) as f:
            json.load(f)
        return None
    except (OSError, ValueError) as e:
        return str(e)


LOADED = {"keys": None, "path": None}  # the up file the server loaded (hit or fallback): its batch keys


def remember_loaded(path):
    try:
        with open(path) as f:
            keys = sorted(int(k) for k in json.load(f))
    except (OSError, ValueError, TypeError):
        keys = None
    LOADED["keys"] = keys or None
    LOADED["path"] = path


def latency_factor(m):
    """The test double's rule (module docstring): 1.0 with a row for M, up to 1.25 without one. While the
    file FAKESERVER_INVERT_FILE names exists (a test knob: a serving-level regression that no kernel
    timing shows), the rule is turned round: a row for M makes it slower (1.25), none faster (1.0)."""
    keys = LOADED["keys"]
    if not keys:
        f = 1.25
    else:
        m = 1 << (max(1, m) - 1).bit_length()  # padded up to a power of two
        nearest = min(keys, key=lambda k: abs(k - m))
        f = 1.0 + 0.25 * min(1.0, abs(math.log2(max(1, nearest)) - math.log2(m)) / 4.0)
    invert = os.environ.get("FAKESERVER_INVERT_FILE")
    return 2.25 - f if invert and os.path.exists(invert) else f


class Api(http.server.BaseHTTPRequestHandler):
    """OpenAI-compatible endpoints of the test double (module docstring)."""
    protocol_version = "HTTP/1.1"
    model = ""
    lock = threading.Lock()
    in_flight = [0]

    def log_message(self, fmt, *args):  # keep the server log for the server's own lines
        pass

    def reply(self, code, body):
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path == "/health":
            return self.reply(200, {"status": "ok"})
        if self.path == "/v1/models":
            return self.reply(200, {"object": "list", "data": [
                {"id": self.model, "object": "model", "owned_by": "moetune-test-double"}]})
        return self.reply(404, {"error": "not found"})

    def do_POST(self):
        if self.path != "/v1/completions":
            return self.reply(404, {"error": "not found"})
        try:
            req = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
        except ValueError:
            return self.reply(400, {"error": "bad json"})
        prompt = req.get("prompt", "")
        n_in = len(prompt) if isinstance(prompt, list) else len(str(prompt).split())
        n_out = max(1, int(req.get("max_tokens", 16)))
        tpot = float(os.environ.get("FAKESERVER_TPOT_MS", "4")) / 1000.0
        with self.lock:
            self.in_flight[0] += 1
        try:
            self.generate(req, n_in, n_out, tpot)
        finally:
            with self.lock:
                self.in_flight[0] -= 1

    def generate(self, req, n_in, n_out, tpot):
        cid = "cmpl-fake-%d" % threading.get_ident()
        stream = bool(req.get("stream"))
        ttft = float(os.environ.get("FAKESERVER_TTFT_MS", "2")) / 1000.0
        time.sleep((ttft + 0.00001 * n_in) * latency_factor(self.in_flight[0]))
        if not stream:
            for _ in range(n_out - 1):
                time.sleep(tpot * latency_factor(self.in_flight[0]))
            return self.reply(200, {"id": cid, "object": "text_completion", "model": self.model,
                                    "choices": [{"index": 0, "text": " tok" * n_out, "finish_reason": "length"}],
                                    "usage": {"prompt_tokens": n_in, "completion_tokens": n_out,
                                              "total_tokens": n_in + n_out}})
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        for i in range(n_out):
            if i:
                time.sleep(tpot * latency_factor(self.in_flight[0]))
            chunk = {"id": cid, "object": "text_completion", "model": self.model,
                     "choices": [{"index": 0, "text": " tok", "finish_reason": "length" if i == n_out - 1 else None}]}
            if i == n_out - 1:
                chunk["usage"] = {"prompt_tokens": n_in, "completion_tokens": n_out, "total_tokens": n_in + n_out}
            self.wfile.write(("data: %s\n\n" % json.dumps(chunk)).encode())
            self.wfile.flush()
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()


class ApiServer(http.server.ThreadingHTTPServer):
    request_queue_size = 256  # the default 5 drops connects of a benchmark's burst (1 s SYN retries)
    daemon_threads = True


def serve_http(args):
    Api.model = args.model_path
    httpd = ApiServer(("127.0.0.1", args.port), Api)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


def startup(args):
    say(LABEL)
    with open(os.path.join(args.model_path, "config.json")) as f:
        cfg = json.load(f)
    e = cfg.get("num_experts") or cfg.get("n_routed_experts")
    inter = cfg["moe_intermediate_size"]
    n = inter // args.tp
    q = cfg.get("quantization_config") or {}
    dtype = "fp8_w8a8" if q.get("quant_method") == "fp8" else None
    block = q.get("weight_block_size")
    device = os.environ.get("FAKESERVER_DEVICE_NAME", "NVIDIA_H200")
    say("server_args=ServerArgs(model_path=%r, tp_size=%d, port=%d)" % (args.model_path, args.tp, args.port))
    installed = triton_version()
    root = config_root()
    up = file_name(e, n, device, dtype, block, False)
    down = file_name(e, n, device, dtype, block, True)
    for rank in range(args.tp):
        say("Load weight end. type=Qwen3MoeForCausalLM, dtype=torch.bfloat16, avail mem=%.2f GB" % 40.0, rank)
        if installed is None:
            say("WARNING: triton not importable; using default MoE kernel config", rank)
            continue
        kind, wanted, found, fb = lookup(root, installed, up)
        if rank == 0 and kind in ("hit", "fallback"):
            remember_loaded(found)
        if kind == "hit":
            err = read_json(found)
            if err:
                say("ERROR: cannot read MoE kernel config %s: %s" % (found, err), rank)
            say("Using MoE kernel config from %s." % found, rank)
        elif kind == "fallback":
            say("Config file not found at %s. Fallback to triton version %s and use MoE kernel config from %s. "
                "Performance might be sub-optimal!" % (wanted, fb, found), rank)
        else:
            say("Using default MoE kernel config. Performance might be sub-optimal! Config file not found at %s%s"
                % (wanted, TAIL), rank)
        dkind, dwanted, dfound, _ = lookup(root, installed, down)
        if dkind == "hit":
            say("Using MoE kernel config from %s." % dfound, rank)
        elif kind != "default":
            say("Down MoE config file not found at %s; reusing the tuned up-projection config without TMA. "
                "Performance might be sub-optimal." % dwanted, rank)
        else:
            say("Using default MoE kernel config. Performance might be sub-optimal! Config file not found at %s%s"
                % (dwanted, TAIL), rank)
    for rank in range(args.tp):
        say("KV Cache is allocated. #tokens: 1048576, K size: 24.00 GB, V size: 24.00 GB", rank)
    httpd = serve_http(args) if args.serve_http else None  # listening before the readiness line
    time.sleep(args.ready_after)
    if LOADED["path"]:
        say("moetune test double: latency factor at M=16 is %.3f" % latency_factor(16))
    say("INFO:     Uvicorn running on http://127.0.0.1:%d (Press CTRL+C to quit)" % args.port)
    say(READY)
    return httpd


def main(argv=None):
    p = argparse.ArgumentParser(description="PRACTICE / TEST DOUBLE of sglang.launch_server (see the module docstring)")
    p.add_argument("--model-path", required=True)
    p.add_argument("--tp", "--tp-size", type=int, default=1)
    p.add_argument("--port", type=int, default=30000)
    p.add_argument("--pid-file", default=os.environ.get("FAKESERVER_PID_FILE"))
    p.add_argument("--ready-after", type=float, default=float(os.environ.get("FAKESERVER_READY_AFTER_S", "0.3")))
    p.add_argument("--serve-http", action="store_true", default=os.environ.get("FAKESERVER_HTTP") == "1",
                   help="answer the OpenAI-compatible API on 127.0.0.1:--port (see the docstring)")
    # A practice server runs until stopped (0); a test that wants a bound passes one (FAKESERVER_EXIT_AFTER_S).
    p.add_argument("--exit-after", type=float, default=float(os.environ.get("FAKESERVER_EXIT_AFTER_S", "0")),
                   help="exit after this many seconds; 0 (the default) runs until SIGTERM/SIGINT")
    args, _ = p.parse_known_args(argv)
    stopping = []

    def on_term(signum, frame):
        stopping.append(signum)

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    if args.pid_file:
        with open(args.pid_file + ".tmp", "w") as f:
            f.write("%d\n" % os.getpid())
        os.replace(args.pid_file + ".tmp", args.pid_file)
    httpd = None
    try:
        httpd = startup(args)
        if args.exit_after > 0:
            say("moetune test double: exits by itself after %g s (--exit-after)" % args.exit_after)
            deadline = time.time() + args.exit_after  # a test's bound: never outlive the test run by much
        else:
            say("moetune test double: runs until stopped")
            deadline = float("inf")
        while not stopping and time.time() < deadline:
            time.sleep(0.1)
        say("Received signal %d: shutting down (fake server)" % (stopping[0] if stopping else 0))
    finally:
        if httpd is not None:  # the port is free before the pid file goes
            httpd.shutdown()
            httpd.server_close()
        if args.pid_file:
            try:
                with open(args.pid_file) as f:
                    mine = f.read().strip() == str(os.getpid())
                if mine:
                    os.unlink(args.pid_file)
            except OSError:
                pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
