#!lua
--[[
advance-3.lua: moves the type's version on by one without changing any object (see
Storage.advanceVersion), as one atomic step: the version, a progress entry in the change stream (so
every reader of the stream learns the version in order with the changes), history trim.

KEYS[1]  counter   string: the type's current resourceVersion (absent means 1)
KEYS[2]  stream    stream: change events, id "<rv>-0"
KEYS[3]  trim-due  string: when the oldest kept event leaves the history window (ms; see trim_by_age)
ARGV[1]  history window in milliseconds (events older than now - window are trimmed)
ARGV[2]  most events kept in the stream

Returns  {"ok", rv}   the type is now at version rv

Stream entry fields: t (ms, server time), e ("PROGRESS"); no key and no object.
]]

-- @include history.lua

local rv = next_version(KEYS[1])
local now = now_ms()
trim_by_age(KEYS[2], KEYS[3], now, tonumber(ARGV[1]))
redis.call('XADD', KEYS[2], 'MAXLEN', ARGV[2], rv .. '-0', 't', now, 'e', 'PROGRESS')
redis.call('SET', KEYS[1], rv)
return {'ok', rv}
