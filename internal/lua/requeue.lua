-- requeue.lua: EMQ.REQUEUE, send a dead job back to pending with a fresh set
-- of attempts (max becomes att + max; att keeps counting, so tokens of
-- earlier claims stay stale).
--
-- KEYS[1] -> emq:{q}:          the queue base
-- KEYS[2] -> emq:{q}:version   string, the fence
-- KEYS[3] -> emq:{q}:stats     hash, counter requeued
-- KEYS[4] -> emq:{q}:pending   zset
-- KEYS[5] -> emq:{q}:dead      zset
-- KEYS[6] -> emq:{q}:signal    list
-- ARGV[1] -> id
--
-- Reply: integer 1; 0 when the row is gone.
-- Refusals, in order: ERR EMQ requeue numkeys must be 6; ERR EMQ requeue
-- wrong number of arguments; ERR EMQ requeue bad key layout; ERR EMQ requeue
-- bad id; the fence; WRONGTYPE (the row); EMQSTATE requeue not dead; for a
-- job with a lane the lane accounting's refusals (dw = +1); WRONGTYPE (dead,
-- pending, signal, stats); the HINCRBY refusals (stats requeued); with
-- events, the events stream's refusals (lib.lua ev_xadd). A job with
-- a lane goes back to lane:<l>. A child is detached from its parent and a
-- parent loses its cfail (HDEL row parent onfail cfail).

local VERB = 'requeue'
local refusal = shape(VERB, 6, 1) or layout(VERB, {'version', 'stats', 'pending', 'dead', 'signal'})
if refusal then return refusal end
local id = ARGV[1]
local n = jobid(id)
if not n then return e_bad(VERB, 'id') end
refusal = fence()
if refusal then return refusal end

local stats, pending, dead, signal = KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local row = KEYS[1] .. 'job:' .. id
if not may({row}, true, true) then return {err = E_NOPERM} end
local f = rpcall('HMGET', row, 'state', 'att', 'max', 'prio', 'lane', 'parent', 'onfail', 'cfail', 'ev', 'cancelled')
if f.err then return f end
if not f[2] then return 0 end
if f[1] ~= 'dead' then return {err = E_REQUEUE_NOT_DEAD} end
local l = lane_name(f[5])
local acc = lane_acc()
if l then lane_add(acc, l, 1, 0) end
refusal = lane_read(acc)
if refusal then return refusal end
local t = rpcall('ZCARD', dead)
if type(t) == 'table' then return t end
local was_pending = rpcall('ZCARD', pending)
if type(was_pending) == 'table' then return was_pending end
t = rpcall('LLEN', signal)
if type(t) == 'table' then return t end
local c = rpcall('HGET', stats, 'requeued')
if type(c) == 'table' then return c end
refusal = hincr_refusal(c, 1)
if refusal then return refusal end
local evs = {}
ev(evs, f[9], 'requeued', id)
refusal = ev_xadd(evs)
if refusal then return refusal end

local max = rowint(f[2], MAX_ROW_INT) + rowint(f[3] or ROW_MAX, MAX_ROW_INT)
rcall('ZREM', dead, id)
rcall('HSET', row, 'state', 'pending', 'max', format('%d', max))
if f[6] or f[7] or f[8] or f[10] then rcall('HDEL', row, 'parent', 'onfail', 'cfail', 'cancelled') end
rcall('ZADD', l and KEYS[1] .. 'lane:' .. l or pending, pending_score(rowint(f[4], MAX_PRIORITY), n), id)
rcall('HINCRBY', stats, 'requeued', 1)
local woke = lane_write(acc)
if (not l and was_pending == 0) or woke then signal_push(signal) end
return 1
