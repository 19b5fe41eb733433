"""The Neovim plugin in a real headless Neovim against a real ``specedit serve`` process over
a scripted toy model (``tests/toy_server.py``: no weights, a few seconds).

The toy replies to every rewrite with the file renamed and a line broken, and
its prefill batch at position 128 is held until the Lua driver releases it, so the reading
phase is on screen for as long as the test looks at it:

* a cut result (``maxTokens`` 20): ``truncated``, flagged, accept-all refused, its one hunk
  accepted by hand; ``rewrite/apply`` refuses it (-32803), even forced;
* the complete result: ``ok`` with a ``suspect`` warning; accept-all asks, and keeping on
  reviewing accepts nothing; ``rewrite/apply`` refuses it (-32804) unless forced;
* each edit mode (``edit = 'auto' | 'blocks' | 'whole'``) goes out as ``options.edit``, and
  the server takes it;
* the statusline rendered from the server's progress: the reading phase (128 of the prompt's
  tokens), then the decode figures, with the backend and device that run the model;
* a server the plugin starts gets ``--model``, ``--gpu-layers``, ``--backend``, ``--device``
  and ``--quant``, and the real command line takes them into its load config.
"""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest
from nvim_helpers import TEXT, run_lua
from toy_server import serve_process, toy_command

pytestmark = pytest.mark.timeout(300)

NEW = "def plus(a, b):\n    return a +\n\n\ndef sub(a, b):\n    return a - b\n"
"""The toy's reply: ``add`` renamed and its line broken (a suspect result: worse syntax; a
dropped tail would be put back by the repairs, app/edit/repair.py)."""
HOLD_AT = 128  # the second prefill batch (engine.prefill.CHUNK) of the ~360-token prompt

