-- schedule.pause.lua: EMQ.SCHEDULE.PAUSE, stop a schedule.
--
-- KEYS[1] -> emq:{q}:           the queue base
-- KEYS[2] -> emq:{q}:version    string, the fence
-- KEYS[3] -> emq:{q}:schedules  hash, s:<id> the state
-- KEYS[4] -> emq:{q}:scheddue   zset, the active schedules by next due ms
-- ARGV[1] -> id
--
-- Reply: 1 when the schedule was paused now, 0 when it is absent or was
-- paused already.
-- Refusals, in order: ERR EMQ schedule.pause numkeys must be 4; wrong number
-- of arguments; bad key layout; bad id; the fence; WRONGTYPE (schedules,
-- scheddue).

local VERB = 'schedule.pause'
local refusal = shape(VERB, 4, 1) or layout(VERB, {'version', 'schedules', 'scheddue'})
if refusal then return refusal end
local id = ARGV[1]
if not sched.id(id) then return e_bad(VERB, 'id') end
refusal = fence()
if refusal then return refusal end

local v = rpcall('HGET', KEYS[3], 's:' .. id)
if type(v) == 'table' then return v end
if not v then return 0 end
local st = sched.state(v)
if st.paused then return 0 end
local c = rpcall('ZCARD', KEYS[4])
if type(c) == 'table' then return c end

st.rev, st.next, st.paused = st.rev + 1, 0, true
rcall('HSET', KEYS[3], 's:' .. id, sched.fmt(st))
rcall('ZREM', KEYS[4], id)
return 1
