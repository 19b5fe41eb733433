"""``specedit serve --http``: the OpenAI-compatible API, over the real 0.5B, through the
official ``openai`` client, curl and raw sockets for the wire format.

The model's exact words are never asserted (the server decodes speculatively, and block
sizes may move inexact logits): what holds whatever the blocks were is.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess

import pytest

from specedit.app.server.http_api import HttpApi, is_loopback, parse_address
from specedit.app.server.http_serve import HttpThread, load_token
from specedit.app.server.openai_wire import StopText, prediction_counts
from specedit.app.server.rpc import MAX_CONTENT_LENGTH

openai = pytest.importorskip("openai")

FILE = (
    "def area(width, height):\n"
    "    return width * height\n"
    "\n"
    "\n"
    "def perimeter(width, height):\n"
    "    return 2 * (width + height)\n"
)
ASK = "Rename the parameter width to w in both functions. Answer with the whole file only."


def messages() -> list[dict[str, str]]:
    return [
        {"role": "system", "content": "You edit code. Reply with the whole new file only."},
        {"role": "user", "content": f"{ASK}\n\n```python\n{FILE}```"},
    ]


@pytest.fixture(scope="module")
def api(qwen05):
    with HttpThread(qwen05) as th:
        yield th


@pytest.fixture(scope="module")
def client(api):
    return openai.OpenAI(base_url=api.base_url, api_key="unused", max_retries=0, timeout=300)


def model_id(api) -> str:
    return api.api.models[0]


# ---- pure parts ----------------------------------------------------------------------------


def test_stop_text_never_sends_part_of_a_stop_string():
    s = StopText(["END", "\n\n"])
    sent = "".join(s.feed(p) for p in ["ab", "cE", "N", "xyz", "\n", "\nrest"])
    assert sent + s.flush() == "abcENxyz" and s.stopped
    plain = StopText([])
    assert plain.feed("abc") == "abc" and plain.flush() == ""


def test_prediction_counts_are_openais_accepted_and_rejected_tokens():
    assert prediction_counts([1, 2, 3, 4, 5], [1, 2, 9, 4, 5, 6]) == (4, 1)
    assert prediction_counts([], [1, 2]) == (0, 0)
    assert prediction_counts([7, 8], []) == (0, 2)


def test_a_prediction_is_drafted_from_though_the_prompt_lacks_it():
    from specedit.engine.lookup import LookupDrafter
    from specedit.engine.prediction import BesideDrafter

    pred = [10, 11, 12, 13, 14, 15]
    prompt = [1, 2, 3]
    inner = LookupDrafter(spans=[(0, 6, "prediction"), (6, 9, "prompt")], prompt_len=9)
    d = BesideDrafter(inner, pred)
    draft = d.propose([*prompt, 10, 11], 3)  # the output began to copy the prediction
    assert draft.tokens.tolist() == [12, 13, 14] and draft.source == "prediction"
    draft = d.propose([*prompt, 10, 11, 12, 13], 8)  # the copy goes on, to the span's end
    assert draft.tokens.tolist()[:2] == [14, 15]
    assert d.propose([1], 3).tokens.tolist() == []  # a new, shorter context starts over


def test_addresses_and_loopback():
    assert parse_address("8000") == ("127.0.0.1", 8000)
    assert parse_address("0.0.0.0:9") == ("0.0.0.0", 9)
    assert parse_address("[::1]:80") == ("::1", 80)
    with pytest.raises(ValueError):
        parse_address("host:port")
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.2")


def test_token_file_is_private_and_made_once(tmp_path, monkeypatch):
    monkeypatch.setenv("SPECEDIT_STATE_DIR", str(tmp_path / "state"))
    token, new = load_token()
    again, new2 = load_token()
    assert new and not new2 and token == again and len(token) >= 32
    (path,) = (tmp_path / "state").rglob("http-token")
    assert path.stat().st_mode & 0o777 == 0o600


def test_a_non_loopback_address_needs_a_token(qwen05):
    from specedit.app.store.files import FileError

    with pytest.raises(FileError, match="bearer token"):
        HttpApi(qwen05, "0.0.0.0", 0)


# ---- the openai client --------------------------------------------------------------------


@pytest.mark.model
def test_models_list(client, api):
    ids = [m.id for m in client.models.list()]
    assert ids == [model_id(api)]


@pytest.mark.model
def test_chat_with_prediction_reports_accepted_and_rejected_tokens(client, api, qwen05):
    r = client.chat.completions.create(
        model=model_id(api),
        messages=messages(),
        temperature=0,
        max_tokens=60,
        prediction={"type": "content", "content": FILE},
    )
    text = r.choices[0].message.content
    assert text and r.choices[0].finish_reason in ("stop", "length")
    d = r.usage.completion_tokens_details
    n_pred = len(qwen05.target.tokenize(FILE))
    assert d.accepted_prediction_tokens + d.rejected_prediction_tokens == n_pred
    assert d.accepted_prediction_tokens > 0  # the answer copies most of the file
    extra = r.model_extra["specedit"]
    assert extra["prediction_tokens"] == n_pred and extra["backend"] == "llama.cpp"
    stats = extra["stats"]
    assert stats["generated_tokens"] == r.usage.completion_tokens
    assert (
        stats["drafted_by_source"].get("prediction", 0) + sum(stats["drafted_by_source"].values())
        > 0
    )  # lookup drafted (from the prompt or the prediction)
    assert extra["tokens_per_call"] > 1


@pytest.mark.model
def test_chat_streams_with_usage_and_prediction(client, api):
    stream = client.chat.completions.create(
        model=model_id(api),
        messages=messages(),
        temperature=0,
        max_tokens=40,
        stream=True,
        stream_options={"include_usage": True},
        prediction={"type": "content", "content": FILE},
    )
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    finishes = [c.choices[0].finish_reason for c in chunks if c.choices]
    assert text and finishes[-1] in ("stop", "length") and not any(finishes[:-1])
    assert chunks[0].choices[0].delta.role == "assistant"
    usage = chunks[-1].usage  # the usage chunk comes last, with no choices
    assert not chunks[-1].choices and usage.completion_tokens > 0
    d = usage.completion_tokens_details
    assert d.accepted_prediction_tokens + d.rejected_prediction_tokens > 0


@pytest.mark.model
def test_completions_cut_at_a_stop_string_and_count_the_length(client, api):
    r = client.completions.create(
        model=model_id(api), prompt=FILE + "\n\ndef", temperature=0, max_tokens=40, stop=["\n\n"]
    )
    c = r.choices[0]
    assert "\n\n" not in c.text and c.finish_reason == "stop"
    r2 = client.completions.create(
        model=model_id(api), prompt=FILE + "\n\n", temperature=0, max_tokens=3
    )
    n = r2.usage.completion_tokens  # 3, unless the model ended its answer before
    assert n <= 3 and (r2.choices[0].finish_reason == "length") == (n == 3)


@pytest.mark.model
def test_errors_come_in_openais_shape(client, api):
    with pytest.raises(openai.NotFoundError) as e:
        client.chat.completions.create(model="gpt-4o", messages=messages())
    assert e.value.code == "model_not_found"
    with pytest.raises(openai.BadRequestError) as e:
        client.chat.completions.create(model=model_id(api), messages=messages(), temperature=5)
    assert e.value.body["param"] == "temperature"
    with pytest.raises(openai.BadRequestError, match="only one choice"):
        client.chat.completions.create(model=model_id(api), messages=messages(), n=2)


@pytest.mark.model
def test_a_bearer_token_is_required_when_set(qwen05):
    with HttpThread(qwen05, token="s3cret") as th:
        bad = openai.OpenAI(base_url=th.base_url, api_key="wrong", max_retries=0)
        with pytest.raises(openai.AuthenticationError):
            bad.models.list()
        good = openai.OpenAI(base_url=th.base_url, api_key="s3cret", max_retries=0)
        assert [m.id for m in good.models.list()] == th.api.models


# ---- the wire, with curl and raw sockets ---------------------------------------------------


def _raw(api, data: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", api.api.port), timeout=30) as s:
        s.sendall(data)
        out = b""
        while chunk := s.recv(65536):
            out += chunk
        return out


def test_malformed_json_and_huge_bodies_are_refused(api):
    body = b"{not json"
    out = _raw(
        api,
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
        b"Content-Length: %d\r\n\r\n%s" % (len(body), body),
    )
    head, _, rest = out.partition(b"\r\n\r\n")
    assert (
        head.startswith(b"HTTP/1.1 400")
        and "not valid JSON" in json.loads(rest)["error"]["message"]
    )
    huge = MAX_CONTENT_LENGTH + 1
    out = _raw(
        api,
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n{" % huge,
    )
    head, _, rest = out.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 413") and json.loads(rest)["error"]["type"]
    out = _raw(api, b"GET /v2/nothing HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert out.startswith(b"HTTP/1.1 404")


@pytest.mark.model
@pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")
def test_curl_streams_server_sent_events(api):
    body = {
        "model": model_id(api),
        "messages": messages(),
        "temperature": 0,
        "max_tokens": 12,
        "stream": True,
        "prediction": {"type": "content", "content": FILE},
    }
    r = subprocess.run(
        ["curl", "-sSN", f"{api.base_url}/chat/completions", "-H", "Content-Type: application/json",
         "-d", json.dumps(body)],
        capture_output=True, text=True, timeout=300, check=True,
    )  # fmt: skip
    events = [line[6:] for line in r.stdout.split("\n\n") if line.startswith("data: ")]
    assert events[-1] == "[DONE]" and r.stdout.endswith("data: [DONE]\n\n")
    chunks = [json.loads(e) for e in events[:-1]]
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    assert chunks[-1]["choices"][0]["finish_reason"] in ("stop", "length")
    assert "specedit" in chunks[-1]


@pytest.mark.model
def test_a_client_that_leaves_is_cancelled_and_the_next_one_served(api, client):
    body = json.dumps(
        {"model": model_id(api), "prompt": FILE * 4, "max_tokens": 2000, "stream": True}
    ).encode()
    before = api.api.cancelled
    with socket.create_connection(("127.0.0.1", api.api.port), timeout=60) as s:
        s.sendall(
            b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s"
            % (len(body), body)
        )
        assert s.recv(65536).startswith(b"HTTP/1.1 200")  # the stream began: now leave
    r = client.completions.create(model=model_id(api), prompt="x = 1", max_tokens=2)
    assert r.choices[0].text is not None and api.api.cancelled == before + 1
