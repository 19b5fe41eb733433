--- Warm-ups (rewrite/warm): have the server prefill the prompt prefix of a buffer (and of a
--- range) while the instruction is typed, so the rewrite then prefills only its instruction.
--- Also the two helpers that rewrite/start and rewrite/warm share: the buffer's text and
--- path as sent, and the range parameters.
local M = {}

local api = vim.api
local config = require('specedit.config')
local client = require('specedit.client')

local last_warm = nil ---@type string? buffer, changedtick and range of the last warm-up sent

--- Forget the last warm-up (the server went away: send it again next time).
function M.forget()
  last_warm = nil
end

--- The buffer's text and path (nil when unnamed) as rewrite/start sends them.
function M.buffer_text(buf)
  local text = table.concat(api.nvim_buf_get_lines(buf, 0, -1, false), '\n')
  if vim.bo[buf].eol or vim.bo[buf].fixeol then
    text = text .. '\n'
  end
  local name = api.nvim_buf_get_name(buf)
  return text, name ~= '' and name or nil
end

--- rewrite/start's range and options.expand/language for `range` ({start, end}, 0-based).
function M.range_params(params, buf, range)
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
  local text, path = M.buffer_text(buf)
  if not text:match('%S') then
    return
  end
  last_warm = key
  local params = { text = text, path = path }
  if range then
    M.range_params(params, buf, range)
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

return M
