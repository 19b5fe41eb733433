"""The numpy toy model (``tests/toy.py``) behind the socket server, for tests of the wire.

* :func:`toy_loaded` wraps a :class:`ServerToy` in a ``LoadedModel``: the server tests run on
  it wherever they test the protocol, not the model. Its tokens are bytes (vocabulary 256), so
  any text is a prompt; its output never closes the fence, so a rewrite ends ``truncated``.
* :class:`ServerToy` adds what a server test needs to :class:`toy.ToyModel`: ``close``, a
  record of every call (``evals``) and a *hold*: the call at position ``hold_at`` (the second prefill chunk of a cold prompt, say) waits
  until the test releases it, so a test can act while a known call is in flight and then
  count the calls that follow (in calls, never in seconds). It has no prefix cache, so every
  prefill starts at 0; :class:`CachingToy` has one (``cache_tokens``), for warm-up tests.
* ``python tests/toy_server.py [specedit args]`` is the real ``specedit`` command line (e.g.
  ``serve --socket …``, signals, log file and all) with the toy in place of a catalog model.
  Its own flags come first: ``--toy-hold-at N --toy-gate DIR`` hold every call at position N
  until the file ``DIR/release.<i>`` exists, after writing ``DIR/held.<i>`` (i counts the
  holds from 1); ``--toy-ms-per-token MS`` makes each evaluated token cost that long, as a
  real model's do; ``--toy-nofile N`` lowers the descriptor limit to N; ``--toy-script FILE``
  serves a :class:`ScriptedToy` that writes FILE's text as its reply. Each call is logged
  (``toy eval at POS, N tokens``) at INFO, and the load config the command line gave (``toy
  in place of LoadConfig(...)``), so a test sees the flags that reached the loader.
  :func:`serve_process` starts one and waits until it answers.
* :class:`ScriptedToy` replies to every rewrite prompt with a fixed text, whatever the
  instruction: a result that closes its fence (``ok``, or a ``suspect`` one when the script
  drops the file's tail) or one that never does (``truncated``), over the real server.
"""

from __future__ import annotations

import argparse
import logging
import os
import resource
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import numpy as np  # noqa: E402
from rpc_client import RpcClient  # noqa: E402
from toy import ToyModel  # noqa: E402

from specedit.app.runtime.loaded_model import LoadedModel  # noqa: E402

log = logging.getLogger("specedit.toy")


class ServerToy(ToyModel):
    """:class:`ToyModel` with ``close``, an optional prefix cache, call records and a hold."""

    def __init__(self, *, ms_per_token: float = 0.0, n_ctx: int = 16384) -> None:
        super().__init__(256, n_ctx=n_ctx)
        self.ms_per_token = ms_per_token
        self.evals: list[tuple[int, int]] = []
        """``(pos, n_tokens)`` of every call, in order."""
        self.hold_at: int | None = None
        self.holding = threading.Event()
        """Set while the held call waits."""
        self.release = threading.Event()
        self.gate: Path | None = None
        """With a gate folder the hold is by files (another process's test drives it)."""
        self.holds = 0

    def hold(self, pos: int) -> None:
        """Hold the next call at position ``pos`` until :attr:`release` is set."""
        self.holding.clear()
        self.release.clear()
        self.hold_at = pos

    def eval(self, tokens: Sequence[int], pos: int, want: Sequence[int]):
        log.info("toy eval at %d, %d tokens", pos, len(tokens))
        if self.hold_at is not None and pos == self.hold_at:
            self._wait()
        self.evals.append((pos, len(tokens)))
        if self.ms_per_token:
            time.sleep(self.ms_per_token * len(tokens) / 1000)
        return super().eval(tokens, pos, want)

    def _wait(self) -> None:
        if self.gate is None:
            self.hold_at = None  # once
            self.holding.set()
            if not self.release.wait(120):
                raise RuntimeError("the test never released the held call")
            return
        self.holds += 1
        (self.gate / f"held.{self.holds}").touch()
        release = self.gate / f"release.{self.holds}"
        deadline = time.monotonic() + 120
        while not release.exists():
            if time.monotonic() > deadline:
                raise RuntimeError("the test never released the held call")
            time.sleep(0.01)

    def close(self) -> None:
        pass


class CachingToy(ServerToy):
    """A :class:`ServerToy` whose KV cache is visible (``PrefixCache``): runs reuse a prefix."""

    @property
    def cache_tokens(self) -> list[int]:
        return list(self.toks)


class ScriptedToy(ServerToy):
    """A :class:`ServerToy` whose reply to a rewrite prompt is ``script``, byte by byte.

    The reply starts after the opening fence line that follows the prompt's last
    ``Instruction: `` (``app.runtime.prompt``: the assistant turn is pre-filled with that fence), so
    at each position the next byte of the script gets all the probability; past the end of
    the script it writes newlines. A script that ends with the closing fence gives a complete
    result; one without it runs to ``maxTokens`` and ends ``truncated``.
    """

    def __init__(self, script: str, **kw) -> None:
        super().__init__(**kw)
        self.script = script.encode()

    def _row(self, upto: int) -> np.ndarray:
        ctx = bytes(t % 256 for t in self.toks[: upto + 1])
        at = ctx.rfind(b"Instruction: ")
        fence = ctx.find(b"```", at) if at >= 0 else -1
        start = ctx.find(b"\n", fence) + 1 if fence >= 0 else 0
        if start <= 0:  # still inside the prompt: any row will do
            return super()._row(upto)
        written = len(ctx) - start
        nxt = self.script[written] if written < len(self.script) else ord("\n")
        row = np.zeros(self.n_vocab, dtype=np.float32)
        row[nxt] = 30.0
        return row


