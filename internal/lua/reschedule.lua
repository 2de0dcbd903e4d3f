-- reschedule.lua: EMQ.RESCHEDULE, move a pending or delayed job to a new due
-- time: max(now + delay_ms, due_ms). A due time not above now makes it
-- pending (or ready in its lane); one above now makes it delayed.
--
-- KEYS[1] -> emq:{q}:          the queue base
-- KEYS[2] -> emq:{q}:version   string, the fence
-- KEYS[3] -> emq:{q}:pending   zset
-- KEYS[4] -> emq:{q}:delayed   zset, score = due time ms
-- KEYS[5] -> emq:{q}:signal    list
-- ARGV[1] -> id
-- ARGV[2] -> due_ms, 0..253402300799999, an absolute time on the server's clock
-- ARGV[3] -> delay_ms, 0..315360000000, counted from now
--
-- Reply: bulk pending or delayed (the job's state after the call); 0 when
-- the row is gone. A pending job whose new due time has passed is left as it
-- is (reply pending, nothing written).
-- Refusals, in order: ERR EMQ reschedule numkeys must be 5; ERR EMQ
-- reschedule wrong number of arguments; ERR EMQ reschedule bad key layout;
-- ERR EMQ reschedule bad id|due|delay; the fence; NOPERM, WRONGTYPE (the
-- row); EMQSTATE reschedule not pending or delayed; the lane accounting's
-- refusals (a job with a lane moving between pending and delayed);
-- WRONGTYPE (pending, delayed, signal); with events, the events stream's
-- refusals (lib.lua ev_xadd).

local VERB = 'reschedule'
local refusal = shape(VERB, 5, 3) or layout(VERB, {'version', 'pending', 'delayed', 'signal'})
if refusal then return refusal end
local id = ARGV[1]
local n = jobid(id)
if not n then return e_bad(VERB, 'id') end
local due = uint(ARGV[2], 0, MAX_DUE)
if not due then return e_bad(VERB, 'due') end
local delay = uint(ARGV[3], 0, MAX_DELAY)
if not delay then return e_bad(VERB, 'delay') end
refusal = fence()
if refusal then return refusal end

local pending, delayed, signal = KEYS[3], KEYS[4], KEYS[5]
local row = KEYS[1] .. 'job:' .. id
if not may({row}, true, true) then return {err = E_NOPERM} end
local f = rpcall('HMGET', row, 'att', 'state', 'prio', 'lane', 'ev')
if f.err then return f end
if not f[1] then return 0 end
local state = f[2] or ROW_STATE
if state ~= 'pending' and state ~= 'delayed' then return {err = E_RESCHEDULE_STATE} end
local now = now_ms()
local t = now + delay
if due > t then t = due end
local to = t > now and 'delayed' or 'pending'
if state == 'pending' and to == 'pending' then return 'pending' end

local l = lane_name(f[4])
local acc = lane_acc()
if l and state ~= to then lane_add(acc, l, to == 'pending' and 1 or -1, 0) end
refusal = lane_read(acc)
if refusal then return refusal end
local was_pending = rpcall('ZCARD', pending)
if type(was_pending) == 'table' then return was_pending end
local c = rpcall('ZCARD', delayed)
if type(c) == 'table' then return c end
c = rpcall('LLEN', signal)
if type(c) == 'table' then return c end
local evs = {}
ev(evs, f[5], 'rescheduled', id, 'state', to)
refusal = ev_xadd(evs)
if refusal then return refusal end

local set = l and KEYS[1] .. 'lane:' .. l or pending
if to == 'delayed' then
  if state == 'pending' then
    rcall('ZREM', set, id)
    rcall('HSET', row, 'state', 'delayed')
  end
  rcall('ZADD', delayed, format('%d', t), id)
else
  rcall('ZREM', delayed, id)
  rcall('HSET', row, 'state', 'pending')
  rcall('ZADD', set, pending_score(rowint(f[3], MAX_PRIORITY), n), id)
end
local woke = lane_write(acc)
if (to == 'pending' and not l and was_pending == 0) or woke then signal_push(signal) end
return to
