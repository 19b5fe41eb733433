--- Connection to `specedit serve`: find the socket, start the server if none answers,
--- connect with vim.lsp.rpc.connect (JSON-RPC 2.0 with LSP framing) and initialize.
---
--- Contract: M.ensure(cb) calls cb(client, init_result) once connected and initialized,
--- or cb(nil, err_message). Notifications go to the handler set with M.on_notification.
--- The server outlives Neovim (it is started detached) so the next editor reuses it.
local M = {}

local uv = vim.uv or vim.loop

M.client = nil ---@type vim.lsp.rpc.PublicClient?
M.info = nil ---@type table? initialize result
M.socket = nil ---@type string? socket in use
M.started_pid = nil ---@type integer? pid of a server this plugin started
M.handlers = {} ---@type table<string, fun(params: table)>
local waiting = nil ---@type fun(client: table?, err: string?)[]?

--- The default socket path, computed as the server does.
function M.default_socket()
  local xdg = vim.env.XDG_RUNTIME_DIR
  if xdg and xdg:sub(1, 1) == '/' then
    return xdg .. '/specedit/rpc.sock'
  end
  local tmp = vim.env.TMPDIR or vim.env.TEMP or vim.env.TMP or '/tmp'
  return ('%s/specedit-%d/rpc.sock'):format(tmp:gsub('/$', ''), uv.getuid())
end

function M.socket_path()
  return require('specedit.config').options.socket or M.default_socket()
end

--- The discovery file next to the socket, decoded (nil if absent or unreadable).
function M.discovery(sock)
  local path = (sock or M.socket_path()):gsub('%.sock$', '') .. '.json'
  local fd = io.open(path, 'r')
  if not fd then
    return nil
  end
  local ok, data = pcall(vim.json.decode, fd:read('*a'))
  fd:close()
  return ok and data or nil
end

--- Asynchronously test whether a server accepts connections on `path`; cb(bool) in the loop.
function M.probe(path, cb)
  local pipe = uv.new_pipe(false)
  pipe:connect(path, function(err)
    pipe:close()
    vim.schedule(function()
      cb(err == nil)
    end)
  end)
end

--- Synchronous probe (for :checkhealth).
function M.probe_sync(path, timeout)
  local result = nil
  M.probe(path, function(ok)
    result = ok
  end)
  vim.wait(timeout or 2000, function()
    return result ~= nil
  end, 20)
  return result == true
end

local function finish(client, err)
  local cbs = waiting or {}
  waiting = nil
  for _, cb in ipairs(cbs) do
    cb(client, err)
  end
end

local function connect(path)
  local dispatchers = {
    notification = function(method, params)
      local h = M.handlers[method]
      if h then
        h(params)
      end
    end,
    on_exit = function()
      vim.schedule(function()
        M.client, M.info = nil, nil
        local h = M.handlers['$/disconnected']
        if h then
          h({})
        end
      end)
    end,
  }
  local client = vim.lsp.rpc.connect(path)(dispatchers)
  local cfg = require('specedit.config').options
  client.request('initialize', { client = 'nvim', version = tostring(vim.version()) }, function(err, res)
    if err then
      client.terminate()
      finish(nil, 'initialize failed: ' .. (err.message or vim.inspect(err)))
      return
    end
    M.client, M.info, M.socket = client, res, path
    finish(client, nil)
  end)
  -- a server that accepted the connection but never answers
  vim.defer_fn(function()
    if waiting and M.client == nil then
      client.terminate()
      finish(nil, 'no answer to initialize from ' .. path)
    end
  end, cfg.request_timeout_ms)
end

local function start_server(path)
  local cfg = require('specedit.config').options
  local cmd = vim.deepcopy(cfg.cmd)
  if cfg.socket then
    vim.list_extend(cmd, { '--socket', cfg.socket })
  end
  if cfg.model then
    vim.list_extend(cmd, { '--model', cfg.model })
  end
  if vim.fn.executable(cmd[1]) ~= 1 then
    return ('cannot start the server: %s is not executable (set cmd in setup())'):format(cmd[1])
  end
  local ok, obj = pcall(vim.system, cmd, { detach = true, stdout = false, stderr = false })
  if not ok then
    return 'cannot start the server: ' .. tostring(obj)
  end
  M.started_pid = obj.pid
  local deadline = uv.now() + cfg.start_timeout_ms
  local function poll()
    M.probe(path, function(alive)
      if alive then
        connect(path)
      elseif uv.now() > deadline then
        finish(nil, ('the server did not come up on %s within %d s'):format(path, cfg.start_timeout_ms / 1000))
      else
        vim.defer_fn(poll, 200)
      end
    end)
  end
  vim.defer_fn(poll, 200)
  return nil
end

--- Connect (starting the server if needed); cb(client, err).
function M.ensure(cb)
  if M.client and not M.client.is_closing() then
    cb(M.client, nil)
    return
  end
  if waiting then
    table.insert(waiting, cb)
    return
  end
  waiting = { cb }
  local path = M.socket_path()
  M.probe(path, function(alive)
    if alive then
      connect(path)
      return
    end
    if not require('specedit.config').options.auto_start then
      finish(nil, 'no specedit server on ' .. path .. ' (run `specedit serve`)')
      return
    end
    vim.notify('specedit: starting the server (loading the model)…', vim.log.levels.INFO)
    local err = start_server(path)
    if err then
      finish(nil, err)
    end
  end)
end

function M.request(method, params, cb)
  M.ensure(function(client, err)
    if not client then
      cb({ message = err }, nil)
      return
    end
    client.request(method, params, cb)
  end)
end

function M.notify(method, params)
  if M.client and not M.client.is_closing() then
    M.client.notify(method, params)
  end
end

function M.disconnect()
  if M.client then
    M.client.terminate()
  end
  M.client, M.info = nil, nil
end

return M
