"""Clients nobody here wrote, against ``specedit serve --http`` with the 0.5B.

``make test-clients`` runs these (marker ``clients``, only with ``SPECEDIT_CLIENTS=1``:
they are not part of ``make test``). The server is the real command line, ``specedit serve
--http 127.0.0.1:PORT --model qwen2.5-coder-0.5b``, in its own process, stopped with
SIGTERM at the end (it must exit 0). The clients:

* the official ``openai`` SDK (this venv): its stream helper, which checks the chunks and
  builds the final completion (with the usage chunk and ``prediction``'s counts);
* litellm's ``completion()`` and aider, from their own venv (``.venv-clients``, made by
  ``make test-clients``; ``$SPECEDIT_CLIENTS_VENV`` names another). aider makes a
  whole-format and a diff-format edit of a small file. The diff-format one is an expected
  failure only as measured (:data:`DIFF_0_5B`): the reply holds no SEARCH/REPLACE block at
  all; any other failure (aider's exit, a block aider could not apply) fails;
* Continue's CLI, ``cn -p`` (npm's ``@continuedev/cli``, in ``.venv-clients/node``): with
  its tools it is refused by name (specedit serves no tool calls); without them
  (``--exclude '*'``) it prints the model's answer.

Each test asserts what the client did (the text it received, the file on disk changed),
never the model's exact words (README, "Real models in tests": the server decodes
speculatively). A client that is not installed is a skip that says how to install it,
checked before the server starts.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from specedit.models.catalog import TEST_MODEL

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / os.environ.get("SPECEDIT_CLIENTS_VENV", ".venv-clients")  # absolute stays so
CLIENT_ENV = {
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # litellm reads its model list from its wheel
    "AIDER_ANALYTICS": "false",
    "AIDER_CHECK_UPDATE": "false",
}

pytestmark = [
    pytest.mark.clients,
    pytest.mark.timeout(1200),
    pytest.mark.skipif(
        os.environ.get("SPECEDIT_CLIENTS") != "1",
        reason="real clients against the server: make test-clients",
    ),
]

FILE = 'def greet(name):\n    return "Hello, " + name\n\n\nprint(greet("world"))\n'


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str, timeout: float = 5) -> dict:
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return json.loads(r.read())


@pytest.fixture(scope="module")
def served(qwen05_path, tmp_path_factory):
    """``specedit serve --http`` over the 0.5B: (base URL, model id)."""
    port = _free_port()
    state = tmp_path_factory.mktemp("serve-http")
    env = {**os.environ, "SPECEDIT_STATE_DIR": str(state)}
    cmd = [
        sys.executable,
        "-m",
        "specedit.app.cli",
        "serve",
        "--http",
        f"127.0.0.1:{port}",
    ]
    err = (state / "stderr").open("w")
    proc = subprocess.Popen([*cmd, "--model", TEST_MODEL], env=env, stderr=err)
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 600  # a first load measures the model (minutes)
        while True:
            assert proc.poll() is None, (state / "stderr").read_text()
            try:
                (card,) = _get(f"{base}/models")["data"]
                break
            except OSError:
                assert time.monotonic() < deadline, "the server never answered"
                time.sleep(0.5)
        yield base, card["id"]
    finally:
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(120)
        err.close()
    log = state / "logs" / "server.log"
    runs = [ln for ln in log.read_text().splitlines() if "tokens/call" in ln]
    print("\nserve --http, each request:\n" + "\n".join(runs))  # the figures, with -s
    assert code == 0, (state / "stderr").read_text()


def _client_python(module: str) -> Path:
    py = VENV / "bin" / "python"
    if not py.exists():
        pytest.skip(f"no {VENV} (make test-clients makes it, with aider-chat and litellm)")
    r = subprocess.run([str(py), "-c", f"import {module}"], capture_output=True, timeout=300)
    if r.returncode:
        pytest.skip(f"{module} is not installed in {VENV}")
    return py


# Each client is a module fixture named before ``served`` in a test's arguments, so a
# missing client skips before the server loads the model.


@pytest.fixture(scope="module")
def openai_sdk():
    return pytest.importorskip("openai", reason="the openai SDK is in the test extra")


@pytest.fixture(scope="module")
def litellm_python() -> Path:
    return _client_python("litellm")


@pytest.fixture(scope="module")
def aider_python() -> Path:
    return _client_python("aider")


@pytest.fixture(scope="module")
def cn() -> Path:
    path = VENV / "node" / "node_modules" / ".bin" / "cn"
    if not path.exists():
        pytest.skip(f"no {path} (make test-clients installs @continuedev/cli there with npm)")
    return path


# ---- the openai SDK ------------------------------------------------------------------------


def test_openai_sdk_stream_helper_builds_the_answer(openai_sdk, served):
    """The SDK's own stream helper (``chat.completions.stream``): it checks the chunks'
    order as it reads and builds the final completion from them."""
    openai = openai_sdk
    base, model = served
    client = openai.OpenAI(base_url=base, api_key="unused", max_retries=0, timeout=600)
    with client.chat.completions.stream(
        model=model,
        messages=[{"role": "user", "content": f"Add a docstring to greet.\n\n{FILE}"}],
        temperature=0,
        max_tokens=48,
        stream_options={"include_usage": True},
        prediction={"type": "content", "content": FILE},
    ) as stream:
        deltas = [e.delta for e in stream if e.type == "content.delta"]
        try:
            final = stream.get_final_completion()
        except openai.LengthFinishReasonError as e:  # the helper's parse step refuses a
            final = e.completion  # cut answer, and hands the completion it built with it
    text = final.choices[0].message.content
    assert text.strip() and len(deltas) > 1 and "".join(deltas) == text  # in pieces
    assert final.choices[0].finish_reason in ("stop", "length")
    d = final.usage.completion_tokens_details
    assert final.usage.completion_tokens > 0
    assert d.accepted_prediction_tokens + d.rejected_prediction_tokens > 0


# ---- litellm -------------------------------------------------------------------------------

LITELLM = """
import json, sys, litellm
base, model, prompt = sys.argv[1:4]
kw = dict(model="openai/" + model, api_base=base, api_key="unused", temperature=0,
          max_tokens=32, messages=[{"role": "user", "content": prompt}])
