"""llama.cpp's own ``llama-server`` as a peer: its binary, its configurations, one server.

Contract:

* :func:`binary` is the built ``llama-server``: ``$SPECEDIT_LLAMA_SERVER``, else the cache
  that ``scripts/build-llama-server.sh`` (``make llama-server``) fills,
  ``~/.cache/specedit/llama-server/<llama-cpp-python version>/llama-server``
  (``$SPECEDIT_LLAMA_SERVER_CACHE`` moves it); None when there is none. :func:`build`
  runs the script (about 10 minutes on 2 cores, once per machine) and returns the path.
* :data:`CONFIGS`: the speculation settings compared, by name (:class:`SpecConfig`): none,
  and the model-free drafters with the settings llama.cpp's ``docs/speculative.md`` gives
  (``ngram-simple``, ``ngram-map-k``, ``ngram-mod``), plus ``ngram-mod`` with shorter
  drafts (what the docs suggest for dense models).
* :func:`server_args` is the command line: loopback, one slot, the same context and threads
  as specedit, the config's flags.
* :class:`LlamaServer` starts one on a free loopback port, waits for ``/health`` and stops it
  (SIGTERM, then SIGKILL); :meth:`LlamaServer.complete` sends token ids to ``/completion``
  (the same prompt specedit runs, token for token), :meth:`LlamaServer.chat` sends a chat
  request to ``/v1/chat/completions``; both are greedy (temperature 0, a fixed seed) and
  return a :class:`Reply`.
* :func:`parse_timings` reads the ``timings`` object llama-server puts in every answer into
  :class:`Timings`. Its decode tok/s is specedit's definition: tokens after the first over
  the time after the first, ``(predicted_n - 1) / predicted_ms`` (``predicted_ms`` starts when
  the prompt's last batch is done, whose logits give the first token). The llama.cpp that
  llama-cpp-python 0.3.36 vendors computes its ``predicted_per_second`` the same way
  (``server_slot_stats::n_gen_tps``); it is kept beside it. Acceptance is
  ``draft_n_accepted / draft_n`` when the server reports drafts.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

ROOT = Path(__file__).resolve().parent.parent
BUILD_SCRIPT = ROOT / "scripts" / "build-llama-server.sh"
SEED = 1234


@dataclass(frozen=True)
class SpecConfig:
    """One way to run llama-server's speculation."""

    name: str
    args: tuple[str, ...] = ()
    """Its command-line flags."""
    doc: str = ""
    """Where the settings come from."""


CONFIGS: dict[str, SpecConfig] = {
    c.name: c
    for c in (
        SpecConfig("none", (), "no speculation: one token per call"),
        SpecConfig(
            "ngram-simple",
            ("--spec-type", "ngram-simple", "--spec-draft-n-max", "64"),
            "docs/speculative.md's example",
        ),
        SpecConfig(
            "ngram-map-k",
            ("--spec-type", "ngram-map-k", "--spec-draft-n-max", "64"),
            "docs/speculative.md's example",
        ),
        SpecConfig(
            "ngram-mod",
            ("--spec-type", "ngram-mod", "--spec-ngram-mod-n-match", "24")
            + ("--spec-ngram-mod-n-min", "48", "--spec-ngram-mod-n-max", "64"),
            "docs/speculative.md's sample usage (also the defaults)",
        ),
        SpecConfig(
            "ngram-mod-short",
            ("--spec-type", "ngram-mod", "--spec-ngram-mod-n-match", "12")
            + ("--spec-ngram-mod-n-min", "8", "--spec-ngram-mod-n-max", "32"),
            "shorter keys and drafts (the docs: dense models can reduce n-min and n-max)",
        ),
    )
}
NGRAM = tuple(n for n in CONFIGS if n != "none")


def _llama_cpp_python_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("llama_cpp_python")
    except PackageNotFoundError:
        return "0.3.36"


def cache_dir() -> Path:
    """Where ``scripts/build-llama-server.sh`` keeps the binary of this llama-cpp-python."""
    base = os.environ.get("SPECEDIT_LLAMA_SERVER_CACHE")
    root = Path(base) if base else Path.home() / ".cache" / "specedit" / "llama-server"
    return root / _llama_cpp_python_version()


def binary() -> Path | None:
    """The llama-server to run, or None (contract)."""
    env = os.environ.get("SPECEDIT_LLAMA_SERVER")
    path = Path(env) if env else cache_dir() / "llama-server"
    return path if path.is_file() and os.access(path, os.X_OK) else None


def build() -> Path:
    """Build llama-server (or find it built) with ``scripts/build-llama-server.sh``."""
    r = subprocess.run(
        ["bash", str(BUILD_SCRIPT), sys.executable], stdout=subprocess.PIPE, text=True, check=True
    )
    return Path(r.stdout.strip().splitlines()[-1])


