--- Text for the statusline, the progress virtual line, :SpeceditStatus and the notice at the
--- end of a rewrite: pure functions of the server's notifications (docs/protocol.md). Fields
--- that a newer server adds (progress phase and reading figures, done status "truncated",
--- suspect, stats backend/device/verifier/editMode) are optional: an older server's
--- notifications read as before.
local M = {}

--- JSON null arrives as vim.NIL (truthy): map it to nil.
function M.val(x)
  if x == vim.NIL then
    return nil
  end
  return x
end

--- 1234 -> "1,234".
function M.thousands(n)
  local s = tostring(math.floor((tonumber(n) or 0) + 0.5))
  local sign, digits = s:match('^(%-?)(%d+)$')
  if not digits then
    return s
  end
  digits = digits:reverse():gsub('(%d%d%d)', '%1,'):reverse():gsub('^,', '')
  return sign .. digits
end

--- One line for a rewrite/progress notification (without the "specedit: " prefix):
--- "queued (#2)", "reading file 1,234/1,700 tokens, 98 tok/s", then the decode figures;
--- what runs the model follows ("· llama.cpp on CPU, verifier numpy") once the server names it.
function M.progress(p)
  local v = M.val
  if p.state == 'queued' then
    return ('queued (#%d)'):format(v(p.queuePosition) or 0)
  end
  local s
  if v(p.phase) == 'reading' then
    s = 'reading file ' .. M.thousands(v(p.readTokens) or 0)
    if v(p.promptTokens) then
      s = s .. '/' .. M.thousands(p.promptTokens)
    end
    s = s .. ' tokens'
    if v(p.readTokPerSec) then
      s = s .. (', %d tok/s'):format(math.floor(p.readTokPerSec + 0.5))
    end
  else
    s = ('%s tok · %.1f tok/s · acc %d%% · %.2f tok/step'):format(
      M.thousands(v(p.generatedTokens) or 0),
      v(p.tokPerSec) or 0,
      math.floor((v(p.acceptance) or 0) * 100 + 0.5),
      v(p.tokensPerStep) or 0
    )
  end
  local engine = M.engine(p)
  if engine ~= '' then
    s = s .. ' · ' .. engine
  end
  return s
end

--- "llama.cpp on cpu, verifier numpy, edit whole" from a rewrite/done stats table or a
--- rewrite/progress notification ('' if the server does not name them).
function M.engine(stats)
  stats = M.val(stats) or {}
  local function str(x) -- absent, null and '' (a figure not known yet) read alike
    x = M.val(x)
    return (x ~= nil and x ~= '') and tostring(x) or nil
  end
  local parts = {}
  local backend, device = str(stats.backend), str(stats.device)
  if backend then
    table.insert(parts, backend .. (device and (' on ' .. device) or ''))
  elseif device then
    table.insert(parts, 'on ' .. device)
  end
  if str(stats.verifier) then
    table.insert(parts, 'verifier ' .. str(stats.verifier))
  end
  local edit = str(stats.editMode) or str(stats.edit_mode)
  if edit then
    table.insert(parts, 'edit ' .. edit)
  end
  return table.concat(parts, ', ')
end

--- The suspect warning of a rewrite/done (nil when there is none): one line.
function M.suspect(done)
  local s = M.val(done.suspect)
  if type(s) ~= 'table' then
    return nil
  end
  local msg = M.val(s.message)
  if not msg or msg == '' then
    local n = M.val(s.deletedLines)
    msg = ('the result deletes %s line(s) the instruction did not ask to remove (%s)'):format(
      n and tostring(n) or 'some',
      tostring(M.val(s.reason) or '?')
    )
  end
  return msg
end

--- The notice for a finished rewrite with hunks to review, and its log level.
function M.done(p, n_hunks)
  local stats = M.val(p.stats) or {}
  local parts = { ('%d hunk(s)'):format(n_hunks) }
  if M.val(stats.decode_tps) then
    table.insert(parts, ('%.1f tok/s'):format(stats.decode_tps))
  end
  local engine = M.engine(stats)
  if engine ~= '' then
    table.insert(parts, engine)
  end
  local given_up = M.val(stats.given_up)
  if given_up and given_up ~= '' then
    table.insert(parts, given_up) -- the model's blocks could not be read or placed
  end
  local s = table.concat(parts, ', ')
  local level = vim.log.levels.INFO
  local v = M.val(p.validation)
  if type(v) == 'table' and not v.ok then
    s = s .. (' (syntax errors %d -> %d)'):format(v.errorsBefore, v.errorsAfter)
  end
  if p.status == 'truncated' then
    local msg = M.val(p.message)
    s = ('TRUNCATED: %s; %s of the completed part, review them one by one'):format(
      (msg and msg ~= '') and msg or 'the output did not reach its end',
      s
    )
    level = vim.log.levels.WARN
  end
  local suspect = M.suspect(p)
  if suspect then
    s = s .. '. WARNING: ' .. suspect
    level = vim.log.levels.WARN
  end
  return s, level
end

return M