r = litellm.completion(**kw)
streamed = "".join(c.choices[0].delta.content or "" for c in litellm.completion(stream=True, **kw))
print(json.dumps({"text": r.choices[0].message.content, "finish": r.choices[0].finish_reason,
                  "tokens": r.usage.completion_tokens, "streamed": streamed}))
"""


def test_litellm_completion_plain_and_streamed(litellm_python, served):
    py = litellm_python
    base, model = served
    prompt = f"What does greet return?\n\n{FILE}"
    r = subprocess.run(
        [str(py), "-c", LITELLM, base, model, prompt],
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, **CLIENT_ENV},
    )
    assert r.returncode == 0, r.stderr[-2000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["text"].strip() and out["finish"] in ("stop", "length") and out["tokens"] > 0
    assert out["streamed"].strip()


# ---- aider ---------------------------------------------------------------------------------


DIFF_0_5B = (
    "the 0.5B answers aider's diff prompt with the line aider puts before the request "
    "('Ok, any changes I propose will be to those files.', 12 tokens) and no SEARCH/REPLACE "
    "block, so aider edits nothing: in every run here (aider sends temperature 0), and the "
    "same decoded plainly, so it is the model's answer (README, Clients: aider)"
)


@pytest.mark.parametrize("edit_format", ["whole", "diff"])
def test_aider_edits_a_file(aider_python, served, tmp_path, edit_format):
    py = aider_python
    base, model = served
    path = tmp_path / "greet.py"
    path.write_text(FILE)
    cmd = [
        str(py), "-m", "aider", "--model", f"openai/{model}", "--openai-api-base", base,
        "--openai-api-key", "unused", "--edit-format", edit_format, "--yes-always",
        "--no-git", "--no-auto-commits", "--no-show-model-warnings", "--no-check-update",
        "--no-analytics", "--no-pretty", "--no-stream", "--map-tokens", "0",
        "--no-auto-lint", "--no-show-release-notes", "--input-history-file", str(tmp_path / "h"),
        "--chat-history-file", str(tmp_path / "c.md"),
        "--message", "Change the greeting from Hello to Hi.", str(path),
    ]  # fmt: skip
    r = subprocess.run(
        cmd,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, **CLIENT_ENV},
        stdin=subprocess.DEVNULL,
    )
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    after = path.read_text()
    if edit_format == "diff" and after == FILE and "<<<<<<< SEARCH" not in r.stdout:
        pytest.xfail(DIFF_0_5B)  # only this, as measured: the reply had no block at all
    assert after != FILE, r.stdout[-3000:]  # aider wrote the model's edit to the file


# ---- Continue's CLI --------------------------------------------------------------------------

CN_CONFIG = """\
name: specedit
version: 0.0.1
schema: v1
models:
  - name: specedit
    provider: openai
    model: {model}
    apiBase: {base}
    apiKey: unused
    roles: [chat, edit, apply]
"""


def test_continue_cli_headless(cn, served, tmp_path):
    """``cn -p`` (headless) with a ``config.yaml`` whose model is ``provider: openai`` at
    ``apiBase``: with its tools (the default) the request is refused by name and cn exits
    1 saying so; with ``--exclude '*'`` it sends no tools and prints the answer."""
    base, model = served
    config = tmp_path / "config.yaml"
    config.write_text(CN_CONFIG.format(model=model, base=base))
    env = {
        **os.environ,
        "CONTINUE_GLOBAL_DIR": str(tmp_path / "continue"),  # not ~/.continue
        "CONTINUE_CLI_ENABLE_TELEMETRY": "0",
    }
    prompt = f"Change the greeting from Hello to Hi. Answer with the whole file.\n\n{FILE}"

    def cn_p(*flags: str) -> subprocess.CompletedProcess:
        cmd = [str(cn), "--config", str(config), *flags, "-p", prompt]
        kw = dict(capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL)
        return subprocess.run(cmd, cwd=tmp_path, env=env, **kw)

    refused = cn_p()  # cn's agent tools (file edits, terminal) go with every request
    assert refused.returncode == 1
    assert "tool calls are not supported" in refused.stdout + refused.stderr
    r = cn_p("--exclude", "*")
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert r.stdout.strip()  # the model's answer, printed
