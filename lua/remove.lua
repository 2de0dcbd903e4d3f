-- remove.lua: EMQ.REMOVE, delete a job that no worker holds (pending,
-- delayed or dead): its row, its logs and its unique key.
--
-- KEYS[1] -> emq:{q}:          the queue base
-- KEYS[2] -> emq:{q}:version   string, the fence
-- KEYS[3] -> emq:{q}:stats     hash, counter removed
-- KEYS[4] -> emq:{q}:pending   zset
-- KEYS[5] -> emq:{q}:delayed   zset
-- KEYS[6] -> emq:{q}:active    zset (declared, never touched)
-- KEYS[7] -> emq:{q}:dead      zset
-- ARGV[1] -> id
--
-- Reply: integer 1; 0 when the row is gone.
-- Refusals, in order: ERR EMQ remove numkeys must be 7; ERR EMQ remove wrong
-- number of arguments; ERR EMQ remove bad key layout; ERR EMQ remove bad id;
-- the fence; WRONGTYPE (the row); EMQSTATE remove job is active; WRONGTYPE
-- (unique:<uniq>); for a pending job with a lane the lane accounting's
-- refusals (dw = -1; it types lane:<l>, the job's set); WRONGTYPE (stats);
-- the HINCRBY refusals (stats removed); WRONGTYPE (the state's set); NOPERM
-- (logs).

local VERB = 'remove'
local refusal = shape(VERB, 7, 1) or layout(VERB, {'version', 'stats', 'pending', 'delayed', 'active', 'dead'})
if refusal then return refusal end
local id = ARGV[1]
if not jobid(id) then return e_bad(VERB, 'id') end
refusal = fence()
if refusal then return refusal end

local stats = KEYS[3]
local row = KEYS[1] .. 'job:' .. id
-- the row (read, then deleted) and its logs (deleted): one check of both
local logs = row .. ':logs'
local all = may({row, logs}, true, true)
if not all and not may({row}, true, true) then return {err = E_NOPERM} end
local f = rpcall('HMGET', row, 'att', 'state', 'uniq', 'lane')
if f.err then return f end
if not f[1] then return 0 end
local state = f[2]
if state == 'active' then return {err = E_REMOVE_ACTIVE} end
local ukey, holder = f[3] and KEYS[1] .. 'unique:' .. f[3], nil
if ukey then
  if not may({ukey}, true, true) then return {err = E_NOPERM} end
  holder = rpcall('GET', ukey)
  if type(holder) == 'table' then return holder end
end
local l = state == 'pending' and lane_name(f[4]) or nil
local acc = lane_acc()
if l then lane_add(acc, l, -1, 0) end
refusal = lane_read(acc)
if refusal then return refusal end
local c = rpcall('HGET', stats, 'removed')
if type(c) == 'table' then return c end
refusal = hincr_refusal(c, 1)
if refusal then return refusal end
-- the set the state names; a row in another state is in none of them
local set = (state == 'pending' and KEYS[4]) or (state == 'delayed' and KEYS[5])
    or (state == 'dead' and KEYS[7]) or nil
if l then set = KEYS[1] .. 'lane:' .. l end
if set and not l then
  local t = rpcall('ZCARD', set)
  if type(t) == 'table' then return t end
end
if not all and not may({logs}, false, true) then return {err = E_NOPERM} end

if set then rcall('ZREM', set, id) end
rcall('DEL', row, logs)
if holder == id then rcall('DEL', ukey) end
rcall('HINCRBY', stats, 'removed', 1)
if lane_write(acc) then signal_push(KEYS[1] .. 'signal') end
return 1
