#!lua
--[[
update-5.lua: compare-and-swap replace of an existing object, as one atomic step (check, version,
object, change event, history trim).

KEYS[1]  counter   string: the type's current resourceVersion (absent means 1)
KEYS[2]  objects   hash:   object key -> "<rv>:<offset>:<json>" (offset = bytes before the rv in json)
KEYS[3]  index     zset:   object keys (unchanged by an update; passed so every key is declared)
KEYS[4]  stream    stream: change events, id "<rv>-0"
KEYS[5]  trim-due  string: when the oldest kept event leaves the history window (ms; see trim_by_age)
ARGV[1]  object key
ARGV[2]  expected current resourceVersion of the object
ARGV[3]  new object JSON up to and including the opening quote of metadata.resourceVersion
ARGV[4]  new object JSON from the closing quote of metadata.resourceVersion on
ARGV[5]  history window in milliseconds
ARGV[6]  most events kept in the stream
ARGV[7]  "1" to have the previous JSON returned too (the writer hands the change to its own watchers)

Returns  {"ok", rv}              the object was replaced at version rv
         {"ok", rv, previous}    the same, with ARGV[7] "1": previous is the replaced JSON
         {"NotFound"}            no object has that key; nothing was written
         {"Conflict", current}   the object is at version current; nothing was written

Stream entry fields: t, e ("MODIFIED"), k, o (new JSON), p (previous JSON), pr (previous rv).
]]

-- @include history.lua

local key = ARGV[1]
local stored = redis.call('HGET', KEYS[2], key)
if not stored then
  return {'NotFound'}
end
local current_rv, _, previous = split_stored(stored)
if current_rv ~= ARGV[2] then
  return {'Conflict', current_rv}
end

local rv = next_version(KEYS[1])
local now = now_ms()
local json = ARGV[3] .. rv .. ARGV[4]
-- Trimming first, then XADD: after XADD only plain writes follow, which cannot fail halfway.
trim_by_age(KEYS[4], KEYS[5], now, tonumber(ARGV[5]))
redis.call('XADD', KEYS[4], 'MAXLEN', ARGV[6], rv .. '-0', 't', now, 'e', 'MODIFIED', 'k', key,
  'o', json, 'p', previous, 'pr', current_rv)
redis.call('SET', KEYS[1], rv)
redis.call('HSET', KEYS[2], key, rv .. ':' .. #ARGV[3] .. ':' .. json)
if ARGV[7] == '1' then
  return {'ok', rv, previous}
end
return {'ok', rv}
