-- schedule.resume.lua: EMQ.SCHEDULE.RESUME, start a paused schedule again.
--
-- KEYS[1] -> emq:{q}:           the queue base
-- KEYS[2] -> emq:{q}:version    string, the fence
-- KEYS[3] -> emq:{q}:schedules  hash, s:<id> the state
-- KEYS[4] -> emq:{q}:scheddue   zset, the active schedules by next due ms
-- ARGV[1] -> id
--
-- The occurrences of the pause are not enqueued: last becomes the server's
-- time when it is later. The schedule is due at once.
--
-- Reply: 1 when the schedule was resumed now, 0 when it is absent or was not
-- paused.
-- Refusals, in order: ERR EMQ schedule.resume numkeys must be 4; wrong
-- number of arguments; bad key layout; bad id; the fence; WRONGTYPE
-- (schedules, scheddue).

local VERB = 'schedule.resume'
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
if not st.paused then return 0 end
local c = rpcall('ZCARD', KEYS[4])
if type(c) == 'table' then return c end

local now = now_ms()
st.rev, st.next, st.paused = st.rev + 1, now, false
if st.last < now then st.last = now end
rcall('HSET', KEYS[3], 's:' .. id, sched.fmt(st))
rcall('ZADD', KEYS[4], format('%d', now), id)
return 1
