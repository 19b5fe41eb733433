--- The hunks found so far while a rewrite runs (rewrite/preview), drawn into the buffer
--- without changing its text: the old lines of each hunk are highlighted SpeceditDelete and
--- its new lines follow as virtual lines (SpeceditAdd). Each preview replaces the last one.
--- A hunk whose old lines are no longer in the buffer (it was edited meanwhile) is not
--- drawn. The text itself changes only when the rewrite is done (review.lua).
local M = {}

local api = vim.api
local review = require('specedit.review')
M.ns = api.nvim_create_namespace('specedit_preview')

function M.clear(buf)
  if api.nvim_buf_is_valid(buf) then
    api.nvim_buf_clear_namespace(buf, M.ns, 0, -1)
  end
end

--- Draw `hunks` in `buf`; returns how many were drawn.
function M.show(buf, hunks)
  if not api.nvim_buf_is_valid(buf) then
    return 0
  end
  review.set_hl()
  M.clear(buf)
  local count = api.nvim_buf_line_count(buf)
  local drawn = 0
  for _, h in ipairs(hunks) do
    local old = review.split(h.oldText)
    local cur = api.nvim_buf_get_lines(buf, h.startLine, h.endLine, false)
    if h.endLine <= count and vim.deep_equal(cur, old) then
      local virt = {}
      for _, l in ipairs(review.split(h.newText)) do
        table.insert(virt, { { l, 'SpeceditAdd' } })
      end
      for row = h.startLine, h.endLine - 1 do
        api.nvim_buf_set_extmark(buf, M.ns, row, 0, { line_hl_group = 'SpeceditDelete' })
      end
      if #virt > 0 then
        local opts = { virt_lines = virt }
        local row = h.endLine - 1 -- below the old lines
        if h.endLine == h.startLine then -- an insertion before startLine
          row, opts.virt_lines_above = h.startLine, true
          if row >= count then
            row, opts.virt_lines_above = count - 1, false
          end
        end
        api.nvim_buf_set_extmark(buf, M.ns, math.max(row, 0), 0, opts)
      end
      drawn = drawn + 1
    end
  end
  return drawn
end

--- The extmarks of the preview: { deleted = rows highlighted, added = virtual line texts }.
function M.marks(buf)
  local out = { deleted = {}, added = {} }
  for _, m in ipairs(api.nvim_buf_get_extmarks(buf, M.ns, 0, -1, { details = true })) do
    if m[4].line_hl_group then
      table.insert(out.deleted, m[2])
    end
    for _, vl in ipairs(m[4].virt_lines or {}) do
      table.insert(out.added, vl[1][1])
    end
  end
  return out
end

return M
