-- schedule.set.lua: EMQ.SCHEDULE.SET, create or replace a schedule.
--
-- KEYS[1] -> emq:{q}:           the queue base
-- KEYS[2] -> emq:{q}:version    string, the fence
-- KEYS[3] -> emq:{q}:schedules  hash, d:<id> the definition, s:<id> the state
-- KEYS[4] -> emq:{q}:scheddue   zset, the active schedules by next due ms
-- KEYS[5] -> emq:{q}:schedids   zset, every schedule, score 0
-- ARGV    -> id kind spec tz jitter start end limit grace catchup data
--            priority attempts backoff backoff_ms unique_key unique_ttl k,
--            then k pairs name value (ADD's option columns but parent and
--            onfail)
--
-- The definition stored is ARGV[2 ..], encoded (lib.lua sched.encode). A new
-- schedule starts with last = now; an existing one keeps its count, last
-- and pause, and takes rev + 1. Unless paused it is due at once: the next
-- step computes its occurrences.
--
-- Reply: integer, the new rev.
-- Refusals, in order: ERR EMQ schedule.set numkeys must be 5; wrong number
-- of arguments (fewer than 18); bad options; wrong number of arguments (not
-- 18 + 2k); bad key layout; bad id, kind, spec, tz, jitter, start, end,
-- limit, grace, catchup, option, then the template's (ADD's names); the
-- fence; WRONGTYPE (schedules, scheddue, schedids).

local VERB = 'schedule.set'
local refusal = shape(VERB, 5)
if refusal then return refusal end
if #ARGV < 18 then return e_arity(VERB) end
local k = uint(ARGV[18], 0, MAX_ADD_OPTIONS)
if not k then return e_bad(VERB, 'options') end
if #ARGV ~= 18 + 2 * k then return e_arity(VERB) end
refusal = layout(VERB, {'version', 'schedules', 'scheddue', 'schedids'})
if refusal then return refusal end
local id = ARGV[1]
if not sched.id(id) then return e_bad(VERB, 'id') end
local t
t, refusal = sched_check(VERB, ARGV, 1)
if not t then return refusal end
refusal = fence()
if refusal then return refusal end

local schedules, due, ids = KEYS[3], KEYS[4], KEYS[5]
local f = rpcall('HMGET', schedules, 'd:' .. id, 's:' .. id)
if f.err then return f end
local c = rpcall('ZCARD', due)
if type(c) == 'table' then return c end
c = rpcall('ZCARD', ids)
if type(c) == 'table' then return c end

local now = now_ms()
local st
if f[2] then
  st = sched.state(f[2])
  st.rev = st.rev + 1
  st.next = st.paused and 0 or now
else
  st = {rev = 1, count = 0, last = now, next = now, paused = false}
end
rcall('HSET', schedules, 'd:' .. id, sched.encode(ARGV, 2, #ARGV), 's:' .. id, sched.fmt(st))
rcall('ZADD', ids, 0, id)
if not st.paused then rcall('ZADD', due, format('%d', now), id) end
return st.rev
