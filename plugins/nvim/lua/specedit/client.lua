--- Connection to `specedit serve`: find the socket, start the server if none answers,
--- connect with vim.lsp.rpc.connect (JSON-RPC 2.0 with LSP framing) and initialize.
---
--- Contract: M.ensure(cb) calls cb(client, init_result) once connected and initialized,
--- or cb(nil, err_message). Notifications go to the handler set with M.on_notification.
--- The server outlives Neovim (it is started detached) so the next editor reuses it.
--- Safety: nothing connects to a socket whose directory breaks the server's rule
--- (app/server/paths.py socket_dir_problem: a real directory, owned by this user, mode
--- 0700), so a socket planted by another user never sees a buffer; M.default_socket()
--- computes the server's default path (the tests keep the two in step).
local M = {}

local uv = vim.uv or vim.loop

M.client = nil ---@type vim.lsp.rpc.PublicClient?
M.info = nil ---@type table? initialize result
M.socket = nil ---@type string? socket in use
M.started_pid = nil ---@type integer? pid of a server this plugin started
M.handlers = {} ---@type table<string, fun(params: table)>
local waiting = nil ---@type fun(client: table?, err: string?)[]?

--- "/a//b/" -> "/a/b", as Python's pathlib writes a path.
local function norm(p)
  p = p:gsub('/+', '/')
  if #p > 1 then
    p = p:gsub('/$', '')
  end
  return p
end

--- The user's cache base, as the server's user_cache_home(): $XDG_CACHE_HOME when
--- absolute, else ~/.cache (macOS: ~/Library/Caches).
function M.cache_home()
  local xdg = vim.env.XDG_CACHE_HOME
  if xdg and xdg:sub(1, 1) == '/' then
    return norm(xdg)
  end
  local home = norm(vim.env.HOME or uv.os_homedir() or '')
  if uv.os_uname().sysname == 'Darwin' then
    return home .. '/Library/Caches'
  end
  return home .. '/.cache'
end

--- The default socket path, computed as the server does: $XDG_RUNTIME_DIR/specedit/rpc.sock,
--- else <user cache>/specedit/run/rpc.sock (never the shared temp dir).
function M.default_socket()
  local xdg = vim.env.XDG_RUNTIME_DIR
  if xdg and xdg:sub(1, 1) == '/' then
    return norm(xdg) .. '/specedit/rpc.sock'
  end
  return norm(M.cache_home() .. '/specedit/run/rpc.sock')
end

--- Why the directory of socket `path` must not be trusted (one line, the server's words),
--- or nil when it is a real directory owned by this user with mode 0700, or absent (then
--- nothing listens there).
function M.socket_problem(path)
  local dir = vim.fs.dirname(path)
  local st, _, code = uv.fs_lstat(dir)
  if not st then
    if code == 'ENOENT' or code == 'ENOTDIR' then
      return nil
    end
    return ('cannot inspect the socket directory %s: %s'):format(dir, code)
  end
  if st.type == 'link' then
    return ('the socket directory %s is a symlink; refusing it'):format(dir)
  end
  if st.type ~= 'directory' then
    return ('the socket directory %s is not a directory; refusing it'):format(dir)
  end
  if st.uid ~= uv.getuid() then
    return ('the socket directory %s belongs to uid %d, not to you; refusing it'):format(dir, st.uid)
  end
  local mode = st.mode % 512
  if mode ~= 448 then -- 0700
    return ('the socket directory %s has mode %04o, not 0700; refusing it (chmod 700 %s if it is yours)'):format(
      dir,
      mode,
      dir
    )
  end
  return nil
end

function M.socket_path()
  return require('specedit.config').options.socket or M.default_socket()
end

--- The discovery file next to the socket, decoded (nil if absent, unreadable or unsafe).
function M.discovery(sock)
  sock = sock or M.socket_path()
  if M.socket_problem(sock) then
    return nil
  end
  local fd = io.open(sock:gsub('%.sock$', '') .. '.json', 'r')
  if not fd then
    return nil
  end
  local ok, data = pcall(vim.json.decode, fd:read('*a'))
  fd:close()
  return ok and data or nil
end

--- Asynchronously test whether a server accepts connections on `path`; cb(bool) in the loop.
--- A socket in an unsafe directory is never connected to (false).
function M.probe(path, cb)
  if M.socket_problem(path) then
    vim.schedule(function()
      cb(false)
    end)
    return
  end
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

--- The repository this plugin lives in (<repo>/plugins/nvim/lua/specedit/client.lua).
function M.repo_root()
  local src = debug.getinfo(1, 'S').source:gsub('^@', '')
  return vim.fn.fnamemodify(src, ':p:h:h:h:h:h')
end

--- `specedit` in the project's venv next to this plugin (<repo>/.venv/bin/specedit), if any.
function M.venv_specedit()
  local exe = M.repo_root() .. '/.venv/bin/specedit'
  return vim.fn.executable(exe) == 1 and exe or nil
end

--- The command that starts the server, and where it came from: cmd from setup(), else the
--- project's venv, else `specedit` on PATH. Flags from setup() (socket, model, gpu_layers,
--- backend, device, quant) are appended, each only when set.
function M.server_cmd()
  local cfg = require('specedit.config').options
  local cmd, source
  if cfg.cmd then
    cmd, source = vim.deepcopy(cfg.cmd), 'cmd in setup()'
  elseif M.venv_specedit() then
    cmd, source = { M.venv_specedit(), 'serve' }, "the project's venv"
  else
    cmd, source = { 'specedit', 'serve' }, 'PATH'
  end
  for _, f in ipairs({
    { '--socket', cfg.socket },
    { '--model', cfg.model },
    { '--gpu-layers', cfg.gpu_layers },
    { '--backend', cfg.backend },
    { '--device', cfg.device },
    { '--quant', cfg.quant },
  }) do
    if f[2] ~= nil then
      vim.list_extend(cmd, { f[1], tostring(f[2]) })
    end
  end
  return cmd, source
