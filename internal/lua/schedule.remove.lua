-- schedule.remove.lua: EMQ.SCHEDULE.REMOVE, delete a schedule. The jobs it
-- enqueued stay.
--
-- KEYS[1] -> emq:{q}:           the queue base
-- KEYS[2] -> emq:{q}:version    string, the fence
-- KEYS[3] -> emq:{q}:schedules  hash, d:<id> and s:<id>
-- KEYS[4] -> emq:{q}:scheddue   zset, the active schedules
-- KEYS[5] -> emq:{q}:schedids   zset, every schedule
-- ARGV[1] -> id
--
-- Writes always (a member left without its fields goes too).
-- Reply: 1 when the schedule existed (its state field), else 0.
-- Refusals, in order: ERR EMQ schedule.remove numkeys must be 5; wrong
-- number of arguments; bad key layout; bad id; the fence; WRONGTYPE
-- (schedules, scheddue, schedids).

local VERB = 'schedule.remove'
local refusal = shape(VERB, 5, 1) or layout(VERB, {'version', 'schedules', 'scheddue', 'schedids'})
if refusal then return refusal end
local id = ARGV[1]
if not sched.id(id) then return e_bad(VERB, 'id') end
refusal = fence()
if refusal then return refusal end

local had = rpcall('HEXISTS', KEYS[3], 's:' .. id)
if type(had) == 'table' then return had end
local c = rpcall('ZCARD', KEYS[4])
if type(c) == 'table' then return c end
c = rpcall('ZCARD', KEYS[5])
if type(c) == 'table' then return c end

rcall('HDEL', KEYS[3], 'd:' .. id, 's:' .. id)
rcall('ZREM', KEYS[4], id)
rcall('ZREM', KEYS[5], id)
return had
