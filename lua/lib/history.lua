-- Helpers shared by the write scripts (create, update, delete). Inlined by the loader where a
-- script says `-- @include history.lua`, so every script stays one self-contained EVAL.

local function next_version(counter)
  local current = redis.call('GET', counter)
  if not current then current = '1' end
  return string.format('%d', tonumber(current) + 1)
end

local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- Drops the oldest events while they are older than the window (the count cap is applied by XADD).
local function trim_by_age(stream, now, window)
  local cutoff = now - window
  local last_old = nil
  local start = '-'
  for _ = 1, 10000 do
    local head = redis.call('XRANGE', stream, start, '+', 'COUNT', 1)
    if #head == 0 then break end
    local id = head[1][1]
    if tonumber(head[1][2][2]) >= cutoff then break end
    last_old = id
    start = '(' .. id
  end
  if last_old then
    -- Ids are "<rv>-0", so MINID "<rv>-1" removes exactly the entries up to and including rv.
    redis.call('XTRIM', stream, 'MINID', (string.gsub(last_old, '-0$', '-1')))
  end
end


-- Splits a stored hash value "<rv>:<offset>:<json>" into rv, offset (number) and json.
local function split_stored(stored)
  local sep1 = string.find(stored, ':', 1, true)
  local sep2 = string.find(stored, ':', sep1 + 1, true)
  return string.sub(stored, 1, sep1 - 1), tonumber(string.sub(stored, sep1 + 1, sep2 - 1)), string.sub(stored, sep2 + 1)
end