end

--- Advice that works when no server command is found.
function M.install_advice()
  local root = M.repo_root()
  local advice = {
    ('run `make setup` in %s: it builds %s/.venv, which this plugin finds by itself'):format(root, root),
    'put `specedit` on PATH (pip install -e "<specedit repository>[server]")',
    'or set setup({ cmd = { "/path/to/specedit", "serve" } })',
  }
  if vim.fn.filereadable(root .. '/pyproject.toml') == 0 then
    table.remove(advice, 1)
  end
  return advice
end

--- The log of a server this plugin started (its stderr).
function M.server_log()
  return vim.fn.stdpath('log') .. '/specedit-serve.log'
end

local function finish(client, err)
  local cbs = waiting or {}
  waiting = nil
  for _, cb in ipairs(cbs) do
    cb(client, err)
  end
end

local function connect(path)
  local problem = M.socket_problem(path)
  if problem then
    finish(nil, problem)
    return
  end
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

--- Why the server stopped, from its log (its stderr): the last "error: …" message (joined, if
--- it was wrapped), else the last non-empty line.
local function last_log_line()
  local ok, lines = pcall(vim.fn.readfile, M.server_log())
  lines = ok and lines or {}
  for i = #lines, 1, -1 do
    if lines[i]:match('^error:') then
      return vim.trim(table.concat(vim.list_slice(lines, i), ' '):gsub('%s+', ' '))
    end
  end
  for i = #lines, 1, -1 do
    if lines[i]:match('%S') then
      return vim.trim(lines[i])
    end
  end
  return nil
end

local function start_server(path)
  local cfg = require('specedit.config').options
  local cmd = M.server_cmd()
  if vim.fn.executable(cmd[1]) ~= 1 then
    return ('cannot start the server: %s is not executable (%s)'):format(cmd[1], M.install_advice()[1])
  end
  vim.fn.mkdir(vim.fn.stdpath('log'), 'p')
  local fd = uv.fs_open(M.server_log(), 'w', 384) -- 0600: it names files
  local exited = nil
  local handle, pid
  handle, pid = uv.spawn(cmd[1], {
    args = vim.list_slice(cmd, 2),
    stdio = { nil, nil, fd },
    detached = true, -- it outlives Neovim, for the next editor
  }, function(code)
    exited = code
    handle:close()
  end)
  if fd then
    uv.fs_close(fd)
  end
  if not handle then
    return 'cannot start the server: ' .. tostring(pid)
  end
  handle:unref()
  M.started_pid = pid
  local deadline = uv.now() + cfg.start_timeout_ms
  local function poll()
    M.probe(path, function(alive)
      if alive then
        connect(path)
      elseif exited ~= nil then
        finish(nil, ('the server exited (status %d): %s'):format(exited, last_log_line() or M.server_log()))
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
  local problem = M.socket_problem(path)
  if problem then -- never connect there, nor start a server that would refuse it too
    finish(nil, problem)
    return
  end
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
