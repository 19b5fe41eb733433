--- specedit for Neovim: rewrite the buffer (or a range) with `specedit serve`, stream progress,
--- review the hunks inline and accept or reject them (one undo step per review).
---
--- Commands: :[range]SpeceditRewrite {instruction}, :SpeceditCancel, :SpeceditAccept,
--- :SpeceditReject, :SpeceditAcceptAll, :SpeceditRejectAll, :SpeceditWarm, :SpeceditStatus.
--- Warm-ups: typing :SpeceditRewrite (CmdlineChanged) or entering a buffer while connected
--- sends rewrite/warm, so the server reads the file while the instruction is being typed.
--- Statusline: require('specedit').statusline().
local M = {}

local api = vim.api
local config = require('specedit.config')
local client = require('specedit.client')
local review = require('specedit.review')

M.buffers = {} ---@type table<integer, table> per-buffer state
M.warmed = nil ---@type table? the last rewrite/warmed params
local last_warm = nil ---@type string? buffer and changedtick of the last warm-up sent
local by_session = {} ---@type table<string, integer> sessionId -> buffer

--- JSON null arrives as vim.NIL (truthy): map it to nil.
local function val(x)
  if x == vim.NIL then
    return nil
  end
  return x
end

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
    return ('specedit: %d hunk(s) to review'):format(#review.pending(st))
  end
  local p = st.progress
  if not p then
    return 'specedit: starting…'
  end
  if p.state == 'queued' then
    return ('specedit: queued (#%d)'):format(p.queuePosition or 0)
  end
  local s = ('specedit: %d tok · %.1f tok/s · acc %d%% · %.2f tok/step'):format(
    p.generatedTokens or 0,
    p.tokPerSec or 0,
    math.floor((p.acceptance or 0) * 100 + 0.5),
    p.tokensPerStep or 0
  )
  if st.preview_hunks then
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
  if api.nvim_buf_is_valid(buf) then
    api.nvim_buf_clear_namespace(buf, review.ns, 0, -1)
    for _, name in ipairs({ 'accept', 'reject', 'accept_all', 'reject_all' }) do
      local lhs = config.options.keys[name]
      if lhs then
        pcall(vim.keymap.del, 'n', lhs, { buffer = buf })
      end
    end
  end
  vim.cmd('redrawstatus')
end

local function map_keys(buf)
  local actions = { accept = M.accept, reject = M.reject, accept_all = M.accept_all, reject_all = M.reject_all }
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
  if buf and M.buffers[buf] then
    M.buffers[buf].preview_hunks = #p.hunks
  end
end

client.handlers['rewrite/done'] = function(p)
  local buf = by_session[p.sessionId]
  local st = buf and M.buffers[buf]
  if not st then
    return
  end
  st.done = p
  if p.status ~= 'ok' then
    clear(buf)
    local level = p.status == 'cancelled' and vim.log.levels.INFO or vim.log.levels.ERROR
    local msg = val(p.message)
    vim.notify('specedit: ' .. ((msg and msg ~= '') and msg or p.status), level)
    return
  end
  if #p.hunks == 0 then
    clear(buf)
    vim.notify('specedit: no changes', vim.log.levels.INFO)
    return
  end
  api.nvim_buf_clear_namespace(buf, review.ns, 0, -1)
  local ok, err = review.start(buf, st, p.hunks)
  if not ok then
    clear(buf)
    vim.notify('specedit: ' .. err, vim.log.levels.WARN)
    return
  end
  map_keys(buf)
  local v = val(p.validation)
  local note = ''
  if type(v) == 'table' and not v.ok then
    note = (' (syntax errors %d -> %d)'):format(v.errorsBefore, v.errorsAfter)
  end
  vim.notify(('specedit: %d hunk(s), %.1f tok/s%s'):format(#p.hunks, p.stats.decode_tps or 0, note))
  vim.cmd('redrawstatus')
end

client.handlers['rewrite/warmed'] = function(p)
  M.warmed = p
end

client.handlers['$/disconnected'] = function()
  last_warm = nil
  for buf, st in pairs(M.buffers) do
    if st.phase ~= 'review' then
      clear(buf)
      vim.notify('specedit: the server went away', vim.log.levels.WARN)
    end
  end
end

--- The buffer's text and path (nil when unnamed) as rewrite/start sends them.
local function buffer_text(buf)
  local text = table.concat(api.nvim_buf_get_lines(buf, 0, -1, false), '\n')
  if vim.bo[buf].eol or vim.bo[buf].fixeol then
    text = text .. '\n'
  end
  local name = api.nvim_buf_get_name(buf)
  return text, name ~= '' and name or nil
end

--- rewrite/start's range and options.expand/language for `range` ({start, end}, 0-based).
local function range_params(params, buf, range)
  params.range = { startLine = range[1], endLine = range[2] }
  if config.options.expand_to_node then
    params.options = params.options or {}
    params.options.expand = 'node'
    params.options.language = vim.treesitter.language.get_lang(vim.bo[buf].filetype)
  end
end

--- Have the server prefill the prompt prefix of `buf` (rewrite/warm), through `range` if given.
--- `connect`: also connect (or start the server) when not connected. The same buffer version
--- and range are sent once in a row.
function M.warm(buf, connect, range)
  buf = (buf == nil or buf == 0) and api.nvim_get_current_buf() or buf
  if not config.options.warm or not api.nvim_buf_is_loaded(buf) or vim.bo[buf].buftype ~= '' then
    return
  end
  if not connect and not (client.client and not client.client.is_closing()) then
    return
  end
  local key = ('%d:%d:%s'):format(buf, api.nvim_buf_get_changedtick(buf), range and table.concat(range, ',') or '')
  if key == last_warm then
    return
  end
  local text, path = buffer_text(buf)
  if not text:match('%S') then
    return
  end
  last_warm = key
  local params = { text = text, path = path }
  if range then
    range_params(params, buf, range)
  end
  client.request('rewrite/warm', params, function(err)
    if err and last_warm == key then
      last_warm = nil
    end
  end)
end

function M.warm_command()
  M.warm(0, true)
end

--- CmdlineChanged: warm the current buffer up (and its range, if the command line has one)
--- once the command line reads SpeceditRew(rite).
function M.on_cmdline(line)
  if not line:match("^[%s%d,.;'<>$%%+%-]*SpeceditRew") then
    return
  end
  local ok, cmd = pcall(api.nvim_parse_cmd, line, {})
  local range = nil
  if ok and type(cmd.range) == 'table' and #cmd.range > 0 then
    range = { cmd.range[1] - 1, cmd.range[#cmd.range] }
  end
  M.warm(0, true, range)
end

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
  local text, path = buffer_text(buf)
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
    range_params(params, buf, range)
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

function M.rewrite_command(o)
  local range = nil
  if o.range and o.range > 0 then
    range = { o.line1 - 1, o.line2 }
  end
  M.rewrite(o.args, range)
end

function M.cancel()
  local buf = api.nvim_get_current_buf()
  local st = M.buffers[buf]
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

function M.accept_all()
  with_review(function(buf, st)
    for _, h in ipairs(review.pending(st)) do
      review.accept(buf, h)
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

function M.status()
  local info = client.info
  local lines = {
    ('socket: %s'):format(client.socket or client.socket_path()),
    info and ('server: %s %s, model %s (%s)'):format(info.server, info.version, info.model, info.backend)
      or 'server: not connected',
    M.progress_text(0),
  }
  local w = M.warmed
  if w then
    table.insert(lines, ('last warm-up: %s, %s (%s tokens, %s ms)'):format(
      w.path or '?', w.status, w.evaluatedTokens or 0, w.ms or 0))
  end
  vim.notify(table.concat(lines, '\n'), vim.log.levels.INFO)
end

return M
