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
-- signal); with events, the events stream's refusals (lib.lua ev_read).

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

local keys = {}
for i = 1, #ids do
  if jobid(ids[i]) then keys[#keys + 1] = base .. 'job:' .. ids[i] end
end
local deny, k = first_denied(keys, true, true), 0

-- scores[i] is the pending score of a job that moves, else nil
local scores, moved, lanes, evs = {}, 0, {}, {}
local acc = lane_acc()
for i = 1, #ids do
  local id = jobid(ids[i])
  if id then
    k = k + 1
    if k == deny then return {err = E_NOPERM} end
    local f = rpcall('HMGET', keys[k], 'att', 'prio', 'lane', 'ev')
    if f.err then return f end
    if f[1] then
      scores[i] = pending_score(rowint(f[2], MAX_PRIORITY), id)
      moved = moved + 1
      lanes[i] = lane_name(f[3])
      if lanes[i] then lane_add(acc, lanes[i], 1, 0) end
      ev(evs, f[4], 'promoted', ids[i])
    end
  end
end
refusal = lane_read(acc)
if refusal then return refusal end
local was_pending = rpcall('ZCARD', pending)
if type(was_pending) == 'table' then return was_pending end
local t = rpcall('LLEN', signal)
if type(t) == 'table' then return t end
refusal = ev_read(VERB, evs)
if refusal then return refusal end

rcall('ZREM', delayed, unpack(ids))
local to_pending = false
for i = 1, #ids do
  if scores[i] then
    rcall('HSET', base .. 'job:' .. ids[i], 'state', 'pending')
    if lanes[i] then
      rcall('ZADD', base .. 'lane:' .. lanes[i], scores[i], ids[i])
    else
      rcall('ZADD', pending, scores[i], ids[i])
      to_pending = true
    end
  end
end
local woke = lane_write(acc)
if (to_pending and was_pending == 0) or woke then signal_push(signal) end
ev_write(evs)
return {moved, card - #ids}
