-- complete.lua: EMQ.COMPLETE, finish an active job with its result: its row
-- and logs go (a retained job stays, state completed), its unique key is
-- released, its waiting parent is told.
--
-- KEYS[1] -> emq:{q}:          the queue base
-- KEYS[2] -> emq:{q}:version   string, the fence
-- KEYS[3] -> emq:{q}:stats     hash, counter completed
-- KEYS[4] -> emq:{q}:active    zset
-- ARGV[1] -> id
-- ARGV[2] -> token, the attempt the caller claimed (any bytes, compared with att)
-- ARGV[3] -> result, 0..1048576 bytes (0: none), at most the queue's result_max
--
-- Reply: integer 1; 0 when the row is gone.
-- Refusals, in order: ERR EMQ complete numkeys must be 4; ERR EMQ complete
-- wrong number of arguments; ERR EMQ complete bad key layout; ERR EMQ
-- complete bad id; ERR EMQ complete bad result; the fence; NOPERM, WRONGTYPE
-- (the row); EMQSTALE complete token mismatch; WRONGTYPE (active); EMQSTATE
-- complete cancelled or EMQSTATE complete not active; NOPERM, WRONGTYPE (unique:<uniq>); NOPERM, WRONGTYPE
-- (meta result_max, when the result is not empty); EMQSTATE complete result
-- too large; NOPERM (completed, a retained job); the parents' refusals
-- (lib.lua flow_finish); the lane accounting's refusals; WRONGTYPE (stats),
-- the HINCRBY refusals (stats completed); WRONGTYPE (completed); the flow
-- types' refusals (lib.lua flow_types); NOPERM (logs of a job deleted, and
-- kids, results, failures of a parent deleted: a row with deps); with
-- events (the job's or a released parent's), the events stream's refusals
-- (lib.lua ev_xadd).
-- Meta rowopts (lib.lua row_opts), read first, tells whether the rows' lane
-- parent keep wait ev deps are read: while it is 0 or absent only att uniq
-- are, while it is 2 att uniq ev kind (the kind for the job's event).
-- A job with a lane frees a slot of it (lane accounting, da = -1), which
-- can make a capped lane ready again, and signal.

local VERB = 'complete'
local refusal = shape(VERB, 4, 3) or layout(VERB, {'version', 'stats', 'active'})
if refusal then return refusal end
local id, result = ARGV[1], ARGV[3]
if not jobid(id) then return e_bad(VERB, 'id') end
if #result > MAX_RESULT then return e_bad(VERB, 'result') end
refusal = fence()
if refusal then return refusal end

local base, stats, active = KEYS[1], KEYS[3], KEYS[4]
local row, meta = base .. 'job:' .. id, base .. 'meta'
-- the row (read, then deleted or kept), its logs (deleted) and meta (read):
-- one check of all; a parent's flow keys (deleted) are checked once its
-- deps are read
local logs = row .. ':logs'
local all = may({row, logs, meta}, true, true)
-- lane parent keep wait ev deps are read unless meta says no row has one,
-- or ev alone (meta's own check only when the one of all failed)
local ro = row_opts(meta, all)
if not all and not may({row}, true, true) then return {err = E_NOPERM} end
local f = row_fields(row, ro)
if f.err then return f end
if not f[1] then return 0 end
if f[1] ~= ARGV[2] then return e_stale(VERB) end
local score = rpcall('ZSCORE', active, id)
if type(score) == 'table' then return score end
if not score then return not_active(VERB, row) end
local ukey, holder = f[2] and base .. 'unique:' .. f[2], nil
if ukey then
  if not may({ukey}, true, true) then return {err = E_NOPERM} end
  holder = rpcall('GET', ukey)
  if type(holder) == 'table' then return holder end
end
if result ~= '' then
  if not may({base .. 'meta'}, true, false) then return {err = E_NOPERM} end
  local rmax = rpcall('HGET', base .. 'meta', 'result_max')
  if type(rmax) == 'table' then return rmax end
  rmax = rowint(rmax, MAX_RESULT)
  if rmax == 0 then rmax = DEFAULT_RESULT end
  if #result > rmax then return {err = E_RESULT_TOO_LARGE} end
end
local kept = f[5] == '1'
local completed = base .. 'completed'
if kept and not may({completed}, true, true) then return {err = E_NOPERM} end
local acc = lane_acc()
local l = f[3] and lane_name(f[3])
if l then lane_add(acc, l, 0, -1) end
local fa = flow_acc(acc)
if f[6] then flow_outcome(fa, id, f[6], 'c' .. result) end
if f[4] then
  refusal = flow_finish(fa, id, f[4], 'c', result)
  if refusal then return refusal end
end
refusal = lane_read(acc)
if refusal then return refusal end
local c = rpcall('HGET', stats, 'completed')
if type(c) == 'table' then return c end
refusal = hincr_refusal(c, 1)
if refusal then return refusal end
if kept then
  local t = rpcall('ZCARD', completed)
  if type(t) == 'table' then return t end
end
refusal = flow_types(fa, 0)
if refusal then return refusal end
-- the deleted logs, and a parent's deleted flow keys
local gone = {}
if not kept then
  if not all then gone[1] = logs end
  if f[8] then
    gone[#gone + 1] = row .. ':kids'
    gone[#gone + 1] = row .. ':results'
    gone[#gone + 1] = row .. ':failures'
  end
  if #gone > 0 and not may(gone, false, true) then return {err = E_NOPERM} end
end
local evs = {}
ev(evs, f[7], 'completed', id, nil, nil, f[9])
ev_flow(evs, fa)
refusal = ev_xadd(evs)
if refusal then return refusal end

local now = now_ms()
rcall('ZREM', active, id)
if kept then
  if result ~= '' then
    rcall('HSET', row, 'state', 'completed', 'res', result)
  else
    rcall('HSET', row, 'state', 'completed')
  end
  rcall('ZADD', completed, format('%d', now), id)
else
  if f[8] then
    rcall('DEL', row, logs, row .. ':kids', row .. ':results', row .. ':failures')
  else
    rcall('DEL', row, logs)
  end
end
if holder == id then rcall('DEL', ukey) end
rcall('HINCRBY', stats, 'completed', 1)
local woke = flow_write(fa, now)
if lane_write(acc) then woke = true end
flow_push(fa)
if woke then signal_push(base .. 'signal') end
return 1
