-- schedule.due.lua: EMQ.SCHEDULE.DUE, the schedule step's first phase: the
-- server's time and the schedules due by it (read only).
--
-- KEYS[1] -> emq:{q}:           the queue base
-- KEYS[2] -> emq:{q}:version    string, the fence
-- KEYS[3] -> emq:{q}:schedules  hash, d:<id> and s:<id>
-- KEYS[4] -> emq:{q}:scheddue   zset, the active schedules by next due ms
-- ARGV[1] -> limit, 1..1000
--
-- Reply: array: now (integer), then per due schedule, in score order, [id,
-- definition, state] (null when a field is absent). O(log S + limit).
-- Refusals, in order: ERR EMQ schedule.due numkeys must be 4; wrong number
-- of arguments; bad key layout; bad limit; the fence; WRONGTYPE (scheddue,
-- schedules).

local VERB = 'schedule.due'
local refusal = shape(VERB, 4, 1) or layout(VERB, {'version', 'schedules', 'scheddue'})
if refusal then return refusal end
local limit = uint(ARGV[1], 1, MAX_COUNT)
if not limit then return e_bad(VERB, 'limit') end
refusal = fence()
if refusal then return refusal end

local now = now_ms()
local ids = rpcall('ZRANGEBYSCORE', KEYS[4], '-inf', format('%d', now), 'LIMIT', 0, limit)
if ids.err then return ids end
local out = {now}
if #ids == 0 then return out end
local fields = {}
for i = 1, #ids do
  fields[2 * i - 1], fields[2 * i] = 'd:' .. ids[i], 's:' .. ids[i]
end
local f = rpcall('HMGET', KEYS[3], unpack(fields))
if f.err then return f end
for i = 1, #ids do out[i + 1] = {ids[i], f[2 * i - 1], f[2 * i]} end
return out
