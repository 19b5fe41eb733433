""":SpeceditAsk in a real headless Neovim against the real socket server over the scripted
model (``tests/scripted.py``: it writes a given answer to a prompt with a given question):
the current buffer and the other loaded file buffers go out as ``contextFiles``, the answer
shows in a scratch split with each citation marked ✓ (found in its file) or ✗ and the
problem; a misquote (``verbatim = false``, so the guard lets the model write it) gets ✗.
Skipped where nvim is not installed (``nvim_helpers.nvim``)."""

from __future__ import annotations

import json

import pytest
from nvim_helpers import run_lua
from rpc_client import RpcClient
from scripted import scripted_loaded

from specedit.app.server import ServerThread

pytestmark = pytest.mark.timeout(300)

A = "# Releasing\n\nRun make release from the main branch.\nTag the commit with the version.\n"
B = "# Testing\n\nRun make test before a release.\n"
Q_GOOD = "How is a release made?"
GOOD = (
    "With make, after the tests.\n\n"
    "[a.md]\n```\nRun make release from the main branch.\n```\n\n"
    "[b.md]\n```\nRun make test before a release.\n```\n"
)
Q_BAD = "Which branch?"
BAD = "Any.\n\n[a.md:L3]\n```\nRun make release from any branch.\n```\n"

DRIVER = r"""
  local sp = require('specedit')
  local ask = require('specedit.ask')
  local client = require('specedit.client')
  -- verbatim off: the guard (app/answer/quote_guard.py) is the model's business, not the plugin's
  sp.setup({ socket = os.getenv('SPECEDIT_SOCK'), auto_start = false, warm = false,
             ask = { verbatim = false, maxTokens = 200 } })
  local sent = {}
  local request = client.request
  client.request = function(method, params, cb)
    if method == 'answer/start' then table.insert(sent, params) end
    return request(method, params, cb)
  end
  vim.cmd('edit b.md')
  vim.cmd('edit a.md')
  vim.cmd('enew')  -- an unnamed scratch of the user's: not a file, not sent
  vim.cmd('buffer a.md')
  local function wait_done(n)
    vim.wait(30000, function() return ask.last ~= nil and #sent >= n and next(ask.sessions) == nil end, 20)
    return vim.api.nvim_buf_get_lines(0, 0, -1, false)
  end
  vim.cmd('SpeceditAsk How is a release made?')
  out.good = wait_done(1)
  out.good_name = vim.api.nvim_buf_get_name(0)
  out.good_buftype = vim.bo.buftype
  out.good_modifiable = vim.bo.modifiable
  out.files = {}
  for _, f in ipairs(sent[1].contextFiles) do
    table.insert(out.files, { vim.fn.fnamemodify(f.path, ':t'), f.text })
  end
  out.question = sent[1].question
  out.windows = #vim.api.nvim_tabpage_list_wins(0)
  ask.last = nil
  vim.cmd('wincmd p')  -- back to a.md
  sp.ask('Which branch?', 0, { maxTokens = 100 })
  out.bad = wait_done(2)
  out.extra = { sent[1].verbatim, sent[1].maxTokens, sent[2].verbatim, sent[2].maxTokens }
"""


@pytest.fixture
def server(tmp_path, monkeypatch):
    monkeypatch.setenv("SPECEDIT_STATE_DIR", str(tmp_path / "state"))
    loaded = scripted_loaded([(Q_GOOD, GOOD), (Q_BAD, BAD)])
    with ServerThread(loaded, tmp_path / "run" / "rpc.sock") as st:
        yield st


def test_ask_shows_the_answer_with_checked_citations(tmp_path, server):
    (tmp_path / "a.md").write_text(A)
    (tmp_path / "b.md").write_text(B)
    out = run_lua(tmp_path, DRIVER, env={"SPECEDIT_SOCK": str(server.socket_path)})
    assert out["question"] == Q_GOOD
    assert out["extra"] == [False, 200, False, 100]  # setup()'s ask, then ask()'s opts
    assert out["files"] == [["a.md", A], ["b.md", B]]  # the current buffer first
    assert out["good"] == [
        "Q: " + Q_GOOD,
        "",
        *GOOD.rstrip("\n").split("\n"),
        "",
        "✓ a.md:L3",
        "✓ b.md:L3",
    ], json.dumps(out, indent=1)
    assert out["good_name"].startswith("specedit://answer/")
    assert out["good_buftype"] == "nofile" and out["good_modifiable"] is False
    assert out["windows"] == 2  # a split beside the buffer
    assert out["bad"][:2] == ["Q: " + Q_BAD, ""]
    assert out["bad"][-1].startswith("✗ a.md:L3: ") and len(out["bad"][-1]) > len("✗ a.md:L3: ")
    assert any("not found" in n for n in out["notes"]), out["notes"]


def test_ask_reports_a_refused_request(tmp_path, server):
    body = r"""
  require('specedit').setup({ socket = os.getenv('SPECEDIT_SOCK'), auto_start = false, warm = false })
  vim.cmd('enew')
  local buf = require('specedit').ask('q', 0, { style = 'poem' })
  vim.wait(10000, function() return #out.notes > 0 end, 20)
  out.lines = vim.api.nvim_buf_get_lines(buf, 0, -1, false)
"""
    out = run_lua(tmp_path, body, env={"SPECEDIT_SOCK": str(server.socket_path)})
    assert 'style must be "quote" or "free"' in out["notes"][-1]
    assert out["lines"][-1].startswith("(error: ")
    c = RpcClient.unix(server.socket_path)  # the server serves on
    assert c.call("initialize", {"client": "pytest"})["server"] == "specedit"
    c.close()
