--- Options of the specedit plugin; override with require('specedit').setup({...}).
local M = {}

M.defaults = {
  -- socket of `specedit serve`; nil: $XDG_RUNTIME_DIR/specedit/rpc.sock (or the fallback dir)
  socket = nil,
  -- start the server when none answers on the socket
  auto_start = true,
  -- command that starts the server (--socket/--model are appended when set here)
  cmd = { 'specedit', 'serve' },
  -- model for an auto-started server (catalog name or GGUF path); nil: the server's default
  model = nil,
  -- how long to wait for an auto-started server (the first load checks the model)
  start_timeout_ms = 300000,
  request_timeout_ms = 30000,
  -- rewrite/start options: k, temperature, seed, draft ("lookup"|"none"), exact, maxTokens
  options = {},
  -- grow a visual range to the enclosing function/class (tree-sitter, server side)
  expand_to_node = false,
  -- buffer-local keys while reviewing hunks (false disables one)
  keys = {
    accept = '<leader>sa',
    reject = '<leader>sr',
    accept_all = '<leader>sA',
    reject_all = '<leader>sR',
  },
  -- show progress as virtual text at the first line of the rewritten range
  progress_virt_text = true,
  -- have the server prefill the buffer (rewrite/warm) while you type :SpeceditRewrite,
  -- and when you enter a buffer while connected: the rewrite then prefills only the instruction
  warm = true,
}

M.options = vim.deepcopy(M.defaults)

function M.setup(opts)
  M.options = vim.tbl_deep_extend('force', vim.deepcopy(M.defaults), opts or {})
end

return M