DRIVER = r"""
  local sp = require('specedit')
  local client = require('specedit.client')
  local review = require('specedit.review')
  local sock, gate, file = os.getenv('SPECEDIT_SOCK'), os.getenv('SPECEDIT_GATE'), os.getenv('SPECEDIT_FILE')
  -- edit 'whole': the toy's reply is the whole text (not search/replace blocks)
  sp.setup({ socket = sock, auto_start = false, warm = false, edit = 'whole', options = { maxTokens = 20 } })
  -- the toy holds each call at position 128 (a prefill batch) until release.<n> exists:
  -- release the holds once the statusline has shown that held reading phase
  local holds, seen = 0, {}
  out.reading, out.generating = {}, {}
  local on_progress = client.handlers['rewrite/progress']
  client.handlers['rewrite/progress'] = function(p)
    on_progress(p)
    if p.phase == 'reading' and p.readTokens >= 128 then
      if not seen[p.sessionId] then
        seen[p.sessionId] = true
        table.insert(out.reading, sp.statusline())
      end
      for i = holds + 1, #vim.fn.glob(gate .. '/held.*', false, true) do
        assert(io.open(gate .. '/release.' .. i, 'w')):close()
        holds = i
      end
    elseif p.phase == 'generating' then
      out.generating[p.sessionId] = sp.statusline()
    end
  end
  vim.cmd('edit ' .. file)
  local buf = vim.api.nvim_get_current_buf()
  local function lines() return vim.api.nvim_buf_get_lines(buf, 0, -1, false) end
  local function wait_review()
    vim.wait(60000, function() local st = sp.buffers[buf]; return st == nil or st.phase == 'review' end, 20)
    return sp.buffers[buf]
  end
  local function apply(sid, force)
    local res
    client.request('rewrite/apply', { sessionId = sid, path = file, force = force }, function(err, r)
      res = { code = err and err.code, message = err and err.message, result = r }
    end)
    vim.wait(10000, function() return res ~= nil end, 20)
    return res
  end
  local function warning_lines()
    local found = {}
    for _, m in ipairs(vim.api.nvim_buf_get_extmarks(buf, review.ns, 0, -1, { details = true })) do
      for _, vl in ipairs(m[4].virt_lines or {}) do
        if vl[1][2] == 'SpeceditWarn' then table.insert(found, vl[1][1]) end
      end
    end
    return found
  end

  -- 1: cut at 20 tokens: truncated, one hunk (the renamed first line)
  vim.cmd('SpeceditRewrite Rename the function add to plus')
  local st = wait_review()
  out.t = { phase = st and st.phase, hunks = st and #st.hunks, status = st and st.done.status,
            statusline = sp.statusline(), warn = warning_lines(), note = out.notes[#out.notes] }
  local sid = st.sid
  vim.cmd('SpeceditAcceptAll')
  out.t.refused_note = out.notes[#out.notes]
  out.t.pending_after_accept_all = sp.buffers[buf] and #review.pending(sp.buffers[buf])
  out.t.apply = apply(sid, true)  -- even forced: a cut result is never applied
  vim.api.nvim_win_set_cursor(0, { 1, 0 })
  vim.cmd('SpeceditAccept')
  out.t.after_accept = lines()
  out.t.finished = sp.buffers[buf] == nil
  vim.cmd('silent undo')
  out.t.after_undo = lines()

  -- 2: the whole reply: ok, but suspect (a line broken; the instruction asks for more than
  -- the rename, so the broken line is the model's change, not a stray one the repair undoes)
  sp.setup({ socket = sock, auto_start = false, warm = false, edit = 'whole' })
  vim.cmd('SpeceditRewrite Rename the function add to plus and fix its return')
  st = wait_review()
  out.s = { phase = st and st.phase, status = st and st.done.status, suspect = st and st.done.suspect,
            statusline = sp.statusline(), warn = warning_lines(), note = out.notes[#out.notes] }
  sid = st.sid
  local answer = 'Keep reviewing'
  vim.ui.select = function(items, opts, cb)
    out.s.asked = { items = items, prompt = opts.prompt }
    cb(answer)
  end
  vim.cmd('SpeceditAcceptAll')
  out.s.hunks = #st.hunks
  out.s.pending_after_keep = sp.buffers[buf] and #review.pending(sp.buffers[buf])
  out.s.apply = apply(sid, nil)
  out.s.file_after_refusal = table.concat(vim.fn.readfile(file), '\n')
  answer = 'Accept all anyway'
  vim.cmd('SpeceditAcceptAll')
  out.s.after_accept_all = lines()
  out.s.finished = sp.buffers[buf] == nil
  out.s.forced = apply(sid, true)
  out.whole_holds, out.whole_reading = holds, vim.deepcopy(out.reading)

  -- 3: each edit mode goes out as options.edit, and the server takes it (a session starts)
  out.e = {}
  local request = client.request
  client.request = function(method, params, cb)
    if method ~= 'rewrite/start' then
      return request(method, params, cb)
    end
    local rec = { edit = params.options and params.options.edit }
    table.insert(out.e, rec)
    request(method, params, function(err, res)
      rec.code, rec.sid = err and err.code, res and res.sessionId
      cb(err, res)
    end)
  end
  for _, mode in ipairs({ 'auto', 'blocks', 'whole' }) do
    sp.setup({ socket = sock, auto_start = false, warm = false, edit = mode, options = { maxTokens = 8 } })
    vim.cmd('SpeceditRewrite Rename the function add to plus')
    vim.wait(30000, function() local st = sp.buffers[buf]; return st == nil or st.phase == 'review' end, 20)
    if sp.buffers[buf] then vim.cmd('SpeceditRejectAll') end
  end
  out.holds = holds
"""


def _env(sp, f: Path) -> dict[str, str]:
    return {"SPECEDIT_SOCK": str(sp.socket), "SPECEDIT_GATE": str(sp.gate), "SPECEDIT_FILE": str(f)}


