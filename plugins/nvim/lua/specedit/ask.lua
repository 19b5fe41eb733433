--- :SpeceditAsk {question}: ask `specedit serve` (answer/start) about the current buffer and
--- the other listed, loaded buffers of files, and show the answer in a scratch split: the
--- question, the answer as it is written (answer/progress), then one line per citation, ✓
--- when its quote is in the file it cites, ✗ and the problem when not (answer/done; the
--- same lines as `specedit generate`). :SpeceditCancel in that split cancels it.
local M = {}

local api = vim.api
local client = require('specedit.client')
local config = require('specedit.config')
local fmt = require('specedit.format')
local warm = require('specedit.warm')

local val = fmt.val

M.sessions = {} ---@type table<string, table> sessionId -> {buf, question}
M.last = nil ---@type table? the last answer/done params
local early = {} ---@type table<string, table[]> notifications of a session not known yet

--- The context files of a question asked from `buf`: `buf` first (an unnamed one by its
--- number), then every other listed, loaded buffer of a file, each as {path, text}.
function M.context(buf)
  local files = {}
  local text, path = warm.buffer_text(buf)
  table.insert(files, { path = path or ('[buffer %d]'):format(buf), text = text })
  for _, b in ipairs(api.nvim_list_bufs()) do
    if b ~= buf and api.nvim_buf_is_loaded(b) and vim.bo[b].buflisted and vim.bo[b].buftype == '' then
      local t, p = warm.buffer_text(b)
      if p then
        table.insert(files, { path = p, text = t })
      end
    end
  end
  return files
end

--- "notes.md:L3" or "notes.md:L3-L5" (the lines cited, else where the quote is), or the
--- file alone; a passage no citation names is "(uncited)".
local function label(c)
  local name = val(c.file) or val(c.source) or '?'
  local ln = val(c.lines) or val(c.located)
  if ln then
    name = ln[1] == ln[2] and ('%s:L%d'):format(name, ln[1]) or ('%s:L%d-L%d'):format(name, ln[1], ln[2])
  end
  return val(c.file) and name or (name .. ' (uncited)')
end

--- One line per citation of an answer/done: "✓ notes.md:L3" or "✗ notes.md:L3: problem".
function M.citation_lines(done)
  local cites = val(done.citations) or {}
  if #cites == 0 then
    return { '✗ no quotes: nothing in this answer is checked against the files' }
  end
  local lines = {}
  for _, c in ipairs(cites) do
    if c.found then
      table.insert(lines, '✓ ' .. label(c))
    else
      table.insert(lines, '✗ ' .. label(c) .. ': ' .. (val(c.problem) or ''))
    end
  end
  return lines
end

local function split(text)
  return vim.split(text or '', '\n', { plain = true })
end

local function show(s, body)
  if not api.nvim_buf_is_valid(s.buf) then
    return
  end
  local lines = { 'Q: ' .. s.question, '' }
  vim.list_extend(lines, body)
  vim.bo[s.buf].modifiable = true
  api.nvim_buf_set_lines(s.buf, 0, -1, false, lines)
  vim.bo[s.buf].modifiable = false
end

local function scratch()
  vim.cmd('botright new')
  local buf = api.nvim_get_current_buf()
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].bufhidden = 'wipe'
  vim.bo[buf].swapfile = false
  vim.bo[buf].filetype = 'markdown'
  pcall(api.nvim_buf_set_name, buf, ('specedit://answer/%d'):format(buf))
  return buf
end

--- Keep a notification of a session whose answer/start has not been answered yet.
local function stash(method, p)
  if M.sessions[p.sessionId] then
    return false
  end
  early[p.sessionId] = early[p.sessionId] or {}
  table.insert(early[p.sessionId], { method, p })
  return true
end

client.handlers['answer/progress'] = function(p)
  if stash('answer/progress', p) then
    return
  end
  local s = M.sessions[p.sessionId]
  if p.state == 'queued' then
    show(s, { ('(queued, #%d)'):format(val(p.queuePosition) or 0) })
  elseif val(p.text) then
    show(s, split(p.text))
  end
end

client.handlers['answer/done'] = function(p)
  if stash('answer/done', p) then
    return
  end
  local s = M.sessions[p.sessionId]
  M.sessions[p.sessionId] = nil
  M.last = p
  local msg = val(p.message) or ''
  if p.status == 'cancelled' then
    show(s, { '(cancelled)' })
    vim.notify('specedit: the answer was cancelled', vim.log.levels.INFO)
    return
  elseif p.status ~= 'done' then
    show(s, { ('(%s: %s)'):format(p.status, msg) })
    vim.notify('specedit: the answer failed: ' .. msg, vim.log.levels.ERROR)
    return
  end
  local body = split((val(p.output) or ''):gsub('\n+$', ''))
  table.insert(body, '')
  vim.list_extend(body, M.citation_lines(p))
  show(s, body)
  if p.quotesFound then
    vim.notify('specedit: every quote was found in its file', vim.log.levels.INFO)
  else
    vim.notify('specedit: some quotes were not found in their files (✗)', vim.log.levels.WARN)
  end
end

--- The connection was lost: the answers in flight will never end.
function M.disconnected()
  for sid, s in pairs(M.sessions) do
    M.sessions[sid] = nil
    show(s, { '(the server went away)' })
  end
end

--- Cancel the answer shown in `buf`; false when `buf` shows none that runs.
function M.cancel(buf)
  for sid, s in pairs(M.sessions) do
    if s.buf == buf then
      client.request('answer/cancel', { sessionId = sid }, function() end)
      return true
    end
  end
  return false
end

--- Ask `question` about `buf` (0: current) and its neighbours; `opts` adds answer/start
--- params (style, maxTokens, verbatim) to setup()'s `ask`. Returns the scratch buffer.
function M.ask(question, buf, opts)
  buf = (buf == nil or buf == 0) and api.nvim_get_current_buf() or buf
  local params = vim.tbl_extend('force', config.options.ask or {}, opts or {})
  params.question, params.contextFiles = question, M.context(buf)
  local s = { buf = scratch(), question = question }
  show(s, { '(asking…)' })
  client.request('answer/start', params, function(err, res)
    if err then
      show(s, { '(error: ' .. (err.message or vim.inspect(err)) .. ')' })
      vim.notify('specedit: ' .. (err.message or vim.inspect(err)), vim.log.levels.ERROR)
      return
    end
    M.sessions[res.sessionId] = s
    local pending = early[res.sessionId] or {}
    early = {} -- only this request's can be waiting: the others were answered before
    for _, m in ipairs(pending) do
      client.handlers[m[1]](m[2])
    end
  end)
  return s.buf
end

--- :SpeceditAsk {question}; without one, it asks (vim.ui.input).
function M.command(o)
  local buf = api.nvim_get_current_buf()
  local q = vim.trim(o.args or '')
  if q ~= '' then
    M.ask(q, buf)
    return
  end
  vim.ui.input({ prompt = 'specedit ask: ' }, function(input)
    if input and vim.trim(input) ~= '' and api.nvim_buf_is_valid(buf) then
      M.ask(input, buf)
    end
  end)
end

return M
