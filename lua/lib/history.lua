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
-- `due` holds the time (ms) at which the oldest kept event leaves the window: until then nothing is
-- old enough and the stream is not read, which spares every write reading the head entry (the
-- object's text with it). `due` may be early (XADD's count cap removed that event since, or the
-- stream was emptied) but never late, because no event is older than the head; when it has passed,
-- the head is read, old events are trimmed and `due` moves to the new head's time + window (or to
-- now + window: the event this write appends is then the oldest).
local function trim_by_age(stream, due, now, window)
  -- Absent (or not a number: written by no script of ours) means unknown: read the head.
  local at = tonumber(redis.call('GET', due) or '')
  if at and now <= at then return end
  local cutoff = now - window
  local last_old = nil
  local start = '-'
  local next_due = now - 1 -- look again at the next write if the loop stops before a young event
  for _ = 1, 5000 do
    -- Two at a time: a write that trims usually trims one event, then meets a young one.
    local entries = redis.call('XRANGE', stream, start, '+', 'COUNT', 2)
    if #entries == 0 then next_due = now + window; break end
    local young = nil
    for _, entry in ipairs(entries) do
      local t = tonumber(entry[2][2])
      if t >= cutoff then young = t; break end
      last_old = entry[1]
    end
    if young then next_due = young + window; break end
    start = '(' .. last_old
  end
  if last_old then
    -- Ids are "<rv>-0", so MINID "<rv>-1" removes exactly the entries up to and including rv.
    redis.call('XTRIM', stream, 'MINID', (string.gsub(last_old, '-0$', '-1')))
  end
  redis.call('SET', due, string.format('%d', next_due))
end


-- Splits a stored hash value "<rv>:<offset>:<json>" into rv, offset (number) and json.
local function split_stored(stored)
  local sep1 = string.find(stored, ':', 1, true)
  local sep2 = string.find(stored, ':', sep1 + 1, true)
  return string.sub(stored, 1, sep1 - 1), tonumber(string.sub(stored, sep1 + 1, sep2 - 1)), string.sub(stored, sep2 + 1)
end
