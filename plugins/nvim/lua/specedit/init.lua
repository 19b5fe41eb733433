--- specedit for Neovim: rewrite the buffer (or a range) with `specedit serve`, stream progress
--- and the hunks found so far, review the hunks inline and accept or reject them (one undo
--- step per review). Documented in doc/specedit.txt (:help specedit).
---
--- Commands: :[range]SpeceditRewrite [instruction] (without one, it asks with vim.ui.input),
--- :SpeceditCancel, :SpeceditAccept, :SpeceditReject, :SpeceditAcceptAll, :SpeceditRejectAll,
--- :SpeceditWarm, :SpeceditStatus (its output is :echo'd, so :redir and execute() see it),
--- :SpeceditAsk {question} (./ask.lua: an answer about the open buffers, quotes checked).
--- Review keys (buffer-local): accept/reject, all, and ]h / [h to the next/previous hunk.
--- A truncated result (status "truncated") can be reviewed hunk by hunk but not accepted all
--- at once; a suspect one (it deletes what the instruction did not ask to) is flagged, and
--- accepting all of it asks first.
--- Warm-ups: typing :SpeceditRewrite (CmdlineChanged) or entering a buffer while connected
--- sends rewrite/warm, so the server reads the file while the instruction is being typed.
--- Statusline: require('specedit').statusline().
local M = {}

local api = vim.api
local config = require('specedit.config')
local client = require('specedit.client')
local review = require('specedit.review')
local preview = require('specedit.preview')
local fmt = require('specedit.format')
local warm = require('specedit.warm')
local ask = require('specedit.ask')

M.buffers = {} ---@type table<integer, table> per-buffer state
M.warmed = nil ---@type table? the last rewrite/warmed params
local by_session = {} ---@type table<string, integer> sessionId -> buffer
M.sessions = by_session

local val = fmt.val

function M.setup(opts)
  config.setup(opts)
end

local function state(buf)
  return M.buffers[buf == 0 and api.nvim_get_current_buf() or buf]
end

--- One line describing the rewrite of `buf` (for the statusline and the virtual text).
function M.progress_text(buf)
  local st = state(buf or 0)
  if not st then
    return ''
  end
  if st.phase == 'connecting' then
    return 'specedit: connecting…'
  end
  if st.phase == 'review' then
    local s = ('specedit: %d hunk(s) to review'):format(#review.pending(st))
    if st.truncated then
      s = s .. ' · TRUNCATED'
    end
    if st.suspect then
      s = s .. ' · WARNING: ' .. st.suspect
    end
    return s
  end
  local p = st.progress
  if not p then
    return 'specedit: starting…'
  end
  local s = 'specedit: ' .. fmt.progress(p)
  if st.preview_hunks and p.state ~= 'queued' then
    s = s .. (' · %d hunk(s) so far'):format(st.preview_hunks)
  end
  return s
end

function M.statusline()
  return M.progress_text(0)
end

local function show_progress(buf)
  local st = M.buffers[buf]
  if not st or not config.options.progress_virt_text or not api.nvim_buf_is_valid(buf) then
    return
  end
  review.set_hl()
  local row = math.min(st.anchor_row, api.nvim_buf_line_count(buf) - 1)
  st.progress_mark = api.nvim_buf_set_extmark(buf, review.ns, row, 0, {
    id = st.progress_mark,
    virt_lines = { { { M.progress_text(buf), 'SpeceditProgress' } } },
    virt_lines_above = true,
  })
end

local function clear(buf)
  local st = M.buffers[buf]
  if st and st.sid then
    by_session[st.sid] = nil
  end
  M.buffers[buf] = nil
  preview.clear(buf)
  if api.nvim_buf_is_valid(buf) then
    api.nvim_buf_clear_namespace(buf, review.ns, 0, -1)
    for _, name in ipairs({ 'accept', 'reject', 'accept_all', 'reject_all', 'next_hunk', 'prev_hunk' }) do
      local lhs = config.options.keys[name]
      if lhs then
        pcall(vim.keymap.del, 'n', lhs, { buffer = buf })
      end
    end
  end
  vim.cmd('redrawstatus')
end

local function map_keys(buf)
  local actions = {
    accept = M.accept,
    reject = M.reject,
    accept_all = M.accept_all,
    reject_all = M.reject_all,
    next_hunk = M.next_hunk,
    prev_hunk = M.prev_hunk,
  }
  for name, fn in pairs(actions) do
    local lhs = config.options.keys[name]
    if lhs then
      vim.keymap.set('n', lhs, fn, { buffer = buf, desc = 'specedit: ' .. name:gsub('_', ' ') })
    end
  end
end

local function maybe_finish(buf)
  local st = M.buffers[buf]
  if st and st.phase == 'review' and #review.pending(st) == 0 then
    local a, r = review.summary(st)
    clear(buf)
    vim.notify(('specedit: %d hunk(s) accepted, %d rejected'):format(a, r), vim.log.levels.INFO)
    if M.on_review_done then
      M.on_review_done(buf, a, r)
    end
  end
end

client.handlers['rewrite/progress'] = function(p)
  local buf = by_session[p.sessionId]
  if buf and M.buffers[buf] then
    M.buffers[buf].progress = p
    show_progress(buf)
    vim.cmd('redrawstatus')
  end
end

client.handlers['rewrite/preview'] = function(p)
  local buf = by_session[p.sessionId]
  local st = buf and M.buffers[buf]
  if not st or st.phase == 'review' then
    return
  end
  st.preview_hunks = #p.hunks
  if config.options.stream_preview then
    preview.show(buf, p.hunks)
  end
  show_progress(buf)
  vim.cmd('redrawstatus')
end

client.handlers['rewrite/done'] = function(p)
  local buf = by_session[p.sessionId]
  local st = buf and M.buffers[buf]
  if not st then
    return
  end
  st.done = p
  preview.clear(buf)
  local hunks = val(p.hunks) or {}
  local truncated = p.status == 'truncated'
  if p.status ~= 'ok' and not (truncated and #hunks > 0) then
    clear(buf)
    local level = p.status == 'cancelled' and vim.log.levels.INFO or vim.log.levels.ERROR
    local msg = val(p.message)
    if truncated then
      level, msg = vim.log.levels.WARN, 'truncated, nothing usable: ' .. ((msg and msg ~= '') and msg or p.status)
    end
    vim.notify('specedit: ' .. ((msg and msg ~= '') and msg or p.status), level)
    return
  end
  if #hunks == 0 then
    clear(buf)
    vim.notify('specedit: no changes', vim.log.levels.INFO)
    return
  end
  api.nvim_buf_clear_namespace(buf, review.ns, 0, -1)
  local ok, err = review.start(buf, st, hunks)
  if not ok then
    clear(buf)
    vim.notify('specedit: ' .. err, vim.log.levels.WARN)
    return
  end
  st.truncated, st.suspect = truncated, fmt.suspect(p)
  if st.truncated or st.suspect then
    -- prominent: a warning line above the first hunk, besides the notice
    local warn = st.truncated and ('TRUNCATED: ' .. (val(p.message) or 'the output did not reach its end'))
      or ('WARNING: ' .. st.suspect)
    api.nvim_buf_set_extmark(buf, review.ns, math.min(hunks[1].startLine, api.nvim_buf_line_count(buf) - 1), 0, {
      virt_lines = { { { 'specedit ' .. warn, 'SpeceditWarn' } } },
      virt_lines_above = true,
    })
  end
  review.show_top(buf)
  map_keys(buf)
  local msg, level = fmt.done(p, #hunks)
  vim.notify('specedit: ' .. msg, level)
  vim.cmd('redrawstatus')
end

client.handlers['rewrite/warmed'] = function(p)
  M.warmed = p
end

client.handlers['$/disconnected'] = function()
  warm.forget()
  ask.disconnected()
  for buf, st in pairs(M.buffers) do
    if st.phase ~= 'review' then
      clear(buf)
      vim.notify('specedit: the server went away', vim.log.levels.WARN)
    end
  end
end

M.warm, M.warm_command, M.on_cmdline = warm.warm, warm.warm_command, warm.on_cmdline
M.ask, M.ask_command = ask.ask, ask.command

--- Start a rewrite of `buf` (0: current); range = {start, end} 0-based, end exclusive.
function M.rewrite(instruction, range, buf)
  buf = (buf == nil or buf == 0) and api.nvim_get_current_buf() or buf
  local old = M.buffers[buf]
  if old and old.phase ~= 'review' then
    vim.notify('specedit: a rewrite of this buffer is already running (:SpeceditCancel)', vim.log.levels.WARN)
    return
  end
  if old then
    clear(buf)
  end
  local text, path = warm.buffer_text(buf)
  local st = { phase = 'connecting', anchor_row = range and range[1] or 0, tick = api.nvim_buf_get_changedtick(buf) }
  M.buffers[buf] = st
  show_progress(buf)
  local params = {
    text = text,
    instruction = instruction,
    path = path,
    options = vim.deepcopy(config.options.options),
  }
  if range then
    warm.range_params(params, buf, range)
  end
  if config.options.edit then
    params.options.edit = config.options.edit
  end
  if vim.tbl_isempty(params.options) then
    params.options = nil
  end
  client.request('rewrite/start', params, function(err, res)
    if M.buffers[buf] ~= st then
      return
    end
    if err then
      clear(buf)
      vim.notify('specedit: ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
      return
    end
    st.sid, st.phase = res.sessionId, 'running'
    if type(val(res.range)) == 'table' then
      st.anchor_row = res.range.startLine
    end
    by_session[res.sessionId] = buf
    if st.cancel_requested then
      client.request('rewrite/cancel', { sessionId = st.sid }, function() end)
    end
    show_progress(buf)
  end)
end

--- :[range]SpeceditRewrite [instruction]; without an instruction, ask for one (vim.ui.input),
--- having the server read the buffer meanwhile.
function M.rewrite_command(o)
  local range = nil
  if o.range and o.range > 0 then
    range = { o.line1 - 1, o.line2 }
  end
  if vim.trim(o.args or '') ~= '' then
    M.rewrite(o.args, range)
    return
  end
  local buf = api.nvim_get_current_buf()
  warm.warm(buf, true, range)
  vim.ui.input({ prompt = range and 'specedit (lines): ' or 'specedit: ' }, function(input)
    if input and vim.trim(input) ~= '' and api.nvim_buf_is_valid(buf) then
      M.rewrite(input, range, buf)
    end
  end)
end

function M.cancel()
  local buf = api.nvim_get_current_buf()
  local st = M.buffers[buf]
  if not st and ask.cancel(buf) then
    return
  end
  if not st then
    vim.notify('specedit: nothing to cancel', vim.log.levels.INFO)
    return
  end
  if st.phase == 'review' then
    M.reject_all()
    return
  end
  if not st.sid then
    st.cancel_requested = true
    return
  end
  client.request('rewrite/cancel', { sessionId = st.sid }, function() end)
end

local function with_review(fn)
  local buf = api.nvim_get_current_buf()
  local st = M.buffers[buf]
  if not st or st.phase ~= 'review' then
    vim.notify('specedit: no hunks to review in this buffer', vim.log.levels.INFO)
    return
  end
  fn(buf, st)
  maybe_finish(buf)
end

-- apply `decide` (review.accept or review.reject) to the hunk under the cursor
local function decide_at_cursor(decide)
  with_review(function(buf, st)
    local h = review.hunk_at_cursor(buf, st)
    if h then
      decide(buf, h)
    else
      vim.notify('specedit: no hunk under the cursor', vim.log.levels.INFO)
    end
  end)
end

function M.accept()
  decide_at_cursor(review.accept)
end

function M.reject()
  decide_at_cursor(review.reject)
end

local function accept_pending(buf, st)
  for _, h in ipairs(review.pending(st)) do
    review.accept(buf, h)
  end
  maybe_finish(buf)
end

--- Accept every pending hunk. Refused for a truncated result (its hunks are only the part
--- that was written: review them one by one); a suspect one asks first (vim.ui.select).
function M.accept_all()
  local buf = api.nvim_get_current_buf()
  local st = M.buffers[buf]
  if not st or st.phase ~= 'review' then
    vim.notify('specedit: no hunks to review in this buffer', vim.log.levels.INFO)
    return
  end
  if st.truncated then
    vim.notify(
      'specedit: the output was truncated; accept its hunks one by one (]h / [h move between them)',
      vim.log.levels.WARN
    )
    return
  end
  if not st.suspect then
    accept_pending(buf, st)
    return
  end
  local yes = 'Accept all anyway'
  vim.ui.select({ yes, 'Keep reviewing' }, { prompt = 'specedit WARNING: ' .. st.suspect }, function(choice)
    if choice == yes and M.buffers[buf] == st and st.phase == 'review' then
      accept_pending(buf, st)
    end
  end)
end

function M.reject_all()
  with_review(function(buf, st)
    local hs = review.pending(st)
    for i = #hs, 1, -1 do
      review.reject(buf, hs[i])
    end
  end)
end

local function jump(dir)
  local buf = api.nvim_get_current_buf()
  local st = M.buffers[buf]
  if not st or st.phase ~= 'review' or not review.jump(buf, st, dir) then
    vim.notify('specedit: no hunk to go to', vim.log.levels.INFO)
  end
end

--- ]h: the cursor to the next pending hunk (wrapping around).
function M.next_hunk()
  jump(1)
end

--- [h: the cursor to the previous pending hunk (wrapping around).
function M.prev_hunk()
  jump(-1)
end

--- The lines :SpeceditStatus shows.
function M.status_lines()
  local info = client.info
  local sock = client.socket or client.socket_path()
  local lines = {
    ('socket: %s'):format(sock),
    info and ('server: %s %s, model %s (%s)'):format(info.server, info.version, info.model, info.backend)
      or 'server: not connected',
  }
  local problem = client.socket_problem(sock)
  if problem then
    table.insert(lines, 'refused: ' .. problem)
  end
  local progress = M.progress_text(0)
  if progress ~= '' then
    table.insert(lines, progress)
  end
  local w = M.warmed
  if w then
    table.insert(lines, ('last warm-up: %s, %s (%s tokens, %s ms)'):format(
      val(w.path) or '?', w.status, val(w.evaluatedTokens) or 0, val(w.ms) or 0))
  end
  return lines
end

--- :SpeceditStatus, echoed (not vim.notify) so that :redir and execute() capture it.
function M.status()
  api.nvim_echo({ { table.concat(M.status_lines(), '\n') } }, true, {})
end

return M
