-- A minimal Neovim UI (nvim_ui_attach, ext_linegrid) written in Lua, run by `nvim -l`: it
-- starts `nvim --embed` with the arguments after `--`, keeps the screen grid from the redraw
-- events, and when the embedded Neovim sends the notification `specedit_screen` (the driver
-- calls vim.rpcnotify on its UI's channel), writes the grid to the JSON file named by
-- $SPECEDIT_SCREEN and quits it. The JSON: { rows = { { {text, hl_id}, ... }, ... },
-- hl = { [id] = rgb attrs }, default = { fg, bg } } (tests/screen_svg.py renders it).
-- Usage: nvim -l nvim_screen.lua COLUMNS LINES NVIM -- ARGS...
local uv = vim.uv
local cols, lines, exe = tonumber(arg[1]), tonumber(arg[2]), arg[3]
local child_args = { '--embed' }
for i = 5, #arg do
  table.insert(child_args, arg[i])
end

local grid, hl, default = {}, {}, {}
local function resize(w, h)
  grid = {}
  for r = 1, h do
    grid[r] = {}
    for c = 1, w do
      grid[r][c] = { ' ', 0 }
    end
  end
end
resize(cols, lines)

local handlers = {}
function handlers.grid_resize(_, w, h) resize(w, h) end
function handlers.grid_clear()
  resize(#grid[1], #grid)
end
function handlers.default_colors_set(fg, bg) default = { fg = fg, bg = bg } end
function handlers.hl_attr_define(id, rgb) hl[id] = rgb end
function handlers.grid_line(_, row, col, cells)
  local r, c, id = grid[row + 1], col + 1, 0
  for _, cell in ipairs(cells) do
    id = cell[2] or id
    for _ = 1, cell[3] or 1 do
      r[c] = { cell[1], id }
      c = c + 1
    end
  end
end
function handlers.grid_scroll(_, top, bot, left, right, rows)
  local from, to, step = top + 1, bot, 1
  if rows < 0 then
    from, to, step = bot, top + 1, -1
  end
  for r = from, to, step do
    local src = r + rows
    if src > top and src <= bot then
      for c = left + 1, right do
        grid[r][c] = grid[src][c]
      end
    end
  end
end

local stdin, stdout = uv.new_pipe(), uv.new_pipe()
local child = uv.spawn(exe, { args = child_args, stdio = { stdin, stdout, 2 } }, function() end)
assert(child, 'could not start ' .. exe)
local msgid = 0
local function request(method, params)
  msgid = msgid + 1
  stdin:write(vim.mpack.encode({ 0, msgid, method, params }))
end

local done, result = false, nil
local function snapshot()
  local rows = {}
  for r, row in ipairs(grid) do
    rows[r] = row
  end
  local hls = {}
  for id, a in pairs(hl) do
    hls[tostring(id)] = a
  end
  local f = assert(io.open(os.getenv('SPECEDIT_SCREEN'), 'w'))
  f:write(vim.json.encode({ rows = rows, hl = hls, default = default }))
  f:close()
  result = 'ok'
end

local decode = vim.mpack.Unpacker({ ext = { [0] = tostring, [1] = tostring, [2] = tostring } })
local buf = ''
stdout:read_start(function(err, data)
  if err or not data then
    done = true
    return
  end
  buf = buf .. data
  local pos = 1
  while pos <= #buf do
    local ok, msg, nxt = pcall(decode, buf, pos)
    if not ok or msg == nil then
      break
    end
    pos = nxt
    if msg[1] == 2 and msg[2] == 'redraw' then
      for _, ev in ipairs(msg[3]) do
        local h = handlers[ev[1]]
        if h then
          for i = 2, #ev do
            h(unpack(ev[i]))
          end
        end
      end
    elseif msg[1] == 2 and msg[2] == 'specedit_screen' then
      snapshot()
      request('nvim_command', { 'qa!' })
    elseif msg[1] == 1 and msg[3] ~= vim.NIL and msg[3] ~= nil then
      io.stderr:write('nvim_screen: ' .. vim.inspect(msg[3]) .. '\n')
    end
  end
  buf = buf:sub(pos)
end)

request('nvim_ui_attach', { cols, lines, { ext_linegrid = true, rgb = true } })
vim.wait(120000, function() return done end, 20)
if not result then
  io.stderr:write('nvim_screen: the embedded Neovim never sent specedit_screen\n')
  os.exit(1)
end
