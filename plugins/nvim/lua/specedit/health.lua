--- :checkhealth specedit: Neovim, the server command (cmd from setup(), the project's
--- venv next to this plugin, or PATH) with advice that works, the socket's directory (the
--- plugin refuses an unsafe one), and whether a server answers.
local M = {}

function M.check()
  local health = vim.health
  local config = require('specedit.config').options
  local client = require('specedit.client')
  health.start('specedit')
  if vim.fn.has('nvim-0.10') == 1 then
    health.ok('Neovim ' .. tostring(vim.version()))
  else
    health.error('Neovim >= 0.10 is required')
  end
  local cmd, source = client.server_cmd()
  local exe = cmd[1]
  if vim.fn.executable(exe) == 1 then
    health.ok(('server command (from %s): %s'):format(source, table.concat(cmd, ' ')))
  elseif config.auto_start then
    health.warn(('%s (from %s) is not executable: the server cannot be started'):format(exe, source), client.install_advice())
  else
    health.info(exe .. ' not found; auto_start is off')
  end
  local sock = client.socket_path()
  local problem = client.socket_problem(sock)
  if problem then
    health.error(problem, { 'the plugin will not connect there: another user could have put a socket in it' })
    return
  end
  local disc = client.discovery(sock)
  if client.probe_sync(sock, 2000) then
    health.ok('a server answers on ' .. sock)
    if disc then
      health.ok(('discovery: pid %s, protocol %s, model %s'):format(disc.pid, disc.protocolVersion, disc.model))
    end
  elseif config.auto_start then
    health.info('no server on ' .. sock .. '; one starts with the first rewrite')
  else
    health.warn('no server on ' .. sock, { 'run `specedit serve`' })
  end
  if client.info then
    local i = client.info
    health.ok(('connected: %s %s, protocol %s, model %s on %s'):format(i.server, i.version, i.protocolVersion, i.model, i.backend))
  end
end

return M
