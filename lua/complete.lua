-- complete.lua: EMQ.COMPLETE, finish an active job: its row and logs go, its
-- unique key is released.
--
-- KEYS[1] -> emq:{q}:          the queue base
-- KEYS[2] -> emq:{q}:version   string, the fence
-- KEYS[3] -> emq:{q}:stats     hash, counter completed
-- KEYS[4] -> emq:{q}:active    zset
-- ARGV[1] -> id
-- ARGV[2] -> token, the attempt the caller claimed (any bytes, compared with att)
--
-- Reply: integer 1; 0 when the row is gone.
-- Refusals, in order: ERR EMQ complete numkeys must be 4; ERR EMQ complete
-- wrong number of arguments; ERR EMQ complete bad key layout; ERR EMQ
-- complete bad id; the fence; WRONGTYPE (the row); EMQSTALE complete token
-- mismatch; WRONGTYPE (active); EMQSTATE complete not active; WRONGTYPE
-- (unique:<uniq>); for a job with a lane the lane accounting's refusals;
-- WRONGTYPE (stats); the HINCRBY refusals (stats completed); NOPERM (logs).
-- A job with a lane frees a slot of it (lane accounting, da = -1), which
-- can make a capped lane ready again, and signal.

local VERB = 'complete'
local refusal = shape(VERB, 4, 2) or layout(VERB, {'version', 'stats', 'active'})
if refusal then return refusal end
local id = ARGV[1]
if not jobid(id) then return e_bad(VERB, 'id') end
refusal = fence()
if refusal then return refusal end

local stats, active = KEYS[3], KEYS[4]
local row = KEYS[1] .. 'job:' .. id
-- the row (read, then deleted) and its logs (deleted): one check of both
local logs = row .. ':logs'
local all = may({row, logs}, true, true)
if not all and not may({row}, true, true) then return {err = E_NOPERM} end
local f = rpcall('HMGET', row, 'att', 'uniq', 'lane')
if f.err then return f end
if not f[1] then return 0 end
if f[1] ~= ARGV[2] then return e_stale(VERB) end
local score = rpcall('ZSCORE', active, id)
if type(score) == 'table' then return score end
if not score then return e_not_active(VERB) end
local ukey, holder = f[2] and KEYS[1] .. 'unique:' .. f[2], nil
if ukey then
  if not may({ukey}, true, true) then return {err = E_NOPERM} end
  holder = rpcall('GET', ukey)
  if type(holder) == 'table' then return holder end
end
local acc = lane_acc()
local l = lane_name(f[3])
if l then lane_add(acc, l, 0, -1) end
refusal = lane_read(acc)
if refusal then return refusal end
local c = rpcall('HGET', stats, 'completed')
if type(c) == 'table' then return c end
refusal = hincr_refusal(c, 1)
if refusal then return refusal end
if not all and not may({logs}, false, true) then return {err = E_NOPERM} end

rcall('ZREM', active, id)
rcall('DEL', row, logs)
if holder == id then rcall('DEL', ukey) end
rcall('HINCRBY', stats, 'completed', 1)
if lane_write(acc) then signal_push(KEYS[1] .. 'signal') end
return 1
