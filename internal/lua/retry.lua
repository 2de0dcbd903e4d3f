-- retry.lua: EMQ.RETRY, move one delayed job (a retrying or scheduled one)
-- to pending now.
--
-- KEYS[1] -> emq:{q}:          the queue base
-- KEYS[2] -> emq:{q}:version   string, the fence
-- KEYS[3] -> emq:{q}:pending   zset
-- KEYS[4] -> emq:{q}:delayed   zset, score = due time ms
-- KEYS[5] -> emq:{q}:signal    list
-- ARGV[1] -> id
--
-- Reply: integer 1; 0 when the row is gone.
-- Refusals, in order: ERR EMQ retry numkeys must be 5; ERR EMQ retry wrong
-- number of arguments; ERR EMQ retry bad key layout; ERR EMQ retry bad id;
-- the fence; NOPERM, WRONGTYPE (the row); EMQSTATE retry not delayed (its
-- state, then WRONGTYPE and its absence from delayed); for a job with a
-- lane the lane accounting's refusals (dw = +1); WRONGTYPE (pending,
-- signal); with events, the events stream's refusals (lib.lua ev_xadd).

local VERB = 'retry'
local E_RETRY_NOT_DELAYED = 'EMQSTATE retry not delayed'
local refusal = shape(VERB, 5, 1) or layout(VERB, {'version', 'pending', 'delayed', 'signal'})
if refusal then return refusal end
local id = ARGV[1]
local n = jobid(id)
if not n then return e_bad(VERB, 'id') end
refusal = fence()
if refusal then return refusal end

local pending, delayed, signal = KEYS[3], KEYS[4], KEYS[5]
local row = KEYS[1] .. 'job:' .. id
if not may({row}, true, true) then return {err = E_NOPERM} end
local f = rpcall('HMGET', row, 'att', 'state', 'prio', 'lane', 'ev')
if f.err then return f end
if not f[1] then return 0 end
if f[2] ~= 'delayed' then return {err = E_RETRY_NOT_DELAYED} end
local due = rpcall('ZSCORE', delayed, id)
if type(due) == 'table' and due.err then return due end
if not due then return {err = E_RETRY_NOT_DELAYED} end
local l = lane_name(f[4])
local acc = lane_acc()
if l then lane_add(acc, l, 1, 0) end
refusal = lane_read(acc)
if refusal then return refusal end
local was_pending = rpcall('ZCARD', pending)
if type(was_pending) == 'table' then return was_pending end
local t = rpcall('LLEN', signal)
if type(t) == 'table' then return t end
local evs = {}
ev(evs, f[5], 'promoted', id)
refusal = ev_xadd(evs)
if refusal then return refusal end

rcall('ZREM', delayed, id)
rcall('HSET', row, 'state', 'pending')
rcall('ZADD', l and KEYS[1] .. 'lane:' .. l or pending, pending_score(rowint(f[3], MAX_PRIORITY), n), id)
local woke = lane_write(acc)
if (not l and was_pending == 0) or woke then signal_push(signal) end
return 1
