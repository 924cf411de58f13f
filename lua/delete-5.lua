#!lua
--[[
delete-5.lua: removes an object, optionally only at an expected version, as one atomic step
(check, version, object, index, change event, history trim).

KEYS[1]  counter   string: the type's current resourceVersion (absent means 1)
KEYS[2]  objects   hash:   object key -> "<rv>:<offset>:<json>" (offset = bytes before the rv in json)
KEYS[3]  index     zset:   object keys
KEYS[4]  stream    stream: change events, id "<rv>-0"
KEYS[5]  trim-due  string: when the oldest kept event leaves the history window (ms; see trim_by_age)
ARGV[1]  object key
ARGV[2]  "1" when ARGV[3] must equal the object's version, "0" for an unconditional delete
ARGV[3]  expected current resourceVersion (ignored when ARGV[2] is "0")
ARGV[4]  history window in milliseconds
ARGV[5]  most events kept in the stream
ARGV[6]  "1" to have the last JSON returned too (the writer hands the change to its own watchers)

Returns  {"ok", rv, tombstone}   removed at version rv; tombstone is the last JSON of the object
                                 with metadata.resourceVersion replaced by rv
         {"ok", rv, tombstone, previous}  the same, with ARGV[6] "1": previous is the last JSON
         {"NotFound"}            no object has that key; nothing was written
         {"Conflict", current}   the object is at version current; nothing was written

Stream entry fields: t, e ("DELETED"), k, o (tombstone JSON), p (last JSON), pr (last rv).
]]

-- @include history.lua

local key = ARGV[1]
local stored = redis.call('HGET', KEYS[2], key)
if not stored then
  return {'NotFound'}
end
local current_rv, offset, previous = split_stored(stored)
if ARGV[2] == '1' and current_rv ~= ARGV[3] then
  return {'Conflict', current_rv}
end

local rv = next_version(KEYS[1])
local now = now_ms()
-- The stored offset locates metadata.resourceVersion, so no JSON is decoded to rewrite it.
local tombstone = string.sub(previous, 1, offset) .. rv .. string.sub(previous, offset + #current_rv + 1)
-- Trimming first, then XADD: after XADD only plain writes follow, which cannot fail halfway.
trim_by_age(KEYS[4], KEYS[5], now, tonumber(ARGV[4]))
redis.call('XADD', KEYS[4], 'MAXLEN', ARGV[5], rv .. '-0', 't', now, 'e', 'DELETED', 'k', key,
  'o', tombstone, 'p', previous, 'pr', current_rv)
redis.call('SET', KEYS[1], rv)
redis.call('HDEL', KEYS[2], key)
redis.call('ZREM', KEYS[3], key)
if ARGV[6] == '1' then
  return {'ok', rv, tombstone, previous}
end
return {'ok', rv, tombstone}
