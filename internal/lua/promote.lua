-- promote.lua: EMQ.PROMOTE, move up to limit delayed jobs that are due to
-- pending.
--
-- KEYS[1] -> emq:{q}:          the queue base
-- KEYS[2] -> emq:{q}:version   string, the fence
-- KEYS[3] -> emq:{q}:pending   zset
-- KEYS[4] -> emq:{q}:delayed   zset, score = due time ms
-- KEYS[5] -> emq:{q}:signal    list
-- ARGV[1] -> limit, 1..1000
--
-- Reply: integer, the number of jobs moved to pending. Every due member leaves
-- delayed; one that is not an id, or whose row has no att, is not counted.
-- Refusals, in order: ERR EMQ promote numkeys must be 5; ERR EMQ promote
-- wrong number of arguments; ERR EMQ promote bad key layout; ERR EMQ promote
-- bad limit; the fence; WRONGTYPE (delayed); NOPERM, WRONGTYPE (the rows);
-- the lane accounting's refusals (the lanes of the jobs with one, dw their
-- number); WRONGTYPE (pending, signal); with events, the events stream's
-- refusals (lib.lua ev_xadd). A job with a lane goes to lane:<l>.

local VERB = 'promote'
local refusal = shape(VERB, 5, 1) or layout(VERB, {'version', 'pending', 'delayed', 'signal'})
if refusal then return refusal end
local limit = uint(ARGV[1], 1, MAX_COUNT)
if not limit then return e_bad(VERB, 'limit') end
refusal = fence()
if refusal then return refusal end

local base, pending, delayed, signal = KEYS[1], KEYS[3], KEYS[4], KEYS[5]
local ids = rpcall('ZRANGEBYSCORE', delayed, '-inf', format('%d', now_ms()), 'LIMIT', 0, limit)
if ids.err then return ids end
if #ids == 0 then return 0 end

local moved = promote_ids(VERB, base, ids, pending, delayed, signal)
if type(moved) == 'table' then return moved end
return moved