def version(path: Path) -> str:
    """``llama-server --version``'s line (``version: N (commit)``)."""
    r = subprocess.run([str(path), "--version"], capture_output=True, text=True, timeout=60)
    lines = [ln for ln in (r.stdout + r.stderr).splitlines() if ln.startswith("version")]
    return lines[0] if lines else "?"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def server_args(
    path: Path, model: Path, port: int, config: SpecConfig, n_ctx: int, threads: int
) -> list[str]:
    """The command line of one llama-server (contract)."""
    return [
        str(path), "-m", str(model), "--host", "127.0.0.1", "--port", str(port),
        "-c", str(n_ctx), "-np", "1", "-t", str(threads), "-tb", str(threads),
        "--seed", str(SEED), "--no-webui", *config.args,
    ]  # fmt: skip


@dataclass
class Timings:
    """What llama-server's ``timings`` say about one answer."""

    decode_tps: float
    """Tokens after the first over the time after the first (specedit's definition)."""
    predicted_n: int
    predicted_ms: float
    predicted_per_second: float
    """llama-server's own figure (the same, in this llama.cpp)."""
    prompt_n: int
    prompt_ms: float
    drafted: int | None = None
    accepted: int | None = None

    @property
    def acceptance(self) -> float | None:
        return self.accepted / self.drafted if self.drafted else None


def parse_timings(body: dict[str, Any]) -> Timings:
    """:class:`Timings` of an answer's ``timings`` (contract); KeyError when it has none."""
    t = body["timings"]
    n, ms = int(t["predicted_n"]), float(t["predicted_ms"])
    return Timings(
        decode_tps=(n - 1) / ms * 1000 if n > 1 and ms > 0 else 0.0,
        predicted_n=n,
        predicted_ms=ms,
        predicted_per_second=float(t.get("predicted_per_second") or 0.0),
        prompt_n=int(t.get("prompt_n", 0)),
        prompt_ms=float(t.get("prompt_ms", 0.0)),
        drafted=t.get("draft_n"),
        accepted=t.get("draft_n_accepted"),
    )


@dataclass
class Reply:
    text: str
    timings: Timings
    wall_s: float
    """Seconds from sending the request to the whole answer, as the client saw them."""
    finish: str = ""
    raw: dict[str, Any] = field(default_factory=dict)


def post(url: str, body: dict[str, Any], timeout: float = 3600) -> tuple[dict[str, Any], float]:
    """The JSON answer of ``POST url`` and the seconds it took."""
    req = urllib.request.Request(
        url, json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    t = time.perf_counter()
    with urllib.request.urlopen(req, timeout=timeout) as r:
        out = json.loads(r.read())
    return out, time.perf_counter() - t


class LlamaServer:
    """One llama-server process on loopback (contract); a context manager."""

    def __init__(
        self,
        path: Path,
        model: Path,
        config: SpecConfig,
        n_ctx: int = 8192,
        threads: int | None = None,
        start_timeout: float = 300,
    ) -> None:
        self.path, self.model, self.config = path, model, config
        self.n_ctx, self.threads = n_ctx, threads or max(1, os.cpu_count() or 1)
        self.start_timeout = start_timeout
        self.port = 0
        self.proc: subprocess.Popen | None = None
        self._log = tempfile.TemporaryFile(mode="w+")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def log_tail(self, n: int = 3000) -> str:
        self._log.seek(0)
        return self._log.read()[-n:]

    def start(self) -> LlamaServer:
        self.port = free_port()
        cmd = server_args(self.path, self.model, self.port, self.config, self.n_ctx, self.threads)
        log.info("starting %s", " ".join(cmd))
        self.proc = subprocess.Popen(
            cmd, stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
        )
        deadline = time.monotonic() + self.start_timeout
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"llama-server exited ({self.proc.returncode}):\n{self.log_tail()}"
                )
            try:
                with urllib.request.urlopen(f"{self.url}/health", timeout=5) as r:
                    if r.status == 200:
                        return self
            except (OSError, urllib.error.HTTPError):
                pass  # not listening yet, or 503 while the model loads
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"llama-server never became healthy:\n{self.log_tail()}")
            time.sleep(0.2)

    def stop(self) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def __enter__(self) -> LlamaServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
        self._log.close()

    def complete(self, ids: list[int], max_tokens: int, stop: list[str] | None = None) -> Reply:
        """Greedy completion of the token ids ``ids`` (no chat template: they are the
        prompt), at most ``max_tokens``, ending at a ``stop`` string."""
        body = {
            "prompt": ids,
            "n_predict": max_tokens,
            "temperature": 0.0,
            "seed": SEED,
            "stop": stop or [],
            "cache_prompt": False,
            "repeat_penalty": 1.0,
        }
        out, wall = post(f"{self.url}/completion", body)
        finish = out.get("stop_type", "")
        return Reply(out.get("content", ""), parse_timings(out), wall, finish, out)

    def chat(self, request: dict[str, Any]) -> Reply:
        """The chat ``request`` (an OpenAI body, sent as it is but for greedy sampling and
        the fixed seed) to ``/v1/chat/completions``."""
        body = {**request, "temperature": 0, "seed": SEED, "stream": False}
        out, wall = post(f"{self.url}/v1/chat/completions", body)
        choice = out["choices"][0]
        return Reply(
            choice["message"].get("content") or "",
            parse_timings(out),
            wall,
            choice.get("finish_reason", ""),
            out,
        )