def toy_loaded(target: ServerToy | None = None) -> LoadedModel:
    """A ``LoadedModel`` over a toy (a new :class:`ServerToy` unless given)."""
    return LoadedModel(
        target=target or ServerToy(),
        model_name="toy",
        model_path=Path("toy"),
        exact_block=64,
        exact_deltas={2: 0.0},
        costs={},
        load_s=0.0,
    )


@dataclass
class ServeProcess:
    """A real ``specedit serve`` process over the toy (:func:`serve_process`)."""

    proc: subprocess.Popen
    socket: Path
    log: Path
    gate: Path
    err: Path
    """Its stderr (a file: a pipe nobody reads would fill up and stall the server)."""

    def client(self) -> RpcClient:
        c = RpcClient.unix(self.socket)
        c.call("initialize", {"client": "pytest"})
        return c

    def held(self, i: int, timeout: float = 60) -> None:
        """Wait until the server's model holds its ``i``-th held call."""
        deadline = time.monotonic() + timeout
        while not (self.gate / f"held.{i}").exists():
            assert self.proc.poll() is None, self.stderr()
            assert time.monotonic() < deadline, "the model never reached the held call"
            time.sleep(0.01)

    def release(self, i: int) -> None:
        (self.gate / f"release.{i}").touch()

    def log_text(self) -> str:
        return self.log.read_text(encoding="utf-8") if self.log.exists() else ""

    def stderr(self) -> str:
        """What the process wrote to stderr so far."""
        return self.err.read_text(encoding="utf-8", errors="replace")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(30)


def toy_command(
    gate: Path | None = None,
    *,
    hold_at: int | None = None,
    nofile: int | None = None,
    script: str | None = None,
    ms_per_token: float | None = None,
) -> list[str]:
    """The command line of ``specedit`` over the toy, before its subcommand (module
    docstring); ``script`` is written next to the gate folder for ``--toy-script``."""
    cmd = [sys.executable, str(Path(__file__))]
    if gate is not None:
        cmd += ["--toy-gate", str(gate)]
    if hold_at is not None:
        cmd += ["--toy-hold-at", str(hold_at)]
    if nofile is not None:
        cmd += ["--toy-nofile", str(nofile)]
    if ms_per_token is not None:
        cmd += ["--toy-ms-per-token", str(ms_per_token)]
    if script is not None:
        assert gate is not None, "a script is written next to the gate folder"
        path = gate.parent / "toy-script.txt"
        path.write_text(script, encoding="utf-8")
        cmd += ["--toy-script", str(path)]
    return cmd


def serve_process(
    tmp: Path,
    *args: str,
    hold_at: int | None = None,
    nofile: int | None = None,
    script: str | None = None,
    ms_per_token: float | None = None,
) -> ServeProcess:
    """Start ``specedit serve`` over the toy in ``tmp`` (socket, log at INFO, gate folder) and
    return once it answers; ``hold_at`` holds each call at that position (module docstring),
    ``nofile`` sets the process's soft descriptor limit, ``script`` makes it a
    :class:`ScriptedToy` with that reply, ``ms_per_token`` slows each token down."""
    gate = tmp / "gate"
    gate.mkdir(parents=True, exist_ok=True)
    sock, log_file = tmp / "run" / "rpc.sock", tmp / "server.log"
    cmd = toy_command(
        gate, hold_at=hold_at, nofile=nofile, script=script, ms_per_token=ms_per_token
    )
    cmd += ["serve", "--socket", str(sock), "--log-file", str(log_file), *args]
    env = {**os.environ, "SPECEDIT_STATE_DIR": str(tmp / "state")}

    err = tmp / "stderr.txt"
    with err.open("wb") as fh:
        proc = subprocess.Popen(
            cmd, env=env, stdout=subprocess.DEVNULL, stderr=fh, start_new_session=True
        )
    sp = ServeProcess(proc, sock, log_file, gate, err)
    deadline = time.monotonic() + 120
    while not sock.with_suffix(".json").exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            sp.stop()
            raise RuntimeError(f"the toy server did not start: {sp.stderr()}")
        time.sleep(0.02)
    return sp


def main(argv: list[str]) -> int:
    """``specedit`` with the toy model (module docstring)."""
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("--toy-hold-at", type=int, default=None)
    p.add_argument("--toy-gate", type=Path, default=None)
    p.add_argument("--toy-ms-per-token", type=float, default=0.0)
    p.add_argument("--toy-nofile", type=int, default=None)
    p.add_argument("--toy-script", type=Path, default=None)
    own, rest = p.parse_known_args(argv)
    if own.toy_nofile is not None:
        hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
        resource.setrlimit(resource.RLIMIT_NOFILE, (own.toy_nofile, hard))
    if own.toy_script is not None:
        script = own.toy_script.read_text(encoding="utf-8")
        target = ScriptedToy(script, ms_per_token=own.toy_ms_per_token)
    else:
        target = ServerToy(ms_per_token=own.toy_ms_per_token)
    target.hold_at, target.gate = own.toy_hold_at, own.toy_gate

    import specedit.app.runtime.loaded_model as loaded_model_module
    from specedit.app.cli.main import main as cli_main

    def load_toy(config, *a, **kw) -> LoadedModel:
        log.info("toy in place of %r", config)
        return toy_loaded(target)

    loaded_model_module.load_model = load_toy
    return cli_main(rest)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
