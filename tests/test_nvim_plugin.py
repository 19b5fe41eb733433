"""The Neovim plugin in headless Neovim, without a model: the socket checks against planted
sockets, the default socket path against the server's, :help, the prompt, :SpeceditStatus,
checkhealth, start failures, the review (hunk motions, truncated and suspect results) and
the progress text. The rewrite/done messages of the review test are built here as a newer
server sends them; test_nvim.py runs the plugin against a real server.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import sys
import threading
from pathlib import Path

import pytest
from nvim_helpers import PLUGIN, TEXT, run_lua

pytestmark = pytest.mark.timeout(300)


@pytest.mark.parametrize(
    "env",
    [
        {"XDG_RUNTIME_DIR": "/run/user/7"},
        {"XDG_RUNTIME_DIR": "/run/user/7/"},
        {"XDG_CACHE_HOME": "/xc", "HOME": "/h"},
        {"XDG_CACHE_HOME": "/xc//", "HOME": "/h"},
        {"HOME": "/h"},
        {"HOME": "/h/", "XDG_CACHE_HOME": "rel", "XDG_RUNTIME_DIR": "rel"},
    ],
)
def test_default_socket_agrees_with_the_server(tmp_path, monkeypatch, env):
    from specedit.app.server.paths import default_socket_path

    for k in ("XDG_RUNTIME_DIR", "XDG_CACHE_HOME"):
        monkeypatch.delenv(k, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    expected = str(default_socket_path())
    out = run_lua(tmp_path, "out.sock = require('specedit.client').default_socket()")
    assert out["sock"] == expected
    assert not expected.startswith(str(tmp_path))  # never the shared temp dir


class _Planted:
    """A listening Unix socket that records every connection and every byte sent to it."""

    def __init__(self, sock: Path) -> None:
        self.connections = 0
        self.received = b""
        self.srv = socket.socket(socket.AF_UNIX)
        self.srv.bind(str(sock))
        self.srv.listen(8)
        self.srv.settimeout(0.2)
        self.stop = False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop:
            try:
                c, _ = self.srv.accept()
            except OSError:
                continue
            self.connections += 1
            c.settimeout(1)
            try:
                while chunk := c.recv(65536):
                    self.received += chunk
            except OSError:
                pass
            c.close()

    def close(self) -> None:
        self.stop = True
        self.thread.join(5)
        self.srv.close()


def _plant(tmp_path: Path, how: str) -> Path:
    """A socket in a directory the plugins must refuse; returns the socket path to use."""
    real = tmp_path / "planted"
    real.mkdir(mode=0o700)
    if how == "other_uid":
        if os.getuid() != 0:
            pytest.skip("needs root to chown to another uid")
        os.chown(real, 54321, 54321)
        return real / "rpc.sock"
    if how == "mode":
        real.chmod(0o755)
        return real / "rpc.sock"
    link = tmp_path / "link"
    link.symlink_to(real)
    return link / "rpc.sock"


@pytest.mark.parametrize("how", ["other_uid", "mode", "symlink"])
def test_planted_socket_is_refused(tmp_path, how):
    sock = _plant(tmp_path, how)
    planted = _Planted(sock)
    marker = tmp_path / "server-started"
    f = tmp_path / "secret.py"
    f.write_text("API_KEY = 'sk-do-not-leak'\n")
    body = f"""
  local sp = require('specedit')
  local client = require('specedit.client')
  sp.setup({{ socket = {json.dumps(str(sock))}, auto_start = true,
              cmd = {{ '/bin/sh', '-c', 'touch {marker}' }} }})
  vim.cmd('edit {f}')
  vim.cmd('SpeceditRewrite leak it')
  vim.wait(5000, function() return #out.notes > 0 end, 20)
  local done = false
  client.ensure(function(c, e) out.ensure_err = e; done = true end)
  vim.wait(5000, function() return done end, 20)
  out.discovery = client.discovery() ~= nil
  out.probe = client.probe_sync({json.dumps(str(sock))}, 1000)
  out.status = vim.fn.execute('SpeceditStatus')
  vim.cmd('checkhealth specedit')
  out.health = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\\n')
"""
    try:
        out = run_lua(tmp_path, body)
    finally:
        planted.close()
    why = {
        "other_uid": "belongs to uid 54321, not to you; refusing it",
        "mode": "has mode 0755, not 0700; refusing it",
        "symlink": "is a symlink; refusing it",
    }[how]
    assert any(why in n for n in out["notes"]), out["notes"]
    assert why in out["ensure_err"] and why in out["status"] and why in out["health"]
    assert "ERROR" in out["health"]
    assert out["probe"] is False and out["discovery"] is False
    assert planted.connections == 0 and planted.received == b""  # nothing was sent
    assert not marker.exists()  # and no server was started for it


def test_help(tmp_path):
    """:help specedit works from the plugin's committed tags, every |link| in the help file
    leads somewhere, and the committed tags are what :helptags generates."""
    doc = PLUGIN / "doc" / "specedit.txt"
    links = sorted(set(re.findall(r"\|([^|\s]+)\|", doc.read_text())))
    copy = tmp_path / "doc"
    shutil.copytree(PLUGIN / "doc", copy)
    (copy / "tags").unlink()
    body = f"""
  vim.cmd('help specedit')
  out.file = vim.fn.expand('%:t')
  out.line = vim.api.nvim_get_current_line()
  out.missing = {{}}
  for _, tag in ipairs(vim.json.decode({json.dumps(json.dumps(links))})) do
    if not pcall(vim.cmd, 'help ' .. vim.fn.escape(tag, ' ')) then table.insert(out.missing, tag) end
  end
  for _, tag in ipairs({{ ':SpeceditRewrite', 'specedit-security', ':SpeceditStatus', 'specedit-keys' }}) do
    if not pcall(vim.cmd, 'help ' .. tag) then table.insert(out.missing, tag) end
  end
  vim.cmd('helptags {copy}')
"""
    out = run_lua(tmp_path, body)
    assert out["file"] == "specedit.txt" and "*specedit*" in out["line"]
    assert links and out["missing"] == []
    assert (copy / "tags").read_text() == (PLUGIN / "doc" / "tags").read_text()


def test_prompt_status_and_flags(tmp_path):
    """No instruction: the command asks (vim.ui.input) instead of E471. :SpeceditStatus can be
    captured even when vim.notify is replaced. gpu_layers/backend/model reach the server
    command line."""
    f = tmp_path / "m.py"
    f.write_text(TEXT)
    body = f"""
  local sp = require('specedit')
  local client = require('specedit.client')
  sp.setup({{ socket = {json.dumps(str(tmp_path / "run" / "rpc.sock"))}, auto_start = false,
              gpu_layers = 'all', backend = 'torch', model = 'qwen2.5-coder-0.5b' }})
  vim.cmd('edit {f}')
  vim.ui.input = function(opts, cb) out.prompt = opts.prompt; cb('Rename add to plus') end
  out.ok = pcall(vim.cmd, '1,2SpeceditRewrite')
  vim.wait(5000, function() return #out.notes > 0 end, 20)
  out.status = vim.fn.execute('SpeceditStatus')
  out.cmd = client.server_cmd()
"""
    out = run_lua(tmp_path, body)
    assert out["ok"] and out["prompt"].startswith("specedit")
    # the instruction went on to a rewrite, which found no server (auto_start is off)
    assert any("no specedit server on" in n for n in out["notes"]), out["notes"]
    assert "socket: " + str(tmp_path / "run" / "rpc.sock") in out["status"]
    assert "server: not connected" in out["status"]
    cmd = out["cmd"]
    assert cmd[cmd.index("--gpu-layers") + 1] == "all"
    assert cmd[cmd.index("--backend") + 1] == "torch"
    assert cmd[cmd.index("--model") + 1] == "qwen2.5-coder-0.5b"
    assert "--socket" in cmd


def test_checkhealth_finds_the_project_venv(tmp_path):
    """The plugin inside a repository finds <repo>/.venv/bin/specedit; without it, the advice
    names `make setup` in that repository."""
    repo = tmp_path / "repo"
    shutil.copytree(PLUGIN, repo / "plugins" / "nvim")
    (repo / "pyproject.toml").write_text("[project]\nname = 'specedit'\n")
    env = {"PATH": "/usr/bin:/bin", "XDG_RUNTIME_DIR": str(tmp_path / "xdg")}
    body = """
  vim.cmd('checkhealth specedit')
  out.health = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\\n')
  out.cmd = require('specedit.client').server_cmd()
"""
    out = run_lua(tmp_path, body, env, plugin=repo / "plugins" / "nvim")
    assert "make setup` in " + str(repo) in out["health"], out["health"]
    assert "WARNING" in out["health"]
    exe = repo / ".venv" / "bin" / "specedit"
    exe.parent.mkdir(parents=True)
    exe.write_text("#!/bin/sh\nexit 0\n")
    exe.chmod(0o755)
    out = run_lua(tmp_path, body, env, plugin=repo / "plugins" / "nvim")
    assert f"server command (from the project's venv): {exe} serve" in out["health"]
    assert out["cmd"][:2] == [str(exe), "serve"]


def test_autostart_reports_a_server_that_exits(tmp_path):
    """A server that cannot start fails the connection at once with its error line, instead
    of a wait of start_timeout_ms (300 s)."""
    cmd = [
        sys.executable,
        "-m",
        "specedit.app.cli",
        "serve",
        "--model",
        str(tmp_path / "x.gguf"),
    ]
    body = f"""
  local client = require('specedit.client')
  require('specedit').setup({{ socket = {json.dumps(str(tmp_path / "run" / "rpc.sock"))},
                              cmd = vim.json.decode({json.dumps(json.dumps(cmd))}) }})
  local done = false
  client.ensure(function(c, e) out.err = e; done = true end)
  vim.wait(100000, function() return done end, 50)
"""
    out = run_lua(tmp_path, body, {"XDG_STATE_HOME": str(tmp_path / "state")})
    assert "the server exited (status 1)" in out["err"], out
    assert "not found" in out["err"]


REVIEW = r"""
  local sp = require('specedit')
  local client = require('specedit.client')
  local review = require('specedit.review')
  vim.api.nvim_buf_set_lines(0, 0, -1, false, { 'a', 'b', 'c', 'd', 'e', 'f', 'g' })
  local buf = vim.api.nvim_get_current_buf()
  local hunks = {
    { id = 0, startLine = 1, endLine = 2, oldText = 'b\n', newText = 'B\n' },
    { id = 1, startLine = 3, endLine = 4, oldText = 'd\n', newText = 'D\nD2\n' },
    { id = 2, startLine = 6, endLine = 7, oldText = 'g\n', newText = '' },
  }
  local function lines() return vim.api.nvim_buf_get_lines(buf, 0, -1, false) end
  local function start(done)
    sp.buffers[buf] = { phase = 'running', sid = 's1', anchor_row = 0, tick = 0 }
    sp.sessions['s1'] = buf
    client.handlers['rewrite/done'](vim.tbl_extend('force', { sessionId = 's1', message = '',
      output = vim.NIL, validation = vim.NIL, stats = { decode_tps = 12.5 } }, done))
  end
"""


def test_review_motions_truncated_and_suspect(tmp_path):
    """]h / [h move between hunks; a truncated result is reviewed one by one (no accept-all);
    a suspect one is flagged and accept-all asks first. The rewrite/done messages are built
    here, as a newer server sends them."""
    body = (
        REVIEW
        + """
  -- ]h / [h, wrapping around
  start({ status = 'ok', hunks = vim.deepcopy(hunks), stats = { decode_tps = 12.5, backend = 'torch',
          device = 'cuda', verifier = 'triton', editMode = 'whole' } })
  out.done_note = out.notes[#out.notes]
  vim.api.nvim_win_set_cursor(0, { 1, 0 })
  out.rows = {}
  for _, key in ipairs({ ']h', ']h', ']h', ']h', '[h', '[h' }) do
    vim.cmd('normal ' .. key)
    table.insert(out.rows, vim.api.nvim_win_get_cursor(0)[1])
  end
  vim.cmd('SpeceditRejectAll')
  out.after_reject = lines()

  -- truncated: no accept-all, one by one is fine
  start({ status = 'truncated', message = 'stopped at max tokens (raise maxTokens)',
          hunks = { vim.deepcopy(hunks[1]) } })
  out.truncated_note = out.notes[#out.notes]
  out.truncated_status = sp.statusline()
  vim.cmd('SpeceditAcceptAll')
  out.truncated_refusal = out.notes[#out.notes]
  out.truncated_still = sp.buffers[buf] and sp.buffers[buf].phase
  vim.api.nvim_win_set_cursor(0, { 2, 0 })
  vim.cmd('SpeceditAccept')
  out.after_truncated = lines()

  -- suspect: flagged, accept-all asks
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, { 'a', 'b', 'c', 'd', 'e', 'f', 'g' })
  start({ status = 'ok', hunks = vim.deepcopy(hunks),
          suspect = { reason = 'drops_tail', message = 'it deletes the last line', deletedLines = 1 } })
  out.suspect_note = out.notes[#out.notes]
  local marks = vim.api.nvim_buf_get_extmarks(buf, review.ns, 0, -1, { details = true })
  out.warn_lines = {}
  for _, m in ipairs(marks) do
    for _, vl in ipairs(m[4].virt_lines or {}) do
      if vl[1][2] == 'SpeceditWarn' then table.insert(out.warn_lines, vl[1][1]) end
    end
  end
  local answer = 'Keep reviewing'
  vim.ui.select = function(items, opts, cb) out.asked = opts.prompt; out.items = items; cb(answer) end
  vim.cmd('SpeceditAcceptAll')
  out.kept_reviewing = sp.buffers[buf] and sp.buffers[buf].phase
  answer = 'Accept all anyway'
  vim.cmd('SpeceditAcceptAll')
  out.after_suspect = lines()
  out.suspect_done = sp.buffers[buf] == nil

  -- made after the model's blocks were given up: the line that says so, after the figures
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, { 'a', 'b', 'c', 'd', 'e', 'f', 'g' })
  start({ status = 'ok', hunks = vim.deepcopy(hunks), stats = { decode_tps = 12.5,
          given_up = 'blocks given up: block 1 of 1 cannot be placed' } })
  out.given_up_note = out.notes[#out.notes]
"""
    )
    out = run_lua(tmp_path, body)
    assert "3 hunk(s), 12.5 tok/s, torch on cuda, verifier triton, edit whole" in out["done_note"]
    assert (
        "3 hunk(s), 12.5 tok/s, blocks given up: block 1 of 1 cannot be placed"
        in out["given_up_note"]
    )
    # hunks at rows 2, 4 and 7 (the deleted 'g' is anchored at row 7, the buffer's last)
    assert out["rows"] == [2, 4, 7, 2, 7, 4], out["rows"]
    assert out["after_reject"] == ["a", "b", "c", "d", "e", "f", "g"]
    assert "TRUNCATED" in out["truncated_note"] and "raise maxTokens" in out["truncated_note"]
    assert "TRUNCATED" in out["truncated_status"]
    assert "truncated" in out["truncated_refusal"] and out["truncated_still"] == "review"
    assert out["after_truncated"] == ["a", "B", "c", "d", "e", "f", "g"]
    assert "WARNING: it deletes the last line" in out["suspect_note"]
    assert out["warn_lines"] and "it deletes the last line" in out["warn_lines"][0]
    assert "it deletes the last line" in out["asked"]
    assert out["kept_reviewing"] == "review"
    assert out["after_suspect"] == ["a", "B", "c", "D", "D2", "e", "f"]
    assert out["suspect_done"]


def test_progress_text(tmp_path):
    """The reading phase, then the decode rate, then what runs the model (empty names, not
    known yet, are left out); an older server's progress (no phase) reads as before."""
    body = """
  local fmt = require('specedit.format')
  out.reading = fmt.progress({ state = 'running', phase = 'reading', promptTokens = 1700,
    readTokens = 1234, readTokPerSec = 97.6, generatedTokens = 0, tokPerSec = 0 })
  out.generating = fmt.progress({ state = 'running', phase = 'generating', promptTokens = 1700,
    readTokens = 1700, generatedTokens = 1042, tokPerSec = 31.24, acceptance = 0.784, tokensPerStep = 2.5 })
  out.old = fmt.progress({ state = 'running', generatedTokens = 42, tokPerSec = 35.1,
    acceptance = 0.78, tokensPerStep = 2.4 })
  out.queued = fmt.progress({ state = 'queued', queuePosition = 2 })
  out.named = fmt.progress({ state = 'running', phase = 'reading', promptTokens = 1700,
    readTokens = 0, readTokPerSec = 0, backend = 'llama.cpp', device = 'CPU', verifier = 'numpy' })
  out.unnamed = fmt.progress({ state = 'running', phase = 'reading', promptTokens = 0,
    readTokens = 0, backend = '', device = '', verifier = '' })
  out.big = fmt.thousands(1234567)
"""
    out = run_lua(tmp_path, body)
    assert out["reading"] == "reading file 1,234/1,700 tokens, 98 tok/s"
    assert out["generating"] == "1,042 tok · 31.2 tok/s · acc 78% · 2.50 tok/step"
    assert out["old"] == "42 tok · 35.1 tok/s · acc 78% · 2.40 tok/step"
    assert out["queued"] == "queued (#2)" and out["big"] == "1,234,567"
    assert out["named"] == "reading file 0/1,700 tokens, 0 tok/s · llama.cpp on CPU, verifier numpy"
    assert out["unnamed"] == "reading file 0/0 tokens"  # names not known yet read as absent
