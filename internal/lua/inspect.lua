-- inspect.lua: EMQ.INSPECT, a job's row and logs (read-only).
--
-- KEYS[1] -> emq:{q}:          the queue base
-- KEYS[2] -> emq:{q}:version   string, the fence
-- ARGV[1] -> id
--
-- Reply: null when the row is gone (no att); else a flat array of the fields
-- present, name then value (bulk strings as stored), in the order state data
-- att max prio bo at err prog uniq lane keep parent onfail deps cfail wait
-- res kind timeout headers cancelled sched sat, then logs and an array of
-- the log lines.
-- Refusals, in order: ERR EMQ inspect numkeys must be 2; ERR EMQ inspect
-- wrong number of arguments; ERR EMQ inspect bad key layout; ERR EMQ inspect
-- bad id; the fence; WRONGTYPE (the row, the logs).

local VERB = 'inspect'
local refusal = shape(VERB, 2, 1) or layout(VERB, {'version'})
if refusal then return refusal end
local id = ARGV[1]
if not jobid(id) then return e_bad(VERB, 'id') end
refusal = fence()
if refusal then return refusal end

local row = KEYS[1] .. 'job:' .. id
local fields = {'state', 'data', 'att', 'max', 'prio', 'bo', 'at', 'err', 'prog', 'uniq', 'lane',
  'keep', 'parent', 'onfail', 'deps', 'cfail', 'wait', 'res', 'kind', 'timeout', 'headers', 'cancelled',
  'sched', 'sat'}
-- the row and its logs, both read: one check of both
local logs_key = row .. ':logs'
local all = may({row, logs_key}, true, false)
if not all and not may({row}, true, false) then return {err = E_NOPERM} end
local f = rpcall('HMGET', row, unpack(fields))
if f.err then return f end
if not f[3] then return false end
-- a field the row leaves out at its default replies as the default
f[1], f[4], f[5], f[6] = f[1] or ROW_STATE, f[4] or ROW_MAX, f[5] or ROW_PRIO, f[6] or ROW_BO
if not all and not may({logs_key}, true, false) then return {err = E_NOPERM} end
local logs = rpcall('LRANGE', logs_key, 0, -1)
if logs.err then return logs end

local out = {}
for i = 1, #fields do
  if f[i] then
    out[#out + 1] = fields[i]
    out[#out + 1] = f[i]
  end
end
out[#out + 1] = 'logs'
out[#out + 1] = logs
return out
