"""``specedit serve`` under stress: how fast a rewrite stops, and a soak (issue 12).

Contract: ``specedit bench server [--model M] [--seconds S] [--clients N] [--seed X]
[--no-cancel] [--out DIR]`` starts a real ``specedit serve --tcp`` process on a private
socket, with a scratch state directory (the user's model checks copied in), and runs:

* **cancel** (:func:`cancel_latency`): for each way a rewrite ends early (``rewrite/cancel``,
  the client vanishing, SIGTERM to the server) it starts a rewrite of a long file (the first
  ``--cancel-lines`` lines of the standard library's ``argparse.py``, a new first line each
  time so that nothing of it is cached), ends it ``--cancel-after`` seconds after it began
  running (the model is reading the prompt), and reports the seconds until it is over (the
  ``rewrite/done``; for a vanished client the server's log line; for SIGTERM the
  ``rewrite/done`` and the process's exit), against the time one chunk
  (``engine.prefill.CHUNK`` tokens) takes at the prefill rate the progress reported,
  and the prompt tokens read in all.
  SIGTERM comes last and stops that server; the soak gets a fresh one.
* **soak** (:func:`soak`): ``--clients`` threads for ``--seconds`` seconds; each connects
  again and again (Unix socket, or TCP with the token) and does one random thing
  (:data:`ACTIONS`): a whole rewrite, a rewrite cancelled by ``rewrite/cancel`` or by
  ``$/cancelRequest``, a rewrite or a warm-up whose client vanishes, garbage, half a frame,
  a connection that says nothing, a wrong TCP token. Every reply is checked. Afterwards
  the server must answer ``initialize``; its resident memory and open descriptors
  (``/proc/PID``) are read after one warm-up round of every action and again once every
  client is gone and the server is idle.

Prints the figures and saves a JSON record to ``--out``. :func:`soak` works on any server
(the tests run a short one against a toy-model server).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import random
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..engine.prefill import CHUNK as PREFILL_CHUNK
from .rpc_client import Closed, RpcClient

log = logging.getLogger(__name__)

ACTIONS = (
    "complete",
    "cancel",
    "cancel_request",
    "vanish",
    "warm_vanish",
    "garbage",
    "half_frame",
    "silent",
    "bad_token",
)
ENDED = ("ok", "truncated", "cancelled", "error")


@dataclass
class SoakReport:
    """What a soak did and what it left behind."""

    seconds: float
    clients: int
    connections: int = 0
    requests: int = 0
    """Requests and notifications sent."""
    actions: Counter = field(default_factory=Counter)
    done: Counter = field(default_factory=Counter)
    """``rewrite/done`` statuses seen by clients that waited for them."""
    errors: list[str] = field(default_factory=list)
    """Replies that broke the protocol, or waits that timed out: must stay empty."""
    rss_kb_before: int = 0
    rss_kb_after: int = 0
    rss_kb_peak: int = 0
    fds_before: int = 0
    fds_after: int = 0
    answers_after: bool = False

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["actions"], d["done"] = dict(self.actions), dict(self.done)
        return d


def proc_figures(pid: int) -> tuple[int, int]:
    """(resident memory in KiB, open descriptors) of process ``pid``, from ``/proc``."""
    rss = 0
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            rss = int(line.split()[1])
    return rss, len(os.listdir(f"/proc/{pid}/fd"))


class _Soaker:
    def __init__(
        self,
        sock: Path,
        text: str,
        tcp: tuple[int, str] | None,
        report: SoakReport,
        max_tokens: int,
    ) -> None:
        self.sock, self.text, self.tcp, self.report = sock, text, tcp, report
        self.max_tokens = max_tokens
        self.lock = threading.Lock()

    def count(self, what: str, n: int = 1) -> None:
        with self.lock:
            if what == "requests":
                self.report.requests += n
            else:
                self.report.connections += n

    def error(self, msg: str) -> None:
        with self.lock:
            self.report.errors.append(msg)

    def connect(self, rng: random.Random, auth: bool = True) -> RpcClient:
        self.count("connections")
        if self.tcp is not None and rng.random() < 0.25:
            c = RpcClient.tcp(self.tcp[0], timeout=120)
            if auth:
                self.count("requests")
                c.call("initialize", {"client": "soak", "token": self.tcp[1]})
            return c
        c = RpcClient.unix(self.sock, timeout=120)
        if auth:
            self.count("requests")
            c.call("initialize", {"client": "soak"})
        return c

    def start(self, c: RpcClient, rng: random.Random) -> str:
        self.count("requests")
        opts = {"maxTokens": rng.randint(4, self.max_tokens)}
        params = {"text": self.text, "path": "soak.py", "instruction": "Add type hints."}
        return c.call("rewrite/start", {**params, "options": opts})["sessionId"]

    def wait_done(self, c: RpcClient, sid: str, allowed: tuple[str, ...]) -> None:
        d = c.wait_notification("rewrite/done", lambda p: p["sessionId"] == sid, 600)
        with self.lock:
            self.report.done[d["status"]] += 1
        if d["status"] not in allowed:
            self.error(f"session {sid}: {d['status']} ({d['message']}), expected {allowed}")

    def run(self, action: str, rng: random.Random) -> None:
        if action == "silent":  # connects and vanishes without a word
            self.connect(rng, auth=False).close()
            return
        if action == "bad_token":
            if self.tcp is None:
                return
            self.count("connections")
            c = RpcClient.tcp(self.tcp[0], timeout=30)
            self.count("requests")
            err = c.request("initialize", {"token": "x" * rng.randint(1, 40)}).get("error", {})
            if err.get("code") != -32602:
                self.error(f"a wrong token got {err}")
            c.close()
            return
        c = self.connect(rng)
        try:
            if action == "garbage":
                self.count("requests")
                c.send_raw(b"Content-Length: 5\r\n\r\n{nope")
                if c.read().get("error", {}).get("code") != -32700:
                    self.error("garbage did not get -32700")
            elif action == "half_frame":
                c.send_raw(b"Content-Length: 100\r\n\r\n{")
            elif action == "warm_vanish":
                self.count("requests")
                c.call("rewrite/warm", {"text": self.text, "path": "soak.py"})
                time.sleep(rng.uniform(0, 0.5))
            else:
                sid = self.start(c, rng)
                if action == "complete":
                    self.wait_done(c, sid, ("ok", "truncated"))
                    return
                time.sleep(rng.uniform(0, 1.0))
                if action == "vanish":
                    return
                self.count("requests")
                if action == "cancel":
                    c.call("rewrite/cancel", {"sessionId": sid})
                else:  # $/cancelRequest names the rewrite/start's id
                    c.notify("$/cancelRequest", {"id": c.next_id - 1})
                self.wait_done(c, sid, ENDED)
        finally:
            c.close()

    def client(self, seed: int, deadline: float) -> None:
        rng = random.Random(seed)
        while time.monotonic() < deadline:
            action = rng.choice(ACTIONS)
            with self.lock:
                self.report.actions[action] += 1
            try:
                self.run(action, rng)
            except (OSError, Closed, AssertionError, TimeoutError) as e:
                self.error(f"{action}: {type(e).__name__}: {e}")


def soak(
    sock: Path,
    pid: int,
    *,
    seconds: float,
    clients: int,
    text: str,
    seed: int = 0,
    tcp: tuple[int, str] | None = None,
    max_tokens: int = 24,
    settle_s: float = 30.0,
) -> SoakReport:
    """Soak the server at ``sock`` (process ``pid``; see the module docstring)."""
    report = SoakReport(seconds=seconds, clients=clients)
    s = _Soaker(Path(sock), text, tcp, report, max_tokens)
    warm = random.Random(seed)
    for action in ACTIONS:  # one of each first, so that lazy allocations are done
        s.run(action, warm)
    _idle(sock, pid, None, settle_s)
    report.rss_kb_before, report.fds_before = proc_figures(pid)
    peak = report.rss_kb_before
    deadline = time.monotonic() + seconds
    threads = [
        threading.Thread(target=s.client, args=(seed * 1000 + i, deadline), daemon=True)
        for i in range(clients)
    ]
    for t in threads:
        t.start()
    while any(t.is_alive() for t in threads):
        peak = max(peak, proc_figures(pid)[0])
        time.sleep(0.5)
    report.rss_kb_peak = peak
    _idle(sock, pid, report.fds_before, settle_s)
    report.rss_kb_after, report.fds_after = proc_figures(pid)
    try:
        c = RpcClient.unix(sock, timeout=30)
        report.answers_after = c.call("initialize", {"client": "after"})["server"] == "specedit"
        c.close()
    except (OSError, Closed, AssertionError) as e:
        report.errors.append(f"no answer after the soak: {e}")
    return report


def _idle(sock: Path, pid: int, fds: int | None, settle_s: float) -> None:
    """Wait (at most ``settle_s``) until the server's queue is empty, its descriptors are
    back to ``fds`` and closing connections are gone."""
    deadline = time.monotonic() + settle_s
    while time.monotonic() < deadline:
        if fds is None or proc_figures(pid)[1] <= fds:
            break
        time.sleep(0.2)
    time.sleep(1.0)  # a lingering close takes 0.5 s


def _stdlib_head(name: str, lines: int) -> str:
    src = Path(sysconfig.get_paths()["stdlib"]) / name
    return "".join(src.read_text(encoding="utf-8").splitlines(keepends=True)[:lines])


@dataclass
class Server:
    proc: subprocess.Popen
    sock: Path
    log: Path
    tcp: tuple[int, str]


def start_server(model: str, folder: Path, extra: list[str]) -> Server:
    """A ``specedit serve --tcp`` process over ``model`` in ``folder``; returns once it listens."""
    from ..app.runtime.loaded_model import model_checks_file

    state = folder / "state"
    state.mkdir(parents=True, exist_ok=True)
    checks = model_checks_file()
    if checks.exists():
        shutil.copy(checks, state / "model_checks.json")
    sock, log_file = folder / "run" / "rpc.sock", folder / "server.log"
    cmd = [sys.executable, "-m", "specedit.app.cli", "serve", "--tcp", "--model", model]
    cmd += ["--socket", str(sock), "--log-file", str(log_file), *extra]
    env = {**os.environ, "SPECEDIT_STATE_DIR": str(state)}
    proc = subprocess.Popen(cmd, env=env, stderr=subprocess.DEVNULL)
    disc = sock.with_suffix(".json")
    while not disc.exists():
        if proc.poll() is not None:
            raise RuntimeError(f"specedit serve exited with {proc.returncode}: see {log_file}")
        time.sleep(0.1)
    info = json.loads(disc.read_text())
    return Server(proc, sock, log_file, (info["tcp"]["port"], info["tcp"]["token"]))


def cancel_latency(server: Server, text: str, after_s: float) -> dict[str, dict[str, float]]:
    """Seconds from ending a rewrite ``after_s`` seconds into its prefill to its end, by way
    (module docstring)."""
    ways = ("rewrite/cancel", "disconnect", "SIGTERM")
    out = {how: _end_early(server, text, how, after_s) for how in ways}
    for how, r in out.items():
        log.warning("%s: %s", how, r)
    return out


def _end_early(server: Server, text: str, how: str, after_s: float) -> dict[str, float]:
    c = RpcClient.unix(server.sock, timeout=600)
    c.call("initialize", {"client": "bench"})
    text = f"# ended by {how}\n{text}"  # nothing of the file is cached from the last run
    params = {"text": text, "path": "long.py", "instruction": "Add type hints."}
    sid = c.call("rewrite/start", {**params, "options": {"maxTokens": 8}})["sessionId"]
    p = c.wait_notification(
        "rewrite/progress", lambda p: p["sessionId"] == sid and p["state"] == "running"
    )
    time.sleep(after_s)  # the model is reading the prompt
    c.sock.settimeout(0.05)
    try:  # the progress sent meanwhile: the newest says how far the reading got
        while True:
            msg = c.read()
            if msg.get("method") == "rewrite/progress":
                p = msg["params"]
    except (TimeoutError, OSError):
        c.sock.settimeout(600)
    t = time.perf_counter()
    if how == "rewrite/cancel":
        c.call("rewrite/cancel", {"sessionId": sid})
    elif how == "disconnect":
        c.close()
    else:
        server.proc.send_signal(signal.SIGTERM)
    read, out, rate = -1, {}, p.get("readTokPerSec", 0.0)
    if how == "disconnect":
        while f"session {sid}: cancelled" not in server.log.read_text():
            time.sleep(0.01)
        seconds = time.perf_counter() - t
        read = _read_in_log(server.log.read_text(), sid)
    elif how == "SIGTERM":
        try:  # its rewrite/done, if the server sends one before it closes the connection
            done = c.wait_notification("rewrite/done", lambda p: p["sessionId"] == sid, 600)
            read, rate = done["stats"]["prompt_tokens"], done["stats"]["prefill_tps"]
        except (OSError, Closed):
            pass
        seconds = time.perf_counter() - t
        server.proc.wait(600)
        out["exit_seconds"] = round(time.perf_counter() - t, 3)  # until the process is gone
    else:
        done = c.wait_notification("rewrite/done", lambda p: p["sessionId"] == sid, 600)
        seconds = time.perf_counter() - t
        read, rate = done["stats"]["prompt_tokens"], done["stats"]["prefill_tps"]
    c.close()
    chunk_s = PREFILL_CHUNK / rate if rate else 0.0  # at the rate measured
    return {
        "seconds": round(seconds, 3),
        "chunk_seconds": round(chunk_s, 3),
        "prompt_tokens": p.get("promptTokens", -1),
        "read_when_ended": p.get("readTokens", -1),
        "read_in_all": read,
        **out,
    }


def _read_in_log(text: str, sid: str) -> int:
    for line in text.splitlines():
        if f"session {sid}: cancelled" in line and "prompt tokens read" in line:
            return int(line.rsplit("(", 1)[1].split()[0])
    return -1


def main(argv: list[str] | None = None) -> int:
    from .record import save_record

    ap = argparse.ArgumentParser(prog="specedit bench server", description=__doc__)
    ap.add_argument("--model", default="qwen2.5-coder-0.5b")
    ap.add_argument("--seconds", type=float, default=180.0)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cancel-lines", type=int, default=300)
    ap.add_argument("--cancel-after", type=float, default=1.0, help="seconds into the prefill")
    ap.add_argument("--no-cancel", action="store_true", help="only the soak")
    ap.add_argument("--no-soak", action="store_true", help="only the cancel check")
    ap.add_argument("--ctx", dest="n_ctx", default="16384")
    ap.add_argument("--out", default="bench/results")
    a = ap.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    record: dict[str, Any] = {"model": a.model}
    soak_text = _stdlib_head("colorsys.py", 40)
    with tempfile.TemporaryDirectory() as tmp:
        if not a.no_cancel:
            srv = start_server(a.model, Path(tmp) / "cancel", ["--ctx", a.n_ctx])
            try:
                text = _stdlib_head("argparse.py", a.cancel_lines)
                record["cancel"] = cancel_latency(srv, text, a.cancel_after)
            finally:
                if srv.proc.poll() is None:
                    srv.proc.kill()
                srv.proc.wait()
        rep = None
        if not a.no_soak:
            srv = start_server(a.model, Path(tmp) / "soak", ["--ctx", a.n_ctx])
            try:
                rep = soak(
                    srv.sock,
                    srv.proc.pid,
                    seconds=a.seconds,
                    clients=a.clients,
                    text=soak_text,
                    seed=a.seed,
                    tcp=srv.tcp,
                )
            finally:
                srv.proc.send_signal(signal.SIGTERM)
                srv.proc.wait(600)
            record["soak"] = rep.to_json()
    path = save_record(record, a.out, "server")
    for how, r in record.get("cancel", {}).items():
        sys.stdout.write(
            f"cancel by {how}: over in {r['seconds']:.2f} s (a chunk: {r['chunk_seconds']:.2f} s); "
            f"{r['read_in_all']} of {r['prompt_tokens']} prompt tokens read "
            f"({r['read_when_ended']} when ended)\n"
        )
    if rep is None:
        sys.stdout.write(f"{path}\n")
        return 0
    sys.stdout.write(
        f"soak: {rep.clients} clients for {rep.seconds:.0f} s: {rep.connections} connections, "
        f"{rep.requests} requests, actions {dict(rep.actions)}, done {dict(rep.done)}\n"
        f"  RSS {rep.rss_kb_before / 1024:.1f} MiB before, {rep.rss_kb_peak / 1024:.1f} peak, "
        f"{rep.rss_kb_after / 1024:.1f} after; descriptors {rep.fds_before} before, "
        f"{rep.fds_after} after; answers after: {rep.answers_after}; "
        f"{len(rep.errors)} errors {rep.errors[:5]}\n{path}\n"
    )
    return 0 if rep.answers_after and not rep.errors else 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
