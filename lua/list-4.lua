#!lua flags=no-writes
--[[
list-4.lua: one byte-ordered range of a type's objects as they were at a version, read atomically.
The current objects are returned together with, for every key in the range changed after that
version, its state at that version, so the caller can rebuild the exact snapshot.

KEYS[1]  counter   string: the type's current resourceVersion (absent means 1)
KEYS[2]  objects   hash:   object key -> "<rv>:<offset>:<json>"
KEYS[3]  index     zset:   object keys, score 0
KEYS[4]  stream    stream: change events, id "<rv>-0", one per version, trimmed only at the head
ARGV[1]  version to read at, or "" for the current version
ARGV[2]  lower bound of the key range in ZRANGEBYLEX syntax ("-", "[key" or "(key")
ARGV[3]  upper bound of the key range in ZRANGEBYLEX syntax ("+", "[key" or "(key")
ARGV[4]  how many current objects to return beyond the number of changed keys, "0" for all

Returns  {"ok", at, total, n, key1, value1, ..., keyN, valueN, m, change1..., changeM}
           at       the version read at (the current version when ARGV[1] is "")
           total    how many keys the range holds now
           key/value  the first n current keys of the range and their stored "<rv>:<offset>:<json>";
                    n = total when ARGV[4] is "0", else at most ARGV[4] + m
           change   five entries per key of the range changed after `at`, in no particular order:
                    key, "A" (absent at `at`) or "P" (present), rv at `at` (or ""),
                    JSON at `at` (or ""), "1" if the key exists now else "0"
         {"TooLarge", current}  ARGV[1] is newer than the current version
         {"Gone", oldest}       the history no longer reaches back to ARGV[1]
]]

-- Byte order, as ZRANGEBYLEX uses; Lua's own string comparison follows the server's locale.
local function compare(a, b)
  local n = math.min(#a, #b)
  for i = 1, n do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then
      if x < y then return -1 end
      return 1
    end
  end
  if #a == #b then return 0 end
  if #a < #b then return -1 end
  return 1
end

local function above_lower(key, bound)
  if bound == '-' then return true end
  local c = compare(key, string.sub(bound, 2))
  if string.sub(bound, 1, 1) == '[' then return c >= 0 end
  return c > 0
end

local function below_upper(key, bound)
  if bound == '+' then return true end
  local c = compare(key, string.sub(bound, 2))
  if string.sub(bound, 1, 1) == '[' then return c <= 0 end
  return c < 0
end

local current = redis.call('GET', KEYS[1])
if not current then current = '1' end
local at = ARGV[1]
if at == '' then at = current end
local at_number = tonumber(at)
if at_number > tonumber(current) then
  return {'TooLarge', current}
end

local changes = {}
local changed = {}
if at_number < tonumber(current) then
  local head = redis.call('XRANGE', KEYS[4], '-', '+', 'COUNT', 1)
  local oldest = current
  if #head > 0 then
    oldest = string.format('%d', tonumber(string.match(head[1][1], '^(%d+)-')) - 1)
  end
  if at_number < tonumber(oldest) then
    return {'Gone', oldest}
  end
  -- The first event after `at` of each key tells its state at `at`.
  local events = redis.call('XRANGE', KEYS[4], '(' .. at .. '-0', '+')
  for _, entry in ipairs(events) do
    local f = {}
    local fields = entry[2]
    for i = 1, #fields, 2 do f[fields[i]] = fields[i + 1] end
    local key = f['k']
    -- A progress entry (advance-2.lua) has no key: it changed no object.
    if key and not changed[key] and above_lower(key, ARGV[2]) and below_upper(key, ARGV[3]) then
      changed[key] = true
      local exists = tostring(redis.call('HEXISTS', KEYS[2], key))
      if f['e'] == 'ADDED' then
        table.insert(changes, {key, 'A', '', '', exists})
      else
        table.insert(changes, {key, 'P', f['pr'], f['p'], exists})
      end
    end
  end
end

local total = redis.call('ZLEXCOUNT', KEYS[3], ARGV[2], ARGV[3])
local keys
if ARGV[4] == '0' then
  keys = redis.call('ZRANGEBYLEX', KEYS[3], ARGV[2], ARGV[3])
else
  keys = redis.call('ZRANGEBYLEX', KEYS[3], ARGV[2], ARGV[3], 'LIMIT', 0, tonumber(ARGV[4]) + #changes)
end

local reply = {'ok', at, total, #keys}
local chunk = 1000
for i = 1, #keys, chunk do
  local last = math.min(i + chunk - 1, #keys)
  local values = redis.call('HMGET', KEYS[2], unpack(keys, i, last))
  for j = i, last do
    table.insert(reply, keys[j])
    local v = values[j - i + 1]
    if not v then v = '' end
    table.insert(reply, v)
  end
end
table.insert(reply, #changes)
for _, c in ipairs(changes) do
  for _, v in ipairs(c) do table.insert(reply, v) end
end
return reply
