--- Inline review of a finished rewrite: hunks are put into the buffer, added lines are
--- highlighted, deleted lines are shown as virtual lines above them. Accepting a hunk keeps
--- it; rejecting one puts the old lines back. Every change of one review is joined into a
--- single undo step (undojoin), so after the review one `u` restores the original buffer.
--- M.jump moves the cursor to the next or previous pending hunk (]h / [h), wrapping around.
--- M.show_top scrolls the virtual lines above the first line into view (Neovim draws them only
--- as the window's 'topfill'), so a hunk at the top shows its deleted lines too.
local M = {}

local api = vim.api
M.ns = api.nvim_create_namespace('specedit')

--- Lines of a hunk text ("\n"-terminated lines; the last may lack "\n").
function M.split(text)
  if text == nil or text == '' then
    return {}
  end
  local lines = vim.split(text, '\n', { plain = true })
  if lines[#lines] == '' then
    table.remove(lines)
  end
  return lines
end

local function set_hl()
  api.nvim_set_hl(0, 'SpeceditAdd', { default = true, link = 'DiffAdd' })
  api.nvim_set_hl(0, 'SpeceditDelete', { default = true, link = 'DiffDelete' })
  api.nvim_set_hl(0, 'SpeceditHint', { default = true, link = 'Comment' })
  api.nvim_set_hl(0, 'SpeceditProgress', { default = true, link = 'DiagnosticInfo' })
  api.nvim_set_hl(0, 'SpeceditWarn', { default = true, link = 'DiagnosticWarn' })
end

--- The buffer's current lines [s, e) of a pending hunk (extmarks follow edits).
local function position(buf, h)
  local m = api.nvim_buf_get_extmark_by_id(buf, M.ns, h.mark, { details = true })
  if not m or not m[1] then
    return nil
  end
  local row = m[1]
  if h.n_new == 0 then
    if h.anchor_below then
      return row + 1, row + 1
    end
    return row, row
  end
  return row, m[3].end_row + 1
end

local function undojoin(buf)
  api.nvim_buf_call(buf, function()
    pcall(vim.cmd, 'undojoin')
  end)
end

local function place(buf, h, row, index, total)
  local old_virt = {}
  for _, l in ipairs(M.split(h.oldText)) do
    table.insert(old_virt, { { l, 'SpeceditDelete' } })
  end
  local hint = { { (' specedit %d/%d '):format(index, total), 'SpeceditHint' } }
  local opts = { virt_lines = #old_virt > 0 and old_virt or nil, virt_lines_above = true }
  local new_lines = M.split(h.newText)
  h.n_new = #new_lines
  if h.n_new > 0 then
    opts.end_row = row + h.n_new - 1
    opts.end_col = #new_lines[#new_lines]
    opts.hl_group = 'SpeceditAdd'
    opts.hl_eol = true
    opts.virt_text = hint
    opts.virt_text_pos = 'eol'
    opts.right_gravity = false
    opts.end_right_gravity = true
  else
    local count = api.nvim_buf_line_count(buf)
    if row >= count then
      row, h.anchor_below = count - 1, true
      opts.virt_lines_above = false
    end
    opts.virt_text = hint
    opts.virt_text_pos = 'eol'
  end
  h.mark = api.nvim_buf_set_extmark(buf, M.ns, row, 0, opts)
end

--- In each window on `buf` that shows its first line, show the virtual lines above it.
function M.show_top(buf)
  local n = 0
  for _, m in ipairs(api.nvim_buf_get_extmarks(buf, M.ns, { 0, 0 }, { 0, -1 }, { details = true })) do
    if m[4].virt_lines_above then
      n = n + #(m[4].virt_lines or {})
    end
  end
  if n == 0 then
    return
  end
  for _, win in ipairs(vim.fn.win_findbuf(buf)) do
    api.nvim_win_call(win, function()
      if vim.fn.line('w0') == 1 then
        vim.fn.winrestview({ topline = 1, topfill = n })
      end
    end)
  end
end

--- Start reviewing `hunks` (from rewrite/done) in `buf`; false and a message if stale.
function M.start(buf, st, hunks)
  set_hl()
  for _, h in ipairs(hunks) do
    local cur = api.nvim_buf_get_lines(buf, h.startLine, h.endLine, false)
    if not vim.deep_equal(cur, M.split(h.oldText)) then
      return false, 'the buffer changed while the rewrite ran; its result was discarded'
    end
  end
  api.nvim_buf_clear_namespace(buf, M.ns, 0, -1)
  for i = #hunks, 1, -1 do
    local h = hunks[i]
    if i < #hunks then
      undojoin(buf)
    end
    api.nvim_buf_set_lines(buf, h.startLine, h.endLine, false, M.split(h.newText))
  end
  local delta = 0
  for i, h in ipairs(hunks) do
    local row = h.startLine + delta
    place(buf, h, row, i, #hunks)
    delta = delta + h.n_new - (h.endLine - h.startLine)
    h.state = 'pending'
  end
  st.hunks = hunks
  st.phase = 'review'
  return true
end

local function pending(st)
  local out = {}
  for _, h in ipairs(st.hunks or {}) do
    if h.state == 'pending' then
      table.insert(out, h)
    end
  end
  return out
end
M.pending = pending

--- The pending hunk at (or nearest to) the cursor row, within one line.
function M.hunk_at_cursor(buf, st)
  local row = api.nvim_win_get_cursor(0)[1] - 1
  local best, dist = nil, math.huge
  for _, h in ipairs(pending(st)) do
    local s, e = position(buf, h)
    if s then
      local d = 0
      if row < s then
        d = s - row
      elseif row >= math.max(e, s + 1) then
        d = row - math.max(e, s + 1) + 1
      end
      if d < dist then
        best, dist = h, d
      end
    end
  end
  if dist <= 1 then
    return best
  end
  return nil
end

--- Move the cursor of the current window to the next (dir 1) or previous (dir -1) pending
--- hunk, wrapping around the buffer; the hunk, or nil when none is pending.
function M.jump(buf, st, dir)
  local row = api.nvim_win_get_cursor(0)[1] - 1
  local starts = {}
  for _, h in ipairs(pending(st)) do
    local s = position(buf, h)
    if s then
      table.insert(starts, { math.min(s, api.nvim_buf_line_count(buf) - 1), h })
    end
  end
  if #starts == 0 then
    return nil
  end
  table.sort(starts, function(a, b)
    return a[1] < b[1]
  end)
  local pick = nil
  if dir > 0 then
    for _, e in ipairs(starts) do
      if e[1] > row then
        pick = e
        break
      end
    end
    pick = pick or starts[1]
  else
    for i = #starts, 1, -1 do
      if starts[i][1] < row then
        pick = starts[i]
        break
      end
    end
    pick = pick or starts[#starts]
  end
  api.nvim_win_set_cursor(0, { pick[1] + 1, 0 })
  return pick[2]
end

function M.accept(buf, h)
  api.nvim_buf_del_extmark(buf, M.ns, h.mark)
  h.state = 'accepted'
end

function M.reject(buf, h)
  local s, e = position(buf, h)
  if s then
    undojoin(buf)
    api.nvim_buf_set_lines(buf, s, e, false, M.split(h.oldText))
  end
  api.nvim_buf_del_extmark(buf, M.ns, h.mark)
  h.state = 'rejected'
end

--- Counts of accepted and rejected hunks.
function M.summary(st)
  local a, r = 0, 0
  for _, h in ipairs(st.hunks or {}) do
    if h.state == 'accepted' then
      a = a + 1
    elseif h.state == 'rejected' then
      r = r + 1
    end
  end
  return a, r
end

M.set_hl = set_hl
return M
