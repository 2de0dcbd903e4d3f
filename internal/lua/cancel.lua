-- cancel.lua: EMQ.CANCEL, end a pending, delayed or active job in the dead
-- set with err cancelled and the row's cancelled field: the worker holding
-- an active one finds it refused (EMQSTATE <verb> cancelled) at its next
-- heartbeat, completion or failure. REQUEUE can run it again. An active
-- job's end is also announced on the queue's sharded channel emq:{q}:cancels
-- (SPUBLISH, message "<id> <att>") when the caller's ACL allows that
-- SPUBLISH, so its worker stops the handler at once.
--
-- KEYS[1] -> emq:{q}:          the queue base
-- KEYS[2] -> emq:{q}:version   string, the fence
-- KEYS[3] -> emq:{q}:stats     hash, counter cancelled
-- KEYS[4] -> emq:{q}:pending   zset
-- KEYS[5] -> emq:{q}:delayed   zset
-- KEYS[6] -> emq:{q}:active    zset
-- KEYS[7] -> emq:{q}:dead      zset, score = time of death ms
-- ARGV[1] -> id
--
-- Reply: integer 1; 0 when the row is gone.
-- Refusals, in order: ERR EMQ cancel numkeys must be 7; ERR EMQ cancel wrong
-- number of arguments; ERR EMQ cancel bad key layout; ERR EMQ cancel bad id;
-- the fence; NOPERM, WRONGTYPE (the row); EMQSTATE cancel not cancellable;
-- the parents' refusals (lib.lua flow_finish); the lane accounting's
-- refusals; WRONGTYPE (the job's set, dead, stats), the HINCRBY refusals
-- (stats cancelled); the flow types' refusals (lib.lua flow_types); with
-- events, the events stream's refusals (lib.lua ev_xadd). A cancelled job
-- tells its waiting parent as a dead one does (error cancelled, its policy)
-- and pushes its outcome dcancelled when waited. A refused call publishes
-- nothing.

local VERB = 'cancel'
local refusal = shape(VERB, 7, 1) or layout(VERB, {'version', 'stats', 'pending', 'delayed', 'active', 'dead'})
if refusal then return refusal end
local id = ARGV[1]
if not jobid(id) then return e_bad(VERB, 'id') end
refusal = fence()
if refusal then return refusal end

local stats, dead = KEYS[3], KEYS[7]
local row = KEYS[1] .. 'job:' .. id
if not may({row}, true, true) then return {err = E_NOPERM} end
local f = rpcall('HMGET', row, 'att', 'state', 'lane', 'parent', 'onfail', 'wait', 'ev')
if f.err then return f end
if not f[1] then return 0 end
local state = f[2] or ROW_STATE
local sets = {pending = KEYS[4], delayed = KEYS[5], active = KEYS[6]}
local set = sets[state]
if not set then return {err = E_CANCEL_STATE} end
local acc = lane_acc()
local l = lane_name(f[3])
if l and state == 'pending' then
  set = KEYS[1] .. 'lane:' .. l
  lane_add(acc, l, -1, 0)
elseif l and state == 'active' then
  lane_add(acc, l, 0, -1)
end
local fa = flow_acc(acc)
flow_outcome(fa, id, f[6], 'dcancelled')
refusal = flow_finish(fa, id, f[4], 'd', 'cancelled', f[5])
if refusal then return refusal end
refusal = lane_read(acc)
if refusal then return refusal end
local t
if not (l and state == 'pending') then -- a lane's set was typed by the accounting
  t = rpcall('ZCARD', set)
  if type(t) == 'table' then return t end
end
t = rpcall('ZCARD', dead)
if type(t) == 'table' then return t end
local c = rpcall('HGET', stats, 'cancelled')
if type(c) == 'table' then return c end
refusal = hincr_refusal(c, 1)
if refusal then return refusal end
refusal = flow_types(fa, 0)
if refusal then return refusal end
local evs = {}
ev(evs, f[7], 'cancelled', id, 'state', state)
ev_flow(evs, fa)
refusal = ev_xadd(evs)
if refusal then return refusal end
-- the notice to the worker holding an active job: not a refusal when the
-- caller may not publish it (the worker's heartbeat learns it then)
local notice
if state == 'active' then
  local channel, msg = KEYS[1] .. 'cancels', id .. ' ' .. f[1]
  if redis.acl_check_cmd('SPUBLISH', channel, msg) then notice = {channel, msg} end
end

local now = now_ms()
rcall('ZREM', set, id)
rcall('HSET', row, 'state', 'dead', 'err', 'cancelled', 'cancelled', '1')
rcall('ZADD', dead, format('%d', now), id)
rcall('HINCRBY', stats, 'cancelled', 1)
local woke = flow_write(fa, now)
if lane_write(acc) then woke = true end
flow_push(fa)
if woke then signal_push(KEYS[1] .. 'signal') end
if notice then rcall('SPUBLISH', notice[1], notice[2]) end
return 1
