#!lua
--[[
create-5.lua: stores a new object when its key is absent, as one atomic step (check, version,
object, index, change event, history trim).

KEYS[1]  counter   string: the type's current resourceVersion (absent means 1)
KEYS[2]  objects   hash:   object key -> "<rv>:<offset>:<json>" (offset = bytes before the rv in json)
KEYS[3]  index     zset:   object keys, score 0, for byte-ordered ranges
KEYS[4]  stream    stream: change events, id "<rv>-0"
KEYS[5]  trim-due  string: when the oldest kept event leaves the history window (ms; see trim_by_age)
ARGV[1]  object key ("namespace/name" or "name")
ARGV[2]  object JSON up to and including the opening quote of metadata.resourceVersion
ARGV[3]  object JSON from the closing quote of metadata.resourceVersion on
ARGV[4]  history window in milliseconds (events older than now - window are trimmed)
ARGV[5]  most events kept in the stream

Returns  {"ok", rv}            the object was stored at version rv
         {"AlreadyExists"}     an object with that key exists; nothing was written

Stream entry fields: t (ms, server time), e ("ADDED"), k (key), o (object JSON).
The JSON is never decoded: the new version is spliced between ARGV[2] and ARGV[3].
]]

-- @include history.lua

local key = ARGV[1]
if redis.call('HEXISTS', KEYS[2], key) == 1 then
  return {'AlreadyExists'}
end

local rv = next_version(KEYS[1])
local now = now_ms()
local json = ARGV[2] .. rv .. ARGV[3]
-- Trimming first, then XADD: after XADD only plain writes follow, which cannot fail halfway.
trim_by_age(KEYS[4], KEYS[5], now, tonumber(ARGV[4]))
redis.call('XADD', KEYS[4], 'MAXLEN', ARGV[5], rv .. '-0', 't', now, 'e', 'ADDED', 'k', key, 'o', json)
redis.call('SET', KEYS[1], rv)
redis.call('HSET', KEYS[2], key, rv .. ':' .. #ARGV[2] .. ':' .. json)
redis.call('ZADD', KEYS[3], 0, key)
return {'ok', rv}
