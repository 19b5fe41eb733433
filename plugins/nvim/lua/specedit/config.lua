--- Options of the specedit plugin; override with require('specedit').setup({...}).
local M = {}

M.defaults = {
  -- socket of `specedit serve`; nil: $XDG_RUNTIME_DIR/specedit/rpc.sock, else
  -- <user cache>/specedit/run/rpc.sock (as the server computes it). Its directory must be
  -- yours with mode 0700, or the plugin refuses it.
  socket = nil,
  -- start the server when none answers on the socket
  auto_start = true,
  -- command that starts the server; nil: <repo>/.venv/bin/specedit next to this plugin,
  -- else `specedit` on PATH (--socket/--model/--gpu-layers/--backend/--device/--quant are
  -- appended when set)
  cmd = nil,
  -- model for an auto-started server (catalog name or GGUF path); nil: the server's default
  model = nil,
  -- GPU offload of an auto-started server: a layer count, 'all' or 'auto'; nil: its default
  gpu_layers = nil,
  -- backend of an auto-started server: 'llama.cpp', 'torch' or 'auto'; nil: its default
  backend = nil,
  -- torch device of an auto-started server: 'cuda', 'cuda:1' or 'cpu'; nil: CUDA when present
  device = nil,
  -- torch weight quantization of an auto-started server: 'int4', 'int8' or 'none'; nil: the
  -- GGUF's
  quant = nil,
  -- how long to wait for an auto-started server (the first load checks the model)
  start_timeout_ms = 300000,
  request_timeout_ms = 30000,
  -- rewrite/start options: k, temperature, seed, draft ("lookup"|"none"), exact, maxTokens
  options = {},
  -- how the model writes the edit: 'auto' (the server picks), 'blocks' (only the changed
  -- lines, as search/replace blocks) or 'whole' (the whole text); nil: the server's default
  -- (rewrite/start options.edit)
  edit = nil,
  -- :SpeceditAsk's answer/start params besides the question and files: style ("quote" |
  -- "free"), maxTokens, verbatim (false: the quotes are not forced to be copies)
  ask = {},
  -- grow a visual range to the enclosing function/class (tree-sitter, server side)
  expand_to_node = false,
  -- buffer-local keys while reviewing hunks (false disables one)
  keys = {
    accept = '<leader>sa',
    reject = '<leader>sr',
    accept_all = '<leader>sA',
    reject_all = '<leader>sR',
    next_hunk = ']h',
    prev_hunk = '[h',
  },
  -- show progress as virtual text at the first line of the rewritten range
  progress_virt_text = true,
  -- show the hunks found so far while the model writes (virtual lines, the buffer is
  -- changed only when the rewrite is done)
  stream_preview = true,
  -- have the server prefill the buffer (rewrite/warm) while you type :SpeceditRewrite,
  -- and when you enter a buffer while connected: the rewrite then prefills only the instruction
  warm = true,
}

M.options = vim.deepcopy(M.defaults)

function M.setup(opts)
  M.options = vim.tbl_deep_extend('force', vim.deepcopy(M.defaults), opts or {})
end

return M
