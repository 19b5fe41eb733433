"""Record the exact chat request a real client sends, for ``specedit bench client``.

Contract: ``record_aider(edit_format, file, instruction, out, python=...)`` runs aider (the
``python`` of a venv that has it: ``make test-clients`` makes ``.venv-clients``) on a copy
of ``file`` against :class:`StubServer`, a loopback OpenAI endpoint that keeps every request
body and answers each with the file unchanged in the edit format's shape (aider then writes
nothing new and stops). The first chat request is saved to ``out`` as JSON:
``{"client", "version", "edit_format", "file", "instruction", "request"}``, ``request``
being the body as aider sent it (its messages, word for word). The bench replays it.

    python -m specedit.bench.client_record whole app/samples/inventory.py \\
        "Rename the class Inventory to Stock everywhere." bench/data/clients/aider-whole.json
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

ROOT = Path(__file__).resolve().parent.parent
CLIENT_ENV = {
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "AIDER_ANALYTICS": "false",
    "AIDER_CHECK_UPDATE": "false",
}
MODEL = "qwen2.5-coder-1.5b"


class StubServer:
    """A loopback OpenAI chat endpoint that records request bodies and answers ``reply``."""

    def __init__(self, reply: str) -> None:
        self.requests: list[dict[str, Any]] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # /v1/models
                self._send({"object": "list", "data": [{"id": MODEL, "object": "model"}]})

            def do_POST(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                stub.requests.append(json.loads(self.rfile.read(n) or b"{}"))
                self._send(
                    {
                        "id": f"chatcmpl-{len(stub.requests)}",
                        "object": "chat.completion",
                        "created": int(time.time()),
                        "model": MODEL,
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": reply},
                                "finish_reason": "stop",
                            }
                        ],
                        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                    }
                )

            def _send(self, body: dict) -> None:
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _reply(edit_format: str, rel: str, text: str) -> str:
    """The file unchanged, in aider's answer shape for ``edit_format``."""
    if edit_format == "whole":
        return f"{rel}\n```\n{text}```\n"
    return "No changes are needed."


def record_aider(
    edit_format: str, file: Path, instruction: str, out: Path, python: Path | None = None
) -> dict:
    """Run aider against a :class:`StubServer` and save its first chat request (contract)."""
    py = python or ROOT / ".venv-clients" / "bin" / "python"
    rel = file.resolve().relative_to(ROOT).as_posix() if file.is_absolute() else str(file)
    text = (ROOT / rel).read_text()
    stub = StubServer(_reply(edit_format, rel, text))
    try:
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            (work / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(ROOT / rel, work / rel)
            cmd = [
                str(py), "-m", "aider", "--model", f"openai/{MODEL}", "--openai-api-base",
                stub.url, "--openai-api-key", "unused", "--edit-format", edit_format,
                "--yes-always", "--no-git", "--no-auto-commits", "--no-show-model-warnings",
                "--no-check-update", "--no-analytics", "--no-pretty", "--no-stream",
                "--map-tokens", "0", "--no-auto-lint", "--no-show-release-notes",
                "--input-history-file", str(work / "h"), "--chat-history-file", str(work / "c.md"),
                "--message", instruction, rel,
            ]  # fmt: skip
            r = subprocess.run(
                cmd,
                cwd=work,
                capture_output=True,
                text=True,
                timeout=600,
                env={**os.environ, **CLIENT_ENV},
                stdin=subprocess.DEVNULL,
            )
            version = subprocess.run(
                [str(py), "-c", "import aider; print(aider.__version__)"],
                capture_output=True,
                text=True,
            ).stdout.strip()
    finally:
        stub.close()
    if r.returncode or not stub.requests:
        raise RuntimeError(f"aider failed ({r.returncode}): {r.stdout[-1500:]}{r.stderr[-1500:]}")
    rec = {
        "client": "aider",
        "version": version,
        "edit_format": edit_format,
        "file": rel,
        "instruction": instruction,
        "request": stub.requests[0],
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(rec, indent=1) + "\n")
    return rec


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="client_record", description=__doc__.split("\n")[0])
    p.add_argument("edit_format", choices=("whole", "diff"))
    p.add_argument("file", type=Path)
    p.add_argument("instruction")
    p.add_argument("out", type=Path)
    p.add_argument("--python", type=Path, default=None, help="a venv's python with aider")
    a = p.parse_args(argv)
    rec = record_aider(a.edit_format, a.file, a.instruction, a.out, a.python)
    n = len(rec["request"].get("messages", []))
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    log.info("%s: aider %s, %d messages", a.out, rec["version"], n)
    return 0


if __name__ == "__main__":
    sys.exit(main())
