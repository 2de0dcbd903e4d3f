-- log.lua: EMQ.LOG, append a line to an active attempt's log, keeping the
-- last cap lines.
--
-- KEYS[1] -> emq:{q}:          the queue base
-- KEYS[2] -> emq:{q}:version   string, the fence
-- ARGV[1] -> id
-- ARGV[2] -> token, the attempt the caller claimed (any bytes, compared with att)
-- ARGV[3] -> line, 0..65536 bytes
-- ARGV[4] -> cap, 1..10000 lines
--
-- Reply: integer, the log's length after the writes; 0 when the row is gone.
-- Refusals, in order: ERR EMQ log numkeys must be 2; ERR EMQ log wrong number
-- of arguments; ERR EMQ log bad key layout; ERR EMQ log bad id|line|cap; the
-- fence; WRONGTYPE (the row); EMQSTALE log token mismatch; WRONGTYPE (the
-- logs).

local VERB = 'log'
local refusal = shape(VERB, 2, 4) or layout(VERB, {'version'})
if refusal then return refusal end
local id = ARGV[1]
if not jobid(id) then return e_bad(VERB, 'id') end
if #ARGV[3] > MAX_TEXT then return e_bad(VERB, 'line') end
local cap = uint(ARGV[4], 1, MAX_LOG_CAP)
if not cap then return e_bad(VERB, 'cap') end
refusal = fence()
if refusal then return refusal end

local row = KEYS[1] .. 'job:' .. id
-- the row (read) and its logs (read and written): one check of both
local logs = row .. ':logs'
local all = may({row, logs}, true, true)
if not all and not may({row}, true, false) then return {err = E_NOPERM} end
local att = rpcall('HGET', row, 'att')
if type(att) == 'table' then return att end
if not att then return 0 end
if att ~= ARGV[2] then return e_stale(VERB) end
if not all and not may({logs}, true, true) then return {err = E_NOPERM} end
local len = rpcall('LLEN', logs)
if type(len) == 'table' then return len end

rcall('RPUSH', logs, ARGV[3])
if len + 1 > cap then
  rcall('LTRIM', logs, -cap, -1)
  return cap
end
return len + 1
