-- promoteall.lua: EMQ.PROMOTEALL, move up to limit delayed jobs to pending,
-- due or not (the soonest due first).
--
-- KEYS[1] -> emq:{q}:          the queue base
-- KEYS[2] -> emq:{q}:version   string, the fence
-- KEYS[3] -> emq:{q}:pending   zset
-- KEYS[4] -> emq:{q}:delayed   zset, score = due time ms
-- KEYS[5] -> emq:{q}:signal    list
-- ARGV[1] -> limit, 1..1000
--
-- Reply: [moved, left]: the jobs moved to pending and the members left in
-- delayed. Every member read leaves delayed; one that is not an id, or
-- whose row has no att, is not counted.
-- Refusals, in order: ERR EMQ promoteall numkeys must be 5; ERR EMQ
-- promoteall wrong number of arguments; ERR EMQ promoteall bad key layout;
-- ERR EMQ promoteall bad limit; the fence; WRONGTYPE (delayed); NOPERM,
-- WRONGTYPE (the rows); the lane accounting's refusals; WRONGTYPE (pending,
-- signal); with events, the events stream's refusals (lib.lua ev_xadd).

local VERB = 'promoteall'
local refusal = shape(VERB, 5, 1) or layout(VERB, {'version', 'pending', 'delayed', 'signal'})
if refusal then return refusal end
local limit = uint(ARGV[1], 1, MAX_COUNT)
if not limit then return e_bad(VERB, 'limit') end
refusal = fence()
if refusal then return refusal end

local base, pending, delayed, signal = KEYS[1], KEYS[3], KEYS[4], KEYS[5]
local card = rpcall('ZCARD', delayed)
if type(card) == 'table' then return card end
if card == 0 then return {0, 0} end
local ids = rcall('ZRANGE', delayed, 0, limit - 1)

local moved = promote_ids(VERB, base, ids, pending, delayed, signal)
if type(moved) == 'table' then return moved end
return {moved, card - #ids}
