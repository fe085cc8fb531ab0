-- wrk script for scripts/shortlink-load.sh: GET /{code} where a fraction of
-- the codes are known (read from a file) and the rest are random base62
-- codes that were never issued (a clash with 1M issued codes out of 62^7
-- has odds of about 3e-7 per request).
--   wrk ... -s shortlink-load.lua URL -- CODES_FILE KNOWN_FRACTION
local codes = {}
local known_fraction = 0.5
local alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

function init(args)
  for line in io.lines(args[1]) do
    codes[#codes + 1] = line
  end
  known_fraction = tonumber(args[2] or "0.5")
  -- Each wrk thread has its own Lua state; a table address differs per state.
  math.randomseed(os.time() + tonumber(tostring({}):match("0x(%x+)"), 16) % 1000003)
end

local function unknown_code()
  local t = {}
  for i = 1, 7 do
    local k = math.random(1, 62)
    t[i] = alphabet:sub(k, k)
  end
  return table.concat(t)
end

function request()
  local code
  if math.random() < known_fraction then
    code = codes[math.random(1, #codes)]
  else
    code = unknown_code()
  end
  return wrk.format("GET", "/" .. code)
end
