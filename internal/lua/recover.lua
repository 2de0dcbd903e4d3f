-- recover.lua: EMQ.RECOVER, take back up to limit jobs whose lease expired:
-- to pending while attempts remain, else to dead.
--
-- KEYS[1] -> emq:{q}:          the queue base
-- KEYS[2] -> emq:{q}:version   string, the fence
-- KEYS[3] -> emq:{q}:stats     hash, counters recovered, dead
-- KEYS[4] -> emq:{q}:pending   zset
-- KEYS[5] -> emq:{q}:active    zset, score = lease deadline ms
-- KEYS[6] -> emq:{q}:dead      zset, score = time of death ms
-- KEYS[7] -> emq:{q}:signal    list
-- ARGV[1] -> limit, 1..1000
--
-- Reply: array [requeued, dead] (integers). Every expired member leaves
-- active; one that is not an id, or whose row has no att, counts in neither.
-- Refusals, in order: ERR EMQ recover numkeys must be 7; ERR EMQ recover
-- wrong number of arguments; ERR EMQ recover bad key layout; ERR EMQ recover
-- bad limit; the fence; WRONGTYPE (active); NOPERM, WRONGTYPE (the rows),
-- each dying job's parents' refusals (lib.lua flow_finish) after its row;
-- the lane accounting's refusals (the lanes of these jobs: da minus their
-- number, dw plus those requeued); WRONGTYPE (pending, dead, signal, stats);
-- the HINCRBY refusals (stats recovered, then dead; each only when it
-- grows); the flow types' refusals; with events, the events stream's
-- refusals (lib.lua ev_xadd). A requeued job with a lane goes back to
-- lane:<l>; a job that dies tells its waiting parent (error lease expired)
-- and pushes its outcome when waited.

local VERB = 'recover'
local refusal = shape(VERB, 7, 1) or layout(VERB, {'version', 'stats', 'pending', 'active', 'dead', 'signal'})
if refusal then return refusal end
local limit = uint(ARGV[1], 1, MAX_COUNT)
if not limit then return e_bad(VERB, 'limit') end
refusal = fence()
if refusal then return refusal end

local base, stats, pending, active, dead, signal = KEYS[1], KEYS[3], KEYS[4], KEYS[5], KEYS[6], KEYS[7]
local now = now_ms()
local ids = rpcall('ZRANGEBYSCORE', active, '-inf', '(' .. format('%d', now), 'LIMIT', 0, limit)
if ids.err then return ids end
if #ids == 0 then return {0, 0} end

-- the rows of the members that are ids, read then updated: the caller's ACL
-- on all first; the first denied one is refused where it would be read
local keys = {}
for i = 1, #ids do
  if jobid(ids[i]) then keys[#keys + 1] = base .. 'job:' .. ids[i] end
end
local deny, k = first_denied(keys, true, true), 0

-- to[i] is the pending score of a job going back, true for one going to dead
local to, requeued, died, lanes, evs = {}, 0, 0, {}, {}
local acc = lane_acc()
local fa = flow_acc(acc)
for i = 1, #ids do
  local id = jobid(ids[i])
  if id then
    k = k + 1
    if k == deny then return {err = E_NOPERM} end
    local f = rpcall('HMGET', keys[k], 'att', 'max', 'prio', 'lane', 'parent', 'onfail', 'wait', 'ev')
    if f.err then return f end
    if f[1] then
      local l = lane_name(f[4])
      lanes[i] = l
      if rowint(f[1], MAX_ROW_INT) < rowint(f[2] or ROW_MAX, MAX_ROW_INT) then
        to[i] = pending_score(rowint(f[3], MAX_PRIORITY), id)
        requeued = requeued + 1
        if l then lane_add(acc, l, 1, -1) end
        ev(evs, f[8], 'recovered', ids[i])
      else
        to[i] = true
        died = died + 1
        if l then lane_add(acc, l, 0, -1) end
        ev(evs, f[8], 'dead', ids[i], 'error', 'lease expired')
        flow_outcome(fa, ids[i], f[7], 'dlease expired')
        refusal = flow_finish(fa, ids[i], f[5], 'd', 'lease expired', f[6])
        if refusal then return refusal end
      end
    end
  end
end
refusal = lane_read(acc)
if refusal then return refusal end
local was_pending = rpcall('ZCARD', pending)
if type(was_pending) == 'table' then return was_pending end
local t = rpcall('ZCARD', dead)
if type(t) == 'table' then return t end
t = rpcall('LLEN', signal)
if type(t) == 'table' then return t end
local c = rpcall('HMGET', stats, 'recovered', 'dead')
if c.err then return c end
refusal = (requeued > 0 and hincr_refusal(c[1], requeued)) or (died > 0 and hincr_refusal(c[2], died))
if refusal then return refusal end
refusal = flow_types(fa, died)
if refusal then return refusal end
ev_flow(evs, fa)
refusal = ev_xadd(evs)
if refusal then return refusal end

rcall('ZREM', active, unpack(ids))
local died_at = format('%d', now)
local to_pending = false
for i = 1, #ids do
  local dest = to[i]
  if dest == true then
    rcall('HSET', base .. 'job:' .. ids[i], 'state', 'dead', 'err', 'lease expired')
    rcall('ZADD', dead, died_at, ids[i])
  elseif dest then
    rcall('HSET', base .. 'job:' .. ids[i], 'state', 'pending')
    if lanes[i] then
      rcall('ZADD', base .. 'lane:' .. lanes[i], dest, ids[i])
    else
      rcall('ZADD', pending, dest, ids[i])
      to_pending = true
    end
  end
end
if requeued > 0 then rcall('HINCRBY', stats, 'recovered', requeued) end
if died > 0 then rcall('HINCRBY', stats, 'dead', died) end
local woke = flow_write(fa, now)
if lane_write(acc) then woke = true end
flow_push(fa)
if (to_pending and was_pending == 0) or woke then signal_push(signal) end
return {requeued, died}