def test_truncated_suspect_and_progress_from_the_server(tmp_path):
    f = tmp_path / "m.py"
    f.write_text(TEXT)
    sp = serve_process(tmp_path, script=NEW + "```\n", hold_at=HOLD_AT)
    try:
        out = run_lua(tmp_path, DRIVER, _env(sp, f))
    finally:
        sp.stop()
    original = TEXT.splitlines()
    t = out["t"]
    assert t["phase"] == "review" and t["status"] == "truncated" and t["hunks"] == 1, out
    assert t["statusline"] == "specedit: 1 hunk(s) to review · TRUNCATED"
    assert len(t["warn"]) == 1 and t["warn"][0].startswith("specedit TRUNCATED: "), t["warn"]
    assert t["note"].startswith("specedit: TRUNCATED: ") and "one by one" in t["note"]
    assert "accept its hunks one by one" in t["refused_note"]
    assert t["pending_after_accept_all"] == 1  # accept-all did nothing
    assert t["apply"]["code"] == -32803 and "cut short" in t["apply"]["message"], t["apply"]
    assert t["after_accept"] == ["def plus(a, b):", *original[1:]] and t["finished"]
    assert t["after_undo"] == original

    s = out["s"]
    assert s["phase"] == "review" and s["status"] == "ok", out
    assert s["suspect"]["reason"] == "syntax" and s["suspect"]["deletedLines"] == 0
    assert "· WARNING: the result has 1 python syntax error" in s["statusline"]
    assert s["warn"] == ["specedit WARNING: " + s["suspect"]["message"]]
    assert "WARNING: " + s["suspect"]["message"] in s["note"]
    assert s["asked"]["prompt"] == "specedit WARNING: " + s["suspect"]["message"]
    assert s["pending_after_keep"] == s["hunks"] >= 1  # nothing accepted
    assert s["apply"]["code"] == -32804, s["apply"]
    assert s["file_after_refusal"] == TEXT.rstrip("\n")  # readfile() drops the last newline
    assert s["after_accept_all"] == NEW.splitlines() and s["finished"]
    assert s["forced"].get("code") is None and s["forced"]["result"]["path"] == str(f)
    assert f.read_text() == NEW  # written only with force

    assert [rec["edit"] for rec in out["e"]] == ["auto", "blocks", "whole"], out["notes"]
    for rec in out["e"]:
        assert rec.get("code") is None and rec["sid"], out["e"]

    # the statusline, from the server's own progress: reading (held at batch 128), then
    # the decode figures; both name what runs the model
    assert out["whole_holds"] == len(out["whole_reading"]) == 2  # one per whole rewrite
    assert len(out["reading"]) >= 5  # the edit modes' sessions read the file too
    for line in out["reading"]:
        head, _, engine = line.partition(" · ")
        assert head.startswith("specedit: reading file 128/") and head.endswith(" tok/s"), line
        assert int(head.split("/")[1].split()[0].replace(",", "")) > HOLD_AT
        assert engine == "toy on CPU, verifier numpy", line
    generating = list(out["generating"].values())
    assert len(generating) >= 5
    for line in generating:
        assert " tok · " in line and " tok/s · acc " in line and " tok/step · toy on CPU" in line


def test_started_server_takes_the_flags(tmp_path):
    """gpu_layers, backend, device, quant and model become flags of the server the plugin
    starts, and the real ``specedit serve`` command line takes them (the toy logs the load
    config it was given)."""
    sock = tmp_path / "run" / "rpc.sock"
    cmd = [*toy_command(), "serve"]
    body = f"""
  local client = require('specedit.client')
  require('specedit').setup({{ socket = {json.dumps(str(sock))}, cmd = vim.json.decode({json.dumps(json.dumps(cmd))}),
    model = 'toy-model', gpu_layers = 0, backend = 'torch', device = 'cpu', quant = 'int8', warm = false }})
  out.cmd = client.server_cmd()
  local done = false
  client.ensure(function(c, e) out.err = e; done = true end)
  vim.wait(120000, function() return done end, 50)
  out.info = client.info
  out.pid = client.started_pid
"""
    env = {"SPECEDIT_STATE_DIR": str(tmp_path / "state")}
    out: dict = {}
    try:
        out = run_lua(tmp_path, body, env)
        assert out.get("err") is None, out
        assert out["cmd"][: len(cmd)] == cmd
        flags = out["cmd"][len(cmd) :]
        assert dict(zip(flags[::2], flags[1::2], strict=True)) == {
            "--socket": str(sock),
            "--model": "toy-model",
            "--gpu-layers": "0",
            "--backend": "torch",
            "--device": "cpu",
            "--quant": "int8",
        }
        assert out["info"]["model"] == "toy"
        log = (tmp_path / "state" / "logs" / "server.log").read_text()
        assert (
            "toy in place of LoadConfig(model='toy-model', backend='torch', device='cpu', "
            "gpu_layers=0, quant='int8'"
        ) in log
    finally:
        pid = out.get("pid")
        if pid:
            os.kill(pid, signal.SIGTERM)
            deadline = time.monotonic() + 20
            while sock.exists() and time.monotonic() < deadline:
                time.sleep(0.05)
