#!lua flags=no-writes
--[[
info-2.lua: the type's current version and the oldest version its history reaches back to, read
atomically.

KEYS[1]  counter   string: the type's current resourceVersion (absent means 1)
KEYS[2]  stream    stream: change events, id "<rv>-0", one per version, trimmed only at the head

Returns  {current, oldest}   oldest is the version just before the first kept event (every change
                             after oldest is in the stream), or current when the stream is empty
]]

local current = redis.call('GET', KEYS[1])
if not current then current = '1' end
local head = redis.call('XRANGE', KEYS[2], '-', '+', 'COUNT', 1)
if #head == 0 then
  return {current, current}
end
local first = string.match(head[1][1], '^(%d+)-')
return {current, string.format('%d', tonumber(first) - 1)}
