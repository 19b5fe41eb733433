"""``answer/start`` of the socket server: a question answered over context files, with its
quotes checked (``app/server/answers.py``). The protocol runs on the scripted model
(``tests/scripted.py``: it writes a given answer to a prompt that holds a given question),
which a test can hold at its next call to act while a generation is in flight; one test
runs the real 0.5B end to end."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Sequence

import pytest
from rpc_client import RpcClient
from scripted import ScriptedModel, scripted_loaded

from specedit.app.server import ServerThread

pytestmark = pytest.mark.timeout(300)

NOTES = "# Releasing\n\nRun make release from the main branch.\nTag the commit with the version.\n"
Q_GOOD = "How is a release made?"
GOOD = (
    "With make, from the main branch.\n\n"
    "[notes.md]\n```\nRun make release from the main branch.\n```\n"
)
Q_BAD = "Where is a release made from?"
BAD = "From any branch.\n\n[notes.md:L3]\n```\nRun make release from any branch.\n```\n"
Q_LONG = "Tell me everything."
LONG = "Everything: " + "and more, " * 200


class HeldScripted(ScriptedModel):
    """A :class:`ScriptedModel` whose next call waits, once :meth:`hold` was called, until
    :attr:`release` is set (:attr:`holding` says it waits)."""

    def __init__(self, rules: Sequence[tuple[str, str]]) -> None:
        super().__init__(rules)
        self.holding = threading.Event()
        self.release = threading.Event()
        self._hold = False

    def hold(self) -> None:
        self.holding.clear()
        self.release.clear()
        self._hold = True

    def eval(self, tokens, pos, want):
        if self._hold:
            self._hold = False
            self.holding.set()
            assert self.release.wait(60), "the test never released the held call"
        return super().eval(tokens, pos, want)


@pytest.fixture(scope="module")
def model() -> HeldScripted:
    return HeldScripted([(Q_GOOD, GOOD), (Q_BAD, BAD), (Q_LONG, LONG)])


@pytest.fixture(scope="module")
def server(model, tmp_path_factory):
    loaded = scripted_loaded([])
    loaded.target = model
    d = tmp_path_factory.mktemp("srv")
    mp = pytest.MonkeyPatch()
    mp.setenv("SPECEDIT_STATE_DIR", str(d / "state"))
    with ServerThread(loaded, d / "run" / "rpc.sock") as st:
        yield st
    mp.undo()


@pytest.fixture
def client(server, model):
    c = RpcClient.unix(server.socket_path)
    c.call("initialize", {"client": "pytest"})
    yield c
    model.release.set()  # a failed test leaves nothing held
    c.close()


def _ask(c: RpcClient, question: str = Q_GOOD, **kw) -> dict:
    """answer/start; verbatim off, unless ``kw`` says otherwise: the guard (a test of its own,
    test_quote_guard.py) cannot close a fence a byte at a time (it offers ``` `` ``` whole)."""
    params = {
        "question": question,
        "contextFiles": [{"path": "notes.md", "text": NOTES}],
        "verbatim": False,
        **kw,
    }
    return c.call("answer/start", params)


def _done(c: RpcClient, sid: str, method: str = "answer/done") -> dict:
    return c.wait_notification(method, lambda p: p["sessionId"] == sid, 60)


def _held(model: HeldScripted) -> None:
    assert model.holding.wait(60), "the model never reached the held call"


def test_a_quote_of_a_context_file_is_found(client):
    started = _ask(client)
    assert started["queuePosition"] == 0
    done = _done(client, started["sessionId"])
    assert done["status"] == "done", done
    assert done["output"] == GOOD and done["quotesFound"] is True
    (cite,) = done["citations"]
    assert cite == {
        "file": "notes.md",
        "lines": None,
        "quote": "Run make release from the main branch.",
        "found": True,
        "located": [3, 3],
        "source": "notes.md",
        "problem": "",
    }
    assert done["message"] == "1 of 1 quotes found"
    assert done["stats"]["generated_tokens"] == len(GOOD.encode()) and "elapsedMs" in done["stats"]
    # the last progress before the done has the whole text, in order
    progress = [
        p for p in client.notifications("answer/progress") if p["sessionId"] == done["sessionId"]
    ]
    running = [p for p in progress if p["state"] == "running"]
    assert running and running[-1]["text"] == GOOD
    assert [p["seq"] for p in running] == sorted(p["seq"] for p in running)
    # with the live figures rewrite/progress has: the last one counts every token
    assert running[-1]["phase"] == "generating"
    assert running[-1]["generatedTokens"] == len(GOOD.encode())
    assert not client.notifications("rewrite/done")


def test_a_misquote_is_not_found_and_says_why(client):
    done = _done(client, _ask(client, Q_BAD)["sessionId"])
    assert done["status"] == "done" and done["output"] == BAD
    assert done["quotesFound"] is False
    (cite,) = done["citations"]
    assert cite["found"] is False and cite["file"] == "notes.md" and cite["problem"]
    assert done["message"] == "0 of 1 quotes found"
    # verbatim (the default): the guard does not let the model write that quote
    guarded = _done(client, c_sid := _ask(client, Q_BAD, verbatim=True)["sessionId"])
    assert guarded["sessionId"] == c_sid and guarded["output"] != BAD


def test_context_files_are_read_from_disk_when_sent_without_text(client, tmp_path):
    f = tmp_path / "notes.md"
    f.write_text(NOTES)
    params = {"question": Q_GOOD, "contextFiles": [{"path": str(f)}], "verbatim": False}
    done = _done(client, client.call("answer/start", params)["sessionId"])
    assert done["status"] == "done" and done["quotesFound"] is True, done
    assert done["citations"][0]["source"] == str(f)
    err = client.request("answer/start", {**params, "contextFiles": [{"path": str(f) + "x"}]})
    assert err["error"]["code"] == -32803 and "contextFiles[0]" in err["error"]["message"]


@pytest.mark.parametrize(
    ("params", "words"),
    [
        ({"contextFiles": [{"path": "a.md", "text": "x"}]}, "question must be"),
        ({"question": " "}, "question must be"),
        ({"question": "q", "contextFiles": []}, "contextFiles must be"),
        ({"question": "q", "contextFiles": [{"text": "x"}]}, "contextFiles[0].path"),
        ({"question": "q", "contextFiles": [{"path": "rel.md"}]}, "absolute"),
        (
            {"question": "q", "contextFiles": [{"path": "a", "text": "x" * 4_000_001}]},
            "contextFiles[0].text is over 4,000,000 bytes",
        ),
        (
            {"question": "q", "contextFiles": [{"path": "a", "text": "x"}] * 2},
            "given twice",
        ),
        ({"question": "q", "style": "poem"}, 'style must be "quote" or "free"'),
        ({"question": "q", "maxTokens": 0}, "maxTokens must be"),
        ({"question": "q", "verbatim": "yes"}, "verbatim must be a boolean"),
    ],
)
def test_bad_params_get_one_clear_error(client, params, words):
    params = {"contextFiles": [{"path": "a.md", "text": "x"}], **params}
    err = client.request("answer/start", params)["error"]
    assert err["code"] == -32602 and words in err["message"], err


def test_cancel_a_running_answer_and_a_queued_one(server, client, model):
    model.hold()
    sid = _ask(client, Q_LONG)["sessionId"]
    _held(model)  # running: the prompt's prefill is in flight
    queued = _ask(client)
    assert queued["queuePosition"] == 1
    assert client.call("answer/cancel", {"sessionId": queued["sessionId"]}) == {"cancelled": True}
    gone = _done(client, queued["sessionId"])
    assert gone["status"] == "cancelled" and gone["output"] is None and gone["citations"] == []
    assert client.call("rewrite/cancel", {"sessionId": sid}) == {"cancelled": True}
    model.release.set()
    done = _done(client, sid)
    assert done["status"] == "cancelled" and done["output"] is None
    assert done["quotesFound"] is False
    # $/cancelRequest names the answer/start request
    model.hold()
    mid = client.request_async(
        "answer/start",
        {"question": Q_LONG, "contextFiles": [{"path": "n.md", "text": NOTES}], "verbatim": False},
    )
    sid = client.wait_response(mid)["result"]["sessionId"]
    _held(model)
    client.notify("$/cancelRequest", {"id": mid})
    model.release.set()
    assert _done(client, sid)["status"] == "cancelled"


def test_an_answer_queues_behind_a_running_rewrite(server, client, model):
    model.hold()
    text = "def add(a, b):\n    return a + b\n"
    rewrite = client.call(
        "rewrite/start",
        {"text": text, "instruction": "Rename add to plus", "options": {"edit": "whole"}},
    )["sessionId"]
    _held(model)
    started = _ask(client)
    assert started["queuePosition"] == 1
    queued = client.wait_notification(
        "answer/progress", lambda p: p["sessionId"] == started["sessionId"]
    )
    assert (queued["state"], queued["queuePosition"]) == ("queued", 1) and "text" not in queued
    # a client that leaves has its queued answers cancelled
    other = RpcClient.unix(server.socket_path)
    gone = other.call(
        "answer/start",
        {"question": Q_GOOD, "contextFiles": [{"path": "n.md", "text": NOTES}], "verbatim": False},
    )["sessionId"]
    other.close()
    job = server.server.scheduler.get(gone)
    deadline = time.monotonic() + 30
    while job.state != "done":
        assert time.monotonic() < deadline, "the answer of a client that left was never cancelled"
        time.sleep(0.01)
    assert job.done["status"] == "cancelled"
    model.release.set()
    ends = []  # the rewrite ends first, then the answer runs
    while len(ends) < 2:
        msg = client.read()
        if msg.get("method", "").endswith("/done"):
            ends.append((msg["method"], msg["params"]))
    assert [(m, p["sessionId"]) for m, p in ends] == [
        ("rewrite/done", rewrite),
        ("answer/done", started["sessionId"]),
    ]
    assert ends[1][1]["status"] == "done" and ends[1][1]["quotesFound"] is True


@pytest.mark.model
@pytest.mark.timeout(600)
def test_real_model_answers_with_well_formed_citations(qwen05, tmp_path, monkeypatch):
    monkeypatch.setenv("SPECEDIT_STATE_DIR", str(tmp_path / "state"))
    doc = tmp_path / "notes.md"
    doc.write_text(NOTES)
    with ServerThread(qwen05, tmp_path / "run" / "rpc.sock") as st:
        c = RpcClient.unix(st.socket_path, timeout=600)
        c.call("initialize", {"client": "pytest"})
        params = {"question": Q_GOOD, "contextFiles": [{"path": str(doc)}], "maxTokens": 48}
        done = _done_long(c, c.call("answer/start", params)["sessionId"])
        c.close()
    assert done["status"] == "done", done
    assert done["output"].strip() and done["stats"]["generated_tokens"] > 0
    keys = {"file", "lines", "quote", "found", "located", "source", "problem"}
    for cite in done["citations"]:
        assert set(cite) == keys and isinstance(cite["found"], bool)
        if cite["found"]:  # its parts (between "..."), in order, white space aside
            flat, at = " ".join(NOTES.split()), 0
            for part in re.split(r"\.\.\.|\u2026", cite["quote"]):
                part = " ".join(part.split())
                assert (at := flat.find(part, at)) >= 0, cite
        else:
            assert cite["problem"]
    assert done["quotesFound"] == all(c["found"] for c in done["citations"])


def _done_long(c: RpcClient, sid: str) -> dict:
    return c.wait_notification("answer/done", lambda p: p["sessionId"] == sid, 600)
