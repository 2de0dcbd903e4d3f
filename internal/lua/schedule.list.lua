-- schedule.list.lua: EMQ.SCHEDULE.LIST, a page of a queue's schedules (read
-- only).
--
-- KEYS[1] -> emq:{q}:           the queue base
-- KEYS[2] -> emq:{q}:version    string, the fence
-- KEYS[3] -> emq:{q}:schedules  hash, d:<id> and s:<id>
-- KEYS[4] -> emq:{q}:schedids   zset, every schedule, score 0
-- ARGV[1] -> after: empty, or the id the page starts after
-- ARGV[2] -> count, 1..1000
--
-- Reply: array of [id, definition, state] (null when a field is absent), in
-- byte order of the ids.
-- Refusals, in order: ERR EMQ schedule.list numkeys must be 4; wrong number
-- of arguments; bad key layout; bad after; bad count; the fence; WRONGTYPE
-- (schedids, schedules).

local VERB = 'schedule.list'
local refusal = shape(VERB, 4, 2) or layout(VERB, {'version', 'schedules', 'schedids'})
if refusal then return refusal end
local after = ARGV[1]
if after ~= '' and not sched.id(after) then return e_bad(VERB, 'after') end
local count = uint(ARGV[2], 1, MAX_COUNT)
if not count then return e_bad(VERB, 'count') end
refusal = fence()
if refusal then return refusal end

local ids = rpcall('ZRANGE', KEYS[4], after == '' and '-' or '(' .. after, '+', 'BYLEX', 'LIMIT', 0, count)
if ids.err then return ids end
if #ids == 0 then return {} end
local fields = {}
for i = 1, #ids do
  fields[2 * i - 1], fields[2 * i] = 'd:' .. ids[i], 's:' .. ids[i]
end
local f = rpcall('HMGET', KEYS[3], unpack(fields))
if f.err then return f end
local out = {}
for i = 1, #ids do out[i] = {ids[i], f[2 * i - 1], f[2 * i]} end
return out
