-- specedit: rewrite code with a local model (see :help specedit).
if vim.g.loaded_specedit then
  return
end
vim.g.loaded_specedit = true

if vim.fn.has('nvim-0.10') == 0 then
  vim.api.nvim_echo({ { 'specedit needs Neovim >= 0.10', 'ErrorMsg' } }, true, {})
  return
end

local function cmd(name, fn, opts)
  vim.api.nvim_create_user_command(name, function(o)
    require('specedit')[fn](o)
  end, opts or {})
end

cmd('SpeceditRewrite', 'rewrite_command', {
  nargs = '*',
  range = true,
  desc = 'specedit: rewrite the buffer or [range] as instructed (asks when no instruction is given)',
})
cmd('SpeceditCancel', 'cancel', { desc = 'specedit: cancel the rewrite of this buffer' })
cmd('SpeceditAccept', 'accept', { desc = 'specedit: accept the hunk under the cursor' })
cmd('SpeceditReject', 'reject', { desc = 'specedit: reject the hunk under the cursor' })
cmd('SpeceditAcceptAll', 'accept_all', { desc = 'specedit: accept every hunk' })
cmd('SpeceditRejectAll', 'reject_all', { desc = 'specedit: reject every hunk' })
cmd('SpeceditStatus', 'status', { desc = 'specedit: show the connection and rewrite state' })
cmd('SpeceditWarm', 'warm_command', { desc = 'specedit: have the server read this buffer now' })
cmd('SpeceditAsk', 'ask_command', {
  nargs = '*',
  desc = 'specedit: answer a question about this buffer and the other loaded ones, quotes checked',
})

-- warm-ups (rewrite/warm): while :SpeceditRewrite is being typed, and on entering a buffer
-- while connected; require('specedit').setup({ warm = false }) turns both off
local group = vim.api.nvim_create_augroup('specedit', { clear = true })
vim.api.nvim_create_autocmd('CmdlineChanged', {
  group = group,
  pattern = ':',
  callback = function()
    local line = vim.fn.getcmdline()
    if line:find('SpeceditRew', 1, true) then
      require('specedit').on_cmdline(line)
    end
  end,
})
vim.api.nvim_create_autocmd('BufEnter', {
  group = group,
  callback = function(a)
    if package.loaded['specedit'] then
      require('specedit').warm(a.buf, false)
    end
  end,
})
